//! Operations as values. A board operation is a type that holds its checked input (a
//! [`BoardName`](crate::names::BoardName), bounded lists) and says which board it is on,
//! which access [`Action`] it needs and how it is answered. The service runs any of them
//! through one method, and the server's gate authorizes any of them through one method,
//! so a new operation is a new type here — not a new trait method on every backend and a
//! new wrapper at every door.
//!
//! [`change`] holds the changes: [`Change`] is every way a board changes, applied by
//! [`Leaderboard::change`](crate::Leaderboard::change) and answered with an
//! [`Answer`](crate::idempotency::Answer). [`read`] holds the reads: each answers from the board's state
//! ([`BoardRead::read`], a pure function of the board and the clock), which every
//! backend holds in memory and makes fresh enough before it asks
//! ([`Leaderboard::read_board`](crate::Leaderboard::read_board)); [`RunRead::read`](crate::RunRead::read)
//! runs one on any service.

use crate::access::{Action, Viewer};
use crate::board::Board;
use crate::error::BoardError;
use crate::names::BoardName;
use crate::ranking::Prefetch;

pub mod answer;
pub mod board_op;
pub mod change;
pub mod claim;
pub mod cohort;
pub mod each;
pub mod erase;
pub mod export;
pub mod hide;
pub mod join;
pub mod league;
pub mod moderation;
pub mod partitions;
pub mod patch;
mod period;
pub mod read;
pub mod remove;
pub mod rewards;
pub mod standing;
pub mod teams;
pub mod write;

pub use answer::OpAnswer;
pub use board_op::{AuditNote, BoardOp, LoggedOp, OpEvent};
pub use change::{Answer, Change, Replayable};
pub use claim::Claim;
pub use cohort::{ReadCohort, ReadCohortPage, ReadCohorts};
pub use each::Each;
pub use erase::Erase;
pub use export::{MemberData, PeriodData, ReadMemberData};
pub use hide::Hide;
pub use join::Join;
pub use league::{ReadMoves, ReadTier};
pub use moderation::ReadHidden;
pub use partitions::{PartitionList, ReadPartitions};
pub use patch::Patch;
pub use remove::{Remove, Removed};
pub use rewards::{PeriodRewards, ReadMemberRewards, ReadPeriodRewards};
pub use standing::{ReadStanding, Standing};
pub use teams::{ReadTeam, ReadTeams, TeamDetail, TeamList};
pub use write::{LoggedWrite, Unchecked, WriteOutcome, WriteRequest};

pub use read::{
    board_state, ReadAround, ReadBoard, ReadExportPage, ReadMember, ReadMembers, ReadPage,
    ReadPeriods, ReadRankOfScore, ReadThresholds,
};

impl LoggedOp {
    /// The operation named `name` from its `record`: the one table of the operations
    /// written as one module ([`BoardOp`]), by name — a new one is a row here beside its
    /// `mod` line. An unknown name is a record of a newer version; a record that does not
    /// read is damage.
    pub fn decode(name: &str, record: serde_json::Value) -> Result<Self, String> {
        fn read<T: BoardOp + serde::de::DeserializeOwned>(
            record: serde_json::Value,
        ) -> Result<LoggedOp, String> {
            serde_json::from_value::<T>(record)
                .map(|op| LoggedOp::new(Box::new(op)))
                .map_err(|e| e.to_string())
        }
        match name {
            Join::NAME => read::<Join>(record),
            Hide::NAME => read::<Hide>(record),
            Remove::NAME => read::<Remove>(record),
            Patch::NAME => read::<Patch>(record),
            Claim::NAME => read::<Claim>(record),
            Erase::NAME => read::<Erase>(record),
            other => Err(format!(
                "an operation this version does not know: {other:?}"
            )),
        }
    }
}

/// A read of one board, as a value. See the module docs.
pub trait BoardRead: Send + Sync {
    /// What it answers.
    type Output: Send;

    /// The board it reads.
    fn board(&self) -> &BoardName;

    /// The access it needs: reading its board.
    fn action(&self) -> Action<'_> {
        Action::Read {
            board: self.board(),
        }
    }

    /// The answer, from the board's state at `now_us` (µs since the epoch, the service's
    /// clock), as `viewer` sees it (hidden members, docs/SPEC.md §15). Pure: a read
    /// changes nothing.
    fn read(&self, board: &Board, now_us: i64, viewer: &Viewer)
        -> Result<Self::Output, BoardError>;

    /// Asks the CPU for the memory [`Self::read`] loads first, in `step`'s order, so that
    /// the reads of a batch ([`Each`]) wait for their cache misses together instead of one
    /// after another. Changes nothing; a read that gains nothing from it keeps this
    /// default, which does nothing.
    fn prefetch(&self, _board: &Board, _now_us: i64, _step: Prefetch) {}
}

/// What the reads' tests share: a board with members written into it.
#[cfg(test)]
pub(crate) mod fixture {
    use crate::board::tests::{daily, write};
    use crate::board::Board;

    pub(crate) use crate::board::tests::T0;

    /// A daily board keeping 3 periods where ann scored 5 the day before and 9 today,
    /// bob and cid tie at 9 after her, dan holds `i64::MIN` and eve `eve`.
    pub(crate) fn sample_board(eve: i64) -> Board {
        let mut b = daily(3);
        let writes = [
            ("ann", 5, T0 - 10),
            ("ann", 9, T0 + 1),
            ("bob", 9, T0 + 2),
            ("cid", 9, T0 + 3),
            ("dan", i64::MIN, T0 + 4),
            ("eve", eve, T0 + 5),
        ];
        for (member, v, at_us) in writes {
            write(&mut b, member, v, at_us).expect("write");
        }
        b
    }
}
