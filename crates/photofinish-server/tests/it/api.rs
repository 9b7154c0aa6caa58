//! Every endpoint, end to end.

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

fn members(v: &Value) -> Vec<(String, i64, i64)> {
    v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["member"].as_str().expect("m").to_owned(),
                e["score"].as_i64().expect("s"),
                e["rank"].as_i64().expect("r"),
            )
        })
        .collect()
}

async fn board_lifecycle(kind: Kind) {
    let s = Server::start(kind).await;
    let (st, b) = s.put("/v1/boards/kills", json!({})).await;
    assert_eq!(st, 201);
    assert_eq!(
        (
            b["name"].as_str(),
            b["order"].as_str(),
            b["update"].as_str(),
            b["reset"].as_str()
        ),
        (Some("kills"), Some("desc"), Some("incr"), Some("never"))
    );
    assert_eq!(
        (
            b["period"].as_str(),
            b["members"].as_u64(),
            &b["next_reset_at"]
        ),
        (Some("all"), Some(0), &Value::Null)
    );
    assert_eq!(
        s.put("/v1/boards/kills", json!({"order": "desc"})).await.0,
        200
    );
    assert_error(
        &s.put("/v1/boards/kills", json!({"order": "asc"})).await,
        409,
        "board_config_conflict",
    );
    let (st, daily) = s.put("/v1/boards/daily", json!({"reset": "daily", "timezone": "Asia/Shanghai", "order": "asc", "update": "best", "retention": 3})).await;
    assert_eq!(st, 201);
    assert!(
        daily["next_reset_at"]
            .as_str()
            .is_some_and(|t| t.ends_with("T16:00:00.000000Z")),
        "{daily}"
    );
    let (st, list) = s.get("/v1/boards").await;
    assert_eq!(st, 200);
    let names: Vec<&str> = list["boards"]
        .as_array()
        .expect("boards")
        .iter()
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert_eq!(names, ["daily", "kills"]);
    assert_eq!(s.get("/v1/boards/daily").await.1["retention"], 3);
    assert_eq!(s.delete("/v1/boards/daily").await.0, 204);
    assert_error(&s.get("/v1/boards/daily").await, 404, "board_not_found");
    assert_error(&s.delete("/v1/boards/daily").await, 404, "board_not_found");
    s.stop().await;
}

async fn scores_ranks_pages_and_around(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    for (m, v) in [("a", 100), ("b", 99), ("c", 99), ("d", 88), ("e", 87)] {
        let (st, w) = s
            .post("/v1/boards/b/scores", json!({"member": m, "score": v}))
            .await;
        assert_eq!(st, 200, "{w}");
        assert_eq!(
            (
                w["member"].as_str(),
                w["score"].as_i64(),
                w["changed"].as_bool(),
                w["period"].as_str()
            ),
            (Some(m), Some(v), Some(true), Some("all"))
        );
        assert!(
            w["reached_at"]
                .as_str()
                .is_some_and(|t| t.len() == 27 && t.ends_with('Z')),
            "{w}"
        );
    }
    let (_, w) = s
        .post("/v1/boards/b/scores", json!({"member": "c", "score": 0}))
        .await;
    assert_eq!(
        (
            w["score"].as_i64(),
            w["rank"].as_i64(),
            w["changed"].as_bool()
        ),
        (Some(99), Some(3), Some(false))
    );
    let ranks = |style: &'static str| {
        let s = &s;
        async move {
            members(
                &s.get(&format!("/v1/boards/b/entries?limit=10&ranking={style}"))
                    .await
                    .1,
            )
            .into_iter()
            .map(|(_, _, r)| r)
            .collect::<Vec<_>>()
        }
    };
    assert_eq!(ranks("ordinal").await, [1, 2, 3, 4, 5]);
    assert_eq!(ranks("competition").await, [1, 2, 2, 4, 5]);
    assert_eq!(ranks("dense").await, [1, 2, 2, 3, 4]);
    let (_, page) = s.get("/v1/boards/b/entries?offset=3&limit=1").await;
    assert_eq!(
        (page["total"].as_u64(), members(&page)),
        (Some(5), vec![("d".to_owned(), 88, 4)])
    );
    let (st, m) = s.get("/v1/boards/b/members/c?ranking=dense").await;
    assert_eq!(st, 200);
    assert_eq!(
        (
            m["rank"].as_i64(),
            m["score"].as_i64(),
            m["total"].as_i64(),
            &m["metadata"]
        ),
        (Some(2), Some(99), Some(5), &Value::Null)
    );
    // Around the leader with 2 and 2: ranks 1 to 5, the window shifted down.
    let (_, around) = s
        .get("/v1/boards/b/members/a/around?before=2&after=2")
        .await;
    assert_eq!(
        members(&around).iter().map(|e| e.2).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    // Around the last with 1 and 1: the window shifts up to keep 3 rows.
    let (_, around) = s
        .get("/v1/boards/b/members/e/around?before=1&after=1&ranking=competition")
        .await;
    assert_eq!(
        members(&around),
        [
            ("c".to_owned(), 99, 2),
            ("d".to_owned(), 88, 4),
            ("e".to_owned(), 87, 5)
        ]
    );
    assert_error(
        &s.get("/v1/boards/b/members/zz").await,
        404,
        "member_not_found",
    );
    assert_error(
        &s.get("/v1/boards/b/members/zz/around").await,
        404,
        "member_not_found",
    );
    assert_eq!(s.delete("/v1/boards/b/members/c").await.0, 204);
    assert_error(
        &s.delete("/v1/boards/b/members/c").await,
        404,
        "member_not_found",
    );
    assert_eq!(s.get("/v1/boards/b").await.1["members"], 4);
    s.stop().await;
}

