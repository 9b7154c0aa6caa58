//! Unit tests of the tree against a sorted `Vec` of keys; the ranking-level property tests
//! in `tests/it` cover the same ground through the public API.

use super::*;
use crate::key::{Cols, Tail};
use proptest::prelude::*;

/// Keys addressed by id, like the ranking's records.
pub(super) struct Keys<T: Tail = ()>(pub(super) Vec<Key<T>>);

impl<T: Tail> Default for Keys<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T: Tail> KeyOf<T> for Keys<T> {
    fn key_of(&self, id: u32) -> Key<T> {
        self.0[id as usize]
    }
}

pub(super) fn check<T: NodeTail, H: LeafHints>(
    index: &RankedIndex<T, H>,
    keys: &Keys<T>,
    live: &[u32],
) {
    let mut model: Vec<(Key<T>, u32)> = live.iter().map(|&id| (keys.0[id as usize], id)).collect();
    model.sort();
    assert_eq!(index.len(), model.len() as u64);
    let listed: Vec<u32> = index.iter_from(0).collect();
    let expected: Vec<u32> = model.iter().map(|&(_, id)| id).collect();
    assert_eq!(listed, expected);
    // Entries and distinct scores strictly below each entry's score, in one pass.
    let (mut below, mut distinct) = (0u64, 0u64);
    for (pos, &(key, id)) in model.iter().enumerate() {
        if pos > 0 && model[pos - 1].0.score() != key.score() {
            below = pos as u64;
            distinct += 1;
        }
        assert_eq!(index.position(id, &key, keys), Some(pos as u64));
        assert_eq!(index.get(pos as u64), Some(id));
        assert_eq!(index.count_below(&Key::first_of(key.score()), keys), below);
        assert_eq!(
            index.distinct_below(key.score(), keys),
            distinct,
            "dense of {key:?}"
        );
    }
}

/// Applies `ops` (insert a key with score `score % scores`; or give the live id at `pick`
/// that score when `pick` is a multiple of 3, else remove it — found first and taken out
/// when `pick % 3` is 1)
/// and checks the tree against the model every 997 steps and at the end, and its
/// invariants after every `invariants_every`-th operation and at the end — once on leaves
/// without hints, once on leaves with them.
fn run(ops: Vec<(bool, u16, i64)>, scores: i64, invariants_every: usize) {
    let score_of = |score| Score::<()>::of(score % scores);
    run_with::<(), NoHints>(ops.clone(), invariants_every, score_of);
    run_with::<(), Hints>(ops, invariants_every, score_of);
}

/// [`run`] with each drawn value the score itself: the whole i64 range, its ends included.
fn run_whole_range(ops: Vec<(bool, u16, i64)>, invariants_every: usize) {
    run_with::<(), NoHints>(ops.clone(), invariants_every, Score::<()>::of);
    run_with::<(), Hints>(ops, invariants_every, Score::<()>::of);
}

