//! A board's grants (docs/SPEC.md §16, [`crate::rewards`]): the periods whose close owes
//! them, the grants one close makes — from the visible ordinal ranks of the period, or of
//! each cohort — and the claims of them.
//!
//! A period's close is its end and grace (on a board without a reset, `closes_at` and
//! grace). Its grants are made by the log's close step ([`Board::close_step`]), at that
//! step's instant, with the rows in force then: an operation that could change them — a
//! patch, a hide, a removal — first settles the closes due at its own instant
//! ([`Board::settle_grants`]), so every replay and every node decides alike. A period
//! that retention drops before its close step is granted as it is dropped.

use super::Board;
use crate::calendar::{Period, Reset};
use crate::error::BoardError;
use crate::ranking::RankStyle;
use crate::rewards::{
    grant_id, plan, ClaimRefused, Grant, GrantState, PeriodGrants, RewardRow, Rewards,
    MAX_GRANTS_PER_PERIOD,
};

impl Board {
    /// The board's grants.
    pub fn rewards(&self) -> &Rewards {
        &self.rewards
    }

    /// Puts the board's grants in place (snapshot loading).
    pub fn restore_rewards(&mut self, rewards: Rewards) {
        self.rewards = rewards;
    }

    /// When `period` closes for its rewards: its end and the grace, or on a board without
    /// a reset `closes_at` and the grace (never without one).
    pub fn reward_close_us(&self, period: &Period) -> Option<i64> {
        let grace = self.config.settings.grace_us();
        let end = if self.config.reset == Reset::Never {
            self.config.settings.entry.closes_at?
        } else {
            period.end_us
        };
        Some(end.saturating_add(grace))
    }

    /// Whether `period`'s close owes grants at `now_us`: the board has rows, the close
    /// came after the board's grants were last settled (or its rows were set), by `now_us`,
    /// and the period has none yet.
    fn owes_grants(&self, period: &Period, now_us: i64) -> bool {
        !self.rewards.periods.contains_key(&period.start_us)
            && self
                .reward_close_us(period)
                .is_some_and(|c| c > self.rewards.settled_us && c <= now_us)
    }

    /// Whether `period`'s close will still make grants (it has entries, the board rows, and
    /// its close came after the rows were set): what a post of its close waits for.
    pub fn grants_pending(&self, period: &Period) -> bool {
        !self.config.settings.rewards.is_empty()
            && self.periods.contains_key(&period.start_us)
            && self.owes_grants(period, i64::MAX)
    }

    /// The oldest period whose grants are due at `now_us`.
    pub fn grants_due(&self, now_us: i64) -> Option<Period> {
        if self.config.settings.rewards.is_empty() {
            return None;
        }
        self.periods
            .values()
            .map(|(p, _)| p)
            .find(|p| self.owes_grants(p, now_us))
            .cloned()
    }

    /// Makes every grant due at `at_us` that no league close before it holds back: what an
    /// operation that could change them does first.
    pub fn settle_grants(&mut self, at_us: i64) {
        while let Some(period) = self.grants_due(at_us) {
            if self
                .close_due(at_us)
                .is_some_and(|l| l.start_us <= period.start_us)
            {
                return;
            }
            self.grant(&period, at_us);
        }
    }

    /// Rows in force now set at `at_us` where the board had none: closes before then owe
    /// nothing (they closed with no rows).
    pub(super) fn rows_set(&mut self, had_rows: bool, at_us: i64) {
        if !had_rows && !self.config.settings.rewards.is_empty() {
            self.rewards.settled_us = self.rewards.settled_us.max(at_us);
        }
    }

