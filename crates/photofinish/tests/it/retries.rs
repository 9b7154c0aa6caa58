//! Idempotent retries across `kill -9` (docs/SPEC.md §7): with fsync=always, a keyed write
//! that was answered is recognised after a crash and restart — its retry is answered the
//! first answer and counts nothing — because the key is in the write's own log record.

use serde_json::{json, Value};

use crate::support::*;

async fn keyed_post(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    path: &str,
    body: &Value,
) -> (u16, bool, Value) {
    let resp = http
        .post(format!("{base}{path}"))
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .expect("post");
    let status = resp.status().as_u16();
    let replayed = resp.headers().get("idempotent-replayed").is_some();
    (status, replayed, resp.json().await.expect("json"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_kill_9_counts_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let start = || Proc::start(BIN, dir.path(), "always");
    retry_after_kill_9(&start).await;
}

/// On Redis the record is set by the same script call as the write: a server killed after
/// answering leaves it for the next one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_kill_9_counts_nothing_on_redis() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = tokio::task::block_in_place(|| {
        photofinish_testkit::redis::RedisProcess::start(dir.path(), &[]).expect("redis-server")
    });
    let url = redis.url();
    let start = || Proc::start_on_storage(BIN, &url);
    retry_after_kill_9(&start).await;
}

async fn retry_after_kill_9(start: &(dyn Fn() -> Proc + Sync)) {
    let http = reqwest::Client::new();
    let proc = tokio::task::block_in_place(start);
    let base = proc.base.clone();
    let put = http
        .put(format!("{base}/v1/boards/b"))
        .json(&json!({}))
        .send()
        .await
        .expect("put");
    assert_eq!(put.status(), 201);
    let one = json!({"member": "m", "score": 7});
    let many = json!({"entries": [{"member": "m", "score": 1}, {"member": "n", "score": 2}]});
    let first = keyed_post(&http, &base, "once", "/v1/boards/b/scores", &one).await;
    assert_eq!((first.0, first.1), (200, false), "{first:?}");
    let batch = keyed_post(&http, &base, "twice", "/v1/boards/b/scores:batch", &many).await;
    assert_eq!((batch.0, batch.1), (200, false), "{batch:?}");
    tokio::task::block_in_place(|| proc.kill9());

    let proc = tokio::task::block_in_place(start);
    let base = proc.base.clone();
    let again = keyed_post(&http, &base, "once", "/v1/boards/b/scores", &one).await;
    assert_eq!((again.0, again.1, &again.2), (200, true, &first.2));
    let again = keyed_post(&http, &base, "twice", "/v1/boards/b/scores:batch", &many).await;
    assert_eq!((again.0, again.1, &again.2), (200, true, &batch.2));
    assert_eq!(
        scores(&http, &base, "b").await,
        [("m".to_owned(), 8), ("n".to_owned(), 2)]
    );
    // A new request under a used key is refused, after the restart too.
    let reused = keyed_post(
        &http,
        &base,
        "once",
        "/v1/boards/b/scores",
        &json!({"member": "m", "score": 1}),
    )
    .await;
    assert_eq!(
        (reused.0, &reused.2["error"]["code"]),
        (422, &json!("idempotency_key_reused"))
    );
}
