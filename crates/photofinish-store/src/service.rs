//! The embedded store as the [`Leaderboard`] service: an [`Engine`] of the shared
//! operations ([`crate::ops`]) — commands queued with [`Store::submit`] and answered once
//! durable and applied, reads from the one in-memory state, never waiting for the writer
//! — plus what only a local store does: totals and listings from memory, live events from
//! its writer, import files beside the log, the online backup.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_channel::oneshot;
use photofinish_core::audit::{AuditEntry, AuditQuery};
use photofinish_core::events::EventFeed;
use photofinish_core::hook::HookState;
use photofinish_core::idempotency::{Answer, IdempotencyKey, Replayable};
use photofinish_core::op::Change;
use photofinish_core::transfer::{ImportSource, Imported};
use photofinish_core::{Board, BoardError, BoardName, MemberName, PeriodRef};

use crate::command::Command;
use crate::idempotency::KeyReused;
use crate::ops::{self, Engine};
use crate::state::{read_lock, Applied, BoardHandle};
use crate::writer::Store;

/// A queued command's answer, once it is durable and applied (or refused).
type Pending = oneshot::Receiver<Result<Applied, BoardError>>;

impl Store {
    /// Queues `cmd` (stamped with the clock at commit when `stamp`).
    fn enqueue(&self, cmd: Command, stamp: bool) -> Result<Pending, BoardError> {
        let (tx, rx) = oneshot::channel();
        self.submit(cmd, stamp, Box::new(move |r| drop(tx.send(r))))?;
        Ok(rx)
    }

    /// Waits for a queued command.
    async fn outcome(rx: Pending) -> Result<Applied, BoardError> {
        rx.await.map_err(|_| BoardError::ShuttingDown)?
    }

    /// Runs `f` on `board` under its read lock.
    fn with_board<T>(
        &self,
        board: &str,
        f: impl FnOnce(&Board) -> Result<T, BoardError>,
    ) -> Result<T, BoardError> {
        let handle = self.state().require(board)?;
        let b = read_lock(&handle);
        f(&b)
    }
}

/// The embedded store as an engine of the shared operations: every board in one local
/// log, read from the one in-memory state.
#[async_trait]
impl Engine for Store {
    fn now_us(&self) -> i64 {
        Store::now_us(self)
    }

    fn spanning_log(&self) -> &'static str {
        ""
    }

    async fn erasure_ledger(&self) -> Result<Vec<(String, i64)>, BoardError> {
        Ok(self.state().erasure_ledger())
    }

    async fn board_names(&self) -> Result<Vec<String>, BoardError> {
        Ok(self
            .state()
            .boards()
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }

    fn max_boards(&self) -> Option<u64> {
        Store::max_boards(self)
    }

    async fn board(&self, board: &str) -> Result<BoardHandle, BoardError> {
        self.state().require(board)
    }

    async fn execute(
        &self,
        _board: &str,
        cmds: Vec<(Command, bool)>,
    ) -> Result<Vec<Result<Applied, BoardError>>, BoardError> {
        // Queue every command first, in order, then collect: the log applies them in
        // queue order, and one group commit can carry them all.
        let pending: Vec<_> = cmds
            .into_iter()
            .map(|(cmd, stamp)| self.enqueue(cmd, stamp))
            .collect();
        let mut out = Vec::with_capacity(pending.len());
        for p in pending {
            out.push(match p {
                Ok(rx) => Self::outcome(rx).await,
                Err(e) => Err(e),
            });
        }
        Ok(out)
    }

    async fn execute_spread(
        &self,
        cmds: Vec<(String, Command)>,
    ) -> Result<Vec<Result<Applied, BoardError>>, BoardError> {
        // One log for every board: a few group commits, each within the writer's queue.
        const GROUP: usize = 4_096;
        let mut out = Vec::with_capacity(cmds.len());
        let mut cmds = cmds.into_iter().map(|(_, cmd)| (cmd, false)).peekable();
        while cmds.peek().is_some() {
            let group: Vec<(Command, bool)> = cmds.by_ref().take(GROUP).collect();
            out.extend(self.execute("", group).await?);
        }
        Ok(out)
    }

    async fn recall(
        &self,
        _board: &str,
        id: u128,
        fingerprint: [u8; 16],
    ) -> Option<Result<Answer, KeyReused>> {
        self.state()
            .idempotency()
            .recall(id, fingerprint, Store::now_us(self))
    }
}

