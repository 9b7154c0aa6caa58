//! The Redis node (docs/redis-log.md): the [`Leaderboard`] service over board replicas —
//! every rule is the embedded store's, run by [`photofinish_store::ops`] over this
//! [`Engine`]; Redis holds each board's log and snapshots, and this process holds nothing
//! that is not in Redis. A board is loaded on first use ([`Replica::load`]) and caught up
//! before each read, so a read reflects every write acknowledged before it began; a
//! write is appended to the board's log and answered as applied in log order.
//!
//! Also here, what spans boards: the board registry (`ns:boards`, written after a
//! create or delete entry; the board count is checked against it before a create is
//! appended), listings and totals from it, live events (each node publishes what it
//! applies to its own feeds; a watched board is followed by a task that catches it up),
//! and the webhook's claim (a key with the claimant's token and a time to live, so one
//! node posts a period).
//!
//! An import writes its ranking as chunks in Redis (`ns:{b}:imports:<id>:<i>`) before the
//! entry that puts it in place; every node reads them when it takes that entry.
//!
//! Not yet here (issue 41, docs/redis-log.md "Next steps"): snapshots published in the
//! background, idle boards dropped, event ids that agree across nodes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use photofinish_core::clock::{Clock, MonotonicClock};
use photofinish_core::events::{EventFeed, Feeds, EVENT_RING_LEN};
use photofinish_core::hook::HookState;
use photofinish_core::idempotency::{Answer, IdempotencyKey, Keyed, Replayable};
use photofinish_core::transfer::{ImportSource, Imported};
use photofinish_core::view::{BoardState, Totals};
use photofinish_core::{BoardConfig, BoardError, PeriodRef};
use photofinish_store::idempotency::KeyReused;
use photofinish_store::ops::{self, Engine};
use photofinish_store::state::{read_lock, BoardHandle};
use photofinish_store::{Applied, Command};
use tokio::sync::OnceCell;

use crate::conn::{Conn, Target};
use crate::log::{BoardLog, Divergence, LogKeys};
use crate::replica::{import_file, Replica, ReplicaError};
use crate::store::unavailable;

/// How often a watched board is caught up when nothing else touches it (its live events
/// from other nodes arrive within this).
pub const FOLLOW_EVERY: Duration = Duration::from_millis(100);

/// Entries a board's log grows by before a node publishes its snapshot (and the log is
/// trimmed below it, keeping the last 10,000).
pub const SNAPSHOT_EVERY_ENTRIES: u64 = 100_000;

/// How often a node looks for boards whose snapshot is due.
pub const SNAPSHOT_LOOK_EVERY: Duration = Duration::from_secs(5);

/// How long a node holds a board's snapshot lease while it writes the snapshot; one paused
/// longer loses it, and its publish is refused.
pub const SNAPSHOT_LEASE: Duration = Duration::from_secs(60);

/// The largest difference allowed between a node's clock and Redis's (SPEC §12's default
/// `--max-clock-skew`).
pub const DEFAULT_MAX_CLOCK_SKEW: Duration = Duration::from_secs(1);

type Slot = Arc<OnceCell<Arc<Replica>>>;

/// The Redis node. See the module docs.
pub struct LogStore {
    conn: Conn,
    namespace: String,
    clock: MonotonicClock<Box<dyn Clock>>,
    max_boards: Option<u64>,
    max_skew_us: Option<i64>,
    replicas: Arc<Mutex<HashMap<String, Slot>>>,
    feeds: Arc<Feeds>,
}

impl std::fmt::Debug for LogStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogStore")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

fn replica_error(e: ReplicaError) -> BoardError {
    BoardError::Unavailable(e.to_string())
}

impl LogStore {
    /// Connects to `target`; keys go under namespace `ns`.
    pub async fn connect(
        target: &Target,
        ns: &str,
        clock: Box<dyn Clock>,
    ) -> Result<Self, BoardError> {
        Ok(Self {
            conn: Conn::connect(target).await.map_err(unavailable)?,
            namespace: ns.to_owned(),
            clock: MonotonicClock::new(clock),
            max_boards: None,
            max_skew_us: Some(DEFAULT_MAX_CLOCK_SKEW.as_micros() as i64),
            replicas: Arc::new(Mutex::new(HashMap::new())),
            feeds: Arc::new(Feeds::default()),
        })
    }

