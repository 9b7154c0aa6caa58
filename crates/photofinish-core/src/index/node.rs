//! The inner nodes of the ranked index and the per-subtree summary they keep (the
//! leaves are in `leaf.rs`).
//!
//! For each child an inner node holds a [`Summary`]: entry count, distinct-score count,
//! exact minimum key and maximum normalized score. Those four numbers are all that
//! ordinal, competition and dense ranks need, so every query walks one root-to-leaf path.
//!
//! How a parent keeps a child's minimum key and maximum score depends on the key: see
//! [`NodeTail`] (`keys.rs`).

use super::keys::{KeyOf, NodeTail};
use crate::key::{Key, Score};

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
