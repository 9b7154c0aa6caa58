//! Leagues (docs/SPEC.md §14, docs/competitions.md): a cohort board's tiers, which carry
//! over from period to period, and the close that moves members between them.
//!
//! A member's tier is kept board-wide (new members are in the first tier). When a period
//! closes — after its grace — each of its cohorts of `n` members who played moves its
//! ordinal ranks `1..=min(P, n)` one tier up and its last `min(D, n − min(P, n))` one tier
//! down, clamped at the top and bottom tiers; members who did not play keep their tier.
//!
//! The close is a command in the log, applied in steps of at most the members its
//! command names ([`CLOSE_STEP_MEMBERS`] by default) so that no step holds the writer
//! long; each step
//! continues where the last stopped ([`Closing`], kept in the period's seats), and a step
//! with nothing due changes nothing, so the close happens once whichever node or restart
//! logs its steps. A member that arrives in a period while an earlier one has not closed
//! waits for its cohort until that close ends (its tier is not known before), then takes
//! it in arrival order.

use serde::{Deserialize, Serialize};

use crate::error::BoardError;

/// Fewest tiers in a league.
pub const MIN_TIERS: usize = 2;
/// Most tiers in a league.
pub const MAX_TIERS: usize = 20;
/// Longest tier name, bytes.
pub const MAX_TIER_NAME_BYTES: usize = 32;
/// The most members one close step ranks by default (whole cohorts: a step ends after
/// the cohort that reaches it). Each step's command carries its own bound.
pub const CLOSE_STEP_MEMBERS: u32 = 50_000;

/// A league's config (`league` in a board's config): its tiers, lowest first, and how
/// many of each cohort move up and down at each close.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct League {
    /// Tier names, lowest first: new members start in the first.
    pub tiers: Vec<String>,
    /// Ordinal ranks `1..=promote` of each cohort move one tier up.
    pub promote: u32,
    /// The last `demote` of each cohort move one tier down.
    pub demote: u32,
}

/// Whether `name` is a tier name: `[a-z0-9_-]{1,32}`.
fn is_tier_name(name: &str) -> bool {
    (1..=MAX_TIER_NAME_BYTES).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

impl League {
    /// Checks the league against the board it is on: 2–20 distinct tier names,
    /// `promote + demote <= cohort_size`, and a board with cohorts and a reset.
    pub fn validate(&self, cohort_size: Option<u32>, resets: bool) -> Result<(), BoardError> {
        let bad = |why: String| Err(BoardError::InvalidConfig(why));
        let rule = |why: String| Err(BoardError::ConfigRule(why));
        if !(MIN_TIERS..=MAX_TIERS).contains(&self.tiers.len()) {
            return bad(format!(
                "a league has {MIN_TIERS} to {MAX_TIERS} tiers, not {}",
                self.tiers.len()
            ));
        }
        for (i, t) in self.tiers.iter().enumerate() {
            if !is_tier_name(t) {
                return bad(format!(
                    "tier name {t:?} is not 1 to {MAX_TIER_NAME_BYTES} of a-z, 0-9, _ and -"
                ));
            }
            if self.tiers[..i].contains(t) {
                return bad(format!("tier {t:?} is named twice"));
            }
        }
        let Some(size) = cohort_size else {
            return rule("a league needs cohort_size: its tiers move cohort by cohort".into());
        };
        if !resets {
            return rule(
                "a league needs a reset schedule: its tiers move when a period closes".into(),
            );
        }
        if u64::from(self.promote) + u64::from(self.demote) > u64::from(size) {
            return rule(format!(
                "promote {} + demote {} is more than cohort_size {size}",
                self.promote, self.demote
            ));
        }
        Ok(())
    }

    /// The top tier's index.
    pub fn top(&self) -> u16 {
        (self.tiers.len().max(1) - 1) as u16
    }

    /// Tier `t`'s name (the top one's past the end).
    pub fn name(&self, t: u16) -> &str {
        let i = usize::from(t).min(self.tiers.len().saturating_sub(1));
        self.tiers.get(i).map_or("", String::as_str)
    }

    /// The index of the tier named `name`.
    pub fn index(&self, name: &str) -> Option<u16> {
        self.tiers.iter().position(|t| t == name).map(|i| i as u16)
    }

    /// The moves of one cohort of tier `tier` at a close, given the positions of its
    /// members who played in ordinal order (`ranked[0]` first): `(position, rank, to)` for
    /// each member whose tier changes.
    pub fn cohort_moves(&self, tier: u16, played: usize) -> Vec<(usize, u32, u16)> {
        let promote = (self.promote as usize).min(played);
        let demote = (self.demote as usize).min(played - promote);
        let mut out = Vec::new();
        if tier < self.top() {
            out.extend((0..promote).map(|i| (i, i as u32 + 1, tier + 1)));
        }
        if tier > 0 {
            out.extend((played - demote..played).map(|i| (i, i as u32 + 1, tier - 1)));
        }
        out
    }
}

/// A member whose tier changed at a close.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The member.
    pub member: Box<str>,
    /// Its tier in the period that closed (its cohort's).
    pub from: u16,
    /// Its tier from then on.
    pub to: u16,
    /// Its cohort in that period.
    pub cohort: u32,
    /// Its ordinal rank in the cohort.
    pub rank: u32,
}

