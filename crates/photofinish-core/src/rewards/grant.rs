//! Grants (docs/SPEC.md §16): what a period's close paid each member, how a claim marks
//! one (once), a board's grants by period with each member's indexed, those a close is
//! making step by step, and grant ids.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A grant (docs/SPEC.md §16), as a board keeps it: its number in its period's grants is
/// its place there, from 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The member paid.
    pub member: String,
    /// Its ordinal rank at the close (in its cohort, on a cohort board).
    pub rank: u64,
    /// The reward's id.
    pub reward: String,
    /// How many.
    pub amount: u64,
    /// When it was granted: the close's instant, µs.
    pub granted_at_us: i64,
    /// When it may no longer be claimed, µs.
    pub expires_at_us: i64,
    /// When it was claimed, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_at_us: Option<i64>,
    /// Who claimed it: a key's name, or `player`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
    /// On a cohort board, the cohort it was ranked in (its tier's name, on a league
    /// board, and its number): what the close's post of that cohort carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort: Option<(Option<String>, u32)>,
}

impl Grant {
    /// Whether its member was erased (docs/SPEC.md §16): it stays, nameless, so the
    /// period's later grants keep their numbers, and no read lists it.
    pub fn is_erased(&self) -> bool {
        self.member.is_empty()
    }

    /// Its status at `now_us`: `claimed`, `expired` (unclaimed past `expires_at`) or
    /// `unclaimed`.
    pub fn status(&self, now_us: i64) -> GrantStatus {
        if self.claimed_at_us.is_some() {
            GrantStatus::Claimed
        } else if now_us >= self.expires_at_us {
            GrantStatus::Expired
        } else {
            GrantStatus::Unclaimed
        }
    }
}

/// A grant as it is answered: with its id, board and period (docs/SPEC.md §16).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantState {
    /// `<board>:<period>:<n>`.
    pub id: String,
    /// The board.
    pub board: String,
    /// The period's id.
    pub period: String,
    /// The grant.
    #[serde(flatten)]
    pub grant: Grant,
}

impl GrantState {
    /// Grant `n` of `period` on `board`.
    pub fn new(board: &str, period: &str, n: u64, grant: Grant) -> Self {
        Self {
            id: grant_id(board, period, n),
            board: board.to_owned(),
            period: period.to_owned(),
            grant,
        }
    }
}

/// What a member's rewards read asks for (`status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantStatus {
    /// Not claimed and not expired.
    Unclaimed,
    /// Claimed.
    Claimed,
    /// Not claimed, past `expires_at`.
    Expired,
}

impl GrantStatus {
    /// `unclaimed`, `claimed` or `expired`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "unclaimed" => Some(Self::Unclaimed),
            "claimed" => Some(Self::Claimed),
            "expired" => Some(Self::Expired),
            _ => None,
        }
    }
}

/// One period's grants: made once, at its close.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodGrants {
    /// The period's id.
    pub period: String,
    /// The grants, in (tier, cohort, rank) order: grant `n` is `grants[n - 1]`.
    pub grants: Vec<Grant>,
    /// Grants the limit left out.
    #[serde(default)]
    pub cut: u64,
}

impl PeriodGrants {
    /// Claims grant `n` for `member` at `at_us` by `by`: `reward_not_found` for an
    /// unknown grant or another member's, `already_claimed` (with the grant) once
    /// claimed, `reward_expired` at or past its `expires_at`.
    pub fn claim(
        &mut self,
        n: u64,
        member: &str,
        by: &str,
        at_us: i64,
    ) -> Result<&Grant, ClaimRefused> {
        let grant = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| self.grants.get_mut(i))
            .filter(|g| g.member == member)
            .ok_or(ClaimRefused::NotFound)?;
        if grant.claimed_at_us.is_some() {
            return Err(ClaimRefused::Claimed(Box::new(grant.clone())));
        }
        if at_us >= grant.expires_at_us {
            return Err(ClaimRefused::Expired(grant.expires_at_us));
        }
        grant.claimed_at_us = Some(at_us);
        grant.claimed_by = Some(by.to_owned());
        Ok(grant)
    }
}

/// Why a claim was refused ([`PeriodGrants::claim`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimRefused {
    /// No such grant for the member.
    NotFound,
    /// Claimed before: the grant.
    Claimed(Box<Grant>),
    /// Past its `expires_at` (µs).
    Expired(i64),
}

