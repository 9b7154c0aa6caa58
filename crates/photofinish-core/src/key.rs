//! The order key: the strict total order of docs/SPEC.md §2 as a plain tuple, never a packed float.
//!
//! A [`Key`] is `(nscore, tail, reached_at_us, seq)` compared lexicographically, smaller
//! first (`tail`: the other columns of a board of several, docs/SPEC.md §13). The
//! score is *normalized* by the board's [`Order`] so that "better" always means "smaller":
//! ascending boards store the score itself, descending boards store `!score`, which maps the
//! whole i64 range onto itself in reverse order (`!i64::MAX == i64::MIN`). So the index never
//! needs to know the board's order, and no score is ever lost.

use std::fmt::Debug;
use std::hash::Hash;

use crate::scoring::Order;

/// Columns a board may rank by (docs/SPEC.md §13).
pub const MAX_COLUMNS: usize = 5;

/// What follows the first column in a key: nothing on a one-column board (`()`, which
/// takes no byte and no comparison, so one-column boards keep their record and speed), or
/// the normalized columns 2 to 5 ([`Cols`], unused ones 0 for every entry) on a board of
/// more. Compared after the first column, before `reached_at`.
pub trait Tail: Copy + Ord + Eq + Hash + Default + Debug + Send + Sync + 'static {}
impl Tail for () {}
/// The tail of a board of 2+ columns: normalized columns 2..=5, unused ones 0.
pub type Cols = [i64; MAX_COLUMNS - 1];
impl Tail for Cols {}

/// The total-order key of one entry. Smaller keys rank better. Fields compare in order:
/// the first column, the other columns, then `reached_at`, then the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key<T: Tail = ()> {
    /// The first column's score, normalized by [`Order::normalize`]: smaller is better.
    pub nscore: i64,
    /// The other columns, each normalized by its own order.
    pub tail: T,
    /// When the entry first reached its score, µs since the Unix epoch (UTC).
    pub reached_at_us: i64,
    /// The server sequence number of the write that set the score.
    pub seq: u64,
}

/// What ties share: every column of a key (the whole normalized tuple). Competition and
/// dense ranks count entries and distinct values of this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Score<T: Tail = ()> {
    /// The first column, normalized.
    pub nscore: i64,
    /// The other columns, normalized.
    pub tail: T,
}

impl<T: Tail> Score<T> {
    /// A score of the first column alone, the other columns 0 (the fill of an empty node).
    pub fn of(nscore: i64) -> Self {
        Self {
            nscore,
            tail: T::default(),
        }
    }
}

impl<T: Tail> Key<T> {
    /// The tuple this key ranks by.
    #[inline]
    pub fn score(&self) -> Score<T> {
        Score {
            nscore: self.nscore,
            tail: self.tail,
        }
    }

    /// The smallest key with this score: every entry with the score is `>=` it.
    pub fn first_of(score: Score<T>) -> Key<T> {
        Key {
            nscore: score.nscore,
            tail: score.tail,
            reached_at_us: i64::MIN,
            seq: 0,
        }
    }

    /// A key above every entry with this score (and below every worse score): the
    /// entries below it are those with this score or a better one.
    pub fn last_of(score: Score<T>) -> Key<T> {
        Key {
            nscore: score.nscore,
            tail: score.tail,
            reached_at_us: i64::MAX,
            seq: u64::MAX,
        }
    }
}

impl Key {
    /// The smallest key with this normalized score (a one-column board).
    pub fn first_of_score(nscore: i64) -> Key {
        Key::first_of(Score::of(nscore))
    }
}

impl Order {
    /// Maps a score to its normalized form, where smaller is better. An involution.
    #[inline]
    pub fn normalize(self, score: i64) -> i64 {
        match self {
            Order::Asc => score,
            Order::Desc => !score,
        }
    }

    /// Inverse of [`Order::normalize`] (the same function: `!` is its own inverse).
    #[inline]
    pub fn denormalize(self, nscore: i64) -> i64 {
        self.normalize(nscore)
    }

    /// Whether `new` is strictly better than `old` under this order.
    #[inline]
    pub fn is_better(self, new: i64, old: i64) -> bool {
        match self {
            Order::Asc => new < old,
            Order::Desc => new > old,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn desc_normalization_reverses_the_whole_range() {
        let scores = [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX];
        for w in scores.windows(2) {
            assert!(Order::Desc.normalize(w[0]) > Order::Desc.normalize(w[1]));
            assert!(Order::Asc.normalize(w[0]) < Order::Asc.normalize(w[1]));
        }
        for s in scores {
            assert_eq!(Order::Desc.denormalize(Order::Desc.normalize(s)), s);
        }
    }

    #[test]
    fn first_of_score_is_below_every_key_with_that_score() {
        let k = Key {
            nscore: 5,
            tail: (),
            reached_at_us: i64::MIN,
            seq: 0,
        };
        assert!(Key::first_of_score(5) <= k);
        assert!(
            Key::first_of_score(6)
                > Key {
                    nscore: 5,
                    tail: (),
                    reached_at_us: i64::MAX,
                    seq: u64::MAX
                }
        );
    }
}
