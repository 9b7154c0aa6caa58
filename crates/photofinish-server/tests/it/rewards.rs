//! Rewards (docs/SPEC.md §16) end to end, on every backend: a board's reward rows pay
//! each period once at its close (after grace), by the visible ordinal ranks — the first
//! row a rank matches, `top_percent` as an exact ceiling, hidden members paid nothing —
//! and what was granted never changes after (a later patch, hide or removal); a member's
//! grants read across boards by status; a claim is paid once (its key answers it again,
//! a second claim is 409 `already_claimed` carrying the grant, a grant of another member
//! or an unknown one 404, one past `expires_at` 422 `reward_expired`); all of it survives
//! a restart; on cohort and league boards ranks are within the cohort and rows may name a
//! tier; two nodes sharing a Redis grant a period once; bad rows are refused and change
//! nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use photofinish_core::clock::ManualClock;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::idempotency::keyed;
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

async fn claim(s: &Server, member: &str, id: &str) -> (StatusCode, Value) {
    s.post(
        &format!("/v1/members/{member}/rewards/{id}/claim"),
        json!({}),
    )
    .await
}

async fn a_close_grants_once_and_a_claim_pays_once(kind: Kind) {
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
    let granted_at = micros(&first["granted_at"]);
    // Granted by the close step, at its instant: once the close was due.
    assert!(granted_at >= CLOSED_US, "{first}");
    assert_eq!(micros(&first["expires_at"]), granted_at + 3600 * S);
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

    // A claim, with a key: claimed by the caller (`open` on a server without
    // credentials), durable, and answered again under that key.
    let path = "/v1/members/b/rewards/r:2026-11-23:2/claim";
    let (st, replayed, got) = keyed(&s, "k1", Method::POST, path, None).await;
    assert_eq!((st, replayed), (200, false), "{got}");
    assert_eq!(got["claimed_by"], json!("open"));
    assert_eq!(got["id"], json!("r:2026-11-23:2"));
    assert!(got["claimed_at"].is_string(), "{got}");
    let (st, replayed, again) = keyed(&s, "k1", Method::POST, path, None).await;
    assert_eq!((st, replayed, &again), (200, true, &got));
    // Without the key: 409 carrying the grant as claimed.
    let refused = claim(&s, "b", "r:2026-11-23:2").await;
    assert_error(&refused, 409, "already_claimed");
    assert_eq!(refused.1["error"]["grant"], got);
    // Someone else's grant, an unknown one, one on no board: 404.
    assert_error(
        &claim(&s, "c", "r:2026-11-23:2").await,
        404,
        "reward_not_found",
    );
    assert_error(
        &claim(&s, "b", "r:2026-11-23:9").await,
        404,
        "reward_not_found",
    );
    assert_error(
        &claim(&s, "b", "r:2026-11-24:1").await,
        404,
        "reward_not_found",
    );
    assert_error(
        &claim(&s, "b", "nope:2026-11-23:1").await,
        404,
        "reward_not_found",
    );
    assert_error(&claim(&s, "b", "garbage").await, 404, "reward_not_found");
    let (_, claimed) = s.get("/v1/members/b/rewards?status=claimed").await;
    assert_eq!(claimed["grants"], json!([got]));
    let (_, unclaimed) = s.get("/v1/members/b/rewards?status=unclaimed").await;
    assert_eq!(unclaimed["total"], json!(0));

    // Survives a restart.
    let s = s.restart().await;
    let after = granted(&s, "r", "2026-11-23").await;
    assert_eq!(after["grants"][1], got);
    assert_eq!(paid(&after), paid(&r));

    // Past expires_at: refused, and listed as expired.
    clock.set(granted_at + 3600 * S);
    assert_error(
        &claim(&s, "c", "r:2026-11-23:4").await,
        422,
        "reward_expired",
    );
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
    // Paged, newest first; a board without reward_ttl lets a grant be claimed 30 days.
    let (_, page) = s.get("/v1/members/e/rewards?offset=1&limit=1").await;
    assert_eq!(
        (&page["total"], &page["grants"][0]["reward"]),
        (&json!(2), &json!("cup"))
    );
    assert_eq!(page["grants"].as_array().map(Vec::len), Some(1));
    let cup = &page["grants"][0];
    assert_eq!(
        micros(&cup["expires_at"]) - micros(&cup["granted_at"]),
        30 * DAY
    );
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
            json!([{"from": 1, "to": 1, "reward": "x".repeat(65)}]),
            400,
            BAD,
        ),
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
        (json!([{"top_percent": 5e-324, "reward": "a"}]), 422, BAD),
        (json!([{"top_percent": 0.001, "reward": "a"}]), 422, BAD),
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
    // At the edges, taken: two decimals, an id of 64 characters of every kind allowed.
    let id = format!("{}_.:-Z9", "a".repeat(58));
    let edge = json!([{"top_percent": 33.33, "reward": id}, {"top_percent": 0.01, "reward": "b"}]);
    let (st, b) = s
        .put(
            "/v1/boards/edge",
            json!({"reset": "daily", "rewards": edge}),
        )
        .await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(
        (&b["rewards"][0]["top_percent"], &b["rewards"][0]["reward"]),
        (&json!(33.33), &json!(id))
    );
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
    // One claim through one node, refused through the other.
    let (st, got) = claim(&s, "p39", "r:2026-11-23:1").await;
    assert_eq!(st, 200, "{got}");
    assert_error(
        &claim(&other, "p39", "r:2026-11-23:1").await,
        409,
        "already_claimed",
    );
    other.stop().await;
}

