//! The served state — every board, each behind its own lock — and the one function that
//! changes it, [`State::apply`]. The writer thread, recovery and the snapshotter all apply
//! commands through it, so a replay rebuilds exactly what was served.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use photofinish_core::board::BoardWrite;
use photofinish_core::{Board, BoardError, Outcome, Period, PeriodRef};

use crate::command::Command;

/// What applying a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The board was created (`true`) or already existed with the same config (`false`).
    BoardCreated(bool),
    /// The board was deleted.
    BoardDeleted,
    /// The write's outcome and the period it landed in.
    Written(Outcome, Period),
    /// The member was removed.
    MemberRemoved,
    /// The board's settings were changed.
    BoardPatched,
}

/// A shared handle to one board.
pub type BoardHandle = Arc<RwLock<Board>>;

/// All boards.
#[derive(Debug, Default)]
pub struct State {
    boards: RwLock<BTreeMap<String, BoardHandle>>,
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
    /// metadata (docs/SPEC.md §7, `--max-memory`).
    pub fn estimated_bytes(&self) -> u64 {
        self.boards()
            .iter()
            .map(|(name, b)| name.len() as u64 + read_lock(b).estimated_bytes())
            .sum()
    }

    /// Applies one command. On error nothing changed.
    pub fn apply(&self, cmd: &Command) -> Result<Applied, BoardError> {
        self.apply_with(cmd, true)
    }

    /// [`Self::apply`] for log replay: the same effect, but a write's rank is not computed
    /// (`Outcome::rank` is 0) and the rankings' indexes are left stale until
    /// [`Self::finish_replay`], which must run before the state is read or served.
    pub fn replay(&self, cmd: &Command) -> Result<Applied, BoardError> {
        self.apply_with(cmd, false)
    }

    /// Ends a replay: rebuilds every index [`Self::replay`] deferred, each in one pass.
    pub fn finish_replay(&self) {
        for (_, handle) in self.boards() {
            write_lock(&handle).rebuild_indexes();
        }
    }

    fn apply_with(&self, cmd: &Command, ranked: bool) -> Result<Applied, BoardError> {
        match cmd {
            Command::CreateBoard {
                board,
                config,
                max_boards,
            } => {
                let mut boards = write_lock(&self.boards);
                if let Some(existing) = boards.get(board) {
                    let existing = read_lock(existing).config().clone();
                    return if existing == *config {
                        Ok(Applied::BoardCreated(false))
                    } else {
                        Err(BoardError::ConfigConflict {
                            board: board.clone(),
                            existing: Box::new(existing),
                        })
                    };
                }
                if let Some(max) = max_boards.filter(|m| boards.len() as u64 >= *m) {
                    return Err(BoardError::TooManyBoards(max));
                }
                let b = Board::new(config.clone())?;
                boards.insert(board.clone(), Arc::new(RwLock::new(b)));
                Ok(Applied::BoardCreated(true))
            }
            Command::DeleteBoard { board } => {
                let mut boards = write_lock(&self.boards);
                match boards.remove(board) {
                    Some(_) => Ok(Applied::BoardDeleted),
                    None => Err(BoardError::BoardNotFound(board.clone())),
                }
            }
            Command::Write {
                board,
                member,
                op,
                value,
                at_us,
                metadata,
                over_budget,
            } => {
                let handle = self.require(board)?;
                let mut b = write_lock(&handle);
                let w = BoardWrite {
                    member,
                    op: *op,
                    value: *value,
                    at_us: *at_us,
                    metadata: metadata.as_deref(),
                    over_budget: *over_budget,
                };
                let (outcome, period) = if ranked {
                    b.submit(&w)?
                } else {
                    b.submit_unranked(&w)?
                };
                Ok(Applied::Written(outcome, period))
            }
            Command::PatchBoard { board, patch } => {
                let handle = self.require(board)?;
                write_lock(&handle).patch(patch)?;
                Ok(Applied::BoardPatched)
            }
            Command::DeleteMember {
                board,
                period,
                member,
                now_us,
            } => {
                let handle = self.require(board)?;
                let mut b = write_lock(&handle);
                let p = b.resolve(&PeriodRef::parse(period), *now_us)?;
                let removed = b.ranking_mut(&p).is_some_and(|r| r.remove(member));
                if removed {
                    Ok(Applied::MemberRemoved)
                } else {
                    Err(BoardError::member_not_found(board, member, &p.id))
                }
            }
        }
    }
}
