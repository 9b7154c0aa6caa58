//! The served state — every board, each behind its own lock — and the one function that
//! changes it, [`State::apply`]. The writer and recovery both apply commands through it, so
//! a replay rebuilds exactly what was served; the snapshotter writes a [`State::copy`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use photofinish_core::audit::{AuditEntry, DEFAULT_AUDIT_RETENTION_US};
use photofinish_core::board::HideScope;
use photofinish_core::config::MAX_HIDDEN_MEMBERS;
use photofinish_core::idempotency::Answer;
use photofinish_core::league::CloseStep;
use photofinish_core::op::WriteOutcome;
use photofinish_core::ranking::Prefetch;
use photofinish_core::{Board, BoardError, Period, Ranking};

use crate::command::{Command, KeyRecord};
use crate::idempotency::{KeyReused, Table};

/// What applying a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The board was created (`true`) or already existed with the same config (`false`).
    BoardCreated(bool),
    /// The board was deleted.
    BoardDeleted,
    /// The write's outcome and the period it landed in.
    Written(WriteOutcome),
    /// The board's webhook cursor moved (or was already past).
    HookAdvanced,
    /// An instant was marked; nothing changed.
    Ticked,
    /// An operation written as one module answered ([`Answer::Op`]).
    Op(Answer),
    /// A member was hidden or shown again across every board: whether that changed
    /// anything (it was not already so).
    Hidden(bool),
    /// A league close step ran (`None`: no close was due).
    Closed(Option<CloseStep>),
    /// An import filled a period with this many entries.
    Imported(Period, u64),
    /// A board was listed in the registry (`true`), or was listed already (`false`).
    Registered(bool),
    /// A board was taken out of the registry.
    Unregistered,
    /// A member's erase was entered in the erasure ledger, at this instant (the first
    /// entry's, when it was there already).
    Erased(i64),
    /// A keyed command was applied; its answer is remembered.
    Keyed(Answer),
    /// A keyed command's key was remembered with the same request: nothing was applied.
    Replayed(Answer),
}

/// A shared handle to one board.
pub type BoardHandle = Arc<RwLock<Board>>;

/// All boards.
#[derive(Debug)]
pub struct State {
    boards: RwLock<BTreeMap<String, BoardHandle>>,
    /// Remembered idempotency keys (applied only by the one thread that applies commands).
    idempotency: Mutex<Table>,
    /// Rankings built by imports, by import file name, waiting for their log record
    /// ([`Command::Import`]) to put them in place.
    staged: Mutex<HashMap<String, Ranking>>,
    /// The audit log (docs/SPEC.md §15), oldest first: kept apart from the boards, so a
    /// deleted board's trail stays.
    audit: Mutex<VecDeque<AuditEntry>>,
    /// How many entries of the audit log name each member (so an erase that finds none
    /// costs nothing; locked after `audit`).
    audit_named: Mutex<HashMap<String, u32>>,
    /// The members hidden across every board by this state's log (the embedded store's,
    /// and a Redis namespace's lifecycle log's).
    everywhere: Mutex<std::collections::BTreeSet<String>>,
    /// The boards a Redis namespace's lifecycle log lists ([`crate::command::registry`];
    /// empty on the embedded store, whose boards are its own).
    registry: Mutex<std::collections::BTreeSet<String>>,
    /// The erasure ledger (docs/SPEC.md §16, [`crate::command::erased`]): each member
    /// erased everywhere, by its HMAC, and when.
    erased: Mutex<BTreeMap<String, i64>>,
    /// The HMAC of the member whose remembered answers were forgotten last: an erase's
    /// records on every board, applied one after another, look through the table once.
    answers_forgotten: Mutex<Option<String>>,
    /// How long audit entries are kept, µs (`--audit-retention`): a read drops those
    /// older than that before it, and a snapshot leaves them out. Applying commands never
    /// looks at it, so every node's and every replay's state is the same.
    audit_retention_us: AtomicI64,
}

impl Default for State {
    fn default() -> Self {
        State {
            boards: RwLock::default(),
            idempotency: Mutex::default(),
            staged: Mutex::default(),
            audit: Mutex::default(),
            audit_named: Mutex::default(),
            everywhere: Mutex::default(),
            registry: Mutex::default(),
            erased: Mutex::default(),
            answers_forgotten: Mutex::default(),
            audit_retention_us: AtomicI64::new(DEFAULT_AUDIT_RETENTION_US),
        }
    }
}

/// Reads through a lock even if a panic poisoned it: one failed request must not take
/// every later read and write of a board down with it.
pub fn read_lock<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

/// [`read_lock`] for writing.
pub fn write_lock<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

