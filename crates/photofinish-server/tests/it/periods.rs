//! Periodic boards over HTTP: writes 1 µs either side of each boundary land in the right
//! period; `previous` and ids resolve; retention purges survive a restart.

use serde_json::{json, Value};

use crate::support::*;

/// `at` minus one microsecond, as RFC 3339.
fn just_before(at: &str) -> String {
    let ts: jiff::Timestamp = at.parse().expect("timestamp");
    format!("{:.6}", ts - jiff::SignedDuration::from_micros(1))
}

async fn period_of(s: &Server, board: &str, at: &str) -> String {
    let (st, w) = s
        .post(
            &format!("/v1/boards/{board}/scores"),
            json!({"member": "m", "score": 1, "at": at}),
        )
        .await;
    assert_eq!(st, 200, "{board} at {at}: {w}");
    w["period"].as_str().expect("period").to_owned()
}

/// 2026-11-22T12:00:00Z: the clock of the boundary test, so its fixed 2026 dates stay
/// within retention whenever the test runs.
const NOW_2026_11_22: i64 = 1_795_348_800_000_000;

async fn writes_either_side_of_each_boundary_land_in_the_right_period(kind: Kind) {
    let s = Server::start_at(kind, NOW_2026_11_22).await;
    // (config, boundary instant in UTC, period before, period from the boundary on)
    let cases: Vec<(Value, &str, &str, &str)> = vec![
        (
            json!({"reset": "daily", "timezone": "Asia/Shanghai"}),
            "2026-11-21T16:00:00Z",
            "2026-11-21",
            "2026-11-22",
        ),
        (
            json!({"reset": "daily", "timezone": "Europe/Berlin"}),
            "2026-03-29T22:00:00Z",
            "2026-03-29",
            "2026-03-30",
        ),
        (
            json!({"reset": "daily", "timezone": "Europe/Berlin"}),
            "2026-10-25T23:00:00Z",
            "2026-10-25",
            "2026-10-26",
        ),
        (
            json!({"reset": "daily", "timezone": "America/New_York"}),
            "2026-03-09T04:00:00Z",
            "2026-03-08",
            "2026-03-09",
        ),
        (
            json!({"reset": "daily", "timezone": "America/New_York"}),
            "2026-11-02T05:00:00Z",
            "2026-11-01",
            "2026-11-02",
        ),
        (
            json!({"reset": "weekly", "timezone": "Europe/Berlin"}),
            "2026-03-29T22:00:00Z",
            "2026-W13",
            "2026-W14",
        ),
        (
            json!({"reset": "weekly", "timezone": "America/New_York"}),
            "2026-11-02T05:00:00Z",
            "2026-W44",
            "2026-W45",
        ),
        (
            json!({"reset": "weekly"}),
            "2026-12-28T00:00:00Z",
            "2026-W52",
            "2026-W53",
        ),
        (
            json!({"reset": "weekly"}),
            "2027-01-04T00:00:00Z",
            "2026-W53",
            "2027-W01",
        ),
        (
            json!({"reset": "weekly", "week_start": "sunday"}),
            "2026-11-22T00:00:00Z",
            "2026-11-15~w",
            "2026-11-22~w",
        ),
        (
            json!({"reset": "weekly", "week_start": "sunday", "timezone": "Asia/Shanghai"}),
            "2026-11-21T16:00:00Z",
            "2026-11-15~w",
            "2026-11-22~w",
        ),
        (
            json!({"reset": "monthly"}),
            "2028-03-01T00:00:00Z",
            "2028-02",
            "2028-03",
        ),
        (
            json!({"reset": "monthly", "timezone": "Asia/Shanghai"}),
            "2026-11-30T16:00:00Z",
            "2026-11",
            "2026-12",
        ),
        (
            json!({"reset": "daily"}),
            "2028-03-01T00:00:00Z",
            "2028-02-29",
            "2028-03-01",
        ),
        (
            json!({"reset": "monthly", "timezone": "America/New_York"}),
            "2026-11-01T04:00:00Z",
            "2026-10",
            "2026-11",
        ),
    ];
    for (i, (mut config, boundary, before, after)) in cases.into_iter().enumerate() {
        let board = format!("p{i}");
        // Readers see `retention` periods back from the current one: keep all of 2026.
        config["retention"] = json!(1000);
        assert_eq!(
            s.put(&format!("/v1/boards/{board}"), config.clone())
                .await
                .0,
            201
        );
        assert_eq!(
            period_of(&s, &board, &just_before(boundary)).await,
            before,
            "{config} before {boundary}"
        );
        assert_eq!(
            period_of(&s, &board, boundary).await,
            after,
            "{config} at {boundary}"
        );
        // Both periods hold their write, and each reads back by id.
        let (_, periods) = s.get(&format!("/v1/boards/{board}/periods")).await;
        let ids: Vec<&str> = periods["periods"]
            .as_array()
            .expect("periods")
            .iter()
            .filter_map(|p| p["id"].as_str())
            .collect();
        assert_eq!(ids, [after, before], "{config}");
        for id in [before, after] {
            let (st, m) = s
                .get(&format!("/v1/boards/{board}/members/m?period={id}"))
                .await;
            assert_eq!(
                (st.as_u16(), m["score"].as_i64()),
                (200, Some(1)),
                "{config} {id}"
            );
        }
    }
    s.stop().await;
}

