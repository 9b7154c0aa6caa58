//! The period-close webhook (docs/SPEC.md §10, docs/webhooks.md) on every backend, with
//! the server's clock moved by the test and a local receiver: posted on a timer within
//! 5 s after the period (and its grace) ends, never before; the body, the top N in order,
//! `Idempotency-Key: <board>/<period>` and the HMAC signature checked independently; a
//! receiver failing twice gets exactly one more (successful) post; posts survive a
//! restart; a day of failures is given up and counted; two servers sharing a Redis post
//! once; boards that cannot close (or cannot be read once closed) refuse a webhook.
//! (`kill -9` between a period's end and its delivery: crates/photofinish/tests.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use photofinish_core::clock::ManualClock;
use photofinish_server::serve::ServeOptions;
use photofinish_server::webhook::WebhookOptions;
use photofinish_testkit::receiver::{Received, Receiver};
use serde_json::{json, Value};

use crate::support::*;

/// 2026-11-23T00:00:00Z, µs: the end of period 2026-11-22 of a daily UTC board.
const MIDNIGHT_US: i64 = 1_795_392_000_000_000;
const S: i64 = 1_000_000;
const SECRET: &[u8] = b"whsec-test-0123456789";
/// The spec's bound from a period's end to its post (docs/SPEC.md §10), checked once, in
/// the first test; elsewhere a post is waited for up to [`ARRIVES`], so a loaded machine
/// cannot fail a test about something else.
const ON_TIME: Duration = Duration::from_secs(5);
/// How long the other tests wait for a post that is owed.
const ARRIVES: Duration = Duration::from_secs(30);

fn signed(o: ServeOptions, clock: &Arc<ManualClock>) -> ServeOptions {
    ServeOptions {
        clock: photofinish_server::serve::SharedClock(clock.clone()),
        webhook: WebhookOptions {
            secret: Some(SECRET.into()),
        },
        // The clock is set by hand: the log layout's skew check does not apply.
        max_clock_skew: None,
        ..o
    }
}

async fn start(kind: Kind, clock: &Arc<ManualClock>) -> Server {
    Server::start_configured(kind, |o| signed(o, clock)).await
}

/// The hex HMAC-SHA256 a receiver computes to check a post.
fn hmac_hex(body: &[u8]) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SECRET).expect("key");
    mac.update(body);
    let tag = mac.finalize().into_bytes();
    tag.iter().map(|b| format!("{b:02x}")).collect()
}

fn check_signed(p: &Received) {
    assert_eq!(
        p.header("x-photofinish-signature"),
        Some(format!("sha256={}", hmac_hex(&p.body)).as_str()),
        "signature of {}",
        String::from_utf8_lossy(&p.body)
    );
    assert_eq!(p.header("content-type"), Some("application/json"));
}

async fn daily_board(s: &Server, name: &str, url: &str, extra: Value) {
    let mut body = json!({"reset": "daily", "update": "set", "webhook": url, "webhook_top": 2});
    for (k, v) in extra.as_object().expect("object") {
        body[k] = v.clone();
    }
    let (st, b) = s.put(&format!("/v1/boards/{name}"), body).await;
    assert_eq!(st, 201, "{b}");
}

/// The counter `photofinish_webhook_posts_total{outcome=…}`.
async fn posts_counted(s: &Server, outcome: &str) -> u64 {
    let series = format!("photofinish_webhook_posts_total{{outcome=\"{outcome}\"}}");
    metric(s, None, &series)
        .await
        .map_or(0, |v| v.parse().expect("a count"))
}

/// Nothing more arrives for a while (the receiver's count stays at `n`).
async fn settles_at(r: &Receiver, n: usize) {
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(r.received().len(), n, "{:?}", r.received());
}

