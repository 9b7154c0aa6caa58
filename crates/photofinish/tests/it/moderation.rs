//! Moderation and audit across `kill -9` (docs/SPEC.md §15): the real binary with API
//! keys from `photofinish key new`; every admin change it acknowledged — a board created
//! and patched, members hidden and shown, a member deleted, an import, a board deleted —
//! is in the audit log with its actor after the process is killed and started again
//! (from the log alone, then from a snapshot after a clean stop), and hidden members stay
//! hidden.

use std::process::Command;

use serde_json::{json, Value};

use crate::support::*;

fn key(keys: &std::path::Path, name: &str, scope: &str) -> String {
    let out = Command::new(BIN)
        .args(["key", "new", "--keys"])
        .arg(keys)
        .args(["--name", name, "--scope", scope])
        .output()
        .expect("key new");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn start(dir: &std::path::Path, keys: &std::path::Path) -> Proc {
    let keys = keys.to_str().expect("utf-8");
    Proc::start_with(BIN, dir, &["--fsync", "always", "--keys", keys])
}

async fn call(
    http: &reqwest::Client,
    token: &str,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = http.request(method, url).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    let text = r.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The audit log as (actor, action, board, member), newest first.
async fn trail(
    http: &reqwest::Client,
    base: &str,
    admin: &str,
) -> Vec<(String, String, String, String)> {
    let (st, v) = call(
        http,
        admin,
        reqwest::Method::GET,
        format!("{base}/v1/audit"),
        None,
    )
    .await;
    assert_eq!(st, 200, "{v}");
    v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("").to_owned();
            (s("actor"), s("action"), s("board"), s("member"))
        })
        .collect()
}

async fn shown(http: &reqwest::Client, base: &str, token: &str) -> Vec<String> {
    let url = format!("{base}/v1/boards/b/entries?limit=100");
    let (st, v) = call(http, token, reqwest::Method::GET, url, None).await;
    assert_eq!(st, 200, "{v}");
    v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["member"].as_str().expect("member").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_audit_log_and_hidden_members_survive_kill_9() {
    use reqwest::Method;
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().join("data");
    let keys = dir.path().join("keys.json");
    let admin = key(&keys, "ops", "admin");
    let game = key(&keys, "game", "write");
    let http = reqwest::Client::new();
    let proc = tokio::task::block_in_place(|| start(&data, &keys));
    let base = proc.base.clone();
    let at = |p: &str| format!("{base}{p}");
    assert_eq!(
        call(
            &http,
            &admin,
            Method::PUT,
            at("/v1/boards/b"),
            Some(json!({}))
        )
        .await
        .0,
        201
    );
    let patch = json!({"retention": 5});
    assert_eq!(
        call(
            &http,
            &admin,
            Method::PATCH,
            at("/v1/boards/b"),
            Some(patch)
        )
        .await
        .0,
        200
    );
    for (m, v) in [("ann", 30), ("bob", 20), ("cid", 10)] {
        let w = json!({"member": m, "score": v});
        assert_eq!(
            call(
                &http,
                &game,
                Method::POST,
                at("/v1/boards/b/scores"),
                Some(w)
            )
            .await
            .0,
            200
        );
    }
    for (verb, m) in [("hide", "bob"), ("hide", "cid"), ("unhide", "cid")] {
        let url = at(&format!("/v1/boards/b/members/{m}/{verb}"));
        assert_eq!(call(&http, &admin, Method::POST, url, None).await.0, 204);
    }
    assert_eq!(
        call(
            &http,
            &game,
            Method::DELETE,
            at("/v1/boards/b/members/ann"),
            None
        )
        .await
        .0,
        204
    );
    assert_eq!(
        call(
            &http,
            &admin,
            Method::PUT,
            at("/v1/boards/gone"),
            Some(json!({}))
        )
        .await
        .0,
        201
    );
    let import = http
        .post(at("/v1/boards/gone/import"))
        .bearer_auth(&admin)
        .header("content-type", "application/x-ndjson")
        .body("{\"member\":\"z\",\"score\":1}\n")
        .send()
        .await
        .expect("import");
    assert_eq!(import.status(), 200);
    assert_eq!(
        call(&http, &admin, Method::DELETE, at("/v1/boards/gone"), None)
            .await
            .0,
        204
    );
    // Hidden on every board, present and future (one record on the embedded store).
    let url = at("/v1/members/eve/hide");
    assert_eq!(call(&http, &admin, Method::POST, url, None).await.0, 204);
    let want = trail(&http, &base, &admin).await;
    let actions: Vec<(&str, &str)> = want.iter().map(|t| (t.0.as_str(), t.1.as_str())).collect();
    assert_eq!(
        actions,
        [
            ("ops", "member.hide"),
            ("ops", "board.delete"),
            ("ops", "board.import"),
            ("ops", "board.create"),
            ("game", "member.delete"),
            ("ops", "member.unhide"),
            ("ops", "member.hide"),
            ("ops", "member.hide"),
            ("ops", "board.patch"),
            ("ops", "board.create"),
        ]
    );
    assert_eq!(shown(&http, &base, &game).await, ["cid"]);
    tokio::task::block_in_place(|| proc.kill9());

    // From the log alone.
    let proc = tokio::task::block_in_place(|| start(&data, &keys));
    assert_eq!(trail(&http, &proc.base, &admin).await, want);
    assert_eq!(shown(&http, &proc.base, &game).await, ["cid"]);
    // A clean stop snapshots; the next start reads the snapshot.
    let pid = proc.pid().to_string();
    let term = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(term.success());
    let mut proc = proc;
    tokio::task::block_in_place(|| proc.child.wait()).expect("stopped");
    let snaps = std::fs::read_dir(&data)
        .expect("data dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".snap"))
        .count();
    assert!(snaps > 0, "a clean stop leaves a snapshot");
    let proc = tokio::task::block_in_place(|| start(&data, &keys));
    assert_eq!(trail(&http, &proc.base, &admin).await, want);
    assert_eq!(shown(&http, &proc.base, &game).await, ["cid"]);
    let (st, hidden) = call(
        &http,
        &admin,
        Method::GET,
        format!("{}/v1/boards/b/hidden", proc.base),
        None,
    )
    .await;
    assert_eq!((st, &hidden["members"]), (200, &json!(["bob", "eve"])));
    // A board made now hides eve too.
    let url = format!("{}/v1/boards/later", proc.base);
    assert_eq!(
        call(&http, &admin, Method::PUT, url, Some(json!({})))
            .await
            .0,
        201
    );
    let url = format!("{}/v1/boards/later/hidden", proc.base);
    let (_, hidden) = call(&http, &admin, Method::GET, url, None).await;
    assert_eq!(hidden["members"], json!(["eve"]));
}
