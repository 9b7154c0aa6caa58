//! The Redis backend's node settings (docs/SPEC.md §12), through HTTP: `--redis-reads local`
//! answers from the node's copy for at most `LOCAL_READ_WINDOW` after it caught up, and
//! counts how it answered in the metrics; `--redis-wait N` answers 503 (outcome unknown)
//! when the replicas do not confirm, with the write in the log all the same; a Redis that
//! may evict keys is refused at start; an idle board leaves the node's memory and loads
//! again on its next use; a RESP pipeline of reads on one node sees every write another
//! node acknowledged before the pipeline was sent, and the pipeline's own writes; an entry
//! of a newer format makes its board (only it) answer 503 until the node is upgraded.

use std::sync::Arc;
use std::time::Duration;

use photofinish_core::clock::SystemClock;
use photofinish_core::op::ReadBoard;
use photofinish_core::{BoardConfig, BoardName, RunRead};
use photofinish_redis::node::{LogStore, Reads, LOCAL_READ_WINDOW};
use photofinish_redis::Target;
use photofinish_server::serve::ServeOptions;
use photofinish_store::io::RealStorage;
use photofinish_testkit::redis::RedisProcess;
use photofinish_testkit::server::fresh_namespace;
use serde_json::json;

use crate::support::*;

/// The value of the metric line that starts with `name` (labels included), 0 if absent.
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(0.0)
}

async fn metrics(s: &Server) -> String {
    match s.get("/metrics").await {
        (status, serde_json::Value::String(text)) if status == 200 => text,
        other => panic!("metrics: {other:?}"),
    }
}

