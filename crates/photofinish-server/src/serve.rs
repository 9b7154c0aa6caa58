//! Running the server: load the credentials (and refuse to serve an open server beyond
//! loopback: protected mode), open (recover) the embedded store or connect to Redis, bind,
//! serve until the shutdown signal, then stop accepting, finish in-flight requests, let the
//! writer drain and sync, and return.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use photofinish_core::budget::MemoryBudget;
use photofinish_core::clock::{Clock, SystemClock};
use photofinish_core::{BoardError, Leaderboard};
use photofinish_store::io::{RealStorage, Storage};
use photofinish_store::{FsyncPolicy, Store, StoreError, StoreOptions};

use photofinish_redis::node::LogStore;
use photofinish_redis::Target;

use crate::app::App;
use crate::auth::jwt::JwtOptions;
use crate::auth::Authenticator;
use crate::conns::{Connections, Limits};
use crate::gate::Gate;
use crate::listen::TlsFiles;
use crate::metrics::Metrics;
use crate::rate::{Limiter, Rate};
use crate::webhook::WebhookOptions;

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Address to bind, e.g. `127.0.0.1:7770` (port 0 picks a free one).
    pub listen: String,
    /// Address of the RESP door (docs/SPEC.md §9), `None` for none. The CLI's default is
    /// `127.0.0.1:7771`; a library user (and every test) asks for it.
    pub resp_listen: Option<String>,
    /// Data directory.
    pub data_dir: PathBuf,
    /// fsync policy.
    pub fsync: FsyncPolicy,
    /// Segment size that triggers a snapshot.
    pub segment_bytes: u64,
    /// `None` for the embedded store in `data_dir`; else a Redis URL
    /// (`redis://host:port[/db]` or `redis+cluster://host:port[,host:port…]`).
    pub storage: Option<String>,
    /// Prefix of every Redis key (several deployments can share one Redis).
    pub redis_namespace: String,
    /// On Redis, the bound on the difference between this node's clock and Redis's
    /// (docs/SPEC.md §12, "Time"; `None`: unchecked, for a clock a test sets by hand).
    pub max_clock_skew: Option<std::time::Duration>,
    /// On Redis, reads of every write acknowledged before (the default), or of
    /// what this node applied lately (`--redis-reads local`).
    pub redis_reads: photofinish_redis::node::Reads,
    /// On Redis, `--redis-wait N`: replicas that must confirm each group commit.
    pub redis_wait: u32,
    /// How long the audit log keeps each admin change (docs/SPEC.md §15).
    pub audit_retention: std::time::Duration,
    /// The most members one step of a league's close ranks (docs/competitions.md);
    /// smaller in tests that stop a server mid-close.
    pub close_step_members: u32,
    /// Where "now" comes from: the system clock, unless a test pins it.
    pub clock: SharedClock,
    /// The API keys file (docs/SPEC.md §6); re-read on SIGHUP.
    pub keys: Option<PathBuf>,
    /// How to verify players' tokens, if they are taken.
    pub jwt: Option<JwtOptions>,
    /// Serve without credentials on a non-loopback address (protected mode off).
    pub allow_unauthenticated: bool,
    /// Serve HTTPS with this certificate and key.
    pub tls: Option<TlsFiles>,
    /// A request's headers must arrive within this (docs/SPEC.md §7).
    pub header_timeout: std::time::Duration,
    /// Connections held at once; `None` for the cap under the open-file limit
    /// ([`crate::conns::cap_for`]), which also bounds a given value.
    pub max_connections: Option<u64>,
    /// Most boards (docs/SPEC.md §7); `None` for no limit.
    pub max_boards: Option<u64>,
    /// The memory budget, bytes; `None` for 75% of physical memory.
    pub max_memory: Option<u64>,
    /// Each player's rate (docs/SPEC.md §7).
    pub player_rate: Rate,
    /// Each anonymous client address's rate, on a server with credentials.
    pub anonymous_rate: Rate,
    /// How long idempotency keys are kept (docs/SPEC.md §7; the CLI takes ≥ 24 h).
    pub idempotency_ttl: std::time::Duration,
    /// How period-close webhooks are signed (docs/webhooks.md).
    pub webhook: WebhookOptions,
}

/// Boards a server holds unless told otherwise (docs/SPEC.md §7).
pub const DEFAULT_MAX_BOARDS: u64 = 10_000;
/// How often the memory estimate is sampled.
pub const MEMORY_SAMPLE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// 75% of physical memory (`MemTotal` of /proc/meminfo), or 4 GiB if it cannot be read.
pub fn default_max_memory() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib * 1024)
    });
    total.map_or(4 << 30, |t| t / 4 * 3)
}

