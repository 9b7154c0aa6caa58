//! A board's grants (docs/SPEC.md §16, [`crate::rewards`]): the periods whose close owes
//! them, the grants one close makes — from the visible ordinal ranks of the period, or of
//! each cohort — and the claims of them.
//!
//! A period's close is its end and grace (on a board without a reset, `closes_at` and
//! grace). Its grants are made by the log's close steps ([`Board::close_step`]), at the
//! first step's instant, with the rows in force then, each step going through at most
//! the members its command names (whole cohorts) and continuing where the last stopped
//! ([`Making`]); they are read once the last step made them. An operation that could
//! change them — a patch, a hide, a removal, an erase — first settles the closes due at
//! its own instant, and finishes the one being made, whole ([`Board::settle_grants`]),
//! so every replay and every node decides alike. A period that retention drops before
//! its close steps is granted as it is dropped.

use super::Board;
use crate::calendar::{Period, Reset};
use crate::error::BoardError;

use crate::ranking::RankStyle;
use crate::rewards::{
    grant_id, plan, ClaimRefused, Grant, GrantState, GrantStep, Making, RewardRow, Rewards,
    MAX_GRANTS_PER_PERIOD,
};

/// One rank a close pays: the member, its rank, the row (its index) and, on a cohort
/// board, its cohort (tier name, number).
type Paid = (String, u64, usize, Option<(Option<String>, u32)>);

/// What one step of a close pays: the ranks, how many the limit cut, where the next step
/// begins and whether this was the last.
struct PaidStep {
    paid: Vec<Paid>,
    cut: u64,
    next: u64,
    done: bool,
}