async fn posts_the_closed_period_once_on_time_signed(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[]).await;
    daily_board(&s, "d", &r.url, json!({})).await;
    // Ties: ann reached 5 first, so she ranks above cy; bob is best.
    write(&s, "d", "ann", 5).await;
    clock.advance(1);
    write(&s, "d", "cy", 5).await;
    write(&s, "d", "bob", 9).await;
    // Before the period ends: nothing, however long we wait.
    settles_at(&r, 0).await;

    clock.set(MIDNIGHT_US);
    let ended = Instant::now();
    let got = r.wait_for(1, ARRIVES).await;
    assert!(ended.elapsed() <= ON_TIME, "{:?}", ended.elapsed());
    let p = &got[0];
    check_signed(p);
    assert_eq!(p.path, "/hook");
    assert_eq!(p.header("idempotency-key"), Some("d/2026-11-22"));
    let body = p.json();
    assert_eq!(
        body,
        json!({
            "board": "d", "period": "2026-11-22",
            "starts_at": "2026-11-22T00:00:00.000000Z", "ends_at": "2026-11-23T00:00:00.000000Z",
            "total": 3,
            "entries": [
                {"rank": 1, "member": "bob", "score": 9, "reached_at": body["entries"][0]["reached_at"], "metadata": null},
                {"rank": 2, "member": "ann", "score": 5, "reached_at": body["entries"][1]["reached_at"], "metadata": null},
            ],
            "grants": [],
        })
    );
    // The board's create (an audited record) took the clock's instant: stamped instants
    // strictly increase in log order, so ann's first write came 1 µs after it.
    assert_eq!(
        micros(&body["entries"][1]["reached_at"]),
        MIDNIGHT_US - 10 * S + 1
    );
    // Exactly once, and the next day is not due yet.
    settles_at(&r, 1).await;
    assert_eq!(posts_counted(&s, "delivered").await, 1);
    // The next day's close posts that day (empty: nobody wrote), once.
    clock.set(MIDNIGHT_US + 86_400 * S);
    let got = r.wait_for(2, ARRIVES).await;
    assert_eq!(got[1].header("idempotency-key"), Some("d/2026-11-23"));
    assert_eq!(got[1].json()["total"], 0);
    assert_eq!(got[1].json()["entries"], json!([]));
    settles_at(&r, 2).await;
    s.stop().await;
}

async fn a_failing_receiver_gets_one_more_post_after_two_failures(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[500, 503]).await;
    daily_board(&s, "d", &r.url, json!({})).await;
    write(&s, "d", "ann", 5).await;
    settles_at(&r, 0).await;
    clock.set(MIDNIGHT_US + S);
    let got = r.wait_for(3, Duration::from_secs(15)).await;
    settles_at(&r, 3).await;
    assert_eq!(
        got.iter().map(|p| p.status).collect::<Vec<_>>(),
        [500, 503, 200]
    );
    for p in &got {
        check_signed(p);
        assert_eq!(p.header("idempotency-key"), Some("d/2026-11-22"));
        assert_eq!(p.body, got[0].body, "every attempt carries the same body");
    }
    // Backoff: the attempts are spaced, not hammered.
    assert!(got[1].at - got[0].at >= Duration::from_millis(900));
    assert_eq!(posts_counted(&s, "failed").await, 2);
    assert_eq!(posts_counted(&s, "delivered").await, 1);
    s.stop().await;
}

async fn grace_holds_the_post_for_late_results(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[]).await;
    daily_board(&s, "g", &r.url, json!({"grace": 30})).await;
    write(&s, "g", "ann", 5).await;
    clock.set(MIDNIGHT_US + 5 * S);
    // A late result lands within grace; nothing is posted while grace lasts.
    let (st, w) = s
        .post(
            "/v1/boards/g/scores",
            json!({"member": "late", "score": 50, "period": "2026-11-22"}),
        )
        .await;
    assert_eq!(st, 200, "{w}");
    settles_at(&r, 0).await;
    clock.set(MIDNIGHT_US + 30 * S);
    let got = r.wait_for(1, ARRIVES).await;
    let body = got[0].json();
    assert_eq!(body["total"], 2);
    assert_eq!(body["entries"][0]["member"], "late");
    settles_at(&r, 1).await;
    s.stop().await;
}

