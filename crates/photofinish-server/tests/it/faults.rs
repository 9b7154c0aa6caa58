//! Disk full and I/O errors over HTTP: 503 with a code, nothing changed, reads fine, and
//! writes resume when the fault clears.

use std::sync::Arc;

use photofinish_store::io::{Fault, FaultyStorage};
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn storage_faults_answer_503_and_heal() {
    let dir = tempfile::tempdir().expect("tmp");
    let storage = FaultyStorage::default();
    let faults = storage.faults.clone();
    let s = Server::start_on(dir.path(), Arc::new(storage)).await;
    s.put("/v1/boards/b", json!({})).await;
    s.post("/v1/boards/b/scores", json!({"member": "a", "score": 10}))
        .await;
    for fault in [Fault::DiskFull, Fault::IoError] {
        faults.set(fault);
        let before = s.get("/v1/boards/b/entries").await;
        assert_error(
            &s.post("/v1/boards/b/scores", json!({"member": "a", "score": 5}))
                .await,
            503,
            "storage_unavailable",
        );
        assert_error(
            &s.post("/v1/boards/b/scores", json!({"member": "new", "score": 5}))
                .await,
            503,
            "storage_unavailable",
        );
        assert_error(
            &s.put("/v1/boards/other", json!({})).await,
            503,
            "storage_unavailable",
        );
        assert_eq!(
            s.get("/v1/boards/b/entries").await,
            before,
            "{fault:?}: reads changed"
        );
        assert_eq!(s.get("/healthz").await.1["status"], "degraded");
        faults.set(Fault::None);
        let (st, w) = s
            .post("/v1/boards/b/scores", json!({"member": "a", "score": 1}))
            .await;
        assert_eq!(st, 200, "{w}");
        assert_eq!(s.get("/healthz").await.1["status"], "ok");
    }
    assert_eq!(s.get("/v1/boards/b/members/a").await.1["score"], 12);
    assert_error(
        &s.get("/v1/boards/b/members/new").await,
        404,
        "member_not_found",
    );
    s.stop().await;
}
