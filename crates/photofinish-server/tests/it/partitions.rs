//! Partitions (docs/SPEC.md §17) end to end, on every backend and through both doors: a
//! write names its member's partition, fixed for the period; each partition ranks on its
//! own beside the whole board (entries, a member, around, rank-of-score, thresholds,
//! export) in every style; member answers carry `partition` and `partition_rank`; the
//! period's partitions list; a player's token names only its own partition claim; the
//! standings survive a restart; every refusal changes nothing.

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

async fn put(s: &Server, member: &str, score: i64, partition: Option<&str>) -> (u16, Value) {
    let mut body = json!({"member": member, "score": score, "op": "set"});
    if let Some(p) = partition {
        body["partition"] = json!(p);
    }
    let (st, v) = s.post("/v1/boards/p/scores", body).await;
    (st.as_u16(), v)
}

fn r(m: &str, score: i64, rank: u64) -> (String, i64, u64) {
    (m.to_owned(), score, rank)
}

/// Everything a reader can see of board `p`, to prove a refusal changed nothing.
async fn state(s: &Server) -> Vec<Value> {
    let mut out = vec![s.get("/v1/boards/p/entries?limit=100").await.1];
    out.push(s.get("/v1/boards/p/partitions").await.1);
    for p in ["FR", "DE"] {
        out.push(
            s.get(&format!("/v1/boards/p/entries?partition={p}"))
                .await
                .1,
        );
    }
    out
}

