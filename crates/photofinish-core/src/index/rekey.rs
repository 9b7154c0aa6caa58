//! Moving an entry to a new key in two steps around the change of its record: first
//! [`RankedIndex::spot`] finds it under its old key (the path down, its slot, the
//! entries before its leaf), then, once the caller's record holds the new key,
//! [`RankedIndex::move_to`] moves it. When the new key falls strictly between two of the
//! leaf's other entries — what a small step usually does, and nearly always in a small
//! index such as a partition's or the teams' — the entry moves inside its leaf: no second
//! descent, no node above it changes (its ends stay), and its new position is the
//! entries before the leaf plus its slot. Otherwise it is taken out along the path
//! already found and inserted again.

use super::keys::{KeyOf, NodeTail};
use super::{LeafHints, Path, RankedIndex};
use crate::key::Key;

/// Where an entry was found under its key ([`RankedIndex::spot`]). It holds no borrow,
/// so the caller may change the entry's record before [`RankedIndex::move_to`]; the
/// index itself must not change in between.
pub struct Spot {
    path: Path,
    leaf: u32,
    pos: usize,
    /// Entries in the leaves before `leaf`.
    before: u64,
}

impl<T: NodeTail, H: LeafHints> RankedIndex<T, H> {
    /// Finds `id`, whose key `keys` reports as `key` (its record not yet changed); `None`
    /// if absent.
    pub fn spot(&self, id: u32, key: &Key<T>, keys: &impl KeyOf<T>) -> Option<Spot> {
        let mut path = Path::new();
        let (node, before) = self.descend(key, keys, |inner, slot| path.push(inner, slot));
        let pos = self.leaves.get(node).find(id)?;
        Some(Spot {
            path,
            leaf: node,
            pos,
            before,
        })
    }

    /// Moves `id`, found at `spot`, to `key`, which `keys` must already report; returns
    /// its new 0-based position. See the module docs.
    pub fn move_to(&mut self, spot: Spot, id: u32, key: Key<T>, keys: &impl KeyOf<T>) -> u64 {
        // A first column outside the leaf's, as its parent keeps them, cannot land inside
        // it: no record is read to find that out.
        let within = spot.path.steps[..spot.path.depth]
            .last()
            .is_none_or(|&(parent, slot)| {
                let p = self.inners.get(parent);
                (p.min_scores[slot]..=p.max_scores[slot]).contains(&key.nscore)
            });
        let leaf = self.leaves.get_mut(spot.leaf);
        let last = leaf.len as usize - 1;
        let distinct = leaf.groups.count_ones();
        // Taken out of the leaf first, so the search below never reads its changed record.
        leaf.remove_at(spot.pos);
        if within && spot.pos > 0 && spot.pos < last {
            let at = leaf.lower_bound(&key, keys);
            if at > 0 && at < last {
                // Between two of the leaf's entries: its first and last stay, so only its
                // distinct count can change above it.
                leaf.insert_at(at, id, key.nscore, keys);
                if leaf.groups.count_ones() != distinct {
                    self.refresh_path(&spot.path, spot.leaf, at, keys);
                }
                return spot.before + at as u64;
            }
        }
        self.rebalance_after_removal(&spot.path, spot.leaf, spot.pos, keys);
        self.insert(id, key, keys)
    }

    /// Takes out the entry found at `spot` (its record may have changed since).
    pub fn take(&mut self, spot: Spot, keys: &impl KeyOf<T>) {
        self.leaves.get_mut(spot.leaf).remove_at(spot.pos);
        self.rebalance_after_removal(&spot.path, spot.leaf, spot.pos, keys);
    }
}
