//! A leaf of the ranked index: up to [`LEAF_CAP`] entry ids in key order (the keys live
//! once, in the caller's records), a bitmask marking where a new score starts inside the
//! leaf, and — in an index that keeps them ([`LeafHints`]) — a 32-bit digest of each
//! entry's first column, so that the leaf's search reads a record only where digests
//! tie. Here are the leaf's search, its insertions and removals, and the move of an
//! entry to another place inside it ([`Leaf::move_within`]) that a write's small step
//! takes; the inner nodes and the summaries they keep are in `node.rs`.

use super::hints::{hint, LeafHints, NoHints};
use super::keys::{KeyOf, NodeTail};
use super::node::{low_bits, Summary, LEAF_CAP, NIL};
use crate::key::{Key, Tail};

/// A leaf: up to [`LEAF_CAP`] ids in key order, doubly linked to its neighbours, with
/// their hints when the index keeps them ([`LeafHints`]). The header comes first
/// (`repr(C)`): a lookup's first cache miss on the leaf then brings `len` and the first
/// ids together, instead of waiting for `len` before the scan can start.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Leaf<H: LeafHints = NoHints> {
    /// Bit `i` is set when entry `i` is the first in this leaf with its score.
    pub groups: u64,
    pub len: u32,
    pub prev: u32,
    pub next: u32,
    pub ids: [u32; LEAF_CAP],
    pub hints: H,
}

impl<H: LeafHints> Leaf<H> {
    pub fn empty() -> Self {
        Self {
            ids: [0; LEAF_CAP],
            hints: H::none(),
            len: 0,
            prev: NIL,
            next: NIL,
            groups: 0,
        }
    }

    #[inline]
    pub fn ids(&self) -> &[u32] {
        &self.ids[..self.len as usize]
    }

    /// Position of `id` in this leaf: a linear scan of at most 256 bytes, no key loads.
    #[inline]
    pub fn find(&self, id: u32) -> Option<usize> {
        self.ids().iter().position(|&x| x == id)
    }

    /// Entries whose key is below `probe`. Where the leaf keeps hints ([`LeafHints`]),
    /// every entry whose hint differs from the probe's is settled by it without reading a
    /// record, and only those whose hint equals it are searched by key. The keys live in
    /// the records, so every probe is a likely cache miss; a binary search waits for six
    /// of them in a row. This search is eight-way: each round reads the keys at seven
    /// pivots — independent loads the CPU overlaps — and counts how many are below (no
    /// branch between the loads), which picks one eighth; a full leaf takes one round and
    /// a last read of at most eight keys at once — two waits (a four-way search took
    /// three, docs/bench-history.md §13).
    pub fn lower_bound<T: Tail>(&self, probe: &Key<T>, keys: &impl KeyOf<T>) -> usize {
        self.search::<false, T>(probe, keys, 0)
    }

    /// [`Self::lower_bound`] in this leaf as if entry `skip` were not in it (its record
    /// may already hold another key): where [`Self::move_within`] would put it.
    #[inline]
    pub fn lower_bound_without<T: Tail>(
        &self,
        skip: usize,
        probe: &Key<T>,
        keys: &impl KeyOf<T>,
    ) -> usize {
        self.search::<true, T>(probe, keys, skip)
    }

