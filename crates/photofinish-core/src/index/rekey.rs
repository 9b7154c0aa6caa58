//! Moving an entry to a new key in two steps around the change of its record: first
//! [`RankedIndex::spot`] finds it under its old key (the path down, its slot, the
//! entries before its leaf), then, once the caller's record holds the new key,
//! [`RankedIndex::move_to`] moves it. When the new key falls strictly between two of the
//! leaf's other entries — what a small step usually does, and nearly always in a small
//! index such as a partition's or the teams' — the entry moves inside its leaf: no second
//! descent, no node above it changes (its ends stay), and its new position is the
//! entries before the leaf plus its slot. Otherwise it is taken out along the path
//! already found and inserted again.
//!
//! The first step can itself be split: [`RankedIndex::approach`] descends and asks for
//! the leaf, [`RankedIndex::spot_from`] later looks for the entry in it. A write takes
//! its partition's and its team's approaches before the board's own index works, so
//! those leaves load meanwhile, and finding the entry does not descend again (a move
//! that leaves the leaf still inserts from the root).
//!
//! An index whose leaves keep hints can skip the descent altogether:
//! [`RankedIndex::move_in_place`] takes a leaf the caller remembered (the teams keep the
//! one each was last found in) and, when the entry is still there between two neighbours
//! whose hints are strictly below and above its new first column's, changes its hint and
//! nothing else. A stale place, a freed leaf (emptied when freed) or a tie refuses, and
//! the caller takes the way above.

use super::keys::{KeyOf, NodeTail};
use super::{LeafHints, Path, RankedIndex};
use crate::key::Key;

/// The way down to the leaf where a key lies ([`RankedIndex::approach`]), taken before
/// the entry is looked for there so that the leaf loads meanwhile. It holds no borrow;
/// the index must not change before [`RankedIndex::spot_from`].
pub struct Approach {
    path: Path,
    leaf: u32,
    /// Entries in the leaves before `leaf`.
    before: u64,
}

impl Approach {
    /// The leaf it leads to (a place [`RankedIndex::move_in_place`] may try later).
    pub fn leaf(&self) -> u32 {
        self.leaf
    }
}

/// Where an entry was found under its key ([`RankedIndex::spot`]). It holds no borrow,
/// so the caller may change the entry's record before [`RankedIndex::move_to`]; the
/// index itself must not change in between.
pub struct Spot {
    at: Approach,
    pos: usize,
}

impl Spot {
    /// The leaf the entry was found in.
    pub fn leaf(&self) -> u32 {
        self.at.leaf
    }
}

impl<T: NodeTail, H: LeafHints> RankedIndex<T, H> {
    /// Finds `id`, whose key `keys` reports as `key` (its record not yet changed); `None`
    /// if absent.
    pub fn spot(&self, id: u32, key: &Key<T>, keys: &impl KeyOf<T>) -> Option<Spot> {
        self.spot_from(self.approach(key, keys), id)
    }

    /// Descends to the leaf that holds (or would hold) `key`, keeping the way, and asks
    /// for that leaf ([`crate::prefetch`]). Reads no record.
    pub fn approach(&self, key: &Key<T>, keys: &impl KeyOf<T>) -> Approach {
        let mut path = Path::new();
        let (leaf, before) = self.descend(key, keys, |inner, slot| path.push(inner, slot));
        self.leaves.prefetch(leaf);
        Approach { path, leaf, before }
    }

    /// Finds `id` at the end of `at` (its key the one `at` was taken for); `None` if
    /// absent.
    pub fn spot_from(&self, at: Approach, id: u32) -> Option<Spot> {
        let pos = self.leaves.get(at.leaf).find(id)?;
        Some(Spot { at, pos })
    }

    /// Moves `id`, found at `spot`, to `key`, which `keys` must already report; returns
    /// its new 0-based position. See the module docs.
    pub fn move_to(&mut self, spot: Spot, id: u32, key: Key<T>, keys: &impl KeyOf<T>) -> u64 {
        let Spot {
            at:
                Approach {
                    path,
                    leaf: node,
                    before,
                },
            pos,
        } = spot;
        // A first column outside the leaf's, as its parent keeps them, cannot land inside
        // it: no record is read to find that out.
        let within = path.last().is_none_or(|(parent, slot)| {
            let p = self.inners.get(parent);
            (p.min_scores[slot]..=p.max_scores[slot]).contains(&key.nscore)
        });
        let leaf = self.leaves.get_mut(node);
        let last = leaf.len as usize - 1;
        let distinct = leaf.groups.count_ones();
        if within && pos > 0 && pos < last {
            // Searched as if taken out, so the search never reads its changed record.
            let at = leaf.lower_bound_without(pos, &key, keys);
            if at > 0 && at < last {
                // Between two of the leaf's other entries: its first and last stay, so
                // only its distinct count can change above it.
                leaf.move_within(pos, at, key.nscore, keys);
                if leaf.groups.count_ones() != distinct {
                    self.refresh_path(&path, node, at, keys);
                }
                return before + at as u64;
            }
        }
        leaf.remove_at(pos);
        self.rebalance_after_removal(&path, node, pos, keys);
        self.insert(id, key, keys)
    }

    /// Asks for leaf `leaf` (a remembered place, perhaps stale: nothing for an id never
    /// handed out), as [`Self::approach`] asks for the one it reaches.
    #[inline]
    pub fn prefetch_leaf(&self, leaf: u32) {
        self.leaves.prefetch(leaf);
    }

    /// Whether leaf `leaf` (a remembered place, perhaps stale) holds `id` with another
    /// entry on each side: where [`Self::move_in_place`] may work.
    pub fn holds_inside(&self, leaf: u32, id: u32) -> bool {
        self.inside(leaf, id).is_some()
    }

    /// `id`'s slot in leaf `leaf` when it has another entry on each side.
    #[inline]
    fn inside(&self, leaf: u32, id: u32) -> Option<usize> {
        let l = self.leaves.try_get(leaf)?;
        l.find(id)
            .filter(|&pos| pos > 0 && pos + 1 < l.len as usize)
    }

    /// Gives `id` a key whose first column is `first` without a descent, when leaf `leaf`
    /// (a place the caller remembered, perhaps no longer its own) keeps hints and holds
    /// `id` between two other entries whose hints are strictly below and above
    /// `first`'s, and whose scores differ from its own (the leaf's group bits say so):
    /// then every key with that first column falls between theirs, so the entry keeps its
    /// slot and only its hint changes — the leaf's ends, count and distinct count stay,
    /// and no node above it changes. Reads the leaf alone, no key. Returns whether it did
    /// (otherwise nothing changed); the caller then changes the entry's key.
    pub fn move_in_place(&mut self, leaf: u32, id: u32, first: i64) -> bool {
        let Some(pos) = self.inside(leaf, id) else {
            return false;
        };
        let l = self.leaves.get_mut(leaf);
        // Bits `pos` and `pos + 1`: its score is not its neighbours'.
        let apart = (l.groups >> pos) & 0b11 == 0b11;
        let h = super::hint(first);
        match l.hints.get_mut() {
            Some(hints) if apart && hints[pos - 1] < h && h < hints[pos + 1] => {
                hints[pos] = h;
                true
            }
            _ => false,
        }
    }

    /// Takes out the entry found at `spot` (its record may have changed since).
    pub fn take(&mut self, spot: Spot, keys: &impl KeyOf<T>) {
        let Spot { at, pos } = spot;
        self.leaves.get_mut(at.leaf).remove_at(pos);
        self.rebalance_after_removal(&at.path, at.leaf, pos, keys);
    }
}
