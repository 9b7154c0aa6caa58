//! Building an index in one pass from ids already in key order (snapshot loading): leaves
//! and inner nodes are filled to 7/8 level by level, with no descent per entry.

use super::hints::{hint, LeafHints};
use super::keys::NodeTail;
use super::leaf::Leaf;
use super::node::{Inner, Summary, INNER_CAP, LEAF_CAP};
use super::{KeyOf, RankedIndex};
use crate::key::{Key, Score};
use crate::slab::Slab;

impl<T: NodeTail, H: LeafHints> RankedIndex<T, H> {
    /// Builds an index from ids already in strictly increasing key order (snapshot
    /// loading): leaves and inner nodes are filled to 7/8 directly, level by level, without
    /// a descent per entry. Keys are read once each, in order, to set the score-group bits.
    pub fn from_sorted(ids: &[u32], keys: &impl KeyOf<T>) -> Self {
        let mut index = Self::new();
        if ids.is_empty() {
            return index;
        }
        index.leaves = Slab::default();
        const LEAF_FILL: usize = LEAF_CAP * 7 / 8;
        const INNER_FILL: usize = INNER_CAP * 7 / 8;
        // Level 0: leaves, chained, with their summaries.
        let mut level: Vec<(u32, Summary<T>)> = Vec::with_capacity(ids.len() / LEAF_FILL + 1);
        let mut prev_score: Option<Score<T>> = None;
        for chunk in ids.chunks(LEAF_FILL) {
            let mut leaf = Leaf::<H>::empty();
            leaf.ids[..chunk.len()].copy_from_slice(chunk);
            leaf.len = chunk.len() as u32;
            let mut first_key = None;
            for (i, &id) in chunk.iter().enumerate() {
                let k = keys.key_of(id);
                if let Some(hints) = leaf.hints.get_mut() {
                    hints[i] = hint(k.nscore);
                }
                first_key.get_or_insert(k);
                leaf.set_group_bit(i, i == 0 || prev_score != Some(k.score()));
                prev_score = Some(k.score());
            }
            let summary = Summary {
                count: leaf.len,
                distinct: leaf.groups.count_ones(),
                min: Summary::min_of(&first_key.unwrap_or(Key::first_of(Score::of(0))), chunk[0]),
                max: Summary::max_of(&prev_score.unwrap_or(Score::of(0)), chunk[chunk.len() - 1]),
            };
            let id = index.new_leaf();
            if let Some(&(before, _)) = level.last() {
                leaf.prev = before;
                index.leaves.get_mut(before).next = id;
            }
            *index.leaves.get_mut(id) = leaf;
            level.push((id, summary));
        }
        // Upper levels until one node remains.
        while level.len() > 1 {
            let mut up = Vec::with_capacity(level.len() / INNER_FILL + 1);
            for chunk in level.chunks(INNER_FILL) {
                let mut node = Inner::empty();
                for (slot, &(child, summary)) in chunk.iter().enumerate() {
                    node.insert_slot(slot, child);
                    node.set_summary(slot, summary, keys);
                }
                let summary = node.summary();
                let id = index.new_inner();
                *index.inners.get_mut(id) = node;
                up.push((id, summary));
            }
            level = up;
            index.height += 1;
        }
        index.root = level[0].0;
        index.len = ids.len() as u64;
        index
    }
}
