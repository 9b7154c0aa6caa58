//! The changes of docs/SPEC.md §3 as values: [`Change`] is every way a board changes —
//! created, deleted, written (one write or a batch), or an operation of its own
//! module (a board patched, a member joined, removed, hidden) — and
//! [`Answer`] how each was answered (under an idempotency key, remembered: the
//! idempotency table keeps it, [`crate::idempotency`] names it). The service applies any
//! of them through one method,
//! [`Leaderboard::change`](crate::Leaderboard::change), plainly or under an idempotency
//! key; the gate authorizes any of them through one method. A new change is written as
//! one module ([`BoardOp`], as [`super::Join`] is) and reaches the service as
//! [`Change::Op`]: no variant here, no command, apply or codec kind in the store.

use super::answer::OpAnswer;
use crate::access::Action;
use crate::budget::OverBudget;
use crate::config::CheckedConfig;
use crate::error::BoardError;
use crate::view::BoardState;

use super::write::{WriteOutcome, WriteRequest};

use super::board_op::BoardOp;

/// How a [`Change`](crate::op::Change) was answered; under an idempotency key,
/// remembered to be given again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A write's outcome.
    Written(WriteOutcome),
    /// Each entry's outcome or error, in order.
    Batch(Vec<Result<WriteOutcome, BoardError>>),
    /// The board was deleted.
    Deleted,
    /// The answer of an operation written as one module ([`crate::op::BoardOp`]): its
    /// name and its answer ([`OpAnswer`]: its type, or its JSON once it crossed JSON),
    /// which the operation's module reads back.
    Op {
        /// The operation's name.
        op: String,
        /// Its answer.
        value: OpAnswer,
    },
    /// The board was created (`true`) or existed alike, and how it was then.
    Created {
        /// New, or the same config existed.
        created: bool,
        /// The board at that moment (boxed: the common answers stay small).
        state: Box<BoardState>,
    },
}

/// An answer, and whether it is a replay of a remembered one.
#[derive(Debug, Clone)]
pub struct Replayable {
    /// The answer.
    pub answer: Answer,
    /// It was remembered: nothing was applied this time.
    pub replayed: bool,
}

/// A change to one board. See the module docs.
#[derive(Debug)]
pub enum Change {
    /// Create the board (`created: false` in the answer when it exists alike).
    Create(CheckedConfig),
    /// Delete it and all its periods.
    Delete,
    /// One write ([`super::write`]).
    Write(WriteRequest),
    /// Writes in order, each succeeding or failing on its own.
    Batch(Vec<WriteRequest>),
    /// An operation written as one module ([`BoardOp`]: e.g. [`super::Join`],
    /// [`super::Hide`], [`super::Remove`]).
    Op(Box<dyn BoardOp>),
}

impl Change {
    /// What it is, for messages: `create`, `delete`, `write`, `batch`, or the operation's
    /// name.
    pub fn name(&self) -> &'static str {
        match self {
            Change::Create(_) => "create",
            Change::Delete => "delete",
            Change::Write(_) => "write",
            Change::Batch(_) => "batch",
            Change::Op(op) => op.name(),
        }
    }

    /// Whether it is an admin change the audit log records (docs/SPEC.md §15): a board
    /// created or deleted, or an operation that says so ([`BoardOp::audited`]: a board
    /// patched, a member deleted, hidden or shown). Writes and joins are not.
    pub fn is_audited(&self) -> bool {
        match self {
            Change::Create(_) | Change::Delete => true,
            Change::Op(op) => op.audited(),
            Change::Write(_) | Change::Batch(_) => false,
        }
    }

    /// Whether it may carry an idempotency key (docs/SPEC.md §7: submit, batch, board
    /// create, and an operation that says so ([`BoardOp::takes_key`]: a member delete; a
    /// join needs none: joining twice is answered `already`).
    pub fn takes_key(&self) -> bool {
        match self {
            Change::Delete => false,
            Change::Op(op) => op.takes_key(),
            Change::Create(_) | Change::Write(_) | Change::Batch(_) => true,
        }
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
    /// (create, delete), or what its operation says ([`BoardOp::action`]). `None`
    /// for a write or a batch, whose every write is authorized for its member
    /// ([`Action::Write`]).
    pub fn action<'a>(&'a self, board: &'a str) -> Option<Action<'a>> {
        match self {
            Change::Create(_) | Change::Delete => Some(Action::Manage { board }),
            Change::Op(op) => Some(op.action(board)),
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

    /// Puts the memory budget's verdict on whatever of it may add to the data: each
    /// write, and a join.
    pub fn admit_budget(&mut self, over: Option<OverBudget>) {
        match self {
            Change::Write(w) => w.over_budget = over,
            Change::Batch(ws) => ws.iter_mut().for_each(|w| w.over_budget = over),
            Change::Op(op) => op.admit_budget(over),
            _ => {}
        }
    }
}

/// What a create and a delete may be refused with ([`Refuses`]: the API document lists
/// it for their routes), named after their variants. A write's and a batch's are their
/// module's ([`super::write::refusals`]).
pub mod refusals {
    use crate::error::{ErrorCode as C, Refuses};

    /// [`super::Change::Create`].
    pub struct Create;
    impl Refuses for Create {
        const REFUSALS: &'static [C] =
            &[C::InvalidConfig, C::BoardConfigConflict, C::TooManyBoards];
    }

    /// [`super::Change::Delete`].
    pub struct Delete;
    impl Refuses for Delete {
        const REFUSALS: &'static [C] = &[C::BoardNotFound];
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

    /// The answer of operation `name`, written as one module ([`BoardOp`]), as its type
    /// (its module's own view of it, e.g. [`super::Join::answer`]).
    pub fn into_op<T: serde::de::DeserializeOwned + Clone + 'static>(
        self,
        name: &str,
    ) -> Result<T, BoardError> {
        match self {
            Answer::Op { op, value } if op == name => value
                .into_typed()
                .map_err(|e| BoardError::Unavailable(format!("a {name}'s answer: {e}"))),
            other => Err(mismatch(name, &other)),
        }
    }

    /// A delete's: nothing.
    pub fn into_deleted(self) -> Result<(), BoardError> {
        match self {
            Answer::Deleted => Ok(()),
            other => Err(mismatch("a delete", &other)),
        }
    }
}
