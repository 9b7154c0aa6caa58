//! The gate: the service as a door sees it. Every operation takes the [`Caller`] and runs
//! the core's access rules ([`photofinish_core::access::authorize`]) before the service
//! does anything, so a refused request changes nothing, on every door (HTTP, RESP) and
//! every backend. Doors hold a `Gate`, never the bare service.
//!
//! A board's access flags (`public_read`, `player_writes`) are read only when the rule
//! needs them: for an anonymous read and a player's write. A board that does not exist has
//! no flags: anonymous callers are then refused as for a private board (names do not
//! leak), everyone else hears `board_not_found` from the service.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use photofinish_core::access::{authorize, may_audit_across, Action, BoardFlags, Caller, Viewer};
use photofinish_core::audit::{AuditEntry, AuditQuery};
use photofinish_core::budget::{MemoryBudget, OverBudget};
use photofinish_core::events::EventFeed;
use photofinish_core::idempotency::DEFAULT_TTL_US;
use photofinish_core::op::WriteRequest;
use photofinish_core::transfer::{ImportSource, Imported};
use photofinish_core::view::{BoardState, LogNodeCounts, Totals};
use photofinish_core::RunRead;
use photofinish_core::{BoardConfig, BoardError, BoardName, BoardRead, Leaderboard, PeriodRef};

mod across;
mod change;
mod erase;

pub use change::KeyedRequest;

/// A board a caller may write to, as [`Gate::check_write_target`] found it: the caller,
/// and the board's flags if the caller's rule needed them.
#[derive(Debug)]
pub struct WriteTarget<'a> {
    caller: &'a Caller,
    board: &'a BoardName,
    flags: Option<BoardFlags>,
}

impl WriteTarget<'_> {
    /// Whether the caller may make write `w` (its member, with an `at` or not).
    fn authorize(&self, w: &WriteRequest) -> Result<(), BoardError> {
        let action = Action::Write {
            board: self.board,
            member: w.member.as_str(),
            with_at: w.at_us.is_some(),
            partition: w.partition.as_deref(),
            team: w.team.as_deref(),
        };
        authorize(self.caller, &action, self.flags)
    }
}

/// What the metrics report of the service ([`Gate::figures`]).
#[derive(Debug)]
pub struct Figures {
    /// Writes fail now.
    pub failing: bool,
    /// The service's totals, `None` if they could not be read.
    pub totals: Option<Totals>,
    /// A scale-out node's counts since the last call; `None` on the embedded store.
    pub log_counts: Option<LogNodeCounts>,
}

/// An admitted online backup ([`Gate::backup`]).
pub struct Backup(Arc<dyn Leaderboard>);

impl Backup {
    /// Writes a consistent snapshot of every board to `out`; returns the log position
    /// it is at. Blocks for as long as that takes.
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> Result<u64, BoardError> {
        self.0.backup(out)
    }
}

/// The service behind the access rules. See the module docs.
#[derive(Clone)]
pub struct Gate {
    service: Arc<dyn Leaderboard>,
    budget: Option<Arc<MemoryBudget>>,
    /// How long idempotency keys are kept, µs.
    idempotency_ttl_us: i64,
    /// Keys whose first request is being applied by this server.
    in_flight: Arc<Mutex<HashSet<u128>>>,
    /// `--erasure-key-file`, if given (docs/privacy.md).
    erasure_key_file: Option<std::path::PathBuf>,
    /// The erasure ledger's file, if one is kept (`--erasure-ledger`, [`crate::ledger`]).
    erasure_ledger: Option<std::path::PathBuf>,
}

fn flags_of(c: &BoardConfig) -> BoardFlags {
    BoardFlags {
        public_read: c.settings.public_read,
        player_writes: c.settings.player_writes,
    }
}

impl Gate {
    /// A gate in front of `service`.
    pub fn new(service: Arc<dyn Leaderboard>) -> Self {
        Self {
            service,
            budget: None,
            idempotency_ttl_us: DEFAULT_TTL_US,
            in_flight: Arc::default(),
            erasure_key_file: None,
            erasure_ledger: None,
        }
    }

