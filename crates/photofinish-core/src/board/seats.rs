//! A board's seats (docs/SPEC.md §14, docs/competitions.md): per period, the members who
//! joined and have not played, each member's accepted writes, and the cohorts members take
//! as they arrive. Joining, what an accepted write does to its member's seat, and the reads
//! of seats and cohorts are here, apart from the board's writes and periods, which call
//! them.

use super::{owes_close, Board};
use crate::budget::OverBudget;
use crate::calendar::{validate_instant, Period};
use crate::cohort::{Cohorts, Place};
use crate::entry::Seats;
use crate::error::BoardError;
use crate::ranking::Ranking;
use crate::view::JoinOutcome;

/// Seats an arriving `member` in `cohorts`: in tier `tier`'s open cohort, or among those
/// waiting for their tier (`None`).
fn seat_arrival(cohorts: &mut Cohorts, member: &str, tier: Option<u16>, size: u32) {
    match tier {
        Some(tier) => {
            cohorts.place(member, tier, size);
        }
        None => cohorts.wait(member),
    }
}

impl Board {
    /// The seats `period` holds: its entries and the members who joined it and have not
    /// played (what `max_members` counts).
    pub(super) fn seats_held(&self, period: &Period) -> u64 {
        let entries = self.ranking(period).map_or(0, Ranking::len);
        let waiting = self
            .seats
            .get(&period.start_us)
            .map_or(0, |s| s.waiting.len());
        entries + waiting as u64
    }

    /// After an accepted write of `member` in the period starting at `start_us`: it has
    /// played (its seat is its entry now), one more attempt counts where the board counts
    /// them, and a member that `arrives` (its first entry) takes its cohort.
    pub(super) fn seat_played(&mut self, start_us: i64, member: &str, arrives: bool) {
        let counts = self.config.settings.entry.counts_attempts();
        let cohort_size = self.config.cohort_size.filter(|_| arrives);
        if !counts && cohort_size.is_none() {
            // An update: only a member waiting with a seat (a join) has anything to change.
            let waiting = self
                .seats
                .get(&start_us)
                .is_some_and(|s| !s.waiting.is_empty());
            if !waiting {
                return;
            }
        }
        let arrival = cohort_size.map(|size| (size, self.arrival(start_us, member)));
        // One look-up of the period's seats for all of it: a first write on a cohort
        // board comes here for each new member.
        let seats = self.seats.entry(start_us).or_default();
        if !seats.waiting.is_empty() {
            seats.waiting.remove(member);
        }
        if counts {
            *seats.attempts.entry(member.into()).or_default() += 1;
        }
        if let Some((size, tier)) = arrival {
            seat_arrival(&mut seats.cohorts, member, tier, size);
        }
        if seats.is_empty() {
            self.seats.remove(&start_us);
        }
    }

    /// `member` arrives in the period starting at `start_us` of a cohort board: it takes
    /// the open cohort of its tier — or, on a league board while an earlier period's close
    /// is still owed, waits for that close to know its tier (docs/competitions.md).
    pub(super) fn arrive(&mut self, start_us: i64, member: &str) {
        let Some(size) = self.config.cohort_size else {
            return;
        };
        let tier = self.arrival(start_us, member);
        let cohorts = &mut self.seats.entry(start_us).or_default().cohorts;
        seat_arrival(cohorts, member, tier, size);
    }

    /// The tier `member` arrives in, in the period starting at `start_us`: `None` when it
    /// must wait for an earlier period's league close to know it.
    fn arrival(&self, start_us: i64, member: &str) -> Option<u16> {
        if self.config.league.is_none() {
            return Some(0);
        }
        let owed = self.seats.range(..start_us).any(|(_, s)| owes_close(s));
        (!owed).then(|| self.tier_of(member))
    }

