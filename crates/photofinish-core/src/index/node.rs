//! The two node kinds of the ranked index and the per-subtree summary they keep.
//!
//! Leaves hold only `u32` entry ids (the keys live once, in the caller's records) plus a
//! bitmask that marks where a new score starts inside the leaf; inner nodes hold, for each
//! child, a [`Summary`]: entry count, distinct-score count, exact minimum key and maximum
//! normalized score. Those four numbers are all that ordinal, competition and dense ranks
//! need, so every query walks one root-to-leaf path.

use crate::key::Key;

/// Entries per leaf. 64 ids fill 256 bytes and let the score-group mask be one `u64`.
pub const LEAF_CAP: usize = 64;
/// Children per inner node; a power of two near 64 keeps descents at 4 levels for 10M entries.
pub const INNER_CAP: usize = 64;
/// "No node": the end of the leaf chain.
pub const NIL: u32 = u32::MAX;

/// Where the index finds the key of an entry id. The index stores ids, not keys, so that
/// each key is stored once, in the caller's record.
pub trait KeyOf {
    /// The current key of entry `id`.
    fn key_of(&self, id: u32) -> Key;
}

/// What a parent knows of one child subtree. Only meaningful for non-empty subtrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Entries in the subtree.
    pub count: u32,
    /// Distinct scores in the subtree.
    pub distinct: u32,
    /// The smallest (best) key in the subtree.
    pub min_key: Key,
    /// The largest (worst) normalized score in the subtree.
    pub max_score: i64,
}

/// A leaf: up to [`LEAF_CAP`] ids in key order, doubly linked to its neighbours.
#[derive(Debug, Clone)]
pub struct Leaf {
    pub ids: [u32; LEAF_CAP],
    pub len: u32,
    pub prev: u32,
    pub next: u32,
    /// Bit `i` is set when entry `i` is the first in this leaf with its score.
    pub groups: u64,
}

