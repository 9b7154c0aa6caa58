//! The same random operation sequence against the embedded store and a Redis backend: after
//! every step (single writes, batches, deletes) both answer byte-identical JSON to every read — full listings in all three
//! rank styles, each member's rank, around windows, board and period views, and the
//! questions of §10 (a set of members, the rank of a score, thresholds). Writes carry
//! explicit `at` instants (drawn from a few values, so equal `reached_at` happens and the
//! sequence decides), or are stamped by the servers' one shared manual clock, which makes
//! both backends' answers deterministic. An all-time board, and a daily board with a
//! retention of two whose clock moves on during the sequence: batches then open periods
//! and drop old ones, and writes into a period past retention are refused alike.

use std::sync::Arc;

use photofinish_core::clock::{Clock, ManualClock};
use serde_json::{json, Value};

use crate::support::*;

/// Everything a client can read of `board`.
async fn everything(s: &Server, board: &str, members: &[String]) -> Vec<Value> {
    let mut out = vec![s.get(&format!("/v1/boards/{board}")).await.1];
    out.push(s.get(&format!("/v1/boards/{board}/periods")).await.1);
    out.push(
        s.get(&format!(
            "/v1/boards/{board}/thresholds?ranks=1,3,12,13&top_percent=1,10,33.3333,50,100"
        ))
        .await
        .1,
    );
    for style in ["ordinal", "competition", "dense"] {
        out.push(
            s.get(&format!(
                "/v1/boards/{board}/entries?limit=1000&ranking={style}"
            ))
            .await
            .1,
        );
        out.push(
            s.get(&format!(
                "/v1/boards/{board}/entries?offset=3&limit=4&ranking={style}"
            ))
            .await
            .1,
        );
        let mut friends: Vec<&str> = members.iter().map(String::as_str).step_by(2).collect();
        friends.push("nobody");
        out.push(
            s.post(
                &format!("/v1/boards/{board}/members:query"),
                serde_json::json!({"members": friends, "ranking": style}),
            )
            .await
            .1,
        );
        for score in [i64::MIN, -3, 0, 5, 1 << 53, (1 << 53) + 1, i64::MAX] {
            out.push(
                s.get(&format!(
                    "/v1/boards/{board}/rank?score={score}&ranking={style}"
                ))
                .await
                .1,
            );
        }
        for m in members {
            out.push(
                s.get(&format!("/v1/boards/{board}/members/{m}?ranking={style}"))
                    .await
                    .1,
            );
            out.push(
                s.get(&format!(
                    "/v1/boards/{board}/members/{m}/around?before=2&after=3&ranking={style}"
                ))
                .await
                .1,
            );
        }
    }
    out
}

/// The sequence's board: all-time, or daily with a retention of two periods.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reset {
    Never,
    Daily,
}

/// Where both servers' clock starts: 2026-11-22T12:00:00Z.
const T0: i64 = 1_795_348_800_000_000;
const HOUR: i64 = 3_600_000_000;

async fn run(kind: Kind, seed: u64, order: &str, reset: Reset, steps: usize) {
    let clock = Arc::new(ManualClock::new(T0));
    let a = Server::start_manual(Kind::Embedded, clock.clone()).await;
    let b = Server::start_manual(kind, clock.clone()).await;
    let config = match reset {
        Reset::Never => json!({"order": order, "update": "incr"}),
        Reset::Daily => json!({"order": order, "update": "incr", "reset": "daily", "retention": 2}),
    };
    assert_eq!(
        a.put("/v1/boards/x", config.clone()).await,
        b.put("/v1/boards/x", config).await
    );
    let members: Vec<String> = (0..12).map(|i| format!("m{i}")).collect();
    // Small ties, i64's ends (increments past them overflow alike on both), and scores past
    // 2^53 that differ by 1 and share one double on Redis.
    let big = 1_i64 << 53;
    let scores: [i64; 17] = [
        -3,
        0,
        1,
        2,
        5,
        5,
        7,
        1_000_000_000_000,
        big,
        big + 1,
        big + 2,
        -big - 1,
        -big - 2,
        i64::MAX,
        i64::MAX - 1,
        i64::MIN,
        i64::MIN + 1,
    ];
    let ats = [
        "2026-11-22T10:00:00Z",
        "2026-11-22T10:00:00Z",
        "2026-11-22T10:00:00.000001Z",
        "2026-11-21T08:00:00Z",
    ];
    let mut rng = Rng(seed);
    for step in 0..steps {
        if reset == Reset::Daily && rng.below(6) == 0 {
            clock.advance(7 * HOUR);
        }
        // Daily: stamped now (twice as often), an hour ago, a day ago (the period before,
        // still retained) or three days ago (past retention: refused).
        let now = clock.now_us();
        let daily_ats: Vec<Option<String>> =
            [None, None, Some(HOUR), Some(25 * HOUR), Some(73 * HOUR)]
                .into_iter()
                .map(|ago| {
                    ago.map(|ago| {
                        jiff::Timestamp::from_microsecond(now - ago)
                            .expect("instant")
                            .to_string()
                    })
                })
                .collect();
        let m = rng.pick(&members).clone();
        let write = |rng: &mut Rng, m: String| {
            let op = ["incr", "set", "best"][rng.below(3) as usize];
            let at = match reset {
                Reset::Never => Some(rng.pick(&ats).to_string()),
                Reset::Daily => rng.pick(&daily_ats).clone(),
            };
            let mut w = json!({"member": m, "score": rng.pick(&scores), "op": op});
            if let Some(at) = at {
                w["at"] = json!(at);
            }
            if rng.below(4) == 0 {
                w["metadata"] = json!({"step": step});
            }
            w
        };
        let (path, body) = match rng.below(10) {
            0 => (format!("/v1/boards/x/members/{m}"), None),
            // A batch: the same member may come twice; order must hold on both backends.
            1 => {
                let entries: Vec<Value> = (0..4)
                    .map(|_| {
                        let m = rng.pick(&members).clone();
                        write(&mut rng, m)
                    })
                    .collect();
                (
                    "/v1/boards/x/scores:batch".to_owned(),
                    Some(json!({ "entries": entries })),
                )
            }
            _ => ("/v1/boards/x/scores".to_owned(), Some(write(&mut rng, m))),
        };
        let (ra, rb) = match &body {
            Some(w) => (
                a.post(&path, w.clone()).await,
                b.post(&path, w.clone()).await,
            ),
            None => (a.delete(&path).await, b.delete(&path).await),
        };
        assert_eq!(ra, rb, "seed {seed} step {step}: {path} {body:?}");
        if step % 10 == 9 || step + 1 == steps {
            let (ea, eb) = (
                everything(&a, "x", &members).await,
                everything(&b, "x", &members).await,
            );
            for (i, (x, y)) in ea.iter().zip(&eb).enumerate() {
                assert_eq!(x, y, "seed {seed} step {step} read {i}");
            }
        }
    }
    a.stop().await;
    b.stop().await;
}

async fn random_sequences_answer_identically(kind: Kind) {
    for (seed, order) in [
        (0x9e37_79b9_7f4a_7c15, "desc"),
        (0xdead_beef_cafe_f00d, "asc"),
    ] {
        run(kind, seed, order, Reset::Never, 120).await;
    }
    run(kind, 0x0123_4567_89ab_cdef, "desc", Reset::Daily, 120).await;
}

mod redis_vs_embedded {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn standalone() {
        random_sequences_answer_identically(Kind::Redis).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn cluster() {
        random_sequences_answer_identically(Kind::Cluster).await
    }
}
