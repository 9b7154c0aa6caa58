//! The ranked index: an order-statistic B+tree over entry ids, ordered by [`Key`].
//!
//! Every operation walks one root-to-leaf path, so all are O(log n): insert, remove, the
//! position of an entry (ordinal rank), the number of entries below a key (competition
//! rank), the number of distinct scores below a score (dense rank), the entry at a position
//! and a cursor from a position along the leaf chain.
//!
//! The tree stores ids, not keys: keys are read through [`KeyOf`] from the caller's records,
//! where each lives once. Inner nodes copy each child's minimum key, so descents read keys
//! only inside the final leaf — and an index whose leaves keep hints ([`LeafHints`]: a
//! digest of each entry's first column) reads them there only where digests tie. Callers
//! must keep a record's key unchanged while its id is in the index (its hint was made from
//! it): remove, change the key, insert again — or find its [`Spot`] first, change the key,
//! then move it (`rekey.rs`), which keeps a small step inside its leaf.

mod build;
mod hints;
mod invariants;
mod keys;
mod leaf;
mod node;
mod rekey;
mod remove;

pub use hints::{hint, LeafHints, NoHints};
pub use keys::{KeyOf, NodeTail};
use leaf::Leaf;
use node::{Inner, Summary, NIL};
pub use node::{INNER_CAP, LEAF_CAP};
pub use rekey::{Approach, Spot};

/// Hints for the index's leaves ([`LeafHints`]): one a slot.
pub type Hints = hints::HintsOf<LEAF_CAP>;

use std::marker::PhantomData;

use crate::key::{Key, Score};
use crate::slab::Slab;

/// Deepest tree the path buffers allow. Nodes split at half, so height `h` needs at least
/// `2 * 32^(h-1)` entries at some point; ids are `u32`, so 8 levels are never reached.
const MAX_HEIGHT: usize = 12;

/// A node below its size divided by this tries to merge with a sibling.
const UNDERFULL_DIVISOR: usize = 4;

/// An order-statistic B+tree of `u32` entry ids. See the module docs.
#[derive(Debug, Clone)]
pub struct RankedIndex<T: NodeTail = (), H: LeafHints = NoHints> {
    leaves: Slab<Leaf<H>>,
    inners: Slab<Inner<T>>,
    root: u32,
    /// Levels of inner nodes above the leaves: 0 when the root is a leaf.
    height: usize,
    len: u64,
}

/// A root-to-leaf path: the inner nodes passed and the child slot taken in each. Kept
/// small (64 bytes): a write's [`Approach`] holds one and is handed along by value, and a
/// path of `(u32, usize)` pairs made each of those moves a `memmove` call
/// (docs/bench-history.md §46).
#[derive(Clone, Copy)]
struct Path {
    nodes: [u32; MAX_HEIGHT],
    slots: [u8; MAX_HEIGHT],
    depth: u8,
}

impl Path {
    fn new() -> Self {
        Self {
            nodes: [NIL; MAX_HEIGHT],
            slots: [0; MAX_HEIGHT],
            depth: 0,
        }
    }

    fn push(&mut self, inner: u32, slot: usize) {
        let d = usize::from(self.depth);
        self.nodes[d] = inner;
        // A slot is below INNER_CAP (64).
        self.slots[d] = slot as u8;
        self.depth += 1;
    }

    /// The steps from the root down: each inner node and the child slot taken there.
    fn steps(&self) -> impl DoubleEndedIterator<Item = (u32, usize)> + '_ {
        let d = usize::from(self.depth);
        self.nodes[..d]
            .iter()
            .zip(&self.slots[..d])
            .map(|(&n, &s)| (n, usize::from(s)))
    }

    /// The last step: the leaf's parent and the leaf's slot in it.
    fn last(&self) -> Option<(u32, usize)> {
        self.steps().next_back()
    }
}

