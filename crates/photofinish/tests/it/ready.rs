//! `/readyz` through the binary (docs/SPEC.md §18): 503 while a 1M-member snapshot loads
//! (the door is bound first: `/healthz` says alive, other requests 503 at once) and 200
//! after; on Redis, 503 with the reason while Redis is stopped and 200 once it is back.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

/// `photofinish serve` on `addr` over `data`, RESP off, with `extra` flags, its stdout to
/// `stdout` — spawned, not waited for: the door answers before the data is loaded.
fn serve_at(
    addr: &str,
    data: &std::path::Path,
    extra: &[&str],
    stdout: Stdio,
) -> std::process::Child {
    Command::new(BIN)
        .args([
            "serve",
            "--listen",
            addr,
            "--resp-listen",
            "off",
            "--data-dir",
        ])
        .arg(data)
        .args(extra)
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn")
}

/// Polls `check` every 5 ms for up to `within`.
fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// A board of 1M members, snapshotted; the server started again on it answers `/readyz`
/// 503 ("loading") while the snapshot loads — `/healthz` 200, a read 503 with
/// `Retry-After` — then 200, and serves the board.
#[test]
fn readyz_is_503_while_a_million_member_snapshot_loads() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().join("data");
    let rows = dir.path().join("rows.jsonl");
    let mut text = String::with_capacity(32_000_000);
    for i in 0..1_000_000u32 {
        text += &format!("{{\"member\":\"m{i:07}\",\"score\":{i}}}\n");
    }
    std::fs::write(&rows, text).expect("rows");
    let server = Proc::start(BIN, &data, "never");
    assert!(cli(&["board", "create", "big"], &server.base).0);
    let (ok, _, err) = cli(
        &["import", "--board", "big", &rows.display().to_string()],
        &server.base,
    );
    assert!(ok, "{err}");
    assert!(server.terminate().success());

    let port = photofinish_testkit::redis::free_port().expect("port");
    let addr = format!("127.0.0.1:{port}");
    let mut child = serve_at(&addr, &data, &[], Stdio::piped());
    let mut loading = None;
    let seen = eventually(Duration::from_secs(30), || {
        loading = raw_get(&addr, "/readyz");
        loading.is_some()
    });
    assert!(seen, "the door was not bound while loading");
    let (status, body) = loading.expect("an answer");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("loading"), "{body}");
    let alive = raw_get(&addr, "/healthz").expect("healthz");
    let read = raw_get(&addr, "/v1/boards/big");
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    stdout.read_line(&mut line).expect("listening line");
    assert!(line.contains("listening"), "{line}");
    assert_eq!(raw_get(&addr, "/readyz").map(|r| r.0), Some(200));
    let board = raw_get(&addr, "/v1/boards/big").expect("board");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(alive.0, 200, "{alive:?}");
    // Asked while loading, unless the load had ended by then.
    if let Some((status, body)) = read {
        assert!(status == 503 || status == 200, "{status} {body}");
    }
    assert!(board.1.contains("1000000"), "{}", board.1);

    // SIGTERM while the data loads ends the start at once: not after a stop's delay.
    let delay = ["--shutdown-delay", "20s", "--shutdown-grace", "30s"];
    let mut child = serve_at(&addr, &data, &delay, Stdio::null());
    let seen = eventually(Duration::from_secs(30), || {
        raw_get(&addr, "/readyz").is_some_and(|(status, _)| status == 503)
    });
    assert!(seen, "not seen loading");
    let signalled = Instant::now();
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(
        signalled.elapsed() < Duration::from_secs(10),
        "{:?}",
        signalled.elapsed()
    );
}

/// On Redis, `/readyz` is 200 while Redis answers, 503 naming Redis while it is stopped,
/// and 200 again once it is back; `/healthz` stays 200 (the process is alive).
#[test]
fn readyz_on_redis_follows_redis() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut redis =
        photofinish_testkit::redis::RedisProcess::start(dir.path(), &[]).expect("redis");
    let server = Proc::start_on_storage(BIN, &redis.url());
    let addr = server.base.trim_start_matches("http://").to_owned();
    let status = |path: &str| raw_get(&addr, path).map(|r| r.0);
    assert_eq!(status("/readyz"), Some(200));
    redis.kill();
    let mut down = None;
    assert!(eventually(Duration::from_secs(20), || {
        down = raw_get(&addr, "/readyz");
        down.as_ref().is_some_and(|r| r.0 == 503)
    }));
    let (_, body) = down.expect("an answer");
    assert!(body.contains("redis"), "{body}");
    assert_eq!(status("/healthz"), Some(200));
    redis.restart().expect("restart");
    assert!(eventually(Duration::from_secs(20), || status("/readyz") == Some(200)));
}
