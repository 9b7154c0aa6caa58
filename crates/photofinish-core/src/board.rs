//! A board: its config, its calendar, and one [`Ranking`] per retained period.
//!
//! Every write carries its instant; the calendar maps it to a period, and the write lands in
//! that period's ranking, created on first use. When a write opens a period newer than any
//! before, periods that fall out of `retention` (counted back from the newest) are dropped,
//! so retention depends only on the writes and replays identically. Readers see less: the
//! board's [`PeriodWindow`] — retention counted back from the current period by the clock —
//! so that a period leaves the board when it falls out of "the last `retention` periods",
//! whether or not anyone wrote since (the Redis backend lets its keys expire at that
//! moment). Reads name a period as `current` (the one containing "now"), `previous`, or an
//! id.

use std::collections::BTreeMap;

use crate::budget::OverBudget;
use crate::calendar::{validate_instant, Calendar, Period};
use crate::columns::{check_columns, Column, ColumnNames, Operands, Shape};
use crate::config::{BoardConfig, CheckedConfig, Op};
use crate::entry::Seats;
use crate::error::BoardError;
use crate::ranking::{Outcome, Prefetch, RankStyle, Ranking, Write};
use crate::view::BoardPatch;
use crate::window::PeriodWindow;

pub use crate::calendar::PeriodRef;

/// One board. See the module docs. A clone is a deep copy (the store's snapshots).
#[derive(Debug, Clone)]
pub struct Board {
    config: BoardConfig,
    /// Its column names when it has several (fixed, like the config's columns).
    names: ColumnNames,
    /// What its rankings need of its columns (fixed too): made once, not on every write.
    shape: Shape,
    window: PeriodWindow,
    /// Rankings by period start.
    periods: BTreeMap<i64, (Period, Ranking)>,
    /// The entry rules' seats by period start (docs/SPEC.md §14), for the periods that
    /// have any: joins not yet played, and attempts.
    seats: BTreeMap<i64, Seats>,
    /// The webhook's cursor ([`crate::hook`]), `None` until first set and after the
    /// webhook is removed.
    hook_cursor_us: Option<i64>,
    /// On a league board, each member's tier above the first (docs/SPEC.md §14): it
    /// carries over from period to period and changes only when a period closes.
    tiers: hashbrown::HashMap<Box<str>, u16>,
    /// The members hidden on this board (docs/SPEC.md §15), at most
    /// [`MAX_HIDDEN_MEMBERS`], each with how ([`HideScope`] bits: on this board, across
    /// every board, or both): kept with their entries and writes, left out of what
    /// everyone else reads while either holds.
    hidden: hashbrown::HashMap<Box<str>, u8>,
    /// The grants its periods' closes made (docs/SPEC.md §16).
    rewards: crate::rewards::Rewards,
}

/// A write to a board before it is resolved to a period: the operator may be the default.
#[derive(Debug, Clone, Copy)]
pub struct BoardWrite<'a> {
    /// The member.
    pub member: &'a str,
    /// The operator, or `None` for the board's rule (docs/SPEC.md §13).
    pub op: Option<Op>,
    /// The columns written, with their values.
    pub values: Operands,
    /// The instant: the server's clock, or the write's explicit `at`.
    pub at_us: i64,
    /// An instant in the period the write names, when it names one (a closed period
    /// within grace, checked before logging: its start); else the period containing
    /// `at_us` takes the write.
    pub period_us: Option<i64>,
    /// New metadata, or `None` to keep the current one.
    pub metadata: Option<&'a str>,
    /// The partition the write names (docs/SPEC.md §17).
    pub partition: Option<&'a str>,
    /// The team the write names (docs/SPEC.md §17).
    pub team: Option<&'a str>,
    /// The memory budget was over when the write was admitted: it may not add a member.
    pub over_budget: Option<OverBudget>,
}

/// Whether a period's seats owe a league close: it has cohorts, not all closed.
fn owes_close(s: &Seats) -> bool {
    !s.cohorts.is_empty() && !s.closed()
}

/// Sets `member`'s tier in `tiers`, which keeps only tiers above the first.
fn set_tier(tiers: &mut hashbrown::HashMap<Box<str>, u16>, member: Box<str>, tier: u16) {
    if tier == 0 {
        tiers.remove(&member);
    } else {
        tiers.insert(member, tier);
    }
}

