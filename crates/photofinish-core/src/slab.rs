//! A chunked slab: values addressed by dense `u32` ids, with a free list.
//!
//! Chunks have a fixed capacity and are never reallocated, so growing by one value never
//! copies the rest and never leaves the up-to-2x slack a doubling `Vec` would: at 10M
//! members that slack alone would cost more than the whole per-member budget. Removed ids
//! are reused before new ones are minted.

/// Target bytes per chunk: big enough that the outer vector stays tiny, small enough that
/// the unused tail of the last chunk is nothing next to a large ranking — and that a slab of
/// 2.8 KB inner nodes does not reserve megabytes for its first few nodes.
const CHUNK_TARGET_BYTES: usize = 128 * 1024;

/// The largest id a slab hands out; `u32::MAX` is kept free as a "none" marker for users.
pub const MAX_SLAB_ID: u32 = u32::MAX - 1;

/// Dense storage addressed by `u32`. Ids of removed values are reused. The first chunk
/// grows by doubling up to a chunk's size; every later chunk is reserved whole.
#[derive(Debug, Clone)]
pub struct Slab<T> {
    /// Values per chunk is `1 << chunk_shift`, a power of two so ids split with shifts.
    chunk_shift: u32,
    chunks: Vec<Vec<T>>,
    free: Vec<u32>,
    live: usize,
}

