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

/// One rank a close pays: the member, its rank, the row (its index) and, on a cohort
/// board, its cohort (tier name, number).
type Paid = (String, u64, usize, Option<(Option<String>, u32)>);

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

    /// Makes every grant due at `at_us`: what an operation that could change them does
    /// first. A league close due before them (their cohorts wait for it) is finished here
    /// first, whole, as retention finishes one before dropping its period.
    pub fn settle_grants(&mut self, at_us: i64) {
        while let Some(period) = self.grants_due(at_us) {
            match self.close_due(at_us) {
                Some(league) if league.start_us <= period.start_us => {
                    self.close_cohorts(&league, usize::MAX);
                }
                _ => self.grant(&period, at_us),
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

    /// Makes `period`'s grants at `at_us` (see the module docs).
    pub(super) fn grant(&mut self, period: &Period, at_us: i64) {
        if let Some((_, ranking)) = self.periods.get_mut(&period.start_us) {
            // A close step replayed from the log may find the index deferred.
            ranking.rebuild_index();
        }
        let rows = &self.config.settings.rewards;
        let (paid, cut) = match self.config.cohort_size {
            Some(size) => self.paid_by_cohort(period, rows, size),
            None => self.paid_whole(period, rows),
        };
        let expires_at_us = at_us.saturating_add(self.config.settings.reward_ttl_us());
        let grants = paid
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
        let out = PeriodGrants {
            period: period.id.clone(),
            grants,
            cut,
        };
        self.keep_grants(period, out);
    }

    /// The ranks `rows` pay in `period` on a board without cohorts, best first, up to
    /// the limit; and how many the limit cut (counted, not read).
    fn paid_whole(&self, period: &Period, rows: &[RewardRow]) -> (Vec<Paid>, u64) {
        let Some(ranking) = self.ranking(period) else {
            return (Vec::new(), 0);
        };
        let view = ranking.view(None);
        let (mut paid, mut cut) = (Vec::new(), 0);
        for (first, last, row) in plan(rows, view.len(), None) {
            let count = (last - first + 1) as usize;
            let take = count.min(MAX_GRANTS_PER_PERIOD - paid.len());
            let page = view.page(first - 1, take, RankStyle::Ordinal);
            for (i, e) in page.into_iter().enumerate() {
                paid.push((e.member, first + i as u64, row, None));
            }
            cut += (count - take) as u64;
        }
        (paid, cut)
    }

    /// The ranks `rows` pay in each cohort of `period` (of `size`), by tier, cohort and
    /// rank, up to the limit; and how many the limit cut.
    fn paid_by_cohort(&self, period: &Period, rows: &[RewardRow], size: u32) -> (Vec<Paid>, u64) {
        let (Some(ranking), Some(seats)) = (self.ranking(period), self.seats.get(&period.start_us))
        else {
            return (Vec::new(), 0);
        };
        let (mut paid, mut cut) = (Vec::new(), 0);
        for (place, _) in seats.cohorts.list(size, None) {
            let mut members = seats.cohorts.members(place, size);
            if !self.hidden.is_empty() {
                members.retain(|m| !self.hidden.contains_key(*m));
            }
            let order = ranking.order_among(&members);
            let tier = self.config.league.as_ref().map(|l| l.name(place.tier));
            for (first, last, row) in plan(rows, order.len() as u64, tier) {
                let take = (last - first + 1).min((MAX_GRANTS_PER_PERIOD - paid.len()) as u64);
                for rank in first..first + take {
                    let member = members[order[(rank - 1) as usize]].to_owned();
                    let cohort = (tier.map(str::to_owned), place.cohort);
                    paid.push((member, rank, row, Some(cohort)));
                }
                cut += last - first + 1 - take;
            }
        }
        (paid, cut)
    }

    fn keep_grants(&mut self, period: &Period, grants: PeriodGrants) {
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
                .filter(|p| self.owes_grants(p, i64::MAX))
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

#[cfg(test)]
mod tests {
    use crate::board::{Board, BoardWrite};
    use crate::calendar::Reset;
    use crate::columns::Operands;
    use crate::config::BoardConfig;
    use crate::rewards::{RewardRow, MAX_GRANTS_PER_PERIOD};
    use crate::view::BoardPatch;

    const DAY: i64 = 86_400_000_000;
    /// 2026-11-22T00:00:00Z: the start of period 2026-11-22 of a daily UTC board.
    const T0: i64 = 1_795_305_600_000_000;

    fn row(from: u64, to: u64, reward: &str) -> RewardRow {
        RewardRow {
            from: Some(from),
            to: Some(to),
            top_hundredths: None,
            reward: reward.into(),
            amount: 1,
            tier: None,
        }
    }

    fn board(reset: Reset, closes_at: Option<i64>, rows: Vec<RewardRow>) -> Board {
        let mut c = BoardConfig {
            reset,
            ..BoardConfig::default()
        };
        c.settings.entry.closes_at = closes_at;
        c.settings.rewards = rows;
        Board::checked(c).expect("board")
    }

    fn write(b: &mut Board, member: &str, value: i64, at_us: i64) {
        b.submit(&BoardWrite {
            member,
            op: None,
            values: Operands::one(value),
            at_us,
            period_us: None,
            metadata: None,
            over_budget: None,
        })
        .expect("write");
    }

    /// (member, reward) of each grant of the period starting at `start`.
    fn paid(b: &Board, start: i64) -> Vec<(String, String)> {
        b.rewards().periods[&start]
            .grants
            .iter()
            .map(|g| (g.member.clone(), g.reward.clone()))
            .collect()
    }

    fn pay(member: &str, reward: &str) -> (String, String) {
        (member.into(), reward.into())
    }

    #[test]
    fn the_rows_in_force_at_the_close_count() {
        let mut b = board(Reset::Daily, None, vec![row(1, 1, "old")]);
        write(&mut b, "a", 5, T0 + 1);
        // Patched before the close: the new rows pay.
        let new_rows = BoardPatch {
            rewards: Some(vec![row(1, 1, "new")]),
            ..BoardPatch::default()
        };
        b.patch(&new_rows, T0 + 2).expect("patch");
        assert!(b.grants_due(T0 + DAY - 1).is_none(), "not closed yet");
        assert!(b.close_step(T0 + DAY, 100).is_some());
        assert_eq!(paid(&b, T0), [pay("a", "new")]);
        // Day 2 closes; a patch logged after that close, before its step, settles the
        // close first with the rows it closed under.
        write(&mut b, "a", 5, T0 + DAY + 1);
        let later = BoardPatch {
            rewards: Some(vec![row(1, 1, "later")]),
            ..BoardPatch::default()
        };
        b.patch(&later, T0 + 2 * DAY + 5).expect("patch");
        assert_eq!(paid(&b, T0 + DAY), [pay("a", "new")]);
        assert!(
            b.close_step(T0 + 2 * DAY + 6, 100).is_none(),
            "granted once"
        );
    }

    #[test]
    fn rows_set_after_a_close_leave_it_unpaid() {
        let mut b = board(Reset::Daily, None, Vec::new());
        write(&mut b, "a", 5, T0 + 1);
        let rows = BoardPatch {
            rewards: Some(vec![row(1, 1, "late")]),
            ..BoardPatch::default()
        };
        // Day 1 closed without rows: it owes nothing; day 2 is paid.
        b.patch(&rows, T0 + DAY + 10).expect("patch");
        write(&mut b, "b", 5, T0 + DAY + 11);
        assert!(b.grants_due(T0 + 2 * DAY).is_some());
        b.close_step(T0 + 2 * DAY, 100).expect("a step");
        assert!(!b.rewards().periods.contains_key(&T0));
        assert_eq!(paid(&b, T0 + DAY), [pay("b", "late")]);
    }

    #[test]
    fn closes_at_closes_a_board_without_a_reset_and_only_stops_writes_on_one_with() {
        let closes = T0 + 3_600_000_000;
        let mut once = board(Reset::Never, Some(closes), vec![row(1, 1, "cup")]);
        write(&mut once, "a", 5, T0);
        assert!(once.grants_due(closes - 1).is_none());
        once.close_step(closes, 100).expect("closed at closes_at");
        assert_eq!(paid(&once, i64::MIN), [pay("a", "cup")]);
        // Without closes_at, `all` never closes.
        let mut never = board(Reset::Never, None, vec![row(1, 1, "cup")]);
        write(&mut never, "a", 5, T0);
        assert!(never.grants_due(i64::MAX - 1).is_none());
        // A daily board with closes_at pays at each period's end, not at closes_at.
        let mut daily = board(Reset::Daily, Some(closes), vec![row(1, 1, "cup")]);
        write(&mut daily, "a", 5, T0);
        assert!(daily.grants_due(closes).is_none());
        daily
            .close_step(T0 + DAY, 100)
            .expect("closed at the day's end");
        assert_eq!(paid(&daily, T0), [pay("a", "cup")]);
    }

    #[test]
    fn a_league_close_pending_is_finished_before_a_patch_changes_the_rows() {
        let mut c = BoardConfig {
            reset: Reset::Daily,
            cohort_size: Some(2),
            league: Some(crate::league::League {
                tiers: vec!["low".into(), "high".into()],
                promote: 1,
                demote: 0,
            }),
            ..BoardConfig::default()
        };
        c.settings.rewards = vec![row(1, 1, "cup")];
        let mut b = Board::checked(c).expect("board");
        write(&mut b, "a", 5, T0 + 1);
        write(&mut b, "b", 3, T0 + 2);
        // Day 1 closed, neither its league close nor its grants made yet: a patch
        // removing the rows first finishes both, with the rows in force at the close.
        let none = BoardPatch {
            rewards: Some(Vec::new()),
            ..BoardPatch::default()
        };
        b.patch(&none, T0 + DAY + 5).expect("patch");
        assert_eq!(paid(&b, T0), [pay("a", "cup")]);
        assert_eq!(b.tier_of("a"), 1, "the league close ran");
    }

    #[test]
    fn a_grace_patched_later_never_skips_a_close() {
        let mut c = BoardConfig {
            reset: Reset::Daily,
            ..BoardConfig::default()
        };
        c.settings.grace = 86_400;
        c.settings.rewards = vec![row(1, 1, "cup")];
        let mut b = Board::checked(c).expect("board");
        write(&mut b, "a", 5, T0 + 1);
        b.submit(&BoardWrite {
            member: "b",
            op: None,
            values: Operands::one(3),
            at_us: T0 + DAY + 1,
            period_us: None,
            metadata: None,
            over_budget: None,
        })
        .expect("write");
        // Day 1 closes a day after its end, with its grace.
        b.close_step(T0 + 2 * DAY, 100).expect("day 1");
        assert_eq!(paid(&b, T0), [pay("a", "cup")]);
        // The grace drops to 0: day 2 closed at its end, which has passed.
        let no_grace = BoardPatch {
            grace: Some(0),
            ..BoardPatch::default()
        };
        b.patch(&no_grace, T0 + 2 * DAY + 1).expect("patch");
        b.close_step(T0 + 2 * DAY + 2, 100).expect("day 2");
        assert_eq!(paid(&b, T0 + DAY), [pay("b", "cup")]);
    }

    #[test]
    fn a_close_pays_at_most_the_limit_and_counts_the_rest() {
        let mut rows = vec![row(1, 1, "first")];
        rows.push(RewardRow {
            from: None,
            to: None,
            top_hundredths: Some(10_000),
            reward: "all".into(),
            amount: 1,
            tier: None,
        });
        let mut b = board(Reset::Daily, None, rows);
        let n = MAX_GRANTS_PER_PERIOD as i64 + 7;
        for i in 0..n {
            write(&mut b, &format!("m{i}"), i, T0 + 1);
        }
        b.close_step(T0 + DAY, 100).expect("a step");
        let p = &b.rewards().periods[&T0];
        assert_eq!((p.grants.len(), p.cut), (MAX_GRANTS_PER_PERIOD, 7));
        // Rank order: the best first, the last paid is rank 100,000.
        let last = n - 1 - (MAX_GRANTS_PER_PERIOD as i64 - 1);
        assert_eq!(
            (p.grants[0].member.as_str(), p.grants[0].reward.as_str()),
            (format!("m{}", n - 1).as_str(), "first")
        );
        let tail = p.grants.last().expect("grants");
        assert_eq!(
            (tail.member.clone(), tail.rank),
            (format!("m{last}"), 100_000)
        );
    }
}
