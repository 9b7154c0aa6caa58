//! Rewards (docs/SPEC.md §16): the rows a board pays by, and the grants a period's close
//! makes from them.
//!
//! A row names ordinal ranks `from..=to`, or the first ⌈P·n/100⌉ of `n` entries
//! (`top_percent`, P in hundredths here so the arithmetic is exact integers), and on a
//! league board may be limited to one tier. A member gets the first row it matches. The
//! close of a period decides its grants once, at apply, from the logged close step
//! ([`plan`] then the board's standings): each group — the whole period, or each cohort
//! by tier then number — in rank order, at most [`MAX_GRANTS_PER_PERIOD`], the rest
//! counted as `cut`. A grant is claimed at most once ([`PeriodGrants::claim`]).

use serde::{Deserialize, Serialize};

use crate::error::BoardError;
use crate::league::League;

pub mod grant;

pub use grant::{
    grant_id, parse_grant_id, ClaimRefused, Grant, GrantState, GrantStatus, GrantStep, Making,
    PeriodGrants, Rewards,
};

/// Most reward rows a board carries.
pub const MAX_REWARD_ROWS: usize = 50;
/// Most grants one period's close makes (docs/SPEC.md §16): past it rows are cut in
/// (tier, cohort, rank) order, and the period's rewards say how many were.
pub const MAX_GRANTS_PER_PERIOD: usize = 100_000;
/// How long a grant may be claimed when the board does not say: 30 days, in seconds.
pub const DEFAULT_REWARD_TTL_S: u32 = 30 * 86_400;
/// Longest `reward_ttl`, seconds: ten years.
pub const MAX_REWARD_TTL_S: u32 = 3_650 * 86_400;
/// Largest `amount` of a row.
pub const MAX_REWARD_AMOUNT: u64 = 1_000_000_000;
/// Longest reward id, bytes.
pub const MAX_REWARD_ID_BYTES: usize = 64;
/// A reward id as a regular expression (for the OpenAPI document).
pub const REWARD_ID_PATTERN: &str = "^[A-Za-z0-9_.:-]{1,64}$";
/// Highest rank a row names: ranks count entries, which a board holds fewer of.
pub const MAX_REWARD_RANK: u64 = 1_000_000_000;

/// One reward row. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardRow {
    /// The first ordinal rank it pays, with `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<u64>,
    /// The last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<u64>,
    /// Or the top share of the entries, in hundredths of a percent (1 to 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_hundredths: Option<u32>,
    /// The reward's id, `[A-Za-z0-9_.:-]{1,64}`.
    pub reward: String,
    /// How many of it, at least 1.
    pub amount: u64,
    /// On a league board: the one tier it pays in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
}