/// A close made in steps of three members (docs/rewards.md "Steps"), by two nodes at once
/// on Redis, pays what one step would: a board without a reset, paid by ranks at its
/// `closes_at`, and a cohort board, paid within each cohort.
async fn a_close_in_steps_of_a_few_members_pays_as_one(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual_configured(kind, clock.clone(), |o| {
        photofinish_server::serve::ServeOptions {
            close_step_members: 3,
            ..o
        }
    })
    .await;
    let cup = json!({"closes_at": "2026-11-23T02:00:00Z",
        "rewards": [{"from": 1, "to": 15, "reward": "x"}]});
    assert_eq!(s.put("/v1/boards/cup", cup).await.0, 201);
    // On a board with a reset, `closes_at` only stops writes: day 1 pays at its end.
    let stop = json!({"reset": "daily", "grace": GRACE, "closes_at": "2026-11-23T02:00:00Z",
        "rewards": [{"from": 1, "to": 1, "reward": "r"}]});
    assert_eq!(s.put("/v1/boards/stop", stop).await.0, 201);
    write(&s, "stop", "v", 1).await;
    let co = json!({"reset": "daily", "cohort_size": 4,
        "rewards": [{"from": 1, "to": 2, "reward": "y"}]});
    assert_eq!(s.put("/v1/boards/co", co).await.0, 201);
    let other = match kind {
        Kind::Embedded => None,
        _ => Some(s.sibling().await),
    };
    for i in 0..20 {
        write(&s, "cup", &format!("p{i:02}"), i).await;
        write(&s, "co", &format!("p{i:02}"), i).await;
    }
    clock.set(CLOSED_US);
    // Ranks 1 to 15: p19 down to p05.
    let want: Vec<_> = (1..=15)
        .map(|r| pay(&format!("p{:02}", 20 - r), r, "x", 1))
        .collect();
    assert_eq!(paid(&granted(&s, "cup", "all").await), want);
    // Cohort k (from 0) is p4k..p4k+3: its ranks 1 and 2 are p4k+3 and p4k+2.
    let want: Vec<_> = (0..5)
        .flat_map(|k| {
            [
                pay(&format!("p{:02}", 4 * k + 3), 1, "y", 1),
                pay(&format!("p{:02}", 4 * k + 2), 2, "y", 1),
            ]
        })
        .collect();
    let r = granted(&s, "co", "2026-11-23").await;
    assert_eq!(paid(&r), want);
    if let Some(other) = other {
        assert_eq!(granted(&other, "co", "2026-11-23").await, r);
        other.stop().await;
    }
}

