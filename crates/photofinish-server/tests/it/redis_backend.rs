//! What only the Redis backend has to prove: servers share one Redis and agree, a Redis
//! restart under load loses no acknowledged write (AOF, appendfsync always) and heals
//! without restarting Photofinish, a Redis that is down answers 503, and the keys read
//! naturally in a plain Redis client.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use photofinish_core::clock::ManualClock;
use photofinish_server::serve::{ServeOptions, SharedClock};
use photofinish_store::io::RealStorage;
use photofinish_testkit::redis::{RedisCluster, RedisProcess};
use serde_json::json;

use crate::support::*;

async fn two_servers_count_every_increment(kind: Kind) {
    let a = Server::start(kind).await;
    let b = a.sibling().await;
    a.put("/v1/boards/b", json!({})).await;
    increment_concurrently(&[&a.base, &b.base], "b", "hot", 32, 1000).await;
    let (ma, mb) = (
        a.get("/v1/boards/b/members/hot").await,
        b.get("/v1/boards/b/members/hot").await,
    );
    assert_eq!(ma.1["score"], 32_000);
    assert_eq!(ma, mb, "both servers answer the same");
    // Across 2^53, where a double stops holding every integer: still exact.
    let start = (1_i64 << 53) - 4_000;
    a.post(
        "/v1/boards/b/scores",
        json!({"member": "big", "score": start}),
    )
    .await;
    increment_concurrently(&[&a.base, &b.base], "b", "big", 16, 500).await;
    let (ma, mb) = (
        a.get("/v1/boards/b/members/big").await,
        b.get("/v1/boards/b/members/big").await,
    );
    assert_eq!(ma.1["score"].as_i64(), Some(start + 8_000), "{ma:?}");
    assert_eq!(ma, mb, "both servers answer the same");
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_redis_count_every_increment() {
    two_servers_count_every_increment(Kind::Redis).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_cluster_count_every_increment() {
    two_servers_count_every_increment(Kind::Cluster).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_of_the_log_layout_count_every_increment() {
    two_servers_count_every_increment(Kind::Log).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_of_the_log_layout_on_a_cluster_count_every_increment() {
    two_servers_count_every_increment(Kind::LogCluster).await
}

/// A board deleted and re-created with another config through one server is seen by the
/// other, whose cached config is stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_board_recreated_elsewhere_is_noticed() {
    let a = Server::start(Kind::Redis).await;
    let b = a.sibling().await;
    a.put("/v1/boards/r", json!({"order": "asc"})).await;
    b.post("/v1/boards/r/scores", json!({"member": "x", "score": 5}))
        .await;
    assert_eq!(a.delete("/v1/boards/r").await.0, 204);
    assert_error(
        &b.post("/v1/boards/r/scores", json!({"member": "x", "score": 5}))
            .await,
        404,
        "board_not_found",
    );
    a.put("/v1/boards/r", json!({"order": "desc", "update": "best"}))
        .await;
    for (m, v) in [("low", 1), ("high", 9)] {
        b.post("/v1/boards/r/scores", json!({"member": m, "score": v}))
            .await;
    }
    let (_, page) = b.get("/v1/boards/r/entries").await;
    assert_eq!(page["entries"][0]["member"], "high", "desc now: {page}");
    assert_eq!(b.get("/v1/boards/r").await.1["update"], "best");
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keys_hold_the_real_scores() {
    let s = Server::start(Kind::Redis).await;
    s.put("/v1/boards/pvp", json!({"reset": "daily"})).await;
    for (m, v, at) in [
        ("alice", 1500_i64, "2026-11-22T10:00:00Z"),
        ("bob", 1500, "2026-11-22T09:00:00Z"),
        ("carol", -7, "2026-11-22T11:00:00Z"),
        // One double (2^53), two exact scores: dave's is higher.
        ("erin", 9_007_199_254_740_992, "2026-11-22T08:00:00Z"),
        ("dave", 9_007_199_254_740_993, "2026-11-22T12:00:00Z"),
    ] {
        s.post(
            "/v1/boards/pvp/scores",
            json!({"member": m, "score": v, "at": at}),
        )
        .await;
    }
    let ns = s.namespace().expect("redis namespace");
    let mut c = shared_redis().client().expect("client");
    let z = format!("{ns}:{{pvp}}:p:2026-11-22:r");
    let rows: Vec<(Vec<u8>, f64)> = redis::cmd("ZREVRANGE")
        .arg(&z)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(&mut c)
        .expect("zrevrange");
    // Each member: a 14-byte tie-break, then the name; past 2^53 the exact score's 8-byte
    // key comes first, and the ZSET score is the nearest double.
    let names: Vec<(String, f64)> = rows
        .iter()
        .map(|(m, sc)| {
            let skip = if sc.abs() >= 9_007_199_254_740_992.0 {
                22
            } else {
                14
            };
            (String::from_utf8_lossy(&m[skip..]).into_owned(), *sc)
        })
        .collect();
    let two53 = 9_007_199_254_740_992.0;
    assert_eq!(
        names,
        [
            ("dave".to_owned(), two53),
            ("erin".to_owned(), two53),
            ("bob".to_owned(), 1500.0),
            ("alice".to_owned(), 1500.0),
            ("carol".to_owned(), -7.0)
        ],
        "real scores (nearest double past 2^53); equal scores first-reached first: {rows:?}"
    );
    let cfg: String = redis::cmd("GET")
        .arg(format!("{ns}:{{pvp}}:cfg"))
        .query(&mut c)
        .expect("cfg");
    assert!(cfg.contains(r#""reset":"daily""#), "{cfg}");
    let boards: Vec<String> = redis::cmd("SMEMBERS")
        .arg(format!("{ns}:boards"))
        .query(&mut c)
        .expect("registry");
    assert_eq!(boards, ["pvp"]);
    s.stop().await;
}

/// Retention by expiry: a period's keys expire when it leaves the last `retention` periods
/// (for yesterday on a daily board keeping 2: at the start of tomorrow); a board that never
/// resets keeps its keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn period_keys_expire_when_they_leave_retention() {
    let s = Server::start(Kind::Redis).await;
    s.put(
        "/v1/boards/daily",
        json!({"reset": "daily", "retention": 2}),
    )
    .await;
    s.put("/v1/boards/ever", json!({})).await;
    let yesterday = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(24)).to_string();
    let (_, w) = s
        .post(
            "/v1/boards/daily/scores",
            json!({"member": "m", "score": 1, "at": yesterday, "metadata": {"a": 1}}),
        )
        .await;
    let pid = w["period"].as_str().expect("period").to_owned();
    s.post("/v1/boards/ever/scores", json!({"member": "m", "score": 1}))
        .await;
    let ns = s.namespace().expect("namespace");
    let mut c = shared_redis().client().expect("client");
    let ttl = |c: &mut redis::Connection, key: String| -> i64 {
        redis::cmd("PTTL").arg(key).query(c).expect("pttl")
    };
    let day_ms = 24 * 3600 * 1000;
    for part in ["r", "b:0", "meta"] {
        let t = ttl(&mut c, format!("{ns}:{{daily}}:p:{pid}:{part}"));
        assert!(0 < t && t <= day_ms, "{part}: pttl {t}");
        assert_eq!(
            ttl(&mut c, format!("{ns}:{{ever}}:p:all:{part}")),
            if part == "meta" { -2 } else { -1 }
        );
    }
    s.stop().await;
}

/// Expiries are times to live from the server's clock, made into deadlines on Redis' own:
/// a server whose clock runs 30 days behind Redis' keeps what it writes (a deadline in its
/// own time would already be Redis' past: the keys would vanish at once), and one 30 days
/// ahead sets no deadline 30 days too late. Daily board keeping 3: a write in the current
/// period lives until the start of the period 3 days on, i.e. 2–3 days by either clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expiries_hold_whatever_the_servers_clock_says() {
    let day_us = 86_400_000_000_i64;
    let real_us = jiff::Timestamp::now().as_microsecond();
    for offset_days in [-30, 30] {
        let s = Server::start_at(Kind::Redis, real_us + offset_days * day_us).await;
        let (st, b) = s
            .put("/v1/boards/d", json!({"reset": "daily", "retention": 3}))
            .await;
        assert_eq!(st, 201, "{b}");
        for (m, score) in [("a", 5), ("b", 7)] {
            let (st, b) = s
                .post("/v1/boards/d/scores", json!({"member": m, "score": score}))
                .await;
            assert_eq!(st, 200, "{b}");
        }
        let (st, page) = s.get("/v1/boards/d/entries?limit=10").await;
        assert_eq!(st, 200, "{page}");
        assert_eq!(
            member_names(&page),
            ["b", "a"],
            "offset {offset_days} days: {page}"
        );
        let pid = page["period"].as_str().expect("period").to_owned();
        let ns = s.namespace().expect("namespace");
        let mut c = shared_redis().client().expect("client");
        let day_ms = day_us / 1000;
        for part in ["r", "b:0"] {
            let key = format!("{ns}:{{d}}:p:{pid}:{part}");
            let t: i64 = redis::cmd("PTTL").arg(&key).query(&mut c).expect("pttl");
            assert!(
                2 * day_ms - 60_000 < t && t <= 3 * day_ms,
                "offset {offset_days} days, {part}: pttl {t}"
            );
        }
        s.stop().await;
    }
}

/// All of a period's keys share one deadline: a later write, even one whose server clock
/// has moved on by hours (a manual clock here; a node with another clock in a fleet),
/// keeps the deadline the period's first write set instead of making its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_periods_keys_expire_together() {
    let day_us = 86_400_000_000_i64;
    let real_us = jiff::Timestamp::now().as_microsecond();
    // 00:30 UTC today: two hours later is the same daily period.
    let start_us = real_us.div_euclid(day_us) * day_us + 1_800_000_000;
    let clock = Arc::new(photofinish_core::clock::ManualClock::new(start_us));
    let s = Server::start_manual(Kind::Redis, clock.clone()).await;
    s.put("/v1/boards/d", json!({"reset": "daily", "retention": 3}))
        .await;
    let (st, w) = s
        .post("/v1/boards/d/scores", json!({"member": "a", "score": 1}))
        .await;
    assert_eq!(st, 200, "{w}");
    clock.set(start_us + 2 * 3_600_000_000);
    let (st, w2) = s
        .post(
            "/v1/boards/d/scores",
            json!({"member": "b", "score": 2, "metadata": {"k": 1}}),
        )
        .await;
    assert_eq!(st, 200, "{w2}");
    assert_eq!(w["period"], w2["period"]);
    let pid = w["period"].as_str().expect("period");
    let ns = s.namespace().expect("namespace");
    let mut c = shared_redis().client().expect("client");
    let at = |c: &mut redis::Connection, part: &str| -> i64 {
        redis::cmd("PEXPIRETIME")
            .arg(format!("{ns}:{{d}}:p:{pid}:{part}"))
            .query(c)
            .expect("pexpiretime")
    };
    let r = at(&mut c, "r");
    assert!(r > 0, "r has a deadline: {r}");
    // `meta` was first written by the later write, two server-hours on.
    assert_eq!(at(&mut c, "meta"), r, "meta");
    assert_eq!(at(&mut c, "b:0"), r, "bucket");
    s.stop().await;
}

/// Writers hammer a server while its Redis (AOF, appendfsync always) is SIGKILLed and
/// restarted. Every acknowledged increment is there afterwards; nothing unsent appeared;
/// while Redis is down writes answer 503 `storage_unavailable`; and the same Photofinish
/// process serves again once Redis is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_redis_restart_under_load_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis_dir = dir.path().to_path_buf();
    let redis = tokio::task::spawn_blocking(move || {
        RedisProcess::start(
            &redis_dir,
            &["--appendonly", "yes", "--appendfsync", "always"],
        )
        .expect("redis")
    })
    .await
    .expect("start");
    let opts = ServeOptions {
        listen: "127.0.0.1:0".into(),
        storage: Some(redis.url()),
        redis_namespace: "crash".into(),
        ..ServeOptions::default()
    };
    let s = Server::start_with(opts, Arc::new(RealStorage), Kind::Redis).await;
    s.put("/v1/boards/b", json!({})).await;
    let redis = Arc::new(Mutex::new(redis));
    let stop = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for w in 0..8 {
        let http = reqwest::Client::new();
        let url = format!("{}/v1/boards/b/scores", s.base);
        let stop = stop.clone();
        writers.push(tokio::spawn(async move {
            let (mut acked, mut sent, mut unavailable) = (0u64, 0u64, 0u64);
            while stop.load(Ordering::Relaxed) == 0 {
                sent += 1;
                let resp = http
                    .post(&url)
                    .json(&json!({"member": format!("w{w}"), "score": 1}))
                    .send()
                    .await
                    .expect("send");
                match resp.status().as_u16() {
                    200 => acked += 1,
                    503 => {
                        let body: serde_json::Value = resp.json().await.expect("json");
                        assert_eq!(body["error"]["code"], "storage_unavailable", "{body}");
                        unavailable += 1;
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    other => panic!("unexpected status {other}"),
                }
            }
            (acked, sent, unavailable)
        }));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    let r = redis.clone();
    tokio::task::spawn_blocking(move || r.lock().expect("lock").kill())
        .await
        .expect("kill");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_error(
        &s.post(
            "/v1/boards/b/scores",
            json!({"member": "probe", "score": 1}),
        )
        .await,
        503,
        "storage_unavailable",
    );
    assert_eq!(s.get("/healthz").await.1["status"], "degraded");
    let r = redis.clone();
    tokio::task::spawn_blocking(move || r.lock().expect("lock").restart().expect("restart"))
        .await
        .expect("restart");
    // The writers go on until the server is healthy again (up to 20 s), then a moment more.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while s.get("/healthz").await.1["status"] != "ok" && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(1, Ordering::Relaxed);
    let mut total_unavailable = 0;
    for (w, h) in writers.into_iter().enumerate() {
        let (acked, sent, unavailable) = h.await.expect("writer");
        total_unavailable += unavailable;
        let (st, m) = s.get(&format!("/v1/boards/b/members/w{w}")).await;
        assert_eq!(st, 200, "{m}");
        let score = m["score"].as_u64().expect("score");
        assert!(
            acked <= score && score <= sent,
            "w{w}: acked {acked} ≤ score {score} ≤ sent {sent}"
        );
        assert!(acked > 0);
    }
    assert!(total_unavailable > 0, "the outage was seen");
    assert_eq!(s.get("/healthz").await.1["status"], "ok");
    assert_eq!(
        s.post(
            "/v1/boards/b/scores",
            json!({"member": "after", "score": 1})
        )
        .await
        .0,
        200,
        "writes resume without restarting photofinish"
    );
    s.stop().await;
}

/// Every name hashes alike: each member's bucket field is then a probe chain. Writes,
/// reads, removals from the middle of a chain and growth by bucket splits all stay exact
/// (the chain code never runs with the real hash in practice; this runs it).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn names_that_share_a_hash_stay_apart() {
    use photofinish_core::clock::SystemClock;
    use photofinish_core::view::{ReadOptions, WriteRequest};
    use photofinish_core::{BoardConfig, Leaderboard, Op};
    use photofinish_redis::{RedisStore, Target};

    fn one_hash(_: &str) -> ([u8; 8], u32) {
        ([0x5a; 8], 0x5a5a_5a5a)
    }
    let target = Target::parse(&shared_redis().url()).expect("url");
    let store = RedisStore::connect(&target, &fresh_namespace(), Box::new(SystemClock))
        .await
        .expect("connect")
        .with_name_hash(one_hash);
    store
        .create_board("c", BoardConfig::default())
        .await
        .expect("create");
    let write = |m: String, v: i64| WriteRequest {
        member: m,
        op: Some(Op::Set),
        value: v,
        at_us: None,
        period: None,
        metadata: None,
        over_budget: None,
    };
    let n = 40;
    for i in 0..n {
        store
            .write("c", write(format!("m{i}"), i * 10))
            .await
            .expect("write");
    }
    let read = ReadOptions::default();
    // Out of the middle and the ends of the chain.
    for gone in [0, 17, n - 1] {
        store
            .remove("c", &format!("m{gone}"), &read.period)
            .await
            .expect("remove");
    }
    store
        .write("c", write("m5".into(), 1_000))
        .await
        .expect("update");
    let mut expected: Vec<(String, i64)> = (0..n)
        .filter(|i| ![0, 17, n - 1].contains(i))
        .map(|i| (format!("m{i}"), if i == 5 { 1_000 } else { i * 10 }))
        .collect();
    expected.sort_by_key(|e| std::cmp::Reverse(e.1));
    let page = store.page("c", 0, 100, &read).await.expect("page");
    let got: Vec<(String, i64)> = page
        .entries
        .iter()
        .map(|e| (e.member.clone(), e.score))
        .collect();
    assert_eq!(got, expected);
    for (pos, (m, v)) in expected.iter().enumerate() {
        let row = store.member("c", m, &read).await.expect("member");
        assert_eq!(
            (row.entry.rank, row.entry.score),
            (pos as u64 + 1, *v),
            "{m}"
        );
    }
    for gone in [0, 17, n - 1] {
        let e = store.member("c", &format!("m{gone}"), &read).await;
        assert!(e.is_err(), "m{gone} was removed: {e:?}");
    }
}

/// The Lua code is one Functions library (docs/redis-layout.md, "Scripts"), which a Redis
/// can lose: restarted without persistence, `FUNCTION FLUSH`, a node new to a cluster. The
/// first call that misses it loads it again — a write, a batch, a read, a remove — on every
/// primary, and a node loads only its own build's one library. On its own Redis (or
/// cluster): flushing the shared one would make other tests' calls load it again too.
async fn a_lost_library_is_loaded_again(kind: Kind) {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().to_path_buf();
    let (url, nodes) = tokio::task::spawn_blocking(move || match kind {
        Kind::Cluster => {
            let c = RedisCluster::start(&path, 3).expect("cluster");
            (c.url(), c.nodes)
        }
        _ => {
            let r = RedisProcess::start(&path, &[]).expect("redis");
            (r.url(), vec![r])
        }
    })
    .await
    .expect("start");
    let opts = ServeOptions {
        listen: "127.0.0.1:0".into(),
        storage: Some(url),
        redis_namespace: "lib".into(),
        ..ServeOptions::default()
    };
    let s = Server::start_with(opts, Arc::new(RealStorage), kind).await;
    let each_node = |cmd: &redis::Cmd| -> Vec<redis::Value> {
        nodes
            .iter()
            .map(|n| cmd.query(&mut n.client().expect("client")).expect("query"))
            .collect()
    };
    let flush = || each_node(redis::cmd("FUNCTION").arg("FLUSH"));
    assert_eq!(s.put("/v1/boards/b", json!({})).await.0, 201);
    let add = |m: &str, v: i64| json!({"member": m, "score": v});
    assert_eq!(s.post("/v1/boards/b/scores", add("ann", 5)).await.0, 200);
    // Every primary holds the one library of this build.
    for listing in each_node(redis::cmd("FUNCTION").arg("LIST")) {
        let text = format!("{listing:?}");
        assert_eq!(text.matches("photofinish_").count(), 1, "{text}");
    }
    flush();
    let batch = json!({"entries": [add("bob", 3), add("cat", 7), add("ann", 1)]});
    assert_eq!(s.post("/v1/boards/b/scores:batch", batch).await.0, 200);
    flush();
    let (st, ann) = s.get("/v1/boards/b/members/ann").await;
    assert_eq!((st.as_u16(), &ann["score"]), (200, &json!(6)), "{ann}");
    flush();
    assert_eq!(s.post("/v1/boards/b/scores", add("dan", 4)).await.0, 200);
    flush();
    assert_eq!(s.delete("/v1/boards/b/members/bob").await.0, 204);
    let (_, page) = s.get("/v1/boards/b/entries").await;
    assert_eq!(member_names(&page), ["cat", "ann", "dan"], "{page}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_library_is_loaded_again_on_redis() {
    a_lost_library_is_loaded_again(Kind::Redis).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_library_is_loaded_again_on_a_cluster() {
    a_lost_library_is_loaded_again(Kind::Cluster).await
}

/// Stamped writes never go back in time on one board, whichever server stamped them
/// (`write_fn.lua`): a server whose clock lags another's writes at the board's latest
/// instant — after the write that set it, and again after its own, which must not have
/// moved the board's clock back to its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lagging_servers_writes_take_the_boards_latest_instant() {
    const T: i64 = 1_795_400_000_000_000;
    let ahead = Server::start_at(Kind::Redis, T + 10_000_000).await;
    let url = tokio::task::spawn_blocking(|| shared_redis().url())
        .await
        .expect("url");
    let opts = ServeOptions {
        listen: "127.0.0.1:0".into(),
        storage: Some(url),
        redis_namespace: ahead.namespace().expect("namespace").into(),
        clock: SharedClock(Arc::new(ManualClock::new(T))),
        ..ServeOptions::default()
    };
    let lagging = Server::start_with(opts, Arc::new(RealStorage), Kind::Redis).await;
    ahead.put("/v1/boards/c", json!({})).await;
    let add = |m: &str| json!({"member": m, "score": 5, "op": "set"});
    let first = ahead.post("/v1/boards/c/scores", add("first")).await.1;
    assert_eq!(micros(&first["reached_at"]), T + 10_000_000, "{first}");
    for m in ["second", "third"] {
        let w = lagging.post("/v1/boards/c/scores", add(m)).await.1;
        assert_eq!(micros(&w["reached_at"]), T + 10_000_000, "{m}: {w}");
    }
    // A batch reads the board's clock once and writes it back once: its writes take the
    // later instant too, and the clock stays there, so a write after it does as well.
    let batch = json!({"entries": [add("fourth"), add("fifth")]});
    let (st, b) = lagging.post("/v1/boards/c/scores:batch", batch).await;
    assert_eq!(st, 200, "{b}");
    for w in b["results"].as_array().expect("results") {
        assert_eq!(micros(&w["reached_at"]), T + 10_000_000, "{b}");
    }
    let w = lagging.post("/v1/boards/c/scores", add("sixth")).await.1;
    assert_eq!(micros(&w["reached_at"]), T + 10_000_000, "{w}");
    let (_, page) = lagging.get("/v1/boards/c/entries").await;
    assert_eq!(
        member_names(&page),
        ["first", "second", "third", "fourth", "fifth", "sixth"],
        "{page}"
    );
    ahead.stop().await;
    lagging.stop().await;
}

/// A batch's call that fails in the middle (here a damaged metadata key answers
/// `WRONGTYPE` to its second write, after that write's entry went in) keeps what landed
/// before the failure, as Redis does, and the sequence numbers those writes took: a later
/// write with the same score and instant ranks after them (it would share a tie-break with
/// the first if the call had not written the sequence back). The failed call's writes
/// answer `storage_unavailable`: their outcome is unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_call_that_fails_midway_keeps_the_sequence_its_writes_took() {
    let s = Server::start(Kind::Redis).await;
    s.put("/v1/boards/q", json!({"order": "asc", "update": "set"}))
        .await;
    let at = "2026-11-22T10:00:00Z";
    let w = |m: &str| json!({"member": m, "score": 5, "at": at});
    s.post("/v1/boards/q/scores", w("first")).await;
    let ns = s.namespace().expect("redis namespace").to_owned();
    let meta = format!("{ns}:{{q}}:p:all:meta");
    let mut c = shared_redis().client().expect("client");
    let damage = |c: &mut redis::Connection, on: bool| {
        let cmd = if on {
            redis::cmd("SET").arg(&meta).arg("not a hash").clone()
        } else {
            redis::cmd("DEL").arg(&meta).clone()
        };
        let _: redis::Value = cmd.query(c).expect("damage");
    };
    damage(&mut c, true);
    let mut second = w("zed");
    let mut third = w("mid");
    third["metadata"] = json!({"k": 1});
    second["metadata"] = json!(null);
    let (st, b) = s
        .post(
            "/v1/boards/q/scores:batch",
            json!({"entries": [second, third]}),
        )
        .await;
    assert_eq!(st, 200, "{b}");
    for r in b["results"].as_array().expect("results") {
        assert_eq!(r["error"]["code"], "storage_unavailable", "{b}");
    }
    damage(&mut c, false);
    // "zed" and "mid"'s entry landed before the failure; "ann", written after them at the
    // same score and instant, takes the next sequence number.
    s.post("/v1/boards/q/scores", w("ann")).await;
    let (_, page) = s.get("/v1/boards/q/entries").await;
    assert_eq!(
        member_names(&page),
        ["first", "zed", "mid", "ann"],
        "{page}"
    );
    s.stop().await;
}
