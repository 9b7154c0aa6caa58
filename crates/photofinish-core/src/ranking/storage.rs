//! A ranking's storage: the records (the order key and the member name, 40 bytes each),
//! the long names beside them, the other columns of a board of several ([`Tails`]), and
//! the index over the record ids in either of its two keys ([`Tree`], whose bodies
//! [`tree!`] runs). They live apart from [`Ranking`](super::Ranking)'s operations because
//! they only hold entries and read keys: what a write or a read does with them is in
//! `ranking.rs` and its other modules, which all share these types.

use crate::columns::Shape;
use crate::index::{Hints, KeyOf, LeafHints, NodeTail, RankedIndex};
use crate::key::{Cols, Key, MAX_COLUMNS};
use crate::slab::Slab;

/// Member names up to this many bytes are stored inside the record.
pub(super) const INLINE_NAME_BYTES: usize = 16;

/// 40 bytes: the key, with the name length packed under the sequence, and the name bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Record {
    pub(super) nscore: i64,
    pub(super) reached_at_us: i64,
    /// `seq << 8 | name_len`.
    pub(super) seq_len: u64,
    /// The name when it fits; else the id of the name in `long_names`, little-endian.
    pub(super) name: [u8; INLINE_NAME_BYTES],
}

impl Record {
    /// A record of nothing: what fresh record memory is filled with before use.
    pub(super) const EMPTY: Record = Record {
        nscore: 0,
        reached_at_us: 0,
        seq_len: 0,
        name: [0; INLINE_NAME_BYTES],
    };

    fn key(&self) -> Key {
        Key {
            nscore: self.nscore,
            tail: (),
            reached_at_us: self.reached_at_us,
            seq: self.seq_len >> 8,
        }
    }
    pub(super) fn name_len(&self) -> usize {
        (self.seq_len & 0xff) as usize
    }
    fn long_name_id(&self) -> u32 {
        u32::from_le_bytes([self.name[0], self.name[1], self.name[2], self.name[3]])
    }
}

/// Record ids per chunk of [`Tails`].
const TAIL_CHUNK_IDS: usize = 1 << 12;

/// The columns after the first of a board of several, normalized, `width` per record id,
/// beside the records in chunks that are never reallocated (no doubling slack, as the
/// [`Slab`]). A one-column board has width 0 and holds nothing.
#[derive(Debug, Default, Clone)]
pub(super) struct Tails {
    pub(super) width: usize,
    pub(super) chunks: Vec<Box<[i64]>>,
}

impl Tails {
    /// Where record `id`'s values start: its chunk and offset.
    #[inline]
    fn locate(&self, id: u32) -> (usize, usize) {
        let id = id as usize;
        (id / TAIL_CHUNK_IDS, (id % TAIL_CHUNK_IDS) * self.width)
    }

    /// Record `id`'s tail (0 beyond the width). Each width is a copy of a fixed length: a
    /// copy whose length is known only at run time (a slice's, or a loop LLVM turns into
    /// one) is a call to `memcpy`, which the profile of a three-column board found at a
    /// tenth of its reads' time.
    #[inline]
    pub(super) fn get(&self, id: u32) -> Cols {
        let mut t = [0; MAX_COLUMNS - 1];
        if self.width > 0 {
            let (c, at) = self.locate(id);
            let s = &self.chunks[c][at..];
            match self.width {
                1 => t[0] = s[0],
                2 => t[..2].copy_from_slice(&s[..2]),
                3 => t[..3].copy_from_slice(&s[..3]),
                _ => t.copy_from_slice(&s[..4]),
            }
        }
        t
    }

    /// Sets record `id`'s tail, adding the chunk it falls in.
    pub(super) fn set(&mut self, id: u32, tail: &Cols) {
        if self.width == 0 {
            return;
        }
        let (c, at) = self.locate(id);
        while self.chunks.len() <= c {
            self.chunks
                .push(vec![0; TAIL_CHUNK_IDS * self.width].into_boxed_slice());
        }
        let d = &mut self.chunks[c][at..];
        match self.width {
            1 => d[0] = tail[0],
            2 => d[..2].copy_from_slice(&tail[..2]),
            3 => d[..3].copy_from_slice(&tail[..3]),
            _ => d[..4].copy_from_slice(tail),
        }
    }

    pub(super) fn reserved_bytes(&self) -> usize {
        self.chunks.len() * TAIL_CHUNK_IDS * self.width * std::mem::size_of::<i64>()
    }
}

/// Records plus the side slab of long names and the other columns' values: everything
/// needed to read a key or a name.
#[derive(Debug, Default, Clone)]
pub(super) struct Records {
    pub(super) slab: Slab<Record>,
    pub(super) long_names: Slab<Box<str>>,
    pub(super) tails: Tails,
}

impl KeyOf for Records {
    #[inline]
    fn key_of(&self, id: u32) -> Key {
        self.slab.get(id).key()
    }
}

impl KeyOf<Cols> for Records {
    #[inline]
    fn key_of(&self, id: u32) -> Key<Cols> {
        let r = self.slab.get(id);
        Key {
            nscore: r.nscore,
            tail: self.tails.get(id),
            reached_at_us: r.reached_at_us,
            seq: r.seq_len >> 8,
        }
    }

    /// The first column decides unless it ties: the tail (another cache line) is read
    /// only then.
    #[inline]
    fn is_below(&self, id: u32, probe: &Key<Cols>) -> bool {
        let nscore = self.slab.get(id).nscore;
        if nscore != probe.nscore {
            return nscore < probe.nscore;
        }
        self.key_of(id) < *probe
    }