    /// Publishes the snapshot of each loaded board whose log grew by `every` entries since
    /// its last one, looking every `look` (docs/redis-log.md, "Snapshots, lease, trim"):
    /// under the board's lease, so one node at a time writes it, and the log is trimmed
    /// below it. The task ends when the store is dropped.
    pub fn with_snapshots(self, every: u64, look: Duration) -> Self {
        let replicas = Arc::downgrade(&self.replicas);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(look).await;
                let Some(map) = replicas.upgrade() else {
                    return;
                };
                let loaded: Vec<Arc<Replica>> = {
                    let map = map.lock().unwrap_or_else(|p| p.into_inner());
                    map.values().filter_map(|s| s.get().cloned()).collect()
                };
                drop(map);
                for r in loaded {
                    if !r.snapshot_due(every) {
                        continue;
                    }
                    if let Err(e) = r.snapshot(SNAPSHOT_LEASE).await {
                        tracing::warn!(board = %r.log().keys().log, error = %e, "snapshot not published");
                    }
                }
            }
        });
        self
    }

    /// Refuses creating a board beyond `max` in the namespace (`too_many_boards`),
    /// counted in the registry before the create is appended.
    pub fn with_max_boards(mut self, max: Option<u64>) -> Self {
        self.max_boards = max;
        self
    }

    /// Bounds how far this node's clock may be from Redis's (`None`: unchecked).
    pub fn with_max_clock_skew(mut self, max: Option<Duration>) -> Self {
        self.max_skew_us = max.map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
        self
    }

    fn registry(&self) -> String {
        format!("{}:boards", self.namespace)
    }

    fn claim_key(&self, board: &str) -> String {
        format!("{}:{{{board}}}:hookclaim", self.namespace)
    }

    fn slot(&self, board: &str) -> Slot {
        let mut map = self.replicas.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(board.to_owned()).or_default().clone()
    }

    fn forget(&self, board: &str, replica: &Arc<Replica>) {
        let mut map = self.replicas.lock().unwrap_or_else(|p| p.into_inner());
        let same = map
            .get(board)
            .and_then(|s| s.get())
            .is_some_and(|r| Arc::ptr_eq(r, replica));
        if same {
            map.remove(board);
        }
    }

    /// Board `board`'s replica, loaded on first use. A board with no log yet is kept only
    /// when `to_write` (a read of a missing name leaves nothing behind).
    async fn replica(&self, board: &str, to_write: bool) -> Result<Arc<Replica>, BoardError> {
        let slot = self.slot(board);
        let loaded = slot
            .get_or_try_init(|| async {
                let log = BoardLog::new(self.conn.clone(), LogKeys::new(&self.namespace, board));
                let replica = Replica::load(log, self.max_skew_us)
                    .await
                    .map_err(replica_error)?;
                replica.set_feeds(self.feeds.clone());
                Ok::<_, BoardError>(Arc::new(replica))
            })
            .await?
            .clone();
        if !to_write && loaded.taken().await == 0 {
            self.forget(board, &loaded);
        }
        Ok(loaded)
    }

    /// The replica of `board`, caught up with its log; a replica whose log diverged is
    /// dropped and the board loaded again (once).
    async fn fresh(&self, board: &str) -> Result<Arc<Replica>, BoardError> {
        let r = self.replica(board, false).await?;
        match r.catch_up().await {
            Ok(_) => Ok(r),
            Err(ReplicaError::Diverged(why)) => {
                tracing::warn!(board, %why, "a board's log diverged from this node's copy; loading it again");
                self.forget(board, &r);
                let again = self.replica(board, false).await?;
                again.catch_up().await.map_err(replica_error)?;
                Ok(again)
            }
            Err(e) => Err(replica_error(e)),
        }
    }

    /// Refuses a create beyond the board limit, counted in the registry before the create
    /// is appended (concurrent creates on several nodes may pass together).
    async fn check_board_count(&self, board: &str) -> Result<(), BoardError> {
        let Some(limit) = self.max_boards else {
            return Ok(());
        };
        let registry = self.registry();
        let count: u64 = self
            .conn
            .query(redis::cmd("SCARD").arg(&registry))
            .await
            .map_err(unavailable)?;
        let known: bool = self
            .conn
            .query(redis::cmd("SISMEMBER").arg(&registry).arg(board))
            .await
            .map_err(unavailable)?;
        if !known && count >= limit {
            return Err(BoardError::TooManyBoards(limit));
        }
        Ok(())
    }

    async fn registered(&self) -> Result<Vec<String>, BoardError> {
        let mut names: Vec<String> = self
            .conn
            .query(redis::cmd("SMEMBERS").arg(self.registry()))
            .await
            .map_err(unavailable)?;
        names.sort();
        Ok(names)
    }

    /// Follows `board` while `feed` is its feed: catches the replica up every
    /// [`FOLLOW_EVERY`], so what other nodes append reaches this node's readers (the
    /// replica publishes each entry it takes). Ends when the feed is dropped or the
    /// replica can no longer follow (the next read loads the board again).
    fn follow(&self, board: String, feed: Arc<EventFeed>, replica: Arc<Replica>) {
        let feeds = self.feeds.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(FOLLOW_EVERY).await;
                if feeds.idle(&board, &feed) {
                    return;
                }
                if let Err(e) = replica.catch_up().await {
                    tracing::debug!(board, error = %e, "following a watched board stopped");
                    if matches!(e, ReplicaError::Diverged(_)) {
                        feed.close();
                        feeds.remove(&board);
                        return;
                    }
                }
            }
        });
    }
}

