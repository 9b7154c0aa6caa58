//! A league's close across `kill -9` (docs/SPEC.md §14, docs/competitions.md): the real
//! binary, its clock set seconds before a UTC midnight with `PHOTOFINISH_CLOCK_OFFSET_US`
//! and its close steps made small (`PHOTOFINISH_CLOSE_STEP_MEMBERS`), holds a league
//! period of 400 cohorts; killed while the close is under way (some moves made, the
//! period not yet closed), then started again, it finishes the close — every cohort's
//! top five moved up exactly once — and the member that arrived in the new day while it
//! waited takes its cohort in its new tier; killed again once the moves are made, while
//! the period's grants (docs/SPEC.md §16: ranks 1 to 3 of each cohort) are being made, and
//! started again, they are made once — 1,200, each to a cohort's top three, none twice. On the embedded store and on a standalone
//! Redis (where the node's clock-skew check takes the same offset off its stamps, so
//! writes are not refused as skewed).

use std::collections::HashSet;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::support::*;

const DAY_US: i64 = 86_400_000_000;
/// Members: 400 cohorts of 50.
const MEMBERS: i64 = 20_000;

/// The server with its clock at `offset`, on the embedded store in `dir` or, given
/// `redis`, on that Redis (the data directory then holds nothing).
fn start(dir: &std::path::Path, offset: &str, redis: Option<&str>) -> Proc {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--fsync",
        "always",
        "--data-dir",
    ])
    .arg(dir)
    .env("PHOTOFINISH_CLOCK_OFFSET_US", offset)
    .env("PHOTOFINISH_CLOSE_STEP_MEMBERS", "50");
    if let Some(url) = redis {
        cmd.args(["--storage", url]);
    }
    Proc::spawn_command(cmd)
}

/// A 200 answer's JSON.
async fn get(http: &reqwest::Client, url: &str) -> Value {
    let r = http.get(url).send().await.expect("get");
    assert_eq!(r.status(), 200, "{url}");
    r.json().await.expect("json")
}