async fn batch_applies_in_order_and_reports_each_entry(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({"update": "set"})).await;
    // An entry that breaks the schema refuses the whole batch, naming it; nothing applies.
    for (bad, status, code) in [
        (json!({"member": "", "score": 1}), 422, "invalid_member"),
        (json!({"nonsense": true}), 400, "malformed_json"),
        (
            json!({"member": "a", "score": 1.5}),
            422,
            "score_not_integer",
        ),
    ] {
        let body = json!({"entries": [{"member": "a", "score": 1}, bad]});
        let got = s.post("/v1/boards/b/scores:batch", body).await;
        assert_error(&got, status, code);
        assert!(
            got.1["error"]["message"]
                .as_str()
                .unwrap_or("")
                .starts_with("entries[1]: "),
            "{got:?}"
        );
        assert_error(
            &s.get("/v1/boards/b/members/a").await,
            404,
            "member_not_found",
        );
    }
    // Refusals by the board's state or the storage's range stay in their entry's place.
    let body = json!({"entries": [
        {"member": "a", "score": 1},
        {"member": "a", "score": 5, "op": "incr"},
        {"member": "a", "score": "9223372036854775807", "op": "incr"},
        {"member": "b", "score": "9007199254740993"},
        {"member": "a", "score": 2, "op": "best"},
    ]});
    let (st, r) = s.post("/v1/boards/b/scores:batch", body).await;
    assert_eq!(st, 200);
    let r = r["results"].as_array().expect("results").clone();
    assert_eq!(r.len(), 5);
    assert_eq!(r[0]["score"], 1);
    assert_eq!(r[1]["score"], 6);
    assert_eq!(r[2]["error"]["code"], "score_overflow");
    assert_eq!(
        r[3]["score"].as_i64(),
        Some(9_007_199_254_740_993),
        "past 2^53, exact on every backend"
    );
    assert_eq!(
        (r[4]["score"].as_i64(), r[4]["changed"].as_bool()),
        (Some(6), Some(false))
    );
    s.stop().await;
}

async fn metadata_and_encoded_member_names(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    let name = "玩家/one two%";
    s.post(
        "/v1/boards/b/scores",
        json!({"member": name, "score": 3, "metadata": {"level": 7, "tag": "x"}}),
    )
    .await;
    s.post("/v1/boards/b/scores", json!({"member": name, "score": 1}))
        .await;
    let (st, m) = s
        .get("/v1/boards/b/members/%E7%8E%A9%E5%AE%B6%2Fone%20two%25")
        .await;
    assert_eq!(st, 200, "{m}");
    assert_eq!(
        (m["member"].as_str(), m["score"].as_i64()),
        (Some(name), Some(4))
    );
    assert_eq!(m["metadata"], json!({"level": 7, "tag": "x"}));
    let (_, page) = s.get("/v1/boards/b/entries").await;
    assert_eq!(page["entries"][0]["metadata"]["level"], 7);
    s.stop().await;
}

