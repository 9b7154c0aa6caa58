//! Cohorts (docs/SPEC.md §14): on a board with `cohort_size`, each period splits its
//! members into groups of that size, in arrival order per tier — cohort 1 of a tier takes
//! its first `cohort_size` members, cohort 2 the next, and so on — and each group is
//! ranked on its own. A member arrives at its first accepted write or its join in the
//! period, and its cohort is then fixed for the period.
//!
//! A period's [`Cohorts`] keep, per tier, the members in arrival order (so cohort `k` is a
//! slice of that list: no cohort is ever over its size, and no member is in two) and each
//! member's place. What a cohort's standings are is the period's ranking, read for the
//! cohort's members alone ([`crate::Ranking::rank_among`]): O(cohort size) lookups, no
//! second index to keep.

use std::hash::BuildHasher;

use hashbrown::DefaultHashBuilder;

use crate::ranking::members::MemberTable;

use crate::error::BoardError;

/// Smallest `cohort_size`.
pub const MIN_COHORT_SIZE: u32 = 2;
/// Largest `cohort_size`: a cohort's standings are sorted on each read.
pub const MAX_COHORT_SIZE: u32 = 10_000;

/// Checks a board's `cohort_size`.
pub fn validate_cohort_size(size: Option<u32>) -> Result<(), BoardError> {
    match size {
        Some(n) if !(MIN_COHORT_SIZE..=MAX_COHORT_SIZE).contains(&n) => {
            Err(BoardError::InvalidConfig(format!(
                "cohort_size {n} is outside {MIN_COHORT_SIZE}..={MAX_COHORT_SIZE}"
            )))
        }
        _ => Ok(()),
    }
}

/// Where a member sits in a period: its tier (0 on a board without a league) and its
/// cohort (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    /// The tier's index in the league's tiers (0 without a league).
    pub tier: u16,
    /// The cohort, from 1.
    pub cohort: u32,
}

/// Names in one buffer, each found by where it ends: appended, never removed (a seat is
/// kept for the period).
#[derive(Debug, Clone, Default)]
struct Names {
    text: String,
    ends: Vec<usize>,
}

impl Names {
    fn len(&self) -> usize {
        self.ends.len()
    }
    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    fn push(&mut self, name: &str) {
        self.text.push_str(name);
        self.ends.push(self.text.len());
    }
    /// Name `i`.
    fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

/// The tier a waiting member's seat names: it has no cohort yet.
const WAITING: u16 = u16::MAX;

/// A period's cohorts. See the module docs.
///
/// Every member's name is kept once (`Names`: one buffer in arrival order, no allocation
/// per member); the rest hold indexes into it, and the look-up by name is a table of those indexes (hashbrown's default
/// hasher, foldhash: every first write on a cohort board inserts here, so one
/// allocation, one hash and a table of 4-byte slots is most of what a cohort adds to it).
#[derive(Debug, Clone, Default)]
pub struct Cohorts {
    /// Every member seated, in arrival order (waiting ones included).
    names: Names,
    /// Per member (as `names`): its tier and its ordinal in that tier's arrivals
    /// (`WAITING` and its position among the waiting while it waits).
    seats: Vec<(u16, u32)>,
    /// Per tier, its members (indexes) in arrival order.
    arrivals: Vec<Vec<u32>>,
    /// On a league board, members (indexes) that arrived while an earlier period's close
    /// was still due, in arrival order: their tier, so their cohort, waits for that close
    /// (docs/competitions.md).
    waiting: Vec<u32>,
    /// Name → index into `names`: the rankings' member table (one 8-byte slot holds 32
    /// hash bits and the index, so a look-up is one cache miss, a growing table re-places
    /// its slots without reading a name back, and a first write can prefetch its slot).
    index: MemberTable,
    hasher: DefaultHashBuilder,
}

/// Equal when every tier seats the same members in the same order and the same wait
/// (whatever order the names were stored in: a snapshot restores them tier by tier).
impl PartialEq for Cohorts {
    fn eq(&self, other: &Self) -> bool {
        self.arrivals() == other.arrivals() && self.waiting() == other.waiting()
    }
}

impl Eq for Cohorts {}

impl Cohorts {
    /// Whether nobody arrived.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// `member`'s hash, as the index takes it.
    fn hash(&self, member: &str) -> u64 {
        self.hasher.hash_one(member)
    }

    /// Prefetches where `member`'s look-up starts (see [`crate::prefetch`]): a first write
    /// asks before its ranking's work, so its seat is taken from cache after.
    pub fn prefetch(&self, member: &str) {
        self.index.prefetch(self.hash(member));
    }

    /// `member`'s index, if it has a seat (`h`: its [`Self::hash`]).
    fn find_hashed(&self, member: &str, h: u64) -> Option<u32> {
        let names = &self.names;
        self.index.find(h, |i| names.get(i) == member)
    }

