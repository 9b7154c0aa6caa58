//! Rewards (docs/SPEC.md §16) end to end, on every backend: a board's reward rows pay
//! each period once at its close (after grace), by the visible ordinal ranks — the first
//! row a rank matches, `top_percent` as an exact ceiling, hidden members paid nothing —
//! and what was granted never changes after (a later patch, hide or removal); a member's
//! grants read across boards by status; all of it survives a restart; on cohort and league boards ranks are within the cohort and rows may name a
//! tier; two nodes sharing a Redis grant a period once; bad rows are refused and change
//! nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use photofinish_core::clock::ManualClock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

/// 2026-11-23T01:00:00Z, µs: inside period 2026-11-23 of a daily UTC board.
const DAY1_US: i64 = 1_795_395_600_000_000;
const DAY: i64 = 86_400_000_000;
const S: i64 = 1_000_000;
/// The boards' grace, seconds.
const GRACE: i64 = 60;
/// When day 1's close is due, and a second past it.
const CLOSED_US: i64 = DAY1_US + DAY + (GRACE + 1) * S;

fn rows() -> Value {
    json!([
        {"from": 1, "to": 1, "reward": "gold", "amount": 3},
        {"from": 1, "to": 3, "reward": "silver"},
        {"top_percent": 70, "reward": "pin"},
    ])
}

async fn write(s: &Server, board: &str, member: &str, score: i64) {
    let (st, b) = s
        .post(
            &format!("/v1/boards/{board}/scores"),
            json!({"member": member, "score": score}),
        )
        .await;
    assert_eq!(st, 200, "{member}: {b}");
}

