//! Score rules, board and memory budgets (docs/SPEC.md §7) on every backend: each refusal
//! has its status and code and changes nothing; in a batch only the refused entry fails.

use std::time::Duration;

use photofinish_server::serve::ServeOptions;
use serde_json::{json, Value};

use crate::support::*;

async fn entries(s: &Server, board: &str) -> Value {
    s.get(&format!("/v1/boards/{board}/entries?limit=1000"))
        .await
        .1
}

async fn score_rules_refuse_and_change_nothing(kind: Kind) {
    let s = Server::start(kind).await;
    let (status, view) = s
        .put(
            "/v1/boards/r",
            json!({"update": "set", "min_score": 0, "max_score": "100", "max_increment": 10, "max_members": 2}),
        )
        .await;
    assert_eq!(status, 201, "{view}");
    assert_eq!(
        (
            &view["min_score"],
            &view["max_score"],
            &view["max_increment"],
            &view["max_members"]
        ),
        (&json!(0), &json!(100), &json!(10), &json!(2))
    );
    let post = |member: &str, score: Value, op: &str| {
        s.post(
            "/v1/boards/r/scores",
            json!({"member": member, "score": score, "op": op}),
        )
    };
    assert_eq!(post("a", json!(50), "set").await.0, 200);
    let before = entries(&s, "r").await;
    for (member, score, op, code) in [
        ("a", json!(101), "set", "score_rejected"),
        ("a", json!(-1), "set", "score_rejected"),
        ("a", json!(11), "incr", "score_rejected"),
        ("a", json!(-11), "incr", "score_rejected"),
        ("a", json!(60), "incr", "score_rejected"), // 50 + 60 leaves max_score
        ("n", json!(101), "set", "score_rejected"),
    ] {
        assert_error(&post(member, score, op).await, 422, code);
    }
    assert_eq!(
        entries(&s, "r").await,
        before,
        "a refused write changed the board"
    );
    // Inside the rules; a best that leaves the score as it is passes whatever its value.
    assert_eq!(post("a", json!(10), "incr").await.1["score"], 60);
    let kept = post("a", json!(-500), "best").await;
    assert_eq!(
        (kept.0.as_u16(), &kept.1["score"]),
        (200, &json!(60)),
        "{kept:?}"
    );
    assert_eq!(post("b", json!(100), "set").await.0, 200);
    // The period is full: a third member is refused; the two still update.
    let before = entries(&s, "r").await;
    assert_error(&post("c", json!(1), "set").await, 422, "board_full");
    assert_eq!(entries(&s, "r").await, before);
    assert_eq!(post("b", json!(0), "set").await.1["score"], 0);

    // A batch: only the refused entries fail, in place.
    let (status, batch) = s
        .post(
            "/v1/boards/r/scores:batch",
            json!({"entries": [
                {"member": "a", "score": 70, "op": "set"},
                {"member": "a", "score": 500, "op": "set"},
                {"member": "d", "score": 1, "op": "set"},
                {"member": "b", "score": 5, "op": "incr"},
            ]}),
        )
        .await;
    assert_eq!(status, 200, "{batch}");
    let results = batch["results"].as_array().expect("results");
    assert_eq!(results[0]["score"], 70, "{batch}");
    assert_eq!(results[1]["error"]["code"], "score_rejected", "{batch}");
    assert_eq!(results[2]["error"]["code"], "board_full", "{batch}");
    assert_eq!(results[3]["score"], 5, "{batch}");
    let now = entries(&s, "r").await;
    let scores: Vec<(&Value, &Value)> = now["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| (&e["member"], &e["score"]))
        .collect();
    assert_eq!(
        scores,
        [(&json!("a"), &json!(70)), (&json!("b"), &json!(5))]
    );

    // PATCH: raise the member cap, drop a rule with null, refuse an inverted range.
    let (status, view) = s
        .call(
            reqwest::Method::PATCH,
            "/v1/boards/r",
            Some(json!({"max_members": 3, "min_score": null})),
        )
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(
        (&view["max_members"], view.get("min_score")),
        (&json!(3), None)
    );
    assert_eq!(post("d", json!(-5), "set").await.1["score"], -5);
    let inverted = s
        .call(
            reqwest::Method::PATCH,
            "/v1/boards/r",
            Some(json!({"min_score": 200})),
        )
        .await;
    // The patch against the board's max_score: a rule between values, 422 (SPEC §3).
    assert_error(&inverted, 422, "invalid_config");
    assert_eq!(s.get("/v1/boards/r").await.1.get("min_score"), None);
    s.stop().await;
}

async fn the_board_limit_refuses_the_next_board(kind: Kind) {
    let s = Server::start_configured(kind, |o| ServeOptions {
        max_boards: Some(2),
        ..o
    })
    .await;
    assert_eq!(s.put("/v1/boards/one", json!({})).await.0, 201);
    assert_eq!(s.put("/v1/boards/two", json!({})).await.0, 201);
    assert_error(
        &s.put("/v1/boards/three", json!({})).await,
        422,
        "too_many_boards",
    );
    assert_error(&s.get("/v1/boards/three").await, 404, "board_not_found");
    // An existing board is confirmed as before; a freed slot takes a new one.
    assert_eq!(s.put("/v1/boards/two", json!({})).await.0, 200);
    assert_eq!(s.delete("/v1/boards/one").await.0, 204);
    assert_eq!(s.put("/v1/boards/three", json!({})).await.0, 201);
    s.stop().await;
}

async fn over_the_memory_budget_only_new_members_are_refused(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/m", json!({})).await;
    assert_eq!(
        s.post(
            "/v1/boards/m/scores",
            json!({"member": "first", "score": 1})
        )
        .await
        .0,
        200
    );
    // A budget of one byte, which the data (Redis: the server) is over from the start.
    let s = s
        .restart_with(|o| ServeOptions {
            max_memory: Some(1),
            ..o
        })
        .await;
    let mut refused = None;
    for i in 0..600 {
        let r = s
            .post(
                "/v1/boards/m/scores",
                json!({"member": format!("n{i}"), "score": 1}),
            )
            .await;
        if r.0 == 507 {
            refused = Some(r);
            break;
        }
        assert_eq!(r.0, 200, "{r:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = refused.expect("no 507 within 30 s of the budget being exceeded");
    assert_error(&refused, 507, "insufficient_storage");
    let before = entries(&s, "m").await;
    assert_error(
        &s.post("/v1/boards/m/scores", json!({"member": "late", "score": 1}))
            .await,
        507,
        "insufficient_storage",
    );
    assert_eq!(entries(&s, "m").await, before);
    // In a batch only the entry adding a member is refused.
    let (status, batch) = s
        .post(
            "/v1/boards/m/scores:batch",
            json!({"entries": [{"member": "first", "score": 1}, {"member": "newcomer", "score": 1}]}),
        )
        .await;
    assert_eq!(status, 200, "{batch}");
    assert_eq!(batch["results"][0]["score"], 2, "{batch}");
    assert_eq!(
        batch["results"][1]["error"]["code"], "insufficient_storage",
        "{batch}"
    );
    // Existing members update; reads go on; the gauges show why.
    let (status, updated) = s
        .post(
            "/v1/boards/m/scores",
            json!({"member": "first", "score": 5}),
        )
        .await;
    assert_eq!((status.as_u16(), &updated["score"]), (200, &json!(7)));
    assert_eq!(s.get("/v1/boards/m/entries").await.0, 200);
    let metrics = s.get("/metrics").await;
    let text = metrics.1.as_str().map(str::to_owned).unwrap_or_default();
    assert!(
        text.contains("photofinish_memory_limit_bytes 1")
            && text.contains("photofinish_refusals_total{reason=\"insufficient_storage\"}"),
        "{text}"
    );
    s.stop().await;
}

conformance!(
    score_rules_refuse_and_change_nothing,
    the_board_limit_refuses_the_next_board,
    over_the_memory_budget_only_new_members_are_refused,
);