    /// `member` joins the period containing instant `at_us` (docs/SPEC.md §14): a seat
    /// held without an entry, counted toward `max_members`. A member that has an entry or
    /// joined before is answered `already`. On error nothing changed.
    pub fn join(
        &mut self,
        member: &str,
        at_us: i64,
        over_budget: Option<OverBudget>,
    ) -> Result<JoinOutcome, BoardError> {
        validate_instant(at_us)?;
        crate::config::validate_member_name(member)?;
        self.config.settings.entry.check_window(at_us)?;
        let period = self.period_taking(at_us)?;
        let has_entry = self.ranking(&period).is_some_and(|r| r.contains(member));
        if has_entry || self.is_waiting(&period, member) {
            return Ok(JoinOutcome {
                member: member.to_owned(),
                period,
                already: true,
            });
        }
        if let Some(max) = self.config.settings.rules.max_members {
            if self.seats_held(&period) >= max {
                return Err(BoardError::BoardFull(max));
            }
        }
        if let Some(over) = over_budget {
            return Err(over.refusal());
        }
        let seats = self.seats.entry(period.start_us).or_default();
        seats.waiting.insert(member.into());
        self.arrive(period.start_us, member);
        self.enforce_retention_of_seats(&period);
        Ok(JoinOutcome {
            member: member.to_owned(),
            period,
            already: false,
        })
    }

    /// Whether `member` joined `period` and has not played in it yet.
    pub fn is_waiting(&self, period: &Period, member: &str) -> bool {
        self.seats
            .get(&period.start_us)
            .is_some_and(|s| s.is_waiting(member))
    }

    /// `member`'s accepted writes in `period`, on a board that counts them.
    pub fn attempts(&self, period: &Period, member: &str) -> Option<u32> {
        self.config.settings.entry.counts_attempts().then(|| {
            self.seats
                .get(&period.start_us)
                .map_or(0, |s| s.attempts_of(member))
        })
    }

    /// `member`'s cohort in `period`, on a cohort board, once it arrived (docs/SPEC.md
    /// §14).
    pub fn place_of(&self, period: &Period, member: &str) -> Option<Place> {
        let size = self.config.cohort_size?;
        self.seats
            .get(&period.start_us)?
            .cohorts
            .place_of(member, size)
    }

    /// Whether `member` arrived in `period` and waits for its league tier, so its cohort.
    pub fn is_pending(&self, period: &Period, member: &str) -> bool {
        self.seats
            .get(&period.start_us)
            .is_some_and(|s| s.cohorts.is_waiting(member))
    }

    /// The members of cohort `place` in `period`, in arrival order.
    pub fn cohort_members(&self, period: &Period, place: Place) -> Vec<&str> {
        match (self.config.cohort_size, self.seats.get(&period.start_us)) {
            (Some(size), Some(s)) => s.cohorts.members(place, size),
            _ => Vec::new(),
        }
    }

    /// Every cohort of `period` with its member count (`tier`: only that tier's).
    pub fn cohorts(&self, period: &Period, tier: Option<u16>) -> Vec<(Place, u32)> {
        match (self.config.cohort_size, self.seats.get(&period.start_us)) {
            (Some(size), Some(s)) => s.cohorts.list(size, tier),
            _ => Vec::new(),
        }
    }

    /// Every period's seats, oldest first (the snapshot's).
    pub fn all_seats(&self) -> impl Iterator<Item = (i64, &Seats)> {
        self.seats.iter().map(|(&start, s)| (start, s))
    }

    /// Puts the seats of the period starting at `start_us` in place (snapshot loading).
    pub fn insert_seats(&mut self, start_us: i64, seats: Seats) {
        if !seats.is_empty() {
            self.seats.insert(start_us, seats);
        }
    }

    /// Drops seats of periods below the retention floor counted back from `newest`.
    fn enforce_retention_of_seats(&mut self, newest: &Period) {
        let floor = self.window.retention_floor(newest).start_us;
        self.close_before_dropping(floor);
        self.seats.retain(|&start, _| start >= floor);
    }
}