impl Leaf {
    pub fn empty() -> Self {
        Self {
            ids: [0; LEAF_CAP],
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

    /// Entries whose key is below `probe` (one key load per probe step).
    pub fn lower_bound(&self, probe: &Key, keys: &impl KeyOf) -> usize {
        self.ids().partition_point(|&id| keys.key_of(id) < *probe)
    }

    /// Distinct scores among the first `n` entries.
    #[inline]
    pub fn distinct_prefix(&self, n: usize) -> u32 {
        (self.groups & low_bits(n)).count_ones()
    }

    pub fn summary(&self, keys: &impl KeyOf) -> Summary {
        let ids = self.ids();
        Summary {
            count: self.len,
            distinct: self.groups.count_ones(),
            min_key: keys.key_of(ids[0]),
            max_score: keys.key_of(ids[ids.len() - 1]).nscore,
        }
    }

    /// Inserts `id` at `pos`; the caller guarantees room and that the key order holds.
    pub fn insert_at(&mut self, pos: usize, id: u32, keys: &impl KeyOf) {
        let len = self.len as usize;
        self.ids.copy_within(pos..len, pos + 1);
        self.ids[pos] = id;
        self.len += 1;
        let below = self.groups & low_bits(pos);
        let above = (self.groups & !low_bits(pos)) << 1;
        self.groups = below | above;
        self.refresh_group_bit(pos, keys);
        self.refresh_group_bit(pos + 1, keys);
    }

    /// Removes the entry at `pos`.
    pub fn remove_at(&mut self, pos: usize, keys: &impl KeyOf) {
        let len = self.len as usize;
        self.ids.copy_within(pos + 1..len, pos);
        self.len -= 1;
        let below = self.groups & low_bits(pos);
        let above = (self.groups >> 1) & !low_bits(pos);
        self.groups = below | above;
        self.refresh_group_bit(pos, keys);
    }

    /// Recomputes the group bit of entry `pos` from its left neighbour (no-op past the end).
    fn refresh_group_bit(&mut self, pos: usize, keys: &impl KeyOf) {
        if pos >= self.len as usize {
            return;
        }
        let starts =
            pos == 0 || keys.key_of(self.ids[pos]).nscore != keys.key_of(self.ids[pos - 1]).nscore;
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
    pub fn split_off(&mut self, at: usize, right: &mut Leaf) {
        let len = self.len as usize;
        right.ids[..len - at].copy_from_slice(&self.ids[at..len]);
        right.len = (len - at) as u32;
        right.groups = (self.groups >> at) | 1;
        self.len = at as u32;
        self.groups &= low_bits(at);
    }

    /// Appends all of `right`; `starts` says whether its first entry opens a new score.
    pub fn absorb(&mut self, right: &Leaf, starts: bool) {
        let at = self.len as usize;
        let n = right.len as usize;
        self.ids[at..at + n].copy_from_slice(right.ids());
        self.len += right.len;
        self.groups |= right.groups << at;
        self.set_group_bit(at, starts);
    }
}

/// An inner node: up to [`INNER_CAP`] children with their summaries, in key order.
#[derive(Debug, Clone)]
pub struct Inner {
    pub len: u32,
    pub children: [u32; INNER_CAP],
    pub counts: [u32; INNER_CAP],
    pub distinct: [u32; INNER_CAP],
    pub min_keys: [Key; INNER_CAP],
    pub max_scores: [i64; INNER_CAP],
}

impl Inner {
    pub fn empty() -> Self {
        Self {
            len: 0,
            children: [NIL; INNER_CAP],
            counts: [0; INNER_CAP],
            distinct: [0; INNER_CAP],
            min_keys: [Key::first_of_score(0); INNER_CAP],
            max_scores: [0; INNER_CAP],
        }
    }

    #[inline]
    fn n(&self) -> usize {
        self.len as usize
    }

    /// The child that holds (or would hold) `key`: the last whose minimum is `<= key`.
    #[inline]
    pub fn child_for(&self, key: &Key) -> usize {
        self.min_keys[1..self.n()].partition_point(|k| k <= key)
    }

    /// The child where entries below `probe` end: the last whose minimum is `< probe`.
    #[inline]
    pub fn child_below(&self, probe: &Key) -> usize {
        self.min_keys[1..self.n()].partition_point(|k| k < probe)
    }

    /// Entries in children `0..j`.
    #[inline]
    pub fn count_prefix(&self, j: usize) -> u64 {
        self.counts[..j].iter().map(|&c| u64::from(c)).sum()
    }

    /// Distinct scores in children `0..j`, counting a score shared across a boundary once.
    pub fn distinct_prefix(&self, j: usize) -> u64 {
        let sum: u64 = self.distinct[..j].iter().map(|&d| u64::from(d)).sum();
        let shared = (1..j)
            .filter(|&i| self.min_keys[i].nscore == self.max_scores[i - 1])
            .count() as u64;
        sum - shared
    }

    pub fn summary(&self) -> Summary {
        let n = self.n();
        Summary {
            count: self.counts[..n].iter().sum(),
            distinct: self.distinct_prefix(n) as u32,
            min_key: self.min_keys[0],
            max_score: self.max_scores[n - 1],
        }
    }

    pub fn set_summary(&mut self, slot: usize, s: Summary) {
        self.counts[slot] = s.count;
        self.distinct[slot] = s.distinct;
        self.min_keys[slot] = s.min_key;
        self.max_scores[slot] = s.max_score;
    }

    /// Opens slot `slot` for `child` (its summary is set by the caller).
    pub fn insert_slot(&mut self, slot: usize, child: u32) {
        let n = self.n();
        self.children.copy_within(slot..n, slot + 1);
        self.counts.copy_within(slot..n, slot + 1);
        self.distinct.copy_within(slot..n, slot + 1);
        self.min_keys.copy_within(slot..n, slot + 1);
        self.max_scores.copy_within(slot..n, slot + 1);
        self.children[slot] = child;
        self.len += 1;
    }

    pub fn remove_slot(&mut self, slot: usize) {
        let n = self.n();
        self.children.copy_within(slot + 1..n, slot);
        self.counts.copy_within(slot + 1..n, slot);
        self.distinct.copy_within(slot + 1..n, slot);
        self.min_keys.copy_within(slot + 1..n, slot);
        self.max_scores.copy_within(slot + 1..n, slot);
        self.len -= 1;
    }

    /// Moves children `at..` into the empty node `right`.
    pub fn split_off(&mut self, at: usize, right: &mut Inner) {
        let n = self.n();
        let m = n - at;
        right.children[..m].copy_from_slice(&self.children[at..n]);
        right.counts[..m].copy_from_slice(&self.counts[at..n]);
        right.distinct[..m].copy_from_slice(&self.distinct[at..n]);
        right.min_keys[..m].copy_from_slice(&self.min_keys[at..n]);
        right.max_scores[..m].copy_from_slice(&self.max_scores[at..n]);
        right.len = m as u32;
        self.len = at as u32;
    }

    /// Appends all children of `right`.
    pub fn absorb(&mut self, right: &Inner) {
        let at = self.n();
        let m = right.n();
        self.children[at..at + m].copy_from_slice(&right.children[..m]);
        self.counts[at..at + m].copy_from_slice(&right.counts[..m]);
        self.distinct[at..at + m].copy_from_slice(&right.distinct[..m]);
        self.min_keys[at..at + m].copy_from_slice(&right.min_keys[..m]);
        self.max_scores[at..at + m].copy_from_slice(&right.max_scores[..m]);
        self.len += right.len;
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
