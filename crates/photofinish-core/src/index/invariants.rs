//! The ranked index's invariant checker, [`RankedIndex::check_invariants`]: an O(n) walk
//! that recomputes everything the tree keeps (order, counts, summaries, group bits, fill,
//! the leaf chain) and panics naming the node and what is wrong. The property tests call it
//! after every operation; nothing in the served paths does.

use super::node::{self, Summary, NIL};
use super::{KeyOf, LeafHints, NodeTail, RankedIndex, INNER_CAP, LEAF_CAP, MAX_HEIGHT};
use crate::key::{Key, Score, Tail};

/// What [`RankedIndex::check_invariants`] recomputes for a subtree: a [`Summary`] with
/// wide counts, so that a root over `u32::MAX` entries would not wrap.
struct Checked<T: Tail> {
    count: u64,
    distinct: u64,
    min_key: Key<T>,
    max_score: Score<T>,
    /// The ids of the first and the last entry.
    min_id: u32,
    max_id: u32,
}

impl<T: Tail> Checked<T> {
    /// The summary of two neighbouring subtrees, `self` the left one and `right` the
    /// other. Part of [`RankedIndex::check_invariants`].
    fn then(self, right: Checked<T>) -> Checked<T> {
        Checked {
            count: self.count + right.count,
            // A score running across the boundary is one group, not two.
            distinct: self.distinct + right.distinct
                - u64::from(self.max_score == right.min_key.score()),
            min_key: self.min_key,
            max_score: right.max_score,
            min_id: self.min_id,
            max_id: right.max_id,
        }
    }
}

/// What [`RankedIndex::check_invariants`] gathers on its walk from the root.
struct Walk<T: Tail> {
    /// Leaves in the order the walk reached them (left to right).
    leaves: Vec<u32>,
    /// Inner nodes reached.
    inners: usize,
    /// The last key seen and the leaf holding it, to check order across leaves.
    last: Option<(Key<T>, u32)>,
}

