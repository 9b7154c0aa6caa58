//! A change of one board written as one module: [`BoardOp`] is everything the service
//! needs of it — its name (the tag its log record carries), the access it needs, the
//! memory budget's verdict where it may add a member, its effect on the board at the
//! instant its record was given, and that record — so an operation written this way
//! needs no variant of its own in [`Change`](super::Change), the store's `Command`,
//! `Applied` or [`Answer`](crate::idempotency::Answer), nor a kind in their codecs. The
//! store logs every one as `Command::Op` (its name and its record, JSON), applies it with
//! [`BoardOp::apply`], and reads it back with [`LoggedOp::decode`], the one table of
//! operations by name (in [`super`], beside each operation's `mod` line). [`super::join`]
//! is written this way.
//!
//! An answer is an [`OpAnswer`] ([`Answer::Op`](crate::idempotency::Answer::Op)): its
//! type where it was made, JSON once it crosses JSON, so every backend, a remembered
//! answer and a replay hold it alike; the operation's module reads its own answer back
//! into its type.
//!
//! The rest an operation says of itself has a default that fits most: whether it takes an
//! idempotency key (docs/SPEC.md §7; then the store logs it inside its keyed record, the
//! instant stamped at commit, and remembers its answer), its check before it is logged
//! (a refusal logs nothing), whether it is an admin change the audit log records and the
//! entry its answer makes (docs/SPEC.md §15), and what watchers of its board see
//! (docs/SPEC.md §8).

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::access::Action;
use crate::board::Board;
use crate::budget::OverBudget;
use crate::calendar::Period;
use crate::error::BoardError;
use crate::events::EventKind;

use super::OpAnswer;

/// An operation's log record: its fields as JSON, for every operation whose type is its
/// record (`#[derive(Serialize)]`), read back by [`LoggedOp::decode`].
pub trait Recorded {
    /// The record.
    fn record(&self) -> Value;

    /// The record as JSON text, as a log holds it: made straight from the operation,
    /// without a [`Value`] between (the fields in the type's order, not sorted).
    fn record_text(&self) -> String;
}

impl<T: serde::Serialize> Recorded for T {
    fn record(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    fn record_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A change of one board as one module. See the module docs.
pub trait BoardOp: Recorded + fmt::Debug + Send + Sync + 'static {
    /// Its name: the tag of its log record, and what messages call it.
    fn name(&self) -> &'static str;

    /// The access it needs on `board`.
    fn action<'a>(&'a self, board: &'a str) -> Action<'a>;

    /// Takes the memory budget's verdict, if it may add a member (docs/SPEC.md §7).
    fn admit_budget(&mut self, over: Option<OverBudget>) {
        let _ = over;
    }

    /// Its effect on `board` (named `name`) at `at_us`, the instant its record was given
    /// when it was logged (so a replay and every node decide alike), and its answer.
    fn apply(&self, board: &mut Board, name: &str, at_us: i64) -> Result<OpAnswer, BoardError>;

    /// Whether it may carry an idempotency key (docs/SPEC.md §7). None by default: an
    /// operation that answers a repeat alike needs none.
    fn takes_key(&self) -> bool {
        false
    }

    /// Its check before it is logged, against `board` as this node has it at `now_us`:
    /// a refusal here logs nothing ([`Self::apply`] decides again where it is logged).
    fn check(&self, board: &Board, now_us: i64) -> Result<(), BoardError> {
        let _ = (board, now_us);
        Ok(())
    }

    /// Whether it is an admin change, logged with who made it (docs/SPEC.md §15).
    fn audited(&self) -> bool {
        false
    }

    /// The audit entry its `answer` makes, if it is audited and changed something.
    fn audit(&self, answer: &Value) -> Option<AuditNote> {
        let _ = answer;
        None
    }

    /// The member it erases and that member's HMAC (docs/SPEC.md §16), if it erases one:
    /// the state then renames the member to its HMAC wherever else it keeps the name (the
    /// audit log). `None` by default.
    fn forgets(&self) -> Option<(&str, &str)> {
        None
    }

    /// What watchers of `board` see of it, applied with `answer`, at `now_us`
    /// (docs/SPEC.md §8): nothing by default.
    fn events(&self, board: &Board, answer: &OpAnswer, now_us: i64) -> Vec<OpEvent> {
        let _ = (board, answer, now_us);
        Vec::new()
    }
}

/// What an audited operation's entry says (the log adds who, when and on which board).
#[derive(Debug, Clone, PartialEq)]
pub struct AuditNote {
    /// The action, e.g. `member.hide`.
    pub action: &'static str,
    /// The member it is about, if one.
    pub member: Option<String>,
    /// Its detail.
    pub detail: Value,
}

/// An event an operation shows watchers of its board.
#[derive(Debug, Clone, PartialEq)]
pub struct OpEvent {
    /// The event.
    pub kind: EventKind,
    /// The period it happens in, when its reset event must come first if the feed has
    /// not sent it (a score event).
    pub announce: Option<Period>,
}

/// An operation as a log record holds it: shared, and equal to another with the same name
/// and record.
#[derive(Clone)]
pub struct LoggedOp(Arc<dyn BoardOp>);

impl LoggedOp {
    /// `op`, to be logged.
    pub fn new(op: Box<dyn BoardOp>) -> Self {
        Self(Arc::from(op))
    }

    /// The operation.
    pub fn op(&self) -> &dyn BoardOp {
        &*self.0
    }
}

impl fmt::Debug for LoggedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for LoggedOp {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name() && self.0.record() == other.0.record()
    }
}

impl Eq for LoggedOp {}
