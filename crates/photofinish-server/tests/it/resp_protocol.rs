//! The RESP door as a protocol: `redis-cli` (arguments and piped inline commands) and
//! redis-py work unchanged; malformed input — random bytes, truncated frames, lengths
//! past their limits — is answered `-ERR Protocol error` or cut, never crashes the server
//! and never disturbs another connection; a pipeline past the per-round limits is answered
//! whole and in order; a command that stalls midway is cut at the deadline; a connection
//! over the cap is told so.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use photofinish_server::serve::ServeOptions;
use proptest::prelude::*;
use serde_json::json;

use crate::support::*;

fn port(s: &Server) -> String {
    s.resp.expect("RESP").port().to_string()
}

/// Runs `redis-cli -p PORT args…` with `stdin`; its stdout.
fn redis_cli(s: &Server, args: &[&str], stdin: &str) -> String {
    let mut child = Command::new("redis-cli")
        .args(["-p", &port(s)])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("redis-cli (Debian's redis-tools; scripts/test.sh installs it)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("redis-cli");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

// redis-cli runs as a blocking child process: the server keeps the other workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_cli_works_unchanged() {
    let s = Server::start(Kind::Embedded).await;
    assert_eq!(redis_cli(&s, &["LB.CREATE", "cli"], ""), "OK\n");
    assert_eq!(redis_cli(&s, &["LB.INCR", "cli", "ann", "5"], ""), "5\n");
    assert_eq!(redis_cli(&s, &["lb.incr", "cli", "bob", "7"], ""), "7\n");
    let range = redis_cli(&s, &["LB.RANGE", "cli", "0", "10"], "");
    let lines: Vec<&str> = range.lines().collect();
    assert_eq!(lines[..3], ["1", "bob", "7"], "{range}");
    assert_eq!(lines[4..7], ["2", "ann", "5"], "{range}");
    let err = redis_cli(&s, &["LB.INCR", "nope", "a", "1"], "");
    assert!(
        err.starts_with("(error) ERR board_not_found") || err.starts_with("ERR board_not_found"),
        "{err}"
    );
    // Commands piped in, one per line: inline commands, answered in order.
    let piped = redis_cli(
        &s,
        &[],
        "LB.INCR cli ann 1\nLB.RANK cli ann\nPING\nLB.CARD cli\n",
    );
    assert_eq!(piped, "6\n2\nPONG\n2\n");
    // The whole pipe as raw inline commands with quoting (redis-cli --pipe speaks RESP).
    let raw = redis_cli(&s, &["--pipe"], "LB.INCR cli \"carl x\" 3\r\n");
    assert!(raw.contains("errors: 0, replies: 1"), "{raw}");
    assert_eq!(redis_cli(&s, &["LB.SCORE", "cli", "carl x"], ""), "3\n");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_py_works_unchanged() {
    let s = Server::start(Kind::Embedded).await;
    let script = r#"
import sys, redis
port = int(sys.argv[1])
for proto in (2, 3):
    r = redis.Redis(port=port, protocol=proto, decode_responses=True)
    board = f"py{proto}"
    assert r.execute_command("LB.CREATE", board) in (True, "OK"), "create"
    assert r.execute_command("LB.INCR", board, "ann", 5) == 5
    p = r.pipeline(transaction=False)
    for i in range(100):
        p.execute_command("LB.INCR", board, "bob", 1)
    assert p.execute()[-1] == 100
    got = r.execute_command("LB.SUBMIT", board, "carl", 7)
    assert got[0] == 7 and got[1] == 2, got
    assert got[3] in (1, True), got
    assert r.execute_command("LB.RANK", board, "bob") == 1
    assert r.execute_command("LB.SCORE", board, "nobody") is None
    try:
        r.execute_command("LB.INCR", "missing", "x", 1)
        raise SystemExit("no error")
    except redis.ResponseError as e:
        assert str(e).startswith("board_not_found"), str(e)
    assert r.ping()
print("ok")
"#;
    let args = ["-c".to_owned(), script.to_owned(), port(&s)];
    let out = tokio::task::spawn_blocking(move || Command::new("python3").args(args).output())
        .await
        .expect("join")
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.trim() == "ok",
        "redis-py (pip install redis; scripts/test.sh does): {stdout} {stderr}"
    );
    s.stop().await;
}

/// Sends `bytes` on a fresh connection and reads until the server closes it or goes
/// quiet for 300 ms (fuzz input, which may leave the connection open); what it answered.
fn exchange(addr: std::net::SocketAddr, bytes: &[u8], close: bool) -> Vec<u8> {
    exchange_within(addr, bytes, close, Duration::from_millis(300))
}

/// Sends `bytes` on a fresh connection and reads until the server closes it, as it must
/// (a protocol error, `QUIT`, the connection cap), waiting up to 10 s for each read so
/// that a slow machine cannot cut the answer short.
fn until_closed(addr: std::net::SocketAddr, bytes: &[u8]) -> Vec<u8> {
    exchange_within(addr, bytes, false, Duration::from_secs(10))
}

fn exchange_within(
    addr: std::net::SocketAddr,
    bytes: &[u8],
    close: bool,
    quiet: Duration,
) -> Vec<u8> {
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(quiet)).expect("timeout");
    let _ = c.write_all(bytes);
    if close {
        let _ = c.shutdown(std::net::Shutdown::Write);
    }
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

/// A well-formed pipeline of increments of `m` on board `f`, as bytes.
fn increments(member: &str, n: usize) -> Vec<u8> {
    let one = format!(
        "*4\r\n$7\r\nLB.INCR\r\n$1\r\nf\r\n${}\r\n{member}\r\n$1\r\n1\r\n",
        member.len()
    );
    one.repeat(n).into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_input_closes_only_its_connection() {
    let s = Server::start(Kind::Embedded).await;
    let addr = s.resp.expect("RESP");
    let mut c = resp(&s).await;
    assert_eq!(lb(&mut c, &["LB.CREATE", "f"]).await, "OK");
    let fuzz = tokio::task::spawn_blocking(move || {
        let config = ProptestConfig {
            cases: 96,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        let mut runner = proptest::test_runner::TestRunner::new(config);
        // Random bytes, and well-formed pipelines cut anywhere with garbage after.
        let strategy = (
            proptest::collection::vec(any::<u8>(), 0..300),
            0usize..6,
            0usize..400,
            any::<bool>(),
        );
        runner
            .run(&strategy, |(garbage, n, cut, close)| {
                let mut input = increments("m", n);
                let cut = cut.min(input.len());
                input.truncate(cut);
                input.extend_from_slice(&garbage);
                let answer = exchange(addr, &input, close);
                // Every answer is a sequence of RESP lines; a protocol error is last.
                let text = String::from_utf8_lossy(&answer);
                if let Some(at) = text.find("-ERR Protocol error") {
                    prop_assert!(text[at..].trim_end().lines().count() == 1, "{text}");
                }
                Ok(())
            })
            .expect("fuzz");
    });
    fuzz.await.expect("fuzz task");
    // The server still serves, on a connection opened before and on a new one. (Member
    // `n`, which the fuzz never writes: a fuzz connection that closed without reading its
    // answers may still have increments of `m` being applied.)
    assert_eq!(lb(&mut c, &["PING"]).await, "PONG");
    let before = lb(&mut c, &["LB.SCORE", "f", "n"]).await;
    let mut fresh = resp(&s).await;
    assert_eq!(
        lb(&mut fresh, &["LB.INCR", "f", "n", "1"]).await,
        json!(before.as_i64().unwrap_or(0) + 1)
    );
    // Lengths past their limits are refused at the header, with the connection.
    for (input, why) in [
        (b"*1\r\n$99999999\r\n".to_vec(), "invalid bulk length"),
        (b"*9999999\r\n".to_vec(), "invalid multibulk length"),
        (b"*1\r\n*1\r\n$1\r\na\r\n".to_vec(), "expected '$'"),
        (vec![b'a'; 70_000], "too big inline request"),
    ] {
        let got = String::from_utf8_lossy(&until_closed(addr, &input)).into_owned();
        assert!(
            got.starts_with("-ERR Protocol error: ") && got.contains(why),
            "{got}"
        );
    }
    // Complete commands before a protocol error are answered (and applied) first.
    let mut input = increments("n", 2);
    input.extend_from_slice(b"*1\r\n:1\r\n");
    let got = String::from_utf8_lossy(&until_closed(addr, &input)).into_owned();
    let n = before.as_i64().unwrap_or(0);
    assert_eq!(
        got,
        format!(
            ":{}\r\n:{}\r\n-ERR Protocol error: expected '$', got ':'\r\n",
            n + 2,
            n + 3
        )
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_pipelines_stalls_and_the_connection_cap() {
    let s = Server::start_configured(Kind::Embedded, |o| ServeOptions {
        header_timeout: Duration::from_millis(500),
        max_connections: Some(3),
        ..o
    })
    .await;
    let addr = s.resp.expect("RESP");
    let mut c = resp(&s).await;
    assert_eq!(lb(&mut c, &["LB.CREATE", "l"]).await, "OK");
    // 3,000 writes then 300 full pages: past the per-round command limit and the reply
    // buffer, answered whole and in order.
    let mut pipe = redis::pipe();
    for i in 0..3000 {
        pipe.cmd("LB.SET")
            .arg("l")
            .arg(format!("member-{i:04}"))
            .arg(i);
    }
    for _ in 0..300 {
        pipe.cmd("LB.RANGE").arg("l").arg(0).arg(1000);
    }
    let got: Vec<redis::Value> = pipe.query_async(&mut c).await.expect("pipeline");
    assert_eq!(got.len(), 3300);
    assert_eq!(reply_json(Ok(got[2999].clone())), json!(2999));
    let page = reply_json(Ok(got[3299].clone()));
    assert_eq!(page.as_array().map(Vec::len), Some(1000));
    assert_eq!(page[0], json!([1, "member-2999", 2999, page[0][3]]));
    // A command that stops midway is cut at the deadline.
    let stalled = tokio::task::spawn_blocking(move || {
        let mut t = TcpStream::connect(addr).expect("connect");
        t.write_all(b"*2\r\n$4\r\nECHO\r\n$5\r\nab").expect("write");
        t.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let start = std::time::Instant::now();
        let mut buf = [0u8; 64];
        let n = t.read(&mut buf).unwrap_or(0);
        (n, start.elapsed())
    })
    .await
    .expect("stalled");
    assert_eq!(stalled.0, 0, "closed without an answer");
    assert!(stalled.1 < Duration::from_secs(5), "{:?}", stalled.1);
    // The cap: `c` and two more connections; the next is told so and closed.
    let _a = resp(&s).await;
    let _b = resp(&s).await;
    let over = tokio::task::spawn_blocking(move || until_closed(addr, b"PING\r\n"))
        .await
        .expect("over");
    assert_eq!(over, b"-ERR max number of clients reached\r\n");
    assert_eq!(lb(&mut c, &["PING"]).await, "PONG");
    // QUIT answers and closes.
    // (Once the server has seen two connections close: retried until it has, up to 10 s.)
    drop((_a, _b));
    let quit = tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = until_closed(addr, b"PING\r\nQUIT\r\nPING\r\n");
            if !got.starts_with(b"-ERR max number") || std::time::Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .expect("quit");
    assert_eq!(quit, b"+PONG\r\n+OK\r\n");
    s.stop().await;
}