#[async_trait]
impl Engine for LogStore {
    fn now_us(&self) -> i64 {
        self.clock.now_us()
    }

    fn max_boards(&self) -> Option<u64> {
        // Counted in the registry before the create is appended: a replica holds one board.
        None
    }

    async fn board(&self, board: &str) -> Result<BoardHandle, BoardError> {
        self.fresh(board).await?.state().require(board)
    }

    async fn board_to_write(&self, board: &str) -> Result<BoardHandle, BoardError> {
        // As this node last saw it; a board it has not seen yet is looked for in the log.
        let r = self.replica(board, false).await?;
        match r.state().require(board) {
            Ok(handle) => Ok(handle),
            Err(_) => Engine::board(self, board).await,
        }
    }

    async fn execute(
        &self,
        board: &str,
        cmds: Vec<(Command, bool)>,
    ) -> Result<Vec<Result<Applied, BoardError>>, BoardError> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let mut r = self.replica(board, true).await?;
        let mut tries = 0;
        loop {
            match r.execute(&cmds, self.clock.now_us()).await {
                Ok(answers) => return Ok(answers),
                // Refused before anything was appended: load the board again, try again.
                Err(ReplicaError::Diverged(Divergence::Refused { .. })) if tries == 0 => {
                    tries += 1;
                    self.forget(board, &r);
                    r = self.replica(board, true).await?;
                }
                Err(e) => {
                    if matches!(e, ReplicaError::Diverged(_)) {
                        self.forget(board, &r);
                    }
                    return Err(replica_error(e));
                }
            }
        }
    }

    async fn recall(
        &self,
        board: &str,
        id: u128,
        fingerprint: [u8; 16],
    ) -> Option<Result<Answer, KeyReused>> {
        let r = self.fresh(board).await.ok()?;
        let now = self.clock.now_us();
        let recalled = r.state().idempotency().recall(id, fingerprint, now);
        recalled
    }
}

