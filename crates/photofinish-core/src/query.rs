//! The questions game backends ask (docs/SPEC.md §10), in backend-neutral form: a set of
//! members at once (friends), the rank a score would get, the entries at given ranks and
//! percentiles (tiers), and a member's `top_percent`. The rules that turn a percentage
//! into a rank and a rank into a percentage live here once; both backends answer in these
//! shapes, and the Redis scripts mirror [`Percent::rank`] exactly (same integer steps).

use crate::calendar::Period;
use crate::columns::{ColumnNames, Scores};
use crate::ranking::Entry;

/// Most members one `members:query` names (docs/SPEC.md §10).
pub const MAX_QUERY_MEMBERS: usize = 1_000;
/// Most ranks, and most percentages, in one `thresholds` question (each list).
pub const MAX_THRESHOLDS: usize = 100;
/// Most boards one cross-board member question reads.
pub const MAX_MEMBER_BOARDS: usize = 1_000;
/// Decimal places a percentage may carry.
pub const PERCENT_DECIMALS: u32 = 4;
/// The texts [`Percent::parse`] takes, as a regular expression (for the OpenAPI document).
pub const PERCENT_PATTERN: &str = r"(100(\.0{1,4})?|0{0,2}[1-9](\.[0-9]{1,4})?|0?[1-9][0-9](\.[0-9]{1,4})?|0{1,3}\.([1-9][0-9]{0,3}|0[1-9][0-9]{0,2}|00[1-9][0-9]?|000[1-9]))";
/// Units of a [`Percent`] in one percent.
const UNITS_PER_PERCENT: u64 = 10u64.pow(PERCENT_DECIMALS);
/// Units in 100 %.
pub const FULL_PERCENT_UNITS: u64 = 100 * UNITS_PER_PERCENT;

/// A percentage in (0, 100] with at most [`PERCENT_DECIMALS`] decimals, held exactly as a
/// count of 10⁻⁴ percent, so the rank it names is exact for any board size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Percent(u32);

impl Percent {
    /// Parses `"1"`, `"0.5"`, `"12.3456"`: a decimal in (0, 100] with at most four decimal
    /// places and at most three integer digits (`"050"` is 50). The error says what is
    /// wrong. [`PERCENT_PATTERN`] describes exactly the texts it takes.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "top_percent {text:?} is not a number in (0, 100] with at most \
                 {PERCENT_DECIMALS} decimals"
            )
        };
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !digits(int) || !digits(frac) || text.ends_with('.') {
            return Err(bad());
        }
        if frac.len() > PERCENT_DECIMALS as usize || int.len() > 3 {
            return Err(bad());
        }
        let whole: u64 = int.parse().map_err(|_| bad())?;
        let mut fraction: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| bad())?
        };
        for _ in frac.len()..PERCENT_DECIMALS as usize {
            fraction *= 10;
        }
        let units = whole * UNITS_PER_PERCENT + fraction;
        if units == 0 || units > FULL_PERCENT_UNITS {
            return Err(bad());
        }
        Ok(Percent(units as u32))
    }

    /// The count of 10⁻⁴ percent.
    pub fn units(self) -> u32 {
        self.0
    }

    /// The percentage as a number (for answers).
    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / UNITS_PER_PERCENT as f64
    }

    /// The ordinal rank that bounds the top `self` of `total` entries:
    /// `max(1, ceil(total · p / 100))` (docs/SPEC.md §10), exact.
    pub fn rank(self, total: u64) -> u64 {
        let n = u128::from(total) * u128::from(self.0);
        let r = n.div_ceil(u128::from(FULL_PERCENT_UNITS));
        u64::try_from(r).unwrap_or(u64::MAX).max(1)
    }
}

/// `100 · ordinal / total`, rounded half up to two decimals: where a member stands as a
/// percentage of its period (docs/SPEC.md §10), whatever rank style was asked.
pub fn top_percent(ordinal: u64, total: u64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    // Hundredths of a percent: round(10_000 · ordinal / total), in integers.
    let hundredths = (20_000 * u128::from(ordinal) + u128::from(total)) / (2 * u128::from(total));
    hundredths as f64 / 100.0
}

/// `names` (members, boards) with repeats dropped, first occurrences kept in order: a name
/// asked twice counts once.
pub fn distinct_names<T: Eq + std::hash::Hash + Clone>(names: Vec<T>) -> Vec<T> {
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .collect()
}

