//! Removing an entry: find it under its key, take it out of its leaf, then walk back up
//! merging a node under a quarter full into a sibling when the pair fits in three quarters,
//! unlinking empty leaves, and shrinking a root left with one child.

use super::keys::{KeyOf, NodeTail};
use super::node::{INNER_CAP, LEAF_CAP, NIL};
use super::{LeafHints, Path, RankedIndex, UNDERFULL_DIVISOR};
use crate::key::Key;

impl<T: NodeTail, H: LeafHints> RankedIndex<T, H> {
    /// Removes `id`, whose key `keys` reports as `key`. Returns whether it was present.
    pub fn remove(&mut self, id: u32, key: Key<T>, keys: &impl KeyOf<T>) -> bool {
        match self.spot(id, &key, keys) {
            Some(spot) => {
                self.take(spot, keys);
                true
            }
            None => false,
        }
    }

    /// After the entry at `pos` of `leaf` (reached by `path`) was taken out of the leaf:
    /// counts it gone, rebalances and refreshes every node on the path, and shrinks the
    /// root. Reads no key of the entry taken out.
    pub(super) fn rebalance_after_removal(
        &mut self,
        path: &Path,
        leaf: u32,
        pos: usize,
        keys: &impl KeyOf<T>,
    ) {
        self.len -= 1;
        let mut child = leaf;
        for (level, (inner, slot)) in path.steps().rev().enumerate() {
            let leaf_pos = (level == 0).then_some(pos);
            self.rebalance_child(inner, slot, child, level, leaf_pos, keys);
            child = inner;
        }
        self.shrink_root();
    }

    /// After a removal below `parent.children[slot]` (= `child`, at `level`; for a leaf,
    /// `leaf_pos` is where the entry was removed): drops the child if empty, merges it into
    /// a sibling if small, and refreshes the summaries.
    fn rebalance_child(
        &mut self,
        parent: u32,
        slot: usize,
        child: u32,
        level: usize,
        leaf_pos: Option<usize>,
        keys: &impl KeyOf<T>,
    ) {
        let len = self.node_len(child, level);
        if len == 0 {
            self.free_node(child, level);
            self.inners.get_mut(parent).remove_slot(slot, keys);
            return;
        }
        // The merge below reads both siblings' summaries: bring this one up to date first.
        let s = match leaf_pos {
            Some(pos) => self.leaves.get(child).summary_after(
                &self.inners.get(parent).child_summary(slot),
                pos,
                keys,
            ),
            None => self.summary(child, level, keys),
        };
        self.inners.get_mut(parent).set_summary(slot, s, keys);
        let cap = if level == 0 { LEAF_CAP } else { INNER_CAP };
        let siblings = self.inners.get(parent).len as usize;
        if len < cap / UNDERFULL_DIVISOR && siblings > 1 {
            let left_slot = if slot > 0 { slot - 1 } else { slot };
            let p = self.inners.get(parent);
            let (left, right) = (p.children[left_slot], p.children[left_slot + 1]);
            if self.node_len(left, level) + self.node_len(right, level) <= cap * 3 / 4 {
                self.merge(parent, left_slot, (left, right), level, keys);
                let s = self.summary(left, level, keys);
                self.inners.get_mut(parent).set_summary(left_slot, s, keys);
            }
        }
    }

    /// Moves everything of `right` (slot `left_slot + 1`) into `left` and frees `right`.
    fn merge(
        &mut self,
        parent: u32,
        left_slot: usize,
        (left, right): (u32, u32),
        level: usize,
        keys: &impl KeyOf<T>,
    ) {
        if level == 0 {
            let p = self.inners.get(parent);
            let starts = !p.joined(left_slot + 1);
            let r = self.leaves.get(right).clone();
            self.leaves.get_mut(left).absorb(&r, starts);
        } else {
            let r = self.inners.get(right).clone();
            self.inners.get_mut(left).absorb(&r, keys);
        }
        self.free_node(right, level);
        self.inners.get_mut(parent).remove_slot(left_slot + 1, keys);
    }

    fn free_node(&mut self, node: u32, level: usize) {
        if level == 0 {
            let (prev, next) = {
                let l = self.leaves.get(node);
                (l.prev, l.next)
            };
            if prev != NIL {
                self.leaves.get_mut(prev).next = next;
            }
            if next != NIL {
                self.leaves.get_mut(next).prev = prev;
            }
            // Emptied, so a place remembered in it ([`Self::move_in_place`]) finds nothing.
            self.leaves.get_mut(node).len = 0;
            self.leaves.release(node);
        } else {
            self.inners.release(node);
        }
    }

    /// Replaces a root with one child by that child, and an emptied root by an empty leaf.
    fn shrink_root(&mut self) {
        while self.height > 0 {
            let r = self.inners.get(self.root);
            match r.len {
                0 => {
                    self.inners.release(self.root);
                    self.root = self.new_leaf();
                    self.height = 0;
                }
                1 => {
                    let child = r.children[0];
                    self.inners.release(self.root);
                    self.root = child;
                    self.height -= 1;
                }
                _ => break,
            }
        }
    }
}
