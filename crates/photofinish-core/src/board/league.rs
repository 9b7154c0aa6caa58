//! A board's league (docs/SPEC.md §14, docs/competitions.md): each member's tier, carried
//! across periods, and the close of a period owed one — found due by the clock, run in
//! bounded steps from the log's `Close` commands, continued where the last step stopped;
//! members that arrived meanwhile take their cohorts when it ends.

use super::{owes_close, set_tier, Board};
use crate::calendar::Period;
use crate::league::{CloseStep, League, Move};

impl Board {
    /// The league, on a league board.
    pub fn league(&self) -> Option<&League> {
        self.config.league.as_ref()
    }

    /// `member`'s tier (the first for a member no close moved up).
    pub fn tier_of(&self, member: &str) -> u16 {
        self.tiers.get(member).copied().unwrap_or(0)
    }

    /// Every member whose tier is above the first, with it (the snapshot's).
    pub fn tiers(&self) -> impl Iterator<Item = (&str, u16)> {
        self.tiers.iter().map(|(m, &t)| (&**m, t))
    }

    /// Sets `member`'s tier (snapshot loading).
    pub fn restore_tier(&mut self, member: Box<str>, tier: u16) {
        set_tier(&mut self.tiers, member, tier);
    }

    /// The oldest period whose league close is owed and due at `now_us` (its end and
    /// grace passed), on a league board.
    pub fn close_due(&self, now_us: i64) -> Option<Period> {
        self.config.league.as_ref()?;
        let (&start, _) = self.seats.iter().find(|(_, s)| owes_close(s))?;
        let period = self.calendar().period_at(start).ok()?;
        let due = period
            .end_us
            .saturating_add(self.config.settings.grace_us());
        (now_us >= due).then_some(period)
    }

    /// Whether a close step is due at `now_us`: a league's, or a period's grants
    /// (docs/SPEC.md §16).
    pub fn step_due(&self, now_us: i64) -> bool {
        self.close_due(now_us).is_some() || self.grants_due(now_us).is_some()
    }

    /// One step of the close due at `now_us`: the next cohorts of the oldest period owing
    /// a league close ([`crate::league`]), up to `budget` members, or else the next of
    /// the grants of the oldest period owing them, up to `budget` members looked at (a
    /// league close before it comes first: its members' cohorts wait for it). `None`
    /// (nothing changed) when neither is due.
    pub fn close_step(&mut self, now_us: i64, budget: usize) -> Option<CloseStep> {
        let league = self.close_due(now_us);
        let grants = self.grants_due(now_us);
        match (league, grants) {
            (Some(period), g) if g.as_ref().is_none_or(|g| period.start_us <= g.start_us) => {
                let done = self.close_cohorts(&period, budget);
                Some(CloseStep {
                    period: period.id,
                    done,
                })
            }
            (_, Some(period)) => {
                let done = self.grant(&period, now_us, budget);
                Some(CloseStep {
                    period: period.id,
                    done,
                })
            }
            _ => None,
        }
    }

    /// Closes cohorts of `period`, continuing its close, until `budget` members were
    /// ranked; whether the period is closed now. When it is, members of later periods
    /// waiting for their tier take their cohorts (up to the next period that owes a close).
    pub(super) fn close_cohorts(&mut self, period: &Period, budget: usize) -> bool {
        let (Some(league), Some(size)) = (self.config.league.as_ref(), self.config.cohort_size)
        else {
            return true;
        };
        let start = period.start_us;
        let Some(seats) = self.seats.get_mut(&start) else {
            return true;
        };
        let ranking = self.periods.get(&start).map(|(_, r)| r);
        let list = seats.cohorts.list(size, None);
        let mut close = seats.close.take().unwrap_or_default();
        let mut ranked = 0;
        for &(place, _) in list.iter().skip(close.cohorts_done as usize) {
            if ranked >= budget {
                break;
            }
            let mut members = seats.cohorts.members(place, size);
            ranked += members.len();
            // Hidden members are in no standing: neither promoted nor relegated, they
            // keep their tier (docs/SPEC.md §15).
            if !self.hidden.is_empty() {
                members.retain(|m| !self.hidden.contains_key(*m));
            }
            let order = ranking.map_or_else(Vec::new, |r| r.order_among(&members));
            for (pos, rank, to) in league.cohort_moves(place.tier, order.len()) {
                let member: Box<str> = members[order[pos]].into();
                set_tier(&mut self.tiers, member.clone(), to);
                close.moves.push(Move {
                    member,
                    from: place.tier,
                    to,
                    cohort: place.cohort,
                    rank,
                });
            }
            close.cohorts_done += 1;
        }
        close.done = close.cohorts_done as usize >= list.len();
        let done = close.done;
        seats.close = Some(close);
        if done {
            let tiers = &self.tiers;
            for (_, later) in self.seats.range_mut(start + 1..) {
                later.cohorts.settle(|m| tiers.get(m).copied().unwrap_or(0));
                if owes_close(later) {
                    break;
                }
            }
        }
        done
    }

    /// Whether `period` is closed at `now_us` on a league board: it ended with its grace
    /// and owes no close (its close is done, or nobody took a cohort in it).
    pub fn is_closed(&self, period: &Period, now_us: i64) -> bool {
        let due = period
            .end_us
            .saturating_add(self.config.settings.grace_us());
        now_us >= due && !self.seats.get(&period.start_us).is_some_and(owes_close)
    }

    /// The close of `period` as far as it went (its moves), on a league board.
    pub fn closing(&self, period: &Period) -> Option<&crate::league::Closing> {
        self.seats.get(&period.start_us)?.close.as_deref()
    }

    /// Before periods below `floor` are dropped: the league closes they still owe, whole
    /// and in order (a board that took no write for longer than its retention).
    pub(super) fn close_before_dropping(&mut self, floor: i64) {
        if self.config.league.is_none() {
            return;
        }
        while let Some(start) = self
            .seats
            .iter()
            .find(|(_, s)| owes_close(s))
            .map(|(&start, _)| start)
            .filter(|&start| start < floor)
        {
            let Ok(period) = self.calendar().period_at(start) else {
                return;
            };
            self.close_cohorts(&period, usize::MAX);
        }
    }
}