impl<T: NodeTail, H: LeafHints> RankedIndex<T, H> {
    /// Checks every structural invariant of the tree and panics, naming the node and what
    /// is wrong, at the first one broken. A test and debugging aid, never called by the
    /// index itself: O(n) time (each key is read once) and O(n) memory.
    ///
    /// Checked:
    /// - order: keys strictly increase inside every leaf and from each leaf to the next;
    ///   the `prev`/`next` chain runs through exactly the leaves reachable from the root,
    ///   left to right, with no `prev` on the first and no `next` on the last;
    /// - counts: `len` is the number of ids, and every per-child [`Summary`] in an inner
    ///   node equals the one recomputed from that child (entry count, distinct scores,
    ///   exact minimum key, maximum score);
    /// - score-group masks: bit 0 is set in every non-empty leaf (its first entry always
    ///   starts a group *within the leaf*), bit `i > 0` iff entry `i`'s score differs from
    ///   entry `i - 1`'s, and no bit at or past the leaf's length;
    /// - hints, in an index that keeps them: each is its entry's first column's [`super::hint`];
    /// - fill: no node over capacity; no empty node but an empty root leaf; a root inner
    ///   node has at least two children. Nothing more: a split can leave a leaf with one
    ///   entry (a key past either end splits a full leaf at 1 or `LEAF_CAP - 1`), removal
    ///   merges a node under a quarter full only when the pair fits in three quarters and
    ///   never borrows, and a bulk build's last node on each level takes the remainder —
    ///   so any non-root node may hold a single entry or child;
    /// - height: descending `height` levels from the root lands on leaves everywhere (the
    ///   leaves so reached are exactly the chain, and every live node of both slabs is
    ///   reached, so no node leaked or hangs at another depth); `height < MAX_HEIGHT`;
    /// - ids: no id appears twice. This follows from the strict order along the whole chain
    ///   (an id has one key, so a repeated id is a repeated key); a failed order check
    ///   looks for an earlier copy of the id so that the message says which it was.
    #[doc(hidden)]
    pub fn check_invariants(&self, keys: &impl KeyOf<T>) {
        assert!(
            self.height < MAX_HEIGHT,
            "index: height {} leaves no room in the path buffers ({MAX_HEIGHT})",
            self.height
        );
        let mut walk = Walk {
            leaves: Vec::new(),
            inners: 0,
            last: None,
        };
        let total = self.check_node(self.root, self.height, true, keys, &mut walk);
        let counted = total.as_ref().map_or(0, |t| t.count);
        assert_eq!(
            self.len, counted,
            "index: len is {} but the tree holds {counted} ids",
            self.len
        );
        // The leaf chain must visit exactly the leaves reached from the root, in order.
        let chain = &walk.leaves;
        let first = self.leaves.get(chain[0]);
        assert_eq!(
            first.prev, NIL,
            "index: first leaf {} has prev {} instead of none",
            chain[0], first.prev
        );
        for pair in chain.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let next = self.leaves.get(a).next;
            assert_eq!(
                next, b,
                "index: leaf {a} has next {next}, but the leaf after it in the tree is {b}"
            );
            let prev = self.leaves.get(b).prev;
            assert_eq!(
                prev, a,
                "index: leaf {b} has prev {prev}, but the leaf before it in the tree is {a}"
            );
        }
        let last = chain[chain.len() - 1];
        let next = self.leaves.get(last).next;
        assert_eq!(
            next, NIL,
            "index: last leaf {last} has next {next} instead of none"
        );
        // Every live node is in the tree: nothing leaked, nothing released twice.
        assert_eq!(
            self.leaves.len(),
            chain.len(),
            "index: {} live leaves in the slab but {} reachable from root {}",
            self.leaves.len(),
            chain.len(),
            self.root
        );
        assert_eq!(
            self.inners.len(),
            walk.inners,
            "index: {} live inner nodes in the slab but {} reachable from root {}",
            self.inners.len(),
            walk.inners,
            self.root
        );
    }

    /// Checks the subtree of `node` at `level` (0: a leaf) and returns its recomputed
    /// summary, or `None` for an empty root leaf. Part of [`Self::check_invariants`].
    fn check_node(
        &self,
        node: u32,
        level: usize,
        is_root: bool,
        keys: &impl KeyOf<T>,
        walk: &mut Walk<T>,
    ) -> Option<Checked<T>> {
        assert_ne!(node, NIL, "index: a child at level {level} is NIL");
        if level == 0 {
            return self.check_leaf(node, is_root, keys, walk);
        }
        walk.inners += 1;
        let inner = self.inners.get(node);
        let n = inner.len as usize;
        check_fill(node, level, n, is_root);
        assert!(
            inner.joins_agree(keys),
            "index: inner node {node} (level {level}): a join bit disagrees with its children's ends"
        );
        let mut total: Option<Checked<T>> = None;
        for slot in 0..n {
            let child = inner.children[slot];
            let Some(got) = self.check_node(child, level - 1, false, keys, walk) else {
                panic!(
                    "index: inner node {node} (level {level}) slot {slot}: child {child} is empty"
                );
            };
            // Formatted only when an assertion fails.
            let what = || format!("inner node {node} (level {level}), slot {slot} (child {child})");
            check_kept(&inner.child_summary(slot), &got, what);
            total = Some(match total {
                None => got,
                Some(t) => t.then(got),
            });
        }
        total
    }

    /// Checks leaf `node` and returns its recomputed summary, or `None` if it is an empty
    /// root. Part of [`Self::check_invariants`].
    fn check_leaf(
        &self,
        node: u32,
        is_root: bool,
        keys: &impl KeyOf<T>,
        walk: &mut Walk<T>,
    ) -> Option<Checked<T>> {
        walk.leaves.push(node);
        let leaf = self.leaves.get(node);
        let n = leaf.len as usize;
        assert!(
            n <= LEAF_CAP,
            "index: leaf {node} has {n} entries, over {LEAF_CAP}"
        );
        assert!(
            leaf.groups & !node::low_bits(n) == 0,
            "index: leaf {node} of {n} entries has group bits past its end: {:#x}",
            leaf.groups
        );
        if n == 0 {
            assert!(is_root, "index: leaf {node} is empty but not the root");
            return None;
        }
        let mut distinct = 0u64;
        let mut first: Option<Key<T>> = None;
        let mut prev: Option<Key<T>> = None;
        for (i, &id) in leaf.ids().iter().enumerate() {
            let key = keys.key_of(id);
            self.check_order(walk, node, i, id, key);
            if let Some(hints) = leaf.hints.get() {
                assert_eq!(
                    hints[i],
                    super::hint(key.nscore),
                    "index: leaf {node} hint {i} is not entry {i}'s (id {id}, key {key:?})"
                );
            }
            // Bit 0 means "first entry of its score in this leaf", so it is always set.
            let starts = prev.is_none_or(|p| p.score() != key.score());
            let bit = leaf.groups & (1 << i) != 0;
            assert_eq!(
                bit,
                starts,
                "index: leaf {node} group bit {i} is {bit} but entry {i} (id {id}, score {:?}) \
                 {} a score group in the leaf",
                key.score(),
                if starts { "starts" } else { "does not start" }
            );
            distinct += u64::from(starts);
            first.get_or_insert(key);
            prev = Some(key);
        }
        // `n > 0`, so both are set.
        Some(Checked {
            count: n as u64,
            distinct,
            min_key: first.unwrap_or(Key::first_of(Score::of(0))),
            max_score: prev.map_or(Score::of(0), |k| k.score()),
            min_id: leaf.ids()[0],
            max_id: leaf.ids()[n - 1],
        })
    }

    /// Checks that entry `i` of leaf `node` (`id`, key `key`) is above the last key the walk
    /// saw, naming an id seen twice; then records it as the last. Part of
    /// [`Self::check_invariants`].
    fn check_order(&self, walk: &mut Walk<T>, node: u32, i: usize, id: u32, key: Key<T>) {
        if let Some((last, at)) = walk.last {
            if last >= key {
                if let Some(first) = self.earlier_copy(id, &walk.leaves, i) {
                    panic!(
                        "index: id {id} appears twice: in leaf {first} and again in leaf \
                         {node} at {i}"
                    );
                }
                panic!(
                    "index: leaf {node} entry {i} (id {id}) has key {key:?}, not above the \
                     key before it {last:?} (in leaf {at})"
                );
            }
        }
        walk.last = Some((key, node));
    }

    /// The leaf among `leaves` (the last one only up to entry `before`) that holds `id`,
    /// if any. Only for [`Self::check_invariants`]'s failure message.
    fn earlier_copy(&self, id: u32, leaves: &[u32], before: usize) -> Option<u32> {
        let (&current, done) = leaves.split_last()?;
        done.iter()
            .copied()
            .find(|&l| self.leaves.get(l).find(id).is_some())
            .or_else(|| {
                self.leaves.get(current).ids()[..before]
                    .contains(&id)
                    .then_some(current)
            })
    }
}

