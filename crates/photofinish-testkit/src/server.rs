//! A real server on a free loopback port, in this process: on the embedded store in a temp
//! data dir, or on Redis (standalone or a 3-master cluster, each started once per test
//! binary from `redis-server` and shared, with a fresh key namespace per server); and the
//! `conformance!` macro that runs one test on all three.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::redis::{RedisCluster, RedisProcess};
use photofinish_core::clock::ManualClock;
use photofinish_server::serve::{serve_with, Bound, ServeOptions, SharedClock};
use photofinish_store::io::{RealStorage, Storage};
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Which backend a conformance test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The embedded store.
    Embedded,
    /// A standalone Redis holding the boards' logs (docs/redis-layout.md).
    Redis,
    /// A 3-master Redis Cluster holding them.
    Cluster,
}

/// Runs each named `async fn(Kind)` once per `test => Kind` pair, as tests of that name
/// in a module named after the function ([`conformance!`] and [`on_redis!`] are this with
/// their kinds).
#[macro_export]
macro_rules! on_kinds {
    (@one [$($test:ident => $kind:ident),*] $name:ident) => {
        mod $name {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    super::$name($crate::server::Kind::$kind).await
                }
            )*
        }
    };
    ($kinds:tt $($name:ident),* $(,)?) => {
        $($crate::on_kinds!(@one $kinds $name);)*
    };
}

/// Runs each named `async fn(Kind)` as three tests: on the embedded store, and on a
/// standalone Redis and a 3-master Redis Cluster (docs/redis-layout.md).
#[macro_export]
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        $crate::on_kinds!(
            [embedded => Embedded, redis => Redis, cluster => Cluster]
            $($name),*
        );
    };
}

/// Runs each named `async fn(Kind)` on a standalone Redis and on a 3-master Redis Cluster
/// (tests of the Redis crate's own parts: [`redis_conn`] connects to either).
#[macro_export]
macro_rules! on_redis {
    ($($name:ident),* $(,)?) => {
        $crate::on_kinds!([redis => Redis, cluster => Cluster] $($name),*);
    };
}

/// Where the standalone Redis (`Kind::Redis`) or the cluster (`Kind::Cluster`) this test
/// binary shares is.
pub async fn redis_target(kind: Kind) -> photofinish_redis::conn::Target {
    let url = tokio::task::spawn_blocking(move || match kind {
        Kind::Cluster => shared_cluster().url(),
        _ => shared_redis().url(),
    })
    .await
    .expect("redis");
    photofinish_redis::conn::Target::parse(&url).expect("url")
}

/// A connection to the standalone Redis (`Kind::Redis`) or the cluster (`Kind::Cluster`)
/// this test binary shares.
pub async fn redis_conn(kind: Kind) -> photofinish_redis::conn::Conn {
    let target = redis_target(kind).await;
    photofinish_redis::conn::Conn::connect(&target)
        .await
        .expect("connect")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("photofinish-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The standalone Redis this test binary shares.
pub fn shared_redis() -> &'static RedisProcess {
    static REDIS: OnceLock<RedisProcess> = OnceLock::new();
    REDIS.get_or_init(|| RedisProcess::start(&scratch("redis"), &[]).expect("start redis-server"))
}

/// The Redis Cluster this test binary shares.
pub fn shared_cluster() -> &'static RedisCluster {
    static CLUSTER: OnceLock<RedisCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| RedisCluster::start(&scratch("cluster"), 3).expect("start cluster"))
}

/// A key namespace no other server in this run uses.
pub fn fresh_namespace() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!("t{}", N.fetch_add(1, Ordering::Relaxed))
}

/// A running server and an HTTP client for it.
pub struct Server {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The client.
    pub http: reqwest::Client,
    /// The backend.
    pub kind: Kind,
    /// The RESP door's address, when the server has one (every server started through
    /// [`Self::start_configured`] does).
    pub resp: Option<SocketAddr>,
    opts: ServeOptions,
    storage: Arc<dyn Storage>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    dir: Option<Arc<tempfile::TempDir>>,
}

