//! Leagues (docs/SPEC.md §14) end to end, on every backend and through both doors: tiers
//! carry across periods; when a period closes (after its grace) each cohort's top moves
//! up and its bottom down, clamped at the ends; a member arriving while the previous
//! period has not closed waits for its cohort (409 `cohort_pending`) and takes it once
//! the close ends, in its new tier; the moves and a member's tier read over HTTP and
//! `LB.TIER`; it all survives a restart; two nodes sharing a Redis close a period once;
//! bad leagues and league reads of other boards are refused and change nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use photofinish_core::clock::ManualClock;
use serde_json::{json, Value};

use crate::support::*;

/// 2026-11-23T01:00:00Z, µs: inside period 2026-11-23 of a daily UTC board.
const DAY1_US: i64 = 1_795_395_600_000_000;
const DAY: i64 = 86_400_000_000;
const S: i64 = 1_000_000;
/// The board's grace, seconds.
const GRACE: i64 = 60;

fn league_config() -> Value {
    json!({"reset": "daily", "update": "set", "cohort_size": 3, "grace": GRACE,
        "league": {"tiers": ["bronze", "silver", "gold"], "promote": 1, "demote": 1}})
}

async fn write(s: &Server, member: &str, score: i64) {
    let (st, b) = s
        .post(
            "/v1/boards/l/scores",
            json!({"member": member, "score": score}),
        )
        .await;
    assert_eq!(st, 200, "{member}: {b}");
}

/// The moves of `period`, once its close is done (waited for: the closer runs each
/// second), as (member, from, to, cohort, rank).
async fn moves_when_closed(s: &Server, period: &str) -> Vec<(String, String, String, u64, u64)> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (st, m) = s
            .get(&format!("/v1/boards/l/periods/{period}/moves?limit=100"))
            .await;
        assert_eq!(st, 200, "{m}");
        if m["closed"] == json!(true) {
            assert_eq!(m["period"], json!(period));
            return m["moves"]
                .as_array()
                .expect("moves")
                .iter()
                .map(|v| {
                    (
                        v["member"].as_str().expect("member").to_owned(),
                        v["from"].as_str().expect("from").to_owned(),
                        v["to"].as_str().expect("to").to_owned(),
                        v["cohort"].as_u64().expect("cohort"),
                        v["rank"].as_u64().expect("rank"),
                    )
                })
                .collect();
        }
        assert!(
            Instant::now() < deadline,
            "period {period} never closed: {m}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn mv(m: &str, from: &str, to: &str, cohort: u64, rank: u64) -> (String, String, String, u64, u64) {
    (m.into(), from.into(), to.into(), cohort, rank)
}

async fn tier(s: &Server, member: &str) -> String {
    let (st, t) = s.get(&format!("/v1/boards/l/members/{member}/tier")).await;
    assert_eq!((st.as_u16(), &t["member"]), (200, &json!(member)), "{t}");
    t["tier"].as_str().expect("tier").to_owned()
}

async fn tiers(s: &Server) -> Vec<String> {
    let mut out = Vec::new();
    for m in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        out.push(tier(s, m).await);
    }
    out
}