/// The instant whose period takes a write at `at_us`: the period it names, else its own.
fn target_us(at_us: i64, period_us: Option<i64>) -> i64 {
    period_us.unwrap_or(at_us)
}

impl Board {
    /// A new, empty board from a plain config, checked here: for tools and tests that
    /// start from one (an operation's config was checked where it entered).
    pub fn checked(config: BoardConfig) -> Result<Self, BoardError> {
        Self::new(config.checked()?)
    }

    /// A new, empty board with a checked config.
    pub fn new(config: CheckedConfig) -> Result<Self, BoardError> {
        let config = config.into_inner();
        let window = PeriodWindow::new(&config)?;
        Ok(Self {
            names: ColumnNames::of(&config.columns),
            shape: config.shape(),
            config,
            window,
            periods: BTreeMap::new(),
            seats: BTreeMap::new(),
            hook_cursor_us: None,
            tiers: hashbrown::HashMap::new(),
            hidden: hashbrown::HashMap::new(),
            rewards: crate::rewards::Rewards::default(),
        })
    }

    /// The board's config.
    pub fn config(&self) -> &BoardConfig {
        &self.config
    }

    /// What its rankings need of its columns ([`BoardConfig::shape`], made once).
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Its column names, on a board of several (what answers name each score by).
    pub fn column_names(&self) -> ColumnNames {
        self.names.clone()
    }

    /// Changes the board's changeable settings at `at_us`, the grants due then made first
    /// with the rows in force before (docs/SPEC.md §16). On error nothing changed.
    pub fn patch(&mut self, patch: &BoardPatch, at_us: i64) -> Result<(), BoardError> {
        let config = patch.apply(&self.config)?;
        self.settle_grants(at_us);
        let had_rows = !self.config.settings.rewards.is_empty();
        if config.retention != self.config.retention {
            self.window = PeriodWindow::new(&config)?;
        }
        if config.settings.webhook.is_none() {
            self.hook_cursor_us = None;
        }
        self.config = config;
        self.rows_set(had_rows, at_us);
        Ok(())
    }

    /// The webhook's cursor ([`crate::hook`]).
    pub fn hook_cursor(&self) -> Option<i64> {
        self.hook_cursor_us
    }

    /// Moves the webhook's cursor forward to `cursor_us` (never back); nothing on a board
    /// without a webhook.
    pub fn advance_hook(&mut self, cursor_us: i64) {
        if self.config.settings.webhook.is_some() {
            self.hook_cursor_us = Some(self.hook_cursor_us.map_or(cursor_us, |c| c.max(cursor_us)));
        }
    }

    /// The board's calendar.
    pub fn calendar(&self) -> &Calendar {
        self.window.calendar()
    }

    /// The board's period window: what readers see and writes may name, by the clock.
    pub fn window(&self) -> &PeriodWindow {
        &self.window
    }

    /// Applies a write in the period containing its instant (or the period it names).
    /// On error nothing changed.
    pub fn submit(&mut self, w: &BoardWrite<'_>) -> Result<(Outcome, Period), BoardError> {
        self.submit_with(w, true)
    }

    /// After log replay ([`Self::submit_unranked`]): builds the indexes it deferred.
    pub fn rebuild_indexes(&mut self) {
        for (_, ranking) in self.periods.values_mut() {
            ranking.rebuild_index();
        }
    }

    /// [`Self::submit`] for log replay: no rank, and each ranking's index is left for
    /// [`Self::rebuild_indexes`] (see [`Ranking::submit_unranked`]).
    pub fn submit_unranked(&mut self, w: &BoardWrite<'_>) -> Result<(Outcome, Period), BoardError> {
        self.submit_with(w, false)
    }

