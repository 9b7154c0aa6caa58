//! Saving and loading a ranking: every entry with its exact key for a snapshot, and
//! rebuilding a ranking from saved entries — one at a time, or all at once from rank order
//! (the bulk path recovery uses: records first, each name hashed as it comes, then the
//! member table filled in runs of its slot order while the index is built bottom-up — on
//! a second thread for a large ranking, whose records also come from chunks a third thread
//! touched first).

use super::*;
use crate::index::{LeafHints, NodeTail, RankedIndex};
use crate::key::{Cols, Key};

/// One entry as a snapshot saved it.
#[derive(Debug, Clone, Copy)]
pub struct SavedEntry<'a> {
    /// Member name.
    pub member: &'a str,
    /// Scores, one per column of the board.
    pub scores: Scores,
    /// When the member first reached the score.
    pub reached_at_us: i64,
    /// Sequence number of the write that set the score.
    pub seq: u64,
    /// Serialized metadata object.
    pub metadata: Option<&'a str>,
}

/// A ranking of at least this many entries builds its member table on one thread and its
/// rank order (the sort, if the entries came unsorted) and index on another; below it, a
/// thread's start would cost more than it saves.
pub const PARALLEL_BUILD_MIN: usize = 100_000;

/// Builds a ranking in bulk: entries are pushed in any order, then
/// [`RankingBuilder::finish`] sorts their ids if they came out of order, fills the member
/// table and builds the index bottom-up — what loading a snapshot and an import share.
#[derive(Debug)]
pub struct RankingBuilder {
    r: Ranking,
    ids: Vec<u32>,
    /// The member-table hash of each id in `ids`, computed while its name was at hand.
    hashes: Vec<u64>,
    /// Record chunks whose memory another thread touched first (a large build).
    fresh: Option<std::sync::mpsc::Receiver<Vec<Record>>>,
    last: Option<Key<Cols>>,
    sorted: bool,
}

impl RankingBuilder {
    /// An empty builder for a board of `shape`, with room for `capacity` entries.
    pub fn new(shape: Shape, capacity: usize) -> Self {
        Self {
            r: Ranking::new(shape),
            ids: Vec::with_capacity(capacity),
            hashes: Vec::with_capacity(capacity),
            fresh: (capacity >= PARALLEL_BUILD_MIN)
                .then(|| crate::slab::prefaulted_chunks(capacity, Record::EMPTY))
                .flatten(),
            last: None,
            sorted: true,
        }
    }

    /// Entries pushed so far.
    pub fn len(&self) -> u64 {
        self.ids.len() as u64
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether every entry so far came in strictly increasing rank order.
    pub fn in_order(&self) -> bool {
        self.sorted
    }

    /// Adds one entry. Fails on an invalid member name, scores that are not one per
    /// column, or a sequence number out of range (a duplicate member is found by
    /// [`Self::finish`]).
    pub fn push(&mut self, e: SavedEntry<'_>) -> Result<(), BoardError> {
        validate_member_name(e.member)?;
        if e.scores.len() != self.r.shape.len() {
            return Err(BoardError::InvalidEntries(format!(
                "member {:?} has {} scores for a board of {} columns",
                e.member,
                e.scores.len(),
                self.r.shape.len()
            )));
        }
        if e.seq == 0 || e.seq > MAX_SEQ {
            return Err(BoardError::InvalidEntries(format!(
                "member {:?} has sequence number {}, outside 1..={MAX_SEQ}",
                e.member, e.seq
            )));
        }
        let r = &mut self.r;
        let key = Key {
            nscore: r.shape.nscore(&e.scores),
            tail: r.shape.tail(&e.scores),
            reached_at_us: e.reached_at_us,
            seq: e.seq,
        };
        if self.last.is_some_and(|l| l >= key) {
            self.sorted = false;
        }
        self.last = Some(key);
        if let Some(fresh) = &self.fresh {
            if r.records.slab.needs_chunk() {
                if let Ok(chunk) = fresh.try_recv() {
                    r.records.slab.add_chunk(chunk);
                }
            }
        }
        let id = r.new_record(e.member, &e.scores, e.reached_at_us, e.seq)?;
        if let Some(m) = e.metadata {
            r.metadata.insert(id, m.into());
        }
        r.next_seq = r.next_seq.max(e.seq + 1);
        self.ids.push(id);
        // Hashed now, while the name is in cache: a later pass over the records to hash
        // them took ~0.35 s at 10M (docs/bench-history.md §13).
        self.hashes.push(r.name_hash(e.member.as_bytes()));
        Ok(())
    }

    /// The ranking. Fails on a member pushed twice, or two entries with the same key.
    pub fn finish(mut self) -> Result<Ranking, BoardError> {
        let multi = self.r.shape.is_multi();
        let (ids, sorted) = (&self.ids, self.sorted);
        let hashes = &self.hashes;
        let Ranking {
            records,
            members,
            index,
            ..
        } = &mut self.r;
        let records: &Records = records;
        // The rank order and its index, and the member table, read the records and nothing
        // of each other: a large ranking builds them on two threads (docs/bench-history.md §13).
        let ordered_index = || -> Result<Tree, BoardError> {
            Ok(if multi {
                Tree::Many(ordered(ids, sorted, records)?)
            } else {
                Tree::One(ordered(ids, sorted, records)?)
            })
        };
        let (filled, built) = std::thread::scope(|s| {
            let helper = (ids.len() >= PARALLEL_BUILD_MIN)
                .then(|| {
                    std::thread::Builder::new()
                        .spawn_scoped(s, ordered_index)
                        .ok()
                })
                .flatten();
            let filled = fill_member_table(members, records, ids, hashes);
            let built = match helper {
                Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                None => ordered_index(),
            };
            (filled, built)
        });
        // Two entries with one key are reported before a member pushed twice, as when the
        // sort ran first.
        let built = built?;
        filled?;
        *index = built;
        Ok(self.r)
    }
}

/// The index over `ids`, which are in rank order when `sorted` (else sorted here). Fails
/// on two entries with one key.
fn ordered<T: NodeTail, H: LeafHints>(
    ids: &[u32],
    sorted: bool,
    records: &Records,
) -> Result<RankedIndex<T, H>, BoardError>
where
    Records: KeyOf<T>,
{
    if sorted {
        return Ok(RankedIndex::from_sorted(ids, records));
    }
    let keyed: Vec<(Key<T>, u32)> = by_key(ids.iter().copied(), records);
    if let Some(w) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(BoardError::InvalidEntries(format!(
            "member {:?} has the same score, time and sequence as another",
            String::from_utf8_lossy(records.name(w[1].1))
        )));
    }
    Ok(index_of(keyed, records))
}

