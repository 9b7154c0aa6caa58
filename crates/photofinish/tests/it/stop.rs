//! The graceful stop and `/readyz` through the binary (docs/SPEC.md §18): SIGTERM under
//! 32 concurrent writers answers every request it took and loses none it acknowledged;
//! `/readyz` turns 503 at once while the listener serves on for the delay; a request
//! still running at the grace's end is answered 503; an event stream ends with a
//! `retry:` hint; a second signal exits at once.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::*;

fn signal(pid: u32, sig: &str) {
    let sent = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill {sig} {pid}");
}

/// A server on `dir` with the stop's `delay` and `grace`.
fn serve(dir: &std::path::Path, delay: &str, grace: &str) -> Proc {
    Proc::start_with(
        BIN,
        dir,
        &[
            "--fsync",
            "always",
            "--shutdown-delay",
            delay,
            "--shutdown-grace",
            grace,
        ],
    )
}

/// What one writer saw.
#[derive(Default)]
struct Seen {
    acknowledged: Vec<String>,
    refused: usize,
    unanswered: Vec<String>,
}

/// 32 writers, each sending writes of new members one after another on its own client,
/// as a load balancer's clients do: until `/readyz` says the node is leaving (a watcher
/// polls it, as the balancer would). SIGTERM while they write: `/readyz` turns 503 while
/// the listener still serves; every request sent got an answer (200, or 503 during the
/// stop) — none was cut, none refused at connect — the process exits 0 within the grace
/// and a second, and after a restart every acknowledged write is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_under_32_writers_answers_every_request_and_loses_none() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = tokio::task::block_in_place(|| serve(dir.path(), "1s", "3s"));
    let base = server.base.clone();
    assert!(cli(&["board", "create", "b"], &base).0);
    assert_eq!(raw_get(&base, "/readyz").map(|r| r.0), Some(200));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..32)
        .map(|w| {
            let (base, stop) = (base.clone(), stop.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let mut seen = Seen::default();
                for n in 0.. {
                    let member = format!("w{w}-{n}");
                    let body = serde_json::json!({"member": member, "score": n});
                    let sent = http
                        .post(format!("{base}/v1/boards/b/scores"))
                        .json(&body)
                        .send()
                        .await;
                    match sent {
                        Ok(r) if r.status() == 200 => seen.acknowledged.push(member),
                        Ok(r) if r.status() == 503 => seen.refused += 1,
                        Ok(r) => panic!("{member}: {}", r.status()),
                        Err(e) => seen.unanswered.push(format!("{member}: {e:?}")),
                    }
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
                seen
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = server.pid();
    let signalled = Instant::now();
    signal(pid, "-TERM");
    // The balancer: polls readiness, and takes the node out when it says 503.
    let mut readiness = Vec::new();
    while readiness.last() != Some(&Some(503)) && signalled.elapsed() < Duration::from_millis(900) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        readiness.push(tokio::task::block_in_place(|| {
            raw_get(&base, "/readyz").map(|r| r.0)
        }));
    }
    assert_eq!(
        readiness.last(),
        Some(&Some(503)),
        "readyz during the delay: {readiness:?}"
    );
    stop.store(true, Ordering::Relaxed);
    let status = tokio::task::block_in_place(|| server.wait());
    let took = signalled.elapsed();
    assert!(status.success(), "exit status {status:?}");
    assert!(took <= Duration::from_secs(4), "took {took:?} to exit");
    let mut acknowledged = Vec::new();
    for w in writers {
        let seen = w.await.expect("writer");
        assert!(
            seen.unanswered.is_empty(),
            "unanswered: {:?}",
            seen.unanswered
        );
        acknowledged.extend(seen.acknowledged);
        let _ = seen.refused;
    }
    assert!(
        acknowledged.len() > 32,
        "only {} writes",
        acknowledged.len()
    );
    let again = tokio::task::block_in_place(|| serve(dir.path(), "0s", "3s"));
    let http = reqwest::Client::new();
    let all = entries(&http, &again.base, "b", "ordinal").await;
    let held: std::collections::HashSet<&str> = all["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["member"].as_str())
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|m| !held.contains(m.as_str()))
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged writes lost: {lost:?}",
        lost.len()
    );
}

/// A request still running when the grace ends — here a body that never finishes
/// arriving — is answered 503 `shutting_down`, not cut; when the listeners close (after
/// the delay) an event stream ends with a `retry:` hint, idle keep-alive HTTP and RESP
/// connections are closed, and no connection is accepted.
#[test]
fn what_still_runs_at_the_grace_is_answered_503_and_streams_say_retry() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = serve(dir.path(), "300ms", "1500ms");
    assert!(cli(&["board", "create", "b"], &server.base).0);
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut slow = TcpStream::connect(&addr).expect("connect");
    write!(
        slow,
        "POST /v1/boards/b/scores HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{{\"member\""
    )
    .expect("write");
    let mut events = TcpStream::connect(&addr).expect("connect");
    write!(
        events,
        "GET /v1/boards/b/events HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    .expect("write");
    // An idle keep-alive HTTP connection and an idle RESP one, each after one answer.
    let mut idle = TcpStream::connect(&addr).expect("connect");
    write!(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").expect("write");
    let mut resp = TcpStream::connect(server.resp.as_deref().expect("resp")).expect("resp");
    resp.write_all(b"PING\r\n").expect("ping");
    for s in [&idle, &resp] {
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
    }
    let mut first = [0u8; 512];
    assert!(idle.read(&mut first).expect("answer") > 0);
    assert!(resp.read(&mut first).expect("pong") > 0);
    std::thread::sleep(Duration::from_millis(300));
    let signalled = Instant::now();
    signal(server.pid(), "-TERM");
    for s in [&slow, &events] {
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
    }
    let mut stream = String::new();
    let _ = events.read_to_string(&mut stream);
    // Past the delay, while the slow request holds the process in its grace: nothing new
    // is accepted.
    std::thread::sleep(Duration::from_millis(600).saturating_sub(signalled.elapsed()));
    assert!(
        TcpStream::connect(&addr).is_err(),
        "a connection was accepted after the delay"
    );
    assert!(stream.contains("retry: 2000"), "{stream}");
    // The idle connections were closed when the listeners closed, before the grace.
    for (name, mut s) in [("http", idle), ("resp", resp)] {
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        let at = signalled.elapsed();
        assert!(at < Duration::from_millis(1400), "{name} closed at {at:?}");
    }
    let mut answer = String::new();
    let _ = slow.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("shutting_down"), "{answer}");
    assert!(signalled.elapsed() >= Duration::from_millis(1400));
    assert!(server.wait().success());
}

/// A RESP pipeline still running when the grace ends is answered, not cut: on the Redis
/// backend, with Redis holding every write the node sends (`CLIENT PAUSE … WRITE`), an
/// `LB.INCR` waits on its append when the grace ends (before Redis's own 2 s response
/// timeout would answer it `storage_unavailable`): it is answered `-ERR shutting_down`,
/// and so is the `LB.RANK` pipelined after it, which never runs; then the connection
/// closes, and once Redis takes writes again the node exits 0.
#[test]
fn a_resp_pipeline_still_running_at_the_grace_is_answered_shutting_down() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = photofinish_testkit::redis::RedisProcess::start(&dir.path().join("redis"), &[])
        .expect("redis");
    let mut cmd = Command::new(BIN);
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--storage",
        &redis.url(),
    ])
    .args(["--redis-namespace", "stop", "--shutdown-delay", "200ms"])
    .args(["--shutdown-grace", "800ms"]);
    let server = Proc::spawn_command(cmd);
    assert!(cli(&["board", "create", "b"], &server.base).0);
    let mut resp = TcpStream::connect(server.resp.as_deref().expect("resp")).expect("resp");
    resp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    resp.write_all(b"LB.INCR b warm 1\r\n").expect("write");
    let mut first = [0u8; 64];
    assert!(resp.read(&mut first).expect("answer") > 0);
    let mut admin = redis::Client::open(redis.url())
        .expect("url")
        .get_connection()
        .expect("redis");
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(20_000)
        .arg("WRITE")
        .query(&mut admin)
        .expect("pause");
    signal(server.pid(), "-TERM");
    resp.write_all(b"LB.INCR b m 5\r\nLB.RANK b m\r\n")
        .expect("pipeline");
    let mut answer = Vec::new();
    let _ = resp.read_to_end(&mut answer);
    let _: () = redis::cmd("CLIENT")
        .arg("UNPAUSE")
        .query(&mut admin)
        .expect("unpause");
    let answer = String::from_utf8_lossy(&answer);
    let lines: Vec<&str> = answer.lines().collect();
    assert_eq!(lines.len(), 2, "{answer}");
    for line in lines {
        assert!(line.starts_with("-ERR shutting_down "), "{answer}");
    }
    assert!(server.wait().success());
}

/// A second signal ends a stop at once: the process does not wait for the grace.
#[test]
fn a_second_signal_exits_at_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = serve(dir.path(), "20s", "30s");
    let pid = server.pid();
    signal(pid, "-TERM");
    std::thread::sleep(Duration::from_millis(300));
    let signalled = Instant::now();
    signal(pid, "-INT");
    let status = server.wait();
    assert!(
        signalled.elapsed() < Duration::from_secs(5),
        "waited for the grace"
    );
    assert_eq!(status.code(), Some(1), "{status:?}");
}

/// A delay that does not end before the grace is refused at start (exit 2, as a bad flag
/// is, naming both).
#[test]
fn a_delay_past_the_grace_is_refused() {
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--shutdown-delay", "5s"])
        .args(["--shutdown-grace", "5s"])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--shutdown-delay") && err.contains("--shutdown-grace"),
        "{err}"
    );
}
