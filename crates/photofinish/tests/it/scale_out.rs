//! The scale-out layout's failures, end to end with real processes (docs/SPEC.md §12,
//! issue 41): `photofinish serve --storage redis://…` nodes and
//! `redis-server`, killed, stopped, restarted and rolled back under them.
//!
//! - `kill -9` of one of two nodes during concurrent increments through both: every
//!   acknowledged increment is in the totals, and a new node agrees.
//! - Redis restarted (`appendfsync always`) during writes: nothing acknowledged is lost
//!   and the nodes reconnect by themselves.
//! - A node stopped (SIGSTOP) while the other writes, then resumed, answers what the log
//!   holds.
//! - Redis restarted from an older AOF copy (a shorter log than the nodes applied): every
//!   node notices and answers what Redis now holds, and writes go on from there.
//! - A damaged snapshot chunk: a new node rebuilds the board from the whole log, or, once
//!   the log is trimmed below the snapshot, refuses the board with a clear error (503)
//!   rather than serve wrong ranks; a Redis that may evict keys is refused at start.
//! - A snapshot writer stopped (SIGSTOP) while it holds the board's lease, past the
//!   lease's end: the next holder publishes, and the stopped writer, resumed, cannot
//!   publish over it.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use photofinish_testkit::redis::RedisProcess;
use serde_json::{json, Value};

use crate::support::*;

fn redis_with_aof(dir: &Path) -> RedisProcess {
    tokio::task::block_in_place(|| RedisProcess::start_durable(dir).expect("redis"))
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(ok.success(), "kill {sig} {pid}");
}

async fn get(http: &reqwest::Client, url: &str) -> (u16, Value) {
    match http.get(url).send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.json().await.unwrap_or(Value::Null))
        }
        Err(_) => (0, Value::Null),
    }
}