async fn an_owed_post_survives_a_restart(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[500, 500, 500, 500, 500, 500, 500, 500]).await;
    daily_board(&s, "d", &r.url, json!({})).await;
    write(&s, "d", "ann", 5).await;
    settles_at(&r, 0).await;
    clock.set(MIDNIGHT_US + S);
    r.wait_for(1, ARRIVES).await;
    let s = s.restart().await;
    r.answer(&[]);
    let before = r.received().len();
    let got = r.wait_for(before + 1, Duration::from_secs(10)).await;
    let last = got.last().expect("a post");
    assert_eq!(last.status, 200);
    assert_eq!(last.header("idempotency-key"), Some("d/2026-11-22"));
    assert_eq!(last.json()["entries"][0]["member"], "ann");
    settles_at(&r, got.len()).await;
    // And once delivered, a restart posts nothing again.
    let s = s.restart().await;
    settles_at(&r, got.len()).await;
    s.stop().await;
}

async fn a_day_of_failures_is_given_up(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[500; 64]).await;
    daily_board(&s, "d", &r.url, json!({"retention": 3})).await;
    write(&s, "d", "ann", 5).await;
    settles_at(&r, 0).await;
    clock.set(MIDNIGHT_US + S);
    r.wait_for(1, ARRIVES).await;
    // A day later (the next day's end has passed as well): 2026-11-22 is given up,
    // 2026-11-23 is posted (and fails on).
    clock.set(MIDNIGHT_US + 86_400 * S + 2 * S);
    let end = Instant::now() + Duration::from_secs(10);
    while posts_counted(&s, "abandoned").await < 1 {
        assert!(Instant::now() < end, "not given up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let n = r.received().len();
    let got = r.wait_for(n + 1, Duration::from_secs(10)).await;
    assert_eq!(
        got.last().expect("post").header("idempotency-key"),
        Some("d/2026-11-23")
    );
    assert_eq!(posts_counted(&s, "abandoned").await, 1);
    s.stop().await;
}

async fn boards_that_cannot_post_refuse_a_webhook(kind: Kind) {
    let s = Server::start(kind).await;
    let url = "http://127.0.0.1:9/hook";
    let never = s
        .put("/v1/boards/n", json!({"reset": "never", "webhook": url}))
        .await;
    // A rule between settings (and, on a PATCH, with the board's): 422 (docs/SPEC.md §3).
    assert_error(&never, 422, "invalid_config");
    let short = s
        .put(
            "/v1/boards/n",
            json!({"reset": "daily", "retention": 1, "webhook": url}),
        )
        .await;
    assert_error(&short, 422, "invalid_config");
    assert_eq!(s.get("/v1/boards/n").await.0, 404, "nothing was created");
    let (st, _) = s
        .put("/v1/boards/k", json!({"reset": "daily", "retention": 1}))
        .await;
    assert_eq!(st, 201);
    let patch = s
        .call(
            reqwest::Method::PATCH,
            "/v1/boards/k",
            Some(json!({"webhook": url})),
        )
        .await;
    assert_error(&patch, 422, "invalid_config");
    let (_, b) = s.get("/v1/boards/k").await;
    assert_eq!(b["webhook"], Value::Null, "{b}");
    s.stop().await;
}

/// On a board of several columns (docs/SPEC.md §13) each posted entry carries `scores`.
async fn posts_every_column_of_a_board_of_several(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[]).await;
    let columns = json!({"columns": [{"name": "stars"}, {"name": "moves", "order": "asc"}]});
    daily_board(&s, "c", &r.url, columns).await;
    for (m, stars, moves) in [("ann", 3, 20), ("bob", 3, 18)] {
        let body = json!({"member": m, "scores": {"stars": stars, "moves": moves}});
        let (st, b) = s.post("/v1/boards/c/scores", body).await;
        assert_eq!(st, 200, "{b}");
    }
    clock.set(MIDNIGHT_US);
    let got = r.wait_for(1, ARRIVES).await;
    let body = got[0].json();
    assert_eq!(body.get("teams"), None, "no teams on a board without them");
    assert_eq!(body["entries"][0]["member"], "bob");
    assert_eq!(
        body["entries"][0]["scores"],
        json!({"stars": 3, "moves": 18})
    );
    assert_eq!(
        body["entries"][1]["scores"],
        json!({"stars": 3, "moves": 20})
    );
    s.stop().await;
}

