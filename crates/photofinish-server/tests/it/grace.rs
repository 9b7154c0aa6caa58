//! Late results (docs/SPEC.md §10, "Grace"), on every backend, with the server's clock
//! moved by the test: a write naming a period that ended less than the board's `grace`
//! ago lands in it with `reached_at` = now; at the edge and after, 422 `period_closed`; a
//! period not started or not one of the board's, 422 `invalid_period`; a malformed id,
//! 400; `period` with `at`,
//! 400; `current` and `previous` name the periods a read would. Over HTTP and RESP, keyed and not, and every refusal changes nothing.

use std::sync::Arc;

use photofinish_core::clock::ManualClock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::idempotency::keyed;
use crate::support::*;

/// 2026-11-23T00:00:00Z, µs: the end of period 2026-11-22 of a daily UTC board.
const MIDNIGHT_US: i64 = 1_795_392_000_000_000;
const S: i64 = 1_000_000;

async fn entries(s: &Server, period: &str) -> Value {
    s.get(&format!("/v1/boards/d/entries?period={period}"))
        .await
        .1
}

async fn late_results_land_within_grace(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = Server::start_manual(kind, clock.clone()).await;
    let mut c = resp(&s).await;
    let (st, b) = s
        .put(
            "/v1/boards/d",
            json!({"reset": "daily", "grace": 30, "update": "set"}),
        )
        .await;
    assert_eq!((st.as_u16(), &b["grace"]), (201, &json!(30)), "{b}");
    let (st, _) = s
        .post("/v1/boards/d/scores", json!({"member": "ann", "score": 5}))
        .await;
    assert_eq!(st, 200);
    // Naming the current period is always allowed.
    let (st, w) = s
        .post(
            "/v1/boards/d/scores",
            json!({"member": "cy", "score": 1, "period": "2026-11-22"}),
        )
        .await;
    assert_eq!(
        (st.as_u16(), &w["period"]),
        (200, &json!("2026-11-22")),
        "{w}"
    );

    // 5 s after midnight: the day before still takes a late result, stamped now.
    clock.set(MIDNIGHT_US + 5 * S);
    let (st, w) = s
        .post(
            "/v1/boards/d/scores",
            json!({"member": "bob", "score": 9, "period": "2026-11-22"}),
        )
        .await;
    assert_eq!(st, 200, "{w}");
    assert_eq!(w["period"], "2026-11-22");
    assert_eq!(w["rank"], 1);
    assert_eq!(micros(&w["reached_at"]), MIDNIGHT_US + 5 * S);
    // Over RESP, and under an idempotency key (applied once).
    let got = lb(&mut c, &["LB.SET", "d", "dee", "7", "PERIOD", "2026-11-22"]).await;
    assert_eq!(got, json!(7));
    let body = json!({"member": "eve", "score": 3, "period": "2026-11-22"});
    for _ in 0..2 {
        let path = "/v1/boards/d/scores";
        let (st, _, w) = keyed(&s, "late-eve", Method::POST, path, Some(body.clone())).await;
        assert_eq!((st, &w["period"]), (200, &json!("2026-11-22")), "{w}");
    }
    // `previous` names the day before, as a read takes it.
    let (st, w) = s
        .post(
            "/v1/boards/d/scores",
            json!({"member": "fay", "score": 2, "period": "previous"}),
        )
        .await;
    assert_eq!(
        (st.as_u16(), &w["period"]),
        (200, &json!("2026-11-22")),
        "{w}"
    );
    let day = entries(&s, "2026-11-22").await;
    let names = member_names(&day);
    assert_eq!(names, ["bob", "dee", "ann", "eve", "fay", "cy"]);
    assert_eq!(entries(&s, "current").await["total"], 0);

    // The edges: 30 s after the end is too late, a day not started is refused, another
    // board's id is 422, a malformed id and `period` with `at` are 400; none of them
    // changes anything.
    clock.set(MIDNIGHT_US + 30 * S - 1);
    let (st, _) = s
        .post(
            "/v1/boards/d/scores",
            json!({"member": "ann", "score": 6, "period": "2026-11-22"}),
        )
        .await;
    assert_eq!(st, 200, "the last µs of grace");
    clock.set(MIDNIGHT_US + 30 * S);
    let before = (
        entries(&s, "2026-11-22").await,
        entries(&s, "current").await,
    );
    for (body, status, code) in [
        (
            json!({"member": "ann", "score": 8, "period": "2026-11-22"}),
            422,
            "period_closed",
        ),
        (
            json!({"member": "ann", "score": 8, "period": "2026-11-21"}),
            422,
            "period_closed",
        ),
        (
            json!({"member": "ann", "score": 8, "period": "2026-11-24"}),
            422,
            "invalid_period",
        ),
        // Ids of the document's pattern that are not this board's periods: rules, 422;
        // an id of no pattern is malformed, 400 (docs/SPEC.md §3).
        (
            json!({"member": "ann", "score": 8, "period": "2026-13-40"}),
            422,
            "invalid_period",
        ),
        (
            json!({"member": "ann", "score": 8, "period": "all"}),
            422,
            "invalid_period",
        ),
        (
            json!({"member": "ann", "score": 8, "period": "last-week"}),
            400,
            "invalid_period",
        ),
        (
            json!({"member": "ann", "score": 8, "period": "2026-11-23", "at": "2026-11-23T00:00:00Z"}),
            400,
            "invalid_parameter",
        ),
    ] {
        assert_error(&s.post("/v1/boards/d/scores", body).await, status, code);
    }
    let batch = json!({"entries": [
        {"member": "ann", "score": 8, "period": "2026-11-22"},
        {"member": "zed", "score": 2, "period": "2026-11-23"},
    ]});
    let (st, got) = s.post("/v1/boards/d/scores:batch", batch).await;
    assert_eq!(st, 200);
    assert_eq!(got["results"][0]["error"]["code"], "period_closed");
    assert_eq!(got["results"][1]["period"], "2026-11-23");
    let got = lb(
        &mut c,
        &["LB.INCR", "d", "ann", "1", "PERIOD", "2026-11-22"],
    )
    .await;
    assert_eq!(got, json!({"error": "period_closed"}));
    assert_eq!(
        (entries(&s, "2026-11-22").await, &before.1["total"]),
        (before.0.clone(), &json!(0))
    );

    // Grace 0 (the default, also by PATCH): a closed period takes nothing.
    let (st, b) = s
        .call(Method::PATCH, "/v1/boards/d", Some(json!({"grace": 0})))
        .await;
    assert_eq!((st.as_u16(), &b["grace"]), (200, &json!(0)));
    clock.set(MIDNIGHT_US + 24 * 3600 * S + 1);
    assert_error(
        &s.post(
            "/v1/boards/d/scores",
            json!({"member": "ann", "score": 1, "period": "2026-11-23"}),
        )
        .await,
        422,
        "period_closed",
    );
    // `current` is the day now, in a write and in a batch; `previous` is closed.
    let (st, w) = s
        .post(
            "/v1/boards/d/scores",
            json!({"member": "gus", "score": 4, "period": "current"}),
        )
        .await;
    assert_eq!(
        (st.as_u16(), &w["period"]),
        (200, &json!("2026-11-24")),
        "{w}"
    );
    let (st, got) = s
        .post(
            "/v1/boards/d/scores:batch",
            json!({"entries": [
                {"member": "gus", "score": 5, "period": "current"},
                {"member": "gus", "score": 6, "period": "previous"},
            ]}),
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(got["results"][0]["period"], "2026-11-24", "{got}");
    assert_eq!(got["results"][1]["error"]["code"], "period_closed", "{got}");
    // A board that never resets knows only `all` (which `current` names).
    s.put("/v1/boards/n", json!({})).await;
    let (st, _) = s
        .post(
            "/v1/boards/n/scores",
            json!({"member": "ann", "score": 1, "period": "all"}),
        )
        .await;
    assert_eq!(st, 200);
    let (st, w) = s
        .post(
            "/v1/boards/n/scores",
            json!({"member": "ann", "score": 1, "period": "current"}),
        )
        .await;
    assert_eq!((st.as_u16(), &w["period"]), (200, &json!("all")), "{w}");
    assert_error(
        &s.post(
            "/v1/boards/n/scores",
            json!({"member": "ann", "score": 1, "period": "2026-11-22"}),
        )
        .await,
        422,
        "invalid_period",
    );
    // Bad settings.
    for bad in [json!({"grace": 86_401}), json!({"grace": -1})] {
        let got = s.put("/v1/boards/bad", bad).await;
        assert_eq!(got.0, 400, "{got:?}");
    }
    // The late results survive a restart (the log replays the period each write named).
    let day = entries(&s, "2026-11-22").await;
    let s = s.restart().await;
    assert_eq!(entries(&s, "2026-11-22").await, day);
    s.stop().await;
}

conformance!(late_results_land_within_grace);