/// Where a step of a close begins and how far it may go: from `next` (cohorts or ranks
/// gone through), at most `budget` members looked at, `room` grants left under the limit.
#[derive(Clone, Copy)]
struct Span {
    next: u64,
    budget: usize,
    room: usize,
}

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

    /// Whether `period`'s close owes grants at `now_us`: it has none yet, and it closed
    /// by `now_us` and after the board's rows were set (a close is judged by the config
    /// now: a grace patched later moves the closes still owed, never the ones made).
    fn owes_grants(&self, period: &Period, now_us: i64) -> bool {
        !self.rewards.periods.contains_key(&period.start_us)
            && self
                .reward_close_us(period)
                .is_some_and(|c| c > self.rewards.rows_since_us && c <= now_us)
    }

    /// Whether `period`'s close will still make grants (it has entries, the board rows, and
    /// its close came after the rows were set): what a post of its close waits for.
    pub fn grants_pending(&self, period: &Period) -> bool {
        !self.config.settings.rewards.is_empty()
            && self.periods.contains_key(&period.start_us)
            && self.owes_grants(period, i64::MAX)
    }

    /// The period whose grants are being made, else the oldest whose grants are due at
    /// `now_us`.
    pub fn grants_due(&self, now_us: i64) -> Option<Period> {
        if let Some(m) = self.rewards.making() {
            // Its ranking holds it (a board without a reset has one period, `all`).
            return self.periods.get(&m.start_us).map(|(p, _)| p.clone());
        }
        if self.config.settings.rewards.is_empty() {
            return None;
        }
        self.periods
            .values()
            .map(|(p, _)| p)
            .find(|p| self.owes_grants(p, now_us))
            .cloned()
    }

    /// Makes every grant due at `at_us`, those being made first: what an operation that
    /// could change them does first. A league close due before them (their cohorts wait
    /// for it) is finished here first, whole, as retention finishes one before dropping
    /// its period.
    pub fn settle_grants(&mut self, at_us: i64) {
        while let Some(period) = self.grants_due(at_us) {
            match self.close_due(at_us) {
                Some(league)
                    if league.start_us <= period.start_us && self.rewards.making().is_none() =>
                {
                    self.close_cohorts(&league, usize::MAX);
                }
                _ => {
                    self.grant(&period, at_us, usize::MAX);
                }
            }
        }
    }

    /// Finishes the grants being made, whole: what changing who is hidden does first.
    pub(super) fn finish_grants(&mut self) {
        // Grants being made are due whatever the instant, and keep the one they began at.
        if self.rewards.making().is_some() {
            if let Some(period) = self.grants_due(i64::MIN) {
                self.grant(&period, i64::MIN, usize::MAX);
            }
        }
    }

    /// Rows in force now set at `at_us` where the board had none: closes before then owe
    /// nothing (they closed with no rows).
    pub(super) fn rows_set(&mut self, had_rows: bool, at_us: i64) {
        if !had_rows && !self.config.settings.rewards.is_empty() {
            self.rewards.rows_since_us = self.rewards.rows_since_us.max(at_us);
        }
    }

    /// Makes a step of `period`'s grants, begun at `at_us` unless begun before, looking
    /// at up to `budget` members (see the module docs); whether they are all made.
    pub(super) fn grant(&mut self, period: &Period, at_us: i64, budget: usize) -> bool {
        if let Some((_, ranking)) = self.periods.get_mut(&period.start_us) {
            // A close step replayed from the log may find the index deferred.
            ranking.rebuild_index();
        }
        let &Making {
            at_us,
            next,
            ref grants,
            ..
        } = self.rewards.begin(period.start_us, &period.id, at_us);
        let span = Span {
            next,
            budget: budget.max(1),
            room: MAX_GRANTS_PER_PERIOD.saturating_sub(grants.grants.len()),
        };
        let rows = &self.config.settings.rewards;
        let step = match self.config.cohort_size {
            Some(size) => self.paid_by_cohort(period, rows, size, span),
            None => self.paid_whole(period, rows, span),
        };
        let expires_at_us = at_us.saturating_add(self.config.settings.reward_ttl_us());
        let grants = step
            .paid
            .into_iter()
            .map(|(member, rank, row, cohort)| Grant {
                member,
                rank,
                reward: rows[row].reward.clone(),
                amount: rows[row].amount,
                granted_at_us: at_us,
                expires_at_us,
                claimed_at_us: None,
                claimed_by: None,
                cohort,
            })
            .collect();
        self.rewards.add_step(GrantStep {
            grants,
            cut: step.cut,
            next: step.next,
            done: step.done,
        })
    }

    /// The ranks `rows` pay in `period` on a board without cohorts, best first, from
    /// rank `span.next + 1`, at most `span.budget` of them, up to the limit; and how many
    /// the limit cut (counted, not read).
    fn paid_whole(&self, period: &Period, rows: &[RewardRow], span: Span) -> PaidStep {
        let mut step = PaidStep {
            paid: Vec::new(),
            cut: 0,
            next: span.next,
            done: true,
        };
        let Some(ranking) = self.ranking(period) else {
            return step;
        };
        let view = ranking.view(None);
        for (first, last, row) in plan(rows, view.len(), None) {
            let first = first.max(step.next + 1);
            if first > last {
                continue;
            }
            let room = span.room - step.paid.len();
            // Past the limit the rest is counted, not read, in this step.
            if room == 0 {
                step.cut += last - first + 1;
                step.next = last;
                continue;
            }
            let read = span.budget.saturating_sub(step.paid.len());
            if read == 0 {
                step.done = false;
                break;
            }
            let count = ((last - first + 1) as usize).min(read);
            let take = count.min(room);
            let page = view.page(first - 1, take, RankStyle::Ordinal);
            for (i, e) in page.into_iter().enumerate() {
                step.paid.push((e.member, first + i as u64, row, None));
            }
            step.cut += (count - take) as u64;
            step.next = first + count as u64 - 1;
            if step.next < last {
                step.done = false;
                break;
            }
        }
        step
    }

    /// The ranks `rows` pay in each cohort of `period` (of `size`), by tier, cohort and
    /// rank, from cohort `span.next`, whole cohorts until `span.budget` members were
    /// looked at, up to the limit; and how many the limit cut.
    fn paid_by_cohort(
        &self,
        period: &Period,
        rows: &[RewardRow],
        size: u32,
        span: Span,
    ) -> PaidStep {
        let mut step = PaidStep {
            paid: Vec::new(),
            cut: 0,
            next: span.next,
            done: true,
        };
        let (Some(ranking), Some(seats)) = (self.ranking(period), self.seats.get(&period.start_us))
        else {
            return step;
        };
        let mut looked = 0;
        for (place, _) in seats
            .cohorts
            .list(size, None)
            .into_iter()
            .skip(span.next as usize)
        {
            if looked >= span.budget {
                step.done = false;
                break;
            }
            step.next += 1;
            let mut members = seats.cohorts.members(place, size);
            looked += members.len();
            if !self.hidden.is_empty() {
                members.retain(|m| !self.hidden.contains_key(*m));
            }
            let order = ranking.order_among(&members);
            let tier = self.config.league.as_ref().map(|l| l.name(place.tier));
            for (first, last, row) in plan(rows, order.len() as u64, tier) {
                let take = (last - first + 1).min((span.room - step.paid.len()) as u64);
                for rank in first..first + take {
                    let member = members[order[(rank - 1) as usize]].to_owned();
                    let cohort = (tier.map(str::to_owned), place.cohort);
                    step.paid.push((member, rank, row, Some(cohort)));
                }
                step.cut += last - first + 1 - take;
            }
        }
        step
    }

    /// Before periods below `floor` are dropped at `at_us`: the grants they still owe by
    /// then, made as they go; grants of dropped periods kept while any may be claimed.
    pub(super) fn grant_before_dropping(&mut self, floor: i64, at_us: i64) {
        if !self.config.settings.rewards.is_empty() {
            let owed: Vec<Period> = self
                .periods
                .range(..floor)
                .map(|(_, (p, _))| p)
                .filter(|p| self.owes_grants(p, i64::MAX))
                .cloned()
                .collect();
            for p in owed {
                self.grant(&p, at_us, usize::MAX);
            }
        }
        self.rewards.drop_spent(floor, at_us);
    }

    /// Claims grant `n` of the period `period` (its id) on this board (named `name`) for
    /// `member` at `at_us` by `by`, the closes due by then made first: the grant, claimed.
    /// An unknown grant or another member's is `reward_not_found`, one claimed before
    /// `already_claimed` (carrying it), one at or past its `expires_at` `reward_expired`.
    /// A claim of a period whose grants are made settles nothing: it changes no other
    /// grant, and it does not wait for another period's close steps.
    pub fn claim(
        &mut self,
        name: &str,
        (period, n): (&str, u64),
        member: &str,
        by: &str,
        at_us: i64,
    ) -> Result<GrantState, BoardError> {
        if self.rewards.period(period).is_none() {
            self.settle_grants(at_us);
        }
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

#[cfg(test)]
mod tests;
