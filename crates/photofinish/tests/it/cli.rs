//! The binary's own behaviour: refusing damaged data by name, the client's tables and errors.

use std::process::Command;

use crate::support::*;

#[test]
fn client_prints_tables_json_and_plain_errors() {
    let dir = tempfile::tempdir().expect("tmp");
    let proc = Proc::start(BIN, dir.path(), "everysec");
    let s = proc.base.as_str();
    assert!(
        cli(
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
        assert!(cli(&["submit", "b", m, v], s).0);
    }
    let (ok, out, _) = cli(&["top", "b", "--ranking", "competition"], s);
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
    let (ok, out, _) = cli(&["--json", "rank", "b", "cy", "--ranking", "dense"], s);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["rank"], 2);
    let (ok, out, _) = cli(&["around", "b", "ann", "--before", "1", "--after", "1"], s);
    assert!(ok && out.contains("bob"), "{out}");
    let (ok, _, err) = cli(&["submit", "b", "ann", "1.5"], s);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: score must be a whole number, got \"1.5\" (score_not_integer, HTTP 422)"
    );
    let (ok, _, err) = cli(&["board", "show", "missing"], s);
    assert!(!ok && err.contains("board_not_found"), "{err}");
    // The board list comes a page at a time, and says so when there is more.
    for name in ["c", "d", "e"] {
        assert!(cli(&["board", "create", name], s).0);
    }
    let (ok, out, _) = cli(&["board", "list", "--offset", "1", "--limit", "2"], s);
    assert!(ok, "{out}");
    let names: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["c", "d", "boards"], "{out}");
    assert!(out.contains("boards 2-3 of 4"), "{out}");
    let (ok, out, _) = cli(&["--json", "board", "list", "--limit", "1"], s);
    assert!(ok, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (v["total"].clone(), v["boards"][0]["name"].clone()),
        (serde_json::json!(4), serde_json::json!("b"))
    );
    drop(proc);
    let (ok, _, err) = cli(&["board", "list"], "http://127.0.0.1:9");
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

/// Partitions and teams through the command line (docs/SPEC.md §17): a board of both, a
/// write naming them, a partition's page and a member's rank in it, the teams' ranking
/// and one team's members, and a refusal in plain words.
#[test]
fn partitions_and_teams_through_the_cli() {
    let dir = tempfile::tempdir().expect("tmp");
    let proc = Proc::start(BIN, dir.path(), "everysec");
    let s = proc.base.as_str();
    let create = [
        "board",
        "create",
        "g",
        "--partitions",
        "5",
        "--team-size",
        "3",
    ];
    assert!(cli(&create, s).0);
    for (m, v, p, t) in [
        ("ann", "5", "FR", "wolves"),
        ("bob", "7", "DE", "wolves"),
        ("cy", "9", "FR", "bears"),
    ] {
        let (ok, out, err) = cli(&["submit", "g", m, v, "--partition", p, "--team", t], s);
        assert!(ok, "{out}{err}");
    }
    let (ok, out, _) = cli(&["top", "g", "--partition", "FR"], s);
    assert!(ok);
    let names: Vec<&str> = out
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(names, ["cy", "ann"], "{out}");
    let (ok, out, _) = cli(&["--json", "rank", "g", "ann", "--partition", "FR"], s);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (v["rank"].clone(), v["team"].clone()),
        (serde_json::json!(2), serde_json::json!("wolves"))
    );
    let (ok, out, _) = cli(&["partitions", "g"], s);
    assert!(ok);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows, [["DE", "1"], ["FR", "2"]], "{out}");
    let (ok, out, _) = cli(&["teams", "g"], s);
    assert!(ok);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().take(4).collect())
        .collect();
    assert_eq!(
        rows,
        [["1", "wolves", "12", "2"], ["2", "bears", "9", "1"]],
        "{out}"
    );
    let (ok, out, _) = cli(&["--json", "teams", "g", "wolves", "--limit", "1"], s);
    assert!(ok, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (v["score"].clone(), v["entries"][0]["member"].clone()),
        (serde_json::json!(12), serde_json::json!("bob"))
    );
    let (ok, _, err) = cli(&["submit", "g", "ann", "1", "--team", "bears"], s);
    assert!(!ok && err.contains("team_conflict, HTTP 409"), "{err}");
}

