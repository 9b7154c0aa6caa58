//! Idempotent requests (docs/SPEC.md §7) on every backend: a repeat with the same key and
//! request answers the first answer with `Idempotent-Replayed: true` and applies nothing —
//! also after a restart; another request under the key is 422; concurrent duplicates
//! apply once; keys expire; refusals are not remembered; bad keys are 400.

use std::time::Duration;

use photofinish_server::serve::ServeOptions;
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

/// (Shared with other suites.)
/// One request with an `Idempotency-Key`: status, whether it was a replay, body.
pub(crate) async fn keyed(
    s: &Server,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, bool, Value) {
    keyed_at(&s.base, key, method, path, body).await
}

async fn keyed_at(
    base: &str,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, bool, Value) {
    let mut req = reqwest::Client::new()
        .request(method, format!("{base}{path}"))
        .header("Idempotency-Key", key);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let replayed = match resp.headers().get("idempotent-replayed") {
        None => false,
        Some(v) => {
            assert_eq!(v, "true");
            true
        }
    };
    let text = resp.text().await.expect("body");
    (
        status,
        replayed,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

async fn score(s: &Server, board: &str, member: &str) -> Value {
    s.get(&format!("/v1/boards/{board}/members/{member}"))
        .await
        .1["score"]
        .clone()
}

async fn a_repeat_answers_the_first_answer_and_applies_nothing(kind: Kind) {
    let s = Server::start(kind).await;
    // Board create.
    let first = keyed(
        &s,
        "mk",
        Method::PUT,
        "/v1/boards/b",
        Some(json!({"update": "incr"})),
    )
    .await;
    assert_eq!((first.0, first.1), (201, false), "{first:?}");
    let again = keyed(
        &s,
        "mk",
        Method::PUT,
        "/v1/boards/b",
        Some(json!({"update": "incr"})),
    )
    .await;
    assert_eq!((again.0, again.1, &again.2), (201, true, &first.2));

    // A submit: counted once however often it is retried.
    let body = json!({"member": "ann", "score": 5});
    let first = keyed(
        &s,
        "k1",
        Method::POST,
        "/v1/boards/b/scores",
        Some(body.clone()),
    )
    .await;
    assert_eq!((first.0, first.1), (200, false), "{first:?}");
    for _ in 0..3 {
        let again = keyed(
            &s,
            "k1",
            Method::POST,
            "/v1/boards/b/scores",
            Some(body.clone()),
        )
        .await;
        assert_eq!((again.0, again.1, &again.2), (200, true, &first.2));
    }
    assert_eq!(score(&s, "b", "ann").await, 5);
    // The same key with another request; the same key on another board is another key.
    let other = keyed(
        &s,
        "k1",
        Method::POST,
        "/v1/boards/b/scores",
        Some(json!({"member": "ann", "score": 6})),
    )
    .await;
    assert_eq!(
        (other.0, &other.2["error"]["code"]),
        (422, &json!("idempotency_key_reused"))
    );
    assert_eq!(score(&s, "b", "ann").await, 5);
    s.put("/v1/boards/c", json!({})).await;
    let elsewhere = keyed(
        &s,
        "k1",
        Method::POST,
        "/v1/boards/c/scores",
        Some(body.clone()),
    )
    .await;
    assert_eq!((elsewhere.0, elsewhere.1), (200, false));

    // A batch, an entry refused in its place included (an increment past the i64 range:
    // score_overflow on every backend).
    let batch = json!({"entries": [
        {"member": "bob", "score": 1},
        {"member": "bob", "score": "9223372036854775807", "op": "incr"},
        {"member": "ann", "score": 1},
    ]});
    let first = keyed(
        &s,
        "k2",
        Method::POST,
        "/v1/boards/b/scores:batch",
        Some(batch.clone()),
    )
    .await;
    assert_eq!((first.0, first.1), (200, false), "{first:?}");
    let again = keyed(
        &s,
        "k2",
        Method::POST,
        "/v1/boards/b/scores:batch",
        Some(batch.clone()),
    )
    .await;
    assert_eq!((again.0, again.1, &again.2), (200, true, &first.2));
    assert_eq!(
        (score(&s, "b", "ann").await, score(&s, "b", "bob").await),
        (json!(6), json!(1))
    );

    // A member delete.
    let first = keyed(&s, "k3", Method::DELETE, "/v1/boards/b/members/bob", None).await;
    assert_eq!((first.0, first.1), (204, false));
    let again = keyed(&s, "k3", Method::DELETE, "/v1/boards/b/members/bob", None).await;
    assert_eq!((again.0, again.1), (204, true));

    // After a restart the keys are still known (embedded: from the shutdown snapshot).
    let before = s.get("/v1/boards/b/entries").await.1;
    let s = s.restart().await;
    let again = keyed(
        &s,
        "k1",
        Method::POST,
        "/v1/boards/b/scores",
        Some(body.clone()),
    )
    .await;
    assert_eq!(
        (again.0, again.1, &again.2["score"]),
        (200, true, &json!(5))
    );
    let again = keyed(
        &s,
        "k2",
        Method::POST,
        "/v1/boards/b/scores:batch",
        Some(batch),
    )
    .await;
    assert_eq!((again.0, again.1), (200, true));
    assert_eq!(s.get("/v1/boards/b/entries").await.1, before);
    s.stop().await;
}

async fn refusals_are_not_remembered_and_bad_keys_are_400(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/r", json!({"max_score": 10})).await;
    let too_high = json!({"member": "a", "score": 11});
    for _ in 0..2 {
        let r = keyed(
            &s,
            "k",
            Method::POST,
            "/v1/boards/r/scores",
            Some(too_high.clone()),
        )
        .await;
        assert_eq!(
            (r.0, r.1, &r.2["error"]["code"]),
            (422, false, &json!("score_rejected"))
        );
    }
    // The key was not used up by the refusal.
    let ok = keyed(
        &s,
        "k",
        Method::POST,
        "/v1/boards/r/scores",
        Some(json!({"member": "a", "score": 3})),
    )
    .await;
    assert_eq!((ok.0, ok.1), (200, false), "{ok:?}");
    let before = s.get("/v1/boards/r/entries").await.1;
    for bad in [String::new(), "k".repeat(256), "tab\tkey".into()] {
        let r = keyed(
            &s,
            &bad,
            Method::POST,
            "/v1/boards/r/scores",
            Some(json!({"member": "z", "score": 1})),
        )
        .await;
        assert_eq!(
            (r.0, &r.2["error"]["code"]),
            (400, &json!("invalid_idempotency_key")),
            "{bad:?}"
        );
    }
    assert_eq!(s.get("/v1/boards/r/entries").await.1, before);
    s.stop().await;
}

async fn concurrent_duplicates_apply_once(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/race", json!({})).await;
    let body = json!({"member": "m", "score": 1});
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (base, body) = (s.base.clone(), body.clone());
            tokio::spawn(async move {
                keyed_at(
                    &base,
                    "same",
                    Method::POST,
                    "/v1/boards/race/scores",
                    Some(body),
                )
                .await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.expect("task"));
    }
    let mut applied = 0;
    for (status, replayed, v) in &answers {
        match status {
            200 if !replayed => applied += 1,
            200 => assert_eq!(v["score"], 1),
            409 => assert_eq!(v["error"]["code"], "idempotency_key_in_flight"),
            other => panic!("{other}: {v}"),
        }
    }
    assert_eq!(applied, 1, "{answers:?}");
    assert_eq!(score(&s, "race", "m").await, 1);
    s.stop().await;
}

async fn keys_expire(kind: Kind) {
    let s = Server::start_configured(kind, |o| ServeOptions {
        // Long enough that a slow machine's second request still finds the key (Redis
        // expires it by its own clock, so the test waits in real time).
        idempotency_ttl: Duration::from_secs(5),
        ..o
    })
    .await;
    s.put("/v1/boards/e", json!({})).await;
    let body = json!({"member": "m", "score": 1});
    assert!(
        !keyed(
            &s,
            "x",
            Method::POST,
            "/v1/boards/e/scores",
            Some(body.clone())
        )
        .await
        .1
    );
    assert!(
        keyed(
            &s,
            "x",
            Method::POST,
            "/v1/boards/e/scores",
            Some(body.clone())
        )
        .await
        .1
    );
    tokio::time::sleep(Duration::from_millis(6500)).await;
    let after = keyed(&s, "x", Method::POST, "/v1/boards/e/scores", Some(body)).await;
    assert_eq!(
        (after.0, after.1, &after.2["score"]),
        (200, false, &json!(2))
    );
    s.stop().await;
}

async fn keys_are_scoped_per_credential(kind: Kind) {
    use photofinish_core::access::Scope;
    use photofinish_server::auth::keys;
    let dir = tempfile::tempdir().expect("tmp");
    let (a_key, a) = keys::new_key("a", Scope::Admin, vec![], None, "t".into()).expect("key");
    let (b_key, b) = keys::new_key("b", Scope::Write, vec![], None, "t".into()).expect("key");
    let file = dir.path().join("keys.json");
    keys::write_file(&file, vec![a_key, b_key]).expect("keys file");
    let s = Server::start_configured(kind, |o| ServeOptions {
        keys: Some(file),
        ..o
    })
    .await;
    let post = |token: String| {
        let base = s.base.clone();
        async move {
            let resp = reqwest::Client::new()
                .post(format!("{base}/v1/boards/shared/scores"))
                .bearer_auth(token)
                .header("Idempotency-Key", "same-key")
                .json(&json!({"member": "m", "score": 1}))
                .send()
                .await
                .expect("post");
            (
                resp.status().as_u16(),
                resp.headers().contains_key("idempotent-replayed"),
            )
        }
    };
    let (a, b) = (a.expose().to_owned(), b.expose().to_owned());
    let put = s
        .call_as(Some(&a), Method::PUT, "/v1/boards/shared", Some(json!({})))
        .await;
    assert_eq!(put.0, 201);
    assert_eq!(post(a.clone()).await, (200, false));
    assert_eq!(
        post(b.clone()).await,
        (200, false),
        "another credential's key is its own"
    );
    assert_eq!(post(b).await, (200, true));
    let m = s
        .call_as(Some(&a), Method::GET, "/v1/boards/shared/members/m", None)
        .await;
    assert_eq!(m.1["score"], 2);
    s.stop().await;
}

/// A retry gets its first answer even when the request, made now for the first time,
/// would be refused: a late result named its period within the grace, retried after the
/// grace is over. (The embedded store answers a remembered key where its command is
/// applied, and asks its table first only when the command cannot be built, as here.)
async fn a_retry_gets_its_answer_after_its_period_closes(kind: Kind) {
    use photofinish_core::clock::ManualClock;
    const MIDNIGHT_US: i64 = 1_795_392_000_000_000; // 2026-11-23T00:00:00Z
    const S: i64 = 1_000_000;
    let clock = std::sync::Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, _) = s
        .put("/v1/boards/late", json!({"reset": "daily", "grace": 30}))
        .await;
    assert_eq!(st, 201);
    clock.set(MIDNIGHT_US + 5 * S);
    let path = "/v1/boards/late/scores";
    let body = json!({"member": "ann", "score": 7, "period": "2026-11-22"});
    let first = keyed(&s, "k", Method::POST, path, Some(body.clone())).await;
    assert_eq!((first.0, first.1), (200, false), "{first:?}");
    let again = keyed(&s, "k", Method::POST, path, Some(body.clone())).await;
    assert_eq!((again.0, again.1, &again.2), (200, true, &first.2));

    clock.set(MIDNIGHT_US + 60 * S);
    let after = keyed(&s, "k", Method::POST, path, Some(body.clone())).await;
    assert_eq!((after.0, after.1, &after.2), (200, true, &first.2));
    let reused = json!({"member": "bob", "score": 1, "period": "2026-11-22"});
    let reused = keyed(&s, "k", Method::POST, path, Some(reused)).await;
    assert_eq!(
        (reused.0, &reused.2["error"]["code"]),
        (422, &json!("idempotency_key_reused"))
    );
    let fresh = keyed(&s, "k2", Method::POST, path, Some(body)).await;
    assert_eq!(
        (fresh.0, &fresh.2["error"]["code"]),
        (422, &json!("period_closed"))
    );
    let day = s.get("/v1/boards/late/entries?period=2026-11-22").await.1;
    assert_eq!(
        (day["total"].clone(), day["entries"][0]["score"].clone()),
        (json!(1), json!(7))
    );
    s.stop().await;
}

conformance!(
    keys_are_scoped_per_credential,
    a_repeat_answers_the_first_answer_and_applies_nothing,
    refusals_are_not_remembered_and_bad_keys_are_400,
    concurrent_duplicates_apply_once,
    keys_expire,
    a_retry_gets_its_answer_after_its_period_closes,
);
