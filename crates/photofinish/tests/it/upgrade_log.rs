//! `photofinish redis-upgrade` (docs/redis-layout.md, "Upgrade"; SPEC §12) on a
//! namespace the last format-2 release wrote, end to end with the real binary. The
//! fixture (`tests/fixtures/format2/`: a Redis dump and what that server answered, made by
//! its `generate.py`) holds boards in both orders with ties broken by `reached_at`, scores
//! at the i64 extremes and past 2^53, metadata, past periods of a daily board in a time
//! zone, and requests under idempotency keys (a write, a batch with a refused entry, a
//! member delete, a board create). Before the upgrade a node refuses the
//! namespace and says how to upgrade; after it, a node answers every read as
//! the format-2 server did, replays every key's first answer, refuses a reused key, and
//! takes writes ranked after what was there. An interrupted upgrade is run again and
//! finishes, on a standalone Redis and on a 3-master cluster.

use std::path::Path;
use std::process::Command;

use photofinish_testkit::redis::RedisProcess;
use serde_json::{json, Value};

use crate::support::*;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/format2");

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
        .args(["upgrade", "--storage", url])
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

/// The fixture's answers, and a Redis holding its dump (in `dir`).
fn fixture(dir: &Path) -> (Value, String, RedisProcess) {
    let expected: Value = serde_json::from_slice(
        &std::fs::read(Path::new(FIXTURE).join("expected.json")).expect("expected.json"),
    )
    .expect("json");
    let ns = expected["namespace"]
        .as_str()
        .expect("namespace")
        .to_owned();
    std::fs::copy(Path::new(FIXTURE).join("dump.rdb"), dir.join("dump.rdb"))
        .expect("copy the dump");
    let redis = tokio::task::block_in_place(|| {
        RedisProcess::start(dir, &["--dbfilename", "dump.rdb"]).expect("redis")
    });
    (expected, ns, redis)
}

