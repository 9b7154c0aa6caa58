//! The two node kinds of the ranked index and the per-subtree summary they keep.
//!
//! Leaves hold `u32` entry ids (the keys live once, in the caller's records), a bitmask
//! that marks where a new score starts inside the leaf, and — in an index that keeps them
//! ([`LeafHints`]) — a 32-bit digest of each entry's first column, so a leaf's search
//! reads a record only where digests tie; inner nodes hold, for each
//! child, a [`Summary`]: entry count, distinct-score count, exact minimum key and maximum
//! normalized score. Those four numbers are all that ordinal, competition and dense ranks
//! need, so every query walks one root-to-leaf path.
//!
//! How a parent keeps a child's minimum key and maximum score depends on the key: see
//! [`NodeTail`] (`keys.rs`).

use super::hints::{hint, LeafHints, NoHints};
use super::keys::{KeyOf, NodeTail};
use crate::key::{Key, Score, Tail};

/// Entries per leaf. 64 ids fill 256 bytes and let the score-group mask be one `u64`.
pub const LEAF_CAP: usize = 64;
/// Children per inner node; a power of two near 64 keeps descents at 4 levels for 10M entries.
pub const INNER_CAP: usize = 64;
/// "No node": the end of the leaf chain.
pub const NIL: u32 = u32::MAX;

/// What a parent knows of one child subtree, as the parent keeps it ([`NodeTail`]): so a
/// summary passes up the tree without reading a record. Only meaningful for non-empty
/// subtrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary<T: NodeTail = ()> {
    /// Entries in the subtree.
    pub count: u32,
    /// Distinct scores in the subtree.
    pub distinct: u32,
    /// The smallest (best) key in the subtree: its first column, and the rest as kept.
    pub min: (i64, T::MinCopy),
    /// The largest (worst) score in the subtree: its first column, and the rest as kept.
    pub max: (i64, T::MaxCopy),
}

impl<T: NodeTail> Summary<T> {
    /// What a parent keeps of minimum key `key`, entry `id`'s.
    #[inline]
    pub fn min_of(key: &Key<T>, id: u32) -> (i64, T::MinCopy) {
        (key.nscore, T::min_copy(key, id))
    }