    /// The search of [`Self::lower_bound`] over the leaf's entries but `skip` when
    /// `SKIP` (and it is inside the leaf): positions are counted as if it were gone. Without
    /// `SKIP` the compiled search is the plain one.
    #[inline]
    fn search<const SKIP: bool, T: Tail>(
        &self,
        probe: &Key<T>,
        keys: &impl KeyOf<T>,
        skip: usize,
    ) -> usize {
        const WAYS: usize = 8;
        let all = self.ids();
        let gone = usize::from(SKIP && skip < all.len());
        // Position `i` of the leaf without `skip` is entry `i` or the one after it.
        let at = |i: usize| if SKIP { i + usize::from(i >= skip) } else { i };
        let below = |i: usize| usize::from(keys.is_below(all[at(i)], probe));
        // The answer lies in lo..=hi: entries before lo are below, entries from hi on are not.
        let (mut lo, mut hi) = match self.hints.get() {
            Some(hints) => {
                let (hints, ph) = (&hints[..all.len()], hint(probe.nscore));
                let skipped = (gone == 1).then(|| hints[skip]);
                // Counted over all (sorted, so the equal ones follow the lower ones), then
                // the skipped entry's own hint taken back.
                let lo = hints.iter().filter(|&&h| h < ph).count()
                    - usize::from(skipped.is_some_and(|h| h < ph));
                let eq = hints.iter().filter(|&&h| h == ph).count()
                    - usize::from(skipped.is_some_and(|h| h == ph));
                (lo, lo + eq)
            }
            None => (0, all.len() - gone),
        };
        while hi - lo > WAYS {
            let q = (hi - lo) / WAYS;
            let s: usize = (1..WAYS).map(|j| below(lo + j * q)).sum();
            (lo, hi) = match s {
                0 => (lo, lo + q),
                s if s == WAYS - 1 => (lo + s * q + 1, hi),
                s => (lo + s * q + 1, lo + (s + 1) * q),
            };
        }
        // At most eight left: read them all at once; how many are below is the answer's offset.
        lo + (lo..hi).map(below).sum::<usize>()
    }

    /// Distinct scores among the first `n` entries.
    #[inline]
    pub fn distinct_prefix(&self, n: usize) -> u32 {
        (self.groups & low_bits(n)).count_ones()
    }

    pub fn summary<T: NodeTail>(&self, keys: &impl KeyOf<T>) -> Summary<T> {
        let ids = self.ids();
        let last = ids.len() - 1;
        Summary {
            count: self.len,
            distinct: self.groups.count_ones(),
            min: Summary::min_of(&keys.key_of(ids[0]), ids[0]),
            max: Summary::max_of(&keys.key_of(ids[last]).score(), ids[last]),
        }
    }

    /// The summary after a change at `pos`, reusing `old`'s ends when the change did not
    /// touch them: loads at most the keys of the new first and last entries.
    pub fn summary_after<T: NodeTail>(
        &self,
        old: &Summary<T>,
        pos: usize,
        keys: &impl KeyOf<T>,
    ) -> Summary<T> {
        let ids = self.ids();
        let last = ids.len() - 1;
        Summary {
            count: self.len,
            distinct: self.groups.count_ones(),
            min: if pos == 0 {
                Summary::min_of(&keys.key_of(ids[0]), ids[0])
            } else {
                old.min
            },
            max: if pos >= last {
                Summary::max_of(&keys.key_of(ids[last]).score(), ids[last])
            } else {
                old.max
            },
        }
    }

    /// Inserts `id`, whose key's first column is `first`, at `pos`; the caller guarantees
    /// room and that the key order holds.
    pub fn insert_at<T: NodeTail>(
        &mut self,
        pos: usize,
        id: u32,
        first: i64,
        keys: &impl KeyOf<T>,
    ) {
        let len = self.len as usize;
        self.ids.copy_within(pos..len, pos + 1);
        self.ids[pos] = id;
        if let Some(hints) = self.hints.get_mut() {
            hints.copy_within(pos..len, pos + 1);
            hints[pos] = hint(first);
        }
        self.len += 1;
        self.groups_inserted(pos, keys);
    }

    /// Removes the entry at `pos`. The entry that moves into `pos` starts a score group iff
    /// the removed entry or it did: no key is read.
    pub fn remove_at(&mut self, pos: usize) {
        let len = self.len as usize;
        self.ids.copy_within(pos + 1..len, pos);
        if let Some(hints) = self.hints.get_mut() {
            hints.copy_within(pos + 1..len, pos);
        }
        self.len -= 1;
        self.groups_removed(pos, len - 1);
    }

    /// The group bits after the entry at `pos` went, `len` entries left: the bits above
    /// move down one, and the entry that moves into `pos` starts a group iff the removed
    /// one or it did (no key is read).
    fn groups_removed(&mut self, pos: usize, len: usize) {
        let bit = |g: u64, i: usize| i < 64 && g & (1 << i) != 0;
        let starts = bit(self.groups, pos) || bit(self.groups, pos + 1);
        let below = self.groups & low_bits(pos);
        let above = (self.groups >> 1) & !low_bits(pos);
        self.groups = below | above;
        if pos < len {
            self.set_group_bit(pos, starts);
        }
    }

