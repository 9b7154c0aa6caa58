//! What `serve` is told: [`ServeOptions`] and its defaults, the shared clock tests move,
//! and [`ServeError`], each way serving can fail to start.

use crate::auth::jwt::JwtOptions;
use crate::listen::TlsFiles;
use crate::rate::Rate;
use crate::webhook::WebhookOptions;
use photofinish_core::clock::{Clock, SystemClock};
use photofinish_core::BoardError;
use photofinish_store::{FsyncPolicy, StoreError};
use std::path::PathBuf;
use std::sync::Arc;

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
    /// `--erasure-key-file` (docs/SPEC.md §16, docs/privacy.md): where the erasure key is
    /// kept; `None`: beside the data (embedded), or in Redis.
    pub erasure_key_file: Option<PathBuf>,
    /// `--erasure-ledger` (docs/privacy.md): the erasure ledger's file; `None`: beside the
    /// data dir (embedded, [`crate::ledger::default_path`]), or none but Redis' copy.
    pub erasure_ledger: Option<PathBuf>,
    /// The most members one step of a league's close ranks (docs/competitions.md);
    /// smaller in tests that stop a server mid-close.
    pub close_step_members: u32,
    /// Log every HTTP request at `info` (request id, method, route template, status,
    /// latency), not only the failed ones (docs/production.md, "Logs").
    pub access_log: bool,
    /// The graceful stop's delay and grace (`--shutdown-delay`, `--shutdown-grace`). The
    /// CLI's delay is 2 s by default; a library user's is none (its process decides when
    /// its load balancer has noticed).
    pub stop: crate::stop::StopTimes,
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
            access_log: false,
            stop: crate::stop::StopTimes {
                delay: std::time::Duration::ZERO,
                ..crate::stop::StopTimes::default()
            },
            audit_retention: std::time::Duration::from_micros(
                photofinish_core::audit::DEFAULT_AUDIT_RETENTION_US as u64,
            ),
            erasure_key_file: None,
            erasure_ledger: None,
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
    /// The storage URL is not one Photofinish knows (held with its password redacted).
    #[error("unknown storage {0:?}: use redis://host:port or redis+cluster://host:port,host:port")]
    StorageUrl(String),
    /// Redis could not be reached at start-up.
    #[error("cannot connect to redis: {0}")]
    Redis(BoardError),
    /// The erasure ledger could not be applied (docs/privacy.md).
    #[error("cannot apply the erasure ledger: {0}")]
    ErasureLedger(BoardError),
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

impl ServeOptions {
    /// The erasure ledger's file this server keeps, if any (see [`Self::erasure_ledger`]).
    pub fn ledger_file(&self) -> Option<PathBuf> {
        self.erasure_ledger.clone().or_else(|| {
            self.storage
                .is_none()
                .then(|| crate::ledger::default_path(&self.data_dir))
        })
    }
}

impl ServeError {
    /// The exit status `photofinish serve` ends with: 2 for a refused configuration
    /// (protected mode, unusable credentials), 1 for anything else.
    pub fn exit_status(&self) -> i32 {
        match self {
            ServeError::Unprotected(_) | ServeError::Credentials(_) | ServeError::StorageUrl(_) => {
                2
            }
            _ => 1,
        }
    }
}