/// Entries of a set of members in one period (`members:query`).
#[derive(Debug, Clone)]
pub struct MemberSet {
    /// Entries in the period.
    pub total: u64,
    /// The period read.
    pub period: Period,
    /// The members found, in rank order, ranked in the style asked.
    pub entries: Vec<Entry>,
    /// The members asked for that the period does not hold, in request order.
    pub missing: Vec<String>,
    /// The board's column names, on a board of several (to name each score).
    pub columns: ColumnNames,
}

/// The rank a member reaching a score now would get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoreRank {
    /// The scores asked about, one per column.
    pub scores: Scores,
    /// The rank in the style asked (ordinal: after everyone already at the score).
    pub rank: u64,
    /// Entries in the period now.
    pub total: u64,
    /// The period read.
    pub period: Period,
    /// The board's column names, on a board of several (to name each score).
    pub columns: ColumnNames,
}

/// Which ordinal ranks a `thresholds` question asks for: ranks, then percentages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThresholdQuery {
    /// Ordinal ranks, from 1, in request order.
    pub ranks: Vec<u64>,
    /// Percentages, in request order.
    pub percents: Vec<Percent>,
}

impl ThresholdQuery {
    /// The ordinal rank of each threshold in answer order, for a period of `total`.
    pub fn ordinal_ranks(&self, total: u64) -> Vec<u64> {
        let by_percent = self.percents.iter().map(|p| p.rank(total));
        self.ranks.iter().copied().chain(by_percent).collect()
    }

    /// How many thresholds the question asks for.
    pub fn len(&self) -> usize {
        self.ranks.len() + self.percents.len()
    }

    /// Whether it asks for none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The answer's thresholds from the entry at each ordinal rank (`at`, in
    /// [`Self::ordinal_ranks`] order, `None` past the end).
    pub fn answer(&self, total: u64, at: Vec<Option<(String, Scores)>>) -> Vec<Threshold> {
        let percents = std::iter::repeat_n(None, self.ranks.len())
            .chain(self.percents.iter().copied().map(Some));
        self.ordinal_ranks(total)
            .into_iter()
            .zip(percents)
            .zip(at)
            .map(|((rank, top_percent), entry)| Threshold {
                rank,
                top_percent,
                entry,
            })
            .collect()
    }
}

/// One threshold: the entry at an ordinal rank.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The ordinal rank.
    pub rank: u64,
    /// The percentage it was asked as, if it was.
    pub top_percent: Option<Percent>,
    /// The member and scores there; `None` past the end.
    pub entry: Option<(String, Scores)>,
}

/// The answer to a `thresholds` question.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    /// Entries in the period.
    pub total: u64,
    /// The period read.
    pub period: Period,
    /// Ranks first, then percentages, each in request order.
    pub thresholds: Vec<Threshold>,
    /// The board's column names, on a board of several (to name each score).
    pub columns: ColumnNames,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_exactly_and_refuse_what_is_not_one() {
        assert_eq!(Percent::parse("1").expect("a percentage").units(), 10_000);
        assert_eq!(Percent::parse("0.5").expect("a percentage").units(), 5_000);
        assert_eq!(
            Percent::parse("12.3456").expect("a percentage").units(),
            123_456
        );
        assert_eq!(
            Percent::parse("100").expect("a percentage").units(),
            1_000_000
        );
        assert_eq!(Percent::parse("0.0001").expect("a percentage").units(), 1);
        for bad in [
            "", "0", "0.0", "100.0001", "101", "-1", "1.", ".5", "1e2", "0.00001", "abc", " 1",
            "1000",
        ] {
            assert!(Percent::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_percentage_names_the_ceiling_rank_and_at_least_one() {
        let p = |s| Percent::parse(s).expect("a percentage");
        assert_eq!(p("1").rank(1000), 10);
        assert_eq!(p("1").rank(1001), 11);
        assert_eq!(p("1").rank(50), 1);
        assert_eq!(p("1").rank(0), 1);
        assert_eq!(p("100").rank(7), 7);
        assert_eq!(p("33.3333").rank(3), 1);
        assert_eq!(p("33.3334").rank(3), 2);
        assert_eq!(p("0.0001").rank(u64::MAX), u64::MAX.div_ceil(1_000_000));
        assert_eq!(p("100").rank(u64::MAX), u64::MAX);
    }

    #[test]
    fn top_percent_rounds_half_up_to_hundredths() {
        assert_eq!(top_percent(1, 3), 33.33);
        assert_eq!(top_percent(2, 3), 66.67);
        assert_eq!(top_percent(1, 8), 12.5);
        assert_eq!(top_percent(1, 80_000), 0.0);
        assert_eq!(top_percent(1, 20_000), 0.01);
        assert_eq!(top_percent(5, 5), 100.0);
        assert_eq!(top_percent(0, 0), 0.0);
    }
}