    fn submit_with(
        &mut self,
        w: &BoardWrite<'_>,
        ranked: bool,
    ) -> Result<(Outcome, Period), BoardError> {
        validate_instant(w.at_us)?;
        let period = self.period_taking(target_us(w.at_us, w.period_us))?;
        self.check_rules(&period, w)?;
        let write = Write {
            member: w.member,
            op: w.op,
            values: w.values,
            at_us: w.at_us,
            metadata: w.metadata,
            partition: w.partition,
            team: w.team,
            hidden: self.is_hidden(w.member),
        };
        let shape = self.shape;
        let partitions = self.config.partitions.map(|p| p.max);
        let teams = self.config.teams.map(|t| t.max_size);
        let is_new = !self.periods.contains_key(&period.start_us);
        let (_, ranking) = self.periods.entry(period.start_us).or_insert_with(|| {
            (
                period.clone(),
                Ranking::new(shape)
                    .with_partitions(partitions)
                    .with_teams(teams),
            )
        });
        let cohorts = self.config.cohort_size.is_some();
        if cohorts {
            // A first write takes its seat after the ranking's work: start fetching where
            // its look-up goes now (a prefetch, so an update loses nothing waiting on it).
            if let Some(s) = self.seats.get(&period.start_us) {
                s.cohorts.prefetch(w.member);
            }
        }
        let members_before = ranking.len();
        let result = if ranked {
            ranking.submit(&write)
        } else {
            ranking.submit_unranked(&write)
        };
        if result.is_ok() {
            // A member arrives in a cohort at its first accepted write: the one that adds
            // its entry.
            let arrives = cohorts && ranking.len() > members_before;
            self.seat_played(period.start_us, w.member, arrives);
        }
        if is_new {
            match &result {
                Ok(_) => self.enforce_retention(w.at_us),
                Err(_) => {
                    self.periods.remove(&period.start_us);
                }
            }
        }
        let mut outcome = result.map_err(|e| e.in_period(&period.id))?;
        if !self.hidden.is_empty() {
            self.seen_by_writer(&period, w.member, ranked, &mut outcome);
        }
        Ok((outcome, period))
    }

    /// After a write of `member` in `period` on a board that hides members: keeps a
    /// hidden writer in place among the hidden, and makes the answer's ranks (`ranked`)
    /// the writer's view — hidden members other than it left out, itself shown as it
    /// would rank (docs/SPEC.md §15), in the board and in its partition.
    fn seen_by_writer(
        &mut self,
        period: &Period,
        member: &str,
        ranked: bool,
        outcome: &mut Outcome,
    ) {
        if let Some(ranking) = self.periods.get_mut(&period.start_us).map(|(_, r)| r) {
            if self.hidden.contains_key(member) {
                // Its key may have moved, or it just arrived: keep it in place.
                ranking.mark_hidden(member, true);
            }
            if ranked && ranking.has_hidden() {
                // The answer is the writer's view: hidden members other than it left
                // out, itself shown as it would rank (docs/SPEC.md §15).
                let view = ranking.view(Some(member));
                if let Some((_, ordinal)) = view.member_ranked(member, RankStyle::Ordinal) {
                    outcome.rank = ordinal;
                }
                if let Some(part) = view.partition_of_member(member) {
                    outcome.partition_rank = part
                        .member_ranked(member, RankStyle::Ordinal)
                        .map(|(_, ordinal)| ordinal);
                }
            }
        }
    }

    /// The period that takes a write or join at instant `target_us`: `period_not_retained`
    /// if it is older than the board keeps, counted back from its newest period.
    fn period_taking(&self, target_us: i64) -> Result<Period, BoardError> {
        if let Some((p, _)) = self.newest_holding(target_us) {
            // Nearly every write lands in the newest period: no calendar, no retention walk.
            return Ok(p.clone());
        }
        let newest = self.periods.last_key_value().map(|(_, (p, _))| p);
        let period = self.calendar().period_at(target_us)?;
        // Only a write older than the newest period can fall outside retention.
        if let Some(newest) = newest.filter(|n| period.start_us < n.start_us) {
            if period.start_us < self.window.retention_floor(newest).start_us {
                return Err(BoardError::PeriodNotRetained(period.id));
            }
        }
        Ok(period)
    }

    /// Prefetches what a write of `member` at `at_us` (into the period of `period_us`, if
    /// given, as [`BoardWrite`]) reads first, when it lands in the newest period — as
    /// nearly every write does ([`Ranking::prefetch_member`]). Changes nothing.
    pub fn prefetch_write(&self, member: &str, at_us: i64, period_us: Option<i64>, step: Prefetch) {
        if let Some((_, ranking)) = self.newest_holding(target_us(at_us, period_us)) {
            ranking.prefetch_member(member, step);
        }
    }