impl Ranking {
    /// Builds a ranking from entries in rank order (snapshot loading): records and the
    /// member table are filled with no rehashing, and the index is built bottom-up in one
    /// pass instead of one descent per entry. Fails on an invalid or duplicate member, a
    /// sequence number out of range, or entries not in strictly increasing order.
    pub fn from_sorted<'a>(
        shape: Shape,
        len: usize,
        entries: impl Iterator<Item = Result<SavedEntry<'a>, BoardError>>,
    ) -> Result<Ranking, BoardError> {
        let mut b = RankingBuilder::new(shape, len);
        for e in entries {
            let e = e?;
            b.push(e)?;
            if !b.in_order() {
                return Err(BoardError::InvalidEntries(format!(
                    "member {:?} is out of order or a duplicate",
                    e.member
                )));
            }
        }
        b.finish()
    }

    /// Raises the next sequence number to at least `next_seq` (snapshot loading).
    pub fn reserve_seq(&mut self, next_seq: u64) {
        self.next_seq = self.next_seq.max(next_seq);
    }

    /// Calls `f(member, scores, reached_at_us, seq, metadata)` for every entry in rank
    /// order, without allocating: what a snapshot writes.
    pub fn for_each_entry(&self, mut f: impl FnMut(&str, &Scores, i64, u64, Option<&str>)) {
        debug_assert!(!self.index_deferred, "read before rebuild_index");
        for id in self.index.ids() {
            let r = self.records.slab.get(id);
            let name = std::str::from_utf8(self.records.name(id)).unwrap_or_default();
            let meta = self.metadata.get(&id).map(|m| &**m);
            f(
                name,
                &self.scores_at(id),
                r.reached_at_us,
                r.seq_len >> 8,
                meta,
            );
        }
    }
}

/// The member table is filled in runs of its slot order: ids are grouped by where their
/// probe starts, in `RUNS` stretches of the table, so the inserts of one run touch one small
/// stretch (at 10M members ~2,900 slots of 8 bytes: cache-resident) instead of random
/// places. One counting pass does it; an exact sort by bucket took 0.27 s at 10M.
const RUNS: usize = 1 << 12;

/// Puts every id (`hashes[i]` is the hash of `ids[i]`'s name) into the member table, in
/// runs of its slot order (see [`RUNS`]). Fails on a duplicate member.
fn fill_member_table(
    members: &mut MemberTable,
    records: &Records,
    ids: &[u32],
    hashes: &[u64],
) -> Result<(), BoardError> {
    members.reserve(ids.len());
    let mut next = vec![0usize; RUNS + 1];
    for &hash in hashes {
        next[MemberTable::run_of(hash, RUNS) + 1] += 1;
    }
    for r in 1..next.len() {
        next[r] += next[r - 1];
    }
    let mut pairs = vec![(0u64, 0u32); ids.len()];
    for (&hash, &id) in hashes.iter().zip(ids) {
        let slot = &mut next[MemberTable::run_of(hash, RUNS)];
        pairs[*slot] = (hash, id);
        *slot += 1;
    }
    for (hash, id) in pairs {
        // The new member's own record is read only when a slot's 32-bit tag matches.
        if members
            .insert(hash, id, |other| records.name(other) == records.name(id))
            .is_err()
        {
            return Err(appears_twice(records.name(id)));
        }
    }
    Ok(())
}
