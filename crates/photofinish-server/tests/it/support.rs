//! A real server on a free loopback port, in this process, on a temp data dir.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use photofinish_server::serve::{serve_with, ServeOptions};
use photofinish_store::io::{RealStorage, Storage};
use reqwest::{Method, StatusCode};
use serde_json::Value;

pub struct Server {
    pub base: String,
    pub http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    pub async fn start() -> Server {
        let dir = tempfile::tempdir().expect("tmp");
        let mut s = Self::start_on(dir.path(), Arc::new(RealStorage)).await;
        s._dir = Some(dir);
        s
    }

    pub async fn start_on(dir: &Path, storage: Arc<dyn Storage>) -> Server {
        let opts = ServeOptions {
            listen: "127.0.0.1:0".into(),
            data_dir: dir.to_path_buf(),
            ..ServeOptions::default()
        };
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<SocketAddr>();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stop_rx.await;
            };
            serve_with(
                opts,
                storage,
                move |addr| {
                    let _ = ready_tx.send(addr);
                },
                shutdown,
            )
            .await
            .expect("serve");
        });
        let addr = ready_rx.await.expect("server ready");
        Server {
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            stop: Some(stop_tx),
            task: Some(task),
            _dir: None,
        }
    }

    /// Graceful stop: in-flight requests finish, the log is synced.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            t.await.expect("server task");
        }
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        let v = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, v)
    }

    pub async fn raw(&self, method: Method, path: &str, body: &str) -> (StatusCode, Value) {
        let resp = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .expect("request");
        let status = resp.status();
        let v = resp.json().await.unwrap_or(Value::Null);
        (status, v)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, None).await
    }

    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::PUT, path, Some(body)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::DELETE, path, None).await
    }
}

/// Asserts an error answer's status and code.
pub fn assert_error(got: &(StatusCode, Value), status: u16, code: &str) {
    assert_eq!(got.0.as_u16(), status, "{got:?}");
    assert_eq!(got.1["error"]["code"], code, "{got:?}");
    assert!(
        got.1["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{got:?}"
    );
}