impl State {
    /// The board called `name`.
    pub fn board(&self, name: &str) -> Option<BoardHandle> {
        read_lock(&self.boards).get(name).cloned()
    }

    /// The board called `name`, or `BoardNotFound`.
    pub fn require(&self, name: &str) -> Result<BoardHandle, BoardError> {
        self.board(name)
            .ok_or_else(|| BoardError::BoardNotFound(name.to_owned()))
    }

    /// All boards, by name.
    pub fn boards(&self) -> Vec<(String, BoardHandle)> {
        read_lock(&self.boards)
            .iter()
            .map(|(n, b)| (n.clone(), b.clone()))
            .collect()
    }

    /// Puts a board in place (snapshot loading).
    pub fn insert_board(&self, name: String, board: Board) {
        write_lock(&self.boards).insert(name, Arc::new(RwLock::new(board)));
    }

    /// An estimate of the data's size in memory, bytes: every ranking's structures and
    /// metadata, and the remembered idempotency keys (docs/SPEC.md §7, `--max-memory`).
    pub fn estimated_bytes(&self) -> u64 {
        let boards: u64 = self
            .boards()
            .iter()
            .map(|(name, b)| name.len() as u64 + read_lock(b).estimated_bytes())
            .sum();
        boards + self.idempotency().len() as u64 * crate::idempotency::BYTES_PER_KEY
    }

    /// A deep copy of every board and the remembered keys, for a snapshot (the writer takes
    /// it between two commits, so it is the state at one LSN). Imports staged for records
    /// not yet applied are not part of it.
    pub fn copy(&self) -> State {
        let boards = read_lock(&self.boards)
            .iter()
            .map(|(name, b)| (name.clone(), Arc::new(RwLock::new(read_lock(b).clone()))))
            .collect();
        State {
            boards: RwLock::new(boards),
            idempotency: Mutex::new(self.idempotency().clone()),
            staged: Mutex::default(),
            audit: Mutex::new(self.audit_log().clone()),
            audit_named: Mutex::new(self.audit_named().clone()),
            everywhere: Mutex::new(self.everywhere().clone()),
            registry: Mutex::new(self.registry().clone()),
            erased: Mutex::new(self.ledger().clone()),
            answers_forgotten: Mutex::default(),
            audit_retention_us: AtomicI64::new(self.audit_retention_us()),
        }
    }