/// The standings of the board the main test builds, as both doors read them.
async fn check_standings(s: &Server) {
    let (st, fr) = s.get("/v1/boards/p/entries?partition=FR").await;
    assert_eq!(st, 200, "{fr}");
    assert_eq!(fr["total"], 3);
    assert_eq!(rows(&fr), vec![r("b", 30, 1), r("e", 30, 2), r("a", 10, 3)]);
    assert!(fr["entries"]
        .as_array()
        .is_some_and(|e| e.iter().all(|e| e["partition"] == "FR")));
    let (_, fr) = s
        .get("/v1/boards/p/entries?partition=FR&ranking=competition")
        .await;
    assert_eq!(rows(&fr), vec![r("b", 30, 1), r("e", 30, 1), r("a", 10, 3)]);
    let (_, fr) = s
        .get("/v1/boards/p/entries?partition=FR&ranking=dense&offset=1")
        .await;
    assert_eq!(rows(&fr), vec![r("e", 30, 1), r("a", 10, 2)]);
    // The whole board ranks everyone as before.
    let (_, all) = s.get("/v1/boards/p/entries").await;
    assert_eq!(
        rows(&all),
        vec![
            r("d", 50, 1),
            r("b", 30, 2),
            r("e", 30, 3),
            r("c", 20, 4),
            r("a", 10, 5)
        ]
    );
    assert_eq!(all["entries"][0].get("partition"), None, "d is in none");
    // A member answer: its board rank, its partition and its rank there.
    let (_, c) = s.get("/v1/boards/p/members/c").await;
    assert_eq!(
        (&c["rank"], &c["partition"], &c["partition_rank"]),
        (&json!(4), &json!("DE"), &json!(1)),
        "{c}"
    );
    let (_, d) = s.get("/v1/boards/p/members/d").await;
    assert_eq!((d.get("partition"), d.get("partition_rank")), (None, None));
    // Around a member within its partition, rank-of-score and thresholds there.
    let (_, around) = s
        .get("/v1/boards/p/members/a/around?partition=FR&before=1&after=1")
        .await;
    assert_eq!(
        rows(&around),
        vec![r("b", 30, 1), r("e", 30, 2), r("a", 10, 3)]
    );
    let (_, rank) = s.get("/v1/boards/p/rank?score=20&partition=FR").await;
    assert_eq!(
        (&rank["rank"], &rank["total"]),
        (&json!(3), &json!(3)),
        "{rank}"
    );
    let (_, t) = s.get("/v1/boards/p/thresholds?ranks=1&partition=DE").await;
    assert_eq!(t["thresholds"][0]["member"], "c", "{t}");
    // The period's partitions.
    let (st, list) = s.get("/v1/boards/p/partitions").await;
    assert_eq!(st, 200, "{list}");
    assert_eq!(
        (&list["total"], &list["partitions"]),
        (
            &json!(2),
            &json!([{"partition": "DE", "members": 1}, {"partition": "FR", "members": 3}])
        )
    );
    let (_, page) = s.get("/v1/boards/p/partitions?offset=1&limit=1").await;
    assert_eq!(
        page["partitions"],
        json!([{"partition": "FR", "members": 3}])
    );
    // RESP reads take PARTITION.
    let mut c = resp(s).await;
    let got = lb(&mut c, &["LB.RANGE", "p", "0", "10", "PARTITION", "FR"]).await;
    let members: Vec<&str> = got
        .as_array()
        .map(|a| a.iter().filter_map(|row| row[1].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(members, ["b", "e", "a"], "{got}");
    assert_eq!(
        lb(&mut c, &["LB.RANK", "p", "a", "PARTITION", "FR"]).await,
        3
    );
    assert_eq!(lb(&mut c, &["LB.CARD", "p", "PARTITION", "DE"]).await, 1);
}

async fn each_partition_ranks_on_its_own(kind: Kind) {
    let s = Server::start(kind).await;
    let (st, b) = s
        .put("/v1/boards/p", json!({"partitions": {"max": 2}}))
        .await;
    assert_eq!(
        (st.as_u16(), &b["partitions"]),
        (201, &json!({"max": 2})),
        "{b}"
    );
    for (m, score, p) in [
        ("a", 10, Some("FR")),
        ("b", 30, Some("FR")),
        ("c", 20, Some("DE")),
        ("d", 50, None),
    ] {
        assert_eq!(put(&s, m, score, p).await.0, 200, "{m}");
    }
    // RESP writes take PARTITION; a write answer carries the member's partition rank.
    let mut c = resp(&s).await;
    let got = lb(&mut c, &["LB.SET", "p", "e", "30", "PARTITION", "FR"]).await;
    assert!(got.get("error").is_none() && !got.is_null(), "{got}");
    let (st, w) = put(&s, "a", 10, Some("FR")).await;
    assert_eq!(
        (st, &w["partition"], &w["partition_rank"], &w["rank"]),
        (200, &json!("FR"), &json!(3), &json!(5)),
        "{w}"
    );
    // A later write naming none keeps the member where it is.
    let (_, w) = put(&s, "a", 10, None).await;
    assert_eq!(w["partition"], "FR", "{w}");
    check_standings(&s).await;

    // Refusals change nothing.
    let before = state(&s).await;
    let (st, e) = put(&s, "a", 99, Some("DE")).await;
    assert_eq!(
        (st, &e["error"]["code"]),
        (409, &json!("partition_conflict")),
        "{e}"
    );
    let (st, e) = put(&s, "d", 99, Some("FR")).await;
    assert_eq!(
        (st, &e["error"]["code"]),
        (409, &json!("partition_conflict")),
        "{e}"
    );
    let (st, e) = put(&s, "f", 99, Some("JP")).await;
    assert_eq!(
        (st, &e["error"]["code"]),
        (422, &json!("too_many_partitions")),
        "{e}"
    );
    let (st, e) = put(&s, "f", 99, Some("not a key")).await;
    assert_eq!(
        (st, &e["error"]["code"]),
        (400, &json!("invalid_parameter")),
        "{e}"
    );
    assert_error(
        &s.get("/v1/boards/p/entries?partition=a.b").await,
        400,
        "invalid_parameter",
    );
    let got = lb(&mut c, &["LB.INCR", "p", "a", "1", "PARTITION", "DE"]).await;
    assert_eq!(got["error"], "partition_conflict", "{got}");
    assert_eq!(state(&s).await, before, "refusals changed nothing");
    // A partition needs a board of partitions; cohort reads take none.
    s.put("/v1/boards/plain", json!({})).await;
    let (st, e) = s
        .post(
            "/v1/boards/plain/scores",
            json!({"member": "a", "score": 1, "partition": "FR"}),
        )
        .await;
    assert_eq!(
        (st.as_u16(), &e["error"]["code"]),
        (422, &json!("invalid_parameter"))
    );
    assert_eq!(s.get("/v1/boards/plain/entries").await.1["total"], 0);
    assert_error(
        &s.get("/v1/boards/plain/entries?partition=FR").await,
        422,
        "invalid_parameter",
    );
    assert_error(
        &s.get("/v1/boards/plain/partitions").await,
        422,
        "invalid_parameter",
    );
    s.put(
        "/v1/boards/co",
        json!({"cohort_size": 2, "partitions": {"max": 2}}),
    )
    .await;
    assert_error(
        &s.get("/v1/boards/co/cohorts/1/entries?partition=FR").await,
        422,
        "invalid_parameter",
    );
    // The config is checked: a bound, an unknown field; it is fixed for the board's life.
    for bad in [
        json!({"max": 0}),
        json!({"max": 10_001}),
        json!({"max": 2, "x": 1}),
    ] {
        let (st, e) = s.put("/v1/boards/q", json!({"partitions": bad})).await;
        assert_eq!(st.as_u16(), 400, "{bad}: {e}");
    }
    let (st, _) = s
        .put("/v1/boards/p", json!({"partitions": {"max": 3}}))
        .await;
    assert_eq!(st.as_u16(), 409);
    // An export of one partition holds its rows alone.
    let got = s
        .http
        .get(format!("{}/v1/boards/p/export?partition=DE", s.base))
        .send()
        .await
        .expect("export");
    assert_eq!(got.status(), 200);
    let text = got.text().await.expect("body");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].contains("\"c\""), "{text}");
    // After a restart (a replay, or a node loading the log) every standing is the same.
    let s = s.restart().await;
    check_standings(&s).await;
    s.stop().await;
}