/// The grants of `period` once its close made them (waited for: the closer runs each
/// second).
async fn granted(s: &Server, board: &str, period: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (st, r) = s
            .get(&format!(
                "/v1/boards/{board}/periods/{period}/rewards?limit=1000"
            ))
            .await;
        assert_eq!(st, 200, "{r}");
        if r["granted"] == json!(true) {
            return r;
        }
        assert!(Instant::now() < deadline, "{period} never granted: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// (member, rank, reward, amount) of each grant, in order.
fn paid(r: &Value) -> Vec<(String, u64, String, u64)> {
    r["grants"]
        .as_array()
        .expect("grants")
        .iter()
        .map(|g| {
            (
                g["member"].as_str().expect("member").to_owned(),
                g["rank"].as_u64().expect("rank"),
                g["reward"].as_str().expect("reward").to_owned(),
                g["amount"].as_u64().expect("amount"),
            )
        })
        .collect()
}

fn pay(m: &str, rank: u64, reward: &str, amount: u64) -> (String, u64, String, u64) {
    (m.into(), rank, reward.into(), amount)
}

async fn a_close_grants_once(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, b) = s
        .put(
            "/v1/boards/r",
            json!({"reset": "daily", "grace": GRACE, "rewards": rows(), "reward_ttl": 3600}),
        )
        .await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(
        (&b["rewards"][0], &b["rewards"][2], &b["reward_ttl"]),
        (
            &json!({"from": 1, "to": 1, "reward": "gold", "amount": 3}),
            &json!({"top_percent": 70.0, "reward": "pin", "amount": 1}),
            &json!(3600)
        ),
        "{b}"
    );
    // g reaches 30 after b: b ranks higher. f is hidden before the close: paid nothing,
    // and counted nowhere.
    for (m, score) in [
        ("a", 10),
        ("b", 30),
        ("c", 20),
        ("d", 5),
        ("e", 50),
        ("f", 40),
        ("g", 30),
    ] {
        write(&s, "r", m, score).await;
    }
    let (st, h) = s.post("/v1/boards/r/members/f/hide", json!({})).await;
    assert_eq!(st, 204, "{h}");
    // Before the close: nothing granted.
    let (st, r) = s.get("/v1/boards/r/periods/current/rewards").await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(
        (&r["granted"], &r["total"], &r["grants"]),
        (&json!(false), &json!(0), &json!([]))
    );
    clock.set(CLOSED_US);
    let r = granted(&s, "r", "2026-11-23").await;
    // Visible: e 50, b 30, g 30, c 20, a 10, d 5 (n = 6): ⌈70% of 6⌉ = 5.
    assert_eq!(
        paid(&r),
        [
            pay("e", 1, "gold", 3),
            pay("b", 2, "silver", 1),
            pay("g", 3, "silver", 1),
            pay("c", 4, "pin", 1),
            pay("a", 5, "pin", 1),
        ]
    );
    assert_eq!((&r["total"], &r["cut"]), (&json!(5), &json!(0)));
    let first = &r["grants"][0];
    assert_eq!(first["id"], json!("r:2026-11-23:1"));
    assert_eq!(first["board"], json!("r"));
    assert_eq!(first["period"], json!("2026-11-23"));
    assert_eq!(
        (&first["claimed_at"], &first["claimed_by"]),
        (&Value::Null, &Value::Null)
    );
    let granted_at = first["granted_at"].as_str().expect("granted_at");
    let at = |t: &str| {
        t.parse::<jiff::Timestamp>()
            .expect("an instant")
            .as_microsecond()
    };
    // Granted by the close step, at its instant: after the close was due.
    assert!(at(granted_at) >= CLOSED_US - S, "{granted_at}");
    assert_eq!(
        at(first["expires_at"].as_str().expect("expires_at")),
        at(granted_at) + 3600 * S
    );
    // A page.
    let (_, page) = s
        .get("/v1/boards/r/periods/2026-11-23/rewards?offset=3&limit=1")
        .await;
    assert_eq!(paid(&page), [pay("c", 4, "pin", 1)]);
    assert_eq!(page["total"], json!(5));
    // What was granted never changes: rows patched, a winner hidden, another removed.
    let (st, p) = s
        .call(
            Method::PATCH,
            "/v1/boards/r",
            Some(json!({"rewards": [{"from": 1, "to": 6, "reward": "other"}]})),
        )
        .await;
    assert_eq!(st, 200, "{p}");
    let (st, _) = s.post("/v1/boards/r/members/e/hide", json!({})).await;
    assert_eq!(st, 204);
    let (st, _) = s.delete("/v1/boards/r/members/a?period=2026-11-23").await;
    assert_eq!(st, 204);
    let again = granted(&s, "r", "2026-11-23").await;
    assert_eq!(again["grants"], r["grants"]);

    // A member's grants, by status.
    let (st, mine) = s.get("/v1/members/b/rewards").await;
    assert_eq!(st, 200, "{mine}");
    assert_eq!((&mine["member"], &mine["total"]), (&json!("b"), &json!(1)));
    assert_eq!(mine["grants"][0], r["grants"][1]);
    let (_, none) = s.get("/v1/members/b/rewards?status=claimed").await;
    assert_eq!(none["total"], json!(0));

    // Survives a restart.
    let s = s.restart().await;
    let after = granted(&s, "r", "2026-11-23").await;
    assert_eq!(after["grants"], r["grants"]);

    // Past expires_at: listed as expired.
    clock.set(at(granted_at) + 3600 * S);
    let (_, expired) = s.get("/v1/members/c/rewards?status=expired").await;
    assert_eq!(expired["total"], json!(1), "{expired}");
    assert_eq!(expired["grants"][0]["claimed_at"], Value::Null);
}

async fn cohorts_pay_within_each_cohort_and_tiers_their_own(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, b) = s
        .put(
            "/v1/boards/l",
            json!({"reset": "daily", "update": "set", "cohort_size": 3, "grace": GRACE,
            "league": {"tiers": ["bronze", "silver"], "promote": 1, "demote": 1},
            "rewards": [
                {"from": 1, "to": 1, "reward": "crown", "tier": "silver"},
                {"from": 1, "to": 1, "reward": "cup"},
                {"top_percent": 100, "reward": "ribbon"},
            ]}),
        )
        .await;
    assert_eq!(st, 201, "{b}");
    // Day 1, all bronze: cohorts a b c | d e.
    for (m, score) in [("a", 10), ("b", 30), ("c", 20), ("d", 5), ("e", 50)] {
        write(&s, "l", m, score).await;
    }
    clock.set(CLOSED_US);
    let r = granted(&s, "l", "2026-11-23").await;
    assert_eq!(
        paid(&r),
        [
            pay("b", 1, "cup", 1),
            pay("c", 2, "ribbon", 1),
            pay("a", 3, "ribbon", 1),
            pay("e", 1, "cup", 1),
            pay("d", 2, "ribbon", 1),
        ]
    );
    // Day 2: b and e were promoted to silver, where the crown row pays.
    for (m, score) in [("b", 1), ("e", 2), ("a", 9)] {
        write(&s, "l", m, score).await;
    }
    clock.set(CLOSED_US + DAY);
    let r = granted(&s, "l", "2026-11-24").await;
    assert_eq!(
        paid(&r),
        [
            pay("a", 1, "cup", 1),
            pay("e", 1, "crown", 1),
            pay("b", 2, "ribbon", 1),
        ]
    );
    // Newest first across periods.
    let (_, e) = s.get("/v1/members/e/rewards").await;
    let rewards: Vec<&str> = e["grants"]
        .as_array()
        .expect("grants")
        .iter()
        .map(|g| g["reward"].as_str().expect("reward"))
        .collect();
    assert_eq!(rewards, ["crown", "cup"]);
}