    /// What a parent keeps of maximum score `score`, entry `id`'s.
    #[inline]
    pub fn max_of(score: &Score<T>, id: u32) -> (i64, T::MaxCopy) {
        (score.nscore, T::max_copy(score, id))
    }
}

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
        const WAYS: usize = 8;
        let ids = self.ids();
        let below = |i: usize| usize::from(keys.is_below(ids[i], probe));
        // The answer lies in lo..=hi: entries before lo are below, entries from hi on are not.
        let (mut lo, mut hi) = match self.hints.get() {
            Some(hints) => {
                let (hints, ph) = (&hints[..ids.len()], hint(probe.nscore));
                let lo = hints.iter().filter(|&&h| h < ph).count();
                (
                    lo,
                    lo + hints[lo..].iter().take_while(|&&h| h == ph).count(),
                )
            }
            None => (0, ids.len()),
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
        let below = self.groups & low_bits(pos);
        let above = (self.groups & !low_bits(pos)) << 1;
        self.groups = below | above;
        self.refresh_group_bit(pos, keys);
        self.refresh_group_bit(pos + 1, keys);
    }

    /// Removes the entry at `pos`. The entry that moves into `pos` starts a score group iff
    /// the removed entry or it did: no key is read.
    pub fn remove_at(&mut self, pos: usize) {
        let len = self.len as usize;
        let bit = |g: u64, i: usize| i < 64 && g & (1 << i) != 0;
        let starts = bit(self.groups, pos) || bit(self.groups, pos + 1);
        self.ids.copy_within(pos + 1..len, pos);
        if let Some(hints) = self.hints.get_mut() {
            hints.copy_within(pos + 1..len, pos);
        }
        self.len -= 1;
        let below = self.groups & low_bits(pos);
        let above = (self.groups >> 1) & !low_bits(pos);
        self.groups = below | above;
        if pos < self.len as usize {
            self.set_group_bit(pos, starts);
        }
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

/// An inner node: up to [`INNER_CAP`] children with their summaries, in key order. The
/// children's minimum first columns are an array of their own so that choosing a child
/// is a linear, vectorizable count over 64 scores — independent loads the CPU overlaps —
/// rather than a binary search whose every probe waits for the last; the rest of each
/// child's ends is kept as [`NodeTail`] says.
#[derive(Debug, Clone)]
pub struct Inner<T: NodeTail = ()> {
    pub len: u32,
    /// Bit `i` (for `i >= 1`) is set when child `i`'s first score is child `i - 1`'s last
    /// ([`Self::continues`]), kept up to date as summaries change: so a node's distinct
    /// count is a sum and a popcount, not a comparison at every boundary (on a board of
    /// several columns each comparison read two kept ends, 64 times a level per write).
    pub joins: u64,
    pub children: [u32; INNER_CAP],
    pub counts: [u32; INNER_CAP],
    pub distinct: [u32; INNER_CAP],
    pub min_scores: [i64; INNER_CAP],
    pub min_copies: [T::MinCopy; INNER_CAP],
    pub max_scores: [i64; INNER_CAP],
    pub max_copies: [T::MaxCopy; INNER_CAP],
}

/// Calls macro `$m` with the name of every per-child array of [`Inner`]: the one list, so
/// that shifting, splitting and merging cannot forget an array.
macro_rules! inner_arrays {
    ($m:ident) => {
        $m!(children, counts, distinct, min_scores, min_copies, max_scores, max_copies)
    };
}

impl<T: NodeTail> Inner<T> {
    pub fn empty() -> Self {
        Self {
            len: 0,
            joins: 0,
            children: [NIL; INNER_CAP],
            counts: [0; INNER_CAP],
            distinct: [0; INNER_CAP],
            min_scores: [0; INNER_CAP],
            min_copies: [T::MinCopy::default(); INNER_CAP],
            max_scores: [0; INNER_CAP],
            max_copies: [T::MaxCopy::default(); INNER_CAP],
        }
    }

    #[inline]
    fn n(&self) -> usize {
        self.len as usize
    }

    /// The minimum key of child `i`.
    #[inline]
    pub fn min_key(&self, i: usize, keys: &impl KeyOf<T>) -> Key<T> {
        T::min_key(self.min_scores[i], self.min_copies[i], keys)
    }

    /// Whether child `i`'s first score is child `i - 1`'s last (one group across the
    /// boundary): the first columns first, the rest only on a tie.
    #[inline]
    pub fn continues(&self, i: usize, keys: &impl KeyOf<T>) -> bool {
        self.continues_from(i, self.max_kept(i - 1), keys)
    }

    /// Child `i`'s maximum score as this node keeps it (to compare across levels).
    #[inline]
    pub fn max_kept(&self, i: usize) -> (i64, T::MaxCopy) {
        (self.max_scores[i], self.max_copies[i])
    }

    /// Whether child `i`'s first score is the score `max` (a maximum as a node keeps it,
    /// [`Self::max_kept`]).
    #[inline]
    pub fn continues_from(&self, i: usize, max: (i64, T::MaxCopy), keys: &impl KeyOf<T>) -> bool {
        self.min_scores[i] == max.0 && T::same_rest(self.min_copies[i], max.1, keys)
    }

    /// Whether child `i`'s minimum key is below `probe`: the first column decides unless
    /// it ties.
    #[inline]
    pub fn min_below(&self, i: usize, probe: &Key<T>, keys: &impl KeyOf<T>) -> bool {
        match self.min_scores[i].cmp(&probe.nscore) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => self.min_key(i, keys) < *probe,
        }
    }

    /// Children `1..n` whose minimum is below `key` (`inclusive`: or equal to it).
    #[inline]
    fn count_mins(&self, key: &Key<T>, inclusive: bool, keys: &impl KeyOf<T>) -> usize {
        let n = self.n();
        let lt = self.min_scores[1..n]
            .iter()
            .filter(|&&s| s < key.nscore)
            .count();
        // Minimums are sorted: the children with an equal score follow the smaller ones.
        let mut j = 1 + lt;
        while j < n && self.min_scores[j] == key.nscore {
            let tie = self.min_key(j, keys);
            if tie < *key || (inclusive && tie == *key) {
                j += 1;
            } else {
                break;
            }
        }
        j - 1
    }

    /// The child that holds (or would hold) `key`: the last whose minimum is `<= key`.
    #[inline]
    pub fn child_for(&self, key: &Key<T>, keys: &impl KeyOf<T>) -> usize {
        self.count_mins(key, true, keys)
    }

    /// The child where entries below `probe` end: the last whose minimum is `< probe`.
    #[inline]
    pub fn child_below(&self, probe: &Key<T>, keys: &impl KeyOf<T>) -> usize {
        self.count_mins(probe, false, keys)
    }

    /// Entries in children `0..j`.
    #[inline]
    pub fn count_prefix(&self, j: usize) -> u64 {
        self.counts[..j].iter().map(|&c| u64::from(c)).sum()
    }

    /// Distinct scores in children `0..j`, counting a score shared across a boundary once.
    pub fn distinct_prefix(&self, j: usize) -> u64 {
        let sum: u64 = self.distinct[..j].iter().map(|&d| u64::from(d)).sum();
        sum - u64::from((self.joins & low_bits(j) & !1).count_ones())
    }

    /// Whether child `i`'s first score continues child `i - 1`'s last, as last worked
    /// out ([`Self::set_summary`]).
    #[inline]
    pub fn joined(&self, i: usize) -> bool {
        (self.joins >> i) & 1 == 1
    }

    /// Works out bit `i` of [`Self::joins`] again (cleared where `i` has no left sibling).
    fn rejoin(&mut self, i: usize, keys: &impl KeyOf<T>) {
        if i >= INNER_CAP {
            return;
        }
        let on = i >= 1 && i < self.n() && self.continues(i, keys);
        self.joins = (self.joins & !(1u64 << i)) | (u64::from(on) << i);
    }

    /// Whether every join bit is what the children's ends say (the invariant checks).
    pub fn joins_agree(&self, keys: &impl KeyOf<T>) -> bool {
        (1..self.n()).all(|i| self.joined(i) == self.continues(i, keys))
    }

    /// This node's summary, for its parent: no record read.
    pub fn summary(&self) -> Summary<T> {
        let n = self.n();
        Summary {
            count: self.counts[..n].iter().sum(),
            distinct: self.distinct_prefix(n) as u32,
            min: (self.min_scores[0], self.min_copies[0]),
            max: self.max_kept(n - 1),
        }
    }

    /// The summary stored for child `slot`.
    pub fn child_summary(&self, slot: usize) -> Summary<T> {
        Summary {
            count: self.counts[slot],
            distinct: self.distinct[slot],
            min: (self.min_scores[slot], self.min_copies[slot]),
            max: self.max_kept(slot),
        }
    }

    /// Stores child `slot`'s summary and works out its joins with both neighbours.
    pub fn set_summary(&mut self, slot: usize, s: Summary<T>, keys: &impl KeyOf<T>) {
        self.counts[slot] = s.count;
        self.distinct[slot] = s.distinct;
        (self.min_scores[slot], self.min_copies[slot]) = s.min;
        (self.max_scores[slot], self.max_copies[slot]) = s.max;
        self.rejoin(slot, keys);
        self.rejoin(slot + 1, keys);
    }

    /// Opens slot `slot` for `child`; the caller sets its summary next
    /// ([`Self::set_summary`], which also works out its joins).
    pub fn insert_slot(&mut self, slot: usize, child: u32) {
        let n = self.n();
        macro_rules! shift {
            ($($f:ident),+) => { $( self.$f.copy_within(slot..n, slot + 1); )+ };
        }
        inner_arrays!(shift);
        let low = low_bits(slot);
        self.joins = (self.joins & low) | ((self.joins & !low) << 1);
        self.children[slot] = child;
        self.len += 1;
    }

    /// Closes slot `slot`; the children it separated are now neighbours.
    pub fn remove_slot(&mut self, slot: usize, keys: &impl KeyOf<T>) {
        let n = self.n();
        macro_rules! shift {
            ($($f:ident),+) => { $( self.$f.copy_within(slot + 1..n, slot); )+ };
        }
        inner_arrays!(shift);
        let low = low_bits(slot);
        self.joins = (self.joins & low) | ((self.joins >> 1) & !low);
        self.len -= 1;
        self.rejoin(slot, keys);
    }

    /// Moves children `at..` into the empty node `right`.
    pub fn split_off(&mut self, at: usize, right: &mut Inner<T>) {
        let n = self.n();
        let m = n - at;
        macro_rules! mv {
            ($($f:ident),+) => { $( right.$f[..m].copy_from_slice(&self.$f[at..n]); )+ };
        }
        inner_arrays!(mv);
        right.joins = (self.joins >> at) & !1;
        right.len = m as u32;
        self.joins &= low_bits(at);
        self.len = at as u32;
    }

    /// Appends all children of `right`.
    pub fn absorb(&mut self, right: &Inner<T>, keys: &impl KeyOf<T>) {
        let at = self.n();
        let m = right.n();
        macro_rules! mv {
            ($($f:ident),+) => { $( self.$f[at..at + m].copy_from_slice(&right.$f[..m]); )+ };
        }
        inner_arrays!(mv);
        self.joins |= (right.joins & !1) << at;
        self.len += right.len;
        self.rejoin(at, keys);
    }
}

/// A mask of the lowest `n` bits (`n` up to 64).
#[inline]
pub fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}