async fn a_league_promotes_and_relegates_at_each_close(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, b) = s.put("/v1/boards/l", league_config()).await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(
        b["league"],
        json!({"tiers": ["bronze", "silver", "gold"], "promote": 1, "demote": 1})
    );
    // Day 1: everyone starts in bronze. Cohorts a b c | d e f | g.
    for (m, score) in [
        ("a", 10),
        ("b", 30),
        ("c", 20),
        ("d", 5),
        ("e", 50),
        ("f", 40),
        ("g", 1),
    ] {
        write(&s, m, score).await;
    }
    // z joins and never plays: it sits in cohort 3 beside g, is not ranked there, and
    // keeps its tier at the close.
    let (st, j) = s.post("/v1/boards/l/members/z/join", json!({})).await;
    assert_eq!(st, 201, "{j}");
    let (st, a) = s.get("/v1/boards/l/members/a").await;
    assert_eq!(st, 200, "{a}");
    assert_eq!(
        (&a["tier"], &a["cohort"], &a["cohort_rank"]),
        (&json!("bronze"), &json!(1), &json!(3))
    );
    let (_, across) = s.get("/v1/members/a").await;
    let on_l = &across["boards"][0];
    assert_eq!(
        (
            &on_l["board"],
            &on_l["tier"],
            &on_l["cohort"],
            &on_l["cohort_rank"]
        ),
        (&json!("l"), &json!("bronze"), &json!(1), &json!(3)),
        "{across}"
    );
    let (_, list) = s.get("/v1/boards/l/cohorts?tier=bronze").await;
    assert_eq!(list["total"], json!(3), "{list}");
    assert_eq!(list["cohorts"][0]["tier"], json!("bronze"));
    let (_, none) = s.get("/v1/boards/l/cohorts?tier=gold").await;
    assert_eq!(none["total"], json!(0), "{none}");
    // Before the period ends: not closed, nobody moved.
    let (_, m) = s.get("/v1/boards/l/periods/current/moves").await;
    assert_eq!(
        (&m["closed"], &m["total"]),
        (&json!(false), &json!(0)),
        "{m}"
    );

    // Day 2, inside day 1's grace: new arrivals wait for their cohort.
    clock.set(DAY1_US + DAY + 10 * S);
    write(&s, "a", 100).await;
    write(&s, "h", 1).await;
    assert_error(
        &s.get("/v1/boards/l/members/a/cohort").await,
        409,
        "cohort_pending",
    );
    let (st, a) = s.get("/v1/boards/l/members/a").await;
    assert_eq!(st, 200, "{a}");
    assert!(a.get("cohort").is_none(), "a waits: {a}");
    let (_, m) = s.get("/v1/boards/l/periods/2026-11-23/moves").await;
    assert_eq!(m["closed"], json!(false), "{m}");
    assert_eq!(tier(&s, "b").await, "bronze");

    // Grace over: day 1 closes. Each cohort's first goes up; bronze relegates nobody.
    clock.set(DAY1_US + DAY + (GRACE + 1) * S);
    assert_eq!(
        moves_when_closed(&s, "2026-11-23").await,
        [
            mv("b", "bronze", "silver", 1, 1),
            mv("e", "bronze", "silver", 2, 1),
            mv("g", "bronze", "silver", 3, 1),
        ]
    );
    assert_eq!(tier(&s, "z").await, "bronze", "z did not play");
    // The waiting members took their cohorts, in arrival order, in their tiers.
    let (st, c) = s.get("/v1/boards/l/members/a/cohort").await;
    assert_eq!(st, 200, "{c}");
    assert_eq!((&c["tier"], &c["cohort"]), (&json!("bronze"), &json!(1)));
    // Later arrivals go by the new tiers: b e g in silver, c with a and h in bronze.
    for (m, score) in [("b", 7), ("e", 8), ("g", 9), ("c", 3)] {
        write(&s, m, score).await;
    }
    let (_, c) = s.get("/v1/boards/l/members/g/cohort").await;
    assert_eq!(
        (&c["tier"], &c["total"]),
        (&json!("silver"), &json!(3)),
        "{c}"
    );
    let (_, c) = s.get("/v1/boards/l/cohorts/1/entries?tier=silver").await;
    assert_eq!(c["entries"][0]["member"], json!("g"), "{c}");

    // Day 2 closes: silver's first to gold, its last to bronze; bronze's first to silver.
    clock.set(DAY1_US + 2 * DAY + (GRACE + 1) * S);
    assert_eq!(
        moves_when_closed(&s, "2026-11-24").await,
        [
            mv("a", "bronze", "silver", 1, 1),
            mv("g", "silver", "gold", 1, 1),
            mv("b", "silver", "bronze", 1, 3),
        ]
    );
    let want = [
        "silver", "bronze", "bronze", "bronze", "silver", "bronze", "gold", "bronze",
    ];
    assert_eq!(tiers(&s).await, want);
    // Paged moves.
    let (_, page) = s
        .get("/v1/boards/l/periods/2026-11-24/moves?offset=1&limit=1")
        .await;
    assert_eq!(
        (&page["total"], &page["moves"][0]["member"]),
        (&json!(3), &json!("g")),
        "{page}"
    );
    // RESP reads the same tiers.
    let mut c = resp(&s).await;
    assert_eq!(lb(&mut c, &["LB.TIER", "l", "g"]).await, json!("gold"));
    assert_eq!(
        lb(&mut c, &["LB.TIER", "l", "nobody"]).await,
        json!("bronze")
    );

    // A restart keeps the tiers and the moves, and closes nothing twice.
    let s = s.restart().await;
    assert_eq!(tiers(&s).await, want);
    assert_eq!(moves_when_closed(&s, "2026-11-24").await.len(), 3);
    assert_eq!(moves_when_closed(&s, "2026-11-23").await.len(), 3);
}

/// Two nodes on one Redis, both running the closer over a period of many cohorts: every
/// cohort is closed once (no move twice, every tier moved once).
async fn two_nodes_close_a_period_once(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, b) = s.put("/v1/boards/l", league_config()).await;
    assert_eq!(st, 201, "{b}");
    let other = s.sibling().await;
    // 90 members: 30 cohorts of 3 in bronze; in each the first (highest score) goes up.
    let members: Vec<String> = (0..90).map(|i| format!("p{i:02}")).collect();
    for (i, m) in members.iter().enumerate() {
        write(&s, m, i as i64).await;
    }
    clock.set(DAY1_US + DAY + (GRACE + 1) * S);
    let moves = moves_when_closed(&s, "2026-11-23").await;
    let want: Vec<_> = (0..30u64)
        .map(|k| {
            let m = format!("p{:02}", 3 * k + 2);
            mv(&m, "bronze", "silver", k + 1, 1)
        })
        .collect();
    assert_eq!(moves, want);
    let (_, seen) = other
        .get("/v1/boards/l/periods/2026-11-23/moves?limit=100")
        .await;
    assert_eq!(seen["total"], json!(30), "{seen}");
    for m in ["p02", "p05", "p89"] {
        assert_eq!(tier(&other, m).await, "silver", "{m}");
    }
    assert_eq!(tier(&other, "p00").await, "bronze");
    other.stop().await;
}

