//! The Redis node (docs/redis-layout.md): the [`Leaderboard`] service over board replicas —
//! every rule is the embedded store's, run by [`photofinish_store::ops`] over this
//! [`Engine`]; Redis holds each board's log and snapshots, and this process holds nothing
//! that is not in Redis. A board is loaded on first use ([`Replica::load`]) and caught up
//! before each read, so a read reflects every write acknowledged before it began; a
//! write is appended to the board's log and answered as applied in log order.
//!
//! Also here, what spans boards: the namespace's lifecycle log (`registry.rs`: the board
//! registry, a name registered and counted against the board limit before its create is
//! appended and unregistered after its delete, and the members hidden across every board
//! — each a fact decided once where the log is applied), listings and totals from it,
//! live events (each node publishes what it
//! applies to its own feeds; a watched board is followed by a task that catches it up),
//! and the webhook's claim (a key with the claimant's token and a time to live, so one
//! node posts a period).
//!
//! An import writes its ranking as chunks in Redis (`ns:{b}:imports:<id>:<i>`) before the
//! entry that puts it in place; every node reads them when it takes that entry.
//!
//! The node's settings (docs/redis-layout.md, "Node settings"): fresh or local reads
//! ([`Reads`]), `--redis-wait`, the clock-skew bound; snapshots published in the
//! background ([`LogStore::with_snapshots`]) and idle boards dropped
//! ([`LogStore::with_idle_drop`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use photofinish_core::audit::{AuditEntry, AuditQuery};
use photofinish_core::clock::{Clock, MonotonicClock};
use photofinish_core::events::{EventFeed, Feeds, EVENT_RING_LEN};
use photofinish_core::hook::HookState;
use photofinish_core::idempotency::{IdempotencyKey, Replayable};
use photofinish_core::op::Change;
use photofinish_core::transfer::{ImportSource, Imported};
use photofinish_core::{BoardError, BoardName, MemberName, PeriodRef};
use photofinish_store::ops::{self, Engine};
use photofinish_store::state::read_lock;
use photofinish_store::Command;
use tokio::sync::OnceCell;

use crate::conn::unavailable;
use crate::conn::{Conn, Target};
use crate::replica::{import_file, Replica};

mod ready;
mod registry;
mod replicas;
mod tasks;

/// How often a watched board is caught up when nothing else touches it (its live events
/// from other nodes arrive within this).
pub const FOLLOW_EVERY: Duration = Duration::from_millis(100);

/// Entries a board's log grows by before a node publishes its snapshot (and the log is
/// trimmed below it, keeping the entries of the last 10,000 commands).
pub const SNAPSHOT_EVERY_ENTRIES: u64 = 100_000;

/// How often a node looks for boards whose snapshot is due.
pub const SNAPSHOT_LOOK_EVERY: Duration = Duration::from_secs(5);

/// How long a node holds a board's snapshot lease while it writes the snapshot; one paused
/// longer loses it, and its publish is refused.
pub const SNAPSHOT_LEASE: Duration = Duration::from_secs(60);

/// The largest difference allowed between a node's clock and Redis's (SPEC §12's default
/// `--max-clock-skew`).
pub const DEFAULT_MAX_CLOCK_SKEW: Duration = Duration::from_secs(1);

/// `--redis-reads local`: a read answers from what the node has applied if its copy of
/// the board caught up with the log at most this long before; an older copy catches up
/// first. So a local read misses at most the writes of the last 100 ms (and a round trip).
pub const LOCAL_READ_WINDOW: Duration = Duration::from_millis(100);

tokio::task_local! {
    /// When the requests being served began, if earlier than the read itself: the commands
    /// of one pipelined round began when the round arrived ([`requests_began`]). One place
    /// a connection holds for its whole life ([`serving`]), set at each round: scoping each
    /// round instead would move the round's future, kilobytes, into the scope (a `memmove`
    /// of every request, docs/bench-history.md §45).
    static REQUESTS_BEGAN: std::cell::Cell<Option<std::time::Instant>>;
}

/// Runs `f`, a connection's service, with the place [`requests_began`] sets.
pub async fn serving<F: std::future::Future>(f: F) -> F::Output {
    REQUESTS_BEGAN.scope(std::cell::Cell::new(None), f).await
}