async fn score(s: &Server, member: &str) -> i64 {
    let (status, body) = s.get(&format!("/v1/boards/b/members/{member}")).await;
    assert_eq!(status, 200, "{body}");
    body["score"].as_i64().expect("score")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_reads_lag_at_most_the_window_and_are_counted() {
    let a = Server::start(Kind::Redis).await;
    let b = a
        .sibling_with(|o| ServeOptions {
            redis_reads: Reads::Local,
            ..o
        })
        .await;
    a.put("/v1/boards/b", json!({})).await;
    for round in 1..=5 {
        a.post(
            "/v1/boards/b/scores",
            json!({"member": "ann", "op": "incr", "score": 1}),
        )
        .await;
        // Acknowledged on A; a window later, B's copy is either fresh or caught up first.
        tokio::time::sleep(LOCAL_READ_WINDOW + Duration::from_millis(20)).await;
        assert_eq!(
            score(&b, "ann").await,
            round,
            "a local read older than the window"
        );
    }
    // Reads in a row: those within the window answer from B's copy, without Redis.
    let mut local = 0.0;
    for _ in 0..200 {
        score(&b, "ann").await;
        local += metric(
            &metrics(&b).await,
            "photofinish_redis_reads_total{answered=\"local\"}",
        );
        if local > 0.0 {
            break;
        }
    }
    assert!(local > 0.0, "no read answered from the node's copy");
    let text = metrics(&b).await;
    assert!(
        text.contains("photofinish_redis_read_staleness_max_seconds"),
        "{text}"
    );
    // A's reads are fresh ones: each caught up with the log.
    a.get("/v1/boards/b/members/ann").await;
    let text = metrics(&a).await;
    assert!(
        metric(
            &text,
            "photofinish_redis_reads_total{answered=\"caught_up\"}"
        ) > 0.0
    );
    assert_eq!(
        metric(&text, "photofinish_redis_reads_total{answered=\"local\"}"),
        0.0
    );
    a.stop().await;
    b.stop().await;
}

/// One catch-up serves a pipelined round's reads (they began when the round arrived):
/// each round sent to node B after node A acknowledged a write sees that write in every
/// read, and a read after a write of the same round sees that one too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pipelined_reads_see_every_write_acknowledged_before_the_round() {
    let a = Server::start(Kind::Redis).await;
    let b = a.sibling_with(|o| o).await;
    a.put("/v1/boards/b", json!({})).await;
    let mut conn = resp(&b).await;
    for round in 1..=30i64 {
        a.post(
            "/v1/boards/b/scores",
            json!({"member": "ann", "op": "incr", "score": 1}),
        )
        .await;
        let mut pipe = redis::pipe();
        for _ in 0..8 {
            pipe.cmd("LB.SCORE").arg("b").arg("ann");
        }
        pipe.cmd("LB.INCR").arg("b").arg("bob").arg(2);
        pipe.cmd("LB.SCORE").arg("b").arg("bob");
        for _ in 0..8 {
            pipe.cmd("LB.RANK").arg("b").arg("ann");
        }
        let got: Vec<i64> = pipe.query_async(&mut conn).await.expect("pipeline");
        assert!(
            got[..8].iter().all(|s| *s == round),
            "round {round}: a read missed A's write: {got:?}"
        );
        assert_eq!((got[8], got[9]), (2 * round, 2 * round), "round {round}");
        // Bob's 2 a round keep him ahead of ann's 1: she is second.
        assert!(got[10..].iter().all(|r| *r == 2), "round {round}: {got:?}");
    }
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_wait_answers_503_when_replicas_do_not_confirm() {
    let dir = tempfile::tempdir().expect("tmp");
    let (primary, mut replica) = tokio::task::spawn_blocking({
        let dir = dir.path().to_path_buf();
        move || {
            let primary = RedisProcess::start(&dir.join("primary"), &[]).expect("primary");
            let port = primary.port.to_string();
            let replica =
                RedisProcess::start(&dir.join("replica"), &["--replicaof", "127.0.0.1", &port])
                    .expect("replica");
            (primary, replica)
        }
    })
    .await
    .expect("start");
    let opts = ServeOptions {
        listen: "127.0.0.1:0".into(),
        resp_listen: None,
        storage: Some(primary.url()),
        redis_namespace: fresh_namespace(),
        redis_wait: 1,
        ..ServeOptions::default()
    };
    let s = Server::start_with(opts, Arc::new(RealStorage), Kind::Redis).await;
    // The replica syncs first: until then WAIT answers 0.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _) = s.put("/v1/boards/b", json!({})).await;
        if status == 200 || status == 201 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the replica never confirmed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let write = json!({"member": "ann", "op": "incr", "score": 1});
    assert_eq!(s.post("/v1/boards/b/scores", write.clone()).await.0, 200);
    // No replica: the write is in the log, but unconfirmed — 503, outcome unknown.
    tokio::task::spawn_blocking(move || {
        replica.kill();
        replica
    })
    .await
    .map(drop)
    .expect("kill");
    let refused = s.post("/v1/boards/b/scores", write.clone()).await;
    assert_error(&refused, 503, "storage_unavailable");
    let message = refused.1["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("outcome is unknown"), "{message}");
    assert_eq!(
        score(&s, "ann").await,
        2,
        "the unconfirmed write is in the log"
    );
    s.stop().await;
    drop(primary);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_may_evict_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = tokio::task::spawn_blocking({
        let dir = dir.path().to_path_buf();
        move || RedisProcess::start(&dir, &["--maxmemory-policy", "allkeys-lru"]).expect("redis")
    })
    .await
    .expect("start");
    let target = Target::parse(&redis.url()).expect("url");
    let refused = LogStore::connect(&target, &fresh_namespace(), Box::new(SystemClock)).await;
    let why = refused
        .expect_err("an evicting redis was taken")
        .to_string();
    assert!(why.contains("maxmemory-policy allkeys-lru"), "{why}");
    let mut c = redis.client().expect("client");
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query::<()>(&mut c)
        .expect("config set");
    LogStore::connect(&target, &fresh_namespace(), Box::new(SystemClock))
        .await
        .expect("noeviction is taken");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_board_leaves_memory_and_loads_again() {
    let target = Target::parse(&shared_redis().url()).expect("url");
    let node = LogStore::connect(&target, &fresh_namespace(), Box::new(SystemClock))
        .await
        .expect("connect")
        .with_idle_drop(Duration::from_secs(1), Duration::from_millis(50));
    node.create_board("b", BoardConfig::default())
        .await
        .expect("create");
    assert_eq!(node.loaded(), 1);
    // Read every 20 ms for over two idle periods: a board in use stays (a stall of the
    // test's thread up to a whole idle period is tolerated).
    let board = BoardName::parse("b").expect("a board name");
    for _ in 0..120 {
        node.read(&ReadBoard {
            board: board.clone(),
        })
        .await
        .expect("board");
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(node.loaded(), 1, "a board read every 20 ms was dropped");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while node.loaded() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the idle board stayed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let read = node.read(&ReadBoard { board }).await.expect("board");
    assert_eq!(read.name, "b");
    assert_eq!(node.loaded(), 1);
}

/// An entry written by a newer build (its format version past this build's) makes this
/// node answer 503 for that board — the node that held it and a new one alike — and
/// never a state without it; the namespace's other boards answer as before.
async fn an_entry_of_a_newer_format_makes_only_its_board_unavailable(kind: Kind) {
    use photofinish_redis::log::{BoardLog, LogKeys};
    use photofinish_redis::replica::ENTRY_VERSION;
    let a = Server::start(kind).await;
    for board in ["b", "other"] {
        a.put(&format!("/v1/boards/{board}"), json!({})).await;
        a.post(
            &format!("/v1/boards/{board}/scores"),
            json!({"member": "ann", "score": 5}),
        )
        .await;
    }
    assert_eq!(score(&a, "ann").await, 5);
    let ns = a.namespace().expect("redis").to_owned();
    let log = BoardLog::new(
        photofinish_testkit::server::redis_conn(kind).await,
        LogKeys::new(&ns, "b"),
    );
    let newer = vec![ENTRY_VERSION + 1, 0, 0, 0, 0];
    log.append(None, crate::support::now_us(), None, &[newer])
        .await
        .expect("append");
    let b = a.sibling_with(|o| o).await;
    for node in [&a, &b] {
        let got = node.get("/v1/boards/b/members/ann").await;
        assert_eq!(got.0, 503, "{got:?}");
        assert_eq!(got.1["error"]["code"], "storage_unavailable", "{got:?}");
        let message = got.1["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("log entry is in format {}", ENTRY_VERSION + 1))
                && message.contains("upgrade this node"),
            "{message}"
        );
        let other = node.get("/v1/boards/other/members/ann").await;
        assert_eq!(other.0, 200, "{other:?}");
        assert_eq!(other.1["score"], 5);
    }
    a.stop().await;
    b.stop().await;
}

photofinish_testkit::on_redis!(an_entry_of_a_newer_format_makes_only_its_board_unavailable);