    /// Prefetches what a read of `member` in period `r` at `now_us` loads first, when `r`
    /// is the current period and the newest ([`Ranking::prefetch_member`]): the reads of
    /// a batch then wait for their misses together (`op::Each`). Changes nothing.
    pub fn prefetch_read(&self, member: &str, r: &PeriodRef, now_us: i64, step: Prefetch) {
        if step == Prefetch::TeamLeaf {
            return;
        }
        if let Some(ranking) = self
            .newest_if_current(r, now_us)
            .and_then(|p| self.ranking(p))
        {
            ranking.prefetch_member(member, step);
        }
    }

    /// The newest period and its ranking, when that period holds instant `target_us`.
    fn newest_holding(&self, target_us: i64) -> Option<&(Period, Ranking)> {
        self.periods
            .last_key_value()
            .map(|(_, entry)| entry)
            .filter(|(newest, _)| newest.contains(target_us))
    }

    /// The board's score rules, its columns' bounds, its entry rules and the memory
    /// budget, for a write landing in `period`; nothing to look up when none applies.
    fn check_rules(&self, period: &Period, w: &BoardWrite<'_>) -> Result<(), BoardError> {
        let config = &self.config;
        let rules = &config.settings.rules;
        let entry = &config.settings.entry;
        let columns_ruled = config.columns.iter().any(Column::has_rules);
        let seats = self.seats.get(&period.start_us);
        // Seats matter to a write only through members waiting with one (a cohort board
        // keeps seats for its cohorts alone).
        let seats_waiting = seats.is_some_and(|s| !s.waiting.is_empty());
        if rules.is_empty()
            && !columns_ruled
            && entry.is_empty()
            && !seats_waiting
            && w.over_budget.is_none()
        {
            return Ok(());
        }
        entry.check_window(w.at_us)?;
        let shape = self.shape;
        let ranking = self.ranking(period);
        let old = ranking.and_then(|r| r.scores_of(w.member));
        // A member who joined and has not played holds its seat: its first write adds no
        // member to what `max_members` counts.
        let waiting = seats.is_some_and(|s| s.is_waiting(w.member));
        if old.is_none() && !waiting && entry.join_required {
            return Err(BoardError::NotJoined {
                member: w.member.to_owned(),
                period: period.id.clone(),
            });
        }
        if let Some(max) = entry.max_attempts {
            if seats.map_or(0, |s| s.attempts_of(w.member)) >= max {
                return Err(BoardError::AttemptsExhausted {
                    member: w.member.to_owned(),
                    max,
                    period: period.id.clone(),
                });
            }
        }
        let new = shape.combine(w.op, old.as_ref(), &w.values)?;
        // The board-level rules bound the first (on a board of several: the only
        // allowed one, `max_members`, reads no score).
        let op = shape.effective(w.op).unwrap_or(config.update);
        let value = w.values.get(0).unwrap_or(0);
        let held = self.seats_held(period);
        let members = if waiting { held - 1 } else { held };
        rules.check(op, value, old.map(|o| o.first()), new.first(), members)?;
        check_columns(&config.columns, &shape, w.op, &w.values, old.as_ref(), &new)?;
        match w.over_budget {
            Some(over) if old.is_none() && !waiting => Err(over.refusal()),
            _ => Ok(()),
        }
    }

    /// Drops periods older than the retention window counted back from the newest period,
    /// by a write at `at_us`.
    fn enforce_retention(&mut self, at_us: i64) {
        let Some((_, (newest, _))) = self.periods.last_key_value() else {
            return;
        };
        let floor = self.window.retention_floor(newest).start_us;
        self.close_before_dropping(floor);
        self.grant_before_dropping(floor, at_us);
        self.periods.retain(|&start, _| start >= floor);
        self.seats.retain(|&start, _| start >= floor);
    }

    /// The period `r` names at `now_us`, by the calendar alone (it may hold no ranking:
    /// nothing written in it yet, or purged). See [`PeriodWindow::period_of`].
    pub fn resolve(&self, r: &PeriodRef, now_us: i64) -> Result<Period, BoardError> {
        match self.newest_if_current(r, now_us) {
            Some(p) => Ok(p.clone()),
            None => self.window.period_of(r, now_us),
        }
    }

