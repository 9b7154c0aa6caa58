//! What a leaf of the ranked index keeps beside its ids ([`LeafHints`]): nothing, or a
//! 32-bit digest of each entry's first column ([`hint`]) that keeps its order, so a leaf's
//! search settles every entry whose digest differs from the probe's without reading its
//! record. An index chooses by its type: the board's own goes without (4 bytes an entry
//! count against its memory), a partition's and the teams' keep them
//! (docs/bench-history.md §39).

/// What a leaf keeps beside its ids: nothing ([`NoHints`]: a board's own index, where
/// 4 bytes a member count against its memory), or each entry's [`hint`] ([`Hints`]: a
/// partition's and the teams' indexes, whose leaf searches would otherwise wait on the
/// records of entries the write does not touch).
pub trait LeafHints: Copy + std::fmt::Debug + Send + Sync + 'static {
    /// No hints.
    fn none() -> Self;
    /// The hints, one a slot of the leaf, in an index that keeps them.
    fn get(&self) -> Option<&[u32]>;
    /// The hints to change, in an index that keeps them.
    fn get_mut(&mut self) -> Option<&mut [u32]>;
}

/// A leaf without hints (see [`LeafHints`]).
#[derive(Debug, Clone, Copy)]
pub struct NoHints;

impl LeafHints for NoHints {
    #[inline]
    fn none() -> Self {
        NoHints
    }
    #[inline]
    fn get(&self) -> Option<&[u32]> {
        None
    }
    #[inline]
    fn get_mut(&mut self) -> Option<&mut [u32]> {
        None
    }
}

/// Each entry's [`hint`], in key order like the ids, for a leaf of `N` slots (see
/// [`LeafHints`]; the index names it for its leaves' size, `index::Hints`).
#[derive(Debug, Clone, Copy)]
pub struct HintsOf<const N: usize>([u32; N]);

impl<const N: usize> LeafHints for HintsOf<N> {
    #[inline]
    fn none() -> Self {
        HintsOf([0; N])
    }
    #[inline]
    fn get(&self) -> Option<&[u32]> {
        Some(&self.0)
    }
    #[inline]
    fn get_mut(&mut self) -> Option<&mut [u32]> {
        Some(&mut self.0)
    }
}

/// A 32-bit digest of a key's first column that keeps its order (`a < b` implies
/// `hint(a) <= hint(b)`): exact within ±2^25, and past that the top 26 significant bits
/// of the magnitude (of `-x - 1` for a negative `x`), as a float keeps them. Entries whose hints differ are ordered by
/// them alone; only equal hints send a leaf's search to the records.
#[inline]
pub fn hint(first: i64) -> u32 {
    const M: u32 = 25;
    // A magnitude below 2^63 in 31 bits, its order kept: below 2^M as it is; past that
    // its top bit's place (M..=62, stored from 1) and the M bits after it.
    fn squeeze(m: u64) -> u32 {
        if m < 1 << M {
            return m as u32;
        }
        let top = 63 - m.leading_zeros();
        let mantissa = (m >> (top - M)) as u32 & ((1 << M) - 1);
        ((top - M + 1) << M) | mantissa
    }
    if first >= 0 {
        (1 << 31) | squeeze(first as u64)
    } else {
        // !first = -first - 1: the magnitudes of the negatives, reversed below 2^31.
        (1 << 31) - 1 - squeeze(!first as u64)
    }
}
