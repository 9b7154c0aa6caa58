//! Several reads of one kind on one board, run as one read ([`Each`]). A door that holds
//! a client's pipelined reads (RESP) runs them with one look at the board — made fresh
//! once, its lock taken once, the caller's access checked once — and before the first
//! read runs it asks for the memory each read loads first ([`BoardRead::prefetch`]), so
//! their cache misses overlap instead of queueing. Each read answers exactly as it
//! would alone: this module adds no rule of its own.

use crate::access::{Action, Viewer};
use crate::board::Board;
use crate::error::BoardError;
use crate::names::BoardName;
use crate::ranking::Prefetch;

use super::BoardRead;

/// Reads of one board needing one access, answered in their order, each with its own
/// result. Built by [`Each::new`].
#[derive(Debug, Clone)]
pub struct Each<R> {
    board: BoardName,
    reads: Vec<R>,
}

impl<R: BoardRead> Each<R> {
    /// The reads as one, or `None` when there are none or they differ in the access they
    /// need (which names the board): such reads are not one caller's look at one board.
    pub fn new(reads: Vec<R>) -> Option<Self> {
        let first = reads.first()?;
        let board = first.board().clone();
        let action = first.action();
        reads
            .iter()
            .all(|r| r.action() == action)
            .then(|| Self { board, reads })
    }
}

impl<R: BoardRead> BoardRead for Each<R> {
    type Output = Vec<Result<R::Output, BoardError>>;

    fn board(&self) -> &BoardName {
        &self.board
    }

    fn action(&self) -> Action<'_> {
        // `new` made every read's action this one.
        self.reads[0].action()
    }

    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<Self::Output, BoardError> {
        for step in Prefetch::STEPS {
            for r in &self.reads {
                r.prefetch(b, now_us, step);
            }
        }
        Ok(self
            .reads
            .iter()
            .map(|r| r.read(b, now_us, viewer))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::fixture::{sample_board, T0};
    use crate::op::ReadMember;
    use crate::view::ReadOptions;
    use crate::{PeriodRef, RankStyle};

    fn rank(board: &str, member: &str, ranking: RankStyle, period: &str) -> ReadMember {
        ReadMember {
            board: BoardName::parse(board).expect("board"),
            member: member.to_owned(),
            options: ReadOptions {
                ranking,
                period: PeriodRef::parse(period),
                ..ReadOptions::default()
            },
        }
    }

    /// Reads of two boards, or none, are not one read.
    #[test]
    fn reads_of_one_board_only() {
        let r = |board, member| rank(board, member, RankStyle::Ordinal, "current");
        assert!(Each::<ReadMember>::new(Vec::new()).is_none());
        assert!(Each::new(vec![r("a", "x"), r("b", "x")]).is_none());
        let each = Each::new(vec![r("a", "x"), r("a", "y")]).expect("one board");
        assert_eq!((each.board().as_str(), each.reads.len()), ("a", 2));
    }

    /// Each read of a batch answers what it answers alone, for every viewer: members
    /// ranked, tied, hidden, absent, named twice, in the current period, a past one and
    /// one not kept.
    #[test]
    fn each_read_answers_as_alone() {
        let mut b = sample_board(7);
        assert_eq!(b.hide("cid", T0 + 6), Ok(true));
        let now = T0 + 7;
        let mut reads = Vec::new();
        for member in ["ann", "bob", "cid", "dan", "eve", "zed", "ann"] {
            for style in [RankStyle::Ordinal, RankStyle::Competition, RankStyle::Dense] {
                for period in ["current", "2026-11-21", "2026-11-01"] {
                    reads.push(rank("lb", member, style, period));
                }
            }
        }
        let each = Each::new(reads.clone()).expect("one board");
        for viewer in [
            Viewer::Everyone,
            Viewer::Admin,
            Viewer::Member("cid".into()),
        ] {
            let together = each.read(&b, now, &viewer).expect("read");
            let alone: Vec<_> = reads.iter().map(|r| r.read(&b, now, &viewer)).collect();
            assert_eq!(format!("{together:?}"), format!("{alone:?}"), "{viewer:?}");
        }
    }
}