async fn bad_leagues_and_league_reads_elsewhere_change_nothing(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    // A league's own fields against what the document states are 400; against the rest
    // of the board's config (cohorts, a reset, promote + demote), rules: 422.
    for (bad, status) in [
        (
            json!({"reset": "daily", "league": {"tiers": ["a", "b"], "promote": 1, "demote": 1}}),
            422,
        ),
        (
            json!({"reset": "never", "cohort_size": 3,
            "league": {"tiers": ["a", "b"], "promote": 1, "demote": 1}}),
            422,
        ),
        (
            json!({"reset": "daily", "cohort_size": 3,
            "league": {"tiers": ["a", "b"], "promote": 2, "demote": 2}}),
            422,
        ),
        (
            json!({"reset": "daily", "cohort_size": 3,
            "league": {"tiers": ["a"], "promote": 1, "demote": 1}}),
            400,
        ),
        (
            json!({"reset": "daily", "cohort_size": 3,
            "league": {"tiers": ["a", "a"], "promote": 1, "demote": 1}}),
            400,
        ),
        (
            json!({"reset": "daily", "cohort_size": 3,
            "league": {"tiers": ["a", "Big"], "promote": 1, "demote": 1}}),
            400,
        ),
    ] {
        assert_error(
            &s.put("/v1/boards/x", bad.clone()).await,
            status,
            "invalid_config",
        );
        assert_error(&s.get("/v1/boards/x").await, 404, "board_not_found");
    }
    let mut c = resp(&s).await;
    assert_eq!(
        lb(
            &mut c,
            &["LB.CREATE", "x", "RESET", "daily", "PROMOTE", "1"]
        )
        .await,
        json!({"error": "invalid_config"})
    );
    assert_error(&s.get("/v1/boards/x").await, 404, "board_not_found");
    // A board made over RESP with a league reads like one made over HTTP.
    assert_eq!(
        lb(
            &mut c,
            &[
                "LB.CREATE",
                "r",
                "RESET",
                "weekly",
                "COHORTSIZE",
                "10",
                "TIERS",
                "low,high",
                "PROMOTE",
                "2",
                "DEMOTE",
                "3",
            ]
        )
        .await,
        json!("OK")
    );
    let (_, r) = s.get("/v1/boards/r").await;
    assert_eq!(
        r["league"],
        json!({"tiers": ["low", "high"], "promote": 2, "demote": 3}),
        "{r}"
    );
    assert_eq!(lb(&mut c, &["LB.TIER", "r", "m"]).await, json!("low"));
    // League reads of a board without a league.
    let (st, _) = s
        .put(
            "/v1/boards/plain",
            json!({"reset": "daily", "cohort_size": 3}),
        )
        .await;
    assert_eq!(st, 201);
    write_to(&s, "plain", "m").await;
    assert_error(
        &s.get("/v1/boards/plain/members/m/tier").await,
        422,
        "invalid_parameter",
    );
    assert_error(
        &s.get("/v1/boards/plain/periods/current/moves").await,
        422,
        "invalid_parameter",
    );
    assert_eq!(
        lb(&mut c, &["LB.TIER", "plain", "m"]).await,
        json!({"error": "invalid_parameter"})
    );
    let (_, m) = s.get("/v1/boards/plain/members/m").await;
    assert_eq!((&m["tier"], &m["cohort"]), (&Value::Null, &json!(1)), "{m}");
    // A league is fixed for the board's life.
    let (st, p) = s
        .call(
            reqwest::Method::PATCH,
            "/v1/boards/r",
            Some(json!({"league": {"tiers": ["a", "b"], "promote": 0, "demote": 0}})),
        )
        .await;
    assert_eq!(st.as_u16() / 100, 4, "{p}");
    let (_, r2) = s.get("/v1/boards/r").await;
    assert_eq!(r2["league"], r["league"]);
}

async fn write_to(s: &Server, board: &str, member: &str) {
    let (st, b) = s
        .post(
            &format!("/v1/boards/{board}/scores"),
            json!({"member": member, "score": 1}),
        )
        .await;
    assert_eq!(st, 200, "{b}");
}

conformance!(
    a_league_promotes_and_relegates_at_each_close,
    bad_leagues_and_league_reads_elsewhere_change_nothing,
);
photofinish_testkit::on_redis!(two_nodes_close_a_period_once);
