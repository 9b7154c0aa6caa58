//! Running the server: load the credentials (and refuse to serve an open server beyond
//! loopback: protected mode), open (recover) the embedded store or connect to Redis, bind,
//! serve until the shutdown signal, then stop accepting, finish in-flight requests, let the
//! writer drain and sync, and return.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use photofinish_core::budget::MemoryBudget;
use photofinish_core::Leaderboard;
use photofinish_store::io::{RealStorage, Storage};
use photofinish_store::{Store, StoreOptions};

use photofinish_redis::node::LogStore;
use photofinish_redis::Target;

use crate::app::App;
use crate::auth::Authenticator;
use crate::conns::{Connections, Limits};
use crate::gate::Gate;
use crate::metrics::Metrics;
use crate::rate::Limiter;

mod options;
mod starting;

pub use options::*;

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

/// A Redis URL with its password, if it has one, replaced by `<redacted>` (a user alone,
/// `redis://app@db`, is no secret): what the log and `photofinish config` show of it.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    match rest[..at].split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:<redacted>{}", &rest[at..]),
        None => url.to_owned(),
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
    // Bound before the data loads: the HTTP door answers that it is alive and not ready
    // meanwhile (starting.rs).
    let Listeners { http, resp, bound } = Listeners::bind(&opts).await?;
    let limits = connection_limits(&opts);
    let connections = Connections::new(limits);
    let http = Arc::new(http);
    let starting = Starting {
        http: http.clone(),
        tls: tls.clone(),
        connections: connections.clone(),
    };
    let mut shutdown = Box::pin(shutdown);
    let Some(service) = starting
        .open(&opts, storage, &metrics, &mut shutdown)
        .await?
    else {
        return Ok(());
    };
    Listeners::announce(bound, &opts, tls.is_some());
    on_ready(bound);
    let tasks = background_tasks(&opts, &service, &auth, &metrics, hup);
    // The stop's marks (crate::stop): the listeners close at the second, after the delay.
    let stop = Arc::new(crate::stop::Stop::default());
    let times = opts.stop;
    let shutdown = stop.clone().run(shutdown, times);
    let app = app(&opts, service.clone(), auth, metrics, &limits, stop.clone());
    let on_refusal = refusal_counter(&app.metrics);
    let drain = times.drain();
    let resp = resp.map(|l| {
        let opts = crate::resp::RespOptions::new(&limits, drain);
        tokio::spawn(crate::resp::serve(l, app.clone(), tls.clone(), opts))
    });
    let doors = crate::listen::Doors {
        connections,
        on_refusal,
        drain,
    };
    crate::listen::serve(http, crate::router(app), tls, doors, shutdown).await;
    if let Some(resp) = resp {
        let _ = resp.await;
    }
    for task in tasks {
        task.abort();
    }
    tracing::info!("stopped accepting; shutting the service down");
    tokio::task::spawn_blocking(move || service.shutdown())
        .await
        .ok();
    Ok(())
}

/// The HTTP door while the data loads (starting.rs).
struct Starting {
    http: Arc<tokio::net::TcpListener>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    connections: Arc<Connections>,
}

impl Starting {
    /// Opens the service and applies the erasure ledger, the door answering meanwhile
    /// that the node is alive and not ready; hands the listener back when it is done.
    /// `None` when `stop` completes first: a stop asked for while the data loads ends
    /// the start (nothing was served yet).
    async fn open(
        self,
        opts: &ServeOptions,
        storage: Arc<dyn Storage>,
        metrics: &Arc<Metrics>,
        stop: &mut (impl Future<Output = ()> + Unpin),
    ) -> Result<Option<Arc<dyn Leaderboard>>, ServeError> {
        let (loaded_tx, loaded) = tokio::sync::oneshot::channel::<()>();
        let door = tokio::spawn(crate::listen::serve(
            self.http,
            starting::router(),
            self.tls,
            crate::listen::Doors {
                connections: self.connections,
                on_refusal: refusal_counter(metrics),
                drain: Duration::from_secs(1),
            },
            async move {
                let _ = loaded.await;
            },
        ));
        let opened = async {
            let service = open_service(opts, storage, metrics).await?;
            apply_ledger(opts, &*service).await?;
            Ok::<_, ServeError>(service)
        };
        let opened = tokio::select! {
            opened = opened => opened.map(Some),
            () = stop => {
                tracing::info!("stopped while the data was loading");
                Ok(None)
            }
        };
        let _ = loaded_tx.send(());
        let _ = door.await;
        opened
    }
}

