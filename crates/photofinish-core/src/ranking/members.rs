//! The member table: a member name's 64-bit hash → its record id, by open addressing with
//! linear probing over one flat array of `u64` slots, each `(low 32 bits of the hash) << 32
//! | (id + 1)` (0 is empty).
//!
//! Tag and id share a slot, so a lookup's first cache miss brings both: a table that keeps
//! its tags apart from its ids (hashbrown's control bytes) waits for two misses before it
//! can read the record (docs/bench-history.md §13). The slot's 32 hash bits are also where the
//! slot belongs (its home is `bits × capacity / 2^32`), so a removal shifts the slots after
//! it back without a tombstone, and growing re-places every slot — neither reads a record.
//! Names are compared only on a 32-bit tag match, through the caller's `eq`.

/// The table grows past this share of slots taken (17/20 = 0.85): a lookup of a present
/// member then probes ~3.8 slots on average — one cache line, mostly.
const MAX_LOAD: (usize, usize) = (17, 20);
/// The smallest table that holds anything.
const MIN_SLOTS: usize = 16;
const EMPTY: u64 = 0;

/// Member-name hash → record id. See the module docs.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemberTable {
    slots: Vec<u64>,
    len: usize,
}

#[inline]
fn tag(hash: u64) -> u32 {
    hash as u32
}

#[inline]
fn slot_of(tag: u32, id: u32) -> u64 {
    (u64::from(tag) << 32) | (u64::from(id) + 1)
}

#[inline]
fn slot_tag(slot: u64) -> u32 {
    (slot >> 32) as u32
}

#[inline]
fn slot_id(slot: u64) -> u32 {
    (slot as u32).wrapping_sub(1)
}

/// Where a slot with `tag` belongs in a table of `slots` slots (in `u128`: a table past
/// 2^32 slots, ~1.8 billion members, must not overflow the product).
#[inline]
fn home(tag: u32, slots: usize) -> usize {
    ((u128::from(tag) * slots as u128) >> 32) as usize
}

/// The slot after `i` in a table of `n`, wrapping around the end.
#[inline]
fn next_slot(i: usize, n: usize) -> usize {
    if i + 1 == n {
        0
    } else {
        i + 1
    }
}

/// Slots a table needs to hold `n` members under the load limit.
fn slots_for(n: usize) -> usize {
    (n * MAX_LOAD.1)
        .div_ceil(MAX_LOAD.0)
        .max(n + 1)
        .max(MIN_SLOTS)
}