/// Drops the rate buckets that are full again, every [`crate::rate::FORGET_INTERVAL`].
async fn forget_idle_buckets(limiter: std::sync::Weak<Limiter>) {
    let mut tick = tokio::time::interval(crate::rate::FORGET_INTERVAL);
    loop {
        tick.tick().await;
        let Some(l) = limiter.upgrade() else { return };
        l.forget_idle();
    }
}

/// Samples the service's memory estimate into `budget` until the service is gone.
async fn sample_memory(service: std::sync::Weak<dyn Leaderboard>, budget: Arc<MemoryBudget>) {
    let mut tick = tokio::time::interval(MEMORY_SAMPLE_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(service) = service.upgrade() else {
            return;
        };
        match service.memory_estimate().await {
            Ok(bytes) => {
                let was_over = budget.over().is_some();
                budget.set_estimate(bytes);
                match (was_over, budget.over().is_some()) {
                    (false, true) => tracing::warn!(
                        estimate = bytes,
                        limit = budget.limit(),
                        "memory estimate over --max-memory: writes adding members are refused"
                    ),
                    (true, false) => tracing::info!(
                        estimate = bytes,
                        limit = budget.limit(),
                        "memory estimate back under --max-memory"
                    ),
                    _ => {}
                }
            }
            Err(e) => tracing::debug!(error = %e, "memory estimate unavailable"),
        }
    }
}

/// A clock shared by the backend and whoever set it (tests move a `ManualClock`).
#[derive(Clone)]
pub struct SharedClock(pub Arc<dyn Clock>);

impl Default for SharedClock {
    fn default() -> Self {
        Self(Arc::new(SystemClock))
    }
}

impl std::fmt::Debug for SharedClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedClock(now = {} µs)", self.0.now_us())
    }
}

/// The default Redis key namespace.
pub const DEFAULT_REDIS_NAMESPACE: &str = "pf";

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:7770".into(),
            resp_listen: None,
            data_dir: PathBuf::from("./photofinish-data"),
            fsync: FsyncPolicy::Always,
            segment_bytes: photofinish_store::writer::DEFAULT_SEGMENT_BYTES,
            storage: None,
            redis_namespace: DEFAULT_REDIS_NAMESPACE.into(),
            max_clock_skew: Some(photofinish_redis::node::DEFAULT_MAX_CLOCK_SKEW),
            redis_reads: photofinish_redis::node::Reads::Fresh,
            redis_wait: 0,
            close_step_members: photofinish_core::league::CLOSE_STEP_MEMBERS,
            audit_retention: std::time::Duration::from_micros(
                photofinish_core::audit::DEFAULT_AUDIT_RETENTION_US as u64,
            ),
            clock: SharedClock::default(),
            keys: None,
            jwt: None,
            allow_unauthenticated: false,
            tls: None,
            header_timeout: crate::conns::DEFAULT_HEADER_TIMEOUT,
            max_connections: None,
            max_boards: Some(DEFAULT_MAX_BOARDS),
            max_memory: None,
            player_rate: crate::rate::DEFAULT_PLAYER_RATE,
            anonymous_rate: crate::rate::DEFAULT_ANONYMOUS_RATE,
            idempotency_ttl: std::time::Duration::from_secs(24 * 3600),
            webhook: WebhookOptions::default(),
        }
    }
}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The store could not open (I/O error or damaged data).
    #[error("cannot open the data directory: {0}")]
    Store(#[from] StoreError),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The error.
        source: std::io::Error,
    },
    /// The RESP address could not be bound.
    #[error("cannot listen for RESP on {addr} (--resp-listen): {source}; give another address, or --resp-listen off")]
    RespBind {
        /// The address.
        addr: String,
        /// The error.
        source: std::io::Error,
    },
    /// The storage URL is not one Photofinish knows.
    #[error("unknown storage {0:?}: use redis://host:port or redis+cluster://host:port,host:port")]
    StorageUrl(String),
    /// Redis could not be reached at start-up.
    #[error("cannot connect to redis: {0}")]
    Redis(BoardError),
    /// The server failed while running.
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
    /// The keys file, the JWT key or the TLS files cannot be used.
    #[error("{0}")]
    Credentials(String),
    /// Protected mode: no credentials, and an address other hosts can reach.
    #[error("refusing to serve {0} without credentials: anyone who can reach it could change every board. Give --keys FILE (see `photofinish key new`) or --jwt-key, or pass --allow-unauthenticated to serve it open anyway")]
    Unprotected(String),
}