async fn periods_route_writes_and_reads(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/w", json!({"reset": "weekly"})).await;
    let now = jiff::Timestamp::now();
    let last_week = (now - jiff::SignedDuration::from_hours(24 * 7)).to_string();
    let (_, w) = s
        .post(
            "/v1/boards/w/scores",
            json!({"member": "old", "score": 5, "at": last_week}),
        )
        .await;
    let previous_id = w["period"].as_str().expect("period").to_owned();
    let (_, w) = s
        .post("/v1/boards/w/scores", json!({"member": "new", "score": 7}))
        .await;
    let current_id = w["period"].as_str().expect("period").to_owned();
    assert_ne!(previous_id, current_id);
    let (_, cur) = s.get("/v1/boards/w/entries").await;
    assert_eq!(
        (cur["period"].as_str(), members(&cur).len()),
        (Some(current_id.as_str()), 1)
    );
    let (_, prev) = s.get("/v1/boards/w/entries?period=previous").await;
    assert_eq!(
        (prev["period"].as_str(), members(&prev)),
        (Some(previous_id.as_str()), vec![("old".to_owned(), 5, 1)])
    );
    let (_, by_id) = s
        .get(&format!("/v1/boards/w/members/old?period={previous_id}"))
        .await;
    assert_eq!(by_id["score"], 5);
    let (_, periods) = s.get("/v1/boards/w/periods").await;
    let ids: Vec<&str> = periods["periods"]
        .as_array()
        .expect("periods")
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert_eq!(ids, [current_id.as_str(), previous_id.as_str()]);
    assert_error(
        &s.get("/v1/boards/w/entries?period=2020-W01").await,
        404,
        "period_not_found",
    );
    // A monthly id on a weekly board is well formed and names no period of it; a stray
    // word is malformed.
    assert_error(
        &s.get("/v1/boards/w/entries?period=2020-01").await,
        404,
        "period_not_found",
    );
    assert_error(
        &s.get("/v1/boards/w/entries?period=2020-1").await,
        400,
        "invalid_period",
    );
    assert_eq!(
        s.call(
            Method::DELETE,
            &format!("/v1/boards/w/members/old?period={previous_id}"),
            None
        )
        .await
        .0,
        204
    );
    s.stop().await;
}

async fn ops_endpoints(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    s.post("/v1/boards/b/scores", json!({"member": "a", "score": 1}))
        .await;
    let (st, h) = s.get("/healthz").await;
    assert_eq!((st.as_u16(), h["status"].as_str()), (200, Some("ok")));
    let resp = s
        .http
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .expect("metrics");
    assert!(resp.headers().get("x-request-id").is_some());
    let text = resp.text().await.expect("text");
    for needle in [
        "photofinish_http_requests_total{route=\"/v1/boards/{board}/scores\",method=\"POST\",status=\"200\"} 1",
        "photofinish_http_request_duration_seconds_bucket",
        "photofinish_boards 1",
        "photofinish_members 1",
        "photofinish_log_fsync_duration_seconds_count",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    let (st, doc) = s.get("/openapi.json").await;
    assert_eq!(st, 200);
    let paths = doc["paths"].as_object().expect("paths");
    for p in [
        "/v1/boards",
        "/v1/boards/{board}",
        "/v1/boards/{board}/scores",
        "/v1/boards/{board}/scores:batch",
        "/v1/boards/{board}/entries",
        "/v1/boards/{board}/members/{member}",
        "/v1/boards/{board}/members/{member}/around",
        "/v1/boards/{board}/periods",
        "/healthz",
        "/metrics",
        "/openapi.json",
    ] {
        assert!(paths.contains_key(p), "openapi lacks {p}");
    }
    assert_error(&s.get("/v2/nothing").await, 404, "not_found");
    assert_error(
        &s.call(Method::POST, "/v1/boards/b", None).await,
        405,
        "method_not_allowed",
    );
    s.stop().await;
}

async fn data_survives_a_graceful_restart(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({"order": "asc"})).await;
    s.post(
        "/v1/boards/b/scores",
        json!({"member": "a", "score": -5, "metadata": {"k": 1}}),
    )
    .await;
    let before = s.get("/v1/boards/b/members/a").await.1;
    let s = s.restart().await;
    assert_eq!(s.get("/v1/boards/b/members/a").await.1, before);
    assert_eq!(s.get("/v1/boards/b").await.1["order"], "asc");
    s.stop().await;
}