/// Whether `id` is a reward id: `[A-Za-z0-9_.:-]{1,64}`.
fn is_reward_id(id: &str) -> bool {
    (1..=MAX_REWARD_ID_BYTES).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

impl RewardRow {
    /// The ranks it pays among `n` entries: `(first, last)`, empty when `last < first`.
    fn span(&self, n: u64) -> (u64, u64) {
        match (self.from, self.to, self.top_hundredths) {
            (Some(from), Some(to), _) => (from, to.min(n)),
            (_, _, Some(p)) => {
                let last = (u128::from(p) * u128::from(n)).div_ceil(10_000) as u64;
                (1, last)
            }
            _ => (1, 0),
        }
    }

    /// Checks the row against the board's league (`None`: no league).
    fn validate(&self, league: Option<&League>) -> Result<(), BoardError> {
        let bad = |why: String| Err(BoardError::InvalidConfig(why));
        let rule = |why: String| Err(BoardError::ConfigRule(why));
        if !is_reward_id(&self.reward) {
            return bad(format!(
                "reward {:?} is not 1 to {MAX_REWARD_ID_BYTES} of A-Z, a-z, 0-9, _, ., : and -",
                self.reward
            ));
        }
        if !(1..=MAX_REWARD_AMOUNT).contains(&self.amount) {
            return bad(format!(
                "amount {} is outside 1..={MAX_REWARD_AMOUNT}",
                self.amount
            ));
        }
        match (self.from, self.to, self.top_hundredths) {
            (Some(from), Some(to), None) => {
                for (name, r) in [("from", from), ("to", to)] {
                    if !(1..=MAX_REWARD_RANK).contains(&r) {
                        return bad(format!("{name} {r} is outside 1..={MAX_REWARD_RANK}"));
                    }
                }
                if from > to {
                    return rule(format!("a reward row's from {from} is after its to {to}"));
                }
            }
            (None, None, Some(p)) => {
                if !(1..=10_000).contains(&p) {
                    return bad("top_percent is over 0 and at most 100".into());
                }
            }
            _ => {
                return rule(
                    "a reward row names ranks (from and to) or a share (top_percent), \
                     one of the two"
                        .into(),
                )
            }
        }
        if let Some(tier) = &self.tier {
            let Some(league) = league else {
                return rule(format!(
                    "reward row tier {tier:?}: only a league board has tiers"
                ));
            };
            if league.index(tier).is_none() {
                return rule(format!(
                    "reward row tier {tier:?} is not a tier of the league"
                ));
            }
        }
        Ok(())
    }
}

/// Checks a board's reward rows and `reward_ttl` (seconds) against its league.
pub fn validate_rewards(
    rows: &[RewardRow],
    ttl_s: Option<u32>,
    league: Option<&League>,
) -> Result<(), BoardError> {
    if rows.len() > MAX_REWARD_ROWS {
        return Err(BoardError::InvalidConfig(format!(
            "{} reward rows are over the limit of {MAX_REWARD_ROWS}",
            rows.len()
        )));
    }
    if let Some(ttl) = ttl_s {
        if !(1..=MAX_REWARD_TTL_S).contains(&ttl) {
            return Err(BoardError::InvalidConfig(format!(
                "reward_ttl {ttl} is outside 1..={MAX_REWARD_TTL_S} seconds"
            )));
        }
    }
    rows.iter().try_for_each(|r| r.validate(league))
}

/// The rows' verdict for a group of `n` entries in tier `tier` (its name; `None` off a
/// league): runs of ranks `(first, last, row)` in rank order, each rank in the first row
/// that matches it, ranks no row matches left out.
pub fn plan(rows: &[RewardRow], n: u64, tier: Option<&str>) -> Vec<(u64, u64, usize)> {
    let spans: Vec<(u64, u64, usize)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.tier.is_none() || r.tier.as_deref() == tier)
        .map(|(i, r)| {
            let (a, b) = r.span(n);
            (a, b.min(n), i)
        })
        .filter(|(a, b, _)| a <= b)
        .collect();
    let mut cuts: Vec<u64> = spans.iter().flat_map(|&(a, b, _)| [a, b + 1]).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut runs: Vec<(u64, u64, usize)> = Vec::new();
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1] - 1);
        // The first row covering this piece covers all of it: pieces end at every edge.
        if let Some(&(_, _, row)) = spans.iter().find(|&&(s, e, _)| s <= a && a <= e) {
            match runs.last_mut() {
                Some(last) if last.2 == row && last.1 + 1 == a => last.1 = b,
                _ => runs.push((a, b, row)),
            }
        }
    }
    runs
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A row paying ranks `from..=to` one `reward` each.
    pub(crate) fn ranks(from: u64, to: u64, reward: &str) -> RewardRow {
        RewardRow {
            from: Some(from),
            to: Some(to),
            top_hundredths: None,
            reward: reward.into(),
            amount: 1,
            tier: None,
        }
    }

    fn top(hundredths: u32, reward: &str) -> RewardRow {
        RewardRow {
            from: None,
            to: None,
            top_hundredths: Some(hundredths),
            reward: reward.into(),
            amount: 1,
            tier: None,
        }
    }

    #[test]
    fn a_rank_takes_the_first_row_that_matches_it() {
        let rows = [
            ranks(1, 1, "gold"),
            ranks(1, 3, "silver"),
            top(5_000, "pin"),
        ];
        assert_eq!(plan(&rows, 10, None), [(1, 1, 0), (2, 3, 1), (4, 5, 2)]);
        // Fewer entries than the rows name: ranks past n pay nothing.
        assert_eq!(plan(&rows, 2, None), [(1, 1, 0), (2, 2, 1)]);
        assert!(plan(&rows, 0, None).is_empty());
    }

    #[test]
    fn top_percent_is_the_exact_ceiling() {
        // ⌈P·n/100⌉ in integers: 33.33% of 3 is 0.9999 → 1; 10% of 11 is 1.1 → 2.
        assert_eq!(plan(&[top(3_333, "a")], 3, None), [(1, 1, 0)]);
        assert_eq!(plan(&[top(1_000, "a")], 11, None), [(1, 2, 0)]);
        assert_eq!(plan(&[top(10_000, "a")], u64::MAX / 20_000, None).len(), 1);
        assert_eq!(plan(&[top(1, "a")], 10_000, None), [(1, 1, 0)]);
    }

    #[test]
    fn tiered_rows_pay_their_tier_alone() {
        let mut gold = ranks(1, 2, "crown");
        gold.tier = Some("gold".into());
        let rows = [gold, ranks(1, 1, "cup")];
        assert_eq!(plan(&rows, 5, Some("gold")), [(1, 2, 0)]);
        assert_eq!(plan(&rows, 5, Some("bronze")), [(1, 1, 1)]);
    }

    #[test]
    fn a_grant_is_claimed_once_by_its_member_before_it_expires() {
        let mut p = PeriodGrants {
            period: "2026-12-01".into(),
            grants: vec![Grant {
                member: "ann".into(),
                rank: 1,
                reward: "gold".into(),
                amount: 1,
                granted_at_us: 10,
                expires_at_us: 100,
                claimed_at_us: None,
                claimed_by: None,
                cohort: None,
            }],
            cut: 0,
        };
        assert_eq!(p.claim(1, "bob", "k", 20), Err(ClaimRefused::NotFound));
        assert_eq!(p.claim(2, "ann", "k", 20), Err(ClaimRefused::NotFound));
        assert_eq!(p.claim(0, "ann", "k", 20), Err(ClaimRefused::NotFound));
        assert_eq!(
            p.clone().claim(1, "ann", "k", 100),
            Err(ClaimRefused::Expired(100))
        );
        let g = p.claim(1, "ann", "k", 99).expect("claimed").clone();
        assert_eq!(
            (g.claimed_at_us, g.claimed_by.as_deref()),
            (Some(99), Some("k"))
        );
        assert_eq!(
            p.claim(1, "ann", "j", 50),
            Err(ClaimRefused::Claimed(Box::new(g)))
        );
    }

    #[test]
    fn rows_are_checked() {
        let league = League {
            tiers: vec!["bronze".into(), "gold".into()],
            promote: 1,
            demote: 1,
        };
        let ok = ranks(1, 3, "gold.coin:v2");
        assert!(validate_rewards(std::slice::from_ref(&ok), Some(60), None).is_ok());
        let mut tiered = ok.clone();
        tiered.tier = Some("gold".into());
        assert!(validate_rewards(std::slice::from_ref(&tiered), None, Some(&league)).is_ok());
        let mut cases: Vec<(Vec<RewardRow>, Option<u32>)> = vec![
            (vec![ok.clone(); MAX_REWARD_ROWS + 1], None),
            (vec![ok.clone()], Some(0)),
            (vec![ok.clone()], Some(MAX_REWARD_TTL_S + 1)),
            (vec![ranks(3, 1, "a")], None),
            (vec![ranks(0, 1, "a")], None),
            (vec![top(0, "a")], None),
            (vec![top(10_001, "a")], None),
            (vec![ranks(1, 1, "")], None),
            (vec![ranks(1, 1, "no spaces")], None),
            (vec![tiered.clone()], None),
        ];
        let mut both = ok.clone();
        both.top_hundredths = Some(100);
        cases.push((vec![both], None));
        let mut zero = ok.clone();
        zero.amount = 0;
        cases.push((vec![zero], None));
        for (rows, ttl) in cases {
            let err = validate_rewards(&rows, ttl, None).expect_err("refused");
            assert_eq!(
                err.code(),
                crate::error::ErrorCode::InvalidConfig,
                "{rows:?} {ttl:?}"
            );
        }
        let mut other = tiered;
        other.tier = Some("platinum".into());
        assert!(validate_rewards(&[other], None, Some(&league)).is_err());
    }

    /// The model: each rank from 1 to n in the first row that names it, the share's last
    /// rank found by counting up (the least k with k·10,000 ≥ P·n).
    fn model(rows: &[RewardRow], n: u64) -> Vec<(u64, usize)> {
        (1..=n)
            .filter_map(|rank| {
                rows.iter()
                    .position(|r| match (r.from, r.to, r.top_hundredths) {
                        (Some(a), Some(b), _) => a <= rank && rank <= b,
                        (_, _, Some(p)) => {
                            let mut last = 0;
                            while last * 10_000 < u64::from(p) * n {
                                last += 1;
                            }
                            rank <= last
                        }
                        _ => false,
                    })
                    .map(|row| (rank, row))
            })
            .collect()
    }

    fn any_row() -> impl proptest::strategy::Strategy<Value = RewardRow> {
        use proptest::prelude::*;
        prop_oneof![
            (1u64..30, 0u64..10).prop_map(|(from, len)| ranks(from, from + len, "r")),
            (1u32..=10_000).prop_map(|p| top(p, "r")),
        ]
    }

    proptest::proptest! {
        #[test]
        fn plan_pays_each_rank_its_first_row(
            rows in proptest::collection::vec(any_row(), 0..6),
            n in 0u64..60,
        ) {
            let expanded: Vec<(u64, usize)> = plan(&rows, n, None)
                .into_iter()
                .flat_map(|(a, b, row)| (a..=b).map(move |rank| (rank, row)))
                .collect();
            proptest::prop_assert_eq!(expanded, model(&rows, n));
        }
    }

    #[test]
    fn grant_ids_round_trip() {
        let id = grant_id("season-1", "2026-W49", 12);
        assert_eq!(parse_grant_id(&id), Some(("season-1", "2026-W49", 12)));
        for bad in ["a", "a:b", "a:b:0", "a::1", "a:b:x", "a:b:-1"] {
            assert_eq!(parse_grant_id(bad), None, "{bad}");
        }
    }
}
