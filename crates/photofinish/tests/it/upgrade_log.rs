//! `photofinish redis-upgrade --to log` (docs/redis-log.md, "Upgrade"; SPEC §12) on a
//! namespace this release writes in format 2, end to end with the real binary: the fixture
//! is generated here, by a format-2 server, every run — boards in both orders with ties
//! broken by `reached_at`, scores at the i64 extremes and past 2^53, metadata, past periods
//! of a daily board, and requests under idempotency keys (a write, a batch with a refused
//! entry, a member delete, a board create). After the upgrade a log-layout node answers
//! every read as the format-2 server did, replays every key's answer, refuses a reused key,
//! and a format-2 server refuses the namespace; before it, a log-layout node refuses the
//! format-2 namespace and says how to upgrade.

use std::process::Command;

use photofinish_testkit::redis::RedisProcess;
use serde_json::{json, Value};

use crate::support::*;

const NS: &str = "up";

fn serve(redis: &str, layout: &str) -> Proc {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--redis-layout", layout])
        .args(["--storage", redis, "--redis-namespace", NS]);
    tokio::task::block_in_place(|| Proc::spawn_command(cmd))
}

/// `serve` that must refuse to start: what it said.
fn refused(redis: &str, layout: &str) -> String {
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--resp-listen", "off"])
        .args(["--redis-layout", layout, "--storage", redis])
        .args(["--redis-namespace", NS])
        .output()
        .expect("run");
    assert!(
        !out.status.success(),
        "a {layout} server took the namespace"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
    key: Option<&str>,
) -> (u16, Option<String>, Value) {
    let mut req = http.request(method, url);
    if let Some(b) = body {
        req = req.json(&b);
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

/// The keyed requests, in order: (method, path, body, key).
fn keyed() -> Vec<(reqwest::Method, &'static str, Value, &'static str)> {
    use reqwest::Method;
    vec![
        (
            Method::POST,
            "/v1/boards/desc/scores",
            json!({"member": "keyed", "score": 42}),
            "k-write",
        ),
        (
            Method::POST,
            "/v1/boards/desc/scores:batch",
            json!({"entries": [
                {"member": "b1", "score": 7},
                {"member": "b2", "score": 7, "at": "2026-01-01T00:00:00Z"},
                {"member": "bad", "score": 1, "period": "1999-01-01"}
            ]}),
            "k-batch",
        ),
        (
            Method::DELETE,
            "/v1/boards/desc/members/gone",
            Value::Null,
            "k-remove",
        ),
        (
            Method::PUT,
            "/v1/boards/created",
            json!({"order": "asc"}),
            "k-create",
        ),
    ]
}

/// Every read the test compares, as the server answers it.
async fn reads(http: &reqwest::Client, base: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut paths = vec!["/v1/boards".to_owned()];
    for board in ["asc", "desc", "daily", "created"] {
        paths.push(format!("/v1/boards/{board}"));
        paths.push(format!("/v1/boards/{board}/periods"));
        let (_, _, periods) = call(
            http,
            reqwest::Method::GET,
            format!("{base}/v1/boards/{board}/periods"),
            None,
            None,
        )
        .await;
        let ids: Vec<String> = periods["periods"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        for id in ids {
            for style in ["ordinal", "competition", "dense"] {
                paths.push(format!(
                    "/v1/boards/{board}/entries?period={id}&ranking={style}&limit=1000"
                ));
            }
        }
        for member in ["ann", "bob", "cy", "min", "max", "big", "keyed", "b1", "b2"] {
            paths.push(format!("/v1/boards/{board}/members/{member}?ranking=dense"));
        }
    }
    for p in paths {
        let (status, _, body) =
            call(http, reqwest::Method::GET, format!("{base}{p}"), None, None).await;
        out.push((p, json!({"status": status, "body": body})));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_format_2_namespace_converts_to_the_log_layout_without_losing_anything() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis =
        tokio::task::block_in_place(|| RedisProcess::start(dir.path(), &[]).expect("redis"));
    let url = redis.url();
    let http = reqwest::Client::new();
    // The fixture: written by this release's format-2 server.
    let old = serve(&url, "scripts");
    let base = old.base.clone();
    let put = |board: &str, config: Value| {
        let (http, url) = (http.clone(), format!("{base}/v1/boards/{board}"));
        async move {
            let (status, _, body) =
                call(&http, reqwest::Method::PUT, url, Some(config), None).await;
            assert!(status == 200 || status == 201, "{status} {body}");
        }
    };
    put("asc", json!({"order": "asc", "update": "best"})).await;
    put("desc", json!({})).await;
    put(
        "daily",
        json!({"reset": "daily", "retention": 5, "timezone": "Asia/Shanghai"}),
    )
    .await;
    let writes = [
        (
            "asc",
            json!({"member": "ann", "score": 10, "at": "2026-11-01T10:00:00Z", "metadata": {"team": "red"}}),
        ),
        (
            "asc",
            json!({"member": "bob", "score": 10, "at": "2026-11-01T09:00:00Z"}),
        ),
        (
            "asc",
            json!({"member": "cy", "score": 10, "at": "2026-11-01T09:00:00Z"}),
        ),
        ("asc", json!({"member": "min", "score": i64::MIN})),
        ("asc", json!({"member": "max", "score": i64::MAX})),
        ("desc", json!({"member": "ann", "score": 5})),
        ("desc", json!({"member": "bob", "score": 5})),
        (
            "desc",
            json!({"member": "big", "score": 9_007_199_254_740_993_i64}),
        ),
        ("desc", json!({"member": "gone", "score": 1})),
        (
            "desc",
            json!({"member": "max", "score": i64::MAX, "metadata": {"n": 1}}),
        ),
        (
            "daily",
            json!({"member": "ann", "score": 3, "at": "2026-11-24T10:00:00Z"}),
        ),
        (
            "daily",
            json!({"member": "bob", "score": 4, "at": "2026-11-25T10:00:00Z"}),
        ),
        ("daily", json!({"member": "cy", "score": 4})),
    ];
    for (board, w) in writes {
        let (status, _, body) = call(
            &http,
            reqwest::Method::POST,
            format!("{base}/v1/boards/{board}/scores"),
            Some(w),
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let mut first = Vec::new();
    for (method, path, body, key) in keyed() {
        let body = (!body.is_null()).then_some(body);
        first.push(call(&http, method, format!("{base}{path}"), body, Some(key)).await);
    }
    assert!(
        first.iter().all(|(s, r, _)| *s < 300 && r.is_none()),
        "{first:?}"
    );
    let before = reads(&http, &base).await;
    // A log-layout node refuses the format-2 namespace and says how to upgrade.
    let why = refused(&url, "log");
    assert!(why.contains("redis-upgrade --to log"), "{why}");
    drop(old);

    let out = Command::new(BIN)
        .args(["redis-upgrade", "--to", "log", "--storage", &url])
        .args(["--redis-namespace", NS, "--json"])
        .output()
        .expect("upgrade");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("report");
    assert_eq!(report["boards"], 4, "{report}");
    assert_eq!(report["idempotency_keys"], 4, "{report}");
    assert_eq!(
        report["entries"].as_u64().map(|n| n >= 15),
        Some(true),
        "{report}"
    );
    // Run again: nothing to do.
    let again = Command::new(BIN)
        .args(["redis-upgrade", "--to", "log", "--storage", &url])
        .args(["--redis-namespace", NS, "--json"])
        .output()
        .expect("upgrade");
    let again: Value = serde_json::from_slice(&again.stdout).expect("report");
    assert_eq!(again["already_current"], true);
    // A format-2 server refuses the converted namespace.
    let why = refused(&url, "scripts");
    assert!(why.contains("format log"), "{why}");

    let node = serve(&url, "log");
    let after = reads(&http, &node.base).await;
    for ((path, b), (_, a)) in before.iter().zip(&after) {
        assert_eq!(a, b, "{path} answers otherwise after the upgrade");
    }
    // Every key replays its first answer; a reused key is refused.
    for ((method, path, body, key), (status, _, answer)) in keyed().into_iter().zip(&first) {
        let body = (!body.is_null()).then_some(body);
        let (s, replayed, a) = call(
            &http,
            method,
            format!("{}{path}", node.base),
            body,
            Some(key),
        )
        .await;
        assert_eq!(
            (s, replayed.as_deref()),
            (*status, Some("true")),
            "{path}: {a}"
        );
        assert_eq!(&a, answer, "{path} replays otherwise");
    }
    let (s, _, a) = call(
        &http,
        reqwest::Method::POST,
        format!("{}/v1/boards/desc/scores", node.base),
        Some(json!({"member": "keyed", "score": 43})),
        Some("k-write"),
    )
    .await;
    assert_eq!(a["error"]["code"], "idempotency_key_reused", "{s} {a}");
    // And the converted board takes writes, ranked after what was there.
    let (s, _, a) = call(
        &http,
        reqwest::Method::POST,
        format!("{}/v1/boards/asc/scores", node.base),
        Some(json!({"member": "dee", "score": 10})),
        None,
    )
    .await;
    assert_eq!(s, 200, "{a}");
    assert_eq!(
        a["rank"], 5,
        "a later equal score ranks after the earlier ones: {a}"
    );
}
