//! Board replicas over a board's log in Redis (`photofinish_redis::replica`,
//! docs/redis-log.md), standalone and a 3-master cluster: two nodes writing one board at
//! once answer each increment with a distinct score and end byte-identical; a new node
//! loads the snapshot and the log after it (even once the log below it is trimmed); a
//! damaged snapshot is passed over for the whole log, or refused when the log no longer
//! holds it; a node whose log came back shorter notices, and a reload answers what Redis
//! holds; a node whose clock is off appends nothing; a lagging node's stamp never ranks
//! its write ahead of an earlier one.

use std::sync::Arc;
use std::time::Duration;

use crate::support::now_us;
use photofinish_core::{BoardConfig, Op};
use photofinish_redis::conn::Conn;
use photofinish_redis::log::snapshot::Refused;
use photofinish_redis::log::{BoardLog, Divergence, LogError, LogKeys};
use photofinish_redis::replica::{Replica, ReplicaError};
use photofinish_store::{Applied, Command};
use photofinish_testkit::server::{fresh_namespace, redis_conn, redis_target, Kind};

async fn connect(kind: Kind) -> Conn {
    redis_conn(kind).await
}

const LEASE: Duration = Duration::from_secs(30);

/// A replica of the board whose keys are `keys`, on a connection of its own.
async fn node(kind: Kind, keys: &LogKeys) -> Replica {
    let log = BoardLog::new(connect(kind).await, keys.clone());
    Replica::load(log, Some(5_000_000)).await.expect("load")
}

fn create() -> (Command, bool) {
    (
        Command::CreateBoard {
            board: "b".into(),
            config: BoardConfig::default(),
            max_boards: None,
        },
        false,
    )
}

fn incr(member: &str, by: i64) -> (Command, bool) {
    (
        Command::Write {
            board: "b".into(),
            member: member.into(),
            op: Some(Op::Incr),
            value: by,
            at_us: 0,
            period_us: None,
            metadata: None,
            over_budget: None,
        },
        true,
    )
}

/// The one answer of executing `cmd` on `r` now.
async fn run(r: &Replica, cmd: (Command, bool)) -> Applied {
    let mut got = r.execute(&[cmd], now_us()).await.expect("execute");
    got.remove(0).expect("applied")
}

fn score(a: &Applied) -> i64 {
    match a {
        Applied::Written(o, _) => o.score,
        other => panic!("not a write: {other:?}"),
    }
}

async fn two_nodes_answer_alike_and_converge(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = Arc::new(node(kind, &keys).await);
    let b = Arc::new(node(kind, &keys).await);
    assert_eq!(run(&a, create()).await, Applied::BoardCreated(true));
    // B learns the create from its own append's answer.
    assert_eq!(run(&b, create()).await, Applied::BoardCreated(false));
    const PER_TASK: usize = 40;
    let mut tasks = Vec::new();
    for t in 0..8 {
        let r = if t % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for i in 0..PER_TASK {
                // Some in groups of two: one append, two entries.
                if i % 5 == 0 {
                    let got = r
                        .execute(&[incr("hot", 1), incr(&format!("own{t}"), 1)], now_us())
                        .await
                        .expect("execute");
                    seen.push(score(got[0].as_ref().expect("applied")));
                } else {
                    seen.push(score(&run(&r, incr("hot", 1)).await));
                }
            }
            seen
        }));
    }
    let mut scores = Vec::new();
    for t in tasks {
        scores.extend(t.await.expect("task"));
    }
    scores.sort_unstable();
    assert_eq!(
        scores,
        (1..=(8 * PER_TASK) as i64).collect::<Vec<_>>(),
        "every increment saw its own total"
    );
    a.catch_up().await.expect("catch up");
    b.catch_up().await.expect("catch up");
    assert_eq!(a.taken().await, b.taken().await);
    assert!(
        a.encoded().await == b.encoded().await,
        "the two copies differ"
    );
}