/// Notes that the requests served from now on (a RESP round: its pipelined commands arrived
/// together) began at `began`, inside [`serving`] (outside it, nothing); `None` when they
/// are done, so a read after them waits for a head read of its own. A fresh read among
/// them is answered without a head read of its own when a catch-up that began after
/// `began` has reached the head — it saw every write acknowledged before these requests
/// began (docs/redis-layout.md, "Reads").
pub fn requests_began(began: Option<std::time::Instant>) {
    let _ = REQUESTS_BEGAN.try_with(|b| b.set(began));
}

/// `--redis-wait`'s longest wait for the replicas (below [`crate::conn::RESPONSE_TIMEOUT`]).
pub const REDIS_WAIT_TIMEOUT: Duration = Duration::from_secs(1);

/// A board no read, write or live reader used for this long is dropped from the node's
/// memory (it loads again on its next use).
pub const IDLE_BOARD_AFTER: Duration = Duration::from_secs(600);

/// How reads see other nodes' writes (docs/SPEC.md §12, "Reads").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reads {
    /// Every write acknowledged before the read began (one head read per read, shared).
    #[default]
    Fresh,
    /// What this node has applied, if it caught up within [`LOCAL_READ_WINDOW`].
    Local,
}

type Slot = Arc<OnceCell<Arc<Replica>>>;

/// The Redis node. See the module docs.
pub struct LogStore {
    conn: Conn,
    namespace: String,
    clock: MonotonicClock<Box<dyn Clock>>,
    max_boards: Option<u64>,
    /// `--max-clock-skew`, with the node clock's offset (`None`: unchecked).
    skew: Option<crate::log::SkewBound>,
    /// How long audit entries are kept (`--audit-retention`), µs.
    audit_retention_us: i64,
    replicas: Arc<Mutex<HashMap<String, Slot>>>,
    feeds: Arc<Feeds>,
    reads: Reads,
    wait: Option<crate::replica::Wait>,
    counts: Arc<Counts>,
    /// Boards whose log or snapshot is in a format newer than this build reads, with
    /// why: each answers 503, and `/readyz` lists them (docs/SPEC.md §18).
    newer: Arc<Mutex<std::collections::BTreeMap<String, String>>>,
}

/// Counts of how reads were answered and snapshot publishes ended since the metrics last
/// asked.
#[derive(Debug, Default)]
struct Counts {
    local: AtomicU64,
    caught_up: AtomicU64,
    max_staleness_us: AtomicU64,
    snapshots_published: AtomicU64,
    snapshots_lease_lost: AtomicU64,
    snapshots_stale: AtomicU64,
    snapshots_skipped: AtomicU64,
    snapshots_failed: AtomicU64,
}

impl std::fmt::Debug for LogStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogStore")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl LogStore {
    /// Connects to `target`; keys go under namespace `ns`.
    pub async fn connect(
        target: &Target,
        ns: &str,
        clock: Box<dyn Clock>,
    ) -> Result<Self, BoardError> {
        let conn = Conn::connect(target).await.map_err(unavailable)?;
        crate::conn::refuse_eviction(&conn)
            .await
            .map_err(BoardError::Unavailable)?;
        crate::upgrade_log::check_log_format(&conn, ns).await?;
        let offset_us = clock.offset_us();
        let store = Self {
            conn,
            namespace: ns.to_owned(),
            clock: MonotonicClock::new(clock),
            max_boards: None,
            skew: Some(crate::log::SkewBound {
                max_us: DEFAULT_MAX_CLOCK_SKEW.as_micros() as i64,
                offset_us,
            }),
            audit_retention_us: photofinish_core::audit::DEFAULT_AUDIT_RETENTION_US,
            replicas: Arc::new(Mutex::new(HashMap::new())),
            feeds: Arc::new(Feeds::default()),
            reads: Reads::Fresh,
            wait: None,
            counts: Arc::new(Counts::default()),
            newer: Arc::default(),
        };
        store.adopt_earlier_sets().await?;
        Ok(store)
    }

    /// How reads see other nodes' writes (`--redis-reads`).
    pub fn with_reads(mut self, reads: Reads) -> Self {
        self.reads = reads;
        self
    }

    /// Waits for `replicas` Redis replicas to confirm each group commit (`--redis-wait`;
    /// 0: none), for at most [`REDIS_WAIT_TIMEOUT`].
    pub fn with_redis_wait(mut self, replicas: u32) -> Self {
        self.wait = (replicas > 0).then_some(crate::replica::Wait {
            replicas,
            timeout: REDIS_WAIT_TIMEOUT,
        });
        self
    }

    /// Refuses creating a board beyond `max` in the namespace (`too_many_boards`),
    /// counted in the registry before the create is appended.
    pub fn with_max_boards(mut self, max: Option<u64>) -> Self {
        self.max_boards = max;
        self
    }

    /// Keeps audit entries for `retention` (`--audit-retention`, docs/SPEC.md §15).
    pub fn with_audit_retention(mut self, retention: Duration) -> Self {
        self.audit_retention_us = i64::try_from(retention.as_micros()).unwrap_or(i64::MAX);
        self
    }

    /// Bounds how far this node's clock may be from Redis's (`None`: unchecked). A node
    /// whose clock runs at an offset (`PHOTOFINISH_CLOCK_OFFSET_US`, for tests) compares
    /// its clock less the offset: Redis's `TIME` plus the offset is its reference.
    pub fn with_max_clock_skew(mut self, max: Option<Duration>) -> Self {
        let offset_us = self.clock.offset_us();
        self.skew = max.map(|d| crate::log::SkewBound {
            max_us: i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
            offset_us,
        });
        self
    }

    /// How many boards this node holds in memory.
    pub fn loaded(&self) -> usize {
        let map = self.replicas.lock().unwrap_or_else(|p| p.into_inner());
        map.iter()
            .filter(|(name, s)| *name != registry::LIFECYCLE && s.get().is_some())
            .count()
    }

    fn claim_key(&self, board: &str) -> String {
        format!("{}:{{{board}}}:hookclaim", self.namespace)
    }
}

