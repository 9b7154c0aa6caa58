//! Board replicas over a board's log in Redis (`photofinish_redis::replica`,
//! docs/redis-layout.md), standalone and a 3-master cluster: two nodes writing one board at
//! once answer each increment with a distinct score and end byte-identical; a new node
//! loads the snapshot and the log after it (even once the log below it is trimmed); a
//! damaged snapshot is passed over for the whole log, or refused when the log no longer
//! holds it; a node whose log came back shorter notices, and a reload answers what Redis
//! holds; a node whose clock is off appends nothing; a lagging node's stamp never ranks
//! its write ahead of an earlier one; callers that go away mid-append leave every other
//! caller answered; of two nodes, one publishes each snapshot; a quiet board is due for
//! one once its log grew a little; an import's chunks go once the log is trimmed past the
//! entry that took it, and expire if no entry took it; concurrent creates on two nodes stop at the board limit.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{now_us, Changes};
use photofinish_core::op::{LoggedWrite, ReadPage};
use photofinish_core::view::ReadOptions;
use photofinish_core::{BoardConfig, BoardName, Op, RunRead};
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
async fn node(kind: Kind, keys: &LogKeys) -> Arc<Replica> {
    let log = BoardLog::new(connect(kind).await, keys.clone());
    Arc::new(
        Replica::load(
            log,
            Some(photofinish_redis::log::SkewBound {
                max_us: 5_000_000,
                offset_us: 0,
            }),
        )
        .await
        .expect("load"),
    )
}

/// A node (the `Leaderboard` service) on `target` under namespace `ns`, on the system clock.
async fn log_store(
    target: &photofinish_redis::Target,
    ns: &str,
) -> photofinish_redis::node::LogStore {
    photofinish_redis::node::LogStore::connect(
        target,
        ns,
        Box::new(photofinish_core::clock::SystemClock),
    )
    .await
    .expect("connect")
}

fn create() -> (Command, bool) {
    (
        Command::from(photofinish_store::command::CreateBoard {
            board: "b".into(),
            config: BoardConfig::default().checked().expect("valid config"),
            max_boards: None,
            hidden: Vec::new(),
        }),
        false,
    )
}

fn incr(member: &str, by: i64) -> (Command, bool) {
    (
        Command::Write(LoggedWrite {
            board: "b".into(),
            member: member.into(),
            op: Some(Op::Incr),
            scores: photofinish_core::columns::ScoreInput::Score(by),
            at_us: 0,
            period_us: None,
            metadata: None,
            over_budget: None,
            partition: None,
            team: None,
        }),
        true,
    )
}

/// The one answer of executing `cmd` on `r` now.
async fn run(r: &Arc<Replica>, cmd: (Command, bool)) -> Applied {
    let mut got = r.execute(&[cmd], now_us()).await.expect("execute");
    got.remove(0).expect("applied")
}

fn score(a: &Applied) -> i64 {
    match a {
        Applied::Written(w) => w.outcome.score(),
        other => panic!("not a write: {other:?}"),
    }
}