impl ServeError {
    /// The exit status `photofinish serve` ends with: 2 for a refused configuration
    /// (protected mode, unusable credentials), 1 for anything else.
    pub fn exit_status(&self) -> i32 {
        match self {
            ServeError::Unprotected(_) | ServeError::Credentials(_) => 2,
            _ => 1,
        }
    }
}

/// Opens the store with `storage` (the real file system unless a test injects faults).
pub async fn open_store(
    opts: &ServeOptions,
    storage: Arc<dyn Storage>,
    metrics: &Arc<Metrics>,
) -> Result<Arc<Store>, ServeError> {
    let m = metrics.clone();
    // The committer task, unless the store's writer thread commits (`always`).
    let commit_due =
        (!opts.fsync.writer_thread_commits()).then(|| Arc::new(tokio::sync::Notify::new()));
    let store_opts = StoreOptions {
        fsync: opts.fsync,
        segment_bytes: opts.segment_bytes,
        on_fsync: Some(Arc::new(move |d| m.observe_fsync(d))),
        on_queued: commit_due
            .clone()
            .map(|due| Arc::new(move || due.notify_one()) as Arc<dyn Fn() + Send + Sync>),
        max_boards: opts.max_boards,
        ..StoreOptions::new(&opts.data_dir)
    };
    let clock = opts.clock.0.clone();
    let store =
        tokio::task::spawn_blocking(move || Store::open(storage, store_opts, Box::new(clock)))
            .await
            .map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))??;
    let store = Arc::new(store);
    store.state().set_audit_retention_us(
        i64::try_from(opts.audit_retention.as_micros()).unwrap_or(i64::MAX),
    );
    if let Some(due) = commit_due {
        tokio::spawn(committer(Arc::downgrade(&store), due));
    }
    Ok(store)
}

/// Commits the writes queued under `everysec`/`never` (see `StoreOptions::on_queued`):
/// woken by the first one queued, it first lets every request that is ready run, so one
/// commit — one `write()` — takes them all and their answers go out together. Cheaper than
/// handing each batch to a thread and back (docs/bench-history.md §2). Ends with the store.
async fn committer(store: std::sync::Weak<Store>, commit_due: Arc<tokio::sync::Notify>) {
    loop {
        commit_due.notified().await;
        tokio::task::yield_now().await;
        let Some(store) = store.upgrade() else { return };
        // A panic here must not leave later writes queued with no one to commit them.
        let run = std::panic::AssertUnwindSafe(|| store.commit_queued());
        if std::panic::catch_unwind(run).is_err() {
            tracing::error!("a commit panicked; its writes were answered with an error");
        }
    }
}

/// `url` with any password replaced by `***`, for logs.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// Re-reads the keys file on every SIGHUP; a file that cannot be used keeps the keys in
/// force, and the log says why.
async fn reload_on_sighup(auth: Arc<Authenticator>, hup: Option<tokio::signal::unix::Signal>) {
    let Some(mut hup) = hup else {
        tracing::warn!("cannot listen for SIGHUP; the keys file will not be re-read");
        return;
    };
    while hup.recv().await.is_some() {
        match auth.reload() {
            Ok(keys) => tracing::info!(keys, "keys file re-read"),
            Err(e) => {
                tracing::error!(error = %e, "keys file not re-read; the old keys stay in force")
            }
        }
    }
}

/// The connection limits for `opts`, after raising the open-file limit as far as it goes.
fn connection_limits(opts: &ServeOptions) -> Limits {
    let nofile = crate::conns::raise_open_file_limit();
    let cap = crate::conns::cap_for(nofile);
    let max_connections = match opts.max_connections {
        Some(asked) if asked > cap => {
            tracing::warn!(
                asked,
                cap,
                open_file_limit = nofile,
                "--max-connections is above what the open-file limit allows; using the cap"
            );
            cap
        }
        Some(asked) => asked.max(1),
        None => cap,
    };
    tracing::info!(
        max_connections,
        open_file_limit = nofile,
        header_timeout_s = opts.header_timeout.as_secs_f64(),
        "connection limits"
    );
    Limits {
        header_timeout: opts.header_timeout,
        idle_timeout: crate::conns::IDLE_TIMEOUT,
        max_connections,
    }
}

/// The addresses a server listens on, once it is ready.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// HTTP.
    pub http: SocketAddr,
    /// RESP, when it is on.
    pub resp: Option<SocketAddr>,
}

/// Whether `listen` (`host:port`) names loopback addresses only, resolved as the
/// listener will resolve it.
async fn resolves_to_loopback(listen: &str) -> bool {
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host(listen)
        .await
        .map(Iterator::collect)
        .unwrap_or_default();
    crate::listen::is_loopback(listen, &resolved)
}

