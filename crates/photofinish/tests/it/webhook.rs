//! The period-close webhook across `kill -9` (docs/webhooks.md): the real binary, its clock
//! set seconds before a UTC midnight (`--clock-offset-us`), posts a daily board's
//! period to a receiver that fails; killed before any post succeeded, then started again,
//! it posts that period once more, and the receiver's 2xx ends it — the period was owed
//! through the log, not through anything in memory.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use photofinish_testkit::receiver::Receiver;
use serde_json::json;

use crate::support::*;

const DAY_US: i64 = 86_400_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_owed_post_survives_sigkill() {
    let dir = tempfile::tempdir().expect("tmp");
    let http = reqwest::Client::new();
    let r = Receiver::start(&[503; 1000]).await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .expect("clock");
    // The server's clock reads 12 s before the next UTC midnight: room for a slow machine
    // to start it, make the board and write before the day ends.
    let midnight = (now / DAY_US + 1) * DAY_US;
    let offset = (midnight - 12_000_000 - now).to_string();
    let args = [
        "--clock-offset-us",
        offset.as_str(),
        "--webhook-secret",
        "k",
    ];
    let proc = tokio::task::block_in_place(|| Proc::start_with(BIN, dir.path(), &args));
    let board = json!({"reset": "daily", "update": "set", "webhook": r.url});
    let put = http
        .put(format!("{}/v1/boards/d", proc.base))
        .json(&board)
        .send()
        .await
        .expect("put");
    assert_eq!(put.status(), 201);
    let score = json!({"member": "ann", "score": 7});
    let post = http
        .post(format!("{}/v1/boards/d/scores", proc.base))
        .json(&score)
        .send()
        .await
        .expect("score");
    assert_eq!(post.status(), 200);
    let written: serde_json::Value = post.json().await.expect("json");
    let day_before = jiff::Timestamp::from_microsecond(midnight - 1)
        .expect("instant")
        .strftime("%Y-%m-%d")
        .to_string();
    assert_eq!(
        written["period"],
        day_before.as_str(),
        "written before midnight"
    );
    // The day ends; the first attempt fails; the server dies before any succeeds.
    let failed = r.wait_for(1, Duration::from_secs(40)).await;
    let key = failed[0].header("idempotency-key").expect("key").to_owned();
    assert_eq!(failed[0].status, 503);
    tokio::task::block_in_place(|| proc.kill9());
    let tried = r.received().len();
    r.answer(&[]);

    let proc = tokio::task::block_in_place(|| Proc::start_with(BIN, dir.path(), &args));
    let got = r.wait_for(tried + 1, Duration::from_secs(30)).await;
    let last = got.last().expect("a post");
    assert_eq!(last.status, 200);
    assert_eq!(last.header("idempotency-key"), Some(key.as_str()));
    assert_eq!(
        key,
        format!("d/{}", last.json()["period"].as_str().expect("period"))
    );
    assert_eq!(last.json()["entries"][0]["member"], "ann");
    assert_eq!(last.json()["entries"][0]["score"], 7);
    // Delivered: nothing more.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(r.received().len(), got.len());
    drop(proc);
}