/// The tasks that hold the service for work no caller asks for: the keys file's reload
/// on SIGHUP, the period-close webhooks, the league closer.
fn background_tasks(
    opts: &ServeOptions,
    service: &Arc<dyn Leaderboard>,
    auth: &Arc<Authenticator>,
    metrics: &Arc<Metrics>,
    hup: Option<tokio::signal::unix::Signal>,
) -> [tokio::task::JoinHandle<()>; 3] {
    [
        tokio::spawn(reload_on_sighup(auth.clone(), hup)),
        tokio::spawn(crate::webhook::run(
            Arc::downgrade(service),
            metrics.clone(),
            opts.webhook.clone(),
        )),
        tokio::spawn(crate::closer::run(
            Arc::downgrade(service),
            opts.close_step_members,
        )),
    ]
}

/// What counts a connection refused or evicted at the cap.
fn refusal_counter(metrics: &Arc<Metrics>) -> impl Fn() + Send + Sync + 'static {
    let metrics = metrics.clone();
    move || metrics.refused(crate::metrics::CONNECTION_CAP)
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
    let target = Target::parse(url).ok_or_else(|| ServeError::StorageUrl(redact_url(url)))?;
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

/// Applies the erasure ledger file, if the server keeps one, before anything is served
/// (docs/privacy.md): a member a restored backup brought back leaves again.
async fn apply_ledger(opts: &ServeOptions, service: &dyn Leaderboard) -> Result<(), ServeError> {
    let Some(file) = opts.ledger_file() else {
        return Ok(());
    };
    let r = crate::ledger::reapply(service, opts.erasure_key_file.as_deref(), &file)
        .await
        .map_err(ServeError::ErasureLedger)?;
    tracing::info!(
        ledger = %file.display(),
        entries = r.entries,
        applied_again = r.applied,
        members_erased = r.members,
        rows_dropped = r.dropped.rows,
        written_to_file = r.filed,
        "erasure ledger applied"
    );
    Ok(())
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

    /// Logs where the doors (`bound`) listen and on what.
    fn announce(bound: Bound, opts: &ServeOptions, tls: bool) {
        if let Some(resp) = bound.resp {
            tracing::info!(%resp, tls, "RESP listening");
        }
        let addr = bound.http;
        let scheme = if tls { "https" } else { "http" };
        let workers = tokio::runtime::Handle::current().metrics().num_workers();
        match &opts.storage {
            None => {
                tracing::info!(%addr, scheme, data_dir = %opts.data_dir.display(), fsync = ?opts.fsync, workers, "listening")
            }
            Some(url) => {
                tracing::info!(%addr, scheme, storage = %redact_url(url), namespace = %opts.redis_namespace, workers, "listening")
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
    stop: Arc<crate::stop::Stop>,
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
        closing: stop.closing(),
        stop,
        access_log: opts.access_log,
        limiter,
        gate: Gate::new(service)
            .with_budget(budget)
            .with_idempotency_ttl(opts.idempotency_ttl)
            .with_erasure_key_file(opts.erasure_key_file.clone())
            .with_erasure_ledger(opts.ledger_file()),
        auth,
        openapi,
        metrics,
    })
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    /// Only a Redis URL's password is hidden; a URL without one is shown whole.
    #[test]
    fn passwords_never_reach_the_log() {
        assert_eq!(
            redact_url("redis://:secret@10.0.0.1:6379/0"),
            "redis://:<redacted>@10.0.0.1:6379/0"
        );
        assert_eq!(redact_url("redis://u:p@h:1"), "redis://u:<redacted>@h:1");
        assert_eq!(redact_url("redis://app@db"), "redis://app@db");
        assert_eq!(
            redact_url("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
        assert_eq!(
            redact_url("redis+cluster://a:1,b:2"),
            "redis+cluster://a:1,b:2"
        );
    }
}