/// log2 of the values per chunk of a slab of `T`.
fn chunk_shift_of<T>() -> u32 {
    (CHUNK_TARGET_BYTES / std::mem::size_of::<T>().max(1))
        .max(1)
        .ilog2()
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            chunk_shift: chunk_shift_of::<T>(),
            chunks: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value` and returns its id, or `None` when all `u32` ids are taken.
    pub fn insert(&mut self, value: T) -> Option<u32> {
        if let Some(id) = self.free.pop() {
            *self.get_mut(id) = value;
            self.live += 1;
            return Some(id);
        }
        let next = self.minted();
        if next > MAX_SLAB_ID as usize {
            return None;
        }
        let chunk_len = self.chunk_len();
        if self.chunks.last().is_none_or(|c| c.len() == chunk_len) {
            // The first chunk grows as it fills, so a small slab stays small (a
            // partition's index, a board of a few members: 10,000 of them would otherwise
            // reserve 128 KiB each); the later ones are made whole and never move.
            let room = if self.chunks.is_empty() { 0 } else { chunk_len };
            self.chunks.push(Vec::with_capacity(room));
        }
        // The branch above guarantees a last chunk with room.
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.push(value);
        }
        self.live += 1;
        Some(next as u32)
    }

    /// Marks `id` free for reuse. The value stays in place until overwritten; callers drop
    /// anything heavy it owns before releasing it.
    pub fn release(&mut self, id: u32) {
        self.free.push(id);
        self.live -= 1;
    }

    /// The chunk and the offset in it of `id`.
    #[inline]
    fn locate(&self, id: u32) -> (usize, usize) {
        let mask = (1u32 << self.chunk_shift) - 1;
        ((id >> self.chunk_shift) as usize, (id & mask) as usize)
    }

    /// The value at `id`. Panics on an id this slab never handed out (an internal bug).
    #[inline]
    pub fn get(&self, id: u32) -> &T {
        let (chunk, at) = self.locate(id);
        &self.chunks[chunk][at]
    }

    /// The value at `id`, or `None` for an id this slab never handed out (a remembered
    /// id that may be stale: a released one still reads as its last value).
    #[inline]
    pub fn try_get(&self, id: u32) -> Option<&T> {
        let (chunk, at) = self.locate(id);
        self.chunks.get(chunk).and_then(|c| c.get(at))
    }

    /// Prefetches the value at `id` ([`crate::prefetch`]); nothing for an id never handed
    /// out. A batch calls it for all its ids before it reads the first.
    #[inline]
    pub fn prefetch(&self, id: u32) {
        if let Some(v) = self.try_get(id) {
            crate::prefetch::prefetch_value(v);
        }
    }

    /// The value at `id`, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut T {
        let (chunk, at) = self.locate(id);
        &mut self.chunks[chunk][at]
    }

    fn chunk_len(&self) -> usize {
        1 << self.chunk_shift
    }

    /// Whether the next insert starts a new chunk: no free id, and no chunk with room.
    pub fn needs_chunk(&self) -> bool {
        self.free.is_empty()
            && self
                .chunks
                .last()
                .is_none_or(|c| c.len() == self.chunk_len())
    }

    /// Hands the slab the chunk its next inserts fill, when [`Self::needs_chunk`]: an empty
    /// vector with room for a chunk, such as [`prefaulted_chunks`] makes. Anything else is
    /// dropped and the slab allocates as usual.
    pub fn add_chunk(&mut self, chunk: Vec<T>) {
        if self.needs_chunk() && chunk.is_empty() && chunk.capacity() >= self.chunk_len() {
            self.chunks.push(chunk);
        }
    }

    /// Number of live values.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no value is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    fn minted(&self) -> usize {
        match self.chunks.last() {
            None => 0,
            Some(last) => (self.chunks.len() - 1) * self.chunk_len() + last.len(),
        }
    }

    /// Bytes reserved by the chunks and the free list (for memory reports).
    pub fn reserved_bytes(&self) -> usize {
        let values = match self.chunks.first() {
            None => 0,
            Some(first) => first.capacity() + (self.chunks.len() - 1) * self.chunk_len(),
        };
        values * std::mem::size_of::<T>() + self.free.capacity() * std::mem::size_of::<u32>()
    }
}

/// Starts a thread that makes the empty chunks of a [`Slab`] of `T` that `values` values
/// fill, and writes every byte of each once before sending it, so the kernel's work for
/// fresh memory (a fault and a zeroed page per 4 KiB) is done on that thread while the caller fills the chunks it
/// already has ([`Slab::add_chunk`]). The channel holds a few chunks, so the thread stays
/// only a little ahead; it ends when done or when the receiver is dropped. `None` when no
/// thread could start. Bulk loads use it: at 10M members the records' 400 MB of fresh
/// pages were 15% of a restart (docs/bench-history.md §13).
pub fn prefaulted_chunks<T: Copy + Send + 'static>(
    values: usize,
    fill: T,
) -> Option<std::sync::mpsc::Receiver<Vec<T>>> {
    const AHEAD: usize = 32;
    let (tx, rx) = std::sync::mpsc::sync_channel(AHEAD);
    let len = 1usize << chunk_shift_of::<T>();
    let count = values.div_ceil(len);
    std::thread::Builder::new()
        .name("pf-prefault".into())
        .spawn(move || {
            for _ in 0..count {
                let mut chunk = Vec::with_capacity(len);
                chunk.resize(len, fill);
                // The writes must happen although the values are dropped at once.
                std::hint::black_box(&mut chunk);
                chunk.clear();
                if tx.send(chunk).is_err() {
                    return;
                }
            }
        })
        .ok()?;
    Some(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_reused() {
        let mut s = Slab::default();
        let ids: Vec<u32> = (0..10_000).filter_map(|i| s.insert(i)).collect();
        assert_eq!(ids, (0..10_000).collect::<Vec<u32>>());
        assert_eq!(*s.get(4097), 4097);
        assert_eq!(s.chunk_len(), 32 * 1024, "128 KiB of i32");
        s.release(17);
        assert_eq!(s.len(), 9_999);
        assert_eq!(s.insert(-1), Some(17));
        assert_eq!(*s.get(17), -1);
        assert_eq!(s.insert(5), Some(10_000));
    }

    /// A prefetch is a hint for any id: one never handed out (past the last chunk, or in
    /// the last chunk's unfilled tail) is ignored, not a panic.
    #[test]
    fn prefetch_takes_any_id() {
        let mut s = Slab::default();
        s.prefetch(0);
        assert_eq!(s.insert(7u64), Some(0));
        for id in [0, 1, 1 << 20, u32::MAX] {
            s.prefetch(id);
        }
        assert_eq!((*s.get(0), s.len()), (7, 1));
    }

    #[test]
    fn prefaulted_chunks_fill_in_order() {
        let mut s = Slab::default();
        let rx = prefaulted_chunks(3 * s.chunk_len() - 1, 0i32).expect("thread");
        let mut added = 0;
        for i in 0..100_000 {
            if s.needs_chunk() {
                if let Ok(c) = rx.recv() {
                    s.add_chunk(c);
                    added += 1;
                }
            }
            assert_eq!(s.insert(i), Some(i as u32));
        }
        assert_eq!(added, 3, "three chunks given, then the slab's own");
        assert!((0..100_000).all(|i| *s.get(i as u32) == i));
        // Not taken while a chunk has room or an id is free.
        s.release(5);
        assert!(!s.needs_chunk());
        s.add_chunk(Vec::with_capacity(1 << 20));
        assert_eq!(s.insert(-5), Some(5));
    }
}
