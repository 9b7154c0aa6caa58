//! How the ranked index reads keys, and what its inner nodes keep of them.
//!
//! The index stores entry ids, not keys: [`KeyOf`] reads an id's key from the caller's
//! records. How a parent keeps a child's minimum key and maximum score depends on the key
//! ([`NodeTail`]): on a one-column board, copies (the first column, `reached_at` and the
//! sequence; the maximum's first column); on a board of several, the first columns and
//! the *ids* of the two entries with a 16-bit mix of their tails ([`Kept`]), whose other
//! parts are read from the records only when the first columns and the mixes tie — so a
//! node of a tuple index is no larger than a one-column one, and a board of several
//! columns pays its further columns once, beside the records. These are the index's two
//! kinds of key; the nodes themselves, in `node.rs`, are written once for both.

use crate::key::{Cols, Key, Score, Tail};

/// Where the index finds the key of an entry id. The index stores ids, not keys, so that
/// each key is stored once, in the caller's record.
pub trait KeyOf<T: Tail = ()> {
    /// The current key of entry `id`.
    fn key_of(&self, id: u32) -> Key<T>;

    /// Whether entry `id`'s key is below `probe` (a leaf's search). A store whose keys
    /// live in two places (a board of several columns: the first column in the record,
    /// the others beside it) may decide on the first part alone when it differs.
    #[inline]
    fn is_below(&self, id: u32, probe: &Key<T>) -> bool {
        self.key_of(id) < *probe
    }

    /// Whether entries `a` and `b` have the same score (a leaf's group bits).
    #[inline]
    fn same_score(&self, a: u32, b: u32) -> bool {
        self.key_of(a).score() == self.key_of(b).score()
    }
}

/// The keys an index can be over, with what an inner node keeps of a child's ends beyond
/// their first columns (see the module docs).
pub trait NodeTail: Tail {
    /// Kept of a child's minimum key.
    type MinCopy: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static;
    /// Kept of a child's maximum score.
    type MaxCopy: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static;
    /// What to keep of minimum key `key`, entry `id`'s.
    fn min_copy(key: &Key<Self>, id: u32) -> Self::MinCopy;
    /// What to keep of maximum score `score`, entry `id`'s.
    fn max_copy(score: &Score<Self>, id: u32) -> Self::MaxCopy;
    /// The minimum key a node kept as `nscore` and `copy`.
    fn min_key(nscore: i64, copy: Self::MinCopy, keys: &impl KeyOf<Self>) -> Key<Self>;
    /// Whether a child's minimum (kept as `min`) and the previous child's maximum (kept
    /// as `max`), whose first columns are equal, are the same score.
    fn same_rest(min: Self::MinCopy, max: Self::MaxCopy, keys: &impl KeyOf<Self>) -> bool;
}

/// One column: the key itself is small, so it is copied (no record is read to descend).
impl NodeTail for () {
    type MinCopy = (i64, u64);
    type MaxCopy = ();
    #[inline]
    fn min_copy(key: &Key, _: u32) -> (i64, u64) {
        (key.reached_at_us, key.seq)
    }
    #[inline]
    fn max_copy(_: &Score, _: u32) {}
    #[inline]
    fn min_key(nscore: i64, (reached_at_us, seq): (i64, u64), _: &impl KeyOf) -> Key {
        Key {
            nscore,
            tail: (),
            reached_at_us,
            seq,
        }
    }
    #[inline]
    fn same_rest(_: (i64, u64), _: (), _: &impl KeyOf) -> bool {
        true
    }
}

/// A 16-bit mix of a tail: different mixes are different tails, so a node tells nearly
/// every two scores apart without reading a record; equal mixes are confirmed from the
/// records.
#[inline]
fn tail_mix(tail: &Cols) -> u16 {
    let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
    for &v in tail {
        h = (h ^ v as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
    }
    (h >> 48) as u16
}

/// What a node of a tuple index keeps of a child's end: the entry's id and the mix of
/// its tail, in 6 bytes (packed: 64 of them take 384 bytes, not 512, which keeps a board
/// of three columns within 16 bytes a member of a one-column one).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, packed)]
pub struct Kept {
    id: u32,
    mix: u16,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (id, mix) = (self.id, self.mix);
        write!(f, "Kept {{ id: {id}, mix: {mix:#06x} }}")
    }
}

/// Several columns: the entries' ids with a mix of their tails ([`tail_mix`]); the rest
/// of a key is read from the records only when first columns, and mixes, tie.
impl NodeTail for Cols {
    type MinCopy = Kept;
    type MaxCopy = Kept;
    #[inline]
    fn min_copy(key: &Key<Cols>, id: u32) -> Kept {
        Kept {
            id,
            mix: tail_mix(&key.tail),
        }
    }
    #[inline]
    fn max_copy(score: &Score<Cols>, id: u32) -> Kept {
        Kept {
            id,
            mix: tail_mix(&score.tail),
        }
    }
    #[inline]
    fn min_key(_: i64, kept: Kept, keys: &impl KeyOf<Cols>) -> Key<Cols> {
        let id = kept.id;
        keys.key_of(id)
    }
    #[inline]
    fn same_rest(min: Kept, max: Kept, keys: &impl KeyOf<Cols>) -> bool {
        let (a, b) = (min.id, max.id);
        min.mix == max.mix && keys.key_of(a).tail == keys.key_of(b).tail
    }
}
