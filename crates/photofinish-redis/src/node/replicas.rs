//! The node's board replicas: each loaded on first use from its snapshot and log, caught
//! up before a read (or, with `--redis-reads local`, read as recently caught up), dropped
//! and loaded again when its log diverged; and the [`Engine`] the store's operations run
//! over, which appends a board's commands to its log through its replica.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use async_trait::async_trait;
use photofinish_core::clock::Clock;
use photofinish_core::idempotency::Answer;
use photofinish_core::BoardError;
use photofinish_store::idempotency::KeyReused;
use photofinish_store::ops::Engine;
use photofinish_store::state::BoardHandle;
use photofinish_store::{Applied, Command};

use super::{LogStore, Reads, Slot, LOCAL_READ_WINDOW, REQUESTS_BEGAN};
use crate::log::{BoardLog, Divergence, LogKeys};
use crate::replica::{Replica, ReplicaError};

impl LogStore {
    pub(super) fn slot(&self, board: &str) -> Slot {
        let mut map = self.replicas.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(board.to_owned()).or_default().clone()
    }

    /// Board `board`'s replica if this node holds it loaded: what almost every read and
    /// write finds, with one look-up and no allocation.
    fn held(&self, board: &str) -> Option<Arc<Replica>> {
        let map = self.replicas.lock().unwrap_or_else(|p| p.into_inner());
        map.get(board).and_then(|slot| slot.get()).cloned()
    }

    pub(super) fn forget(&self, board: &str, replica: &Arc<Replica>) {
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
    pub(super) async fn replica(
        &self,
        board: &str,
        to_write: bool,
    ) -> Result<Arc<Replica>, BoardError> {
        let loaded = match self.held(board) {
            Some(held) => held,
            // Boxed: a load's future is large, and every call's future would carry it.
            None => Box::pin(self.load(board)).await?,
        };
        loaded.mark_used();
        if !to_write && loaded.taken().await == 0 {
            self.forget(board, &loaded);
        }
        Ok(loaded)
    }

    /// Loads board `board`'s replica into its slot, once however many ask at a time.
    async fn load(&self, board: &str) -> Result<Arc<Replica>, BoardError> {
        let slot = self.slot(board);
        let loaded = slot
            .get_or_try_init(|| async {
                let log = BoardLog::new(self.conn.clone(), LogKeys::new(&self.namespace, board));
                let replica = Replica::load(log, self.skew)
                    .await
                    .map_err(|e| self.replica_failed(board, e))?
                    .with_wait(self.wait);
                replica.set_feeds(self.feeds.clone());
                replica
                    .state()
                    .set_audit_retention_us(self.audit_retention_us);
                Ok::<_, BoardError>(Arc::new(replica))
            })
            .await?
            .clone();
        Ok(loaded)
    }

    /// The replica of `board`, caught up with its log; a replica whose log diverged is
    /// dropped and the board loaded again (once).
    pub(super) async fn fresh(&self, board: &str) -> Result<Arc<Replica>, BoardError> {
        self.fresh_as(board, self.reads).await
    }

    /// [`Self::fresh`] with the read consistency `reads` (the webhook's claim always
    /// catches up, whatever `--redis-reads` says).
    pub(super) async fn fresh_as(
        &self,
        board: &str,
        reads: Reads,
    ) -> Result<Arc<Replica>, BoardError> {
        let r = self.replica(board, false).await?;
        if self.answers_now(&r, reads) {
            return Ok(r);
        }
        // Boxed: a catch-up's future is large, and most reads do not need one.
        Box::pin(self.catch_up(board, r)).await
    }

    /// Whether `r` answers a read with consistency `reads` as it is, with no round trip: a
    /// local read within [`LOCAL_READ_WINDOW`] of a catch-up, or a read of a round that
    /// began before a catch-up which reached the head. Counts the read either way.
    fn answers_now(&self, r: &Replica, reads: Reads) -> bool {
        if reads == Reads::Local {
            if let Some(ago) = r.caught_up_ago().filter(|a| *a <= LOCAL_READ_WINDOW) {
                self.counts.local.fetch_add(1, Ordering::Relaxed);
                let us = u64::try_from(ago.as_micros()).unwrap_or(u64::MAX);
                // Written only when it grows: most reads leave the shared line alone.
                if us > self.counts.max_staleness_us.load(Ordering::Relaxed) {
                    self.counts
                        .max_staleness_us
                        .fetch_max(us, Ordering::Relaxed);
                }
                return true;
            }
        }
        self.counts.caught_up.fetch_add(1, Ordering::Relaxed);
        REQUESTS_BEGAN
            .try_with(|b| b.get())
            .ok()
            .flatten()
            .is_some_and(|began| r.caught_up_since(began))
    }

    /// Catches `r` up with board `board`'s log; a replica whose log diverged is dropped
    /// and the board loaded again (once).
    async fn catch_up(&self, board: &str, r: Arc<Replica>) -> Result<Arc<Replica>, BoardError> {
        match r.catch_up().await {
            Ok(_) => Ok(r),
            Err(ReplicaError::Diverged(why)) => {
                tracing::warn!(board, %why, "a board's log diverged from this node's copy; loading it again");
                self.forget(board, &r);
                let again = self.replica(board, false).await?;
                again
                    .catch_up()
                    .await
                    .map_err(|e| self.replica_failed(board, e))?;
                Ok(again)
            }
            Err(e) => Err(self.replica_failed(board, e)),
        }
    }
}

#[async_trait]
impl Engine for LogStore {
    fn now_us(&self) -> i64 {
        self.clock.now_us()
    }

    fn spanning_log(&self) -> &'static str {
        super::registry::LIFECYCLE
    }

    async fn erasure_ledger(&self) -> Result<Vec<(String, i64)>, BoardError> {
        self.ledger().await
    }

    async fn board_names(&self) -> Result<Vec<String>, BoardError> {
        self.registered().await
    }

    fn max_boards(&self) -> Option<u64> {
        // Counted in the registry before the create is appended: a replica holds one board.
        None
    }

    async fn hidden_everywhere(&self) -> Result<Vec<String>, BoardError> {
        self.hidden_set().await
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
                    return Err(self.replica_failed(board, e));
                }
            }
        }
    }

    async fn execute_spread(
        &self,
        cmds: Vec<(String, Command)>,
    ) -> Result<Vec<Result<Applied, BoardError>>, BoardError> {
        use futures_util::StreamExt;
        // A log per board: several boards' appends in flight at once, answered in order.
        const IN_FLIGHT: usize = 64;
        let answers = futures_util::stream::iter(cmds)
            .map(|(board, cmd)| async move {
                let audited = matches!(cmd, Command::Audited { .. });
                let answer = photofinish_store::ops::execute_one(self, &board, cmd, false).await;
                if audited && answer.is_ok() {
                    // Listed after its entry, so the audit log reads this board's trail.
                    self.list_audited(&board).await?;
                }
                Ok::<_, BoardError>(answer)
            })
            .buffered(IN_FLIGHT)
            .collect::<Vec<_>>()
            .await;
        answers.into_iter().collect()
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