    /// `member`'s index, if it has a seat.
    fn find(&self, member: &str) -> Option<u32> {
        self.find_hashed(member, self.hash(member))
    }

    /// Seats `member` (known to have no seat; `h` its hash) with `seat`; its index.
    fn seat(&mut self, member: &str, h: u64, seat: (u16, u32)) -> u32 {
        let i = self.names.len() as u32;
        self.names.push(member);
        self.seats.push(seat);
        let names = &self.names;
        // Known absent: the insert cannot find it there.
        let _ = self.index.insert(h, i, |j| names.get(j) == member);
        i
    }

    /// Places `member` in the open cohort of `tier` if it has no seat yet; its place
    /// either way (`None` while it waits for its tier).
    pub fn place(&mut self, member: &str, tier: u16, size: u32) -> Option<Place> {
        let h = self.hash(member);
        if let Some(i) = self.find_hashed(member, h) {
            return self.place_at(i, size);
        }
        let ordinal = self.next_ordinal(tier);
        let i = self.seat(member, h, (tier, ordinal));
        self.arrivals[usize::from(tier)].push(i);
        Some(Place {
            tier,
            cohort: ordinal / size + 1,
        })
    }

    /// The ordinal the next arrival in `tier` takes (its list made if it had none).
    fn next_ordinal(&mut self, tier: u16) -> u32 {
        let t = usize::from(tier);
        if self.arrivals.len() <= t {
            self.arrivals.resize_with(t + 1, Vec::new);
        }
        self.arrivals[t].len() as u32
    }

    /// Seats `member`, if it has no seat yet, among those waiting for their tier.
    pub fn wait(&mut self, member: &str) {
        let h = self.hash(member);
        if self.find_hashed(member, h).is_none() {
            let i = self.seat(member, h, (WAITING, self.waiting.len() as u32));
            self.waiting.push(i);
        }
    }

    /// Whether `member` waits for its tier.
    pub fn is_waiting(&self, member: &str) -> bool {
        self.find(member)
            .is_some_and(|i| self.seats[i as usize].0 == WAITING)
    }

    /// Places every waiting member, in arrival order, in its tier (`tier_of`) now known.
    pub fn settle(&mut self, tier_of: impl Fn(&str) -> u16) {
        for i in std::mem::take(&mut self.waiting) {
            let tier = tier_of(self.names.get(i));
            let ordinal = self.next_ordinal(tier);
            self.seats[i as usize] = (tier, ordinal);
            self.arrivals[usize::from(tier)].push(i);
        }
    }

    /// The members waiting for their tier, in arrival order (the snapshot's).
    pub fn waiting(&self) -> Vec<&str> {
        self.waiting.iter().map(|&i| self.names.get(i)).collect()
    }

    /// `member`'s place, if it arrived and does not wait for its tier.
    pub fn place_of(&self, member: &str, size: u32) -> Option<Place> {
        self.place_at(self.find(member)?, size)
    }

    /// The place of the member at index `i`, unless it waits.
    fn place_at(&self, i: u32, size: u32) -> Option<Place> {
        let (tier, ordinal) = self.seats[i as usize];
        (tier != WAITING).then_some(Place {
            tier,
            cohort: ordinal / size + 1,
        })
    }

    /// The members of cohort `place`, in arrival order (empty if it has none).
    pub fn members(&self, place: Place, size: u32) -> Vec<&str> {
        let Some(list) = self.arrivals.get(usize::from(place.tier)) else {
            return Vec::new();
        };
        let from = (u64::from(place.cohort.saturating_sub(1)) * u64::from(size)) as usize;
        let to = from.saturating_add(size as usize).min(list.len());
        list.get(from..to)
            .unwrap_or(&[])
            .iter()
            .map(|&i| self.names.get(i))
            .collect()
    }

    /// Every cohort with its member count, by tier then number (`tier`: only that one).
    pub fn list(&self, size: u32, tier: Option<u16>) -> Vec<(Place, u32)> {
        let mut out = Vec::new();
        for (t, list) in self.arrivals.iter().enumerate() {
            let t = t as u16;
            if tier.is_some_and(|only| only != t) {
                continue;
            }
            let n = list.len() as u32;
            for k in 0..n.div_ceil(size) {
                let members = (n - k * size).min(size);
                out.push((
                    Place {
                        tier: t,
                        cohort: k + 1,
                    },
                    members,
                ));
            }
        }
        out
    }

    /// Per tier, its members in arrival order (the snapshot's).
    pub fn arrivals(&self) -> Vec<(u16, Vec<&str>)> {
        self.arrivals
            .iter()
            .enumerate()
            .map(|(t, l)| {
                let names = l.iter().map(|&i| self.names.get(i)).collect();
                (t as u16, names)
            })
            .collect()
    }