impl<T: NodeTail, H: LeafHints> Default for RankedIndex<T, H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: NodeTail, H: LeafHints> RankedIndex<T, H> {
    /// An empty index.
    pub fn new() -> Self {
        let mut leaves = Slab::default();
        let root = leaves.insert(Leaf::empty()).unwrap_or(0);
        Self {
            leaves,
            inners: Slab::default(),
            root,
            height: 0,
            len: 0,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the index holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held by nodes (for memory reports).
    pub fn reserved_bytes(&self) -> usize {
        self.leaves.reserved_bytes() + self.inners.reserved_bytes()
    }

    fn is_full(&self, node: u32, level: usize) -> bool {
        if level == 0 {
            self.leaves.get(node).len as usize == LEAF_CAP
        } else {
            self.inners.get(node).len as usize == INNER_CAP
        }
    }

    fn node_len(&self, node: u32, level: usize) -> usize {
        if level == 0 {
            self.leaves.get(node).len as usize
        } else {
            self.inners.get(node).len as usize
        }
    }

    fn summary(&self, node: u32, level: usize, keys: &impl KeyOf<T>) -> Summary<T> {
        if level == 0 {
            self.leaves.get(node).summary(keys)
        } else {
            self.inners.get(node).summary()
        }
    }

    fn new_leaf(&mut self) -> u32 {
        // u32 ids for leaves run out only past 2^32 leaves, i.e. far past u32 entries.
        self.leaves.insert(Leaf::empty()).unwrap_or(NIL)
    }

    fn new_inner(&mut self) -> u32 {
        self.inners.insert(Inner::empty()).unwrap_or(NIL)
    }

    /// Inserts `id`, whose key `keys` must already report as `key`. The id must be absent.
    /// Returns its 0-based position, counted on the way down (the entries of the children
    /// left of the path), so a caller that wants the rank needs no second descent.
    pub fn insert(&mut self, id: u32, key: Key<T>, keys: &impl KeyOf<T>) -> u64 {
        if self.is_full(self.root, self.height) {
            let old = self.root;
            let s = self.summary(old, self.height, keys);
            let root = self.new_inner();
            let r = self.inners.get_mut(root);
            r.insert_slot(0, old);
            r.set_summary(0, s, keys);
            self.root = root;
            self.height += 1;
        }
        let mut path = Path::new();
        let mut node = self.root;
        let mut before = 0u64;
        for level in (1..=self.height).rev() {
            let mut slot = self.inners.get(node).child_for(&key, keys);
            let child = self.inners.get(node).children[slot];
            if self.is_full(child, level - 1) {
                self.split_child(node, slot, level - 1, &key, keys);
                let inner = self.inners.get(node);
                if key >= inner.min_key(slot + 1, keys) {
                    slot += 1;
                }
            }
            // Read after any split: the counts left of `slot` are final, the insert below
            // changes only `slot`'s own.
            let inner = self.inners.get(node);
            before += inner.count_prefix(slot);
            path.push(node, slot);
            node = inner.children[slot];
        }
        let leaf = self.leaves.get_mut(node);
        let pos = leaf.lower_bound(&key, keys);
        leaf.insert_at(pos, id, key.nscore, keys);
        self.len += 1;
        self.refresh_path(&path, node, pos, keys);
        before + pos as u64
    }

    /// Splits the full child at `slot` of `parent` in two. A key headed for either end of a
    /// full leaf splits it next to that end, so sequential loads leave full leaves behind.
    fn split_child(
        &mut self,
        parent: u32,
        slot: usize,
        level: usize,
        key: &Key<T>,
        keys: &impl KeyOf<T>,
    ) {
        let child = self.inners.get(parent).children[slot];
        let (right, right_summary, left_summary);
        if level == 0 {
            let l = self.leaves.get(child);
            let first = keys.key_of(l.ids[0]);
            let last = keys.key_of(l.ids[LEAF_CAP - 1]);
            let at = if *key > last {
                LEAF_CAP - 1
            } else if *key < first {
                1
            } else {
                LEAF_CAP / 2
            };
            right = self.new_leaf();
            let mut r = Leaf::empty();
            let l = self.leaves.get_mut(child);
            l.split_off(at, &mut r);
            r.prev = child;
            r.next = l.next;
            l.next = right;
            if r.next != NIL {
                self.leaves.get_mut(r.next).prev = right;
            }
            left_summary = self.leaves.get(child).summary(keys);
            right_summary = r.summary(keys);
            *self.leaves.get_mut(right) = r;
        } else {
            right = self.new_inner();
            let mut r = Inner::empty();
            let l = self.inners.get_mut(child);
            l.split_off(INNER_CAP / 2, &mut r);
            left_summary = l.summary();
            right_summary = r.summary();
            *self.inners.get_mut(right) = r;
        }
        let p = self.inners.get_mut(parent);
        p.set_summary(slot, left_summary, keys);
        p.insert_slot(slot + 1, right);
        p.set_summary(slot + 1, right_summary, keys);
    }

    /// Rewrites the summaries along `path` after an insert at `pos` of `leaf`.
    fn refresh_path(&mut self, path: &Path, leaf: u32, pos: usize, keys: &impl KeyOf<T>) {
        let Some((parent, slot)) = path.last() else {
            return; // the root is a leaf: nothing above it keeps a summary
        };
        let old = self.inners.get(parent).child_summary(slot);
        let mut s = self.leaves.get(leaf).summary_after(&old, pos, keys);
        for (inner, slot) in path.steps().rev() {
            let n = self.inners.get_mut(inner);
            n.set_summary(slot, s, keys);
            s = n.summary();
        }
    }

    /// Descends to the leaf that holds (or would hold) `key`, handing `step` each inner
    /// node passed and the child slot taken; the leaf and the entries before it.
    #[inline]
    fn descend(
        &self,
        key: &Key<T>,
        keys: &impl KeyOf<T>,
        mut step: impl FnMut(u32, usize),
    ) -> (u32, u64) {
        let mut node = self.root;
        let mut before = 0u64;
        for _ in 0..self.height {
            let inner = self.inners.get(node);
            let slot = inner.child_for(key, keys);
            before += inner.count_prefix(slot);
            step(node, slot);
            node = inner.children[slot];
        }
        (node, before)
    }

    /// Descends to the leaf that holds (or would hold) `key`, counting the entries before
    /// that leaf, and prefetches the leaf ([`crate::prefetch`]): a batch seeks all its keys
    /// first, so their leaves load together, then reads each with [`Self::position_in`].
    /// Reads no record.
    pub fn seek(&self, key: &Key<T>, keys: &impl KeyOf<T>) -> Seek<'_, T, H> {
        let (node, before) = self.descend(key, keys, |_, _| {});
        self.leaves.prefetch(node);
        Seek {
            leaf: node,
            before,
            index: PhantomData,
        }
    }

    /// 0-based position of `id` in the leaf `seek` found for its key; `None` if absent.
    pub fn position_in(&self, seek: Seek<'_, T, H>, id: u32) -> Option<u64> {
        self.leaves
            .get(seek.leaf)
            .find(id)
            .map(|p| seek.before + p as u64)
    }

    /// 0-based position of `id`, whose key is `key`; `None` if absent.
    pub fn position(&self, id: u32, key: &Key<T>, keys: &impl KeyOf<T>) -> Option<u64> {
        self.position_in(self.seek(key, keys), id)
    }

    /// Number of entries whose key is below `probe`.
    pub fn count_below(&self, probe: &Key<T>, keys: &impl KeyOf<T>) -> u64 {
        let mut node = self.root;
        let mut before = 0u64;
        for _ in 0..self.height {
            let inner = self.inners.get(node);
            let slot = inner.child_below(probe, keys);
            before += inner.count_prefix(slot);
            node = inner.children[slot];
        }
        before + self.leaves.get(node).lower_bound(probe, keys) as u64
    }

    /// Number of distinct normalized scores below `score`.
    pub fn distinct_below(&self, score: Score<T>, keys: &impl KeyOf<T>) -> u64 {
        let probe = Key::first_of(score);
        let mut node = self.root;
        let mut total = 0u64;
        // The score of the last entry counted so far (as its node kept it), to merge a
        // group split by a boundary.
        let mut last: Option<(i64, T::MaxCopy)> = None;
        for _ in 0..self.height {
            let inner = self.inners.get(node);
            let slot = inner.child_below(&probe, keys);
            if slot > 0 {
                total += inner.distinct_prefix(slot);
                if last.is_some_and(|l| inner.continues_from(0, l, keys)) {
                    total -= 1;
                }
                last = Some(inner.max_kept(slot - 1));
            }
            // The part of `children[slot]` below the probe, if any, starts at its minimum.
            if inner.min_below(slot, &probe, keys)
                && last.is_some_and(|l| inner.continues_from(slot, l, keys))
            {
                total -= 1;
                last = None;
            }
            node = inner.children[slot];
        }
        let leaf = self.leaves.get(node);
        let n = leaf.lower_bound(&probe, keys);
        total + u64::from(leaf.distinct_prefix(n))
    }

    /// All three ranks of entry `id` (key `key`) as counts of entries before it, from one
    /// descent and without reading keys in the leaf — unless the entry's score group starts
    /// in an earlier leaf, where it falls back to [`Self::count_below`] and
    /// [`Self::distinct_below`].
    pub fn ranks(&self, id: u32, key: &Key<T>, keys: &impl KeyOf<T>) -> Option<Ranks> {
        let mut node = self.root;
        let mut before = 0u64;
        let mut distinct = 0u64;
        // The score of the entry just before the current subtree (as its node kept it),
        // and whether the subtree's first score continues it.
        let mut prev: Option<(i64, T::MaxCopy)> = None;
        let mut continues = false;
        for _ in 0..self.height {
            let inner = self.inners.get(node);
            let slot = inner.child_for(key, keys);
            if slot > 0 {
                before += inner.count_prefix(slot);
                distinct += inner.distinct_prefix(slot);
                if prev.is_some_and(|p| inner.continues_from(0, p, keys)) {
                    distinct -= 1;
                }
                prev = Some(inner.max_kept(slot - 1));
            }
            continues = prev.is_some_and(|p| inner.continues_from(slot, p, keys));
            node = inner.children[slot];
        }
        let leaf = self.leaves.get(node);
        let pos = leaf.find(id)?;
        let position = before + pos as u64;
        let g = leaf.group_start(pos);
        if g == 0 && continues {
            let probe = Key::first_of(key.score());
            return Some(Ranks {
                position,
                competition: self.count_below(&probe, keys),
                dense: self.distinct_below(key.score(), keys),
            });
        }
        let mut in_leaf = u64::from(leaf.distinct_prefix(g));
        if g > 0 && continues {
            in_leaf -= 1;
        }
        Some(Ranks {
            position,
            competition: before + g as u64,
            dense: distinct + in_leaf,
        })
    }

    /// The id at 0-based position `pos`.
    pub fn get(&self, pos: u64) -> Option<u32> {
        let (leaf, at) = self.locate(pos)?;
        Some(self.leaves.get(leaf).ids[at])
    }

    /// Leaf and offset of position `pos`.
    fn locate(&self, mut pos: u64) -> Option<(u32, usize)> {
        if pos >= self.len {
            return None;
        }
        let mut node = self.root;
        for _ in 0..self.height {
            let inner = self.inners.get(node);
            let mut slot = 0;
            while pos >= u64::from(inner.counts[slot]) {
                pos -= u64::from(inner.counts[slot]);
                slot += 1;
            }
            node = inner.children[slot];
        }
        Some((node, pos as usize))
    }

    /// The ids from position `pos` on, in order.
    pub fn iter_from(&self, pos: u64) -> Iter<'_, T, H> {
        let (leaf, at) = self.locate(pos).unwrap_or((NIL, 0));
        Iter {
            index: self,
            leaf,
            at,
        }
    }
}

