//! Connection limits through the real binary (docs/SPEC.md §7): a flood of silent
//! connections beyond the open-file limit does not lock a real client out, trickled
//! headers are cut at the header deadline, and an idle keep-alive connection outlives it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::*;

fn addr(p: &Proc) -> String {
    p.base.trim_start_matches("http://").to_owned()
}

/// One `GET path` on a new connection; the status line and body, or the I/O error.
fn get(addr: &str, path: &str, timeout: Duration) -> std::io::Result<String> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(timeout))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

fn serve_limited(dir: &std::path::Path, extra: &[&str]) -> Proc {
    let mut cmd = Command::new("prlimit");
    cmd.args([
        "--nofile=1024",
        "--",
        BIN,
        "serve",
        "--listen",
        "127.0.0.1:0",
    ])
    .arg("--data-dir")
    .arg(dir)
    .args(extra);
    Proc::spawn_command(cmd)
}

#[test]
fn a_flood_of_silent_connections_does_not_lock_out_a_real_client() {
    // This process holds the flood: it needs more descriptors than the server may.
    let (_, hard) = rlimit::Resource::NOFILE.get().expect("getrlimit");
    rlimit::Resource::NOFILE
        .set(hard, hard)
        .expect("raise this test's open-file limit");
    assert!(
        hard >= 1300,
        "the test needs 1,300 descriptors, the hard limit is {hard}"
    );
    let dir = tempfile::tempdir().expect("tmp");
    let server = serve_limited(dir.path(), &[]);
    let a = addr(&server);

    let flood: Vec<TcpStream> = (0..1100)
        .map(|_| TcpStream::connect(&a).expect("connect"))
        .collect();
    let start = Instant::now();
    let answer = get(&a, "/healthz", Duration::from_secs(15)).expect("healthz during the flood");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(start.elapsed() < Duration::from_secs(15));

    // Extra connections were closed at the cap and counted.
    let metrics = get(&a, "/metrics", Duration::from_secs(15)).expect("metrics");
    let refused = metrics
        .lines()
        .find(|l| l.starts_with("photofinish_refusals_total{reason=\"connection_cap\"}"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no connection_cap counter in {metrics}"));
    assert!(refused >= 1100 - 922, "refused {refused}");

    drop(flood);
    // Served normally once they are gone: a burst of requests on new connections.
    for i in 0..50 {
        let r = get(&a, "/v1/boards", Duration::from_secs(5)).expect("after the flood");
        assert!(r.starts_with("HTTP/1.1 200"), "request {i}: {r}");
    }
}

#[test]
fn trickled_headers_are_cut_at_the_deadline_and_idle_connections_outlive_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = Proc::start_with(BIN, dir.path(), &["--header-timeout", "1"]);
    let a = addr(&server);

    // A byte every 200 ms never finishes the headers: cut after ~1 s, not kept alive.
    let mut slow = TcpStream::connect(&a).expect("connect");
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let start = Instant::now();
    slow.write_all(b"GET /healthz HTTP/1.1\r\n").expect("write");
    let mut cut = false;
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(200));
        if slow.write_all(b"X").is_err() {
            cut = true;
            break;
        }
        let mut probe = [0u8; 64];
        slow.set_nonblocking(true).expect("nonblocking");
        let r = slow.read(&mut probe);
        slow.set_nonblocking(false).expect("blocking");
        if matches!(r, Ok(0)) || matches!(&r, Err(e) if e.kind() != std::io::ErrorKind::WouldBlock)
        {
            cut = true;
            break;
        }
    }
    let took = start.elapsed();
    assert!(cut, "trickled headers were never cut");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(4),
        "cut after {took:?}"
    );

    // A keep-alive connection idle for longer than the header timeout still serves.
    let mut keep = TcpStream::connect(&a).expect("connect");
    keep.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    for round in 0..2 {
        keep.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("write");
        let mut buf = [0u8; 512];
        let n = keep.read(&mut buf).expect("read");
        let text = String::from_utf8_lossy(&buf[..n]);
        assert!(text.starts_with("HTTP/1.1 200"), "round {round}: {text}");
        std::thread::sleep(Duration::from_millis(2500));
    }
}