    /// Prefetches what applying the commands of a batch reads first: for each write among
    /// them, the member's slot, then its record (with its partition and team), then its
    /// team's record, then the leaf of the teams' index that team was last found in, in
    /// the board's newest ranking ([`Board::prefetch_write`]) — each step
    /// for every write before the next ([`Prefetch::STEPS`]), since each address is in
    /// what the step before asked for. The writers call it before their log append (the embedded
    /// file, or a group's append to Redis), so these loads overlap the write instead of
    /// stalling the apply one member at a time. A write not stamped yet
    /// ([`crate::command::STAMP_AT_COMMIT`]) is looked for at `unstamped_us`. Changes
    /// nothing.
    pub fn prefetch<'a>(&self, cmds: impl Iterator<Item = &'a Command> + Clone, unstamped_us: i64) {
        for step in Prefetch::STEPS {
            for cmd in cmds.clone() {
                self.prefetch_one(cmd, step, unstamped_us);
            }
        }
    }

    fn prefetch_one(&self, cmd: &Command, step: Prefetch, unstamped_us: i64) {
        match cmd {
            Command::Write(w) => {
                if let Some(handle) = self.board(&w.board) {
                    let at_us = if w.at_us == crate::command::STAMP_AT_COMMIT {
                        unstamped_us
                    } else {
                        w.at_us
                    };
                    w.prefetch(&read_lock(&handle), at_us, step);
                }
            }
            Command::Keyed { cmds, .. } => cmds
                .iter()
                .for_each(|c| self.prefetch_one(c, step, unstamped_us)),
            _ => {}
        }
    }

    /// The remembered idempotency keys.
    pub fn idempotency(&self) -> MutexGuard<'_, Table> {
        self.idempotency.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds the ranking of import file `file` until its record is applied.
    pub fn stage(&self, file: String, ranking: Ranking) {
        self.staged().insert(file, ranking);
    }

    /// Whether the ranking of import file `file` is staged, waiting for its record.
    pub fn is_staged(&self, file: &str) -> bool {
        self.staged().contains_key(file)
    }

    /// Drops a staged ranking whose record will not come (the import failed).
    pub fn unstage(&self, file: &str) {
        self.staged().remove(file);
    }

    fn staged(&self) -> MutexGuard<'_, HashMap<String, Ranking>> {
        self.staged.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies one command. On error nothing changed.
    pub fn apply(&self, cmd: &Command) -> Result<Applied, BoardError> {
        self.apply_with(cmd, true, None)
    }

    /// [`Self::apply`] for log replay: the same effect, but a write's rank is not computed
    /// (`Outcome::rank` is 0) and the rankings' indexes are left stale until
    /// [`Self::finish_replay`], which must run before the state is read or served.
    pub fn replay(&self, cmd: &Command) -> Result<Applied, BoardError> {
        self.apply_with(cmd, false, None)
    }

    /// The boards the registry lists ([`crate::command::registry`]).
    pub(crate) fn registry(&self) -> MutexGuard<'_, std::collections::BTreeSet<String>> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The boards the registry lists, by name.
    pub fn registered(&self) -> Vec<String> {
        self.registry().iter().cloned().collect()
    }

    /// Whether the registry lists `board`.
    pub fn is_registered(&self, board: &str) -> bool {
        self.registry().contains(board)
    }

    /// Ends a replay: rebuilds every index [`Self::replay`] deferred, each in one pass.
    pub fn finish_replay(&self) {
        for (_, handle) in self.boards() {
            write_lock(&handle).rebuild_indexes();
        }
    }

    /// [`Self::apply`] of `cmd`, inside an audited record of instant `at_us` when it is
    /// one (a hide's: its members' teams change then).
    fn apply_with(
        &self,
        cmd: &Command,
        ranked: bool,
        at_us: Option<i64>,
    ) -> Result<Applied, BoardError> {
        match cmd {
            Command::Register(r) => r.apply(&mut self.registry()).map(Applied::Registered),
            Command::Unregister(u) => {
                u.apply(&mut self.registry());
                Ok(Applied::Unregistered)
            }
            Command::Erased(e) => {
                // The erase is over: the next one looks through the answers again.
                *self
                    .answers_forgotten
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = None;
                let (mut ledger, mut hidden) = (self.ledger(), self.everywhere());
                Ok(Applied::Erased(e.apply(
                    &mut ledger,
                    &mut hidden,
                    &mut self.idempotency(),
                )))
            }
            Command::Audited { actor, at_us, cmd } => {
                let applied = self.apply_with(cmd, ranked, Some(*at_us))?;
                if let Some(e) = self.audit_entry(actor, *at_us, cmd, &applied) {
                    self.push_audit(e);
                }
                Ok(applied)
            }
            Command::Write(_) | Command::Keyed { .. } | Command::Op { .. } => {
                self.apply_member_change(cmd, ranked)
            }
            _ => self.apply_board_change(cmd, at_us),
        }
    }

    /// A change to a member on a board: a write, an operation of its own module (a join,
    /// a hide, a delete), or those under an idempotency key.
    fn apply_member_change(&self, cmd: &Command, ranked: bool) -> Result<Applied, BoardError> {
        match cmd {
            Command::Write(w) => {
                let handle = self.require(&w.board)?;
                let outcome = w.apply(&mut write_lock(&handle), ranked)?;
                Ok(Applied::Written(outcome))
            }
            Command::Keyed { key, batch, cmds } => self.apply_keyed(key, *batch, cmds),
            Command::Op { board, at_us, op } => {
                let handle = self.require(board)?;
                let value = op.op().apply(&mut write_lock(&handle), board, *at_us)?;
                if let Some((member, hmac)) = op.op().forgets() {
                    self.forget_in_audit(member, hmac);
                    self.forget_answers(member, hmac);
                }
                Ok(Applied::Op(Answer::Op {
                    op: op.op().name().to_owned(),
                    value,
                }))
            }
            other => unreachable!("apply_with sends {other:?} elsewhere"),
        }
    }

    /// A change to a board, or to every board: create, patch, delete, its webhook cursor,
    /// a tick, a close step, an import, a hide everywhere (at `at_us`, its audited
    /// record's instant).
    fn apply_board_change(&self, cmd: &Command, at_us: Option<i64>) -> Result<Applied, BoardError> {
        match cmd {
            Command::CreateBoard(c) => c
                .apply(&mut write_lock(&self.boards), || self.hidden_everywhere())
                .map(Applied::BoardCreated),
            Command::HideEverywhere { member, hidden } => {
                self.hide_everywhere(member, *hidden, at_us)
            }
            Command::DeleteBoard(d) => d
                .apply(&mut write_lock(&self.boards))
                .map(|()| Applied::BoardDeleted),
            Command::HookAdvance { board, cursor_us } => {
                let handle = self.require(board)?;
                write_lock(&handle).advance_hook(*cursor_us);
                Ok(Applied::HookAdvanced)
            }
            Command::Tick { board, .. } => {
                self.require(board)?;
                Ok(Applied::Ticked)
            }
            Command::Close {
                board,
                now_us,
                budget,
            } => {
                let handle = self.require(board)?;
                let step = write_lock(&handle).close_step(*now_us, *budget as usize);
                Ok(Applied::Closed(step))
            }
            Command::Import {
                board,
                period_us,
                file,
                entries,
                hidden,
            } => self.apply_import(board, *period_us, file, *entries, (hidden, at_us)),
            other => unreachable!("apply_with sends {other:?} elsewhere"),
        }
    }

    /// The staged ranking of import `file` put in place, if the period is still empty.
    fn apply_import(
        &self,
        board: &str,
        period_us: i64,
        file: &str,
        entries: u64,
        (hidden, at_us): (&[String], Option<i64>),
    ) -> Result<Applied, BoardError> {
        let ranking = self.staged().remove(file);
        let handle = self.require(board)?;
        let mut b = write_lock(&handle);
        let period = b.calendar().period_at(period_us)?;
        let held = b.ranking(&period).map_or(0, Ranking::len);
        if held > 0 {
            return Err(BoardError::BoardNotEmpty {
                board: board.to_owned(),
                period: period.id,
                members: held,
            });
        }
        let mut ranking = ranking
            .ok_or_else(|| BoardError::Unavailable(format!("import file {file} was not loaded")))?;
        if !ranking.adopt_shape(b.shape()) || ranking.len() != entries {
            return Err(BoardError::InvalidEntries(format!(
                "import file {file} does not fit board {board:?}"
            )));
        }
        // The members it hides, all or none (within the board's limit).
        let new = hidden.iter().filter(|m| !b.hidden_here(m)).count();
        if !b.can_hide(new) {
            return Err(BoardError::TooManyHidden(MAX_HIDDEN_MEMBERS));
        }
        for m in hidden {
            b.hide_as(m, HideScope::Board, at_us)?;
        }
        b.import_ranking(period.clone(), ranking);
        Ok(Applied::Imported(period, entries))
    }

    /// A keyed command: the remembered answer if its key is known with the same request,
    /// else the commands and their answer remembered (if they succeeded). Applied ranked
    /// even in a replay: the answer holds the rank the write got.
    fn apply_keyed(
        &self,
        key: &KeyRecord,
        batch: bool,
        cmds: &[Command],
    ) -> Result<Applied, BoardError> {
        let mut table = self.idempotency();
        table.expire(key.now_us);
        if let Some(recalled) = table.recall(key.id, key.fingerprint, key.now_us) {
            // The key's text is not logged (only its hash): the service names it.
            return match recalled {
                Ok(answer) => Ok(Applied::Replayed(answer)),
                Err(KeyReused) => Err(BoardError::IdempotencyKeyReused(String::new())),
            };
        }
        let written = |c: &Command| self.keyed_write(c, key.now_us);
        let answer = match cmds {
            _ if batch => {
                if let Some(first) = cmds.first() {
                    self.require(first.board())?;
                }
                Answer::Batch(cmds.iter().map(written).collect())
            }
            [c @ Command::Write(_)] => Answer::Written(written(c)?),
            [c @ Command::Op { .. }] => match self.apply_with(c, true, None)? {
                Applied::Op(answer) => answer,
                other => {
                    return Err(BoardError::Unavailable(format!(
                        "an operation applied as {other:?}"
                    )))
                }
            },
            [c @ Command::CreateBoard(create)] => {
                let created = self.apply_with(c, true, None)? == Applied::BoardCreated(true);
                let handle = self.require(&create.board)?;
                let state = photofinish_core::op::board_state(
                    &create.board,
                    &read_lock(&handle),
                    key.now_us,
                )?;
                Answer::Created {
                    created,
                    state: Box::new(state),
                }
            }
            other => {
                return Err(BoardError::InvalidEntries(format!(
                    "a keyed record of {} commands that is no batch",
                    other.len()
                )))
            }
        };
        let expires_us = key.now_us.saturating_add(key.ttl_us);
        table.remember(key.id, key.fingerprint, expires_us, &answer);
        Ok(Applied::Keyed(answer))
    }

    /// A write inside a keyed command, applied ranked. The checks by the clock that
    /// unkeyed writes get before they are logged run here, at the record's own instant
    /// `now_us`, so a replay decides alike.
    fn keyed_write(&self, c: &Command, now_us: i64) -> Result<WriteOutcome, BoardError> {
        if let Command::Write(w) = c {
            let handle = self.require(&w.board)?;
            w.check_at(&read_lock(&handle), now_us)?;
        }
        match self.apply_with(c, true, None)? {
            Applied::Written(w) => Ok(w),
            other => Err(BoardError::Unavailable(format!(
                "a write applied as {other:?}"
            ))),
        }
    }
}

mod moderation;
