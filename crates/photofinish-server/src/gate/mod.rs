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

use photofinish_core::access::{authorize, may_list, Action, BoardFlags, Caller};
use photofinish_core::budget::{MemoryBudget, OverBudget};
use photofinish_core::events::EventFeed;
use photofinish_core::idempotency::{Answer, IdempotencyKey, Keyed, Replayable, DEFAULT_TTL_US};
use photofinish_core::transfer::{ImportSource, Imported};

use crate::idempotency::KeyedRequest;
use photofinish_core::view::{BoardPatch, BoardState, WriteOutcome, WriteRequest};
use photofinish_core::{BoardConfig, BoardError, BoardRead, Leaderboard, PeriodRef, RunRead};

mod across;

/// A board a caller may write to, as [`Gate::check_write_target`] found it: the caller,
/// and the board's flags if the caller's rule needed them.
#[derive(Debug)]
pub struct WriteTarget<'a> {
    caller: &'a Caller,
    board: &'a str,
    flags: Option<BoardFlags>,
}

impl WriteTarget<'_> {
    /// Whether the caller may make write `w` (its member, with an `at` or not).
    fn authorize(&self, w: &WriteRequest) -> Result<(), BoardError> {
        let action = Action::Write {
            board: self.board,
            member: &w.member,
            with_at: w.at_us.is_some(),
        };
        authorize(self.caller, &action, self.flags)
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
}

/// A key in flight; dropping it lets the key be used again.
struct InFlight {
    digest: u128,
    set: Arc<Mutex<HashSet<u128>>>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.digest);
    }
}