/// A period's grants while its close makes them, step by step (docs/SPEC.md §16): each
/// step of the close goes through a bounded part of the period's standings, so no step
/// holds the writer long. They are read nowhere until the last step puts them among the
/// board's; each step's grants are indexed by member as it makes them, so that costs
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Making {
    /// The period's start, µs.
    pub start_us: i64,
    /// The close's instant, µs: the first step's, every grant's `granted_at`.
    pub at_us: i64,
    /// Where the next step begins: the cohorts gone through, on a cohort board; else the
    /// ranks.
    pub next: u64,
    /// The grants made so far, and those the limit cut.
    pub grants: PeriodGrants,
}

/// What one step of a period's grants made ([`Rewards::add_step`]).
#[derive(Debug, Default)]
pub struct GrantStep {
    /// The grants, in order.
    pub grants: Vec<Grant>,
    /// Grants the limit cut.
    pub cut: u64,
    /// Where the next step begins ([`Making::next`]).
    pub next: u64,
    /// Whether the period's grants are all made.
    pub done: bool,
}

/// A board's grants: every period's that closed with rows (a period is paid once: its
/// entry here says so, empty when nobody qualified), the period's whose close is making
/// them ([`Making`]), and the instant its rows were set where the board had none (a
/// period that closed before owes nothing). Each member's grants are indexed, so a
/// member's read costs its own grants, not the board's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RewardsRecord", into = "RewardsRecord")]
pub struct Rewards {
    /// Closes at or before this instant (µs) owe nothing: they closed without rows.
    pub rows_since_us: i64,
    /// The grants by period start.
    pub periods: BTreeMap<i64, PeriodGrants>,
    /// The grants being made.
    making: Option<Making>,
    /// Each member's grants, those being made too: (period start, index in its grants).
    by_member: hashbrown::HashMap<String, Vec<(i64, u32)>>,
}

/// [`Rewards`] as a snapshot holds it: without the index, which is rebuilt.
#[derive(Serialize, Deserialize)]
struct RewardsRecord {
    rows_since_us: i64,
    periods: BTreeMap<i64, PeriodGrants>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    making: Option<Making>,
}

impl From<RewardsRecord> for Rewards {
    fn from(r: RewardsRecord) -> Self {
        let mut out = Rewards {
            rows_since_us: r.rows_since_us,
            ..Rewards::default()
        };
        for (start, grants) in r.periods {
            out.insert(start, grants);
        }
        if let Some(m) = &r.making {
            out.index(m.start_us, &m.grants.grants, 0);
        }
        out.making = r.making;
        out
    }
}

impl From<Rewards> for RewardsRecord {
    fn from(r: Rewards) -> Self {
        RewardsRecord {
            rows_since_us: r.rows_since_us,
            periods: r.periods,
            making: r.making,
        }
    }
}

impl Default for Rewards {
    fn default() -> Self {
        Self {
            rows_since_us: i64::MIN,
            periods: BTreeMap::new(),
            making: None,
            by_member: hashbrown::HashMap::new(),
        }
    }
}

impl Rewards {
    /// Whether it holds nothing a snapshot must keep.
    pub fn is_empty(&self) -> bool {
        self.periods.is_empty() && self.making.is_none() && self.rows_since_us == i64::MIN
    }

    /// Keeps the grants of the period starting at `start`.
    pub fn insert(&mut self, start: i64, grants: PeriodGrants) {
        self.index(start, &grants.grants, 0);
        self.periods.insert(start, grants);
    }

    /// Indexes `grants`, numbered from `base`, of the period starting at `start`.
    fn index(&mut self, start: i64, grants: &[Grant], base: usize) {
        // Room for every member at once: a close of 100,000 grants grows the index once,
        // not seventeen times (each a rehash into fresh pages).
        self.by_member.reserve(grants.len());
        for (i, g) in grants.iter().enumerate() {
            if g.is_erased() {
                continue;
            }
            self.by_member
                .entry(g.member.clone())
                .or_default()
                .push((start, (base + i) as u32));
        }
    }

    /// The grants being made, if a close is making some.
    pub fn making(&self) -> Option<&Making> {
        self.making.as_ref()
    }

