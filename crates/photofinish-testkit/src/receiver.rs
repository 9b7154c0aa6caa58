//! A webhook receiver on a free loopback port: it records every POST (headers and body)
//! and answers each with the next status of a script, then 200 (the period-close webhook
//! tests: a receiver that fails twice, then succeeds). Plain HTTP/1.1, one request per
//! connection.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One request the receiver took.
#[derive(Debug, Clone)]
pub struct Received {
    /// The request line's path.
    pub path: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// The status it was answered with.
    pub status: u16,
    /// When it arrived.
    pub at: Instant,
}

impl Received {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct Inner {
    script: VecDeque<u16>,
    got: Vec<Received>,
}

/// The receiver; it stops when dropped.
pub struct Receiver {
    /// `http://127.0.0.1:<port>/hook`.
    pub url: String,
    inner: Arc<Mutex<Inner>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The most of a request the receiver reads.
const MAX_REQUEST: usize = 4 << 20;

impl Receiver {
    /// A receiver answering `script` in order, then 200 to everything.
    pub async fn start(script: &[u16]) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let inner = Arc::new(Mutex::new(Inner {
            script: script.iter().copied().collect(),
            got: Vec::new(),
        }));
        let shared = inner.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((conn, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve_one(conn, shared.clone()));
            }
        });
        Receiver { url, inner, task }
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.inner.lock().expect("receiver").got.clone()
    }

    /// Waits until `n` requests arrived (panics after `within`); returns them all.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Received> {
        let end = Instant::now() + within;
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < end,
                "the receiver got {} requests in {within:?}, not {n}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Makes the following requests answered with `script`, then 200.
    pub fn answer(&self, script: &[u16]) {
        self.inner.lock().expect("receiver").script = script.iter().copied().collect();
    }
}

async fn serve_one(mut conn: tokio::net::TcpStream, inner: Arc<Mutex<Inner>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match conn.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > MAX_REQUEST {
            return;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or_default()
        .to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
        .min(MAX_REQUEST);
    while buf.len() < head_end + length {
        match conn.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = buf[head_end..head_end + length].to_vec();
    let status = {
        let mut inner = inner.lock().expect("receiver");
        let status = inner.script.pop_front().unwrap_or(200);
        inner.got.push(Received {
            path,
            headers,
            body,
            status,
            at: Instant::now(),
        });
        status
    };
    let reply = format!("HTTP/1.1 {status} X\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    let _ = conn.write_all(reply.as_bytes()).await;
    let _ = conn.shutdown().await;
}