/// On a board of partitions and teams (docs/SPEC.md §17) each posted entry carries its
/// partition and team, and the post carries the top teams; a board without teams posts
/// no `teams`.
async fn posts_the_top_teams_of_a_board_of_teams(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[]).await;
    let groups = json!({"partitions": {"max": 3}, "teams": {"max_size": 3}});
    daily_board(&s, "g", &r.url, groups).await;
    for (m, score, p, t) in [
        ("ann", 5, "FR", "wolves"),
        ("bob", 7, "DE", "wolves"),
        ("cid", 9, "FR", "bears"),
        ("dan", 1, "DE", "owls"),
    ] {
        let body = json!({"member": m, "score": score, "partition": p, "team": t});
        let (st, b) = s.post("/v1/boards/g/scores", body).await;
        assert_eq!(st, 200, "{b}");
    }
    clock.set(MIDNIGHT_US);
    let got = r.wait_for(1, ARRIVES).await;
    let body = got[0].json();
    assert_eq!(
        (
            &body["entries"][0]["member"],
            &body["entries"][0]["partition"],
            &body["entries"][0]["team"]
        ),
        (&json!("cid"), &json!("FR"), &json!("bears"))
    );
    let teams: Vec<(String, i64, u64)> = body["teams"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    (
                        t["team"].as_str().unwrap_or_default().to_owned(),
                        t["score"].as_i64().unwrap_or(0),
                        t["rank"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        teams,
        [("wolves".to_owned(), 12, 1), ("bears".to_owned(), 9, 2)],
        "webhook_top 2: {body}"
    );
    s.stop().await;
}

/// A hidden member (docs/SPEC.md §15) is in no post: the standings, ranks and total are
/// everyone else's.
async fn a_hidden_member_is_left_out_of_the_post(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[]).await;
    daily_board(&s, "h", &r.url, json!({})).await;
    for (m, v) in [("ann", 5), ("bob", 9), ("cy", 7)] {
        write(&s, "h", m, v).await;
    }
    let (st, b) = s.post("/v1/boards/h/members/bob/hide", json!(null)).await;
    assert_eq!(st, 204, "{b}");
    clock.set(MIDNIGHT_US);
    let got = r.wait_for(1, ARRIVES).await;
    let body = got[0].json();
    assert_eq!(body["total"], 2, "{body}");
    let ranks: Vec<(String, u64)> = body["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["member"].as_str().expect("m").to_owned(),
                e["rank"].as_u64().expect("r"),
            )
        })
        .collect();
    assert_eq!(ranks, [("cy".to_owned(), 1), ("ann".to_owned(), 2)]);
    s.stop().await;
}

/// On a league board the post goes once per cohort, after the league's close: the whole
/// cohort's standings and its moves, under `<board>/<period>/<tier>/<cohort>`; a
/// receiver failing once gets the failed cohort again, not the ones it took.
async fn a_league_posts_each_cohort_with_its_moves(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[200, 500]).await;
    daily_board(
        &s,
        "lg",
        &r.url,
        json!({"cohort_size": 2, "league": {"tiers": ["low", "high"], "promote": 1, "demote": 0},
            "rewards": [{"from": 1, "to": 1, "reward": "cup"}]}),
    )
    .await;
    for (m, score) in [("a", 1), ("b", 2), ("c", 3)] {
        write(&s, "lg", m, score).await;
    }
    settles_at(&r, 0).await;
    clock.set(MIDNIGHT_US + S);
    // Cohort 1 posts; cohort 2 fails once and comes again: three posts in all.
    let got = r.wait_for(3, ARRIVES).await;
    let keys: Vec<_> = got.iter().map(|p| p.header("idempotency-key")).collect();
    assert_eq!(
        keys,
        [
            Some("lg/2026-11-22/low/1"),
            Some("lg/2026-11-22/low/2"),
            Some("lg/2026-11-22/low/2")
        ]
    );
    let first: Value = serde_json::from_slice(&got[0].body).expect("json");
    check_signed(&got[0]);
    assert_eq!(
        (&first["tier"], &first["cohort"], &first["total"]),
        (&json!("low"), &json!(1), &json!(2)),
        "{first}"
    );
    let ranked: Vec<_> = first["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| (e["member"].clone(), e["rank"].clone()))
        .collect();
    assert_eq!(ranked, [(json!("b"), json!(1)), (json!("a"), json!(2))]);
    assert_eq!(
        first["moves"],
        json!([{"member": "b", "from": "low", "to": "high", "cohort": 1, "rank": 1}])
    );
    let second: Value = serde_json::from_slice(&got[2].body).expect("json");
    assert_eq!(
        (&second["cohort"], &second["moves"][0]["member"]),
        (&json!(2), &json!("c")),
        "{second}"
    );
    // Each cohort's post carries its own grants (docs/SPEC.md §16).
    let paid = |post: &Value| -> Vec<(Value, Value)> {
        post["grants"]
            .as_array()
            .expect("grants")
            .iter()
            .map(|g| (g["member"].clone(), g["id"].clone()))
            .collect()
    };
    assert_eq!(paid(&first), [(json!("b"), json!("lg:2026-11-22:1"))]);
    assert_eq!(paid(&second), [(json!("c"), json!("lg:2026-11-22:2"))]);
    settles_at(&r, 3).await;
}