/// `member`'s score on `base`, asking until the node answers 200 (it may be reconnecting).
async fn score_of(http: &reqwest::Client, base: &str, member: &str) -> i64 {
    let url = format!("{base}/v1/boards/b/members/{member}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = get(http, &url).await;
        if status == 200 {
            return body["score"].as_i64().expect("score");
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{base} never answered: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn create(http: &reqwest::Client, base: &str) {
    let put = http
        .put(format!("{base}/v1/boards/b"))
        .json(&json!({}))
        .send()
        .await
        .expect("put");
    assert!(put.status().is_success(), "{}", put.status());
}

/// Increments written by `WRITERS` tasks, round-robin over the nodes still up: how many
/// were acknowledged (a lower bound of the total) and sent (an upper bound).
struct Writers {
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicU64>,
    sent: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

const WRITERS: usize = 8;

impl Writers {
    fn start(http: &reqwest::Client, bases: &[String]) -> Writers {
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(AtomicU64::new(0));
        let sent = Arc::new(AtomicU64::new(0));
        let tasks = (0..WRITERS)
            .map(|w| {
                let (http, bases) = (http.clone(), bases.to_vec());
                let (stop, acked, sent) = (stop.clone(), acked.clone(), sent.clone());
                tokio::spawn(async move {
                    let mut i = w;
                    while !stop.load(Ordering::SeqCst) {
                        let base = &bases[i % bases.len()];
                        i += 1;
                        sent.fetch_add(1, Ordering::SeqCst);
                        let r = http
                            .post(format!("{base}/v1/boards/b/scores"))
                            .json(&json!({"member": "hot", "op": "incr", "score": 1}))
                            .timeout(Duration::from_secs(10))
                            .send()
                            .await;
                        match r {
                            Ok(resp) if resp.status() == 200 => {
                                acked.fetch_add(1, Ordering::SeqCst);
                            }
                            // A node down or reconnecting: the outcome is unknown (counted
                            // as sent); try the next node after a pause.
                            _ => tokio::time::sleep(Duration::from_millis(20)).await,
                        }
                    }
                })
            })
            .collect();
        Writers {
            stop,
            acked,
            sent,
            tasks,
        }
    }

    /// Stops them: (acknowledged, sent).
    async fn stop(self) -> (u64, u64) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.tasks {
            t.await.expect("writer");
        }
        (
            self.acked.load(Ordering::SeqCst),
            self.sent.load(Ordering::SeqCst),
        )
    }
}

/// Waits until `n` more increments were acknowledged (the writers are past a point).
async fn until_acked(w: &Writers, n: u64) {
    let target = w.acked.load(Ordering::SeqCst) + n;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while w.acked.load(Ordering::SeqCst) < target {
        assert!(tokio::time::Instant::now() < deadline, "writes stalled");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_of_one_node_loses_no_acknowledged_increment() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = redis_with_aof(dir.path());
    let http = reqwest::Client::new();
    let (a, b) = (
        redis_node(&redis.url(), "k9"),
        redis_node(&redis.url(), "k9"),
    );
    create(&http, &a.base).await;
    let w = Writers::start(&http, &[a.base.clone(), b.base.clone()]);
    until_acked(&w, 300).await;
    tokio::task::block_in_place(|| a.kill9());
    // The survivor goes on taking writes (the writers' turns at the dead node fail).
    until_acked(&w, 300).await;
    let (acked, sent) = w.stop().await;
    let total = score_of(&http, &b.base, "hot").await;
    assert!(
        (acked as i64..=sent as i64).contains(&total),
        "total {total}, acknowledged {acked}, sent {sent}"
    );
    let c = redis_node(&redis.url(), "k9");
    assert_eq!(
        score_of(&http, &c.base, "hot").await,
        total,
        "a new node agrees"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_redis_restart_during_writes_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut redis = redis_with_aof(dir.path());
    let http = reqwest::Client::new();
    let (a, b) = (
        redis_node(&redis.url(), "rr"),
        redis_node(&redis.url(), "rr"),
    );
    create(&http, &a.base).await;
    let w = Writers::start(&http, &[a.base.clone(), b.base.clone()]);
    until_acked(&w, 300).await;
    tokio::task::block_in_place(|| redis.restart()).expect("restart");
    // The nodes reconnect by themselves: writes are acknowledged again.
    until_acked(&w, 300).await;
    let (acked, sent) = w.stop().await;
    let (ta, tb) = (
        score_of(&http, &a.base, "hot").await,
        score_of(&http, &b.base, "hot").await,
    );
    assert_eq!(ta, tb, "the nodes disagree");
    assert!(
        (acked as i64..=sent as i64).contains(&ta),
        "total {ta}, acknowledged {acked}, sent {sent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_stopped_for_a_while_catches_up() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = redis_with_aof(dir.path());
    let http = reqwest::Client::new();
    let (a, b) = (
        redis_node(&redis.url(), "st"),
        redis_node(&redis.url(), "st"),
    );
    create(&http, &a.base).await;
    assert_eq!(write_n(&http, &a.base, 10).await, 10);
    assert_eq!(score_of(&http, &b.base, "hot").await, 10);
    signal(b.pid(), "-STOP");
    assert_eq!(write_n(&http, &a.base, 2_000).await, 2_010);
    tokio::time::sleep(Duration::from_millis(500)).await;
    signal(b.pid(), "-CONT");
    assert_eq!(score_of(&http, &b.base, "hot").await, 2_010);
    // And it writes from where the log is.
    assert_eq!(write_n(&http, &b.base, 1).await, 2_011);
    assert_eq!(score_of(&http, &a.base, "hot").await, 2_011);
}

/// Increments `hot` by `n` in batches; its score after.
async fn write_n(http: &reqwest::Client, base: &str, n: usize) -> i64 {
    let mut last = 0;
    for start in (0..n).step_by(1_000) {
        let entries: Vec<Value> = (start..n.min(start + 1_000))
            .map(|_| json!({"member": "hot", "op": "incr", "score": 1}))
            .collect();
        let r = http
            .post(format!("{base}/v1/boards/b/scores:batch"))
            .json(&json!({ "entries": entries }))
            .send()
            .await
            .expect("batch");
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.expect("json");
        last = body["results"]
            .as_array()
            .and_then(|a| a.last())
            .and_then(|r| r["score"].as_i64())
            .unwrap_or_else(|| panic!("{body}"));
    }
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_redis_rolled_back_to_an_older_aof_is_noticed() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut redis = redis_with_aof(dir.path());
    let http = reqwest::Client::new();
    let (a, b) = (
        redis_node(&redis.url(), "rb"),
        redis_node(&redis.url(), "rb"),
    );
    create(&http, &a.base).await;
    assert_eq!(write_n(&http, &a.base, 100).await, 100);
    // Copy Redis's files as they are now (stopped, so the copy is whole).
    let older = tempfile::tempdir().expect("tmp");
    tokio::task::block_in_place(|| {
        redis.kill();
        copy_dir(dir.path(), older.path());
        redis.restart().expect("restart");
    });
    assert_eq!(score_of(&http, &a.base, "hot").await, 100);
    assert_eq!(write_n(&http, &a.base, 50).await, 150);
    assert_eq!(score_of(&http, &b.base, "hot").await, 150);
    // Redis comes back from the older copy: a shorter log than both nodes applied.
    tokio::task::block_in_place(|| {
        redis.kill();
        std::fs::remove_dir_all(dir.path().join("appendonlydir")).expect("rm");
        copy_dir(older.path(), dir.path());
        redis.restart().expect("restart");
    });
    assert_eq!(
        score_of(&http, &b.base, "hot").await,
        100,
        "B served a lost tail"
    );
    assert_eq!(
        score_of(&http, &a.base, "hot").await,
        100,
        "A served a lost tail"
    );
    // Writes go on from what Redis holds, on both.
    assert_eq!(write_n(&http, &a.base, 5).await, 105);
    assert_eq!(write_n(&http, &b.base, 5).await, 110);
}

fn copy_dir(from: &Path, to: &Path) {
    for e in walk(from) {
        let rel = e.strip_prefix(from).expect("under");
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&e, &dest).expect("copy");
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A damaged snapshot chunk is never served: while the log still starts at its first
/// entry, a new node passes the snapshot over and rebuilds the board from the whole log;
/// once the log is trimmed below the snapshot (done here as a publish does past 10,000
/// commands), a new node refuses the board with a clear error (503) instead of serving
/// ranks the log does not support. The node that holds the board goes on serving it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_damaged_snapshot_chunk_is_never_served() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis =
        tokio::task::block_in_place(|| RedisProcess::start(dir.path(), &[]).expect("redis"));
    let http = reqwest::Client::new();
    let a = redis_node(&redis.url(), "ds");
    create(&http, &a.base).await;
    // 9 batches of 1,000 writes with 600 bytes of metadata each: past the 4 MiB of log that
    // make a snapshot due, below the 10,000 commands a trim keeps (the log stays whole).
    let entries = 9_000;
    let metadata = json!({"pad": "x".repeat(590)});
    for _ in 0..9 {
        let batch: Vec<Value> = (0..1_000)
            .map(|_| json!({"member": "hot", "op": "incr", "score": 1, "metadata": metadata}))
            .collect();
        let r = http
            .post(format!("{}/v1/boards/b/scores:batch", a.base))
            .json(&json!({ "entries": batch }))
            .send()
            .await
            .expect("batch");
        assert_eq!(r.status(), 200);
    }
    let mut c = redis.client().expect("client");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let (prefix, n) = loop {
        if let Some((_, n, prefix)) = published(&mut c, "ds") {
            break (prefix, n);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no snapshot published"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    redis::cmd("SETRANGE")
        .arg(format!("{prefix}0"))
        .arg(100)
        .arg("damage")
        .query::<i64>(&mut c)
        .expect("damage");
    let whole = redis_node(&redis.url(), "ds");
    assert_eq!(
        score_of(&http, &whole.base, "hot").await,
        entries as i64,
        "a node that passed the damaged snapshot over"
    );
    let _: i64 = redis::cmd("XTRIM")
        .arg("ds:{b}:log")
        .arg("MINID")
        .arg(format!("0-{}", n + 1))
        .query(&mut c)
        .expect("trim");
    let fresh = redis_node(&redis.url(), "ds");
    let (status, body) = get(&http, &format!("{}/v1/boards/b/members/hot", fresh.base)).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "storage_unavailable");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("checksum"), "{message}");
    assert_eq!(score_of(&http, &a.base, "hot").await, entries as i64);
}

/// Stops node `pid` (SIGSTOP) the moment the lease of board `b` under `ns` appears in Redis,
/// from a thread of its own polling it: the lease's token, or `None` if none appeared
/// within `within`. Redis pauses writes while the signal is sent, so the node's snapshot
/// writes sent meanwhile stay unanswered until it is resumed.
fn stop_when_leased(
    mut c: redis::Connection,
    ns: &str,
    pid: u32,
    within: Duration,
) -> std::thread::JoinHandle<Option<u64>> {
    let key = format!("{ns}:{{b}}:lease");
    std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            let token: Option<u64> = redis::cmd("GET").arg(&key).query(&mut c).expect("get");
            if let Some(token) = token {
                // Redis holds the node's writes (chunks, publish) for the millisecond
                // `kill` takes to start; the node stops with them unanswered.
                let _: () = redis::cmd("CLIENT")
                    .arg("PAUSE")
                    .arg(10_000)
                    .arg("WRITE")
                    .query(&mut c)
                    .expect("pause");
                signal(pid, "-STOP");
                let _: () = redis::cmd("CLIENT")
                    .arg("UNPAUSE")
                    .query(&mut c)
                    .expect("unpause");
                return Some(token);
            }
        }
        None
    })
}

/// The published snapshot's token, entry and chunk prefix, if one is published.
fn published(c: &mut redis::Connection, ns: &str) -> Option<(u64, u64, String)> {
    let got: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(format!("{ns}:{{b}}:snap"))
        .arg("token")
        .arg("n")
        .arg("prefix")
        .query(c)
        .expect("snap");
    match &got[..] {
        [Some(t), Some(n), Some(p)] => Some((t.parse().ok()?, n.parse().ok()?, p.clone())),
        _ => None,
    }
}

/// The TTLs of the keys that match `pattern`.
fn ttls(c: &mut redis::Connection, pattern: &str) -> Vec<i64> {
    let keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query(c).expect("keys");
    keys.iter()
        .map(|k| redis::cmd("TTL").arg(k).query(c).expect("ttl"))
        .collect()
}

/// A snapshot writer stopped (SIGSTOP) while it holds the board's lease, until past the
/// lease's end, cannot publish over the next holder's. Node A is stopped the moment its
/// lease appears in Redis (before its publish; a round whose publish won the race is run
/// again); the lease's 60 s then pass (`PEXPIRE`: the key goes as it would when its time
/// runs out); node B loads the board, takes the next lease and publishes. A, resumed,
/// finishes writing and its publish is refused for the lost lease (counted in
/// `photofinish_redis_snapshots_total{outcome="lease_lost"}`): the published snapshot
/// stays B's, A's chunks expire, and a new node loads B's snapshot and answers as A does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_snapshot_writer_paused_past_its_lease_cannot_publish() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis =
        tokio::task::block_in_place(|| RedisProcess::start(dir.path(), &[]).expect("redis"));
    // An attempt counts only if node A, resumed, reached its publish: one stopped while a
    // request was out finds it timed out on resume (or learns of B's snapshot first) and
    // publishes nothing, which proves nothing about the fence — try again afresh.
    for attempt in 0..4 {
        if paused_writer_attempt(&redis, &format!("pl{attempt}")).await {
            return;
        }
    }
    panic!("node A never reached its publish after being resumed");
}

/// The value of metric line `line` (labels included) in `text`, 0 if absent.
fn metric_value(text: &str, line: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(line).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(0)
}

/// One attempt of [`a_snapshot_writer_paused_past_its_lease_cannot_publish`] under
/// namespace `ns`: `false` if node A, resumed, ended its snapshot before its publish.
async fn paused_writer_attempt(redis: &RedisProcess, ns: &str) -> bool {
    let http = reqwest::Client::new();
    let a = redis_node(&redis.url(), ns);
    create(&http, &a.base).await;
    let mut c = redis.client().expect("client");
    let metadata = json!({"pad": "x".repeat(200)});
    let mut caught = None;
    for round in 0..5 {
        // About 2.5 MB of log: short of the 4 MiB that make a snapshot due at once, past
        // the 1 MiB that make it due when the board goes quiet (within two looks).
        for batch in 0..10 {
            let entries: Vec<Value> = (0..1_000)
                .map(|i| {
                    json!({"member": format!("m{round}.{batch}.{i}"), "score": i,
                           "metadata": metadata})
                })
                .collect();
            let r = http
                .post(format!("{}/v1/boards/b/scores:batch", a.base))
                .json(&json!({ "entries": entries }))
                .send()
                .await
                .expect("batch");
            assert_eq!(r.status(), 200);
        }
        let before = published(&mut c, ns).map(|(t, _, _)| t);
        let watcher = stop_when_leased(
            redis.client().expect("client"),
            ns,
            a.pid(),
            Duration::from_secs(60),
        );
        let token = tokio::task::block_in_place(|| watcher.join().expect("watcher"))
            .expect("node A never took the lease");
        if published(&mut c, ns).map(|(t, _, _)| t) == before {
            eprintln!("node A stopped holding lease {token} (round {round})");
            caught = Some(token);
            break;
        }
        // Its publish won the race with the stop: let it go on, and try again.
        signal(a.pid(), "-CONT");
    }
    let token_a = caught.expect("node A was never stopped before its publish");
    // The lease's time runs out while A is stopped.
    let lease = format!("{ns}:{{b}}:lease");
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(&lease)
        .arg(1)
        .query(&mut c)
        .expect("pexpire");
    let b = redis_node(&redis.url(), ns);
    let (status, _) = get(&http, &format!("{}/v1/boards/b/members/m0.0.1", b.base)).await;
    assert_eq!(status, 200, "node B loads the board");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let (token_b, n_b, prefix_b) = loop {
        match published(&mut c, ns) {
            Some(p) if p.0 > token_a => break p,
            _ => {}
        }
        assert!(
            std::time::Instant::now() < deadline,
            "node B never published"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    signal(a.pid(), "-CONT");
    // A finishes its snapshot attempt; its publish is refused.
    let outcome = |o: &str| format!("photofinish_redis_snapshots_total{{outcome=\"{o}\"}}");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (status, metrics) = match http.get(format!("{}/metrics", a.base)).send().await {
            Ok(r) => (r.status().as_u16(), r.text().await.unwrap_or_default()),
            Err(_) => (0, String::new()),
        };
        if status == 200 && metric_value(&metrics, &outcome("lease_lost")) == 1 {
            break;
        }
        let before_publish = ["skipped", "failed"]
            .iter()
            .map(|o| metric_value(&metrics, &outcome(o)))
            .sum::<u64>();
        if status == 200 && before_publish > 0 {
            eprintln!("node A ended its snapshot before its publish; another attempt");
            assert_eq!(
                published(&mut c, ns),
                Some((token_b, n_b, prefix_b)),
                "the published snapshot is still B's"
            );
            return false;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "node A's publish was never refused: {metrics}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        published(&mut c, ns),
        Some((token_b, n_b, prefix_b.clone())),
        "the published snapshot is still B's"
    );
    assert!(
        ttls(&mut c, &format!("{prefix_b}*"))
            .iter()
            .all(|t| *t == -1),
        "B's chunks are kept"
    );
    let a_chunks = ttls(&mut c, &format!("{ns}:{{b}}:snap:{token_a}.*"));
    assert!(
        !a_chunks.is_empty() && a_chunks.iter().all(|t| *t > 0),
        "A's chunks expire: {a_chunks:?}"
    );
    let fresh = redis_node(&redis.url(), ns);
    let want = scores(&http, &a.base, "b").await;
    assert!(want.len() >= 10_000, "{} members", want.len());
    assert_eq!(scores(&http, &fresh.base, "b").await, want);
    true
}

/// The scale-out flags are checked at start: a Redis that may evict keys is refused,
/// and so are the Redis flags without Redis, and a skew of 0.
#[test]
fn serve_refuses_an_evicting_redis_and_flags_out_of_place() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis =
        RedisProcess::start(dir.path(), &["--maxmemory-policy", "volatile-lru"]).expect("redis");
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--resp-listen", "off"])
            .args(args)
            .output()
            .expect("run");
        assert!(!out.status.success(), "{args:?} served");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let url = redis.url();
    let why = run(&["--storage", &url]);
    assert!(why.contains("maxmemory-policy volatile-lru"), "{why}");
    let why = run(&["--redis-reads", "local"]);
    assert!(why.contains("are for --storage redis"), "{why}");
    let why = run(&["--redis-wait", "1"]);
    assert!(why.contains("are for --storage redis"), "{why}");
    let why = run(&["--max-clock-skew", "0s"]);
    assert!(why.contains("must be over 0"), "{why}");
}
