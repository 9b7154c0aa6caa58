//! A score write (docs/SPEC.md §3, §10, §13, §14) as one module: what a door builds
//! ([`WriteRequest`], checked where it was parsed), its checks by the clock before it is
//! logged, its log record ([`LoggedWrite`], which every backend applies alike), its effect
//! on a board and its answer ([`WriteOutcome`]), and what it may be refused with
//! ([`refusals`]). A batch is writes in order, each answered on its own.
//!
//! A write is not a [`BoardOp`](super::BoardOp): it is the hot path, so its record is
//! binary (the store's `command/write.rs` holds its bytes; as JSON it would cost 2.9×,
//! docs/bench-history.md §27) and it travels as its own [`Change`](super::Change) variant,
//! without a box. Everything else about it is here: a field a write gains (a partition, a
//! team) is added to these types and to its record's bytes, nowhere else.

use crate::board::{Board, BoardWrite};
use crate::budget::OverBudget;
use crate::calendar::Period;
use crate::columns::{ColumnNames, ScoreInput};
use crate::config::Op;
use crate::error::BoardError;
use crate::names::{GroupKey, MemberName};
use crate::ranking::{Outcome, Prefetch};

/// A write as a client sends it, before its instant and period are resolved.
#[derive(Debug, Clone)]
pub struct WriteRequest {
    /// The member (checked: a write adds it to a ranking).
    pub member: MemberName,
    /// The operator, `None` for the board's rule.
    pub op: Option<Op>,
    /// The scores as the door received them ([`ScoreInput`]), resolved against the
    /// board's columns when the write is applied.
    pub scores: ScoreInput,
    /// An explicit instant; `None` stamps the server's clock.
    pub at_us: Option<i64>,
    /// The period the write names (docs/SPEC.md §10: the current one, or a closed one
    /// within the board's grace); `None` for the period of its instant. Never with `at_us`.
    pub period: Option<String>,
    /// New metadata (a serialized JSON object), `None` to keep.
    pub metadata: Option<String>,
    /// The partition it names (docs/SPEC.md §17), `None` for none.
    pub partition: Option<GroupKey>,
    /// The team it names (docs/SPEC.md §17), `None` for none.
    pub team: Option<GroupKey>,
    /// The server's memory budget was over when the write was admitted: it may not add a
    /// member (docs/SPEC.md §7).
    pub over_budget: Option<OverBudget>,
}

/// What [`LoggedWrite::unchecked`] makes of a write.
#[derive(Debug)]
pub enum Unchecked {
    /// Its record, ready for the log, which stamps its instant.
    Ready(LoggedWrite),
    /// The write, which must be checked against its board first.
    NeedsBoard(WriteRequest),
}

/// A write's outcome and the period it landed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// Score, ordinal rank, reached_at, whether the score changed.
    pub outcome: Outcome,
    /// The period the write landed in.
    pub period: Period,
    /// The board's column names, on a board of several (to name each score).
    pub columns: ColumnNames,
    /// The member's partition after the write, on a board of partitions.
    pub partition: Option<String>,
    /// The member's team after the write, on a board of teams.
    pub team: Option<String>,
}

/// A write as its log record holds it: everything its effect depends on, its instant
/// included, so a replay and every node decide alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedWrite {
    /// Board name.
    pub board: String,
    /// Member name.
    pub member: String,
    /// The operator, `None` for the board's rule.
    pub op: Option<Op>,
    /// The scores as the write gave them, resolved against the board's columns when the
    /// record is applied.
    pub scores: ScoreInput,
    /// The write's instant: its explicit `at`, or stamped by the log from its clock.
    pub at_us: i64,
    /// An instant in (the start of) the period the write names (a closed one within the
    /// board's grace, checked before it was logged); `None` for the period of `at_us`.
    pub period_us: Option<i64>,
    /// New metadata (a serialized JSON object), or `None` to keep it.
    pub metadata: Option<String>,
    /// The memory budget was over when the write was admitted: it may not add a member.
    pub over_budget: Option<OverBudget>,
    /// The partition it names (docs/SPEC.md §17), `None` for none.
    pub partition: Option<String>,
    /// The team it names (docs/SPEC.md §17), `None` for none.
    pub team: Option<String>,
}

impl LoggedWrite {
    /// The record of `w` on `board` with instant `at_us` (the write's own if it gave one,
    /// else this placeholder the log stamps), into the period starting at `period_us`
    /// when it names one.
    pub fn new(board: &str, w: WriteRequest, at_us: i64, period_us: Option<i64>) -> Self {
        Self {
            board: board.to_owned(),
            member: w.member.into_string(),
            op: w.op,
            scores: w.scores,
            at_us: w.at_us.unwrap_or(at_us),
            period_us,
            metadata: w.metadata,
            over_budget: w.over_budget,
            partition: w.partition.map(GroupKey::into_string),
            team: w.team.map(GroupKey::into_string),
        }
    }

    /// The record of `w` when it needs nothing of its board before it is logged — no
    /// explicit `at`, no named period: the log stamps its instant, and its apply refuses
    /// a missing board. The write itself back when it must be [`Self::checked`]. The
    /// write path calls this first, so a plain write reads no board.
    pub fn unchecked(board: &str, w: WriteRequest) -> Unchecked {
        if w.at_us.is_some() || w.period.is_some() {
            return Unchecked::NeedsBoard(w);
        }
        Unchecked::Ready(Self::new(board, w, 0, None))
    }