/// An admin key, and a player token with a `partition` claim.
async fn players_name_only_their_own_partition(kind: Kind) {
    let (s, admin, _keys) = start_with_players(kind).await;
    let body = json!({"partitions": {"max": 10}, "player_writes": true, "public_read": true});
    let (st, _) = s
        .call_as(Some(&admin), Method::PUT, "/v1/boards/p", Some(body))
        .await;
    assert_eq!(st, 201);
    let token = ann_token;
    let fr = token(json!({"partition": "FR"}));
    let none = token(json!({}));
    let write = |t: &str, p: Option<&str>| {
        let mut body = json!({"member": "ann", "score": 5});
        if let Some(p) = p {
            body["partition"] = json!(p);
        }
        let t = t.to_owned();
        let s = &s;
        async move {
            s.call_as(Some(&t), Method::POST, "/v1/boards/p/scores", Some(body))
                .await
        }
    };
    for (t, p) in [(&fr, Some("DE")), (&none, Some("FR"))] {
        let got = write(t, p).await;
        assert_error(&got, 403, "forbidden");
    }
    assert_eq!(
        s.get("/v1/boards/p/entries").await.1["total"],
        0,
        "a refusal changed nothing"
    );
    let (st, w) = write(&fr, Some("FR")).await;
    assert_eq!((st.as_u16(), &w["partition"]), (200, &json!("FR")), "{w}");
    // An admin key names any partition; a bad claim is no valid token.
    let body = json!({"member": "bob", "score": 1, "partition": "DE"});
    let (st, _) = s
        .call_as(
            Some(&admin),
            Method::POST,
            "/v1/boards/p/scores",
            Some(body),
        )
        .await;
    assert_eq!(st, 200);
    let bad = token(json!({"partition": "not a key"}));
    assert_error(&write(&bad, None).await, 401, "unauthorized");
    // Over RESP too.
    let mut c = resp_as(&s, Some(&fr), false).await.expect("auth");
    let got = lb(&mut c, &["LB.INCR", "p", "ann", "1", "PARTITION", "DE"]).await;
    assert_eq!(got["error"], "forbidden", "{got}");
    let got = lb(&mut c, &["LB.INCR", "p", "ann", "1", "PARTITION", "FR"]).await;
    assert!(got.get("error").is_none() && !got.is_null(), "{got}");
    s.stop().await;
}

conformance!(
    each_partition_ranks_on_its_own,
    players_name_only_their_own_partition,
);