    /// The group bits after an entry came in at `pos`: the bits from `pos` move up one,
    /// and the new entry's and its right neighbour's are worked out again.
    fn groups_inserted<T: Tail>(&mut self, pos: usize, keys: &impl KeyOf<T>) {
        let below = self.groups & low_bits(pos);
        let above = (self.groups & !low_bits(pos)) << 1;
        self.groups = below | above;
        self.refresh_group_bit(pos, keys);
        self.refresh_group_bit(pos + 1, keys);
    }

    /// Moves the entry at `from` to `to` (a position counted without it, as
    /// [`Self::lower_bound_without`] gives it), its key's first column now `first`: what
    /// [`Self::remove_at`] then [`Self::insert_at`] do, but only the entries between the
    /// two places shift (none when a small step leaves it where it was).
    pub fn move_within<T: NodeTail>(
        &mut self,
        from: usize,
        to: usize,
        first: i64,
        keys: &impl KeyOf<T>,
    ) {
        let id = self.ids[from];
        // The group bits as the removal leaves them ...
        self.groups_removed(from, self.len as usize - 1);
        // ... the entries between shifted by one, one way or the other ...
        shift_one(&mut self.ids, from, to);
        self.ids[to] = id;
        if let Some(hints) = self.hints.get_mut() {
            shift_one(hints, from, to);
            hints[to] = hint(first);
        }
        // ... and as the insertion leaves them.
        self.groups_inserted(to, keys);
    }

    /// Offset of the first entry of the score group that entry `pos` belongs to, within this
    /// leaf (0 when the group starts at or before the leaf's first entry).
    #[inline]
    pub fn group_start(&self, pos: usize) -> usize {
        let mask = self.groups & low_bits(pos + 1);
        if mask == 0 {
            0
        } else {
            63 - mask.leading_zeros() as usize
        }
    }

    /// Recomputes the group bit of entry `pos` from its left neighbour (no-op past the end).
    fn refresh_group_bit<T: Tail>(&mut self, pos: usize, keys: &impl KeyOf<T>) {
        if pos >= self.len as usize {
            return;
        }
        // Different hints are different first columns: no record read.
        let apart = |h: &[u32]| h[pos] != h[pos - 1];
        let starts = pos == 0
            || self.hints.get().is_some_and(apart)
            || !keys.same_score(self.ids[pos], self.ids[pos - 1]);
        self.set_group_bit(pos, starts);
    }

    pub fn set_group_bit(&mut self, pos: usize, starts: bool) {
        if starts {
            self.groups |= 1 << pos;
        } else {
            self.groups &= !(1 << pos);
        }
    }

    /// Moves entries `at..` into the empty leaf `right` (the caller links the chain).
    pub fn split_off(&mut self, at: usize, right: &mut Leaf<H>) {
        let len = self.len as usize;
        right.ids[..len - at].copy_from_slice(&self.ids[at..len]);
        if let (Some(from), Some(to)) = (self.hints.get(), right.hints.get_mut()) {
            to[..len - at].copy_from_slice(&from[at..len]);
        }
        right.len = (len - at) as u32;
        right.groups = (self.groups >> at) | 1;
        self.len = at as u32;
        self.groups &= low_bits(at);
    }

    /// Appends all of `right`; `starts` says whether its first entry opens a new score.
    pub fn absorb(&mut self, right: &Leaf<H>, starts: bool) {
        let at = self.len as usize;
        let n = right.len as usize;
        self.ids[at..at + n].copy_from_slice(right.ids());
        if let (Some(to), Some(from)) = (self.hints.get_mut(), right.hints.get()) {
            to[at..at + n].copy_from_slice(&from[..n]);
        }
        self.len += right.len;
        self.groups |= right.groups << at;
        self.set_group_bit(at, starts);
    }
}

/// Shifts `v[from + 1..=to]` one left (`to > from`) or `v[to..from]` one right, so that
/// slot `to` is free for what was at `from`. Element by element: the ranges are a few
/// entries, where a `memmove` call would cost more than the moves.
#[inline]
fn shift_one(v: &mut [u32], from: usize, to: usize) {
    if to > from {
        for i in from..to {
            v[i] = v[i + 1];
        }
    } else {
        for i in (to..from).rev() {
            v[i + 1] = v[i];
        }
    }
}
