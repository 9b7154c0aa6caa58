//! 32 concurrent clients × 1000 increments of one member end at exactly 32,000 — on every
//! backend, and on the embedded store under each fsync policy (`everysec` and `never`
//! commit through the server's committer task instead of the writer thread).

use serde_json::json;

use crate::support::*;

async fn concurrent_increments_of_one_member_are_never_lost(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    increment_concurrently(&[&s.base], "b", "hot", 32, 1000).await;
    let (_, m) = s.get("/v1/boards/b/members/hot").await;
    assert_eq!(m["score"], 32_000);
    s.stop().await;
}

conformance!(concurrent_increments_of_one_member_are_never_lost,);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_increments_survive_every_fsync_policy_and_a_restart() {
    use photofinish_store::FsyncPolicy;
    for policy in [FsyncPolicy::EverySec, FsyncPolicy::Never] {
        let dir = tempfile::tempdir().expect("tmp");
        let storage = std::sync::Arc::new(photofinish_store::io::RealStorage);
        let s = Server::start_fsync(dir.path(), storage.clone(), policy).await;
        s.put("/v1/boards/b", json!({})).await;
        increment_concurrently(&[&s.base], "b", "hot", 32, 1000).await;
        let (_, m) = s.get("/v1/boards/b/members/hot").await;
        assert_eq!(m["score"], 32_000, "{policy:?}");
        let before = s.get("/v1/boards/b/entries").await;
        s.stop().await;
        let s = Server::start_fsync(dir.path(), storage, policy).await;
        assert_eq!(s.get("/v1/boards/b/entries").await, before, "{policy:?}");
        s.stop().await;
    }
}

/// 16 concurrent clients × 50 writes of their own members: each answer is its own write's
/// (its score, a rank), whatever a backend groups together (the embedded store's group
/// commit, Redis's many calls in flight on one connection), and every write landed once.
async fn concurrent_writes_each_get_their_own_answer(kind: Kind) {
    let s = std::sync::Arc::new(Server::start(kind).await);
    s.put("/v1/boards/b", json!({"update": "set"})).await;
    let mut tasks = Vec::new();
    for client in 0..16_i64 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for k in 0..50_i64 {
                let (member, score) = (format!("c{client}-{k}"), client * 1000 + k);
                let body = json!({"member": member, "score": score});
                let (st, w) = s.post("/v1/boards/b/scores", body).await;
                assert_eq!(st, 200, "{w}");
                assert_eq!((&w["member"], &w["score"]), (&json!(member), &json!(score)));
                assert!(w["rank"].as_u64().is_some_and(|r| r >= 1), "{w}");
            }
        }));
    }
    for t in tasks {
        t.await.expect("client");
    }
    let (_, page) = s.get("/v1/boards/b/entries?limit=1000").await;
    assert_eq!(page["total"], 800, "{page}");
    let entries = page["entries"].as_array().expect("entries");
    // Desc by score: client 15's 49th write first, and each rank is its place.
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["rank"], i + 1);
    }
    assert_eq!(entries[0]["member"], "c15-49");
    assert_eq!(entries[799]["member"], "c0-0");
    if let Ok(s) = std::sync::Arc::try_unwrap(s) {
        s.stop().await;
    }
}

conformance!(concurrent_writes_each_get_their_own_answer,);
