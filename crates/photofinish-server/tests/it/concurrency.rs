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