/// [`run`] on one kind of leaf, with the score of each inserted key made by `score_of`
/// from the drawn value.
fn run_with<T: NodeTail, H: LeafHints>(
    ops: Vec<(bool, u16, i64)>,
    invariants_every: usize,
    score_of: impl Fn(i64) -> Score<T>,
) {
    let mut keys = Keys::default();
    let mut index = RankedIndex::<T, H>::new();
    let mut live: Vec<u32> = Vec::new();
    // Each key made gets the next sequence number.
    let mut seq = 0;
    let mut next_key = |score: i64| {
        seq += 1;
        let s = score_of(score);
        Key {
            nscore: s.nscore,
            tail: s.tail,
            reached_at_us: (seq % 7) as i64,
            seq,
        }
    };
    for (i, (insert, pick, score)) in ops.into_iter().enumerate() {
        if insert || live.is_empty() {
            let key = next_key(score);
            let id = keys.0.len() as u32;
            keys.0.push(key);
            let pos = index.insert(id, key, &keys);
            // The position insert counted on its way down is the one a lookup finds.
            assert_eq!(index.position(id, &key, &keys), Some(pos));
            live.push(id);
        } else if pick % 3 == 0 {
            // A new key for a live entry, found under its old one first (a write's move).
            let id = live[pick as usize % live.len()];
            let spot = index.spot(id, &keys.0[id as usize], &keys);
            let spot = spot.expect("a live entry is found under its key");
            let key = next_key(score);
            keys.0[id as usize] = key;
            let pos = index.move_to(spot, id, key, &keys);
            let below = live.iter().filter(|&&o| keys.0[o as usize] < key).count();
            assert_eq!(pos, below as u64, "the moved entry's position");
            assert_eq!(index.position(id, &key, &keys), Some(pos));
        } else {
            let id = live.swap_remove(pick as usize % live.len());
            if pick % 3 == 1 {
                // Found first, taken out after (a team's last visible member hidden).
                let spot = index.spot(id, &keys.0[id as usize], &keys);
                index.take(spot.expect("a live entry is found under its key"), &keys);
            } else {
                assert!(index.remove(id, keys.0[id as usize], &keys));
            }
            assert!(!index.remove(id, keys.0[id as usize], &keys));
        }
        if i % invariants_every == 0 {
            index.check_invariants(&keys);
        }
        if i % 997 == 0 {
            check(&index, &keys, &live);
        }
    }
    check(&index, &keys, &live);
    index.check_invariants(&keys);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn tree_matches_sorted_vec(ops in prop::collection::vec((prop::bool::weighted(0.6), any::<u16>(), any::<i64>()), 1..3000), scores in 1i64..40) {
        run(ops, scores, 1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Scores over the whole i64 range, in runs of one score, in clusters more than 2^31
    /// apart and in clusters the hints cannot tell apart, the ends included.
    #[test]
    fn tree_matches_sorted_vec_over_the_whole_i64_range(ops in prop::collection::vec((
        prop::bool::weighted(0.6),
        any::<u16>(),
        prop_oneof![
            any::<i64>(),
            -5i64..5,
            (-5i64..5).prop_map(|s| s << 33),
            // Neighbours past the hints' exact range: equal hints, different scores.
            (-5i64..5).prop_map(|s| (1 << 40) + s),
            (-5i64..5).prop_map(|s| -(1 << 40) + s),
            Just(i64::MIN),
            Just(i64::MAX - 1)
        ],
    ), 1..3000)) {
        run_whole_range(ops, 1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Tuple keys (a board of several columns): few values per column, so that the first
    /// column ties often and the others decide — across leaf and inner-node boundaries —
    /// and the i64 ends in the last column.
    #[test]
    fn tuple_keys_match_sorted_vec(ops in prop::collection::vec((prop::bool::weighted(0.6), any::<u16>(), any::<i64>()), 1..3000), hinted: bool) {
        let score_of = |v: i64| {
            let tail = [
                (v >> 8).rem_euclid(3),
                (v >> 16).rem_euclid(2),
                [i64::MIN, 0, i64::MAX][(v >> 24).rem_euclid(3) as usize],
                0,
            ];
            Score { nscore: v.rem_euclid(4), tail }
        };
        if hinted {
            run_with::<Cols, Hints>(ops, 1, score_of);
        } else {
            run_with::<Cols, NoHints>(ops, 1, score_of);
        }
    }
}

#[test]
fn grows_and_shrinks_through_several_levels() {
    let mut ops: Vec<(bool, u16, i64)> = (0..20_000).map(|i| (true, 0, i * 7919)).collect();
    // Picks that are never a multiple of 3: every one a removal (run_with's moves are).
    ops.extend((0..20_000).map(|i| (false, ((i * 31) % 21_845 * 3 + 1 + i % 2) as u16, 0)));
    // 40k operations on up to 20k entries: checking the invariants after each would be
    // quadratic, so every 50th (the only test with three levels and inner-node merges).
    run_whole_range(ops, 50);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Small steps of the entries of a larger index (a write's usual move, which mostly
    /// stays inside its leaf), ties made and broken, on both kinds of leaf: each move's
    /// position is the model's, and the invariants hold throughout.
    #[test]
    fn small_moves_match_sorted_vec(steps in prop::collection::vec((any::<u16>(), -3i64..4), 1..1500), hinted: bool) {
        if hinted {
            small_moves::<Hints>(steps);
        } else {
            small_moves::<NoHints>(steps);
        }
    }
}

/// 8,000 entries two to a score (two levels of inner nodes), then each of `steps` moves
/// the entry at `pick` by `by`.
fn small_moves<H: LeafHints>(steps: Vec<(u16, i64)>) {
    const N: u32 = 8000;
    let mut keys = Keys::default();
    for i in 0..u64::from(N) {
        keys.0.push(Key {
            nscore: (i / 2) as i64,
            tail: (),
            reached_at_us: 0,
            seq: i + 1,
        });
    }
    let ids: Vec<u32> = (0..N).collect();
    let mut index = RankedIndex::<(), H>::from_sorted(&ids, &keys);
    assert!(index.height >= 2, "height {}", index.height);
    for (n, (pick, by)) in steps.into_iter().enumerate() {
        let id = u32::from(pick) % N;
        let old = keys.0[id as usize];
        let spot = index.spot(id, &old, &keys).expect("found under its key");
        let key = Key {
            nscore: old.nscore + by,
            seq: u64::from(N) + 1 + n as u64,
            ..old
        };
        keys.0[id as usize] = key;
        let pos = index.move_to(spot, id, key, &keys);
        assert_eq!(keys.0.iter().filter(|&&k| k < key).count(), pos as usize);
        if n % 16 == 0 {
            index.check_invariants(&keys);
        }
    }
    index.check_invariants(&keys);
    check(&index, &keys, &ids);
}

#[test]
fn sequential_loads_fill_leaves() {
    let mut keys = Keys::default();
    let mut index: RankedIndex = RankedIndex::new();
    for i in 0..100_000u32 {
        let key = Key {
            nscore: i64::from(i),
            tail: (),
            reached_at_us: 0,
            seq: u64::from(i),
        };
        keys.0.push(key);
        index.insert(i, key, &keys);
    }
    // 100k ids in leaves of 63 or 64: about 1,600 leaves, not the 3,100 of half-full ones.
    assert!(index.leaves.len() < 1_700, "{} leaves", index.leaves.len());
    index.check_invariants(&keys);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// A bulk-built index answers like one built by inserts, and keeps working after.
    #[test]
    fn bulk_build_matches_inserts(scores in prop::collection::vec(0i64..50, 0..5000), more in prop::collection::vec((any::<bool>(), 0i64..50), 0..300), hinted: bool) {
        if hinted {
            bulk_then_changes::<Hints>(&scores, more)?;
        } else {
            bulk_then_changes::<NoHints>(&scores, more)?;
        }
    }
}

/// A bulk build of `scores`, then `more` inserts (true) and removals, on one kind of leaf:
/// the model's answers and the invariants after each.
fn bulk_then_changes<H: LeafHints>(
    scores: &[i64],
    more: Vec<(bool, i64)>,
) -> Result<(), TestCaseError> {
    {
        let mut keys = Keys::default();
        for (i, s) in scores.iter().enumerate() {
            keys.0.push(Key {
                nscore: *s,
                tail: (),
                reached_at_us: 0,
                seq: i as u64 + 1,
            });
        }
        let mut order: Vec<u32> = (0..keys.0.len() as u32).collect();
        order.sort_by_key(|&id| keys.0[id as usize]);
        let mut index = RankedIndex::<(), H>::from_sorted(&order, &keys);
        let mut live = order.clone();
        index.check_invariants(&keys);
        check(&index, &keys, &live);
        for (insert, s) in more {
            if insert || live.is_empty() {
                let id = keys.0.len() as u32;
                keys.0.push(Key {
                    nscore: s,
                    tail: (),
                    reached_at_us: 1,
                    seq: u64::from(id) + 1,
                });
                index.insert(id, keys.0[id as usize], &keys);
                live.push(id);
            } else {
                let id = live.swap_remove((s as usize) % live.len());
                prop_assert!(index.remove(id, keys.0[id as usize], &keys));
            }
            index.check_invariants(&keys);
        }
        check(&index, &keys, &live);
    }
    Ok(())
}

proptest! {
    /// A hint keeps the order of first columns (never reverses two), and tells apart every
    /// two within its exact range.
    #[test]
    fn hints_keep_the_order(a in prop_oneof![any::<i64>(), -(1i64 << 26)..(1 << 26), Just(i64::MIN), Just(i64::MAX)], d in prop_oneof![0i64..3, any::<i64>()]) {
        let b = a.saturating_add_unsigned(d.unsigned_abs());
        prop_assert!(hint(a) <= hint(b), "{a} <= {b} but hint {:#x} > {:#x}", hint(a), hint(b));
        if b > a && a.unsigned_abs() < 1 << 25 && b.unsigned_abs() < 1 << 25 {
            prop_assert!(hint(a) < hint(b));
        }
    }
}

#[test]
fn hints_at_the_ends_and_the_exact_range() {
    assert!(hint(i64::MIN) < hint(i64::MIN + (1 << 40)));
    assert_eq!(hint(i64::MIN), hint(i64::MIN + 1));
    assert_eq!(hint(-1), (1 << 31) - 1);
    assert_eq!(hint(0), 1 << 31);
    assert!(hint(i64::MAX) > hint(i64::MAX - (1 << 40)));
    assert_eq!(hint((1 << 25) - 1) + 1, hint(1 << 25));
    assert_eq!(hint(-(1 << 25)) + 1, hint(-(1 << 25) + 1));
}

/// `n` ids with three entries per score, bulk-built.
fn bulk(n: u32) -> (RankedIndex, Keys) {
    let keys = Keys(
        (0..n)
            .map(|i| Key {
                nscore: i64::from(i / 3),
                tail: (),
                reached_at_us: 0,
                seq: u64::from(i) + 1,
            })
            .collect(),
    );
    let ids: Vec<u32> = (0..n).collect();
    (RankedIndex::from_sorted(&ids, &keys), keys)
}

#[test]
fn bulk_builds_keep_the_invariants_at_fill_boundaries() {
    // Bulk builds fill nodes to 56 of 64; sizes around multiples of 56 leave a last leaf or
    // a last inner node with a single entry or child.
    let fill = (LEAF_CAP * 7 / 8) as u32;
    for n in [
        0,
        1,
        2,
        fill - 1,
        fill,
        fill + 1,
        fill * fill,
        fill * (fill + 1),
        fill * (fill + 1) + 1,
    ] {
        let (mut index, keys) = bulk(n);
        index.check_invariants(&keys);
        // Emptying from both ends takes the thin last nodes apart through the merge rules.
        for k in 0..n.min(200) {
            let id = if k % 2 == 0 { k / 2 } else { n - 1 - k / 2 };
            assert!(index.remove(id, keys.0[id as usize], &keys));
            index.check_invariants(&keys);
        }
    }
}

#[test]
fn a_child_emptied_between_two_leaves_joins_them_afresh() {
    // Leaf 1 (entries 56..112) empties without merging (leaf 0 is too full to take it);
    // its slot closes, and leaves 0 and 2 become neighbours whose ends (scores 18 and 37)
    // differ, where leaf 2's first score had continued leaf 1's last.
    let (mut index, keys) = bulk(1_000);
    let before = index.inners.get(index.root).len;
    for id in 56..112 {
        assert!(index.remove(id, keys.0[id as usize], &keys));
        index.check_invariants(&keys);
    }
    assert_eq!(index.inners.get(index.root).len, before - 1);
    let live: Vec<u32> = (0..56).chain(112..1_000).collect();
    check(&index, &keys, &live);
}

/// A two-level bulk-built index for corrupting in the tests below.
fn two_levels() -> (RankedIndex, Keys) {
    let (index, keys) = bulk(1_000);
    assert_eq!(index.height, 1);
    index.check_invariants(&keys);
    (index, keys)
}

#[test]
#[should_panic(expected = "kept entry count")]
fn invariants_catch_a_wrong_child_count() {
    let (mut index, keys) = two_levels();
    index.inners.get_mut(index.root).counts[1] += 1;
    index.check_invariants(&keys);
}

#[test]
#[should_panic(expected = "kept distinct count")]
fn invariants_catch_a_wrong_distinct_count() {
    let (mut index, keys) = two_levels();
    index.inners.get_mut(index.root).distinct[2] -= 1;
    index.check_invariants(&keys);
}

#[test]
#[should_panic(expected = "a join bit disagrees")]
fn invariants_catch_a_wrong_join_bit() {
    let (mut index, keys) = two_levels();
    // Leaf 1 starts at entry 56, score 18, which ends leaf 0: bit 1 is set.
    index.inners.get_mut(index.root).joins &= !(1 << 1);
    index.check_invariants(&keys);
}

#[test]
#[should_panic(expected = "group bit 2")]
fn invariants_catch_a_wrong_group_bit() {
    let (mut index, keys) = two_levels();
    let leaf = index.inners.get(index.root).children[0];
    // Entries 0..3 share a score: entry 2 does not start a group.
    index.leaves.get_mut(leaf).groups |= 1 << 2;
    index.check_invariants(&keys);
}

#[test]
#[should_panic(expected = "not above")]
fn invariants_catch_keys_out_of_order() {
    let (mut index, keys) = two_levels();
    let leaf = index.inners.get(index.root).children[3];
    index.leaves.get_mut(leaf).ids.swap(4, 5);
    index.check_invariants(&keys);
}

#[test]
#[should_panic(expected = "has prev")]
fn invariants_catch_a_broken_leaf_chain() {
    let (mut index, keys) = two_levels();
    let leaf = index.inners.get(index.root).children[4];
    index.leaves.get_mut(leaf).prev = NIL;
    index.check_invariants(&keys);
}

#[test]
#[should_panic(expected = "len is")]
fn invariants_catch_a_wrong_len() {
    let (mut index, keys) = two_levels();
    index.len += 1;
    index.check_invariants(&keys);
}

#[test]
#[should_panic(expected = "appears twice")]
fn invariants_catch_a_repeated_id() {
    let (mut index, keys) = two_levels();
    let (first, later) = {
        let root = index.inners.get(index.root);
        (root.children[0], root.children[3])
    };
    let id = index.leaves.get(first).ids[0];
    index.leaves.get_mut(later).ids[4] = id;
    index.check_invariants(&keys);
}

/// Scores for the leaf search: a few small ones (long runs of one score), and ones far
/// apart — the i64 ends, and clusters more than 2^31 from each other.
fn leaf_score() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -3i64..3,
        1 => Just(i64::MIN),
        1 => Just(i64::MAX),
        1 => Just(i64::MIN + 1),
        1 => Just(i64::MAX - 1),
        1 => (-3i64..3).prop_map(|s| s << 32),
        1 => (-3i64..3).prop_map(|s| (1 << 31) + s),
    ]
}

proptest! {
    /// The leaf's search answers what a plain partition point does, for every length from
    /// empty to full, probes below, between, equal to and above the keys, runs of equal
    /// scores (the case the pivots' count must get right), and the i64 ends.
    #[test]
    fn leaf_search_matches_partition_point(
        scores in prop::collection::vec(leaf_score(), 0..=LEAF_CAP),
        probe_score in leaf_score(),
        probe_tie in 0u64..200,
    ) {
        let mut sorted = scores;
        sorted.sort();
        let keys = Keys(
            sorted
                .iter()
                .enumerate()
                .map(|(i, &s)| Key { nscore: s, tail: (), reached_at_us: 0, seq: i as u64 * 3 })
                .collect(),
        );
        let mut leaf = leaf::Leaf::<NoHints>::empty();
        let mut hinted = leaf::Leaf::<Hints>::empty();
        for (i, &s) in sorted.iter().enumerate() {
            leaf.ids[i] = i as u32;
            hinted.ids[i] = i as u32;
            if let Some(h) = hinted.hints.get_mut() {
                h[i] = hint(s);
            }
        }
        leaf.len = sorted.len() as u32;
        hinted.len = leaf.len;
        let probe = Key { nscore: probe_score, tail: (), reached_at_us: 0, seq: probe_tie };
        let expected = keys.0.partition_point(|k| *k < probe);
        prop_assert_eq!(leaf.lower_bound(&probe, &keys), expected);
        prop_assert_eq!(hinted.lower_bound(&probe, &keys), expected);
    }
}

proptest! {
    /// An entry moved inside its leaf by [`leaf::Leaf::lower_bound_without`] and
    /// [`leaf::Leaf::move_within`] ends where taking it out and inserting it again puts
    /// it: the same slot, ids, hints and group bits, in both kinds of leaf, for moves
    /// both ways, to the same place, across runs of equal scores and the i64 ends.
    #[test]
    fn a_move_within_the_leaf_is_a_removal_and_an_insertion(
        scores in prop::collection::vec(leaf_score(), 1..=LEAF_CAP),
        from_pick in 0usize..LEAF_CAP,
        new_score in leaf_score(),
        new_seq in 0u64..400,
    ) {
        let mut sorted = scores;
        sorted.sort();
        let mut keys = Keys(
            sorted
                .iter()
                .enumerate()
                .map(|(i, &s)| Key { nscore: s, tail: (), reached_at_us: 0, seq: i as u64 * 3 })
                .collect(),
        );
        fn filled<H: LeafHints>(keys: &Keys) -> leaf::Leaf<H> {
            let mut leaf = leaf::Leaf::<H>::empty();
            for (i, k) in keys.0.iter().enumerate() {
                leaf.insert_at(i, i as u32, k.nscore, keys);
            }
            leaf
        }
        fn both<H: LeafHints>(
            mut leaf: leaf::Leaf<H>,
            from: usize,
            key: &Key,
            keys: &Keys,
        ) -> Result<(), TestCaseError> {
            let id = leaf.ids[from];
            let mut moved = leaf.clone();
            leaf.remove_at(from);
            let at = leaf.lower_bound(key, keys);
            leaf.insert_at(at, id, key.nscore, keys);
            let to = moved.lower_bound_without(from, key, keys);
            moved.move_within(from, to, key.nscore, keys);
            prop_assert_eq!(to, at);
            prop_assert_eq!(moved.ids(), leaf.ids());
            prop_assert_eq!(moved.groups, leaf.groups);
            prop_assert_eq!(
                moved.hints.get().map(|h| h[..moved.len as usize].to_vec()),
                leaf.hints.get().map(|h| h[..leaf.len as usize].to_vec())
            );
            Ok(())
        }
        let (plain, hinted) = (filled::<NoHints>(&keys), filled::<Hints>(&keys));
        let from = from_pick % sorted.len();
        // The record already holds its new key when the leaf moves it.
        let key = Key { nscore: new_score, tail: (), reached_at_us: 0, seq: new_seq };
        keys.0[from] = key;
        both(plain, from, &key, &keys)?;
        both(hinted, from, &key, &keys)?;
    }
}