/// Every read of the fixture, answered by `base` as the format-2 server answered it.
async fn answers_as_before(http: &reqwest::Client, base: &str, expected: &Value) {
    for read in expected["reads"].as_array().expect("reads") {
        let path = read["path"].as_str().expect("path");
        let (status, _, body) =
            call(http, "GET", format!("{base}{path}"), &Value::Null, None).await;
        assert_eq!(
            json!({"status": status, "body": body}),
            json!({"status": read["status"], "body": read["body"]}),
            "{path} answers otherwise after the upgrade"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_format_2_namespace_converts_to_the_log_layout_without_losing_anything() {
    let dir = tempfile::tempdir().expect("tmp");
    let (expected, ns, redis) = fixture(dir.path());
    let url = redis.url();
    let http = reqwest::Client::new();

    // A node refuses the format-2 namespace and says how to upgrade.
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--resp-listen", "off"])
        .args(["--storage", &url])
        .args(["--redis-namespace", &ns])
        .output()
        .expect("run");
    assert!(!out.status.success(), "a node took a format-2 namespace");
    let why = String::from_utf8_lossy(&out.stderr);
    assert!(why.contains("photofinish upgrade"), "{why}");

    let report = upgrade(&url, &ns);
    assert_eq!(report["boards"], 4, "{report}");
    assert_eq!(report["idempotency_keys"], 4, "{report}");
    assert_eq!(report["entries"], 15, "{report}");
    assert_eq!(report["periods"], 4, "{report}");
    assert_eq!(upgrade(&url, &ns)["already_current"], true, "a second run");

    let node = redis_node(&url, &ns);
    answers_as_before(&http, &node.base, &expected).await;
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

/// An upgrade interrupted after one board was converted, and inside another (its config
/// fenced, its create appended, no snapshot yet), is run again and finishes: every read
/// answers as before, no format-2 key is left, and a node started meanwhile was refused.
/// On a 3-master cluster, the fixture's keys are copied there first (`DUMP`/`RESTORE`).
async fn an_interrupted_upgrade_resumes(cluster: bool) {
    use photofinish_core::clock::SystemClock;
    use photofinish_redis::conn::Conn;
    use photofinish_redis::log::{BoardLog, LogKeys};
    use photofinish_redis::upgrade_log::{convert_board, LogUpgradeReport, FENCE};
    use photofinish_redis::{LogStore, Target};
    let dir = tempfile::tempdir().expect("tmp");
    let (expected, ns, redis) = fixture(dir.path());
    let cluster_dir = tempfile::tempdir().expect("tmp");
    let held = if cluster {
        let c = tokio::task::block_in_place(|| {
            photofinish_testkit::redis::RedisCluster::start(cluster_dir.path(), 3).expect("cluster")
        });
        Some(c)
    } else {
        None
    };
    let url = held.as_ref().map_or_else(|| redis.url(), |c| c.url());
    let target = Target::parse(&url).expect("url");
    let conn = Conn::connect(&target).await.expect("connect");
    if cluster {
        let mut from = redis.client().expect("client");
        let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut from).expect("keys");
        for k in keys {
            let dump: Vec<u8> = redis::cmd("DUMP").arg(&k).query(&mut from).expect("dump");
            let ttl: i64 = redis::cmd("PTTL").arg(&k).query(&mut from).expect("pttl");
            conn.query::<()>(
                redis::cmd("RESTORE")
                    .arg(&k)
                    .arg(ttl.max(0))
                    .arg(dump)
                    .arg("REPLACE"),
            )
            .await
            .expect("restore");
        }
    }
    // The interrupted run: the namespace marked, `asc` converted, `desc` midway.
    conn.query::<()>(
        redis::cmd("SET")
            .arg(format!("{ns}:format"))
            .arg("log-converting"),
    )
    .await
    .expect("mark");
    let mut report = LogUpgradeReport::default();
    convert_board(&conn, &ns, "asc", &mut report)
        .await
        .expect("convert asc");
    let cfg = format!("{ns}:{{desc}}:cfg");
    let text: String = conn.query(redis::cmd("GET").arg(&cfg)).await.expect("cfg");
    conn.query::<()>(
        redis::cmd("SET")
            .arg(format!("{ns}:{{desc}}:upgrade:cfg"))
            .arg(&text),
    )
    .await
    .expect("save");
    conn.query::<()>(redis::cmd("SET").arg(&cfg).arg(FENCE))
        .await
        .expect("fence");
    let create = photofinish_store::Command::from(photofinish_store::command::CreateBoard {
        board: "desc".into(),
        config: serde_json::from_str::<photofinish_core::BoardConfig>(&text)
            .expect("config")
            .checked()
            .expect("valid config"),
        max_boards: None,
        hidden: Vec::new(),
    });
    BoardLog::new(conn.clone(), LogKeys::new(&ns, "desc"))
        .append(
            None,
            0,
            None,
            &[photofinish_redis::replica::encode_entry(&create, false, 0)],
        )
        .await
        .expect("entry 1");
    let refused = LogStore::connect(&target, &ns, Box::new(SystemClock)).await;
    let why = refused.expect_err("served mid-upgrade").to_string();
    assert!(why.contains("interrupted"), "{why}");
    // Run again: it finishes desc, daily and created.
    let done = upgrade(&url, &ns);
    assert_eq!(done["boards"], 3, "{done}");
    let node = redis_node(&url, &ns);
    answers_as_before(&reqwest::Client::new(), &node.base, &expected).await;
    for b in ["asc", "desc", "daily", "created"] {
        let left: Vec<String> = conn
            .scan_slot(
                &format!("{ns}:{{{b}}}:x"),
                &format!("{ns}:{{{b}}}:p:*"),
                1000,
            )
            .await
            .expect("scan");
        assert!(left.is_empty(), "{b}: {left:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_interrupted_upgrade_resumes_on_redis() {
    an_interrupted_upgrade_resumes(false).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_interrupted_upgrade_resumes_on_a_cluster() {
    an_interrupted_upgrade_resumes(true).await
}

/// Mixed versions (docs/SPEC.md §18): a namespace a later release's `photofinish upgrade`
/// moved to its own log format is refused by a node of this release at start, naming the
/// format and what to do, and `photofinish upgrade` of this release leaves it alone.
#[test]
fn a_namespace_at_a_newer_format_is_refused_naming_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = photofinish_testkit::redis::RedisProcess::start(dir.path(), &[]).expect("redis");
    let mut c = redis.client().expect("client");
    let _: () = redis::cmd("SET")
        .arg("later:format")
        .arg("log-v3")
        .query(&mut c)
        .expect("set");
    let url = redis.url();
    for args in [
        &["serve", "--listen", "127.0.0.1:0", "--resp-listen", "off"][..],
        &["upgrade"][..],
    ] {
        let out = Command::new(BIN)
            .args(args)
            .args(["--storage", &url, "--redis-namespace", "later"])
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} took a newer namespace");
        assert!(
            err.contains("log-v3") && err.contains("upgrade"),
            "{args:?}: {err}"
        );
    }
    let format: String = redis::cmd("GET")
        .arg("later:format")
        .query(&mut c)
        .expect("get");
    assert_eq!(format, "log-v3");
}

/// Mixed versions (docs/SPEC.md §18): a namespace at the log layout's first format (`log`,
/// which nodes of the previous release write) is served as it is; `photofinish upgrade`
/// moves it to `log-v2` and says so, a second run has nothing to do, and a node serves it
/// on. A node on it says, in its log, to run the upgrade once every node runs this release. A new namespace is marked `log-v2`. (What a node writes at each format:
/// `redis_replica::snapshots_follow_the_namespace_format`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_at_the_first_log_format_is_moved_on() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = photofinish_testkit::redis::RedisProcess::start(dir.path(), &[]).expect("redis");
    let mut c = redis.client().expect("client");
    let url = redis.url();
    let http = reqwest::Client::new();
    let format = |c: &mut redis::Connection, ns: &str| -> Option<String> {
        redis::cmd("GET")
            .arg(format!("{ns}:format"))
            .query(c)
            .expect("get")
    };
    let _: () = redis::cmd("SET")
        .arg("first:format")
        .arg("log")
        .query(&mut c)
        .expect("set");
    let write = |base: String, score: i64| {
        let http = http.clone();
        async move {
            let body = json!({"member": "ann", "score": score});
            let url = format!("{base}/v1/boards/b/scores");
            let (status, _, answer) = call(&http, "POST", url, &body, None).await;
            assert_eq!(status, 200, "{answer}");
            answer["score"].as_i64().expect("score")
        }
    };
    let log = dir.path().join("first.log");
    {
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--storage", &url])
            .args(["--redis-namespace", "first"]);
        let node = tokio::task::block_in_place(|| {
            photofinish_testkit::process::Proc::spawn_command_logging(cmd, &log)
        });
        let url = format!("{}/v1/boards/b", node.base);
        let (status, _, _) = call(&http, "PUT", url, &json!({}), None).await;
        assert_eq!(status, 201);
        assert_eq!(write(node.base.clone(), 5).await, 5);
    }
    assert_eq!(
        format(&mut c, "first").as_deref(),
        Some("log"),
        "served as it is"
    );
    let said = std::fs::read_to_string(&log).expect("log");
    assert!(
        said.contains("older format") && said.contains("photofinish upgrade"),
        "the node says what to do: {said}"
    );
    let report = tokio::task::block_in_place(|| upgrade(&url, "first"));
    assert_eq!(report["moved_from"], "log", "{report}");
    assert_eq!(report["already_current"], false, "{report}");
    assert_eq!(report["format"], "log-v2", "{report}");
    assert_eq!(format(&mut c, "first").as_deref(), Some("log-v2"));
    let again = tokio::task::block_in_place(|| upgrade(&url, "first"));
    assert_eq!(again["already_current"], true, "{again}");
    assert_eq!(again["moved_from"], Value::Null, "{again}");
    let node = redis_node(&url, "first");
    assert_eq!(write(node.base.clone(), 2).await, 7, "the board served on");
    drop(node);
    let fresh = tokio::task::block_in_place(|| upgrade(&url, "fresh"));
    assert_eq!(fresh["already_current"], true);
    assert_eq!(format(&mut c, "fresh").as_deref(), Some("log-v2"));
}
