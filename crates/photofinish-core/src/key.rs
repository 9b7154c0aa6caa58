//! The order key: the strict total order of docs/SPEC.md §2 as a plain tuple, never a packed float.
//!
//! A [`Key`] is `(nscore, reached_at_us, seq)` compared lexicographically, smaller first. The
//! score is *normalized* by the board's [`Order`] so that "better" always means "smaller":
//! ascending boards store the score itself, descending boards store `!score`, which maps the
//! whole i64 range onto itself in reverse order (`!i64::MAX == i64::MIN`). So the index never
//! needs to know the board's order, and no score is ever lost.

use crate::config::Order;

/// The total-order key of one entry. Smaller keys rank better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The score, normalized by [`Order::normalize`]: smaller is better.
    pub nscore: i64,
    /// When the entry first reached its score, µs since the Unix epoch (UTC).
    pub reached_at_us: i64,
    /// The server sequence number of the write that set the score.
    pub seq: u64,
}

impl Key {
    /// The smallest key with this normalized score: every entry with the score is `>=` it.
    pub fn first_of_score(nscore: i64) -> Key {
        Key {
            nscore,
            reached_at_us: i64::MIN,
            seq: 0,
        }
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
            reached_at_us: i64::MIN,
            seq: 0,
        };
        assert!(Key::first_of_score(5) <= k);
        assert!(
            Key::first_of_score(6)
                > Key {
                    nscore: 5,
                    reached_at_us: i64::MAX,
                    seq: u64::MAX
                }
        );
    }
}