/// Who may claim (docs/SPEC.md §6, §16): the player itself on a `player_writes` board
/// (`claimed_by` `player`), a write key covering the board (its name); a player claiming
/// another's grant, a read key, an anonymous caller are refused and change nothing. The
/// RESP door reads and claims alike.
async fn players_claim_their_own_and_the_doors_agree(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let c = crate::access::Creds::new();
    let s = Server::start_manual_configured(kind, clock.clone(), |o| c.configure(o)).await;
    let admin = Some(c.admin.as_str());
    let config = json!({"reset": "daily", "grace": GRACE, "player_writes": true,
        "rewards": [{"from": 1, "to": 3, "reward": "gold"}]});
    let (st, b) = s
        .call_as(admin, Method::PUT, "/v1/boards/b", Some(config))
        .await;
    assert_eq!(st, 201, "{b}");
    // np pays too, but players do not write there: nor do they claim.
    let np = json!({"reset": "daily", "grace": GRACE,
        "rewards": [{"from": 1, "to": 1, "reward": "gold"}]});
    let (st, _) = s
        .call_as(admin, Method::PUT, "/v1/boards/np", Some(np))
        .await;
    assert_eq!(st, 201);
    for (board, m, score) in [
        ("b", "ann", 5),
        ("b", "bob", 3),
        ("b", "cy", 1),
        ("np", "ann", 1),
    ] {
        let w = json!({"member": m, "score": score});
        let path = format!("/v1/boards/{board}/scores");
        let (st, _) = s.call_as(admin, Method::POST, &path, Some(w)).await;
        assert_eq!(st, 200);
    }
    clock.set(CLOSED_US);
    let deadline = Instant::now() + Duration::from_secs(30);
    let rewards = "/v1/boards/b/periods/2026-11-23/rewards";
    while s.call_as(admin, Method::GET, rewards, None).await.1["granted"] != json!(true) {
        assert!(Instant::now() < deadline, "never granted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let np_rewards = "/v1/boards/np/periods/2026-11-23/rewards";
    while s.call_as(admin, Method::GET, np_rewards, None).await.1["granted"] != json!(true) {
        assert!(Instant::now() < deadline, "np never granted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let before = s.call_as(admin, Method::GET, rewards, None).await.1;
    let np_before = s.call_as(admin, Method::GET, np_rewards, None).await.1;
    let bobs = "/v1/members/bob/rewards/b:2026-11-23:2/claim";
    let anns = "/v1/members/ann/rewards/b:2026-11-23:1/claim";
    let anns_np = "/v1/members/ann/rewards/np:2026-11-23:1/claim";
    for (token, path, status, code) in [
        (Some(c.ann.as_str()), bobs, 403, "forbidden"),
        (Some(c.ann.as_str()), anns_np, 403, "forbidden"),
        (
            Some(c.ann.as_str()),
            "/v1/boards/np/members/ann/join",
            403,
            "forbidden",
        ),
        (Some(c.read.as_str()), anns, 403, "forbidden"),
        (None, anns, 401, "unauthorized"),
    ] {
        let got = s.call_as(token, Method::POST, path, None).await;
        assert_error(&got, status, code);
        assert_eq!(s.call_as(admin, Method::GET, rewards, None).await.1, before);
        assert_eq!(
            s.call_as(admin, Method::GET, np_rewards, None).await.1,
            np_before
        );
    }
    let (st, mine) = s.call_as(Some(&c.ann), Method::POST, anns, None).await;
    assert_eq!(
        (st.as_u16(), &mine["claimed_by"]),
        (200, &json!("player")),
        "{mine}"
    );
    let (st, his) = s.call_as(Some(&c.write_b), Method::POST, bobs, None).await;
    assert_eq!(
        (st.as_u16(), &his["claimed_by"]),
        (200, &json!("game-server")),
        "{his}"
    );

    // RESP: the same reads, and a claim refused as HTTP refuses it.
    let mut conn = resp_as(&s, Some(&c.admin), true).await.expect("RESP");
    let (_, http) = s
        .call_as(
            admin,
            Method::GET,
            "/v1/members/ann/rewards?limit=1000",
            None,
        )
        .await;
    assert_eq!(lb(&mut conn, &["LB.REWARDS", "ann"]).await, http);
    let claimed = lb(&mut conn, &["LB.REWARDS", "ann", "STATUS", "claimed"]).await;
    assert_eq!(claimed["grants"], json!([mine]));
    // Unclaimed: np's, which she may not claim herself.
    let unclaimed = lb(&mut conn, &["LB.REWARDS", "ann", "STATUS", "unclaimed"]).await;
    assert_eq!(
        unclaimed["grants"][0]["id"],
        json!("np:2026-11-23:1"),
        "{unclaimed}"
    );
    assert_eq!(unclaimed["total"], json!(1));
    assert_eq!(
        lb(&mut conn, &["LB.CLAIM", "ann", "b:2026-11-23:1"]).await,
        json!({"error": "already_claimed"})
    );
    assert_eq!(
        lb(&mut conn, &["LB.CLAIM", "ann", "b:2026-11-23:7"]).await,
        json!({"error": "reward_not_found"})
    );
    assert_eq!(
        lb(&mut conn, &["LB.REWARDS", "ann", "STATUS", "lost"]).await,
        json!({"error": "invalid_parameter"})
    );
    // A claim through RESP: the grant as HTTP shows it, claimed by the connection's key.
    let got = lb(&mut conn, &["LB.CLAIM", "cy", "b:2026-11-23:3"]).await;
    assert_eq!(
        (&got["id"], &got["claimed_by"]),
        (&json!("b:2026-11-23:3"), &json!("admin")),
        "{got}"
    );
    let (_, cys) = s
        .call_as(admin, Method::GET, "/v1/members/cy/rewards", None)
        .await;
    assert_eq!(cys["grants"], json!([got]));
    let mut player = resp_as(&s, Some(&c.ann), true).await.expect("RESP");
    assert_eq!(
        lb(&mut player, &["LB.CLAIM", "bob", "b:2026-11-23:2"]).await,
        json!({"error": "forbidden"})
    );
}

/// The edges of a close (docs/SPEC.md §16): rows patched before the close are the ones
/// paid; a write inside the grace still counts, so nothing was granted before the grace
/// ended; a tie at a reward boundary goes to who reached the score first (not to the
/// name); a period with no visible entry grants nothing (n = 0); on a board with a reset,
/// `closes_at` only stops writes; on one without, a later `closes_at` change leaves the
/// grants; a member's rewards read every status by default, `all`
/// alike, and more than 1,000 boards named are refused.
async fn a_close_pays_the_rows_and_the_order_at_its_end(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let daily = |rows: Value| json!({"reset": "daily", "grace": GRACE, "rewards": rows});
    let old = json!([{"from": 1, "to": 9, "reward": "old"}]);
    assert_eq!(s.put("/v1/boards/t", daily(old)).await.0, 201);
    let pin = json!([{"top_percent": 100, "reward": "pin"}]);
    assert_eq!(s.put("/v1/boards/none", daily(pin)).await.0, 201);
    let cup = json!({"closes_at": "2026-11-23T02:00:00Z", "grace": 0,
        "rewards": [{"from": 1, "to": 1, "reward": "cup"}]});
    assert_eq!(s.put("/v1/boards/cup", cup).await.0, 201);
    // On a board with a reset, `closes_at` only stops writes: day 1 pays at its end.
    let stop = json!({"reset": "daily", "grace": GRACE, "closes_at": "2026-11-23T02:00:00Z",
        "rewards": [{"from": 1, "to": 1, "reward": "r"}]});
    assert_eq!(s.put("/v1/boards/stop", stop).await.0, 201);
    write(&s, "stop", "v", 1).await;
    // y reaches 30 before x: y ranks higher, though x sorts first by name.
    for (m, score) in [("w", 50), ("y", 30), ("x", 30)] {
        write(&s, "t", m, score).await;
    }
    write(&s, "none", "h", 5).await;
    assert_eq!(
        s.post("/v1/boards/none/members/h/hide", json!({})).await.0,
        204
    );
    write(&s, "cup", "y", 1).await;
    // cup closes at 02:00 (no reset: its period `all`); a later `closes_at` leaves what
    // it granted.
    clock.set(DAY1_US + 3600 * S + S);
    let cup = granted(&s, "cup", "all").await;
    assert_eq!(paid(&cup), [pay("y", 1, "cup", 1)]);
    let (st, p) = s
        .call(
            Method::PATCH,
            "/v1/boards/cup",
            Some(json!({"closes_at": "2026-12-01T00:00:00Z"})),
        )
        .await;
    assert_eq!(st, 200, "{p}");
    assert_eq!(granted(&s, "cup", "all").await["grants"], cup["grants"]);
    let (_, r) = s.get("/v1/boards/stop/periods/2026-11-23/rewards").await;
    assert_eq!(r["granted"], json!(false), "{r}");
    let after = json!({"member": "v", "score": 2});
    assert_error(
        &s.post("/v1/boards/stop/scores", after).await,
        422,
        "board_closed",
    );
    let rows = json!({"rewards": [
        {"from": 1, "to": 2, "reward": "gold"},
        {"from": 3, "to": 3, "reward": "silver"},
    ]});
    let (st, p) = s.call(Method::PATCH, "/v1/boards/t", Some(rows)).await;
    assert_eq!(st, 200, "{p}");
    // Inside the grace: z's late write for day 1 counts, and nothing is granted yet.
    clock.set(DAY1_US + DAY - 3600 * S + 10 * S);
    let late = json!({"member": "z", "score": 40, "period": "2026-11-23"});
    let (st, w) = s.post("/v1/boards/t/scores", late).await;
    assert_eq!(st, 200, "{w}");
    let (_, r) = s.get("/v1/boards/t/periods/2026-11-23/rewards").await;
    assert_eq!(
        (&r["granted"], &r["total"]),
        (&json!(false), &json!(0)),
        "{r}"
    );
    clock.set(CLOSED_US);
    // w 50, z 40, y 30, x 30: the tie at the silver's edge goes to y, who was first.
    let r = granted(&s, "t", "2026-11-23").await;
    assert_eq!(
        paid(&r),
        [
            pay("w", 1, "gold", 1),
            pay("z", 2, "gold", 1),
            pay("y", 3, "silver", 1),
        ]
    );
    let stop = granted(&s, "stop", "2026-11-23").await;
    assert_eq!(paid(&stop), [pay("v", 1, "r", 1)]);
    let none = granted(&s, "none", "2026-11-23").await;
    assert_eq!((&none["total"], &none["grants"]), (&json!(0), &json!([])));
    assert_eq!(granted(&s, "cup", "all").await["grants"], cup["grants"]);

    // y's rewards: every status by default, newest first; `all` alike.
    let (st, _) = claim(&s, "y", "cup:all:1").await;
    assert_eq!(st, 200);
    let (st, mine) = s.get("/v1/members/y/rewards").await;
    assert_eq!(st, 200, "{mine}");
    let ids: Vec<&Value> = mine["grants"]
        .as_array()
        .expect("grants")
        .iter()
        .map(|g| &g["id"])
        .collect();
    assert_eq!(
        ids,
        [&json!("t:2026-11-23:3"), &json!("cup:all:1")],
        "{mine}"
    );
    assert_eq!(s.get("/v1/members/y/rewards?status=all").await.1, mine);
    let many: Vec<String> = (0..1001).map(|i| format!("b{i}")).collect();
    let path = format!("/v1/members/y/rewards?boards={}", many.join(","));
    assert_error(&s.get(&path).await, 400, "invalid_parameter");
    s.stop().await;
}

/// A member's rewards, with no `boards`, read every board the caller may read — past the
/// first 1,000 by name (docs/SPEC.md §16: "default every board").
#[tokio::test]
async fn a_members_rewards_read_every_board() {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(Kind::Embedded, clock.clone()).await;
    for i in 0..1000 {
        assert_eq!(
            s.put(&format!("/v1/boards/a{i:04}"), json!({})).await.0,
            201
        );
    }
    let config = json!({"reset": "daily", "grace": GRACE,
        "rewards": [{"from": 1, "to": 1, "reward": "gold"}]});
    assert_eq!(s.put("/v1/boards/zz", config).await.0, 201);
    write(&s, "zz", "ann", 1).await;
    clock.set(CLOSED_US);
    granted(&s, "zz", "2026-11-23").await;
    let (st, mine) = s.get("/v1/members/ann/rewards").await;
    assert_eq!(st, 200, "{mine}");
    assert_eq!(mine["grants"][0]["id"], json!("zz:2026-11-23:1"), "{mine}");
    s.stop().await;
}

/// A claim while the log cannot be written is 503 `storage_unavailable`, and the grant
/// stays unclaimed until a claim succeeds.
#[tokio::test]
async fn a_claim_the_log_cannot_take_is_503_and_changes_nothing() {
    use photofinish_store::io::{Fault, FaultyStorage};
    let dir = tempfile::tempdir().expect("tmp");
    let storage = FaultyStorage::default();
    let faults = storage.faults.clone();
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let opts = photofinish_server::serve::ServeOptions {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        clock: photofinish_server::serve::SharedClock(clock.clone()),
        ..photofinish_server::serve::ServeOptions::default()
    };
    let s = Server::start_with(opts, Arc::new(storage), Kind::Embedded).await;
    let config = json!({"reset": "daily", "grace": GRACE, "rewards": rows()});
    assert_eq!(s.put("/v1/boards/r", config).await.0, 201);
    write(&s, "r", "a", 1).await;
    clock.set(CLOSED_US);
    let before = granted(&s, "r", "2026-11-23").await;
    for fault in [Fault::DiskFull, Fault::IoError] {
        faults.set(fault);
        assert_error(
            &claim(&s, "a", "r:2026-11-23:1").await,
            503,
            "storage_unavailable",
        );
        faults.set(Fault::None);
        assert_eq!(granted(&s, "r", "2026-11-23").await, before);
    }
    let (st, got) = claim(&s, "a", "r:2026-11-23:1").await;
    assert_eq!(st, 200, "{got}");
    s.stop().await;
}

/// On Redis, a claim while Redis is down is 503 `storage_unavailable`, and the grant stays
/// unclaimed: once Redis is back (its AOF kept the grant), the claim is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_claim_while_redis_is_down_is_503_and_changes_nothing() {
    use photofinish_testkit::redis::RedisProcess;
    let dir = tempfile::tempdir().expect("tmp");
    let redis_dir = dir.path().to_path_buf();
    let mut redis = tokio::task::spawn_blocking(move || {
        RedisProcess::start_durable(&redis_dir).expect("redis")
    })
    .await
    .expect("start");
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let opts = photofinish_server::serve::ServeOptions {
        listen: "127.0.0.1:0".into(),
        storage: Some(redis.url()),
        redis_namespace: "claims".into(),
        clock: photofinish_server::serve::SharedClock(clock.clone()),
        // A clock set by hand is far from Redis's.
        max_clock_skew: None,
        ..photofinish_server::serve::ServeOptions::default()
    };
    let storage = Arc::new(photofinish_store::io::RealStorage);
    let s = Server::start_with(opts, storage, Kind::Redis).await;
    let config = json!({"reset": "daily", "grace": GRACE, "rewards": rows()});
    assert_eq!(s.put("/v1/boards/r", config).await.0, 201);
    write(&s, "r", "a", 1).await;
    clock.set(CLOSED_US);
    let before = granted(&s, "r", "2026-11-23").await;
    redis = tokio::task::spawn_blocking(move || {
        redis.kill();
        redis
    })
    .await
    .expect("kill");
    assert_error(
        &claim(&s, "a", "r:2026-11-23:1").await,
        503,
        "storage_unavailable",
    );
    // Kept until the end: dropping it stops Redis.
    let _redis = tokio::task::spawn_blocking(move || {
        redis.restart().expect("restart");
        redis
    })
    .await
    .expect("restart");
    // Once the server reads Redis again, the grant is as it was: unclaimed.
    let deadline = Instant::now() + Duration::from_secs(30);
    let path = "/v1/boards/r/periods/2026-11-23/rewards?limit=1000";
    loop {
        let (st, now) = s.get(path).await;
        if st == 200 {
            assert_eq!(now, before);
            break;
        }
        assert!(Instant::now() < deadline, "Redis never served again: {now}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (st, got) = claim(&s, "a", "r:2026-11-23:1").await;
    assert_eq!(
        (st.as_u16(), &got["claimed_by"]),
        (200, &json!("open")),
        "{got}"
    );
    s.stop().await;
}

conformance!(
    a_close_grants_once_and_a_claim_pays_once,
    a_close_pays_the_rows_and_the_order_at_its_end,
    a_close_in_steps_of_a_few_members_pays_as_one,
    cohorts_pay_within_each_cohort_and_tiers_their_own,
    bad_rows_are_refused_and_change_nothing,
    players_claim_their_own_and_the_doors_agree,
);
photofinish_testkit::on_redis!(two_nodes_grant_a_period_once);
