//! The changes of docs/SPEC.md §3 as values: [`Change`] is every way a board changes —
//! created, patched, deleted, written (one write or a batch), a member removed — and
//! [`Answer`](crate::idempotency::Answer) how each was answered. The service applies any
//! of them through one method,
//! [`Leaderboard::change`](crate::Leaderboard::change), plainly or under an idempotency
//! key; the gate authorizes any of them through one method. So a new change is a variant
//! here, its command and apply in the store, and its doors.

use crate::access::Action;
use crate::board::PeriodRef;
use crate::config::BoardConfig;
use crate::error::BoardError;
use crate::idempotency::Answer;
use crate::view::{BoardPatch, BoardState, WriteOutcome, WriteRequest};

/// A change to one board. See the module docs.
#[derive(Debug, Clone)]
pub enum Change {
    /// Create the board (`created: false` in the answer when it exists alike).
    Create(BoardConfig),
    /// Change its changeable settings; answers the board as it is then.
    Patch(BoardPatch),
    /// Delete it and all its periods.
    Delete,
    /// One write.
    Write(WriteRequest),
    /// Writes in order, each succeeding or failing on its own.
    Batch(Vec<WriteRequest>),
    /// Remove a member from a period.
    Remove {
        /// The member.
        member: String,
        /// The period.
        period: PeriodRef,
    },
}

impl Change {
    /// What it is, for messages: `create`, `patch`, `delete`, `write`, `batch`, `remove`.
    pub fn name(&self) -> &'static str {
        match self {
            Change::Create(_) => "create",
            Change::Patch(_) => "patch",
            Change::Delete => "delete",
            Change::Write(_) => "write",
            Change::Batch(_) => "batch",
            Change::Remove { .. } => "remove",
        }
    }

    /// Whether it may carry an idempotency key (docs/SPEC.md §7: submit, batch, member
    /// delete and board create).
    pub fn takes_key(&self) -> bool {
        !matches!(self, Change::Patch(_) | Change::Delete)
    }

    /// `not_supported` for a change that takes no idempotency key.
    pub fn check_key(&self) -> Result<(), BoardError> {
        if self.takes_key() {
            Ok(())
        } else {
            Err(self.key_refused())
        }
    }

    /// The refusal of an idempotency key on this change: `not_supported`.
    pub fn key_refused(&self) -> BoardError {
        BoardError::NotSupported(format!(
            "a {} takes no idempotency key (docs/SPEC.md §7)",
            self.name()
        ))
    }

    /// The access a change of `board` needs, other than its writes: managing the board
    /// (create, patch, delete) or removing a member. `None` for a write or a batch, whose
    /// every write is authorized for its member ([`Action::Write`]).
    pub fn action<'a>(&self, board: &'a str) -> Option<Action<'a>> {
        match self {
            Change::Create(_) | Change::Patch(_) | Change::Delete => Some(Action::Manage { board }),
            Change::Remove { .. } => Some(Action::RemoveMember { board }),
            Change::Write(_) | Change::Batch(_) => None,
        }
    }

    /// Its writes: one, a batch's, or none.
    pub fn writes(&self) -> &[WriteRequest] {
        match self {
            Change::Write(w) => std::slice::from_ref(w),
            Change::Batch(ws) => ws,
            _ => &[],
        }
    }

    /// Its writes, mutably (the gate puts the memory budget's verdict on each).
    pub fn writes_mut(&mut self) -> &mut [WriteRequest] {
        match self {
            Change::Write(w) => std::slice::from_mut(w),
            Change::Batch(ws) => ws,
            _ => &mut [],
        }
    }
}

/// The answer `answer` was not the shape its change is answered with.
fn mismatch(want: &str, answer: &Answer) -> BoardError {
    BoardError::Unavailable(format!("{want} was answered with {answer:?}"))
}

impl Answer {
    /// A write's outcome.
    pub fn into_written(self) -> Result<WriteOutcome, BoardError> {
        match self {
            Answer::Written(w) => Ok(w),
            other => Err(mismatch("a write", &other)),
        }
    }

    /// A batch's outcomes, in order.
    pub fn into_batch(self) -> Result<Vec<Result<WriteOutcome, BoardError>>, BoardError> {
        match self {
            Answer::Batch(each) => Ok(each),
            other => Err(mismatch("a batch", &other)),
        }
    }

    /// A create's: whether the board is new, and the board then.
    pub fn into_created(self) -> Result<(bool, BoardState), BoardError> {
        match self {
            Answer::Created { created, state } => Ok((created, *state)),
            other => Err(mismatch("a create", &other)),
        }
    }

    /// A patch's: the board then.
    pub fn into_patched(self) -> Result<BoardState, BoardError> {
        match self {
            Answer::Patched(state) => Ok(*state),
            other => Err(mismatch("a patch", &other)),
        }
    }

    /// A delete's or a removal's: nothing.
    pub fn into_done(self) -> Result<(), BoardError> {
        match self {
            Answer::Deleted | Answer::Removed => Ok(()),
            other => Err(mismatch("a delete or a removal", &other)),
        }
    }
}