    #[inline]
    fn same_score(&self, a: u32, b: u32) -> bool {
        self.slab.get(a).nscore == self.slab.get(b).nscore && self.tails.get(a) == self.tails.get(b)
    }
}

/// A ranking's index: over the first column's key on a one-column board (the key every
/// board had before columns, at the same size and speed), over the whole tuple on a board
/// of several; a partition's index keeps hints in its leaves ([`LeafHints`]: 4 bytes an
/// entry within the partitions' budget, which save its leaf searches the records — the
/// board's own index goes without, for its memory). [`tree!`] runs one generic body on
/// any of them.
#[derive(Debug, Clone)]
pub(super) enum Tree {
    One(RankedIndex<()>),
    Many(RankedIndex<Cols>),
    OneHinted(RankedIndex<(), Hints>),
    ManyHinted(RankedIndex<Cols, Hints>),
}

/// Runs `$body` with `$ix` bound to the ranking's index, whichever its key.
macro_rules! tree {
    ($tree:expr, $ix:ident => $body:expr) => {
        match $tree {
            Tree::One($ix) => $body,
            Tree::Many($ix) => $body,
            Tree::OneHinted($ix) => $body,
            Tree::ManyHinted($ix) => $body,
        }
    };
}
pub(super) use tree;

impl Tree {
    /// An empty index for `shape`.
    pub(super) fn new(shape: &Shape) -> Self {
        if shape.is_multi() {
            Tree::Many(RankedIndex::new())
        } else {
            Tree::One(RankedIndex::new())
        }
    }

    /// An empty partition's index for `shape` (its leaves keep hints).
    pub(super) fn hinted(shape: &Shape) -> Self {
        if shape.is_multi() {
            Tree::ManyHinted(RankedIndex::new())
        } else {
            Tree::OneHinted(RankedIndex::new())
        }
    }

    /// An index of nothing, of `shape`'s key, shared: what a partition nobody is in
    /// reads.
    pub(super) fn empty(shape: &Shape) -> &'static Tree {
        static EMPTY: std::sync::LazyLock<[Tree; 2]> = std::sync::LazyLock::new(|| {
            [
                Tree::OneHinted(RankedIndex::new()),
                Tree::ManyHinted(RankedIndex::new()),
            ]
        });
        &EMPTY[usize::from(shape.is_multi())]
    }

    pub(super) fn len(&self) -> u64 {
        tree!(self, ix => ix.len())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn reserved_bytes(&self) -> usize {
        tree!(self, ix => ix.reserved_bytes())
    }

    /// The id at 0-based position `pos`.
    pub(super) fn get(&self, pos: u64) -> Option<u32> {
        tree!(self, ix => ix.get(pos))
    }

    /// Every id in rank order.
    pub(super) fn ids(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        tree!(self, ix => Box::new(ix.iter_from(0)))
    }
}

/// `ids` (any order) with their keys, sorted by key. The keys themselves are sorted, not
/// ids by a key looked up in its record: the lookups were a cache miss per comparison,
/// most of a 10M build. It costs a key and an id per entry while the sort runs.
pub(super) fn by_key<T: NodeTail>(
    ids: impl Iterator<Item = u32>,
    records: &Records,
) -> Vec<(Key<T>, u32)>
where
    Records: KeyOf<T>,
{
    let mut keyed: Vec<(Key<T>, u32)> = ids.map(|id| (records.key_of(id), id)).collect();
    keyed.sort_unstable_by_key(|&(key, _)| key);
    keyed
}

/// The index over entries [`by_key`] sorted: the tree is built bottom-up.
pub(super) fn index_of<T: NodeTail, H: LeafHints>(
    keyed: Vec<(Key<T>, u32)>,
    records: &Records,
) -> RankedIndex<T, H>
where
    Records: KeyOf<T>,
{
    let ids: Vec<u32> = keyed.into_iter().map(|(_, id)| id).collect();
    RankedIndex::from_sorted(&ids, records)
}

impl Records {
    /// Frees a long name's string and gives its id back.
    pub(super) fn release_long_name(&mut self, lid: u32) {
        *self.long_names.get_mut(lid) = Box::default();
        self.long_names.release(lid);
    }

    /// Gives back record `id` and its long name, if it has one.
    pub(super) fn release(&mut self, id: u32) {
        let r = *self.slab.get(id);
        if r.name_len() > INLINE_NAME_BYTES {
            self.release_long_name(r.long_name_id());
        }
        self.slab.release(id);
    }

    pub(super) fn name(&self, id: u32) -> &[u8] {
        let r = self.slab.get(id);
        let len = r.name_len();
        if len <= INLINE_NAME_BYTES {
            &r.name[..len]
        } else {
            self.long_names.get(r.long_name_id()).as_bytes()
        }
    }
}

/// Sets record `id`'s entry of side array `side` (one value per record id, 0 for none)
/// to `value`, growing it to hold `id`: the partition and the team beside each record.
pub(super) fn set_beside<T: Copy + Default>(side: &mut Vec<T>, id: u32, value: T) {
    let at = id as usize;
    if side.len() <= at {
        side.resize(at + 1, T::default());
    }
    side[at] = value;
}

/// Asks for the line holding record `id`'s entry of side array `side` ([`set_beside`];
/// [`crate::prefetch`]: a hint, so an id past its end asks for nothing harmful).
#[inline]
pub(super) fn prefetch_beside<T>(side: &[T], id: u32) {
    crate::prefetch::prefetch(side.as_ptr().wrapping_add(id as usize));
}
