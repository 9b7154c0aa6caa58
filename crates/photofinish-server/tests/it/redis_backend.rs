//! What only the Redis backend has to prove, in process: servers share one Redis and agree,
//! a board deleted and re-created through one is noticed by the other, and a Redis restart
//! under load loses no acknowledged write (AOF, appendfsync always) and heals without
//! restarting Photofinish, answering 503 while Redis is down. (The log's own rules:
//! redis_log.rs, redis_replica.rs; node settings: redis_scale_out.rs; real processes:
//! the binary's tests/it/scale_out.rs.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use photofinish_server::serve::ServeOptions;
use photofinish_store::io::RealStorage;
use photofinish_testkit::redis::RedisProcess;
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

/// Writers hammer a server while its Redis (AOF, appendfsync always) is SIGKILLed and
/// restarted. Every acknowledged increment is there afterwards; nothing unsent appeared;
/// while Redis is down writes answer 503 `storage_unavailable`; and the same Photofinish
/// process serves again once Redis is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_redis_restart_under_load_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis_dir = dir.path().to_path_buf();
    let redis = tokio::task::spawn_blocking(move || {
        RedisProcess::start_durable(&redis_dir).expect("redis")
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