impl Server {
    /// A server on `kind`, with nothing in it.
    pub async fn start(kind: Kind) -> Server {
        Self::start_clocked(kind, SharedClock::default()).await
    }

    /// [`Self::start`] with its clock pinned at `now_us` (a `ManualClock`).
    pub async fn start_at(kind: Kind, now_us: i64) -> Server {
        let clock = SharedClock(Arc::new(ManualClock::new(now_us)));
        Self::start_set_by_hand(kind, clock).await
    }

    /// [`Self::start`] on a manual clock the test moves.
    pub async fn start_manual(kind: Kind, clock: Arc<ManualClock>) -> Server {
        Self::start_set_by_hand(kind, SharedClock(clock)).await
    }

    /// [`Self::start_manual`] with options `configure` adjusts (credentials, limits).
    pub async fn start_manual_configured(
        kind: Kind,
        clock: Arc<ManualClock>,
        configure: impl FnOnce(ServeOptions) -> ServeOptions,
    ) -> Server {
        Self::start_configured(kind, |o| {
            configure(ServeOptions {
                clock: SharedClock(clock),
                max_clock_skew: None,
                ..o
            })
        })
        .await
    }

    async fn start_clocked(kind: Kind, clock: SharedClock) -> Server {
        Self::start_configured(kind, |o| ServeOptions { clock, ..o }).await
    }

    /// A clock set by hand is far from Redis's: the log layout's skew check is off.
    async fn start_set_by_hand(kind: Kind, clock: SharedClock) -> Server {
        Self::start_configured(kind, |o| ServeOptions {
            clock,
            max_clock_skew: None,
            ..o
        })
        .await
    }

    /// A server on `kind` whose options `configure` adjusts (credentials, TLS, a clock).
    pub async fn start_configured(
        kind: Kind,
        configure: impl FnOnce(ServeOptions) -> ServeOptions,
    ) -> Server {
        let base = configure(ServeOptions {
            listen: "127.0.0.1:0".into(),
            resp_listen: Some("127.0.0.1:0".into()),
            ..ServeOptions::default()
        });
        match kind {
            Kind::Embedded => {
                let dir = Arc::new(tempfile::tempdir().expect("tmp"));
                let opts = ServeOptions {
                    data_dir: dir.path().to_path_buf(),
                    ..base
                };
                let mut s = Self::start_with(opts, Arc::new(RealStorage), kind).await;
                s.dir = Some(dir);
                s
            }
            Kind::Redis | Kind::Cluster => {
                let url = tokio::task::spawn_blocking(move || match kind {
                    Kind::Cluster => shared_cluster().url(),
                    _ => shared_redis().url(),
                })
                .await
                .expect("redis");
                let opts = ServeOptions {
                    storage: Some(url),
                    redis_namespace: fresh_namespace(),
                    ..base
                };
                Self::start_with(opts, Arc::new(RealStorage), kind).await
            }
        }
    }

    /// A server on the embedded store in `dir` (fsync `always`), through `storage`.
    pub async fn start_on(dir: &Path, storage: Arc<dyn Storage>) -> Server {
        Self::start_fsync(dir, storage, photofinish_store::FsyncPolicy::Always).await
    }

    /// A server on the embedded store in `dir` with fsync `policy`, through `storage`.
    pub async fn start_fsync(
        dir: &Path,
        storage: Arc<dyn Storage>,
        policy: photofinish_store::FsyncPolicy,
    ) -> Server {
        let opts = ServeOptions {
            listen: "127.0.0.1:0".into(),
            resp_listen: Some("127.0.0.1:0".into()),
            data_dir: dir.to_path_buf(),
            fsync: policy,
            ..ServeOptions::default()
        };
        Self::start_with(opts, storage, Kind::Embedded).await
    }

