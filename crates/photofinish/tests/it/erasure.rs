//! The erasure ledger on the real binary (docs/SPEC.md §16, docs/privacy.md): an erase
//! is appended to the ledger file beside the data dir, and an older backup restored with
//! it — by `photofinish restore --erasure-ledger`, or by a server started with the flag —
//! does not bring the member back; an import of an older export drops its rows; a write
//! after the erase is a new member that every later start-up keeps.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::*;

const KEY: &str = "erasure.key";

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Value,
) -> (u16, Value) {
    let mut req = http.request(method, url);
    if !body.is_null() {
        req = req.json(&body);
    }
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Member `m`'s score on `board` at `base`, `None` when the board has no entry of it.
async fn score(http: &reqwest::Client, base: &str, board: &str, m: &str) -> Option<i64> {
    let url = format!("{base}/v1/boards/{board}/members/{m}");
    let (st, v) = call(http, reqwest::Method::GET, url, Value::Null).await;
    (st == 200).then(|| v["score"].as_i64().expect("score"))
}

fn run(args: &[&str]) -> (bool, String, String) {
    cli(args, "http://127.0.0.1:9")
}

fn path(p: &Path) -> &str {
    p.to_str().expect("path")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_erased_member_stays_gone_after_an_older_backup_comes_back() {
    let work = tempfile::tempdir().expect("tmp");
    let live_dir = work.path().join("live");
    let ledger = work.path().join("live.erasure-ledger");
    let http = reqwest::Client::new();
    let log = work.path().join("live.log");
    let live = tokio::task::block_in_place(|| Proc::start_logging(BIN, &live_dir, "always", &log));
    let base = live.base.clone();
    for board in ["a", "b"] {
        let (st, _) = call(
            &http,
            reqwest::Method::PUT,
            format!("{base}/v1/boards/{board}"),
            json!({}),
        )
        .await;
        assert_eq!(st, 201);
    }
    for (board, m, s) in [("a", "ann", 10), ("b", "ann", 5), ("a", "bob", 7)] {
        let url = format!("{base}/v1/boards/{board}/scores");
        let (st, _) = call(
            &http,
            reqwest::Method::POST,
            url,
            json!({"member": m, "score": s}),
        )
        .await;
        assert_eq!(st, 200);
    }
    let old = work.path().join("old.backup");
    let (ok, out, err) = cli(&["backup", "--out", path(&old)], &base);
    assert!(ok, "{out}{err}");
    let export = work.path().join("a.jsonl");
    let (ok, out, err) = cli(&["export", "--board", "a", "--out", path(&export)], &base);
    assert!(ok, "{out}{err}");

    let url = format!("{base}/v1/members/ann");
    let (st, v) = call(&http, reqwest::Method::DELETE, url, Value::Null).await;
    assert_eq!((st, &v["boards"]), (200, &json!(2)), "{v}");
    // The ledger beside the data dir: one line, the HMAC and the instant, no name.
    let text = std::fs::read_to_string(&ledger).expect("the ledger file");
    assert_eq!(text.lines().count(), 1, "{text}");
    let line: Value = serde_json::from_str(text.trim()).expect("json line");
    assert_eq!(line["hmac"].as_str().map(str::len), Some(64), "{line}");
    assert!(
        line["erased_at"].is_string() && !text.contains("ann"),
        "{text}"
    );
    // The erasure key, made by the erase, is in no log line, backup or export.
    let secret = std::fs::read_to_string(live_dir.join(KEY)).expect("the key file");
    let secret = secret.trim();
    assert_eq!(secret.len(), 64, "64 hex digits");
    let new = work.path().join("new.backup");
    let (ok, out, err) = cli(&["backup", "--out", path(&new)], &base);
    assert!(ok, "{out}{err}");
    let after = work.path().join("after.jsonl");
    let (ok, out, err) = cli(&["export", "--board", "a", "--out", path(&after)], &base);
    assert!(ok, "{out}{err}");
    let url = format!("{base}/v1/members/bob/export");
    let (_, bobs) = call(&http, reqwest::Method::GET, url, Value::Null).await;
    let logged = std::fs::read_to_string(&log).expect("the log");
    assert!(
        logged.contains("listening"),
        "the log was not captured: {logged}"
    );
    for (what, bytes) in [
        ("the log", logged.into_bytes()),
        ("a backup", std::fs::read(&new).expect("backup")),
        ("an export", std::fs::read(&after).expect("export")),
        ("a member export", bobs.to_string().into_bytes()),
    ] {
        let held = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert!(!held, "the erasure key is in {what}");
    }
    // A write after the erase is a new member, and a restart keeps it.
    let url = format!("{base}/v1/boards/a/scores");
    let (st, _) = call(
        &http,
        reqwest::Method::POST,
        url,
        json!({"member": "ann", "score": 1}),
    )
    .await;
    assert_eq!(st, 200);
    drop(live);
    let live = tokio::task::block_in_place(|| Proc::start(BIN, &live_dir, "always"));
    assert_eq!(score(&http, &live.base, "a", "ann").await, Some(1));
    assert_eq!(std::fs::read_to_string(&ledger).expect("ledger"), text);

    // A restore with the ledger but not its key is refused before it makes anything.
    let refused = work.path().join("refused");
    let (ok, _, err) = run(&[
        "restore",
        path(&old),
        "--data-dir",
        path(&refused),
        "--erasure-ledger",
        path(&ledger),
    ]);
    assert!(!ok && err.contains("--erasure-key-file"), "{err}");
    assert!(!refused.exists());

    // `restore --erasure-ledger`: the older backup without the member.
    let key = live_dir.join(KEY);
    let r1 = work.path().join("r1");
    let (ok, out, err) = run(&[
        "restore",
        path(&old),
        "--data-dir",
        path(&r1),
        "--erasure-ledger",
        path(&ledger),
        "--erasure-key-file",
        path(&key),
    ]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("1 members erased again, 2 rows dropped"),
        "{out}"
    );
    let restored = tokio::task::block_in_place(|| Proc::start(BIN, &r1, "always"));
    for board in ["a", "b"] {
        assert_eq!(
            score(&http, &restored.base, board, "ann").await,
            None,
            "{board}"
        );
    }
    assert_eq!(score(&http, &restored.base, "a", "bob").await, Some(7));
    drop(restored);

    // A plain restore brings the member back; a server started with the ledger takes it
    // out again before it serves.
    let r2 = work.path().join("r2");
    assert!(run(&["restore", path(&old), "--data-dir", path(&r2)]).0);
    let args = [
        "--erasure-ledger",
        path(&ledger),
        "--erasure-key-file",
        path(&key),
    ];
    let r2_log = work.path().join("r2.log");
    let started = tokio::task::block_in_place(|| Proc::start_with_log(BIN, &r2, &args, &r2_log));
    // It says what it did: the entry applied again, ann's two rows dropped.
    let said = std::fs::read_to_string(&r2_log).expect("the log");
    let applied = said
        .lines()
        .find(|l| l.contains("erasure ledger applied"))
        .unwrap_or_else(|| panic!("no report in {said}"));
    for part in [
        "entries=1",
        "applied_again=1",
        "members_erased=1",
        "rows_dropped=2",
    ] {
        assert!(applied.contains(part), "{part} not in {applied}");
    }
    assert_eq!(score(&http, &started.base, "a", "ann").await, None);
    assert_eq!(score(&http, &started.base, "b", "ann").await, None);
    assert_eq!(score(&http, &started.base, "a", "bob").await, Some(7));
    // Its audit names the erase by the HMAC alone, as the ledger's actor's.
    let (st, audit) = call(
        &http,
        reqwest::Method::GET,
        format!("{}/v1/audit", started.base),
        Value::Null,
    )
    .await;
    assert_eq!(st, 200);
    let erases: Vec<&Value> = audit["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["action"] == "member_erase")
        .collect();
    assert_eq!(erases.len(), 2, "{audit}");
    assert!(
        erases
            .iter()
            .all(|e| e["actor"] == "erasure-ledger" && e["detail"]["member_hmac"] == line["hmac"]),
        "{audit}"
    );
    drop(started);

    // Under another erasure key (a restore that lost it), a start-up refuses the ledger
    // rather than finding nobody under it.
    let r3 = work.path().join("r3");
    assert!(run(&["restore", path(&old), "--data-dir", path(&r3)]).0);
    let out = std::process::Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir", path(&r3)])
        .args(["--erasure-ledger", path(&ledger)])
        .output()
        .expect("serve");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("erasure key") && err.contains("--erasure-key-file"),
        "{err}"
    );

    // An import of the older export drops the member's rows, written before its erase.
    let (st, _) = call(
        &http,
        reqwest::Method::PUT,
        format!("{}/v1/boards/c", live.base),
        json!({}),
    )
    .await;
    assert_eq!(st, 201);
    let (ok, out, err) = cli(
        &["--json", "import", "--board", "c", path(&export)],
        &live.base,
    );
    assert!(ok, "{out}{err}");
    let answer: Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(
        (&answer["imported"], &answer["erased_dropped"]),
        (&json!(1), &json!(1)),
        "{answer}"
    );
    assert_eq!(score(&http, &live.base, "c", "ann").await, None);
    assert_eq!(score(&http, &live.base, "c", "bob").await, Some(7));
}