    /// The grants of `period` (its start and id) being made — begun at `at_us` if none
    /// are — with where its next step begins.
    pub fn begin(&mut self, start_us: i64, period: &str, at_us: i64) -> &Making {
        self.making.get_or_insert_with(|| Making {
            start_us,
            at_us,
            next: 0,
            grants: PeriodGrants {
                period: period.to_owned(),
                ..PeriodGrants::default()
            },
        })
    }

    /// Adds a step's grants to those being made; when it is the last, they are the
    /// period's grants from now on. Whether they are.
    pub fn add_step(&mut self, step: GrantStep) -> bool {
        let Some(mut making) = self.making.take() else {
            return true;
        };
        self.index(making.start_us, &step.grants, making.grants.grants.len());
        making.grants.grants.extend(step.grants);
        making.grants.cut += step.cut;
        making.next = step.next;
        if step.done {
            self.periods.insert(making.start_us, making.grants);
        } else {
            self.making = Some(making);
        }
        step.done
    }

    /// Drops the grants of periods before `floor` that none may claim at `at_us` any more
    /// (each expired): a dropped period's grants stay readable while one may be claimed.
    pub fn drop_spent(&mut self, floor: i64, at_us: i64) {
        let spent: Vec<i64> = self
            .periods
            .range(..floor)
            .filter(|(_, p)| p.grants.iter().all(|g| g.expires_at_us <= at_us))
            .map(|(&start, _)| start)
            .collect();
        if spent.is_empty() {
            return;
        }
        for start in &spent {
            self.periods.remove(start);
        }
        self.by_member.retain(|_, at| {
            at.retain(|(s, _)| !spent.contains(s));
            !at.is_empty()
        });
    }

    /// Takes `member` out of its grants (docs/SPEC.md §16): each stays nameless
    /// ([`Grant::is_erased`]), with no claimant's name either; how many it had.
    pub fn erase(&mut self, member: &str) -> u64 {
        let Some(at) = self.by_member.remove(member) else {
            return 0;
        };
        let grants = at.len() as u64;
        for (start, i) in at {
            let making = self.making.as_mut().filter(|m| m.start_us == start);
            let grant = match making {
                Some(m) => Some(&mut m.grants),
                None => self.periods.get_mut(&start),
            }
            .and_then(|p| p.grants.get_mut(i as usize));
            if let Some(g) = grant {
                g.member.clear();
                g.claimed_by = None;
            }
        }
        grants
    }

    /// The members holding a grant, by name.
    pub fn members(&self) -> impl Iterator<Item = &str> {
        self.by_member.keys().map(String::as_str)
    }

    /// The grants of the period whose id is `period`.
    pub fn period(&self, period: &str) -> Option<(i64, &PeriodGrants)> {
        self.periods
            .iter()
            .rev()
            .find(|(_, p)| p.period == period)
            .map(|(&s, p)| (s, p))
    }

    /// The grants of the period whose id is `period`, to claim one.
    pub fn period_mut(&mut self, period: &str) -> Option<&mut PeriodGrants> {
        self.periods.values_mut().rev().find(|p| p.period == period)
    }

    /// `member`'s grants, newest first: each with its period's id and its number there.
    pub fn of_member(&self, member: &str) -> Vec<(&str, u64, &Grant)> {
        let Some(at) = self.by_member.get(member) else {
            return Vec::new();
        };
        let mut out: Vec<(i64, &str, u64, &Grant)> = at
            .iter()
            .filter_map(|&(start, i)| {
                let p = self.periods.get(&start)?;
                let g = p.grants.get(i as usize)?;
                Some((start, p.period.as_str(), u64::from(i) + 1, g))
            })
            .collect();
        // Newest first: by the instant granted, then the later period, then grant order.
        out.sort_by(|a, b| (b.3.granted_at_us, b.0, a.2).cmp(&(a.3.granted_at_us, a.0, b.2)));
        out.into_iter().map(|(_, p, n, g)| (p, n, g)).collect()
    }
}

/// A grant's id, `<board>:<period>:<n>`.
pub fn grant_id(board: &str, period: &str, n: u64) -> String {
    format!("{board}:{period}:{n}")
}

/// A grant id's parts: board, period and number. Board names and period ids hold no `:`.
pub fn parse_grant_id(id: &str) -> Option<(&str, &str, u64)> {
    let (board, rest) = id.split_once(':')?;
    let (period, n) = rest.split_once(':')?;
    let n = n.parse().ok().filter(|&n| n >= 1 && !period.is_empty())?;
    Some((board, period, n))
}
