//! The service: [`Leaderboard`], every operation of docs/SPEC.md §3 on a board, as one trait that
//! every backend implements once (the embedded store, Redis) and every door calls (HTTP,
//! and later RESP and the event stream). A door never learns which backend answers; a
//! backend never learns which door asked. Everything crosses in the shapes of
//! [`crate::view`] and fails with a [`BoardError`]. The reads are values
//! ([`crate::op::read`]) that one method, [`Leaderboard::read_board`], runs.
//!
//! Inputs arrive checked by the door's parsing (names, scores, metadata size are validated
//! again where the semantics need them). The trait is object safe (`Arc<dyn Leaderboard>`):
//! one boxed future per call, far below the cost of a request (docs/bench-history.md §2).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::access::Viewer;
use crate::audit::{AuditEntry, AuditQuery};
use crate::board::{Board, PeriodRef};
use crate::config::BoardConfig;
use crate::error::BoardError;
use crate::events::EventFeed;
use crate::hook::HookState;
use crate::idempotency::{IdempotencyKey, Replayable};
use crate::names::{BoardName, MemberName};
use crate::op::{BoardRead, Change};
use crate::transfer::{ImportSource, Imported};
use crate::view::Totals;

/// A read of a board's state at an instant (µs), as [`Leaderboard::read_board`] runs it.
pub type ReadFn<'a> = dyn for<'b> FnMut(&'b Board, i64) + Send + 'a;

/// Every board operation. See the module docs.
#[async_trait]
pub trait Leaderboard: Send + Sync {
    /// Now on the service's clock, µs since the epoch (never going backwards).
    fn now_us(&self) -> i64;

    /// `None` while writes can succeed, else why they cannot.
    async fn health(&self) -> Option<String>;

    /// Why this node cannot serve now, one reason each (`/readyz`, docs/SPEC.md §18);
    /// empty when it can. By default: writes failing ([`Self::health`]).
    async fn unready(&self) -> Vec<String> {
        self.health().await.into_iter().collect()
    }

    /// An estimate of the data's size, bytes, for the memory budget (docs/SPEC.md §7): the
    /// embedded store's rankings, or the memory Redis reports in use.
    async fn memory_estimate(&self) -> Result<u64, BoardError>;

    /// Boards and entries over all retained periods (for the metrics gauges).
    async fn totals(&self) -> Result<Totals, BoardError>;

    /// `BoardNotFound` unless the board exists; cheap (no ranking is read).
    async fn check_board(&self, board: &BoardName) -> Result<(), BoardError>;

    /// A board's config; cheap (the Redis backend answers from its cache, which every
    /// script checks).
    async fn config(&self, board: &str) -> Result<BoardConfig, BoardError>;

    /// Runs `read` on board `board` under its read lock, with the service's clock, once
    /// the board reflects every write acknowledged before the call (`board_not_found` if
    /// there is none). Every read of [`crate::op::read`] goes through it, by
    /// [`RunRead::read`].
    async fn read_board(&self, board: &BoardName, read: &mut ReadFn<'_>) -> Result<(), BoardError>;

    /// Every board's name, in name order: cheap, no board read (a listing reads the
    /// boards of its page alone).
    async fn board_names(&self) -> Result<Vec<String>, BoardError>;

    /// Applies `change` to `board` atomically and answers it (docs/SPEC.md §3). Under an
    /// idempotency `key` (docs/SPEC.md §7; only a change that
    /// [takes one](crate::op::Change::takes_key)): the remembered answer if the key was
    /// used with the same request (nothing applied), else the change and its answer
    /// remembered in the same atomic step (only if it succeeded); the same key with
    /// another request is `idempotency_key_reused`. A batch answers each write on its
    /// own; its error is for the whole batch (no such board). `actor` names who makes it
    /// ([`crate::access::Caller::actor`]): an admin change ([`Change::is_audited`]) is
    /// recorded in the audit log with it, in the change's own log record.
    async fn change(
        &self,
        board: &BoardName,
        change: Change,
        key: Option<&IdempotencyKey>,
        actor: &str,
    ) -> Result<Replayable, BoardError>;

    /// The board's live events (docs/SPEC.md §8): this process's feed of them, started if
    /// nobody watched the board yet (on Redis, a reader of the board's stream, which every
    /// node's writes append to). `BoardNotFound` unless the board exists;
    /// `too_many_streams` when the process watches its most boards.
    async fn events(&self, board: &BoardName) -> Result<Arc<EventFeed>, BoardError>;

    /// Sends the reset event of the board's current period unless it was sent (by the
    /// first write in it, another reader or another node). Readers call it when a period
    /// ends, so that a quiet board announces its new period too.
    async fn announce_period(&self, board: &str) -> Result<(), BoardError>;

    /// League boards that owe a period's close now (docs/SPEC.md §14): what the closer
    /// asks every second.
    async fn closes_due(&self) -> Result<Vec<String>, BoardError>;

    /// One step of `board`'s league close due now ([`crate::league`]), ranking up to
    /// `budget` members (whole cohorts); `None` when none is due. Durable once it
    /// returns; a step logged twice changes nothing the second time.
    async fn close_step(
        &self,
        board: &str,
        budget: u32,
    ) -> Result<Option<crate::league::CloseStep>, BoardError>;

    /// Boards with a period-close webhook, with their cursors (docs/webhooks.md): what
    /// the dispatcher asks every second.
    async fn hooks(&self) -> Result<Vec<HookState>, BoardError>;

    /// Moves the board's webhook cursor to `cursor_us` unless it is there or later already,
    /// and ends any claim on its post; durable once it returns. Nothing happens on a board
    /// without a webhook (it was removed meanwhile); `BoardNotFound` on a board gone.
    async fn hook_advance(&self, board: &str, cursor_us: i64) -> Result<(), BoardError>;

    /// Claims the board's post of the period ending at `until_us` for `hold` under
    /// `token`, or with `renew` extends a claim `token` holds (to wait out a retry):
    /// `false` when another holds it or the cursor has reached `until_us` (the period was
    /// posted meanwhile). Servers sharing a Redis so post each period from one node at a
    /// time, once.
    async fn hook_claim(
        &self,
        board: &str,
        token: &str,
        until_us: i64,
        hold: Duration,
        renew: bool,
    ) -> Result<bool, BoardError>;

    /// Fills an empty period of `board` with the rows `source` yields (docs/SPEC.md §11,
    /// [`crate::transfer`]): all of them, in their order and with their own `reached_at`,
    /// or — on any bad row, a source error or a period that is not empty
    /// (`board_not_empty`) — none.
    async fn import(
        &self,
        board: &BoardName,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
        actor: &str,
    ) -> Result<Imported, BoardError>;

    /// Hides `member` across every board, present and future (`hidden`), or undoes that
    /// (docs/SPEC.md §15): a member is hidden on a board while it is hidden there or
    /// across every board. Whether it changed anything. `actor` as for [`Self::change`].
    async fn hide_everywhere(
        &self,
        member: &MemberName,
        hidden: bool,
        actor: &str,
    ) -> Result<bool, BoardError>;

    /// Applies `op` to every board at once (docs/SPEC.md §16: a member erased
    /// everywhere), decided once and written into each board's log; audited as `actor`'s
    /// when the operation is an admin change. Each board's name and answer, by name (a
    /// board deleted meanwhile is left out).
    async fn change_everywhere(
        &self,
        op: crate::op::LoggedOp,
        actor: &str,
    ) -> Result<Vec<(String, crate::op::OpAnswer)>, BoardError>;

    /// Enters the erase of the member named `hmac` (its HMAC under the erasure key) in
    /// the erasure ledger (docs/SPEC.md §16), with its name when known (it leaves the
    /// set hidden across every board) and the request's idempotency key with its answer
    /// (the boards), when it came with one: logged once the erase has reached every
    /// board. The instant the ledger holds for it (the first, when it was there already).
    async fn record_erased(
        &self,
        hmac: &str,
        member: Option<&str>,
        key: Option<(&crate::idempotency::IdempotencyKey, u64)>,
    ) -> Result<i64, BoardError>;

    /// The answer (the boards) an erase under `key` got, if one did
    /// (`idempotency_key_reused` when the key came with another request).
    async fn recall_erase(
        &self,
        key: &crate::idempotency::IdempotencyKey,
    ) -> Result<Option<u64>, BoardError>;

    /// The erasure ledger: each member erased everywhere, by its HMAC, and when (µs).
    async fn erasure_ledger(&self) -> Result<Vec<(String, i64)>, BoardError>;

    /// Every name some board holds anything under that `wanted` takes, once each, in
    /// name order: what a ledgered erase is looked for among.
    async fn names_where(
        &self,
        wanted: &(dyn for<'n> Fn(&'n str) -> bool + Sync),
    ) -> Result<Vec<String>, BoardError>;

    /// The erasure key (docs/SPEC.md §16): in `file` when one is given (made there when
    /// absent); else kept beside the data (the embedded store) or in Redis — made on
    /// first use, the same for every node.
    async fn erasure_key(&self, file: Option<&std::path::Path>) -> Result<[u8; 32], BoardError>;

    /// The audit log's entries `q` wants, newest first (docs/SPEC.md §15), of those kept
    /// now (the server's `--audit-retention`); a deleted board's included.
    async fn audit(&self, q: &AuditQuery) -> Result<Vec<AuditEntry>, BoardError>;

    /// Writes a consistent snapshot of every board to `out` while writes go on
    /// (docs/SPEC.md §11); returns the log position it is at. Blocks for as long as that
    /// takes: call it where blocking is allowed. Only the embedded store has it (on Redis,
    /// Redis' own persistence is the backup): `not_supported` elsewhere.
    fn backup(&self, out: &mut dyn std::io::Write) -> Result<u64, BoardError> {
        let _ = out;
        Err(BoardError::NotSupported(
            "backups are of the embedded store; on Redis, Redis' own persistence (RDB/AOF) \
             is the backup (docs/backup.md)"
                .into(),
        ))
    }

    /// What a scale-out node did since the last call (how reads were answered, how
    /// snapshot publishes ended), for the metrics; `None` on a backend that is no such
    /// node.
    fn take_log_counts(&self) -> Option<crate::view::LogNodeCounts> {
        None
    }

    /// Stops taking writes and makes every acknowledged one durable (the embedded store
    /// drains its writer, syncs and snapshots); reads may still be answered. It may block
    /// for as long as that takes: call it where blocking is allowed (not on an async
    /// runtime's worker).
    fn shutdown(&self);
}

/// The viewer of the server's own reads.
static EVERYONE: Viewer = Viewer::Everyone;

/// Any read on any service (`service.read(&ReadPage { … })`): the one way a
/// [`BoardRead`] reaches [`Leaderboard::read_board`].
pub trait RunRead {
    /// The answer of `op`, read from its board as the service holds it now, as everyone
    /// sees it (without hidden members): the server's own reads.
    fn read<R: BoardRead>(
        &self,
        op: &R,
    ) -> impl Future<Output = Result<R::Output, BoardError>> + Send {
        self.read_as(op, &EVERYONE)
    }

    /// The answer of `op` as `viewer` sees it.
    fn read_as<R: BoardRead>(
        &self,
        op: &R,
        viewer: &Viewer,
    ) -> impl Future<Output = Result<R::Output, BoardError>> + Send;
}

impl<T: Leaderboard + ?Sized> RunRead for T {
    async fn read_as<R: BoardRead>(
        &self,
        op: &R,
        viewer: &Viewer,
    ) -> Result<R::Output, BoardError> {
        let mut out = None;
        self.read_board(op.board(), &mut |b: &Board, now_us: i64| {
            out = Some(op.read(b, now_us, viewer));
        })
        .await?;
        out.unwrap_or_else(|| {
            Err(BoardError::Unavailable(
                "the service read no board".to_owned(),
            ))
        })
    }
}