/// Serves until `shutdown` completes; `on_ready` gets the bound addresses.
pub async fn serve(
    opts: ServeOptions,
    on_ready: impl FnOnce(Bound),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    serve_with(opts, Arc::new(RealStorage), on_ready, shutdown).await
}

/// [`serve`] on the given storage.
pub async fn serve_with(
    opts: ServeOptions,
    storage: Arc<dyn Storage>,
    on_ready: impl FnOnce(Bound),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    // Take SIGHUP first thing: its default action ends the process, and an operator may
    // send it (after `key revoke`) while a long recovery is still running.
    let hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    let auth = Authenticator::new(opts.keys.clone(), opts.jwt.as_ref())
        .map_err(ServeError::Credentials)?;
    let tls = exposure(&opts, &auth).await?;
    let auth = Arc::new(auth);
    let metrics = Arc::new(Metrics::new());
    let service = open_service(&opts, storage, &metrics).await?;
    let listeners = Listeners::bind(&opts).await?;
    listeners.announce(&opts, tls.is_some());
    on_ready(listeners.bound);
    let reload = tokio::spawn(reload_on_sighup(auth.clone(), hup));
    let webhooks = tokio::spawn(crate::webhook::run(
        Arc::downgrade(&service),
        metrics.clone(),
        opts.webhook.clone(),
    ));
    let closer = tokio::spawn(crate::closer::run(
        Arc::downgrade(&service),
        opts.close_step_members,
    ));
    let limits = connection_limits(&opts);
    // Event streams last until their consumer leaves: at shutdown they are ended, so the
    // graceful stop waits only for ordinary requests.
    let (closing_tx, closing) = tokio::sync::watch::channel(false);
    let shutdown = async move {
        shutdown.await;
        let _ = closing_tx.send(true);
    };
    let app = app(&opts, service.clone(), auth, metrics, &limits, closing);
    let connections = Connections::new(limits);
    let metrics = app.metrics.clone();
    let on_refusal = move || metrics.refused(crate::metrics::CONNECTION_CAP);
    let resp = listeners.resp.map(|l| {
        let opts = crate::resp::RespOptions {
            max_connections: limits.max_connections,
            partial_timeout: limits.header_timeout,
        };
        tokio::spawn(crate::resp::serve(l, app.clone(), tls.clone(), opts))
    });
    let router = crate::router(app);
    let http = listeners.http;
    crate::listen::serve(http, router, tls, connections, on_refusal, shutdown).await;
    if let Some(resp) = resp {
        let _ = resp.await;
    }
    reload.abort();
    webhooks.abort();
    closer.abort();
    tracing::info!("stopped accepting; shutting the service down");
    tokio::task::spawn_blocking(move || service.shutdown())
        .await
        .ok();
    Ok(())
}

/// Protected mode (without credentials, only loopback addresses, on either door) and the
/// TLS acceptor, if the options name a certificate; a warning when credentials would
/// travel in clear.
async fn exposure(
    opts: &ServeOptions,
    auth: &Authenticator,
) -> Result<Option<tokio_rustls::TlsAcceptor>, ServeError> {
    let protect = |addr: &String, loopback: bool| {
        if !auth.has_credentials() && !loopback && !opts.allow_unauthenticated {
            return Err(ServeError::Unprotected(addr.clone()));
        }
        Ok(())
    };
    let loopback = resolves_to_loopback(&opts.listen).await;
    protect(&opts.listen, loopback)?;
    if let Some(resp) = &opts.resp_listen {
        protect(resp, resolves_to_loopback(resp).await)?;
    }
    let tls = opts
        .tls
        .as_ref()
        .map(crate::listen::tls_acceptor)
        .transpose()
        .map_err(ServeError::Credentials)?;
    if tls.is_none() && !loopback && auth.has_credentials() {
        tracing::warn!(listen = %opts.listen, "serving plain HTTP on a non-loopback address: API keys and player tokens travel in clear; use --tls-cert/--tls-key or a TLS-terminating proxy");
    }
    Ok(tls)
}