photofinish_store::leaderboard_over_engine!(LogStore, {
    fn now_us(&self) -> i64 {
        self.clock.now_us()
    }

    async fn health(&self) -> Option<String> {
        let pong: Result<String, _> = self.conn.query(&redis::cmd("PING")).await;
        pong.err().map(|e| format!("redis: {e}"))
    }

    async fn memory_estimate(&self) -> Result<u64, BoardError> {
        crate::store::used_memory(&self.conn).await
    }

    async fn totals(&self) -> Result<Totals, BoardError> {
        let mut totals = Totals {
            boards: 0,
            members: 0,
        };
        for name in self.registered().await? {
            if let Ok(handle) = Engine::board(self, &name).await {
                totals.boards += 1;
                totals.members += read_lock(&handle).total_members();
            }
        }
        Ok(totals)
    }

    async fn create_board(&self, board: &str, config: BoardConfig) -> Result<bool, BoardError> {
        self.check_board_count(board).await?;
        let created = ops::create_board(self, board, config).await?;
        self.conn
            .query::<i64>(redis::cmd("SADD").arg(self.registry()).arg(board))
            .await
            .map_err(unavailable)?;
        Ok(created)
    }

    async fn check_board(&self, board: &str) -> Result<(), BoardError> {
        // Before a write: as this node last saw the board (a write to a board deleted
        // since is refused where it is applied), looking in the log only for one it has not
        // seen — so a write does not wait for a catch-up round trip first.
        Engine::board_to_write(self, board).await.map(drop)
    }

    async fn boards(&self) -> Result<Vec<BoardState>, BoardError> {
        let mut out = Vec::new();
        for name in self.registered().await? {
            match ops::board(self, &name).await {
                Ok(b) => out.push(b),
                Err(BoardError::BoardNotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    async fn delete_board(&self, board: &str) -> Result<(), BoardError> {
        ops::delete_board(self, board).await?;
        self.feeds.remove(board);
        self.conn
            .query::<i64>(redis::cmd("SREM").arg(self.registry()).arg(board))
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn keyed(
        &self,
        board: &str,
        key: &IdempotencyKey,
        op: Keyed,
    ) -> Result<Replayable, BoardError> {
        let create = matches!(op, Keyed::Create(_));
        if create {
            self.check_board_count(board).await?;
        }
        let answer = ops::keyed(self, board, key, op).await?;
        if create {
            self.conn
                .query::<i64>(redis::cmd("SADD").arg(self.registry()).arg(board))
                .await
                .map_err(unavailable)?;
        }
        Ok(answer)
    }

    async fn events(&self, board: &str) -> Result<Arc<EventFeed>, BoardError> {
        let r = self.fresh(board).await?;
        let handle = r.state().require(board)?;
        let now = self.clock.now_us();
        let current = read_lock(&handle).resolve(&PeriodRef::Current, now)?;
        self.feeds.sweep(board);
        let (feed, new) = self.feeds.watch(board, 1, || {
            EventFeed::new(u64::try_from(now).unwrap_or(0), EVENT_RING_LEN)
        })?;
        if new {
            feed.announce(&current.id, String::new);
            self.follow(board.to_owned(), feed.clone(), r);
        }
        Ok(feed)
    }

    async fn announce_period(&self, board: &str) -> Result<(), BoardError> {
        let Some(feed) = self.feeds.get(board) else {
            return Ok(());
        };
        let r = self.fresh(board).await?;
        photofinish_store::events::announce_current(&feed, r.state(), board, self.clock.now_us())
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
        let handle = Engine::board(self, board).await?;
        if read_lock(&handle)
            .hook_cursor()
            .is_some_and(|c| c >= until_us)
        {
            return Ok(false);
        }
        let hold_ms = crate::log::snapshot::ms(hold);
        let key = self.claim_key(board);
        let holder: Option<String> = self
            .conn
            .query(redis::cmd("GET").arg(&key))
            .await
            .map_err(unavailable)?;
        match holder {
            Some(h) if h == token => {
                let kept: i64 = self
                    .conn
                    .query(redis::cmd("PEXPIRE").arg(&key).arg(hold_ms))
                    .await
                    .map_err(unavailable)?;
                Ok(kept == 1)
            }
            Some(_) => Ok(false),
            None if renew => Ok(false),
            None => {
                let set: Option<String> = self
                    .conn
                    .query(
                        redis::cmd("SET")
                            .arg(&key)
                            .arg(token)
                            .arg("NX")
                            .arg("PX")
                            .arg(hold_ms),
                    )
                    .await
                    .map_err(unavailable)?;
                Ok(set.is_some())
            }
        }
    }

    async fn import(
        &self,
        board: &str,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
    ) -> Result<Imported, BoardError> {
        let (target, builder) = ops::import_rows(self, board, period, source).await?;
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
        let chunks = r
            .log()
            .write_chunks(&keys.import_prefix(id), &bytes, None)
            .await
            .map_err(|e| BoardError::Unavailable(e.to_string()))?;
        // The chunks stay whatever the answer: if the entry was appended (and refused,
        // say because a write filled the period meanwhile), every node reads them to
        // take it.
        let file = import_file(id, chunks);
        ops::put_import(self, r.state(), board, &target, file, ranking).await
    }

    fn shutdown(&self) {}
});
