//! Tests of [`RankedIndex::move_in_place`]: a remembered leaf tried before a descent
//! (the teams' small changes, `ranking/teams.rs`), against the model of `tests.rs`.

use super::tests::{check, Keys};
use super::*;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Entries given new keys near their old ones, each first tried in place in the leaf
    /// it was last found in (or a leaf drawn at random: a stale place, perhaps one freed
    /// by the removals between), some taken out and put back: a move in place leaves an
    /// index in key order with every hint, count and summary right, and a refused one
    /// changes nothing — then the ordinary move does it. Scores drawn from a few values
    /// (ties: refused) or the whole i64 range.
    #[test]
    fn a_move_in_place_keeps_the_index_what_a_move_makes_it(
        scores in prop::collection::vec(any::<i64>(), 1..400),
        narrow in any::<bool>(),
        steps in prop::collection::vec((any::<u16>(), -300i64..300, 0u8..8), 1..400),
    ) {
        let score = |s: i64| if narrow { s % 7 } else { s };
        let mut keys: Keys = Keys::default();
        let mut index = RankedIndex::<(), Hints>::new();
        for (i, &s) in scores.iter().enumerate() {
            keys.0.push(Key { nscore: score(s), tail: (), reached_at_us: 0, seq: i as u64 });
            index.insert(i as u32, keys.0[i], &keys);
        }
        let mut places = vec![NIL; scores.len()];
        let mut live = vec![true; scores.len()];
        for (seq, (pick, delta, what)) in (scores.len() as u64..).zip(steps) {
            let id = u32::from(pick) % scores.len() as u32;
            let old = keys.0[id as usize];
            let key = Key { nscore: old.nscore.saturating_add(delta), tail: (), reached_at_us: 0, seq };
            if !live[id as usize] {
                keys.0[id as usize] = key;
                index.insert(id, key, &keys);
                live[id as usize] = true;
                continue;
            }
            if what == 0 {
                let spot = index.spot(id, &old, &keys).expect("listed");
                index.take(spot, &keys);
                live[id as usize] = false;
                continue;
            }
            let leaf = if what == 1 { u32::from(pick) } else { places[id as usize] };
            let listed: Vec<u32> = index.iter_from(0).collect();
            if !index.move_in_place(leaf, id, key.nscore) {
                prop_assert_eq!(index.iter_from(0).collect::<Vec<_>>(), listed);
                index.check_invariants(&keys);
                let spot = index.spot(id, &old, &keys).expect("listed");
                places[id as usize] = spot.leaf();
                keys.0[id as usize] = key;
                index.move_to(spot, id, key, &keys);
            } else {
                keys.0[id as usize] = key;
            }
            index.check_invariants(&keys);
        }
        let live: Vec<u32> = (0..scores.len() as u32).filter(|&id| live[id as usize]).collect();
        check(&index, &keys, &live);
    }
}

/// An entry between two others far from it moves in place in the leaf it was found in;
/// one that would tie a neighbour's score, pass a neighbour, or sit at a leaf's end, or
/// whose leaf is not the one named, does not — and then nothing changed.
#[test]
fn a_small_step_between_far_neighbours_moves_in_place_and_nothing_else_does() {
    let mut keys: Keys = Keys::default();
    let mut index = RankedIndex::<(), Hints>::new();
    for i in 0..10u32 {
        keys.0.push(Key {
            nscore: i64::from(i) * 100,
            tail: (),
            reached_at_us: 0,
            seq: u64::from(i),
        });
        index.insert(i, keys.0[i as usize], &keys);
    }
    let leaf = index.spot(5, &keys.0[5], &keys).expect("listed").leaf();
    let near = |nscore| Key {
        nscore,
        tail: (),
        reached_at_us: 0,
        seq: 99,
    };
    for refused in [400, 600, 650, -1] {
        assert!(!index.move_in_place(leaf, 5, refused), "{refused}");
    }
    assert!(!index.move_in_place(leaf, 0, 1), "the leaf's first");
    assert!(!index.move_in_place(leaf + 1, 5, 501), "another leaf");
    index.check_invariants(&keys);
    assert!(index.move_in_place(leaf, 5, 550));
    keys.0[5] = near(550);
    index.check_invariants(&keys);
    check(&index, &keys, &(0..10).collect::<Vec<_>>());
}