#[test]
fn a_damaged_log_refuses_to_start_and_names_file_and_offset() {
    let dir = tempfile::tempdir().expect("tmp");
    let proc = Proc::start(BIN, dir.path(), "always");
    let s = proc.base.clone();
    assert!(cli(&["board", "create", "b"], &s).0);
    for i in 0..5 {
        assert!(cli(&["submit", "b", &format!("m{i}"), "1"], &s).0);
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
    let proc = Proc::start(BIN, dir.path(), "never");
    let s = proc.base.clone();
    assert!(cli(&["board", "create", "b"], &s).0);
    for i in 0..20 {
        assert!(cli(&["submit", "b", "m", &i.to_string()], &s).0);
    }
    let status = proc.terminate();
    assert!(status.success(), "exit status {status:?}");
    // fsync=never, yet nothing is lost: shutdown syncs the log.
    let proc = Proc::start(BIN, dir.path(), "always");
    let (ok, out, _) = cli(&["--json", "rank", "b", "m"], &proc.base);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["score"], 190);
}

/// A supervisor may send SIGTERM the moment the "listening" line appears: the server has
/// taken the signal by then, so it stops cleanly (exit 0, a shutdown snapshot) instead of
/// dying by the signal's default action. Several rounds: the window, when open, was a few
/// milliseconds wide.
#[test]
fn sigterm_right_after_listening_is_a_clean_stop() {
    let dir = tempfile::tempdir().expect("tmp");
    {
        let proc = Proc::start(BIN, dir.path(), "always");
        assert!(cli(&["board", "create", "b"], &proc.base).0);
        assert!(cli(&["submit", "b", "m", "7"], &proc.base).0);
        proc.kill9();
    }
    let snapshots = || {
        std::fs::read_dir(dir.path())
            .expect("dir")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("snap-"))
            .count()
    };
    assert_eq!(snapshots(), 0);
    for round in 0..5 {
        let status = Proc::start(BIN, dir.path(), "always").terminate();
        assert!(status.success(), "round {round}: exit status {status:?}");
        assert_eq!(snapshots(), 1, "round {round}");
    }
}

/// `PHOTOFINISH_STORAGE=redis://…` serves from Redis: a second process, started after the
/// first was SIGKILLed, answers from the same data; a bad URL is a plain error.
#[test]
fn serve_on_redis_keeps_no_state_of_its_own() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = photofinish_testkit::redis::RedisProcess::start(dir.path(), &[]).expect("redis");
    let first = Proc::start_on_storage(BIN, &redis.url());
    assert!(cli(&["board", "create", "r", "--order", "asc"], &first.base).0);
    for (m, v) in [("ann", "30"), ("bob", "12")] {
        assert!(cli(&["submit", "r", m, v], &first.base).0);
    }
    first.kill9();
    let second = Proc::start_on_storage(BIN, &redis.url());
    let (ok, out, _) = cli(&["--json", "rank", "r", "bob"], &second.base);
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