    /// Makes `period`'s grants at `at_us` (see the module docs).
    pub(super) fn grant(&mut self, period: &Period, at_us: i64) {
        let rows = self.config.settings.rewards.clone();
        let ttl_us = self.config.settings.reward_ttl_us();
        let mut out = PeriodGrants {
            period: period.id.clone(),
            ..PeriodGrants::default()
        };
        let mut pay = |member: &str, rank: u64, row: &RewardRow, cohort| {
            out.grants.push(Grant {
                cohort,
                member: member.to_owned(),
                rank,
                reward: row.reward.clone(),
                amount: row.amount,
                granted_at_us: at_us,
                expires_at_us: at_us.saturating_add(ttl_us),
                claimed_at_us: None,
                claimed_by: None,
            });
        };
        if let Some((_, ranking)) = self.periods.get_mut(&period.start_us) {
            // A close step replayed from the log may find the index deferred.
            ranking.rebuild_index();
        }
        let ranking = self.periods.get(&period.start_us).map(|(_, r)| r);
        let seats = self.seats.get(&period.start_us);
        let mut made = 0usize;
        let mut cut = 0u64;
        match (ranking, self.config.cohort_size, seats) {
            (Some(ranking), Some(size), Some(seats)) => {
                for (place, _) in seats.cohorts.list(size, None) {
                    let mut members = seats.cohorts.members(place, size);
                    if !self.hidden.is_empty() {
                        members.retain(|m| !self.hidden.contains_key(*m));
                    }
                    let order = ranking.order_among(&members);
                    let tier = self.config.league.as_ref().map(|l| l.name(place.tier));
                    for (first, last, row) in plan(&rows, order.len() as u64, tier) {
                        for rank in first..=last {
                            if made >= MAX_GRANTS_PER_PERIOD {
                                cut += last - rank + 1;
                                break;
                            }
                            let at = (tier.map(str::to_owned), place.cohort);
                            pay(
                                members[order[(rank - 1) as usize]],
                                rank,
                                &rows[row],
                                Some(at),
                            );
                            made += 1;
                        }
                    }
                }
            }
            (Some(ranking), None, _) => {
                let view = ranking.view(None);
                for (first, last, row) in plan(&rows, view.len(), None) {
                    // Past the limit only the count matters: no entries read.
                    let count = (last - first + 1) as usize;
                    let take = count.min(MAX_GRANTS_PER_PERIOD - made);
                    for (i, e) in view
                        .page(first - 1, take, RankStyle::Ordinal)
                        .iter()
                        .enumerate()
                    {
                        pay(&e.member, first + i as u64, &rows[row], None);
                    }
                    made += take;
                    cut += (count - take) as u64;
                }
            }
            // No entries, or a cohort board where nobody took a seat.
            _ => {}
        }
        out.cut = cut;
        self.keep_grants(period, out);
    }

    fn keep_grants(&mut self, period: &Period, grants: PeriodGrants) {
        if let Some(close) = self.reward_close_us(period) {
            self.rewards.settled_us = self.rewards.settled_us.max(close);
        }
        self.rewards.insert(period.start_us, grants);
    }

    /// Before periods below `floor` are dropped at `at_us`: the grants they still owe by
    /// then, made as they go; grants of dropped periods kept while any may be claimed.
    pub(super) fn grant_before_dropping(&mut self, floor: i64, at_us: i64) {
        if !self.config.settings.rewards.is_empty() {
            let owed: Vec<Period> = self
                .periods
                .range(..floor)
                .map(|(_, (p, _))| p)
                .filter(|p| !self.rewards.periods.contains_key(&p.start_us))
                .filter(|p| {
                    self.reward_close_us(p)
                        .is_some_and(|c| c > self.rewards.settled_us)
                })
                .cloned()
                .collect();
            for p in owed {
                self.grant(&p, at_us);
            }
        }
        self.rewards.drop_spent(floor, at_us);
    }

    /// Claims grant `n` of the period `period` (its id) on this board (named `name`) for
    /// `member` at `at_us` by `by`, the closes due by then made first: the grant, claimed.
    /// An unknown grant or another member's is `reward_not_found`, one claimed before
    /// `already_claimed` (carrying it), one at or past its `expires_at` `reward_expired`.
    pub fn claim(
        &mut self,
        name: &str,
        (period, n): (&str, u64),
        member: &str,
        by: &str,
        at_us: i64,
    ) -> Result<GrantState, BoardError> {
        self.settle_grants(at_us);
        let claimed = match self.rewards.period_mut(period) {
            Some(grants) => grants.claim(n, member, by, at_us).cloned(),
            None => Err(ClaimRefused::NotFound),
        };
        let state = |grant| GrantState::new(name, period, n, grant);
        claimed.map(state).map_err(|refused| match refused {
            ClaimRefused::NotFound => BoardError::RewardNotFound {
                id: grant_id(name, period, n),
                member: member.to_owned(),
            },
            ClaimRefused::Claimed(grant) => BoardError::AlreadyClaimed(Box::new(state(*grant))),
            ClaimRefused::Expired(expired_at_us) => BoardError::RewardExpired {
                id: grant_id(name, period, n),
                expired_at_us,
            },
        })
    }
}