crate::leaderboard_over_engine!(Store, {
    fn now_us(&self) -> i64 {
        Store::now_us(self)
    }

    async fn health(&self) -> Option<String> {
        self.write_error()
    }

    async fn memory_estimate(&self) -> Result<u64, BoardError> {
        Ok(self.state().estimated_bytes())
    }

    async fn check_board(&self, board: &BoardName) -> Result<(), BoardError> {
        ops::check_board(self, board).await
    }

    async fn change(
        &self,
        board: &BoardName,
        change: Change,
        key: Option<&IdempotencyKey>,
        actor: &str,
    ) -> Result<Replayable, BoardError> {
        ops::change(self, board, change, key, actor).await
    }

    async fn hide_everywhere(
        &self,
        member: &MemberName,
        hidden: bool,
        actor: &str,
    ) -> Result<bool, BoardError> {
        ops::hide_everywhere_in_one_log(self, member, hidden, actor).await
    }

    async fn audit(&self, q: &AuditQuery) -> Result<Vec<AuditEntry>, BoardError> {
        Ok(self.state().audit(q, Store::now_us(self)))
    }

    async fn erasure_key(&self, file: Option<&std::path::Path>) -> Result<[u8; 32], BoardError> {
        let beside = self.files().1.join(crate::erasure::KEY_FILE);
        crate::erasure::key_in_file(file.unwrap_or(&beside))
    }

    async fn events(&self, board: &BoardName) -> Result<Arc<EventFeed>, BoardError> {
        self.watch(board)
    }

    async fn announce_period(&self, board: &str) -> Result<(), BoardError> {
        self.announce_current(board)
    }

    async fn closes_due(&self) -> Result<Vec<String>, BoardError> {
        let now = Store::now_us(self);
        Ok(self
            .state()
            .boards()
            .into_iter()
            .filter(|(_, handle)| ops::owes_close(&read_lock(handle), now))
            .map(|(board, _)| board)
            .collect())
    }

    async fn hooks(&self) -> Result<Vec<HookState>, BoardError> {
        Ok(self
            .state()
            .boards()
            .into_iter()
            .filter_map(|(board, handle)| {
                let b = read_lock(&handle);
                b.config().settings.webhook.as_ref()?;
                Some(HookState {
                    board,
                    config: b.config().clone(),
                    cursor_us: b.hook_cursor(),
                })
            })
            .collect())
    }

    async fn hook_advance(&self, board: &str, cursor_us: i64) -> Result<(), BoardError> {
        ops::hook_advance(self, board, cursor_us).await
    }

    async fn hook_claim(
        &self,
        board: &str,
        _token: &str,
        until_us: i64,
        _hold: Duration,
        _renew: bool,
    ) -> Result<bool, BoardError> {
        // One server owns the data dir: no other node posts; only a post already made
        // (the cursor at or past the period's end) is refused.
        self.with_board(board, |b| Ok(b.hook_cursor().is_none_or(|c| c < until_us)))
    }

    async fn import(
        &self,
        board: &BoardName,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
        actor: &str,
    ) -> Result<Imported, BoardError> {
        let now = Store::now_us(self);
        let (target, builder, hidden) = ops::import_rows(self, board, period, source).await?;
        // Sort (if the rows were not in rank order), index and write the file off the
        // caller's thread: seconds for millions of entries.
        let (storage, dir) = self.files();
        let (storage, file) = (storage.clone(), crate::import::file_name(now));
        let build_path = dir.join(&file);
        let (tx, rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("pf-import".into())
            .spawn(move || {
                let built = builder.finish().and_then(|ranking| {
                    crate::import::write(&*storage, &build_path, &ranking)
                        .map_err(|e| BoardError::Unavailable(format!("import file: {e}")))?;
                    Ok(ranking)
                });
                drop(tx.send(built));
            })
            .map_err(|e| BoardError::Unavailable(format!("import: {e}")))?;
        let ranking = rx.await.map_err(|_| BoardError::ShuttingDown)??;
        // If the record is logged and refused when applied (a write filled the period
        // meanwhile), its replay reads the file; if not, the file is an orphan, removed at
        // the next start or clean shutdown.
        ops::put_import(
            self,
            self.state(),
            board,
            ops::Built {
                target,
                file,
                ranking,
                hidden,
            },
            actor,
        )
        .await
    }

    fn backup(&self, out: &mut dyn std::io::Write) -> Result<u64, BoardError> {
        self.backup_to(out)
            .map_err(|e| BoardError::Unavailable(format!("backup: {e}")))
    }

    fn shutdown(&self) {
        Store::shutdown(self);
    }
});

/// The store's live events (docs/SPEC.md §8): a board's feed, made on first watch, and
/// its current period announced; what fills the feeds is [`crate::events::publish`].
impl Store {
    /// The board's feed, made on first watch (docs/SPEC.md §8).
    pub(crate) fn watch(&self, board: &str) -> Result<Arc<EventFeed>, BoardError> {
        let handle = self.state().require(board)?;
        let now = self.now_us();
        let current = read_lock(&handle).resolve(&PeriodRef::Current, now)?;
        let feeds = self.feeds();
        feeds.sweep(board);
        let (feed, new) = feeds.watch(board, 1, || {
            EventFeed::new(
                u64::try_from(now).unwrap_or(0),
                photofinish_core::events::EVENT_RING_LEN,
            )
        })?;
        if new {
            feed.announce(&current.id, String::new);
        }
        Ok(feed)
    }

    /// Sends the current period's reset event on the board's feed, unless it was sent.
    pub(crate) fn announce_current(&self, board: &str) -> Result<(), BoardError> {
        let Some(feed) = self.feeds().get(board) else {
            return Ok(());
        };
        crate::events::announce_current(&feed, self.state(), board, self.now_us())
    }
}