impl MemberTable {
    /// Members held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether no member is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the slot array.
    pub(super) fn reserved_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<u64>()
    }

    /// The ids held, in slot order.
    pub(super) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .filter(|&&s| s != EMPTY)
            .map(|&s| slot_id(s))
    }

    /// Where a hash's probe starts, as a number in `0..runs` that grows with the slot: a
    /// bulk fill grouped by it touches one stretch of the table at a time.
    pub(super) fn run_of(hash: u64, runs: usize) -> usize {
        home(tag(hash), runs)
    }

    /// The id whose name has `hash` and satisfies `eq`.
    #[inline]
    pub(crate) fn find(&self, hash: u64, eq: impl Fn(u32) -> bool) -> Option<u32> {
        self.position(hash, eq).map(|i| slot_id(self.slots[i]))
    }

    /// Prefetches the slot where `hash`'s probe starts (see [`crate::prefetch`]).
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        if let Some(s) = self.slots.get(home(tag(hash), self.slots.len())) {
            crate::prefetch::prefetch(s);
        }
    }

    /// The first id on `hash`'s probe whose slot has its tag, unconfirmed: the record a
    /// batch prefetches before it compares names (a 32-bit tag is nearly always right).
    #[inline]
    pub(super) fn candidate(&self, hash: u64) -> Option<u32> {
        self.position(hash, |_| true)
            .map(|i| slot_id(self.slots[i]))
    }

    fn position(&self, hash: u64, eq: impl Fn(u32) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(tag(hash), eq).ok()
    }

    /// The probe for `tag` from its home, in a table with slots: `Ok` the slot of the
    /// member that satisfies `eq`, or `Err` the empty slot where the probe ends — where an
    /// insert goes. The load limit keeps a slot empty, so the probe ends.
    fn probe(&self, tag: u32, eq: impl Fn(u32) -> bool) -> Result<usize, usize> {
        let n = self.slots.len();
        let mut i = home(tag, n);
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return Err(i);
            }
            if slot_tag(s) == tag && eq(slot_id(s)) {
                return Ok(i);
            }
            i = next_slot(i, n);
        }
    }

    /// Makes room for `additional` more members without growing on the way.
    pub(super) fn reserve(&mut self, additional: usize) {
        let want = slots_for(self.len + additional);
        if want > self.slots.len() {
            self.resize(want);
        }
    }

    /// Adds `id` under `hash` unless a member satisfying `eq` is there: then its id.
    pub(crate) fn insert(
        &mut self,
        hash: u64,
        id: u32,
        eq: impl Fn(u32) -> bool,
    ) -> Result<(), u32> {
        if slots_for(self.len + 1) > self.slots.len() {
            self.resize(slots_for((self.len + 1) * 2));
        }
        match self.probe(tag(hash), eq) {
            Ok(i) => Err(slot_id(self.slots[i])),
            Err(i) => {
                self.slots[i] = slot_of(tag(hash), id);
                self.len += 1;
                Ok(())
            }
        }
    }

    /// Removes the member under `hash` that satisfies `eq`, and returns its id. The slots
    /// after it move back into the gap when their home allows, so no probe ever has to
    /// step over a removed slot.
    pub(super) fn remove(&mut self, hash: u64, eq: impl Fn(u32) -> bool) -> Option<u32> {
        let mut hole = self.position(hash, eq)?;
        let id = slot_id(self.slots[hole]);
        let n = self.slots.len();
        let mut j = hole;
        loop {
            j = next_slot(j, n);
            let s = self.slots[j];
            if s == EMPTY {
                break;
            }
            // The slot at j may fill the hole unless its home lies cyclically in (hole, j].
            let h = home(slot_tag(s), n);
            let stays = if hole <= j {
                hole < h && h <= j
            } else {
                hole < h || h <= j
            };
            if !stays {
                self.slots[hole] = s;
                hole = j;
            }
        }
        self.slots[hole] = EMPTY;
        self.len -= 1;
        Some(id)
    }

    /// Re-places every slot into a table of `n` slots (from the stored bits alone).
    fn resize(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; n]);
        for s in old.into_iter().filter(|&s| s != EMPTY) {
            // No two slots are one member: the probe only needs the first empty slot.
            if let Err(i) = self.probe(slot_tag(s), |_| false) {
                self.slots[i] = s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// Hashes that collide on purpose: `distinct` values spread over few tags and homes.
    fn hash_of(name: u16, spread: u8) -> u64 {
        let h = u64::from(name) % u64::from(spread.max(1));
        h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (h << 40)
    }

    /// "The record `id` is named `name`", for a table's `eq`.
    fn named(names: &HashMap<u32, u16>, name: u16) -> impl Fn(u32) -> bool + '_ {
        move |id| names.get(&id) == Some(&name)
    }

    proptest! {
        /// Against a HashMap model, under heavy tag and home collisions: inserts (and
        /// refusals of a present name), removals with the back shift, lookups, growth.
        #[test]
        fn the_table_is_a_map(
            ops in prop::collection::vec((0u8..3, 0u16..300), 0..2000),
            spread in 1u8..40,
        ) {
            let mut t = MemberTable::default();
            // id → name, and name → id (the model).
            let mut names: HashMap<u32, u16> = HashMap::new();
            let mut model: HashMap<u16, u32> = HashMap::new();
            let mut next_id = 0u32;
            for (op, name) in ops {
                let h = hash_of(name, spread);
                match op {
                    0 => {
                        let id = next_id;
                        next_id += 1;
                        let got = t.insert(h, id, named(&names, name));
                        match model.get(&name) {
                            Some(&old) => prop_assert_eq!(got, Err(old)),
                            None => {
                                prop_assert_eq!(got, Ok(()));
                                model.insert(name, id);
                                names.insert(id, name);
                            }
                        }
                    }
                    1 => {
                        let got = t.remove(h, named(&names, name));
                        prop_assert_eq!(got, model.remove(&name));
                        if let Some(id) = got {
                            names.remove(&id);
                        }
                    }
                    _ => {
                        prop_assert_eq!(t.find(h, named(&names, name)), model.get(&name).copied());
                        // A batch's hint: some member with the name's 32-bit tag, if any.
                        t.prefetch(h);
                        match t.candidate(h) {
                            Some(c) => prop_assert_eq!(hash_of(names[&c], spread) as u32, h as u32),
                            None => prop_assert!(model.keys().all(|&n| hash_of(n, spread) as u32 != h as u32)),
                        }
                    }
                }
                prop_assert_eq!(t.len(), model.len());
            }
            // Every member is found under its own name, and the ids are exactly the model's.
            for (&name, &id) in &model {
                prop_assert_eq!(t.find(hash_of(name, spread), |i| i == id), Some(id));
            }
            let mut ids: Vec<u32> = t.ids().collect();
            ids.sort_unstable();
            let mut want: Vec<u32> = model.values().copied().collect();
            want.sort_unstable();
            prop_assert_eq!(ids, want);
        }
    }

    #[test]
    fn extreme_ids_and_hashes_round_trip() {
        let mut t = MemberTable::default();
        let max_id = crate::slab::MAX_SLAB_ID;
        for (h, id) in [
            (0u64, 0u32),
            (u64::MAX, max_id),
            (1 << 32, 7),
            (u32::MAX as u64, 8),
        ] {
            assert_eq!(t.insert(h, id, |_| false), Ok(()));
            assert_eq!(t.find(h, |i| i == id), Some(id));
        }
        t.reserve(1000);
        assert!(t.reserved_bytes() >= 1000 * 8);
        assert_eq!(t.find(u64::MAX, |i| i == max_id), Some(max_id));
        assert_eq!(t.remove(0, |i| i == 0), Some(0));
        assert_eq!(t.find(0, |i| i == 0), None);
        assert_eq!(t.len(), 3);
    }
}
