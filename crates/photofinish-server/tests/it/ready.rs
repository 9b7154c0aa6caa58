//! `/readyz` (docs/SPEC.md §18) on every backend: 200 `ready` with no reason while the
//! node can serve, open to anyone on a server with credentials (as `/healthz` is); on
//! Redis, 503 naming the clock while this node's clock is further from Redis's than
//! `--max-clock-skew`, and 200 once it is back within; and mixed versions: a board whose
//! log holds an entry in a format newer than this node reads (appended here as a newer
//! node would) answers 503, is never misapplied, and is named by `/readyz`, while the
//! other boards serve on. (Its 503 while the data loads, while Redis is stopped and
//! during a stop are tested through the binary.)

use std::sync::Arc;
use std::time::Duration;

use photofinish_core::clock::{Clock, ManualClock};
use photofinish_server::serve::{ServeOptions, SharedClock};
use serde_json::json;

use crate::support::*;

async fn ready_when_it_can_serve(kind: Kind) {
    let (s, _secret, _dir) = start_with_players(kind).await;
    let (status, v) = s.get("/readyz").await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v, json!({"status": "ready", "reasons": []}));
    let (status, _) = s.get("/healthz").await;
    assert_eq!(status, 200);
}

async fn not_ready_while_the_clock_is_skewed(kind: Kind) {
    let now = photofinish_core::clock::SystemClock.now_us();
    let clock = Arc::new(ManualClock::new(now - 10_000_000));
    let s = Server::start_configured(kind, |o| ServeOptions {
        clock: SharedClock(clock.clone()),
        max_clock_skew: Some(Duration::from_secs(1)),
        ..o
    })
    .await;
    let (status, v) = s.get("/readyz").await;
    assert_eq!(status, 503, "{v}");
    assert_eq!(v["status"], "not_ready");
    let reason = v["reasons"][0].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("clock:") && reason.contains("skew"),
        "{v}"
    );
    clock.set(photofinish_core::clock::SystemClock.now_us());
    let (status, v) = s.get("/readyz").await;
    assert_eq!(status, 200, "{v}");
}

async fn a_board_in_a_newer_format_is_503_and_named_by_readyz(kind: Kind) {
    use photofinish_redis::log::{BoardLog, LogKeys};
    let s = Server::start(kind).await;
    for board in ["newer", "other"] {
        let (st, v) = s.put(&format!("/v1/boards/{board}"), json!({})).await;
        assert_eq!(st, 201, "{v}");
        let write = json!({"member": "m", "score": 5});
        let (st, v) = s.post(&format!("/v1/boards/{board}/scores"), write).await;
        assert_eq!(st, 200, "{v}");
    }
    let ns = s.namespace().expect("a namespace").to_owned();
    let log = BoardLog::new(redis_conn(kind).await, LogKeys::new(&ns, "newer"));
    // An entry as a release with the next entry format writes it: its version byte first.
    let entry = vec![
        photofinish_redis::replica::ENTRY_VERSION + 1,
        0,
        0,
        0,
        1,
        7,
        7,
        7,
    ];
    log.append(None, now_us(), None, &[entry])
        .await
        .expect("appended");
    let head = log.head().await.expect("head").n;
    // A write is the first to meet it: refused, and nothing is appended after it.
    let write = json!({"member": "m", "score": 9});
    let (st, v) = s.post("/v1/boards/newer/scores", write).await;
    assert_eq!(st, 503, "{v}");
    assert_eq!(
        log.head().await.expect("head").n,
        head,
        "a write was appended"
    );
    let (st, v) = s.get("/v1/boards/newer/members/m").await;
    assert_eq!(st, 503, "{v}");
    assert_eq!(v["error"]["code"], "storage_unavailable");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("newer") && message.contains("upgrade"),
        "{v}"
    );
    let (st, v) = s.get("/v1/boards/other/members/m").await;
    assert_eq!((st.as_u16(), &v["score"]), (200, &json!(5)));
    let (st, v) = s.get("/readyz").await;
    assert_eq!(st, 503, "{v}");
    let reason = v["reasons"][0].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("board \"newer\"") && reason.contains("format 3"),
        "{v}"
    );
}

conformance!(ready_when_it_can_serve);
photofinish_testkit::on_redis!(
    not_ready_while_the_clock_is_skewed,
    a_board_in_a_newer_format_is_503_and_named_by_readyz,
);