    /// Keeps idempotency keys for `ttl` (docs/SPEC.md §7: at least 24 h in service).
    pub fn with_idempotency_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.idempotency_ttl_us = i64::try_from(ttl.as_micros()).unwrap_or(i64::MAX);
        self
    }

    /// Keeps the erasure key in `file` (`--erasure-key-file`) rather than where the
    /// backend keeps it (docs/privacy.md).
    pub fn with_erasure_key_file(mut self, file: Option<std::path::PathBuf>) -> Self {
        self.erasure_key_file = file;
        self
    }

    /// Appends each erase to the ledger file `file` before it is applied (docs/privacy.md).
    pub fn with_erasure_ledger(mut self, file: Option<std::path::PathBuf>) -> Self {
        self.erasure_ledger = file;
        self
    }

    /// Puts writes under the memory budget `budget` (docs/SPEC.md §7): while its estimate
    /// is over the limit, each write carries that verdict and may not add a member.
    pub fn with_budget(mut self, budget: Arc<MemoryBudget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The memory budget, if writes are under one.
    pub fn budget(&self) -> Option<&Arc<MemoryBudget>> {
        self.budget.as_ref()
    }

    fn over_budget(&self) -> Option<OverBudget> {
        self.budget.as_ref().and_then(|b| b.over())
    }

    /// Why writes fail now, or `None` while they succeed: liveness, which every caller
    /// may ask (it names no board and changes nothing).
    pub async fn health(&self) -> Option<String> {
        self.service.health().await
    }

    /// Why the node cannot serve now (`/readyz`); empty when it can.
    pub async fn unready(&self) -> Vec<String> {
        self.service.unready().await
    }

    /// What the metrics report of the service, for a caller that may read metrics
    /// ([`Action::Metrics`]): whether writes fail, the totals (if they could be read) and
    /// a scale-out node's counts since the last call.
    pub async fn figures(&self, caller: &Caller) -> Result<Figures, BoardError> {
        self.admit(caller, Action::Metrics).await?;
        Ok(Figures {
            failing: self.service.health().await.is_some(),
            totals: self.service.totals().await.ok(),
            log_counts: self.service.take_log_counts(),
        })
    }

    /// The online backup (docs/SPEC.md §11) for a caller that may operate the server
    /// ([`Action::Operate`]): a [`Backup`] to run where blocking is allowed.
    pub async fn backup(&self, caller: &Caller) -> Result<Backup, BoardError> {
        self.admit(caller, Action::Operate).await?;
        Ok(Backup(self.service.clone()))
    }

    /// A board's flags, or `None` if it does not exist.
    async fn flags(&self, board: &str) -> Result<Option<BoardFlags>, BoardError> {
        match self.service.config(board).await {
            Ok(c) => Ok(Some(flags_of(&c))),
            Err(BoardError::BoardNotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The board's flags when the rule for `caller` and `action` depends on them (an
    /// anonymous read, a player's write), else `None` without asking the service.
    async fn flags_for(
        &self,
        caller: &Caller,
        action: &Action<'_>,
    ) -> Result<Option<BoardFlags>, BoardError> {
        match (caller, *action) {
            (Caller::Anonymous, Action::Read { board })
            | (Caller::Player { .. }, Action::WriteTo { board } | Action::Write { board, .. }) => {
                self.flags(board).await
            }
            _ => Ok(None),
        }
    }

    /// Allows `action` for `caller` or refuses it (`unauthorized`, `forbidden`).
    pub async fn admit(&self, caller: &Caller, action: Action<'_>) -> Result<(), BoardError> {
        let flags = self.flags_for(caller, &action).await?;
        authorize(caller, &action, flags)
    }

    /// Before a write's body is read: whether `caller` may write to `board` at all (so a
    /// caller who may not learns nothing, not even whether it exists), then
    /// `board_not_found` for a board that does not exist. The answer carries what the
    /// check read, so the write itself does not read the board's flags again.
    pub async fn check_write_target<'a>(
        &self,
        caller: &'a Caller,
        board: &'a BoardName,
    ) -> Result<WriteTarget<'a>, BoardError> {
        let to = Action::WriteTo { board };
        let flags = self.flags_for(caller, &to).await?;
        authorize(caller, &to, flags)?;
        self.service.check_board(board).await?;
        Ok(WriteTarget {
            caller,
            board,
            flags,
        })
    }

    /// A board's live events (whoever may read the board).
    pub async fn events(
        &self,
        caller: &Caller,
        board: &BoardName,
    ) -> Result<Arc<EventFeed>, BoardError> {
        self.admit(caller, Action::Read { board }).await?;
        self.service.events(board).await
    }

    /// Sends the reset event of `board`'s current period unless it was sent, for a
    /// reader of its events whose period ended ([`Leaderboard::announce_period`]).
    pub async fn announce_period(
        &self,
        caller: &Caller,
        board: &BoardName,
    ) -> Result<(), BoardError> {
        self.admit(caller, Action::Read { board }).await?;
        self.service.announce_period(board).await
    }

    /// The service's clock, µs.
    pub fn now_us(&self) -> i64 {
        self.service.now_us()
    }

    /// Any read of [`photofinish_core::op::read`], if `caller` may read its board, as the
    /// caller views it ([`Viewer::of`]: hidden members, docs/SPEC.md §15): the one way a
    /// door reads a board.
    pub async fn read<R: BoardRead>(
        &self,
        caller: &Caller,
        op: &R,
    ) -> Result<R::Output, BoardError> {
        self.admit(caller, op.action()).await?;
        self.service
            .read_as(op, &Viewer::of(caller, op.board()))
            .await
    }

    /// The names of the boards `caller` may read, in name order (a board's flags are read
    /// only where the rule needs them: for an anonymous caller).
    pub async fn readable_boards(&self, caller: &Caller) -> Result<Vec<BoardName>, BoardError> {
        let names = self.service.board_names().await?;
        let checks = names.into_iter().map(|name| async move {
            // Only a created board is listed, and a create checks its name.
            let Ok(board) = BoardName::parse(name) else {
                return Ok(None);
            };
            let read = Action::Read { board: &board };
            let flags = match self.flags_for(caller, &read).await? {
                None if matches!(caller, Caller::Anonymous) => return Ok(None), // gone
                flags => flags,
            };
            Ok::<_, BoardError>(authorize(caller, &read, flags).is_ok().then_some(board))
        });
        futures_util::future::join_all(checks)
            .await
            .into_iter()
            .filter_map(Result::transpose)
            .collect()
    }

    /// A page of the boards `caller` may read, in name order (`offset`, at most `limit`),
    /// and how many it may read in all. Only the page's boards are read.
    pub async fn boards(
        &self,
        caller: &Caller,
        offset: u64,
        limit: u64,
    ) -> Result<(u64, Vec<BoardState>), BoardError> {
        let names = self.readable_boards(caller).await?;
        let total = names.len() as u64;
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(names.len());
        let end = start.saturating_add(usize::try_from(limit).unwrap_or(usize::MAX));
        let reads = names[start..end.min(names.len())]
            .iter()
            .map(|board| async move {
                let read = photofinish_core::op::ReadBoard {
                    board: board.clone(),
                };
                self.service.read(&read).await
            });
        let mut page = Vec::new();
        for state in futures_util::future::join_all(reads).await {
            match state {
                Ok(s) => page.push(s),
                // Deleted since it was listed.
                Err(BoardError::BoardNotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok((total, page))
    }

    /// Fills an empty period of `board` from `source` (admins of the board; refused while
    /// the memory budget is over, as a write adding members would be), but for the rows of
    /// members erased after they were written; what it filled, and how many rows it
    /// dropped so.
    pub async fn import(
        &self,
        caller: &Caller,
        board: &BoardName,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
    ) -> Result<(Imported, u64), BoardError> {
        self.admit(caller, Action::Manage { board }).await?;
        if let Some(over) = self.over_budget() {
            return Err(over.refusal());
        }
        let ledger: std::collections::BTreeMap<String, i64> =
            self.service.erasure_ledger().await?.into_iter().collect();
        if ledger.is_empty() {
            let actor = caller.actor();
            return Ok((self.service.import(board, period, source, &actor).await?, 0));
        }
        // Rows of members erased since the file was written are dropped (docs/privacy.md).
        let key = self
            .service
            .erasure_key(self.erasure_key_file.as_deref())
            .await?;
        let now = self.service.now_us();
        let mut rows = crate::ledger::DropErased::new(source, key, ledger, now);
        let done = self
            .service
            .import(board, period, &mut rows, &caller.actor())
            .await?;
        Ok((done, rows.dropped))
    }

    /// Hides `member` across every board, present and future, or undoes that
    /// (docs/SPEC.md §15): operator work, for an admin key covering every board.
    pub async fn hide_everywhere(
        &self,
        caller: &Caller,
        member: &photofinish_core::MemberName,
        hidden: bool,
    ) -> Result<bool, BoardError> {
        self.admit(caller, Action::Operate).await?;
        self.service
            .hide_everywhere(member, hidden, &caller.actor())
            .await
    }

    /// The audit log (docs/SPEC.md §15), for admins: of one board (its admins), or of
    /// every board the caller administers (an admin key sees the boards its globs cover,
    /// deleted ones included; any other caller is refused).
    pub async fn audit(
        &self,
        caller: &Caller,
        q: &AuditQuery,
    ) -> Result<Vec<AuditEntry>, BoardError> {
        if let Some(board) = &q.board {
            // Manage on a board that may not exist any more: the key's scope and globs
            // decide, not the board's flags.
            authorize(caller, &Action::Manage { board }, None)?;
            return self.service.audit(q).await;
        }
        may_audit_across(caller)?;
        if matches!(caller, Caller::Open) {
            return self.service.audit(q).await;
        }
        // Each entry is the key's if the key may manage its board; asked for more than
        // the page, so a key's page is full when the log has that many.
        let all = AuditQuery {
            limit: photofinish_core::audit::MAX_AUDIT_ENTRIES,
            ..q.clone()
        };
        let mut mine = self.service.audit(&all).await?;
        mine.retain(|e| authorize(caller, &Action::Manage { board: &e.board }, None).is_ok());
        mine.truncate(q.limit);
        Ok(mine)
    }
}