async fn retention_purges_old_periods_and_the_purge_survives_restart(kind: Kind) {
    let s = Server::start(kind).await;
    // Far-future days: the newest period written decides what is kept.
    s.put("/v1/boards/d", json!({"reset": "daily", "retention": 2}))
        .await;
    for day in ["2099-11-01", "2099-11-02", "2099-11-03"] {
        s.post(
            "/v1/boards/d/scores",
            json!({"member": "m", "score": 5, "at": format!("{day}T12:00:00Z")}),
        )
        .await;
    }
    assert_eq!(
        ids(&s.get("/v1/boards/d/periods").await.1),
        ["2099-11-03", "2099-11-02"]
    );
    assert_error(
        &s.get("/v1/boards/d/entries?period=2099-11-01").await,
        404,
        "period_not_found",
    );
    assert_error(
        &s.post(
            "/v1/boards/d/scores",
            json!({"member": "m", "score": 1, "at": "2099-11-01T12:00:00Z"}),
        )
        .await,
        422,
        "period_not_retained",
    );
    let s = s.restart().await;
    assert_eq!(
        ids(&s.get("/v1/boards/d/periods").await.1),
        ["2099-11-03", "2099-11-02"]
    );
    assert_error(
        &s.get("/v1/boards/d/members/m?period=2099-11-01").await,
        404,
        "period_not_found",
    );
    s.stop().await;
}

/// Retention also counts back from today's period, written to or not: with retention 2 a
/// daily board shows yesterday but not the day before, and refuses writes there.
async fn retention_counts_back_from_the_current_period(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/c", json!({"reset": "daily", "retention": 2}))
        .await;
    let now = jiff::Timestamp::now();
    let days_ago = |d: i64| (now - jiff::SignedDuration::from_hours(24 * d)).to_string();
    let (st, w) = s
        .post(
            "/v1/boards/c/scores",
            json!({"member": "m", "score": 5, "at": days_ago(1)}),
        )
        .await;
    assert_eq!(st, 200, "{w}");
    let yesterday = w["period"].as_str().expect("period").to_owned();
    assert_eq!(
        s.get("/v1/boards/c/entries?period=previous").await.1["total"],
        1
    );
    assert_eq!(ids(&s.get("/v1/boards/c/periods").await.1), [yesterday]);
    assert_error(
        &s.post(
            "/v1/boards/c/scores",
            json!({"member": "m", "score": 5, "at": days_ago(2)}),
        )
        .await,
        422,
        "period_not_retained",
    );
    s.stop().await;
}

/// The server's clock decides the current period and stamps `reached_at` on every backend
/// (which is what lets the boundary test pin its "now").
async fn the_current_period_follows_the_server_clock(kind: Kind) {
    // 2030-06-15T12:00:00Z
    let s = Server::start_at(kind, 1_907_755_200_000_000).await;
    s.put("/v1/boards/t", json!({"reset": "daily"})).await;
    assert_eq!(s.get("/v1/boards/t").await.1["period"], "2030-06-15");
    let (_, w) = s
        .post("/v1/boards/t/scores", json!({"member": "m", "score": 1}))
        .await;
    // The clock stands still; the create before it, an audited record, was stamped with
    // its instant, and stamped instants strictly increase in log order (docs/format.md).
    assert_eq!(
        (w["period"].as_str(), w["reached_at"].as_str()),
        (Some("2030-06-15"), Some("2030-06-15T12:00:00.000001Z"))
    );
    s.stop().await;
}

fn ids(v: &Value) -> Vec<String> {
    v["periods"]
        .as_array()
        .expect("periods")
        .iter()
        .filter_map(|p| p["id"].as_str().map(str::to_owned))
        .collect()
}

/// Raising `retention` with PATCH takes effect for the periods already written: a write
/// into a period that was outside the old window and is inside the new one goes through,
/// and reads see it, and yesterday's still.
async fn raising_retention_reaches_the_periods_already_written(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/d", json!({"reset": "daily", "retention": 2}))
        .await;
    let days_ago =
        |n: i64| (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(24 * n)).to_string();
    let (st, w) = s
        .post(
            "/v1/boards/d/scores",
            json!({"member": "a", "score": 1, "at": days_ago(1)}),
        )
        .await;
    assert_eq!(st, 200, "{w}");
    let yesterday = w["period"].as_str().expect("period").to_owned();
    s.post("/v1/boards/d/scores", json!({"member": "a", "score": 1}))
        .await;
    let old = json!({"member": "b", "score": 1, "at": days_ago(3)});
    assert_error(
        &s.post("/v1/boards/d/scores", old.clone()).await,
        422,
        "period_not_retained",
    );
    let (st, b) = s
        .call(
            reqwest::Method::PATCH,
            "/v1/boards/d",
            Some(json!({"retention": 5})),
        )
        .await;
    assert_eq!((st.as_u16(), &b["retention"]), (200, &json!(5)));
    let (st, w) = s.post("/v1/boards/d/scores", old).await;
    assert_eq!(st, 200, "{w}");
    let three_days_ago = w["period"].as_str().expect("period").to_owned();
    let (st, e) = s
        .get(&format!("/v1/boards/d/entries?period={three_days_ago}"))
        .await;
    assert_eq!((st.as_u16(), &e["total"]), (200, &json!(1)), "{e}");
    let (st, e) = s
        .get(&format!("/v1/boards/d/entries?period={yesterday}"))
        .await;
    assert_eq!((st.as_u16(), &e["total"]), (200, &json!(1)), "{e}");
    s.stop().await;
}

conformance!(
    raising_retention_reaches_the_periods_already_written,
    the_current_period_follows_the_server_clock,
    retention_counts_back_from_the_current_period,
    retention_purges_old_periods_and_the_purge_survives_restart,
    writes_either_side_of_each_boundary_land_in_the_right_period,
);
