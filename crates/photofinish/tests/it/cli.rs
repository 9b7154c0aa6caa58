//! The binary's own behaviour: refusing damaged data by name, the client's tables and errors.

use std::process::Command;

use crate::support::*;

fn run(args: &[&str], server: &str) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env("PHOTOFINISH_SERVER", server)
        .output()
        .expect("run");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn client_prints_tables_json_and_plain_errors() {
    let dir = tempfile::tempdir().expect("tmp");
    let proc = Proc::start(BIN, dir.path(), "everysec");
    let s = proc.base.as_str();
    assert!(
        run(
            &[
                "board",
                "create",
                "b",
                "--reset",
                "daily",
                "--timezone",
                "Europe/Berlin"
            ],
            s
        )
        .0
    );
    for (m, v) in [("ann", "100"), ("bob", "99"), ("cy", "99")] {
        assert!(run(&["submit", "b", m, v], s).0);
    }
    let (ok, out, _) = run(&["top", "b", "--ranking", "competition"], s);
    assert!(ok);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["RANK", "MEMBER", "SCORE", "REACHED_AT"]
    );
    assert_eq!(
        lines[3].split_whitespace().take(3).collect::<Vec<_>>(),
        ["2", "bob", "99"]
    );
    assert_eq!(
        lines[4].split_whitespace().take(3).collect::<Vec<_>>(),
        ["2", "cy", "99"]
    );
    let (ok, out, _) = run(&["--json", "rank", "b", "cy", "--ranking", "dense"], s);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["rank"], 2);
    let (ok, out, _) = run(&["around", "b", "ann", "--before", "1", "--after", "1"], s);
    assert!(ok && out.contains("bob"), "{out}");
    let (ok, _, err) = run(&["submit", "b", "ann", "1.5"], s);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: score must be a whole number, got \"1.5\" (score_not_integer, HTTP 422)"
    );
    let (ok, _, err) = run(&["board", "show", "missing"], s);
    assert!(!ok && err.contains("board_not_found"), "{err}");
    drop(proc);
    let (ok, _, err) = run(&["board", "list"], "http://127.0.0.1:9");
    assert!(!ok);
    assert!(
        err.starts_with("error: cannot reach the server at http://127.0.0.1:9"),
        "{err}"
    );
    assert!(
        !err.contains("Error {") && !err.contains("kind:"),
        "debug output leaked: {err}"
    );
}

#[test]
fn a_damaged_log_refuses_to_start_and_names_file_and_offset() {
    let dir = tempfile::tempdir().expect("tmp");
    let proc = Proc::start(BIN, dir.path(), "always");
    let s = proc.base.clone();
    assert!(run(&["board", "create", "b"], &s).0);
    for i in 0..5 {
        assert!(run(&["submit", "b", &format!("m{i}"), "1"], &s).0);
    }
    drop(proc);
    let log = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .expect("log");
    let mut bytes = std::fs::read(&log).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&log, &bytes).expect("write");
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert!(!out.status.success(), "started on a damaged log");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&log.display().to_string()) && err.contains("at offset"),
        "{err}"
    );
}

#[test]
fn sigterm_drains_and_exits_zero_with_writes_durable() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut proc = Proc::start(BIN, dir.path(), "never");
    let s = proc.base.clone();
    assert!(run(&["board", "create", "b"], &s).0);
    for i in 0..20 {
        assert!(run(&["submit", "b", "m", &i.to_string()], &s).0);
    }
    let pid = proc.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill")
        .success());
    let status = proc.child.wait().expect("wait");
    assert!(status.success(), "exit status {status:?}");
    // fsync=never, yet nothing is lost: shutdown syncs the log.
    let proc = Proc::start(BIN, dir.path(), "always");
    let (ok, out, _) = run(&["--json", "rank", "b", "m"], &proc.base);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["score"], 190);
}

/// `PHOTOFINISH_STORAGE=redis://…` serves from Redis: a second process, started after the
/// first was SIGKILLed, answers from the same data; a bad URL is a plain error.
#[test]
fn serve_on_redis_keeps_no_state_of_its_own() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = photofinish_testkit::redis::RedisProcess::start(dir.path(), &[]).expect("redis");
    let first = Proc::start_on_storage(BIN, &redis.url());
    assert!(run(&["board", "create", "r", "--order", "asc"], &first.base).0);
    for (m, v) in [("ann", "30"), ("bob", "12")] {
        assert!(run(&["submit", "r", m, v], &first.base).0);
    }
    first.kill9();
    let second = Proc::start_on_storage(BIN, &redis.url());
    let (ok, out, _) = run(&["--json", "rank", "r", "bob"], &second.base);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (v["rank"].as_u64(), v["score"].as_i64()),
        (Some(1), Some(12))
    );
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--storage", "mysql://x"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown storage"), "{err}");
    assert!(!err.contains("Error {"), "no debug output: {err}");
}

/// The server turns transparent huge pages off for itself (see `main.rs`): on Linux the
/// kernel reports the flag as `THP_enabled: 0` in the process status (kernels before 5.0
/// lack the line; then there is nothing to check).
#[test]
#[cfg(target_os = "linux")]
fn the_server_runs_without_transparent_huge_pages() {
    let dir = tempfile::tempdir().expect("tmp");
    let proc = Proc::start(BIN, dir.path(), "never");
    let status = std::fs::read_to_string(format!("/proc/{}/status", proc.child.id()))
        .expect("read /proc status");
    if let Some(line) = status.lines().find(|l| l.starts_with("THP_enabled:")) {
        assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
    }
}