    /// The newest period, if `r` is `current` and the newest period contains `now_us`: the
    /// common case, answered without the calendar or the window's cache.
    fn newest_if_current(&self, r: &PeriodRef, now_us: i64) -> Option<&Period> {
        let (_, (newest, _)) = self.periods.last_key_value()?;
        let now = now_us.clamp(0, crate::calendar::MAX_INSTANT_US);
        (*r == PeriodRef::Current && newest.contains(now)).then_some(newest)
    }

    /// What a reader at `now_us` sees of period `r`: the period and its ranking, if any.
    /// The current period always resolves (empty before its first write); any other period
    /// without a ranking, or older than the window, is `period_not_found`.
    pub fn read(
        &self,
        r: &PeriodRef,
        now_us: i64,
    ) -> Result<(Period, Option<&Ranking>), BoardError> {
        if let Some(p) = self.newest_if_current(r, now_us) {
            return Ok((p.clone(), self.ranking(p)));
        }
        let resolved = self.window.resolve(r, now_us)?;
        let ranking = self.ranking(&resolved.period);
        if ranking.is_none() && !resolved.is_current {
            return Err(BoardError::PeriodNotFound(resolved.period.id));
        }
        Ok((resolved.period, ranking))
    }

    /// Whether the board has partitions (docs/SPEC.md §17).
    pub fn is_partitioned(&self) -> bool {
        self.config.partitions.is_some()
    }

    /// Whether the board has teams (docs/SPEC.md §17).
    pub fn has_teams(&self) -> bool {
        self.config.teams.is_some()
    }

    /// The ranking of `period`, if one exists.
    pub fn ranking(&self, period: &Period) -> Option<&Ranking> {
        self.periods.get(&period.start_us).map(|(_, r)| r)
    }

    /// The ranking of `period`, mutably, if one exists.
    pub fn ranking_mut(&mut self, period: &Period) -> Option<&mut Ranking> {
        self.periods.get_mut(&period.start_us).map(|(_, r)| r)
    }

    /// Puts an imported ranking in place for `period`: on a cohort board its members
    /// arrive in rank order (an import is their first entry).
    pub fn import_ranking(&mut self, period: Period, ranking: Ranking) {
        if self.config.cohort_size.is_some() {
            let mut members = Vec::new();
            ranking.for_each_entry(|member, _, _, _, _| members.push(Box::<str>::from(member)));
            for member in &members {
                self.arrive(period.start_us, member);
            }
        }
        self.insert_ranking(period, ranking);
    }

    /// Puts a ranking in place for `period` (snapshot loading), its hidden members marked
    /// and its teams' sums counted without them. A ranking built without partitions or
    /// teams gets the board's (empty: its members' come after,
    /// [`Ranking::load_partitions`], [`Ranking::load_teams`]).
    pub fn insert_ranking(&mut self, period: Period, mut ranking: Ranking) {
        if let (Some(p), false) = (self.config.partitions, ranking.is_partitioned()) {
            ranking = ranking.with_partitions(Some(p.max));
        }
        if let (Some(t), false) = (self.config.teams, ranking.has_teams()) {
            ranking = ranking.with_teams(Some(t.max_size));
        }
        self.mark_hidden_in(&mut ranking);
        ranking.recount_teams();
        self.periods.insert(period.start_us, (period, ranking));
    }

    /// The periods that hold a ranking, newest first, with their member counts.
    pub fn periods(&self) -> impl Iterator<Item = (&Period, &Ranking)> {
        self.periods.values().rev().map(|(p, r)| (p, r))
    }

    /// An estimate of the board's size in memory, over all retained periods.
    pub fn estimated_bytes(&self) -> u64 {
        self.periods
            .values()
            .map(|(_, r)| r.estimated_bytes())
            .sum()
    }

    /// Total members over all retained periods.
    pub fn total_members(&self) -> u64 {
        self.periods.values().map(|(_, r)| r.len()).sum()
    }
}

mod erase;
mod hidden;
mod league;
mod rewards;
mod seats;

pub use hidden::HideScope;

#[cfg(test)]
pub(crate) mod tests;
