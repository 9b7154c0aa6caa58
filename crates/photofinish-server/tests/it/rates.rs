//! Rate limits (docs/SPEC.md §7) over HTTP: an API key held to its `--rate`, players to
//! `--player-rate` (each on its own), anonymous readers of a public board to
//! `--anonymous-rate` per address. Over a limit is 429 `rate_limited` with `Retry-After`,
//! changes nothing, and passes again once that wait is over; an erased player's bucket
//! goes with it.

use std::time::Duration;

use photofinish_core::access::Scope;
use photofinish_server::auth::jwt::{JwtKey, JwtOptions};
use photofinish_server::auth::keys;
use photofinish_server::rate::Rate;
use photofinish_server::serve::ServeOptions;
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

/// A player's token (no issuer or audience: the server asks for none).
fn player(member: &str) -> String {
    es256(json!({"sub": member, "exp": now_s() + 600}))
}

/// One request with `token`; the status, the `Retry-After` header and the body.
async fn send(
    s: &Server,
    token: Option<&str>,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Option<u64>, Value) {
    let mut req = reqwest::Client::new().request(method, format!("{}{path}", s.base));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let retry = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    (status, retry, resp.json().await.unwrap_or(Value::Null))
}

async fn over_a_rate_limit_is_429_until_retry_after(kind: Kind) {
    let dir = tempfile::tempdir().expect("tmp");
    let (admin_key, admin) =
        keys::new_key("admin", Scope::Admin, vec![], None, "t".into()).expect("key");
    // 20/min: a burst of one, one more every 3 s — room for a slow machine to send the
    // second request before the bucket refills.
    let (ci_key, ci) = keys::new_key(
        "ci",
        Scope::Write,
        vec![],
        Some("20/min".into()),
        "t".into(),
    )
    .expect("key");
    let keys_file = dir.path().join("keys.json");
    keys::write_file(&keys_file, vec![admin_key, ci_key]).expect("keys file");
    let s = Server::start_configured(kind, |o| ServeOptions {
        keys: Some(keys_file),
        jwt: Some(JwtOptions {
            key: JwtKey::Pem(fixture("es256-public.pem")),
            issuer: None,
            audience: None,
        }),
        player_rate: Rate::parse("1/min,burst=2").expect("rate"),
        anonymous_rate: Rate::parse("1/min,burst=3").expect("rate"),
        ..o
    })
    .await;
    let admin = admin.expose().to_owned();
    let ci = ci.expose().to_owned();
    let put = send(
        &s,
        Some(&admin),
        Method::PUT,
        "/v1/boards/b",
        Some(json!({"public_read": true, "player_writes": true})),
    )
    .await;
    assert_eq!(put.0, 201, "{put:?}");
    let entries = || send(&s, Some(&admin), Method::GET, "/v1/boards/b/entries", None);
    let submit = |token: String, member: &str, score: i64| {
        let body = json!({"member": member, "score": score});
        let s = &s;
        async move {
            send(
                s,
                Some(&token),
                Method::POST,
                "/v1/boards/b/scores",
                Some(body),
            )
            .await
        }
    };

    // The key: one request, then 429 with a wait; the refused write changed nothing.
    assert_eq!(submit(ci.clone(), "k", 1).await.0, 200);
    let before = entries().await;
    let refused = submit(ci.clone(), "k", 1).await;
    assert_eq!(refused.0, 429, "{refused:?}");
    assert_eq!(refused.2["error"]["code"], "rate_limited");
    let wait = refused.1.expect("Retry-After");
    assert!((1..=3).contains(&wait), "Retry-After {wait}");
    assert_eq!(entries().await, before);
    tokio::time::sleep(Duration::from_secs(wait)).await;
    assert_eq!(
        submit(ci.clone(), "k", 1).await.0,
        200,
        "not passing after Retry-After"
    );
    // The admin key has no rate.
    for _ in 0..30 {
        assert_eq!(entries().await.0, 200);
    }

    // Players: each has a bucket of two.
    let (ann, bob) = (player("ann"), player("bob"));
    assert_eq!(submit(ann.clone(), "ann", 1).await.0, 200);
    assert_eq!(submit(ann.clone(), "ann", 1).await.0, 200);
    let before = entries().await;
    let refused = submit(ann.clone(), "ann", 1).await;
    assert_eq!(
        (refused.0, &refused.2["error"]["code"]),
        (429, &json!("rate_limited"))
    );
    assert!(
        refused.1.is_some_and(|w| (1..=60).contains(&w)),
        "{refused:?}"
    );
    assert_eq!(entries().await, before);
    assert_eq!(
        submit(bob.clone(), "bob", 1).await.0,
        200,
        "bob pays for ann"
    );
    // An erase drops ann's bucket with the rest of her (docs/SPEC.md §16): her next write
    // is a new member's, with a full bucket.
    let erased = send(&s, Some(&admin), Method::DELETE, "/v1/members/ann", None).await;
    assert_eq!(
        (erased.0, &erased.2["boards"]),
        (200, &json!(1)),
        "{erased:?}"
    );
    assert_eq!(
        submit(ann.clone(), "ann", 1).await.0,
        200,
        "ann's bucket outlived her erase"
    );

    // Anonymous reads of the public board: three per address, then 429.
    for _ in 0..3 {
        assert_eq!(
            send(&s, None, Method::GET, "/v1/boards/b/entries", None)
                .await
                .0,
            200
        );
    }
    let refused = send(&s, None, Method::GET, "/v1/boards/b/entries", None).await;
    assert_eq!(refused.0, 429, "{refused:?}");
    assert!(refused.1.is_some());

    // Counted by reason.
    let metrics = send(&s, Some(&admin), Method::GET, "/metrics", None).await;
    assert_eq!(metrics.0, 200);
    let series = "photofinish_refusals_total{reason=\"rate_limited\"}";
    assert_eq!(metric(&s, Some(&admin), series).await.as_deref(), Some("3"));
    s.stop().await;
}