    /// The record of `w`, checked by the clock at `now_us` against `b` before it is
    /// logged: a write with an explicit `at` must land in a period readers still see (the
    /// log's own retention rule knows only the newest period written), and a named
    /// period must be the current one or a closed one within grace. Also whether the log
    /// stamps its instant (it gave none).
    pub fn checked(
        b: &Board,
        board: &str,
        w: WriteRequest,
        now_us: i64,
    ) -> Result<(Self, bool), BoardError> {
        let w = match Self::unchecked(board, w) {
            Unchecked::Ready(record) => return Ok((record, true)),
            Unchecked::NeedsBoard(w) => w,
        };
        if let Some(at) = w.at_us {
            b.window().write_period(at, now_us)?;
        }
        let period_us = named_period(b, &w, now_us)?;
        let stamp = w.at_us.is_none();
        Ok((Self::new(board, w, 0, period_us), stamp))
    }

    /// The record of `w` inside a keyed record, whose instant the log stamps at commit
    /// (`stamp_at`, its placeholder): only its named period is looked up in `b` at
    /// `now_us` before it is logged; the clock's checks run at apply, at the key's
    /// instant ([`Self::check_at`]).
    pub fn keyed(
        b: &Board,
        board: &str,
        w: WriteRequest,
        now_us: i64,
        stamp_at: i64,
    ) -> Result<Self, BoardError> {
        let period_us = named_period(b, &w, now_us)?;
        Ok(Self::new(board, w, stamp_at, period_us))
    }

    /// The clock's checks of a write inside a keyed record, at the record's own instant
    /// `now_us` (so a replay decides alike): its instant in a period readers see, its
    /// named period current or within grace.
    pub fn check_at(&self, b: &Board, now_us: i64) -> Result<(), BoardError> {
        b.window().write_period(self.at_us, now_us)?;
        if let Some(start) = self.period_us {
            let period = b.calendar().period_at(start)?;
            let grace = b.config().settings.grace;
            b.window().check_named(&period, now_us, grace)?;
        }
        Ok(())
    }

    /// Its effect on `b`, and its answer; `ranked: false` leaves the rank out (a replay,
    /// which nobody reads the answer of).
    pub fn apply(&self, b: &mut Board, ranked: bool) -> Result<WriteOutcome, BoardError> {
        let w = BoardWrite {
            member: &self.member,
            op: self.op,
            values: self.scores.resolve(&b.config().columns)?,
            at_us: self.at_us,
            period_us: self.period_us,
            metadata: self.metadata.as_deref(),
            over_budget: self.over_budget,
            partition: self.partition.as_deref(),
            team: self.team.as_deref(),
        };
        let (outcome, period) = if ranked {
            b.submit(&w)?
        } else {
            b.submit_unranked(&w)?
        };
        let (partition, team) = match b.ranking(&period) {
            Some(r) if b.is_partitioned() || b.has_teams() => (
                r.partition_of(&self.member).map(str::to_owned),
                r.team_of(&self.member).map(str::to_owned),
            ),
            _ => (None, None),
        };
        Ok(WriteOutcome {
            outcome,
            period,
            columns: b.column_names(),
            partition,
            team,
        })
    }

    /// Prefetches `step` of what [`Self::apply`] reads first on `b`, its instant being
    /// `at_us` (the record's, or the one the log is about to stamp).
    pub fn prefetch(&self, b: &Board, at_us: i64, step: Prefetch) {
        b.prefetch_write(&self.member, at_us, self.period_us, step);
    }
}

/// An instant in the period `w` names, checked at `now_us` (the current one, or a closed
/// one within the board's grace): its start (0 for `all`, which starts at i64::MIN).
fn named_period(b: &Board, w: &WriteRequest, now_us: i64) -> Result<Option<i64>, BoardError> {
    let Some(id) = &w.period else {
        return Ok(None);
    };
    let grace = b.config().settings.grace;
    b.window()
        .named_write_period(id, now_us, grace)
        .map(|p| Some(p.start_us.max(0)))
}

/// What a write and a batch may be refused with ([`Refuses`](crate::error::Refuses): the
/// API document lists it for their routes).
pub mod refusals {
    use crate::error::{ErrorCode as C, Refuses};

    /// One write: by the rules of docs/SPEC.md §3, §10, §13, §14 and §17 and the memory
    /// budget.
    pub struct Write;
    impl Refuses for Write {
        const REFUSALS: &'static [C] = &[
            C::BoardNotFound,
            C::InvalidMember,
            C::ScoreNotInteger,
            C::InvalidScore,
            C::ScoreOutOfRange,
            C::ScoreOverflow,
            C::InvalidOp,
            C::InvalidMetadata,
            C::MetadataTooLarge,
            C::InvalidTime,
            C::InvalidPeriod,
            C::PeriodNotRetained,
            C::PeriodClosed,
            C::RankingFull,
            C::ScoreRejected,
            C::BoardFull,
            C::BoardClosed,
            C::AttemptsExhausted,
            C::NotJoined,
            C::InsufficientStorage,
            C::PartitionConflict,
            C::TooManyPartitions,
            C::TeamConflict,
            C::TeamFull,
            // A partition or team named on a board without them (docs/SPEC.md §17).
            C::InvalidParameter,
        ];
    }

    /// A batch: refused whole only for its board or its size; each entry's refusal is
    /// answered in its place.
    pub struct Batch;
    impl Refuses for Batch {
        const REFUSALS: &'static [C] =
            &[C::BoardNotFound, C::BatchTooLarge, C::InsufficientStorage];
    }
}