/// A period's close as far as it went: how many of its cohorts (by tier, then number)
/// are closed, whether all are, and the moves so far in that order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Closing {
    /// Cohorts closed, counted over the tiers in order.
    pub cohorts_done: u32,
    /// Every cohort is closed.
    pub done: bool,
    /// The moves, by tier, cohort and rank.
    pub moves: Vec<Move>,
}

/// What one close step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseStep {
    /// The period it closed cohorts of (its id).
    pub period: String,
    /// That period is closed now.
    pub done: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn league(p: u32, d: u32) -> League {
        League {
            tiers: vec!["bronze".into(), "silver".into(), "gold".into()],
            promote: p,
            demote: d,
        }
    }

    #[test]
    fn moves_take_the_top_and_the_bottom_clamped_at_the_ends() {
        let l = league(2, 2);
        // A middle tier: two up, two down.
        assert_eq!(
            l.cohort_moves(1, 5),
            [(0, 1, 2), (1, 2, 2), (3, 4, 0), (4, 5, 0)]
        );
        // The bottom tier relegates nobody, the top promotes nobody.
        assert_eq!(l.cohort_moves(0, 5), [(0, 1, 1), (1, 2, 1)]);
        assert_eq!(l.cohort_moves(2, 5), [(3, 4, 1), (4, 5, 1)]);
        // Few players: promotion first, relegation from what is left.
        assert_eq!(l.cohort_moves(1, 3), [(0, 1, 2), (1, 2, 2), (2, 3, 0)]);
        assert_eq!(l.cohort_moves(1, 1), [(0, 1, 2)]);
        assert!(l.cohort_moves(1, 0).is_empty());
    }

    #[test]
    fn bad_leagues_are_invalid_config() {
        let ok = league(2, 2);
        assert!(ok.validate(Some(4), true).is_ok());
        let cases = [
            (ok.clone(), Some(3), true),
            (ok.clone(), None, true),
            (ok.clone(), Some(10), false),
            (
                League {
                    tiers: vec!["one".into()],
                    ..ok.clone()
                },
                Some(10),
                true,
            ),
            (
                League {
                    tiers: vec!["a".into(), "a".into()],
                    ..ok.clone()
                },
                Some(10),
                true,
            ),
            (
                League {
                    tiers: vec!["a".into(), "B".into()],
                    ..ok.clone()
                },
                Some(10),
                true,
            ),
            (
                League {
                    tiers: vec!["a".into(), "x".repeat(33)],
                    ..ok.clone()
                },
                Some(10),
                true,
            ),
            (
                League {
                    tiers: (0..21).map(|i| format!("t{i}")).collect(),
                    ..ok.clone()
                },
                Some(10),
                true,
            ),
        ];
        for (l, size, resets) in cases {
            let e = l.validate(size, resets).expect_err("refused");
            assert_eq!(e.code().as_str(), "invalid_config", "{l:?}");
        }
        assert_eq!(ok.index("gold"), Some(2));
        assert_eq!(ok.name(0), "bronze");
    }
}