async fn a_new_node_loads_the_snapshot_and_the_log_after_it(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    for i in 0..100 {
        run(&a, incr(&format!("m{}", i % 7), i)).await;
    }
    let lease = a
        .log()
        .take_lease(LEASE)
        .await
        .expect("take")
        .expect("free");
    let meta = a
        .publish_snapshot(lease)
        .await
        .expect("publish")
        .expect("published");
    assert_eq!(meta.n, 101);
    for i in 0..20 {
        run(&a, incr("late", i)).await;
    }
    // Below the snapshot the log is no longer needed: trim it all.
    let conn = connect(kind).await;
    conn.query::<i64>(
        redis::cmd("XTRIM")
            .arg(&keys.log)
            .arg("MINID")
            .arg(format!("0-{}", meta.n + 1)),
    )
    .await
    .expect("trim");
    let c = node(kind, &keys).await;
    assert_eq!(c.taken().await, 121);
    assert!(
        c.encoded().await == a.encoded().await,
        "the new node differs"
    );
    // And it writes on from there.
    assert_eq!(score(&run(&c, incr("late", 1)).await), 191);
}

async fn a_damaged_snapshot_is_passed_over_or_refused(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    for i in 0..60 {
        run(&a, incr(&format!("m{i}"), i)).await;
    }
    let lease = a
        .log()
        .take_lease(LEASE)
        .await
        .expect("take")
        .expect("free");
    let meta = a
        .publish_snapshot(lease)
        .await
        .expect("publish")
        .expect("published");
    let conn = connect(kind).await;
    let chunk = format!("{}0", keys.chunk_prefix(meta.token, meta.n));
    conn.query::<()>(redis::cmd("SETRANGE").arg(&chunk).arg(20).arg("XX"))
        .await
        .expect("damage");
    // The log still starts at entry 1: the node loads the whole history instead.
    let whole = node(kind, &keys).await;
    assert!(whole.encoded().await == a.encoded().await);
    // Trimmed, the damaged snapshot was the only way: refused, never a wrong board.
    conn.query::<i64>(redis::cmd("XTRIM").arg(&keys.log).arg("MINID").arg("0-30"))
        .await
        .expect("trim");
    let refused = Replica::load(BoardLog::new(conn.clone(), keys.clone()), None).await;
    match refused {
        Err(ReplicaError::Unreadable(why)) => {
            assert!(
                why.contains("checksum") && why.contains("first entry"),
                "{why}"
            )
        }
        other => panic!("a damaged snapshot over a trimmed log was served: {other:?}"),
    }
}

async fn a_shorter_log_is_noticed_and_a_reload_answers_what_redis_holds(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    for _ in 0..10 {
        run(&a, incr("ann", 1)).await;
    }
    // Redis comes back from an older copy: the log holds less than A took.
    let conn = connect(kind).await;
    conn.query::<i64>(redis::cmd("DEL").arg(&keys.log).arg(&keys.head))
        .await
        .expect("del");
    let b = node(kind, &keys).await;
    run(&b, create()).await;
    run(&b, incr("ann", 3)).await;
    match a.catch_up().await {
        Err(ReplicaError::Diverged(Divergence::Shorter { head: 2, taken: 11 })) => {}
        other => panic!("the shorter log went unnoticed: {other:?}"),
    }
    // Its write is refused before anything is appended (the log does not hold its place).
    let writes = a.execute(&[incr("ann", 1)], now_us()).await;
    assert!(
        matches!(
            writes,
            Err(ReplicaError::Diverged(Divergence::Refused { after: 11 }))
        ),
        "a diverged node answered a write: {writes:?}"
    );
    // Loaded again, it answers what Redis holds (B's writes only).
    let again = node(kind, &keys).await;
    assert_eq!(score(&run(&again, incr("ann", 1)).await), 4);
}

async fn a_node_whose_clock_is_off_appends_nothing(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    let refused = a.execute(&[incr("ann", 1)], now_us() - 10_000_000).await;
    assert!(
        matches!(refused, Err(ReplicaError::Log(LogError::Skew { .. }))),
        "{refused:?}"
    );
    assert_eq!(a.catch_up().await.expect("catch up"), 1);
    assert_eq!(score(&run(&a, incr("ann", 1)).await), 1);
}