/// A post waits for its period's grants and carries every one, as the rewards read
/// shows them (docs/SPEC.md §16).
async fn a_post_carries_the_periods_grants(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let s = start(kind, &clock).await;
    let r = Receiver::start(&[]).await;
    daily_board(
        &s,
        "g",
        &r.url,
        json!({"rewards": [{"from": 1, "to": 3, "reward": "gem", "amount": 5}]}),
    )
    .await;
    for (m, score) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] {
        write(&s, "g", m, score).await;
    }
    clock.set(MIDNIGHT_US + S);
    let got = r.wait_for(1, ARRIVES).await;
    let post = got[0].json();
    let (_, read) = s.get("/v1/boards/g/periods/2026-11-22/rewards").await;
    assert_eq!(read["granted"], json!(true), "{read}");
    assert_eq!(post["grants"], read["grants"]);
    let members: Vec<&str> = post["grants"]
        .as_array()
        .expect("grants")
        .iter()
        .map(|g| g["member"].as_str().expect("member"))
        .collect();
    assert_eq!(members, ["d", "c", "b"]);
    settles_at(&r, 1).await;
}

conformance!(
    posts_the_closed_period_once_on_time_signed,
    posts_every_column_of_a_board_of_several,
    posts_the_top_teams_of_a_board_of_teams,
    a_failing_receiver_gets_one_more_post_after_two_failures,
    grace_holds_the_post_for_late_results,
    an_owed_post_survives_a_restart,
    a_day_of_failures_is_given_up,
    boards_that_cannot_post_refuse_a_webhook,
    a_league_posts_each_cohort_with_its_moves,
    a_hidden_member_is_left_out_of_the_post,
    a_post_carries_the_periods_grants,
);

/// Two servers sharing one Redis (or cluster) post each period once, and after a failure
/// neither tries again before the wait is over.
async fn servers_sharing_a_redis_post_once(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US - 10 * S));
    let a = start(kind, &clock).await;
    let b = a.sibling().await;
    let r = Receiver::start(&[500]).await;
    daily_board(&a, "d", &r.url, json!({})).await;
    write(&b, "d", "ann", 5).await;
    settles_at(&r, 0).await;
    clock.set(MIDNIGHT_US + S);
    let got = r.wait_for(2, Duration::from_secs(10)).await;
    settles_at(&r, 2).await;
    assert_eq!(got.iter().map(|p| p.status).collect::<Vec<_>>(), [500, 200]);
    assert!(got[1].at - got[0].at >= Duration::from_millis(900));
    b.stop().await;
    a.stop().await;
}

mod shared {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn redis() {
        servers_sharing_a_redis_post_once(Kind::Redis).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn cluster() {
        servers_sharing_a_redis_post_once(Kind::Cluster).await
    }
}