async fn two_nodes_answer_alike_and_converge(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    let b = node(kind, &keys).await;
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

/// Publishes `r`'s snapshot under the board's lease (free), then gives the lease back.
async fn publish(
    r: &Arc<Replica>,
) -> Result<Result<photofinish_redis::log::snapshot::SnapshotMeta, Refused>, ReplicaError> {
    let lease = r
        .log()
        .take_lease(LEASE)
        .await
        .expect("take")
        .expect("free");
    let published = r.publish_snapshot(lease).await;
    r.log().release_lease(lease).await.expect("release");
    published
}

/// Trims the board's log below entry `first_kept`, as a publish's trim does.
async fn trim_below(conn: &Conn, keys: &LogKeys, first_kept: u64) {
    conn.query::<i64>(
        redis::cmd("XTRIM")
            .arg(&keys.log)
            .arg("MINID")
            .arg(format!("0-{first_kept}")),
    )
    .await
    .expect("trim");
}

async fn a_new_node_loads_the_snapshot_and_the_log_after_it(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    for i in 0..100 {
        run(&a, incr(&format!("m{}", i % 7), i)).await;
    }
    let meta = publish(&a).await.expect("publish").expect("published");
    assert_eq!(meta.n, 101);
    for i in 0..20 {
        run(&a, incr("late", i)).await;
    }
    // Below the snapshot the log is no longer needed: trim it all.
    let conn = connect(kind).await;
    trim_below(&conn, &keys, meta.n + 1).await;
    let c = node(kind, &keys).await;
    assert_eq!(c.taken().await, 121);
    assert!(
        c.encoded().await == a.encoded().await,
        "the new node differs"
    );
    // And it writes on from there.
    assert_eq!(score(&run(&c, incr("late", 1)).await), 191);
}

/// Mixed versions (docs/SPEC.md §18, docs/redis-layout.md "Versions"): in a namespace at
/// the log layout's first format (`log`) a node publishes snapshots in format 4
/// (`PFSNAP12`), which nodes of the previous release read; once `photofinish upgrade` moved
/// the namespace to `log-v2`, in format 5 (`PFSNAP13`). A new node loads either as the
/// board was. In a namespace at a format this release does not know it publishes nothing.
async fn snapshots_follow_the_namespace_format(kind: Kind) {
    let ns = fresh_namespace();
    let keys = LogKeys::new(&ns, "b");
    let conn = connect(kind).await;
    let mark = |format: &'static str| {
        let cmd = redis::cmd("SET").arg(&keys.format).arg(format).to_owned();
        let conn = &conn;
        async move { conn.query::<()>(&cmd).await.expect("mark") }
    };
    mark("log").await;
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    let mut published = Vec::new();
    for (round, format) in [(0, "log"), (1, "log-v2")] {
        if round == 1 {
            let report =
                photofinish_redis::upgrade_log::upgrade_to_log(&redis_target(kind).await, &ns)
                    .await
                    .expect("upgrade");
            assert_eq!(report.moved_from.as_deref(), Some("log"), "{report:?}");
        }
        for i in 0..40 {
            run(&a, incr(&format!("m{}", i % 9), i - 20)).await;
        }
        let meta = publish(&a).await.expect("publish").expect("published");
        let (read, bytes) = a.log().read_snapshot().await.expect("read").expect("one");
        assert_eq!(read.n, meta.n);
        let (version, magic) = match format {
            "log" => (4, b"PFSNAP12"),
            _ => (5, b"PFSNAP13"),
        };
        assert_eq!(
            (meta.version, &bytes[..8]),
            (version, &magic[..]),
            "{format}"
        );
        let found: String = conn
            .query(redis::cmd("GET").arg(&keys.format))
            .await
            .expect("format");
        assert_eq!(found, format);
        // Below the snapshot the log is not needed: a new node loads the snapshot.
        trim_below(&conn, &keys, meta.n).await;
        let b = node(kind, &keys).await;
        assert!(
            b.encoded().await == a.encoded().await,
            "{format}: the new node differs"
        );
        published.push(meta.n);
    }
    mark("log-v3").await;
    run(&a, incr("late", 1)).await;
    let refused = publish(&a).await;
    assert!(
        matches!(&refused, Err(ReplicaError::Unreadable(why)) if why.contains("log-v3")),
        "{refused:?}"
    );
    let (still, _) = a.log().read_snapshot().await.expect("read").expect("one");
    assert_eq!(
        still.n, published[1],
        "nothing published at an unknown format"
    );
}