async fn bad_rows_are_refused_and_change_nothing(kind: Kind) {
    let s = Server::start(kind).await;
    const BAD: &str = "invalid_config";
    const SHAPE: &str = "malformed_json";
    for (rows, status, code) in [
        // The document states these: 400.
        (json!([{"from": 0, "to": 1, "reward": "a"}]), 400, BAD),
        (
            json!([{"from": 1, "to": 1, "reward": "no spaces"}]),
            400,
            BAD,
        ),
        (
            json!([{"from": 1, "to": 1, "reward": "a", "amount": 0}]),
            400,
            BAD,
        ),
        (json!([{"top_percent": 0, "reward": "a"}]), 400, BAD),
        (json!([{"top_percent": 100.5, "reward": "a"}]), 400, BAD),
        (
            json!(vec![json!({"from": 1, "to": 1, "reward": "a"}); 51]),
            400,
            BAD,
        ),
        (
            json!([{"from": 1, "to": 1, "reward": "a", "extra": 1}]),
            400,
            SHAPE,
        ),
        (json!([{"from": 1, "to": 1}]), 400, SHAPE),
        // Rules it cannot state: 422.
        (json!([{"from": 3, "to": 1, "reward": "a"}]), 422, BAD),
        (json!([{"reward": "a"}]), 422, BAD),
        (
            json!([{"from": 1, "to": 2, "top_percent": 5, "reward": "a"}]),
            422,
            BAD,
        ),
        (json!([{"from": 1, "reward": "a"}]), 422, BAD),
        (json!([{"top_percent": 12.345, "reward": "a"}]), 422, BAD),
        (
            json!([{"from": 1, "to": 1, "reward": "a", "tier": "gold"}]),
            422,
            BAD,
        ),
    ] {
        let got = s
            .put("/v1/boards/bad", json!({"reset": "daily", "rewards": rows}))
            .await;
        assert_error(&got, status, code);
        let (st, _) = s.get("/v1/boards/bad").await;
        assert_eq!(st, 404, "{rows}: nothing created");
    }
    assert_error(
        &s.put(
            "/v1/boards/bad",
            json!({"reset": "daily", "reward_ttl": 0, "rewards": rows()}),
        )
        .await,
        400,
        "invalid_config",
    );
    // A patch refused leaves the rows as they were.
    let (st, _) = s
        .put(
            "/v1/boards/ok",
            json!({"reset": "daily", "rewards": rows()}),
        )
        .await;
    assert_eq!(st, 201);
    let got = s
        .call(
            Method::PATCH,
            "/v1/boards/ok",
            Some(json!({"rewards": [{"from": 2, "to": 1, "reward": "a"}]})),
        )
        .await;
    assert_error(&got, 422, "invalid_config");
    let (_, b) = s.get("/v1/boards/ok").await;
    assert_eq!(b["rewards"].as_array().map(Vec::len), Some(3), "{b}");
    // Bad reads.
    assert_error(
        &s.get("/v1/members/b/rewards?status=lost").await,
        400,
        "invalid_parameter",
    );
}

async fn two_nodes_grant_a_period_once(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, b) = s
        .put(
            "/v1/boards/r",
            json!({"reset": "daily", "grace": GRACE, "rewards": [{"top_percent": 50, "reward": "x"}]}),
        )
        .await;
    assert_eq!(st, 201, "{b}");
    let other = s.sibling().await;
    for i in 0..40 {
        write(&s, "r", &format!("p{i:02}"), i).await;
    }
    clock.set(CLOSED_US);
    let r = granted(&s, "r", "2026-11-23").await;
    let seen = granted(&other, "r", "2026-11-23").await;
    assert_eq!(r["total"], json!(20), "{r}");
    assert_eq!(seen["grants"], r["grants"]);
    other.stop().await;
}

conformance!(
    a_close_grants_once,
    cohorts_pay_within_each_cohort_and_tiers_their_own,
    bad_rows_are_refused_and_change_nothing,
);
photofinish_testkit::on_redis!(two_nodes_grant_a_period_once);