/// Where a descent for a key ended ([`RankedIndex::seek`]): the leaf and the entries
/// before it. It borrows the index, so the index cannot change while it is held.
#[derive(Debug, Clone, Copy)]
pub struct Seek<'a, T: NodeTail = (), H: LeafHints = NoHints> {
    leaf: u32,
    before: u64,
    index: PhantomData<&'a RankedIndex<T, H>>,
}

/// An entry's ranks as counts of what comes before it (add 1 for the rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranks {
    /// Entries before it: ordinal rank − 1.
    pub position: u64,
    /// Entries with a strictly better score: competition rank − 1.
    pub competition: u64,
    /// Distinct strictly better scores: dense rank − 1.
    pub dense: u64,
}

/// Ids in key order from some position, following the leaf chain. A clone walks on from
/// the same place by itself (a reader can look ahead with one).
#[derive(Clone)]
pub struct Iter<'a, T: NodeTail = (), H: LeafHints = NoHints> {
    index: &'a RankedIndex<T, H>,
    leaf: u32,
    at: usize,
}

impl<T: NodeTail, H: LeafHints> Iterator for Iter<'_, T, H> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        while self.leaf != NIL {
            let leaf = self.index.leaves.get(self.leaf);
            if self.at < leaf.len as usize {
                self.at += 1;
                return Some(leaf.ids[self.at - 1]);
            }
            self.leaf = leaf.next;
            self.at = 0;
        }
        None
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_in_place;