    /// Appends `member` to tier `tier`'s arrivals (snapshot loading, in arrival order).
    pub fn restore(&mut self, tier: u16, member: &str) {
        let h = self.hash(member);
        if self.find_hashed(member, h).is_none() {
            let ordinal = self.next_ordinal(tier);
            let i = self.seat(member, h, (tier, ordinal));
            self.arrivals[usize::from(tier)].push(i);
        }
    }

    /// Appends `member` to those waiting (snapshot loading, in arrival order).
    pub fn restore_waiting(&mut self, member: &str) {
        self.wait(member);
    }

    /// Whether `name` is a seat's that [`Self::forget`] took the name out of: a control
    /// character is in no member name, so these start with `\0`.
    pub fn is_nameless(name: &str) -> bool {
        name.starts_with('\0')
    }

    /// Takes `member`'s name out of its seat, which stays taken under a name no member can
    /// have (docs/SPEC.md §16: an erased member's cohort seat stays counted for the
    /// period); whether it had one. Every other seat keeps its place.
    pub fn forget(&mut self, member: &str) -> bool {
        if self.find(member).is_none() {
            return false;
        }
        // `\0` and a number unique here (`is_nameless`).
        let nameless = (0..self.names.len() as u32)
            .filter(|&i| Self::is_nameless(self.names.get(i)))
            .count();
        let nameless = format!("\0{nameless}");
        let rename = |name: &str| {
            if name == member {
                nameless.clone()
            } else {
                name.to_owned()
            }
        };
        let mut out = Cohorts::default();
        for (tier, names) in self.arrivals() {
            // A tier with no arrivals keeps its (empty) list, as ordinals count from it.
            out.next_ordinal(tier);
            for name in names {
                out.restore(tier, &rename(name));
            }
        }
        for name in self.waiting() {
            out.restore_waiting(&rename(name));
        }
        *self = out;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cohorts_fill_in_arrival_order_and_places_are_fixed() {
        let mut c = Cohorts::default();
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let places: Vec<u32> = names
            .iter()
            .map(|m| c.place(m, 0, 3).map_or(0, |p| p.cohort))
            .collect();
        assert_eq!(places, [1, 1, 1, 2, 2, 2, 3]);
        // A second arrival of a member keeps its place and takes no new one.
        assert_eq!(c.place("a", 0, 3).map(|p| p.cohort), Some(1));
        assert_eq!(c.list(3, None).len(), 3);
        let third = Place { tier: 0, cohort: 3 };
        assert_eq!(c.members(third, 3), ["g"]);
        assert_eq!(
            c.list(3, None)
                .iter()
                .map(|(p, n)| (p.cohort, *n))
                .collect::<Vec<_>>(),
            [(1, 3), (2, 3), (3, 1)]
        );
        assert!(c.members(Place { tier: 0, cohort: 9 }, 3).is_empty());
        assert!(c.members(Place { tier: 4, cohort: 1 }, 3).is_empty());
        // Tiers fill apart.
        assert_eq!(c.place("z", 2, 3), Some(Place { tier: 2, cohort: 1 }));
        assert_eq!(c.list(3, Some(2)), [(Place { tier: 2, cohort: 1 }, 1)]);
        // What a snapshot keeps gives the same places back.
        let mut r = Cohorts::default();
        for (t, list) in c.arrivals() {
            for m in list {
                r.restore(t, m);
            }
        }
        assert_eq!(r, c);
    }

    #[test]
    fn waiting_members_take_their_cohorts_in_arrival_order_once_settled() {
        let mut c = Cohorts::default();
        c.place("a", 0, 2);
        c.wait("w1");
        c.wait("w2");
        c.wait("w1");
        c.wait("w3");
        assert!(c.is_waiting("w1") && c.place_of("w1", 2).is_none());
        // A waiting member is not placed by a later arrival of its own.
        assert_eq!(c.place("w2", 0, 2), None);
        assert_eq!(c.list(2, None), [(Place { tier: 0, cohort: 1 }, 1)]);
        c.settle(|m| if m == "w2" { 1 } else { 0 });
        assert!(c.waiting().is_empty());
        assert_eq!(c.place_of("w1", 2), Some(Place { tier: 0, cohort: 1 }));
        assert_eq!(c.place_of("w3", 2), Some(Place { tier: 0, cohort: 2 }));
        assert_eq!(c.place_of("w2", 2), Some(Place { tier: 1, cohort: 1 }));
    }

    #[test]
    fn sizes_outside_the_range_are_invalid_config() {
        for bad in [0, 1, MAX_COHORT_SIZE + 1] {
            let e = validate_cohort_size(Some(bad)).expect_err("refused");
            assert_eq!(e.code().as_str(), "invalid_config");
        }
        assert!(validate_cohort_size(Some(2)).is_ok() && validate_cohort_size(None).is_ok());
    }
}