/// A namespace in data format 1 (written before format 2; no format key, boards in the
/// registry) is refused at start and by `photofinish redis-upgrade`, each saying which
/// release upgrades it, and nothing in it changes.
#[test]
fn a_format_1_namespace_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = photofinish_testkit::redis::RedisProcess::start(dir.path(), &[]).expect("redis");
    let ns = "legacy";
    let mut c = redis.client().expect("client");
    let cfg = r#"{"order":"desc","update":"incr","reset":"never","timezone":"UTC","week_start":"monday","retention":8}"#;
    let mut p = redis::pipe();
    p.cmd("SET").arg(format!("{ns}:{{old}}:cfg")).arg(cfg);
    p.cmd("SADD").arg(format!("{ns}:boards")).arg("old");
    p.cmd("HSET")
        .arg(format!("{ns}:{{old}}:p:all:m"))
        .arg("alice")
        .arg("1500 999999999999999999999999999999999");
    let _: () = p.query(&mut c).expect("format 1 data");
    let keys = |c: &mut redis::Connection| -> Vec<String> {
        let mut k: Vec<String> = redis::cmd("KEYS").arg("*").query(c).expect("keys");
        k.sort();
        k
    };
    let before = keys(&mut c);
    let storage = redis.url();
    let envs = [
        ("PHOTOFINISH_STORAGE", storage.as_str()),
        ("PHOTOFINISH_REDIS_NAMESPACE", ns),
    ];
    for args in [
        &["serve", "--listen", "127.0.0.1:0", "--resp-listen", "off"][..],
        &["redis-upgrade"][..],
    ] {
        let out = Command::new(BIN)
            .args(args)
            .envs(envs)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} took a format-1 namespace");
        assert!(
            err.contains("format 1") && err.contains("4b01e0d"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(keys(&mut c), before, "a refusal changed the namespace");
}

/// `serve --workers N` runs N request threads (the runtime's own count, in the start-up
/// log line); 0 and more than 1024 are refused before anything starts, naming the flag.
#[test]
fn serve_takes_its_worker_count_and_refuses_one_out_of_range() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().expect("tmp");
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--resp-listen", "off"])
        .args(["--fsync", "never", "--workers", "3", "--data-dir"])
        .arg(dir.path())
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let line = stderr
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains(" listening "))
        .expect("a listening line");
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(line.contains("workers=3"), "{line}");
    for bad in ["0", "1025", "two"] {
        let out = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--workers", bad])
            .output()
            .expect("run");
        assert!(!out.status.success(), "--workers {bad} started");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--workers"), "{err}");
    }
}

/// A server whose launcher closed its stdout and stderr before it printed anything (as
/// `serve … | head -1` does after the first line) keeps serving: its start-up lines and
/// logs go nowhere, and the failed writes stop nothing.
#[test]
fn a_server_whose_output_was_closed_keeps_serving() {
    let dir = tempfile::tempdir().expect("tmp");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--resp-listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("RUST_LOG", "debug")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Both read ends closed at once: every write the server makes to them fails.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let healthz = || -> std::io::Result<bool> {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port))?;
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")?;
        let mut answer = String::new();
        c.read_to_string(&mut answer)?;
        Ok(answer.starts_with("HTTP/1.1 200"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut served = 0;
    while std::time::Instant::now() < deadline && served < 3 {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited with {status}");
        }
        served += usize::from(healthz().unwrap_or(false));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(served, 3, "the server answered /healthz");
    assert!(child.try_wait().expect("status").is_none(), "still running");
    child.kill().expect("kill");
    child.wait().expect("wait");
}

/// A second server started on a data directory another one serves exits at once with an
/// error that says so; the first goes on serving.
#[test]
fn a_second_server_on_one_data_directory_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = Proc::start(BIN, dir.path(), "always");
    assert!(cli(&["board", "create", "b"], &server.base).0);
    assert!(cli(&["submit", "b", "m", "1"], &server.base).0);
    let mut second = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--resp-listen",
            "off",
            "--data-dir",
        ])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = second.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            second.kill().expect("kill");
            panic!("a second server started on a directory in use");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut second.stderr.take().expect("stderr"), &mut err)
        .expect("stderr");
    assert!(!status.success());
    assert!(err.contains("in use"), "{err}");
    let (ok, out, e) = cli(&["--json", "top", "b"], &server.base);
    assert!(ok, "{e}");
    assert!(out.contains("\"m\""), "the first still serves: {out}");
}