/// Whose keys a caller's are: keys are scoped per credential (docs/SPEC.md §7).
fn scope_of(caller: &Caller) -> String {
    match caller {
        Caller::Open | Caller::Anonymous => "anonymous".into(),
        Caller::Key(grant) => format!("key:{}", grant.name),
        Caller::Player { member } => format!("player:{member}"),
    }
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
        }
    }

    /// Keeps idempotency keys for `ttl` (docs/SPEC.md §7: at least 24 h in service).
    pub fn with_idempotency_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.idempotency_ttl_us = i64::try_from(ttl.as_micros()).unwrap_or(i64::MAX);
        self
    }

    /// Runs `op` under the caller's key: 409 `idempotency_key_in_flight` while a request
    /// with the same key is being applied here, else the service's answer.
    async fn keyed(
        &self,
        caller: &Caller,
        board: &str,
        request: KeyedRequest,
        op: Keyed,
    ) -> Result<Replayable, BoardError> {
        let key = IdempotencyKey::new(
            scope_of(caller),
            request.key,
            request.fingerprint,
            self.idempotency_ttl_us,
            board,
        );
        let _guard = {
            let mut set = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            if !set.insert(key.digest) {
                return Err(BoardError::IdempotencyKeyInFlight(key.key));
            }
            InFlight {
                digest: key.digest,
                set: self.in_flight.clone(),
            }
        };
        self.service.keyed(board, &key, op).await
    }

    /// [`Self::write`] under an idempotency key.
    pub async fn keyed_write(
        &self,
        target: &WriteTarget<'_>,
        request: KeyedRequest,
        w: WriteRequest,
    ) -> Result<Replayable, BoardError> {
        let w = self.admit_write(target, w)?;
        self.keyed(target.caller, target.board, request, Keyed::Write(w))
            .await
    }

    /// [`Self::write_batch`] under an idempotency key.
    pub async fn keyed_batch(
        &self,
        target: &WriteTarget<'_>,
        request: KeyedRequest,
        writes: Vec<WriteRequest>,
    ) -> Result<Replayable, BoardError> {
        let writes = self.admit_batch(target, writes)?;
        self.keyed(target.caller, target.board, request, Keyed::Batch(writes))
            .await
    }

    /// [`Self::remove`] under an idempotency key.
    pub async fn keyed_remove(
        &self,
        caller: &Caller,
        board: &str,
        request: KeyedRequest,
        member: &str,
        period: &PeriodRef,
    ) -> Result<Replayable, BoardError> {
        self.admit(caller, Action::RemoveMember { board }).await?;
        let op = Keyed::Remove {
            member: member.to_owned(),
            period: period.clone(),
        };
        self.keyed(caller, board, request, op).await
    }

    /// [`Self::create_board`] under an idempotency key.
    pub async fn keyed_create(
        &self,
        caller: &Caller,
        board: &str,
        request: KeyedRequest,
        config: BoardConfig,
    ) -> Result<Replayable, BoardError> {
        self.admit(caller, Action::Manage { board }).await?;
        let settings = config.clone();
        let done = self
            .keyed(caller, board, request, Keyed::Create(config))
            .await?;
        if let (Answer::Created { created: true, .. }, false) = (&done.answer, done.replayed) {
            self.start_hook(board, &settings).await;
        }
        Ok(done)
    }

    /// Starts the webhook cursor of a board whose webhook was just set, so the period now
    /// current is the first posted even if it ends before the dispatcher's next look (which
    /// starts it otherwise: a failure here is only logged).
    async fn start_hook(&self, board: &str, config: &BoardConfig) {
        if config.settings.webhook.is_none() {
            return;
        }
        if let Err(e) = crate::webhook::start_cursor(&*self.service, board, config).await {
            tracing::warn!(board, error = %e, "webhook cursor not started; the dispatcher will");
        }
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

    /// The service itself, for what no caller asks for (health, shutdown).
    pub fn service(&self) -> &Arc<dyn Leaderboard> {
        &self.service
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
            | (Caller::Player { .. }, Action::WriteTo { board }) => self.flags(board).await,
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
        board: &'a str,
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

    /// Creates a board (admin).
    pub async fn create_board(
        &self,
        caller: &Caller,
        board: &str,
        config: BoardConfig,
    ) -> Result<bool, BoardError> {
        self.admit(caller, Action::Manage { board }).await?;
        let created = self.service.create_board(board, config.clone()).await?;
        if created {
            self.start_hook(board, &config).await;
        }
        Ok(created)
    }

    /// Changes a board's settings (admin).
    pub async fn update_board(
        &self,
        caller: &Caller,
        board: &str,
        patch: &BoardPatch,
    ) -> Result<BoardState, BoardError> {
        self.admit(caller, Action::Manage { board }).await?;
        let had_hook = match &patch.webhook {
            Some(Some(_)) => self.service.config(board).await?.settings.webhook.is_some(),
            _ => true,
        };
        let state = self.service.update_board(board, patch).await?;
        if !had_hook {
            self.start_hook(board, &state.config).await;
        }
        Ok(state)
    }

    /// Deletes a board (admin).
    pub async fn delete_board(&self, caller: &Caller, board: &str) -> Result<(), BoardError> {
        self.admit(caller, Action::Manage { board }).await?;
        self.service.delete_board(board).await
    }

    /// A board's live events (whoever may read the board).
    pub async fn events(&self, caller: &Caller, board: &str) -> Result<Arc<EventFeed>, BoardError> {
        self.admit(caller, Action::Read { board }).await?;
        self.service.events(board).await
    }

    /// Any read of [`photofinish_core::op::read`], if `caller` may read its board: the one
    /// way a door reads a board.
    pub async fn read<R: BoardRead>(
        &self,
        caller: &Caller,
        op: &R,
    ) -> Result<R::Output, BoardError> {
        self.admit(caller, op.action()).await?;
        self.service.read(op).await
    }

    /// The boards `caller` may read.
    pub async fn boards(&self, caller: &Caller) -> Result<Vec<BoardState>, BoardError> {
        let mut boards = self.service.boards().await?;
        boards.retain(|b| may_list(caller, &b.name, flags_of(&b.config)));
        Ok(boards)
    }

    /// One write to a checked target.
    pub async fn write(
        &self,
        target: &WriteTarget<'_>,
        w: WriteRequest,
    ) -> Result<WriteOutcome, BoardError> {
        let w = self.admit_write(target, w)?;
        self.service.write(target.board, w).await
    }

    /// Write `w` to a checked target, if the caller may write its member: with the memory
    /// budget's verdict on it.
    fn admit_write(
        &self,
        target: &WriteTarget<'_>,
        w: WriteRequest,
    ) -> Result<WriteRequest, BoardError> {
        target.authorize(&w)?;
        Ok(WriteRequest {
            over_budget: self.over_budget(),
            ..w
        })
    }

    /// A batch's writes to a checked target, if the caller may make every one of them:
    /// each with the memory budget's verdict on it.
    fn admit_batch(
        &self,
        target: &WriteTarget<'_>,
        writes: Vec<WriteRequest>,
    ) -> Result<Vec<WriteRequest>, BoardError> {
        for w in &writes {
            target.authorize(w)?;
        }
        let over_budget = self.over_budget();
        Ok(writes
            .into_iter()
            .map(|w| WriteRequest { over_budget, ..w })
            .collect())
    }

    /// A batch to a checked target: authorized whole, before anything applies — one entry
    /// the caller may not write refuses the batch.
    pub async fn write_batch(
        &self,
        target: &WriteTarget<'_>,
        writes: Vec<WriteRequest>,
    ) -> Result<Vec<Result<WriteOutcome, BoardError>>, BoardError> {
        let writes = self.admit_batch(target, writes)?;
        self.service.write_batch(target.board, writes).await
    }

    /// Writes to a checked target, each on its own (a door's pipeline, not an HTTP
    /// batch): a write the caller may not make is refused alone, the others go to the
    /// service together — one group commit on the embedded store, one pipeline on Redis —
    /// in order. One answer per write, in order.
    pub async fn write_each(
        &self,
        target: &WriteTarget<'_>,
        writes: Vec<WriteRequest>,
    ) -> Vec<Result<WriteOutcome, BoardError>> {
        let over_budget = self.over_budget();
        let mut answers: Vec<Option<Result<WriteOutcome, BoardError>>> =
            Vec::with_capacity(writes.len());
        let mut allowed = Vec::with_capacity(writes.len());
        for w in writes {
            match target.authorize(&w) {
                Ok(()) => {
                    allowed.push(WriteRequest { over_budget, ..w });
                    answers.push(None);
                }
                Err(e) => answers.push(Some(Err(e))),
            }
        }
        let n = allowed.len();
        let applied = if n > 1 {
            match self.service.write_batch(target.board, allowed).await {
                Ok(each) => each,
                Err(e) => vec![Err(e); n],
            }
        } else {
            // One write (or none) goes alone: no batch to build.
            match allowed.pop() {
                Some(w) => vec![self.service.write(target.board, w).await],
                None => Vec::new(),
            }
        };
        let mut applied = applied.into_iter();
        answers
            .into_iter()
            .map(|a| {
                a.unwrap_or_else(|| {
                    applied.next().unwrap_or_else(|| {
                        Err(BoardError::Unavailable("no answer for this write".into()))
                    })
                })
            })
            .collect()
    }

    /// Fills an empty period of `board` from `source` (admins of the board; refused while
    /// the memory budget is over, as a write adding members would be).
    pub async fn import(
        &self,
        caller: &Caller,
        board: &str,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
    ) -> Result<Imported, BoardError> {
        self.admit(caller, Action::Manage { board }).await?;
        if let Some(over) = self.over_budget() {
            return Err(over.refusal());
        }
        self.service.import(board, period, source).await
    }

    /// Removes a member (write scope; never a player).
    pub async fn remove(
        &self,
        caller: &Caller,
        board: &str,
        member: &str,
        period: &PeriodRef,
    ) -> Result<(), BoardError> {
        self.admit(caller, Action::RemoveMember { board }).await?;
        self.service.remove(board, member, period).await
    }
}
