//! Disk full and I/O errors over HTTP: 503 with a code, nothing changed, reads fine, and
//! writes resume when the fault clears.

use std::sync::Arc;

use photofinish_store::io::{Fault, FaultyStorage};
use photofinish_store::FsyncPolicy;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn storage_faults_answer_503_and_heal() {
    for policy in [
        FsyncPolicy::Always,
        FsyncPolicy::EverySec,
        FsyncPolicy::Never,
    ] {
        storage_faults_answer_503_and_heal_with(policy).await;
    }
}

async fn storage_faults_answer_503_and_heal_with(policy: FsyncPolicy) {
    let dir = tempfile::tempdir().expect("tmp");
    let storage = FaultyStorage::default();
    let faults = storage.faults.clone();
    let s = Server::start_fsync(dir.path(), Arc::new(storage), policy).await;
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
            "{policy:?} {fault:?}: reads changed"
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

/// At the default level a request that fails with a 5xx is logged at `warn` with its
/// request id, and one that succeeds is not logged at all.
#[tokio::test]
async fn a_failed_request_is_logged_with_its_request_id() {
    let logs = captured_logs();
    let dir = tempfile::tempdir().expect("tmp");
    let storage = FaultyStorage::default();
    let faults = storage.faults.clone();
    let s = Server::start_on(dir.path(), Arc::new(storage)).await;
    s.put("/v1/boards/b", json!({})).await;
    let send = |id: &'static str| {
        s.http
            .post(format!("{}/v1/boards/b/scores", s.base))
            .header("x-request-id", id)
            .json(&json!({"member": "a", "score": 1}))
            .send()
    };
    let ok = send("log-test-ok-7f3a").await.expect("request");
    assert_eq!(ok.status(), 200);
    faults.set(Fault::DiskFull);
    let failed = send("log-test-failed-7f3a").await.expect("request");
    assert_eq!(failed.status(), 503);
    assert_eq!(failed.headers()["x-request-id"], "log-test-failed-7f3a");
    faults.set(Fault::None);
    s.stop().await;
    let text = String::from_utf8_lossy(&logs.lock().expect("logs")).into_owned();
    let line = text
        .lines()
        .find(|l| l.contains("log-test-failed-7f3a"))
        .unwrap_or_else(|| panic!("no log line for the failed request in:\n{text}"));
    for part in [
        "WARN",
        "request failed",
        "status=503",
        "route=/v1/boards/{board}/scores",
        "method=POST",
    ] {
        assert!(line.contains(part), "{part:?} missing from {line:?}");
    }
    assert!(
        !text.contains("log-test-ok-7f3a"),
        "a 200 was logged: {text}"
    );
}
