//! Headless Chromium driven over the DevTools protocol (a WebSocket of JSON commands), as
//! much as the console test needs: open a page, evaluate JavaScript, wait for a condition,
//! take a screenshot. Chromium is Debian's `chromium` (`scripts/test.sh` installs it), or
//! the binary `PHOTOFINISH_CHROMIUM` names. Started with the flags this machine needs:
//! no sandbox as root, no background networking (the network is closed).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A running headless Chromium with one page.
pub struct Browser {
    child: Child,
    page: Socket,
    next_id: u64,
    _profile: tempfile::TempDir,
}

fn chromium() -> String {
    std::env::var("PHOTOFINISH_CHROMIUM").unwrap_or_else(|_| "chromium".into())
}

impl Browser {
    /// Starts Chromium with a window of `width` × `height` CSS pixels.
    pub async fn start(width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let mut child = Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {}: {e} (scripts/test.sh installs Debian's chromium)",
                    chromium()
                )
            });
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/…" on stderr.
        let stderr = child.stderr.take().expect("stderr");
        let port = tokio::task::spawn_blocking(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    let port = url.split(':').nth(2).and_then(|p| p.split('/').next());
                    return port.map(str::to_owned);
                }
            }
            None
        })
        .await
        .expect("stderr reader")
        .expect("chromium printed its DevTools address");
        let list: Value = reqwest::get(format!("http://127.0.0.1:{port}/json/list"))
            .await
            .expect("targets")
            .json()
            .await
            .expect("targets JSON");
        let ws = list
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page"))
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .expect("a page target")
            .to_owned();
        let (page, _) = tokio_tungstenite::connect_async(ws).await.expect("connect");
        let mut b = Browser {
            child,
            page,
            next_id: 0,
            _profile: profile,
        };
        b.call("Page.enable", json!({})).await;
        b
    }

    /// Sends one command and returns its result (events in between are skipped).
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"id": id, "method": method, "params": params});
        self.page
            .send(Message::text(msg.to_string()))
            .await
            .expect("send");
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(30), self.page.next())
                .await
                .expect("an answer within 30 s")
                .expect("socket open")
                .expect("frame");
            let Message::Text(text) = frame else { continue };
            let v: Value = serde_json::from_str(&text).expect("JSON");
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// Opens `url`.
    pub async fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
    }

    /// The value of JavaScript `expr` (JSON-serializable).
    pub async fn eval(&mut self, expr: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Waits (up to 15 s) until `expr` is truthy; its last value.
    pub async fn wait_for(&mut self, expr: &str) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let v = self
                .eval(&format!(
                    "(() => {{ try {{ return {expr}; }} catch (e) {{ return null; }} }})()"
                ))
                .await;
            let truthy =
                !matches!(&v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("");
            if truthy {
                return v;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {expr}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A PNG of the page as it is now, written to `path`.
    pub async fn screenshot(&mut self, path: &std::path::Path) {
        use base64::Engine;
        let r = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("data"))
            .expect("base64");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("artifact dir");
        }
        std::fs::write(path, png).expect("write screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