async fn a_damaged_snapshot_is_passed_over_or_refused(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    for i in 0..60 {
        run(&a, incr(&format!("m{i}"), i)).await;
    }
    let meta = publish(&a).await.expect("publish").expect("published");
    let conn = connect(kind).await;
    let chunk = format!("{}0", keys.chunk_prefix(meta.token, meta.n));
    conn.query::<()>(redis::cmd("SETRANGE").arg(&chunk).arg(20).arg("XX"))
        .await
        .expect("damage");
    // The log still starts at entry 1: the node loads the whole history instead.
    let whole = node(kind, &keys).await;
    assert!(whole.encoded().await == a.encoded().await);
    // Trimmed, the damaged snapshot was the only way: refused, never a wrong board.
    trim_below(&conn, &keys, 30).await;
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
    let (Applied::Written(f), Applied::Written(s)) = (first, second) else {
        panic!("not writes");
    };
    let (f, s) = (f.outcome, s.outcome);
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
    use photofinish_core::op::WriteRequest;
    let ns = fresh_namespace();
    let target = redis_target(kind).await;
    let a = log_store(&target, &ns)
        .await
        .with_snapshots(100, Duration::from_millis(50));
    assert!(a
        .create_board("b", BoardConfig::default())
        .await
        .expect("create"));
    // One write at a time: each its own entry (a batch is one entry).
    for round in 0..3 {
        for i in 0..100 {
            let w = WriteRequest {
                member: photofinish_core::MemberName::parse(format!("m{i}")).expect("name"),
                op: None,
                scores: photofinish_core::columns::ScoreInput::Score(round * 100 + i),
                at_us: None,
                period: None,
                metadata: None,
                over_budget: None,
                partition: None,
                team: None,
            };
            a.write("b", w).await.expect("write");
        }
    }
    let keys = LogKeys::new(&ns, "b");
    let log = BoardLog::new(connect(kind).await, keys.clone());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let meta = loop {
        if let Some((meta, _)) = log.read_snapshot().await.expect("read") {
            if meta.n >= 200 {
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
    trim_below(&conn, &keys, meta.n + 1).await;
    let b = log_store(&target, &ns).await;
    let read = page("b", 1000);
    let pa = a.read(&read).await.expect("page");
    let pb = b.read(&read).await.expect("page");
    assert_eq!(pb.total, 100);
    assert_eq!(pa.entries, pb.entries);
}

/// Callers that go away while their group is appended (their task aborted at every point
/// of the call) leave every other caller answered, and the node's copy equal to what the
/// log holds.
async fn callers_that_go_away_leave_the_others_answered(kind: Kind) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    let mut kept = Vec::new();
    let mut aborted = Vec::new();
    for t in 0..120usize {
        let r = a.clone();
        let task = tokio::spawn(async move { r.execute(&[incr("hot", 1)], now_us()).await });
        if t % 3 == 0 {
            for _ in 0..(t % 7) {
                tokio::task::yield_now().await;
            }
            task.abort();
            aborted.push(task);
        } else {
            kept.push(task);
        }
    }
    let answered = kept.len() as i64;
    for t in kept {
        let got = t
            .await
            .expect("task")
            .expect("a caller that stayed was answered");
        assert!(got[0].is_ok(), "{got:?}");
    }
    for t in aborted {
        let _ = t.await;
    }
    // Whatever the aborted calls did, the copy is what the log holds.
    let taken = a.catch_up().await.expect("catch up");
    let fresh = node(kind, &keys).await;
    assert_eq!(fresh.taken().await, taken);
    assert!(
        a.encoded().await == fresh.encoded().await,
        "the copies differ"
    );
    let total = score(&run(&fresh, incr("hot", 0)).await);
    assert!(
        total <= 120,
        "more increments counted than were sent: {total}"
    );
    assert!(total >= answered, "an answered increment is missing");
}

/// Two nodes that hold a board: once its log grew enough, one of them publishes the
/// snapshot, and the other learns of it instead of publishing its own.
async fn one_node_publishes_each_snapshot(kind: Kind) {
    let ns = fresh_namespace();
    let target = redis_target(kind).await;
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let n = log_store(&target, &ns)
            .await
            .with_snapshots(100, Duration::from_millis(50));
        nodes.push(n);
    }
    nodes[0]
        .create_board("b", BoardConfig::default())
        .await
        .expect("create");
    for i in 0..150 {
        nodes[i % 2]
            .write("b", write(&format!("m{i}"), 1))
            .await
            .expect("write");
    }
    let conn = connect(kind).await;
    let keys = LogKeys::new(&ns, "b");
    let log = BoardLog::new(conn.clone(), keys.clone());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while log.published_n().await.expect("published") == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no snapshot published"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Twenty more looks of each node: none publishes again (nothing new is due).
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // The published snapshot is the first lease's (a later lease, if one was taken, found
    // it published and published nothing).
    let token: u64 = conn
        .query(redis::cmd("HGET").arg(&keys.snap).arg("token"))
        .await
        .expect("token");
    assert_eq!(token, 1, "the snapshot was published more than once");
}

fn write(member: &str, value: i64) -> photofinish_core::op::WriteRequest {
    photofinish_core::op::WriteRequest {
        member: photofinish_core::MemberName::parse(member).expect("name"),
        op: Some(Op::Incr),
        scores: photofinish_core::columns::ScoreInput::Score(value),
        at_us: None,
        period: None,
        metadata: None,
        over_budget: None,
        partition: None,
        team: None,
    }
}

struct Rows(Vec<photofinish_core::transfer::ImportRow>);

/// Fifty rows to import: `imported0` … `imported49`, scored 1,000 … 1,049.
fn imported_rows() -> Rows {
    Rows(
        (0..50)
            .map(|i| photofinish_core::transfer::ImportRow {
                member: format!("imported{i}"),
                scores: photofinish_core::transfer::ImportScores::Score(1_000 + i),
                reached_at_us: None,
                metadata: None,
                hidden: false,
                partition: None,
                team: None,
            })
            .collect(),
    )
}

#[async_trait::async_trait]
impl photofinish_core::transfer::ImportSource for Rows {
    async fn next_chunk(
        &mut self,
    ) -> Result<Option<Vec<photofinish_core::transfer::ImportRow>>, photofinish_core::BoardError>
    {
        Ok((!self.0.is_empty()).then(|| std::mem::take(&mut self.0)))
    }
}

/// An import's ranking is in Redis until no node can take the entry that names it: the
/// snapshot whose trim passes that entry deletes its chunks, and a node loaded after
/// still answers the imported ranks (from the snapshot).
async fn an_imports_chunks_go_when_the_log_is_trimmed_past_it(kind: Kind) {
    use photofinish_core::{Leaderboard, PeriodRef};
    use photofinish_redis::log::snapshot::KEEP_COMMANDS;
    let ns = fresh_namespace();
    let target = redis_target(kind).await;
    let a = log_store(&target, &ns)
        .await
        .with_snapshots(1_000, Duration::from_millis(50));
    a.create_board("b", BoardConfig::default())
        .await
        .expect("create");
    let imported = a
        .import(
            &BoardName::parse("b").expect("name"),
            &PeriodRef::Current,
            &mut imported_rows(),
            "test",
        )
        .await
        .expect("import");
    assert_eq!(imported.entries, 50);
    let conn = connect(kind).await;
    let keys = LogKeys::new(&ns, "b");
    let listed = || async {
        conn.query::<Vec<(String, f64)>>(
            redis::cmd("ZRANGE")
                .arg(&keys.imported)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES"),
        )
        .await
        .expect("imported")
    };
    let taken = listed().await;
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(taken[0].1, 2.0, "the import is marked taken at its entry");
    let chunk = format!("{}0", keys.import_prefix(1));
    let exists = |k: String| {
        let conn = conn.clone();
        async move {
            conn.query::<i64>(redis::cmd("EXISTS").arg(k))
                .await
                .expect("exists")
        }
    };
    assert_eq!(exists(chunk.clone()).await, 1);
    let ttl: i64 = conn
        .query(redis::cmd("TTL").arg(&chunk))
        .await
        .expect("ttl");
    assert_eq!(ttl, -1, "the append that took the import kept its chunks");
    // Past KEEP_COMMANDS more commands, a snapshot trims the log past the import's entry.
    // One write at a time: each its own entry (a batch is one entry).
    for i in 0..KEEP_COMMANDS + 2_000 {
        a.write("b", write(&format!("m{}", i % 1_000), 1))
            .await
            .expect("write");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while exists(chunk.clone()).await == 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the import's chunks stayed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(listed().await.is_empty());
    let b = log_store(&target, &ns).await;
    let top = b.read(&page("b", 1)).await.expect("page");
    assert_eq!(top.entries[0].member, "imported49");
}

/// An import whose entry is never appended (here its node's clock is an hour off, so the
/// append is refused) leaves its chunks to expire, listed nowhere; the board is as it was.
async fn an_import_never_appended_leaves_chunks_that_expire(kind: Kind) {
    use photofinish_core::{Leaderboard, PeriodRef};
    use photofinish_redis::log::snapshot::UNPUBLISHED_CHUNK_TTL;
    let ns = fresh_namespace();
    let target = redis_target(kind).await;
    let a = log_store(&target, &ns).await;
    a.create_board("b", BoardConfig::default())
        .await
        .expect("create");
    // A clock an hour slow that does not say so (an `OffsetClock` declares its offset,
    // which the skew check takes off).
    struct Slow;
    impl photofinish_core::clock::Clock for Slow {
        fn now_us(&self) -> i64 {
            photofinish_core::clock::SystemClock.now_us() - 3_600_000_000
        }
    }
    let off = photofinish_redis::node::LogStore::connect(&target, &ns, Box::new(Slow))
        .await
        .expect("connect");
    let refused = off
        .import(
            &BoardName::parse("b").expect("name"),
            &PeriodRef::Current,
            &mut imported_rows(),
            "test",
        )
        .await
        .expect_err("an import appended with a skewed clock");
    assert!(refused.to_string().contains("clock skew"), "{refused}");
    let conn = connect(kind).await;
    let keys = LogKeys::new(&ns, "b");
    let ttl: i64 = conn
        .query(redis::cmd("TTL").arg(format!("{}0", keys.import_prefix(1))))
        .await
        .expect("ttl");
    assert!(
        (1..=UNPUBLISHED_CHUNK_TTL.as_secs() as i64).contains(&ttl),
        "the chunks expire: TTL {ttl}"
    );
    let listed: i64 = conn
        .query(redis::cmd("ZCARD").arg(&keys.imported))
        .await
        .expect("zcard");
    assert_eq!(listed, 0);
    let page = a.read(&page("b", 10)).await.expect("page");
    assert_eq!(page.total, 0, "the import is not in the board");
    // An append naming an import whose chunks are gone appends nothing.
    let log = BoardLog::new(conn.clone(), keys.clone());
    let head = log.head().await.expect("head");
    let tail = photofinish_redis::log::Tail {
        n: head.n,
        check: head.check.clone(),
    };
    let gone = log
        .append_group(
            "g-gone",
            Some(&tail),
            now_us(),
            None,
            &["imp99.2"],
            &[b"x".to_vec()],
        )
        .await;
    assert!(
        matches!(gone, Err(LogError::ImportGone(ref f)) if f == "imp99.2"),
        "{gone:?}"
    );
    assert_eq!(log.head().await.expect("head"), head);
}

/// Hides everywhere through two nodes at once stop exactly at the limit of 10,000, and a
/// refused one changes nothing (docs/SPEC.md §12, §15): each is one entry of the
/// namespace's lifecycle log, decided where it is applied. Before, the set was checked
/// (`SCARD`) and changed (`SADD`) apart: 40 hides at 9,990 accepted 10 and refused 30, yet
/// the set held 10,001. The namespace starts as an earlier release left it — its board
/// registry and hidden set as Redis sets — which the first node takes into the lifecycle
/// log.
async fn hides_everywhere_on_two_nodes_stop_exactly_at_the_limit(kind: Kind) {
    use photofinish_core::config::MAX_HIDDEN_MEMBERS;
    use photofinish_core::{Leaderboard, MemberName};
    let ns = fresh_namespace();
    let target = redis_target(kind).await;
    let conn = connect(kind).await;
    // A node of the earlier release marked the namespace's format at its first connect,
    // then kept its sets (a connect of this one does the marking alike).
    drop(log_store(&target, &ns).await);
    let already = MAX_HIDDEN_MEMBERS - 10;
    let names: Vec<String> = (0..already).map(|i| format!("old{i:05}")).collect();
    conn.query::<i64>(redis::cmd("SADD").arg(format!("{ns}:hidden")).arg(&names))
        .await
        .expect("sadd");
    conn.query::<i64>(redis::cmd("SADD").arg(format!("{ns}:boards")).arg("listed"))
        .await
        .expect("sadd");
    let nodes = [
        Arc::new(log_store(&target, &ns).await),
        Arc::new(log_store(&target, &ns).await),
    ];
    // Taken in, and the sets gone.
    assert_eq!(nodes[1].board_names().await.expect("names"), ["listed"]);
    for set in ["hidden", "boards"] {
        let left: i64 = conn
            .query(redis::cmd("EXISTS").arg(format!("{ns}:{set}")))
            .await
            .expect("exists");
        assert_eq!(left, 0, "{set}");
    }
    nodes[0]
        .create_board("b", BoardConfig::default())
        .await
        .expect("create");
    let mut tasks = Vec::new();
    for i in 0..40 {
        let n = nodes[i % 2].clone();
        tasks.push(tokio::spawn(async move {
            let m = MemberName::parse(format!("new{i:02}")).expect("name");
            n.hide_everywhere(&m, true, "test").await
        }));
    }
    let (mut accepted, mut refused) = (0, 0);
    for t in tasks {
        match t.await.expect("task") {
            Ok(true) => accepted += 1,
            Err(photofinish_core::BoardError::TooManyHidden(_)) => refused += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((accepted, refused), (10, 30));
    // Every node, and the board, holds exactly the limit.
    let hidden = photofinish_core::op::ReadHidden {
        board: BoardName::parse("b").expect("name"),
        offset: 0,
        limit: 0,
    };
    for n in &nodes {
        let page = n.read(&hidden).await.expect("hidden");
        assert_eq!(page.total, MAX_HIDDEN_MEMBERS as u64);
    }
    // Undone once, there is room for one more.
    let first = MemberName::parse("old00000").expect("name");
    assert!(nodes[1]
        .hide_everywhere(&first, false, "test")
        .await
        .expect("unhide"));
    let last = MemberName::parse("new99").expect("name");
    assert!(nodes[0]
        .hide_everywhere(&last, true, "test")
        .await
        .expect("hide"));
}

/// Creates on two nodes at once stop at the board limit: each name is registered in the
/// namespace's lifecycle log, and the limit decided where that entry is applied.
async fn concurrent_creates_on_two_nodes_stop_at_the_limit(kind: Kind) {
    use photofinish_core::Leaderboard;
    let ns = fresh_namespace();
    let target = redis_target(kind).await;
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let n = log_store(&target, &ns).await.with_max_boards(Some(5));
        nodes.push(Arc::new(n));
    }
    let mut tasks = Vec::new();
    for i in 0..12 {
        let n = nodes[i % 2].clone();
        tasks.push(tokio::spawn(async move {
            n.create_board(&format!("b{i}"), BoardConfig::default())
                .await
        }));
    }
    let mut created = 0;
    for t in tasks {
        match t.await.expect("task") {
            Ok(true) => created += 1,
            Err(photofinish_core::BoardError::TooManyBoards(5)) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(created, 5);
    assert_eq!(nodes[1].board_names().await.expect("boards").len(), 5);
    // A deleted board frees its place.
    let any = nodes[0].board_names().await.expect("boards")[0].clone();
    nodes[0].delete_board(&any).await.expect("delete");
    assert!(nodes[1]
        .create_board("late", BoardConfig::default())
        .await
        .expect("create"));
    assert!(matches!(
        nodes[0].create_board("later", BoardConfig::default()).await,
        Err(photofinish_core::BoardError::TooManyBoards(5))
    ));
}

/// An entry is a group of commands: a snapshot's trim keeps the entries that hold the
/// last 10,000 commands (not 10,000 entries), so a log of large groups shrinks to a few.
async fn a_trim_keeps_the_entries_of_the_last_commands(kind: Kind) {
    use photofinish_redis::log::snapshot::KEEP_COMMANDS;
    let ns = fresh_namespace();
    let target = redis_target(kind).await;
    let a = log_store(&target, &ns)
        .await
        .with_snapshots(1, Duration::from_millis(50));
    a.create_board("b", BoardConfig::default())
        .await
        .expect("create");
    for round in 0..30 {
        let batch = (0..1_000)
            .map(|i| write(&format!("m{}", round * 1_000 + i), 1))
            .collect();
        a.write_batch("b", batch).await.expect("batch");
    }
    let log = BoardLog::new(connect(kind).await, LogKeys::new(&ns, "b"));
    let head = log.head().await.expect("head").n;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while log.published_n().await.expect("published") < head {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no snapshot at the head"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let conn = connect(kind).await;
    let len: u64 = conn
        .query(redis::cmd("XLEN").arg(LogKeys::new(&ns, "b").log))
        .await
        .expect("xlen");
    // 30 entries of 1,000 writes: the last 10 hold the last 10,000 commands.
    assert_eq!(len, KEEP_COMMANDS / 1_000, "{head} entries, {len} kept");
}

/// A board that went quiet (no entry taken between two looks) is due for a snapshot once
/// its log grew by `SNAPSHOT_QUIET_LOG_BYTES`, though neither the entry count nor the
/// last snapshot's size says so: the log a load leaves is not replayed by later nodes.
async fn a_quiet_board_is_due_once_its_log_grew_a_little(kind: Kind) {
    use photofinish_redis::replica::{SNAPSHOT_MIN_LOG_BYTES, SNAPSHOT_QUIET_LOG_BYTES};
    let keys = LogKeys::new(&fresh_namespace(), "b");
    let a = node(kind, &keys).await;
    run(&a, create()).await;
    let group = |g: usize| -> Vec<(Command, bool)> {
        (0..1_000)
            .map(|i| incr(&format!("member-{g:04}-{i:06}"), 1))
            .collect()
    };
    let mut g = 0;
    // Short of the quiet threshold: two looks with nothing taken between are not due.
    a.execute(&group(g), now_us()).await.expect("execute");
    g += 1;
    assert!(!a.snapshot_due(u64::MAX).await.expect("due"));
    assert!(!a.snapshot_due(u64::MAX).await.expect("due"));
    let log = BoardLog::new(connect(kind).await, keys.clone());
    let bytes = |entries: Vec<photofinish_redis::log::Entry>| -> u64 {
        entries.iter().map(|e| e.payload.len() as u64).sum()
    };
    while bytes(log.read(0, 10_000).await.expect("read")) < SNAPSHOT_QUIET_LOG_BYTES {
        a.execute(&group(g), now_us()).await.expect("execute");
        g += 1;
    }
    let grown = bytes(log.read(0, 10_000).await.expect("read"));
    assert!(grown < SNAPSHOT_MIN_LOG_BYTES, "{grown} bytes: due by size");
    // A look that finds new entries is not quiet; the next one, with none, is due.
    assert!(!a.snapshot_due(u64::MAX).await.expect("due"));
    assert!(a.snapshot_due(u64::MAX).await.expect("due"));
    let photofinish_redis::replica::Snapshotted::Published(meta) =
        a.snapshot(LEASE).await.expect("snapshot")
    else {
        panic!("not published")
    };
    assert_eq!(meta.n, a.taken().await);
    // Published: quiet again, nothing new is due.
    assert!(!a.snapshot_due(u64::MAX).await.expect("due"));
    assert!(!a.snapshot_due(u64::MAX).await.expect("due"));
}

photofinish_testkit::on_redis!(
    a_quiet_board_is_due_once_its_log_grew_a_little,
    a_trim_keeps_the_entries_of_the_last_commands,
    callers_that_go_away_leave_the_others_answered,
    one_node_publishes_each_snapshot,
    an_imports_chunks_go_when_the_log_is_trimmed_past_it,
    an_import_never_appended_leaves_chunks_that_expire,
    concurrent_creates_on_two_nodes_stop_at_the_limit,
    hides_everywhere_on_two_nodes_stop_exactly_at_the_limit,
    a_node_publishes_snapshots_that_new_nodes_load,
    two_nodes_answer_alike_and_converge,
    a_new_node_loads_the_snapshot_and_the_log_after_it,
    snapshots_follow_the_namespace_format,
    a_damaged_snapshot_is_passed_over_or_refused,
    a_shorter_log_is_noticed_and_a_reload_answers_what_redis_holds,
    a_node_whose_clock_is_off_appends_nothing,
    a_lagging_stamp_never_ranks_a_later_write_first,
    the_lease_guards_publishing,
);

/// The first `limit` rows of `board`'s current period.
fn page(board: &str, limit: u64) -> ReadPage {
    ReadPage {
        board: BoardName::parse(board).expect("a board name"),
        offset: 0,
        limit,
        options: ReadOptions::default(),
    }
}