/// Checks the fill of inner node `node` at `level`, of `n` children: no more than
/// [`INNER_CAP`], and at least two at the root, one elsewhere. Part of
/// [`RankedIndex::check_invariants`].
fn check_fill(node: u32, level: usize, n: usize, is_root: bool) {
    assert!(
        n <= INNER_CAP,
        "index: inner node {node} (level {level}) has {n} children, over {INNER_CAP}"
    );
    let least = if is_root { 2 } else { 1 };
    assert!(
        n >= least,
        "index: inner node {node} (level {level}{}) has {n} children, fewer than {least}",
        if is_root { ", the root" } else { "" }
    );
}

/// Checks the summary an inner node keeps of a child, `kept`, against the one recomputed
/// from the child, `got`; `what` names the node, slot and child for the failure message.
/// Part of [`RankedIndex::check_invariants`].
fn check_kept<T: NodeTail>(kept: &Summary<T>, got: &Checked<T>, what: impl Fn() -> String) {
    let (min, max) = (
        Summary::min_of(&got.min_key, got.min_id),
        Summary::max_of(&got.max_score, got.max_id),
    );
    assert_eq!(
        u64::from(kept.count),
        got.count,
        "index: {}: kept entry count {} but the child holds {}",
        what(),
        kept.count,
        got.count
    );
    assert_eq!(
        u64::from(kept.distinct),
        got.distinct,
        "index: {}: kept distinct count {} but the child has {}",
        what(),
        kept.distinct,
        got.distinct
    );
    assert_eq!(
        kept.min,
        min,
        "index: {}: kept minimum key {:?} but the child's first key is {:?} (id {})",
        what(),
        kept.min,
        got.min_key,
        got.min_id
    );
    assert_eq!(
        kept.max,
        max,
        "index: {}: kept maximum score {:?} but the child's last score is {:?} (id {})",
        what(),
        kept.max,
        got.max_score,
        got.max_id
    );
}