/// The whole i64 range, exactly, on every backend: i64's ends, and scores past 2^53 that
/// differ by 1 (one double on Redis) and tie, in both orders and all three rank styles,
/// against a model that sorts by (score, time).
async fn scores_past_2_53_rank_exactly(kind: Kind) {
    let s = Server::start(kind).await;
    let big = 1_i64 << 53;
    let rows: [(&str, i64); 12] = [
        ("a", i64::MAX),
        ("b", i64::MAX - 1),
        ("c", big + 2),
        ("d", big + 1),
        ("e", big + 1),
        ("f", big),
        ("g", big - 1),
        ("h", 5),
        ("i", -big - 1),
        ("j", -big - 2),
        ("k", i64::MIN),
        ("l", i64::MIN),
    ];
    for order in ["desc", "asc"] {
        let board = format!("/v1/boards/x{order}");
        s.put(&board, json!({"order": order, "update": "set"}))
            .await;
        // Written in reverse so the listing order is not the writing order; times rise.
        for (i, (m, v)) in rows.iter().rev().enumerate() {
            let at = format!("2026-11-22T10:00:{:02}Z", i);
            let (st, w) = s
                .post(
                    &format!("{board}/scores"),
                    json!({"member": m, "score": v.to_string(), "at": at}),
                )
                .await;
            assert_eq!(
                (st.as_u16(), w["score"].as_i64()),
                (200, Some(*v)),
                "{m}: {w}"
            );
        }
        // The model: best score first, then the earlier time (written later = listed in
        // `rows` earlier, so equal scores keep the later row first).
        let mut model: Vec<(&str, i64, usize)> = rows
            .iter()
            .enumerate()
            .map(|(i, (m, v))| (*m, *v, rows.len() - 1 - i))
            .collect();
        model.sort_by(|x, y| {
            let by_score = if order == "desc" {
                y.1.cmp(&x.1)
            } else {
                x.1.cmp(&y.1)
            };
            by_score.then(x.2.cmp(&y.2))
        });
        for style in ["ordinal", "competition", "dense"] {
            let mut expected = Vec::new();
            let mut distinct = 0;
            for (pos, (m, v, _)) in model.iter().enumerate() {
                let first = model.iter().position(|e| e.1 == *v).expect("present");
                if first == pos {
                    distinct += 1;
                }
                let rank = match style {
                    "ordinal" => pos + 1,
                    "competition" => first + 1,
                    _ => distinct,
                };
                expected.push(json!({"member": m, "score": v, "rank": rank}));
            }
            let (_, page) = s
                .get(&format!("{board}/entries?limit=100&ranking={style}"))
                .await;
            let got: Vec<Value> = page["entries"]
                .as_array()
                .expect("entries")
                .iter()
                .map(|e| json!({"member": e["member"], "score": e["score"], "rank": e["rank"]}))
                .collect();
            assert_eq!(got, expected, "{order} {style}");
            for e in &expected {
                let m = e["member"].as_str().expect("member");
                let (_, r) = s.get(&format!("{board}/members/{m}?ranking={style}")).await;
                assert_eq!(
                    (&r["rank"], &r["score"]),
                    (&e["rank"], &e["score"]),
                    "{order} {style} {m}"
                );
            }
            let (_, around) = s
                .get(&format!(
                    "{board}/members/e/around?before=2&after=2&ranking={style}"
                ))
                .await;
            let pos = model.iter().position(|e| e.0 == "e").expect("e");
            let got: Vec<Value> = around["entries"]
                .as_array()
                .expect("entries")
                .iter()
                .map(|e| json!({"member": e["member"], "score": e["score"], "rank": e["rank"]}))
                .collect();
            assert_eq!(got, expected[pos - 2..=pos + 2], "{order} {style} around e");
        }
        // Increments across 2^53 and to i64's ends are exact, and past them overflow.
        let incr = |m: &str, v: i64| json!({"member": m, "score": v.to_string(), "op": "incr"});
        let (_, w) = s.post(&format!("{board}/scores"), incr("g", 3)).await;
        assert_eq!(w["score"].as_i64(), Some(big + 2), "{w}");
        let (_, w) = s.post(&format!("{board}/scores"), incr("b", 1)).await;
        assert_eq!(w["score"].as_i64(), Some(i64::MAX), "{w}");
        let (st, w) = s.post(&format!("{board}/scores"), incr("a", 1)).await;
        assert_eq!(
            (st.as_u16(), &w["error"]["code"]),
            (422, &json!("score_overflow")),
            "{w}"
        );
        let (st, w) = s.post(&format!("{board}/scores"), incr("k", -1)).await;
        assert_eq!(
            (st.as_u16(), &w["error"]["code"]),
            (422, &json!("score_overflow")),
            "{w}"
        );
        let (_, r) = s
            .get(&format!("{board}/members/g?ranking=competition"))
            .await;
        let better = rows
            .iter()
            .filter(|(m, v)| {
                *m != "g"
                    && if order == "desc" {
                        *v > big + 2
                    } else {
                        *v < big + 2
                    }
            })
            .count();
        assert_eq!(r["rank"], better + 1, "g ties c at 2^53 + 2: {r}");
        // Removing an entry of a shared double leaves the others exact.
        assert_eq!(s.delete(&format!("{board}/members/d")).await.0, 204);
        let (_, r) = s.get(&format!("{board}/members/e?ranking=dense")).await;
        assert_eq!(r["score"].as_i64(), Some(big + 1), "{r}");
    }
    s.stop().await;
}

conformance!(
    scores_past_2_53_rank_exactly,
    data_survives_a_graceful_restart,
    board_lifecycle,
    scores_ranks_pages_and_around,
    batch_applies_in_order_and_reports_each_entry,
    metadata_and_encoded_member_names,
    periods_route_writes_and_reads,
    ops_endpoints,
);
