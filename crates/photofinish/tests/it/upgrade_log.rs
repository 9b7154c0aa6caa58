//! `photofinish redis-upgrade --to log` (docs/redis-log.md, "Upgrade"; SPEC §12) on a
//! namespace the last format-2 release wrote, end to end with the real binary. The
//! fixture (`tests/fixtures/format2/`: a Redis dump and what that server answered, made by
//! its `generate.py`) holds boards in both orders with ties broken by `reached_at`, scores
//! at the i64 extremes and past 2^53, metadata, past periods of a daily board in a time
//! zone, and requests under idempotency keys (a write, a batch with a refused entry, a
//! member delete, a board create). Before the upgrade a log-layout node refuses the
//! namespace and says how to upgrade; after it, a log-layout node answers every read as
//! the format-2 server did, replays every key's first answer, refuses a reused key, and
//! takes writes ranked after what was there.

use std::path::Path;
use std::process::Command;

use photofinish_testkit::redis::RedisProcess;
use serde_json::{json, Value};

use crate::support::*;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/format2");

fn serve(redis: &str, ns: &str) -> Proc {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--redis-layout", "log"])
        .args(["--storage", redis, "--redis-namespace", ns]);
    tokio::task::block_in_place(|| Proc::spawn_command(cmd))
}

async fn call(
    http: &reqwest::Client,
    method: &str,
    url: String,
    body: &Value,
    key: Option<&str>,
) -> (u16, Option<String>, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = http.request(method, url);
    if !body.is_null() {
        req = req.json(body);
    }
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let replayed = resp
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    (status, replayed, resp.json().await.unwrap_or(Value::Null))
}

fn upgrade(url: &str, ns: &str) -> Value {
    let out = Command::new(BIN)
        .args(["redis-upgrade", "--to", "log", "--storage", url])
        .args(["--redis-namespace", ns, "--json"])
        .output()
        .expect("upgrade");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("report")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_format_2_namespace_converts_to_the_log_layout_without_losing_anything() {
    let expected: Value = serde_json::from_slice(
        &std::fs::read(Path::new(FIXTURE).join("expected.json")).expect("expected.json"),
    )
    .expect("json");
    let ns = expected["namespace"]
        .as_str()
        .expect("namespace")
        .to_owned();
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::copy(
        Path::new(FIXTURE).join("dump.rdb"),
        dir.path().join("dump.rdb"),
    )
    .expect("copy the dump");
    let redis = tokio::task::block_in_place(|| {
        RedisProcess::start(dir.path(), &["--dbfilename", "dump.rdb"]).expect("redis")
    });
    let url = redis.url();
    let http = reqwest::Client::new();

    // A log-layout node refuses the format-2 namespace and says how to upgrade.
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--resp-listen", "off"])
        .args(["--redis-layout", "log", "--storage", &url])
        .args(["--redis-namespace", &ns])
        .output()
        .expect("run");
    assert!(
        !out.status.success(),
        "a log node took a format-2 namespace"
    );
    let why = String::from_utf8_lossy(&out.stderr);
    assert!(why.contains("redis-upgrade --to log"), "{why}");

    let report = upgrade(&url, &ns);
    assert_eq!(report["boards"], 4, "{report}");
    assert_eq!(report["idempotency_keys"], 4, "{report}");
    assert_eq!(report["entries"], 15, "{report}");
    assert_eq!(report["periods"], 4, "{report}");
    assert_eq!(upgrade(&url, &ns)["already_current"], true, "a second run");

    let node = serve(&url, &ns);
    for read in expected["reads"].as_array().expect("reads") {
        let path = read["path"].as_str().expect("path");
        let (status, _, body) = call(
            &http,
            "GET",
            format!("{}{path}", node.base),
            &Value::Null,
            None,
        )
        .await;
        assert_eq!(
            json!({"status": status, "body": body}),
            json!({"status": read["status"], "body": read["body"]}),
            "{path} answers otherwise after the upgrade"
        );
    }
    // Every key replays its first answer; a reused key is refused.
    for k in expected["keyed"].as_array().expect("keyed") {
        let path = k["path"].as_str().expect("path");
        let (status, replayed, answer) = call(
            &http,
            k["method"].as_str().expect("method"),
            format!("{}{path}", node.base),
            &k["body"],
            k["key"].as_str(),
        )
        .await;
        assert_eq!(
            (json!(status), replayed.as_deref()),
            (k["status"].clone(), Some("true")),
            "{path}: {answer}"
        );
        assert_eq!(answer, k["answer"], "{path} replays otherwise");
    }
    let (_, _, reused) = call(
        &http,
        "POST",
        format!("{}/v1/boards/desc/scores", node.base),
        &json!({"member": "keyed", "score": 43}),
        Some("k-write"),
    )
    .await;
    assert_eq!(
        reused["error"]["code"], "idempotency_key_reused",
        "{reused}"
    );
    // The converted board takes writes, ranked after the equal scores already there.
    let (status, _, written) = call(
        &http,
        "POST",
        format!("{}/v1/boards/asc/scores", node.base),
        &json!({"member": "dee", "score": 10}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{written}");
    assert_eq!(written["rank"], 5, "{written}");
}