    /// A server with `opts`.
    pub async fn start_with(opts: ServeOptions, storage: Arc<dyn Storage>, kind: Kind) -> Server {
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<Bound>();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (serve_opts, serve_storage) = (opts.clone(), storage.clone());
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stop_rx.await;
            };
            serve_with(
                serve_opts,
                serve_storage,
                move |addr| {
                    let _ = ready_tx.send(addr);
                },
                shutdown,
            )
            .await
            .expect("serve");
        });
        let bound = ready_rx.await.expect("server ready");
        Server {
            base: format!("http://{}", bound.http),
            resp: bound.resp,
            http: reqwest::Client::new(),
            kind,
            opts,
            storage,
            stop: Some(stop_tx),
            task: Some(task),
            dir: None,
        }
    }

    /// Another server on the same data (the same Redis namespace, or the same data dir once
    /// this one has stopped); `self` keeps running.
    pub async fn sibling(&self) -> Server {
        self.sibling_with(|o| o).await
    }

    /// [`Self::sibling`] with options `configure` adjusts (another node's settings).
    pub async fn sibling_with(
        &self,
        configure: impl FnOnce(ServeOptions) -> ServeOptions,
    ) -> Server {
        let opts = configure(self.opts.clone());
        let mut s = Self::start_with(opts, self.storage.clone(), self.kind).await;
        s.dir = self.dir.clone();
        s
    }

    /// [`Self::restart`] with options `configure` adjusts (a budget, a limit).
    pub async fn restart_with(
        mut self,
        configure: impl FnOnce(ServeOptions) -> ServeOptions,
    ) -> Server {
        let dir = self.dir.take();
        let (opts, storage, kind) = (self.opts.clone(), self.storage.clone(), self.kind);
        self.stop().await;
        let mut s = Self::start_with(configure(opts), storage, kind).await;
        s.dir = dir;
        s
    }

    /// Stops gracefully and starts a new server on the same data.
    pub async fn restart(mut self) -> Server {
        let dir = self.dir.take();
        let (opts, storage, kind) = (self.opts.clone(), self.storage.clone(), self.kind);
        self.stop().await;
        let mut s = Self::start_with(opts, storage, kind).await;
        s.dir = dir;
        s
    }

    /// The Redis key namespace, on a Redis backend.
    pub fn namespace(&self) -> Option<&str> {
        self.opts
            .storage
            .as_ref()
            .map(|_| self.opts.redis_namespace.as_str())
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

    /// Sends a request with an optional JSON body; the status and the body as JSON (a
    /// non-JSON body as a JSON string, an empty one as null).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.call_as(None, method, path, body).await
    }

    /// [`Self::call`] with `Authorization: Bearer <token>` when `token` is given.
    pub async fn call_as(
        &self,
        token: Option<&str>,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
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

    /// Sends `body` as it is, labelled JSON.
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

    /// `GET path`.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, None).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::PUT, path, Some(body)).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some(body)).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::DELETE, path, None).await
    }
}

/// `clients` concurrent clients, spread round-robin over `bases`, each increment `member`
/// of `board` by 1 `per_client` times; every answer must be 200.
pub async fn increment_concurrently(
    bases: &[&str],
    board: &str,
    member: &str,
    clients: usize,
    per_client: usize,
) {
    let mut tasks = Vec::new();
    for i in 0..clients {
        let http = reqwest::Client::new();
        let url = format!("{}/v1/boards/{board}/scores", bases[i % bases.len()]);
        let body = serde_json::json!({"member": member, "score": 1});
        tasks.push(tokio::spawn(async move {
            for _ in 0..per_client {
                let resp = http.post(&url).json(&body).send().await.expect("send");
                let status = resp.status();
                assert_eq!(status, 200, "{}", resp.text().await.unwrap_or_default());
            }
        }));
    }
    for t in tasks {
        t.await.expect("client");
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