photofinish_store::leaderboard_over_engine!(LogStore, {
    fn now_us(&self) -> i64 {
        self.clock.now_us()
    }

    fn take_log_counts(&self) -> Option<photofinish_core::view::LogNodeCounts> {
        let f = &self.counts;
        Some(photofinish_core::view::LogNodeCounts {
            local: f.local.swap(0, Ordering::Relaxed),
            caught_up: f.caught_up.swap(0, Ordering::Relaxed),
            max_staleness_us: f.max_staleness_us.swap(0, Ordering::Relaxed),
            snapshots_published: f.snapshots_published.swap(0, Ordering::Relaxed),
            snapshots_lease_lost: f.snapshots_lease_lost.swap(0, Ordering::Relaxed),
            snapshots_stale: f.snapshots_stale.swap(0, Ordering::Relaxed),
            snapshots_skipped: f.snapshots_skipped.swap(0, Ordering::Relaxed),
            snapshots_failed: f.snapshots_failed.swap(0, Ordering::Relaxed),
        })
    }

    async fn health(&self) -> Option<String> {
        let pong: Result<String, _> = self.conn.query(&redis::cmd("PING")).await;
        pong.err().map(|e| format!("redis: {e}"))
    }

    async fn unready(&self) -> Vec<String> {
        self.unready_reasons().await
    }

    async fn memory_estimate(&self) -> Result<u64, BoardError> {
        crate::conn::used_memory(&self.conn).await
    }

    async fn check_board(&self, board: &BoardName) -> Result<(), BoardError> {
        // Before a write: as this node last saw the board (a write to a board deleted
        // since is refused where it is applied), looking in the log only for one it has not
        // seen — so a write does not wait for a catch-up round trip first.
        Engine::board_to_write(self, board).await.map(drop)
    }

    async fn change(
        &self,
        board: &BoardName,
        change: Change,
        key: Option<&IdempotencyKey>,
        actor: &str,
    ) -> Result<Replayable, BoardError> {
        // The registry holds every board: a create reserves its place before the create
        // is logged and lists it after; a delete unlists it after.
        let (create, delete) = (
            matches!(change, Change::Create(_)),
            matches!(change, Change::Delete),
        );
        if create {
            self.reserve(board).await?;
        }
        let audits = change.is_audited();
        let answer = ops::change(self, board, change, key, actor).await;
        if audits && answer.is_ok() {
            // Listed after its entry, so every trail the audit log reads is listed (a
            // superset: a change that recorded nothing lists it too).
            self.list_audited(board).await?;
        }
        if create {
            // Even when the answer failed after the create (its state read): the registry
            // lists at least every board, and readers filter it.
            self.list(board).await?;
        }
        let answer = answer?;
        if create {
            // A hide across every board made while the create was logged may have missed
            // the board (its fan-out listed the boards before it): hide it here too.
            self.reconcile_hidden(board, actor).await?;
        }
        if delete {
            self.feeds.remove(board);
            self.unlist(board).await?;
        }
        Ok(answer)
    }

    async fn hide_everywhere(
        &self,
        member: &MemberName,
        hidden: bool,
        actor: &str,
    ) -> Result<bool, BoardError> {
        // The set first (a create reads it when it is logged, and again after), then an
        // audited entry in every listed board's log.
        let changed = self.set_hidden(member, hidden).await?;
        for board in self.registered().await? {
            self.hide_on(&board, member, hidden, actor).await?;
        }
        Ok(changed)
    }

    async fn erasure_key(&self, file: Option<&std::path::Path>) -> Result<[u8; 32], BoardError> {
        use photofinish_store::erasure;
        if let Some(file) = file {
            return erasure::key_in_file(file);
        }
        // In Redis, set once (NX): every node reads the first one's.
        let key = format!("{}:erasure-key", self.namespace);
        let made = erasure::to_hex(&erasure::generate()?);
        let _: Option<String> = self
            .conn
            .query(redis::cmd("SET").arg(&key).arg(made).arg("NX"))
            .await
            .map_err(crate::conn::unavailable)?;
        let held: String = self
            .conn
            .query(redis::cmd("GET").arg(&key))
            .await
            .map_err(crate::conn::unavailable)?;
        erasure::from_hex(&held).ok_or_else(|| {
            BoardError::Unavailable(format!(
                "{key} does not hold an erasure key (64 hex digits)"
            ))
        })
    }

    async fn audit(&self, q: &AuditQuery) -> Result<Vec<AuditEntry>, BoardError> {
        // Each board's trail is in its own log (a deleted board's too): read the boards
        // asked, or every one listed as holding some, each caught up.
        let boards = match &q.board {
            Some(b) => vec![b.clone()],
            None => self.audited().await?,
        };
        let now = self.clock.now_us();
        let mut all = Vec::new();
        for board in boards {
            let r = self.fresh(&board).await?;
            all.extend(r.state().audit(q, now));
        }
        let floor = now.saturating_sub(self.audit_retention_us);
        Ok(photofinish_core::audit::newest(all, q, floor))
    }

    async fn events(&self, board: &BoardName) -> Result<Arc<EventFeed>, BoardError> {
        let r = self.fresh(board).await?;
        let handle = r.state().require(board)?;
        let now = self.clock.now_us();
        let current = read_lock(&handle).resolve(&PeriodRef::Current, now)?;
        self.feeds.sweep(board);
        // Ids from entry numbers (every node numbers an entry's events alike): the feed
        // holds every event after the last entry taken.
        let (feed, new) = r
            .at_taken(|taken| {
                self.feeds.watch(board, 1, || {
                    let last = ((taken + 1) << crate::replica::EVENT_ID_SHIFT) - 1;
                    EventFeed::new(last, EVENT_RING_LEN)
                })
            })
            .await?;
        if new {
            feed.announce(&current.id, String::new);
            self.follow(board.to_string(), feed.clone(), r);
        }
        Ok(feed)
    }

    async fn announce_period(&self, board: &str) -> Result<(), BoardError> {
        // A period is announced by its first entry (every node's feed alike): one that
        // began without writes gets a tick, unless an entry of it was taken already.
        let Some(feed) = self.feeds.get(board) else {
            return Ok(());
        };
        let handle = Engine::board(self, board).await?;
        let current = read_lock(&handle).resolve(&PeriodRef::Current, self.clock.now_us())?;
        if feed.announced().is_some_and(|p| p >= current.id) {
            return Ok(());
        }
        let tick = Command::Tick {
            board: board.to_owned(),
            now_us: 0,
        };
        match Engine::execute(self, board, vec![(tick, true)])
            .await?
            .pop()
        {
            Some(Ok(_)) | None => Ok(()),
            Some(Err(e)) => Err(e),
        }
    }

    async fn closes_due(&self) -> Result<Vec<String>, BoardError> {
        let now = Engine::now_us(self);
        let mut out = Vec::new();
        for board in self.registered().await? {
            let Ok(handle) = Engine::board(self, &board).await else {
                continue;
            };
            if ops::owes_close(&read_lock(&handle), now) {
                out.push(board);
            }
        }
        Ok(out)
    }

    async fn hooks(&self) -> Result<Vec<HookState>, BoardError> {
        let mut out = Vec::new();
        for board in self.registered().await? {
            let Ok(handle) = Engine::board(self, &board).await else {
                continue;
            };
            let b = read_lock(&handle);
            if b.config().settings.webhook.is_some() {
                out.push(HookState {
                    config: b.config().clone(),
                    cursor_us: b.hook_cursor(),
                    board,
                });
            }
        }
        Ok(out)
    }

    async fn hook_advance(&self, board: &str, cursor_us: i64) -> Result<(), BoardError> {
        ops::hook_advance(self, board, cursor_us).await?;
        self.conn
            .query::<i64>(redis::cmd("DEL").arg(self.claim_key(board)))
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn hook_claim(
        &self,
        board: &str,
        token: &str,
        until_us: i64,
        hold: Duration,
        renew: bool,
    ) -> Result<bool, BoardError> {
        // The claim is a lease held by the claimant's token (`lease.lua`).
        let claim = |verb: &str, hold: Duration| {
            let mut inv = crate::log::snapshot::LEASE.key(self.claim_key(board));
            inv.arg(verb).arg(crate::log::snapshot::ms(hold)).arg(token);
            inv
        };
        let verb = if renew { "renew" } else { "take" };
        let held: i64 = self
            .conn
            .invoke(&claim(verb, hold))
            .await
            .map_err(unavailable)?;
        if held != 1 {
            return Ok(false);
        }
        // The claim first, then the cursor, from a copy caught up after the claim was
        // held: a node that posted advances the cursor before it lets the claim go, so a
        // post made meanwhile is seen here and never made twice.
        let r = self.fresh_as(board, Reads::Fresh).await?;
        let posted = r.state().require(board).map(|handle| {
            read_lock(&handle)
                .hook_cursor()
                .is_some_and(|c| c >= until_us)
        })?;
        if posted {
            // Let go at once: the board's next period is claimed under the same key.
            let _ = self
                .conn
                .invoke::<i64>(&claim("renew", Duration::from_millis(1)))
                .await;
            return Ok(false);
        }
        Ok(true)
    }

    async fn import(
        &self,
        board: &BoardName,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
        actor: &str,
    ) -> Result<Imported, BoardError> {
        let (target, builder, hidden) = ops::import_rows(self, board, period, source).await?;
        // Sort (if the rows were not in rank order) and index off the async workers.
        let ranking = tokio::task::spawn_blocking(move || builder.finish())
            .await
            .map_err(|_| BoardError::ShuttingDown)??;
        let bytes = photofinish_store::import::encode(&ranking)
            .map_err(|e| BoardError::Unavailable(format!("import: {e}")))?;
        // The ranking is in Redis before the entry that names it: every node reads it
        // from there when it takes the entry (the entry's numbers its chunks).
        let r = self.replica(board, true).await?;
        let keys = r.log().keys().clone();
        let id: u64 = self
            .conn
            .query(redis::cmd("INCR").arg(&keys.imports))
            .await
            .map_err(unavailable)?;
        let chunk_count = bytes
            .len()
            .div_ceil(crate::log::snapshot::SNAPSHOT_CHUNK_BYTES) as u64;
        let file = import_file(id, chunk_count);
        // Written to expire: the append of the entry that takes them persists them and
        // lists them at that entry (the snapshot whose trim passes it deletes them); an
        // import whose entry is never appended leaves nothing behind for long.
        let chunks = r
            .log()
            .write_chunks(
                &keys.import_prefix(id),
                &bytes,
                Some(crate::log::snapshot::UNPUBLISHED_CHUNK_TTL),
            )
            .await
            .map_err(|e| BoardError::Unavailable(e.to_string()))?;
        debug_assert_eq!(chunks, chunk_count);
        // Once appended, the chunks stay whatever the answer (a write may have filled the
        // period meanwhile): every node reads them to take the entry.
        let done = ops::put_import(
            self,
            r.state(),
            board,
            ops::Built {
                target,
                file,
                ranking,
                hidden,
            },
            actor,
        )
        .await?;
        self.list_audited(board).await?;
        Ok(done)
    }

    fn shutdown(&self) {}
});