async fn moves(http: &reqwest::Client, base: &str, period: &str, offset: u64) -> Value {
    get(
        http,
        &format!("{base}/v1/boards/l/periods/{period}/moves?offset={offset}&limit=1000"),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_close_killed_midway_completes_once_after_restart() {
    close_killed_midway(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_close_killed_midway_completes_once_after_restart_on_redis() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis =
        photofinish_testkit::redis::RedisProcess::start(dir.path(), &[]).expect("redis-server");
    close_killed_midway(Some(&redis.url())).await;
}

async fn close_killed_midway(redis: Option<&str>) {
    let dir = tempfile::tempdir().expect("tmp");
    let http = reqwest::Client::new();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .expect("clock");
    // The server's clock reads 15 s before the next UTC midnight: room to start it, make
    // the board and import before the day ends.
    let midnight = (now / DAY_US + 1) * DAY_US;
    let offset = (midnight - 15_000_000 - now).to_string();
    let proc = tokio::task::block_in_place(|| start(dir.path(), &offset, redis));
    let board = json!({"reset": "daily", "cohort_size": 50,
        "league": {"tiers": ["bronze", "silver"], "promote": 5, "demote": 0},
        "rewards": [{"from": 1, "to": 3, "reward": "gold"}]});
    let put = http
        .put(format!("{}/v1/boards/l", proc.base))
        .json(&board)
        .send()
        .await
        .expect("put");
    assert_eq!(put.status(), 201);
    // m00000 scores 0 … m19999 scores 19,999: cohorts fill in rank order, so cohort k
    // holds ranks 50(k−1)+1 … 50k, and its top five go up at the close.
    let lines: String = (0..MEMBERS)
        .map(|i| format!("{{\"member\":\"m{i:05}\",\"score\":{i}}}\n"))
        .collect();
    let import = http
        .post(format!("{}/v1/boards/l/import", proc.base))
        .header("content-type", "application/x-ndjson")
        .body(lines)
        .send()
        .await
        .expect("import");
    assert_eq!(import.status(), 200, "{:?}", import.text().await);
    let day = jiff::Timestamp::from_microsecond(midnight - 1)
        .expect("instant")
        .strftime("%Y-%m-%d")
        .to_string();
    let promoted: HashSet<String> = (0..MEMBERS)
        .filter(|s| (MEMBERS - 1 - s) % 50 < 5)
        .map(|i| format!("m{i:05}"))
        .collect();
    assert_eq!(promoted.len(), 2_000);

    // The day ends; the close runs in 400 small steps. Kill the server midway.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let m = moves(&http, &proc.base, &day, 0).await;
        let made = m["total"].as_u64().expect("total");
        if m["closed"] == json!(true) {
            panic!("the close ended before it was seen under way ({made} moves)");
        }
        if made > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the close never began");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // The best member plays in the new day: it waits for its tier.
    let write = http
        .post(format!("{}/v1/boards/l/scores", proc.base))
        .json(&json!({"member": "m19999", "score": 1}))
        .send()
        .await
        .expect("write");
    assert_eq!(write.status(), 200);
    let cohort = http
        .get(format!("{}/v1/boards/l/members/m19999/cohort", proc.base))
        .send()
        .await
        .expect("cohort");
    // A node in the middle of a league's close is ready (docs/SPEC.md §18).
    let ready = http
        .get(format!("{}/readyz", proc.base))
        .send()
        .await
        .expect("readyz");
    let still = moves(&http, &proc.base, &day, 0).await;
    tokio::task::block_in_place(|| proc.kill9());
    assert_eq!(ready.status(), 200, "readyz during the close");
    assert_eq!(
        still["closed"],
        json!(false),
        "the close ended before the kill: nothing was proven"
    );
    assert_eq!(cohort.status(), 409, "m19999 waits for the close");

    // Started again: the close goes on from its last logged step. Once every move is made
    // (the period reads closed) the grants are being made, a cohort a step: killed again
    // then, before they are readable.
    let proc = tokio::task::block_in_place(|| start(dir.path(), &offset, redis));
    let rewards = format!("{}/v1/boards/l/periods/{day}/rewards?limit=1", proc.base);
    let deadline = Instant::now() + Duration::from_secs(60);
    while moves(&http, &proc.base, &day, 0).await["closed"] != json!(true) {
        assert!(Instant::now() < deadline, "the moves never ended");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let before = get(&http, &rewards).await;
    tokio::task::block_in_place(|| proc.kill9());
    assert_eq!(
        before["granted"],
        json!(false),
        "the grants were made before they were seen under way"
    );

    // Started once more: the close ends once.
    let proc = tokio::task::block_in_place(|| start(dir.path(), &offset, redis));
    let deadline = Instant::now() + Duration::from_secs(60);
    while moves(&http, &proc.base, &day, 0).await["closed"] != json!(true) {
        assert!(Instant::now() < deadline, "the close never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut moved = Vec::new();
    while moved.len() < 2_000 {
        let page = moves(&http, &proc.base, &day, moved.len() as u64).await;
        assert_eq!(page["total"], json!(2_000), "every top five once");
        let rows = page["moves"].as_array().expect("moves").clone();
        assert!(!rows.is_empty());
        for r in rows {
            assert_eq!((&r["from"], &r["to"]), (&json!("bronze"), &json!("silver")));
            moved.push(r["member"].as_str().expect("member").to_owned());
        }
    }
    let once: HashSet<String> = moved.iter().cloned().collect();
    assert_eq!(once.len(), moved.len(), "a member moved twice");
    assert_eq!(once, promoted);
    for (m, tier) in [
        ("m19999", "silver"),
        ("m19994", "bronze"),
        ("m00049", "silver"),
        ("m00004", "bronze"),
    ] {
        let t = get(
            &http,
            &format!("{}/v1/boards/l/members/{m}/tier", proc.base),
        )
        .await;
        assert_eq!(t["tier"], json!(tier), "{m}");
    }
    let cohort = get(
        &http,
        &format!("{}/v1/boards/l/members/m19999/cohort", proc.base),
    )
    .await;
    assert_eq!(
        (&cohort["tier"], &cohort["cohort"]),
        (&json!("silver"), &json!(1)),
        "{cohort}"
    );
    grants_made_once(&http, &proc.base, &day).await;
    drop(proc);
}

/// The period's grants, once the close has made them: each cohort's top three, once.
async fn grants_made_once(http: &reqwest::Client, base: &str, day: &str) {
    let url = |offset: usize| {
        format!("{base}/v1/boards/l/periods/{day}/rewards?offset={offset}&limit=1000")
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while get(http, &url(0)).await["granted"] != json!(true) {
        assert!(Instant::now() < deadline, "the grants were never made");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut paid = Vec::new();
    loop {
        let page = get(http, &url(paid.len())).await;
        assert_eq!(page["total"], json!(1_200), "three a cohort");
        let rows = page["grants"].as_array().expect("grants").clone();
        if rows.is_empty() {
            break;
        }
        for g in rows {
            assert_eq!(g["reward"], json!("gold"));
            paid.push(g["member"].as_str().expect("member").to_owned());
        }
    }
    let top_three: HashSet<String> = (0..MEMBERS)
        .filter(|s| (MEMBERS - 1 - s) % 50 < 3)
        .map(|i| format!("m{i:05}"))
        .collect();
    let once: HashSet<String> = paid.iter().cloned().collect();
    assert_eq!(once.len(), paid.len(), "a member paid twice");
    assert_eq!(once, top_three);
}