conformance!(over_a_rate_limit_is_429_until_retry_after,);

/// The RESP door holds callers to the same buckets: each board command takes a token
/// (connection commands take none), and over the limit is `-ERR rate_limited … retry
/// after N s`, which changes nothing.
async fn resp_commands_take_from_the_same_buckets(kind: Kind) {
    let dir = tempfile::tempdir().expect("tmp");
    let (admin_key, admin) =
        keys::new_key("admin", Scope::Admin, vec![], None, "t".into()).expect("key");
    // 1/min: never refilled within the test, however slow the machine.
    let (ci_key, ci) =
        keys::new_key("ci", Scope::Write, vec![], Some("1/min".into()), "t".into()).expect("key");
    let keys_file = dir.path().join("keys.json");
    keys::write_file(&keys_file, vec![admin_key, ci_key]).expect("keys file");
    let s = Server::start_configured(kind, |o| ServeOptions {
        keys: Some(keys_file),
        anonymous_rate: Rate::parse("1/min,burst=2").expect("rate"),
        ..o
    })
    .await;
    let mut root = resp_as(&s, Some(admin.expose()), false)
        .await
        .expect("admin");
    assert_eq!(
        lb(&mut root, &["LB.CREATE", "b", "PUBLICREAD", "yes"]).await,
        "OK"
    );
    let mut c = resp_as(&s, Some(ci.expose()), false).await.expect("ci");
    assert_eq!(lb(&mut c, &["LB.INCR", "b", "k", "1"]).await, json!(1));
    for _ in 0..20 {
        assert_eq!(
            lb(&mut c, &["PING"]).await,
            "PONG",
            "connection commands are free"
        );
    }
    let before = lb(&mut root, &["LB.RANGE", "b", "0", "10"]).await;
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    pipe.cmd("LB.INCR").arg("b").arg("k").arg(1);
    pipe.cmd("LB.INCR").arg("b").arg("k").arg(1);
    let refused: Vec<redis::Value> = pipe.query_async(&mut c).await.expect("pipe");
    for r in refused {
        let Value::Object(e) = reply_json(Ok(r)) else {
            panic!("not refused");
        };
        assert_eq!(e["error"], "rate_limited");
    }
    let mut raw = redis::cmd("LB.INCR");
    raw.arg("b").arg("k").arg(1);
    let e = raw
        .query_async::<redis::Value>(&mut c)
        .await
        .expect_err("refused");
    let detail = e.detail().unwrap_or_default();
    assert!(detail.contains("retry after"), "{detail}");
    assert_eq!(lb(&mut root, &["LB.RANGE", "b", "0", "10"]).await, before);
    // Anonymous readers: per address, two, then refused.
    let mut anon = resp(&s).await;
    for _ in 0..2 {
        assert_eq!(lb(&mut anon, &["LB.SCORE", "b", "k"]).await, json!(1));
    }
    assert_eq!(
        lb(&mut anon, &["LB.SCORE", "b", "k"]).await["error"],
        "rate_limited"
    );
    s.stop().await;
}

conformance!(resp_commands_take_from_the_same_buckets,);