/// The one place that knows there are two backends: the embedded store, or a node of
/// the Redis log. From here on, only the service.
async fn open_service(
    opts: &ServeOptions,
    storage: Arc<dyn Storage>,
    metrics: &Arc<Metrics>,
) -> Result<Arc<dyn Leaderboard>, ServeError> {
    let Some(url) = &opts.storage else {
        let store: Arc<dyn Leaderboard> = open_store(opts, storage, metrics).await?;
        return Ok(store);
    };
    let target = Target::parse(url).ok_or_else(|| ServeError::StorageUrl(url.clone()))?;
    let clock = Box::new(opts.clock.0.clone());
    let store = LogStore::connect(&target, &opts.redis_namespace, clock)
        .await
        .map_err(ServeError::Redis)?;
    Ok(Arc::new(
        store
            .with_max_boards(opts.max_boards)
            .with_max_clock_skew(opts.max_clock_skew)
            .with_audit_retention(opts.audit_retention)
            .with_reads(opts.redis_reads)
            .with_redis_wait(opts.redis_wait)
            .with_snapshots(
                photofinish_redis::node::SNAPSHOT_EVERY_ENTRIES,
                photofinish_redis::node::SNAPSHOT_LOOK_EVERY,
            )
            .with_idle_drop(
                photofinish_redis::node::IDLE_BOARD_AFTER,
                photofinish_redis::node::SNAPSHOT_LOOK_EVERY,
            ),
    ))
}

/// The bound sockets of both doors.
struct Listeners {
    http: tokio::net::TcpListener,
    resp: Option<tokio::net::TcpListener>,
    bound: Bound,
}

impl Listeners {
    /// Binds `--listen` and, if asked, `--resp-listen`.
    async fn bind(opts: &ServeOptions) -> Result<Self, ServeError> {
        let http = tokio::net::TcpListener::bind(&opts.listen)
            .await
            .map_err(|source| ServeError::Bind {
                addr: opts.listen.clone(),
                source,
            })?;
        let resp =
            match &opts.resp_listen {
                None => None,
                Some(addr) => Some(tokio::net::TcpListener::bind(addr).await.map_err(
                    |source| ServeError::RespBind {
                        addr: addr.clone(),
                        source,
                    },
                )?),
            };
        let bound = Bound {
            http: http.local_addr()?,
            resp: resp
                .as_ref()
                .map(tokio::net::TcpListener::local_addr)
                .transpose()?,
        };
        Ok(Self { http, resp, bound })
    }

    /// Logs where the doors listen and on what.
    fn announce(&self, opts: &ServeOptions, tls: bool) {
        if let Some(resp) = self.bound.resp {
            tracing::info!(%resp, tls, "RESP listening");
        }
        let addr = self.bound.http;
        let scheme = if tls { "https" } else { "http" };
        let workers = tokio::runtime::Handle::current().metrics().num_workers();
        match &opts.storage {
            None => {
                tracing::info!(%addr, scheme, data_dir = %opts.data_dir.display(), fsync = ?opts.fsync, workers, "listening")
            }
            Some(url) => {
                tracing::info!(%addr, scheme, storage = %redact(url), namespace = %opts.redis_namespace, workers, "listening")
            }
        }
    }
}

/// What every handler shares: the gate over `service` (its memory budget sampled in the
/// background), the credentials and their rate limits, the document, the metrics and
/// the event streams' permits.
fn app(
    opts: &ServeOptions,
    service: Arc<dyn Leaderboard>,
    auth: Arc<Authenticator>,
    metrics: Arc<Metrics>,
    limits: &Limits,
    closing: tokio::sync::watch::Receiver<bool>,
) -> Arc<App> {
    let openapi = crate::openapi::document_json(auth.has_credentials());
    let budget = Arc::new(MemoryBudget::new(
        opts.max_memory.unwrap_or_else(default_max_memory),
    ));
    tracing::info!(max_memory = budget.limit(), max_boards = ?opts.max_boards, "data limits");
    tokio::spawn(sample_memory(Arc::downgrade(&service), budget.clone()));
    let limiter = auth
        .has_credentials()
        .then(|| Arc::new(Limiter::new(opts.player_rate, opts.anonymous_rate)));
    if let Some(l) = &limiter {
        tokio::spawn(forget_idle_buckets(Arc::downgrade(l)));
    }
    let streams_limit = crate::limits::max_event_streams(limits.max_connections);
    Arc::new(App {
        streams: Arc::new(tokio::sync::Semaphore::new(streams_limit)),
        streams_limit,
        closing,
        limiter,
        gate: Gate::new(service)
            .with_budget(budget)
            .with_idempotency_ttl(opts.idempotency_ttl),
        auth,
        openapi,
        metrics,
    })
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_never_reach_the_log() {
        assert_eq!(
            redact("redis://:secret@10.0.0.1:6379/0"),
            "redis://:***@10.0.0.1:6379/0"
        );
        assert_eq!(redact("redis://u:p@h:1"), "redis://u:***@h:1");
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
