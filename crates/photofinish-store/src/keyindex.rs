//! The idempotency table's index ([`crate::idempotency::Table`]): a map from a key folded
//! to 64 bits to its slot's sequence number, in one flat array — open addressing, linear
//! probing, at most half full, deletion by shifting the entries after back (no tombstones).
//! It is here rather than a `HashMap` for one reason: the writer knows the keys of a batch
//! before it logs the batch, and with a flat array it can compute where each key's entry
//! is and [`prefetch`] it, so the one cache miss an entry costs in an index of tens of MB
//! (the table's main cost, docs/bench-history.md §8) overlaps the log write instead of
//! stalling the apply. A `HashMap` keeps control bytes and entries apart and hides both.

use photofinish_core::prefetch::prefetch;

/// One entry: a key (never 0: 0 marks an empty entry) and its value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Entry {
    key: u64,
    value: u64,
}

/// Entries in the smallest index that has any.
const MIN_CAPACITY: usize = 16;

/// The index. See the module docs.
#[derive(Clone, Default)]
pub struct KeyIndex {
    /// A power of two long (or empty).
    entries: Vec<Entry>,
    len: usize,
}

impl std::fmt::Debug for KeyIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyIndex")
            .field("len", &self.len)
            .field("capacity", &self.entries.len())
            .finish()
    }
}

/// Keys are stored xor this, so the one key stored as the empty mark (0) is this one,
/// not a key as likely as 0.
const MARK: u64 = 0x5851_F42D_4C95_7F2D;

/// A key as stored: xor [`MARK`], and the key that would become 0 (the empty mark) kept as
/// 1, alongside the one that becomes 1 (two keys then share an entry, which the table
/// allows for: its slots hold the whole key).
fn stored(key: u64) -> u64 {
    (key ^ MARK).max(1)
}

impl KeyIndex {
    /// Keys held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn mask(&self) -> usize {
        self.entries.len().wrapping_sub(1)
    }

    /// Where `key`'s probe starts: Fibonacci hashing, so keys that are not uniform (tests')
    /// spread too.
    fn home(&self, key: u64) -> usize {
        let bits = self.entries.len().trailing_zeros();
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// Where `key` is, if held.
    fn find(&self, key: u64) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let mut i = self.home(key);
        loop {
            let e = self.entries[i];
            if e.key == key {
                return Some(i);
            }
            if e.key == 0 {
                return None;
            }
            i = (i + 1) & self.mask();
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: u64) -> Option<u64> {
        self.find(stored(key)).map(|i| self.entries[i].value)
    }

    /// Prefetches the entry where a look for `key` starts (and an insert most likely
    /// writes), and the cache line after it, where its probe or a removal's shift goes on
    /// (profiled: with only the first, a removal stalled on the second).
    pub fn prefetch(&self, key: u64) {
        if let Some(e) = self.entries.get(self.home(stored(key))) {
            prefetch(e);
            prefetch(std::ptr::from_ref(e).cast::<u8>().wrapping_add(64));
        }
    }

    /// Sets `key` to `value`; the value it had.
    pub fn insert(&mut self, key: u64, value: u64) -> Option<u64> {
        self.insert_stored(stored(key), value)
    }

    fn insert_stored(&mut self, key: u64, value: u64) -> Option<u64> {
        if (self.len + 1) * 2 > self.entries.len() {
            self.grow();
        }
        let mut i = self.home(key);
        loop {
            let e = &mut self.entries[i];
            if e.key == key {
                return Some(std::mem::replace(&mut e.value, value));
            }
            if e.key == 0 {
                *e = Entry { key, value };
                self.len += 1;
                return None;
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Removes `key`; the value it had.
    pub fn remove(&mut self, key: u64) -> Option<u64> {
        let mut hole = self.find(stored(key))?;
        let value = self.entries[hole].value;
        let mask = self.mask();
        // Shift back every entry after the hole whose probe passes the hole, so no probe
        // meets an empty entry before its key.
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let e = self.entries[j];
            if e.key == 0 {
                break;
            }
            let home = self.home(e.key);
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.entries[hole] = e;
                hole = j;
            }
        }
        self.entries[hole] = Entry::default();
        self.len -= 1;
        Some(value)
    }

    /// Doubles the entries (or makes the first ones) and places every key again.
    fn grow(&mut self) {
        let capacity = (self.entries.len() * 2).max(MIN_CAPACITY);
        let old = std::mem::replace(&mut self.entries, vec![Entry::default(); capacity]);
        self.len = 0;
        for e in old.into_iter().filter(|e| e.key != 0) {
            self.insert_stored(e.key, e.value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    proptest::proptest! {
        /// Over random inserts and removes of a few keys (so probes collide, wrap and
        /// shift), 0, u64::MAX and the two keys that share an entry among them, the index
        /// answers as a `HashMap` of the keys as stored does.
        #[test]
        fn the_index_matches_a_map(
            ops in proptest::collection::vec((0u64..48, proptest::bool::ANY, 0u64..1000), 0..2000),
        ) {
            let mut index = KeyIndex::default();
            let mut model: HashMap<u64, u64> = HashMap::new();
            // Keys spread over the whole range, the two that share an entry among them.
            let key = |k: u64| match k {
                0 => MARK,
                1 => MARK ^ 1,
                2 => u64::MAX,
                3 => 0,
                k => k.wrapping_mul(0x2545_F491_4F6C_DD1D) >> (k % 7 * 9),
            };
            for (k, insert, value) in ops {
                let (k, shared) = (key(k), stored(key(k)));
                if insert {
                    proptest::prop_assert_eq!(index.insert(k, value), model.insert(shared, value));
                } else {
                    proptest::prop_assert_eq!(index.remove(k), model.remove(&shared));
                }
                proptest::prop_assert_eq!(index.len(), model.len());
                for k in (0..48).map(key) {
                    proptest::prop_assert_eq!(index.get(k), model.get(&stored(k)).copied());
                }
            }
        }
    }

    #[test]
    fn keys_that_start_alike_wrap_around_the_end_and_survive_removals() {
        let mut index = KeyIndex::default();
        index.insert(7, 0); // makes the first 16 entries
        let last = index.mask();
        // Keys whose probes all start at the last entry: they wrap to the front.
        let at_end: Vec<u64> = (1..u64::MAX)
            .filter(|&k| index.home(stored(k)) == last)
            .take(4)
            .collect();
        for (v, k) in at_end.iter().enumerate() {
            index.insert(*k, v as u64);
        }
        assert_eq!(index.remove(at_end[0]), Some(0));
        for (v, k) in at_end.iter().enumerate().skip(1) {
            assert_eq!(index.get(*k), Some(v as u64), "key {v} after the removal");
        }
        assert_eq!(index.get(at_end[0]), None);
        assert_eq!(index.get(7), Some(0));
        assert_eq!(index.len(), 4);
    }
}