/// A node whose clock lags by half a second writes after another: its write's time is
/// the later one all the same, so equal scores rank the earlier write first.
async fn a_lagging_stamp_never_ranks_a_later_write_first(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    let lagging = node(kind, &keys).await;
    run(&a, create()).await;
    let first = a
        .execute(&[incr("first", 5)], now_us())
        .await
        .expect("execute")
        .remove(0)
        .expect("applied");
    let second = lagging
        .execute(&[incr("second", 5)], now_us() - 500_000)
        .await
        .expect("execute")
        .remove(0)
        .expect("applied");
    let (Applied::Written(f, _), Applied::Written(s, _)) = (first, second) else {
        panic!("not writes");
    };
    assert!(s.reached_at_us > f.reached_at_us, "{s:?} after {f:?}");
    assert_eq!((f.rank, s.rank), (1, 2));
}

/// Snapshots are published only under the lease, and a second taker waits for it.
async fn the_lease_guards_publishing(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    let b = node(kind, &keys).await;
    run(&a, create()).await;
    let held = a
        .log()
        .take_lease(LEASE)
        .await
        .expect("take")
        .expect("free");
    assert_eq!(b.log().take_lease(LEASE).await.expect("take"), None);
    let stale = photofinish_redis::log::snapshot::Lease {
        token: held.token - 1,
    };
    assert_eq!(
        b.publish_snapshot(stale).await.expect("publish"),
        Err(Refused::LeaseLost)
    );
    assert!(a.publish_snapshot(held).await.expect("publish").is_ok());
}

/// A node publishes a board's snapshot in the background once its log grew enough, under
/// the lease, and trims the log below it; a new node loads it (with the log below it gone).
async fn a_node_publishes_snapshots_that_new_nodes_load(kind: Kind) {
    use photofinish_core::clock::SystemClock;
    use photofinish_core::view::{ReadOptions, WriteRequest};
    use photofinish_core::Leaderboard;
    use photofinish_redis::node::LogStore;
    let ns = fresh_namespace();
    let target = redis_target(kind).await;
    let a = LogStore::connect(&target, &ns, Box::new(SystemClock))
        .await
        .expect("connect")
        .with_snapshots(100, Duration::from_millis(50));
    assert!(a
        .create_board("b", BoardConfig::default())
        .await
        .expect("create"));
    for round in 0..3 {
        let writes = (0..100)
            .map(|i| WriteRequest {
                member: format!("m{i}"),
                op: None,
                value: round * 100 + i,
                at_us: None,
                period: None,
                metadata: None,
                over_budget: None,
            })
            .collect();
        let done = a.write_batch("b", writes).await.expect("batch");
        assert!(done.iter().all(Result::is_ok));
    }
    let keys = LogKeys::new(&ns, "b");
    let log = BoardLog::new(connect(kind).await, keys.clone());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let meta = loop {
        if let Some((meta, _)) = log.read_snapshot().await.expect("read") {
            if meta.n >= 300 {
                break meta;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no snapshot published"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        log.take_lease(LEASE)
            .await
            .expect("take")
            .map(|l| l.token > 0),
        Some(true)
    );
    let conn = connect(kind).await;
    conn.query::<i64>(
        redis::cmd("XTRIM")
            .arg(&keys.log)
            .arg("MINID")
            .arg(format!("0-{}", meta.n + 1)),
    )
    .await
    .expect("trim");
    let b = LogStore::connect(&target, &ns, Box::new(SystemClock))
        .await
        .expect("connect");
    let read = ReadOptions::default();
    let pa = a.page("b", 0, 1000, &read).await.expect("page");
    let pb = b.page("b", 0, 1000, &read).await.expect("page");
    assert_eq!(pb.total, 100);
    assert_eq!(pa.entries, pb.entries);
}

photofinish_testkit::on_redis!(
    a_node_publishes_snapshots_that_new_nodes_load,
    two_nodes_answer_alike_and_converge,
    a_new_node_loads_the_snapshot_and_the_log_after_it,
    a_damaged_snapshot_is_passed_over_or_refused,
    a_shorter_log_is_noticed_and_a_reload_answers_what_redis_holds,
    a_node_whose_clock_is_off_appends_nothing,
    a_lagging_stamp_never_ranks_a_later_write_first,
    the_lease_guards_publishing,
);
