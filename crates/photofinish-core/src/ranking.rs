//! One ranking — a board, or one period of a periodic board: who has which score, in order.
//!
//! A [`Ranking`] joins three structures, each holding what only it needs:
//! - records in a [`Slab`], 40 bytes each: the order key and the member name inline when it
//!   is at most 16 bytes (longer names live once in a side slab);
//! - a hash table from member name to record id (`members.rs`: one 8-byte slot of 32 hash
//!   bits and the `u32` id) that compares names through the records, so each name is
//!   stored once;
//! - the [`RankedIndex`] of record ids, which reads keys from the records. Log replay
//!   ([`Ranking::submit_unranked`]) lets it go stale and rebuilds it once at the end
//!   ([`Ranking::rebuild_index`]); the other two are always exact.
//!
//! Writes follow docs/SPEC.md §2: `incr` is checked, `best` obeys the board order, and
//! `reached_at` and the sequence move only when the score changes.

use hashbrown::{DefaultHashBuilder, HashMap};
use std::hash::BuildHasher;

use crate::config::{validate_member_name, Op, Order, MAX_METADATA_BYTES};
use crate::error::{BoardError, ScoreLimit};
use crate::index::{KeyOf, RankedIndex};
use crate::key::Key;
use crate::slab::Slab;

mod invariants;
mod members;
mod persist;
mod reads;

use members::MemberTable;
pub use persist::{RankingBuilder, SavedEntry, PARALLEL_BUILD_MIN};

/// Members a batch read looks up together: the memory loads of this many overlap (the
/// CPU tracks a few dozen misses at once; more would queue instead of overlapping).
const BATCH: usize = 16;

/// The two steps of prefetching a member lookup ([`Ranking::prefetch_member`]), run over a
/// whole batch one after the other: the record's address is in the slot, so the slots must
/// be on their way before any is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefetch {
    /// The member-table slot where the name's probe starts.
    Slot,
    /// The record of the first id on the probe whose tag matches the name's.
    Record,
}

/// The refusal of a member pushed or loaded twice.
fn appears_twice(name: &[u8]) -> BoardError {
    BoardError::InvalidEntries(format!(
        "member {:?} appears twice",
        String::from_utf8_lossy(name)
    ))
}

/// Member names up to this many bytes are stored inside the record.
const INLINE_NAME_BYTES: usize = 16;
/// Sequence numbers share a word with the name length (low 8 bits), leaving 56 bits:
/// 7.2e16 score changes per ranking, beyond any real board's life.
const MAX_SEQ: u64 = (1 << 56) - 1;

/// How ranks are numbered for equal scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RankStyle {
    /// Position in the total order: 1,2,3,4,5.
    #[default]
    Ordinal,
    /// 1 + entries with a strictly better score: 1,2,2,4,5.
    Competition,
    /// 1 + distinct strictly better scores: 1,2,2,3,4.
    Dense,
}

impl RankStyle {
    /// Parses the wire name (`ordinal`, `competition`, `dense`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ordinal" => Some(Self::Ordinal),
            "competition" => Some(Self::Competition),
            "dense" => Some(Self::Dense),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ordinal => "ordinal",
            Self::Competition => "competition",
            Self::Dense => "dense",
        }
    }
}

/// One write to a ranking, already resolved to an operator and an instant.
#[derive(Debug, Clone, Copy)]
pub struct Write<'a> {
    /// The member.
    pub member: &'a str,
    /// How `value` combines with the current score.
    pub op: Op,
    /// The operand.
    pub value: i64,
    /// The instant of the write, µs since the epoch: `reached_at` if the score changes.
    pub at_us: i64,
    /// New metadata (serialized JSON object), or `None` to keep the current one.
    pub metadata: Option<&'a str>,
}

/// The score `op` with operand `value` leaves, from `old` (`None`: the member is new).
pub fn resulting_score(
    order: Order,
    op: Op,
    old: Option<i64>,
    value: i64,
) -> Result<i64, BoardError> {
    Ok(match (op, old) {
        (Op::Incr, None) => value,
        (Op::Incr, Some(old)) => old.checked_add(value).ok_or(BoardError::ScoreOverflow {
            old,
            delta: value,
            limit: ScoreLimit::I64,
        })?,
        (Op::Set, _) => value,
        (Op::Best, None) => value,
        (Op::Best, Some(old)) if order.is_better(value, old) => value,
        (Op::Best, Some(old)) => old,
    })
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The member's score after the write.
    pub score: i64,
    /// Ordinal rank after the write, from 1.
    pub rank: u64,
    /// When the member first reached `score`.
    pub reached_at_us: i64,
    /// Whether the score changed (a new member always counts as changed).
    pub changed: bool,
}

/// A ranked entry as reads return it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Rank in the style asked for, from 1.
    pub rank: u64,
    /// The member name.
    pub member: String,
    /// The score.
    pub score: i64,
    /// When the member first reached the score.
    pub reached_at_us: i64,
    /// The serialized metadata object, if any.
    pub metadata: Option<String>,
}

/// 40 bytes: the key, with the name length packed under the sequence, and the name bytes.
#[derive(Debug, Clone, Copy)]
struct Record {
    nscore: i64,
    reached_at_us: i64,
    /// `seq << 8 | name_len`.
    seq_len: u64,
    /// The name when it fits; else the id of the name in `long_names`, little-endian.
    name: [u8; INLINE_NAME_BYTES],
}

impl Record {
    /// A record of nothing: what fresh record memory is filled with before use.
    const EMPTY: Record = Record {
        nscore: 0,
        reached_at_us: 0,
        seq_len: 0,
        name: [0; INLINE_NAME_BYTES],
    };

    fn key(&self) -> Key {
        Key {
            nscore: self.nscore,
            reached_at_us: self.reached_at_us,
            seq: self.seq_len >> 8,
        }
    }
    fn name_len(&self) -> usize {
        (self.seq_len & 0xff) as usize
    }
    fn long_name_id(&self) -> u32 {
        u32::from_le_bytes([self.name[0], self.name[1], self.name[2], self.name[3]])
    }
}

/// Records plus the side slab of long names: everything needed to read a key or a name.
#[derive(Debug, Default, Clone)]
struct Records {
    slab: Slab<Record>,
    long_names: Slab<Box<str>>,
}

impl KeyOf for Records {
    #[inline]
    fn key_of(&self, id: u32) -> Key {
        self.slab.get(id).key()
    }
}

impl Records {
    /// Frees a long name's string and gives its id back.
    fn release_long_name(&mut self, lid: u32) {
        *self.long_names.get_mut(lid) = Box::default();
        self.long_names.release(lid);
    }

    /// Gives back record `id` and its long name, if it has one.
    fn release(&mut self, id: u32) {
        let r = *self.slab.get(id);
        if r.name_len() > INLINE_NAME_BYTES {
            self.release_long_name(r.long_name_id());
        }
        self.slab.release(id);
    }

    fn name(&self, id: u32) -> &[u8] {
        let r = self.slab.get(id);
        let len = r.name_len();
        if len <= INLINE_NAME_BYTES {
            &r.name[..len]
        } else {
            self.long_names.get(r.long_name_id()).as_bytes()
        }
    }
}

/// One ranking. See the module docs. A clone is a deep copy: flat arrays copied whole.
#[derive(Debug, Clone)]
pub struct Ranking {
    order: Order,
    records: Records,
    members: MemberTable,
    hasher: DefaultHashBuilder,
    metadata: HashMap<u32, Box<str>>,
    index: RankedIndex,
    next_seq: u64,
    /// Index upkeep is deferred (log replay, see [`Ranking::submit_unranked`]): `index` is
    /// empty until [`Ranking::rebuild_index`].
    index_deferred: bool,
    /// A ranked write came in the middle of a replay (an idempotent write, whose answer
    /// holds its rank): the index was rebuilt for it, and later replayed writes keep it up
    /// to date instead of deferring it again, so a replay rebuilds at most once.
    keep_index: bool,
}

impl Ranking {
    /// An empty ranking ordered by `order`.
    pub fn new(order: Order) -> Self {
        Self {
            order,
            records: Records::default(),
            members: MemberTable::default(),
            hasher: DefaultHashBuilder::default(),
            metadata: HashMap::new(),
            index: RankedIndex::new(),
            next_seq: 1,
            index_deferred: false,
            keep_index: false,
        }
    }

    /// The board order this ranking was made with.
    pub fn order(&self) -> Order {
        self.order
    }

    /// Number of members.
    pub fn len(&self) -> u64 {
        self.members.len() as u64
    }

    /// Whether the ranking has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The sequence number the next score change will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// A member's score, if it is ranked.
    pub fn score_of(&self, member: &str) -> Option<i64> {
        self.find(member)
            .map(|id| self.order.denormalize(self.records.slab.get(id).nscore))
    }

    /// The member table's hash of a name: of its bytes, however the name is held (every
    /// lookup, insert and bulk fill must agree on it).
    fn name_hash(&self, name: &[u8]) -> u64 {
        self.hasher.hash_one(name)
    }

    fn find(&self, member: &str) -> Option<u32> {
        self.find_hashed(self.name_hash(member.as_bytes()), member.as_bytes())
    }

    /// The id of the member named `name`, whose hash is `hash`: a slot with its tag,
    /// confirmed by the record's name.
    fn find_hashed(&self, hash: u64, name: &[u8]) -> Option<u32> {
        let records = &self.records;
        self.members.find(hash, |id| records.name(id) == name)
    }

    /// One step of a batch's lookups ([`Prefetch`]) for the member with name hash `hash`.
    /// The slot step only asks for a line; the record step reads the slot (in cache by
    /// then, if the batch's slots were all asked for first) to learn which record to ask
    /// for.
    fn prefetch_hashed(&self, hash: u64, step: Prefetch) {
        match step {
            Prefetch::Slot => self.members.prefetch(hash),
            Prefetch::Record => {
                if let Some(id) = self.members.candidate(hash) {
                    self.records.slab.prefetch(id);
                }
            }
        }
    }

    /// [`Prefetch`] step `step` of a lookup of `member`. The store's writer runs the slot
    /// step for every write of a batch, then the record step for every write, before it
    /// appends the batch to the log, so these loads overlap the log write instead of
    /// stalling the apply one member at a time (docs/bench-history.md §13). Changes nothing.
    pub fn prefetch_member(&self, member: &str, step: Prefetch) {
        self.prefetch_hashed(self.name_hash(member.as_bytes()), step);
    }

    /// The ids of `names` (`None` for an absent one), [`BATCH`] at a time with their
    /// memory loads overlapped: every home slot is prefetched, then the record each
    /// slot's tag points at, then every name is confirmed — where one [`Self::find`] after
    /// another waits for a slot and then a record, member after member.
    fn find_all<S: AsRef<str>>(&self, names: &[S]) -> Vec<Option<u32>> {
        let mut out = Vec::with_capacity(names.len());
        let mut hashes = [0u64; BATCH];
        for chunk in names.chunks(BATCH) {
            let hashes = &mut hashes[..chunk.len()];
            for (h, name) in hashes.iter_mut().zip(chunk) {
                *h = self.name_hash(name.as_ref().as_bytes());
            }
            for step in [Prefetch::Slot, Prefetch::Record] {
                for &h in hashes.iter() {
                    self.prefetch_hashed(h, step);
                }
            }
            for (&h, name) in hashes.iter().zip(chunk) {
                out.push(self.find_hashed(h, name.as_ref().as_bytes()));
            }
        }
        out
    }

    /// Applies one write atomically: on error nothing changed.
    pub fn submit(&mut self, w: &Write<'_>) -> Result<Outcome, BoardError> {
        self.submit_with(w, true)
    }

    /// [`Self::submit`] for log replay: the same effect on every member, but without the
    /// order. The rank is not computed (`Outcome::rank` is 0) and the index is not kept up
    /// to date: it is dropped at the first such call and rebuilt in one pass by
    /// [`Self::rebuild_index`], which must run before the ranking is read again (replay
    /// does it once at its end). The descents were ~40% of a replay's cost.
    pub fn submit_unranked(&mut self, w: &Write<'_>) -> Result<Outcome, BoardError> {
        if self.keep_index {
            return self.submit_with(w, true).map(|o| Outcome { rank: 0, ..o });
        }
        if !self.index_deferred {
            self.index_deferred = true;
            self.index = RankedIndex::new();
        }
        self.submit_with(w, false)
    }

    /// Builds the index again after [`Self::submit_unranked`]: every member's key, sorted,
    /// then the tree bottom-up — O(n log n) once instead of a descent per replayed write.
    pub fn rebuild_index(&mut self) {
        if !self.index_deferred {
            return;
        }
        let records = &self.records;
        let mut keyed: Vec<(Key, u32)> = self
            .members
            .ids()
            .map(|id| (records.key_of(id), id))
            .collect();
        keyed.sort_unstable_by_key(|&(key, _)| key);
        let ids: Vec<u32> = keyed.into_iter().map(|(_, id)| id).collect();
        self.index = RankedIndex::from_sorted(&ids, &self.records);
        self.index_deferred = false;
    }

    fn submit_with(&mut self, w: &Write<'_>, ranked: bool) -> Result<Outcome, BoardError> {
        if ranked && self.index_deferred {
            self.keep_index = true;
            self.rebuild_index();
        }
        validate_member_name(w.member)?;
        if let Some(m) = w.metadata {
            if m.len() > MAX_METADATA_BYTES {
                return Err(BoardError::MetadataTooLarge(m.len()));
            }
        }
        let existing = self.find(w.member);
        let old = existing.map(|id| self.order.denormalize(self.records.slab.get(id).nscore));
        let new = resulting_score(self.order, w.op, old, w.value)?;
        let changed = old != Some(new);
        if changed && self.next_seq > MAX_SEQ {
            return Err(BoardError::RankingFull("sequence numbers exhausted"));
        }
        // Where the index put the entry, when it was (re)inserted: its rank for free.
        let (id, placed) = match existing {
            Some(id) => (id, changed.then(|| self.rekey(id, new, w.at_us)).flatten()),
            None => self.add(w.member, new, w.at_us)?,
        };
        if let Some(m) = w.metadata {
            self.metadata.insert(id, m.into());
        }
        let key = self.records.key_of(id);
        Ok(Outcome {
            score: new,
            rank: if ranked {
                placed
                    .or_else(|| self.index.position(id, &key))
                    .map_or(0, |p| p + 1)
            } else {
                0
            },
            reached_at_us: key.reached_at_us,
            changed,
        })
    }

    fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Gives entry `id` a new score and time; returns its new position when the index is
    /// kept up to date.
    fn rekey(&mut self, id: u32, score: i64, at_us: i64) -> Option<u64> {
        let old = self.records.key_of(id);
        if !self.index_deferred {
            self.index.remove(id, old, &self.records);
        }
        let seq = self.take_seq();
        let r = self.records.slab.get_mut(id);
        r.nscore = self.order.normalize(score);
        r.reached_at_us = at_us;
        r.seq_len = seq << 8 | (r.seq_len & 0xff);
        let key = r.key();
        (!self.index_deferred).then(|| self.index.insert(id, key, &self.records))
    }

    /// Adds a member; returns its id and, when the index is kept up to date, its position.
    fn add(
        &mut self,
        member: &str,
        score: i64,
        at_us: i64,
    ) -> Result<(u32, Option<u64>), BoardError> {
        let id = self.push_record(member, score, at_us, self.next_seq)?;
        self.next_seq += 1;
        let placed = (!self.index_deferred).then(|| {
            self.index
                .insert(id, self.records.key_of(id), &self.records)
        });
        Ok((id, placed))
    }

    /// Stores the record (and a long name), not yet in the member table or the index.
    fn new_record(
        &mut self,
        member: &str,
        score: i64,
        at_us: i64,
        seq: u64,
    ) -> Result<u32, BoardError> {
        let mut name = [0u8; INLINE_NAME_BYTES];
        let mut long = None;
        if member.len() <= INLINE_NAME_BYTES {
            name[..member.len()].copy_from_slice(member.as_bytes());
        } else {
            let lid = self
                .records
                .long_names
                .insert(member.into())
                .ok_or(BoardError::RankingFull("too many long member names"))?;
            name[..4].copy_from_slice(&lid.to_le_bytes());
            long = Some(lid);
        }
        let record = Record {
            nscore: self.order.normalize(score),
            reached_at_us: at_us,
            seq_len: seq << 8 | member.len() as u64,
            name,
        };
        let Some(id) = self.records.slab.insert(record) else {
            if let Some(lid) = long {
                self.records.release_long_name(lid);
            }
            return Err(BoardError::RankingFull("too many members"));
        };
        Ok(id)
    }

    /// Stores the record and the member-table entry, not yet in the index.
    fn push_record(
        &mut self,
        member: &str,
        score: i64,
        at_us: i64,
        seq: u64,
    ) -> Result<u32, BoardError> {
        let id = self.new_record(member, score, at_us, seq)?;
        let records = &self.records;
        let hash = self.name_hash(member.as_bytes());
        match self
            .members
            .insert(hash, id, |other| records.name(other) == member.as_bytes())
        {
            Ok(()) => Ok(id),
            Err(_) => {
                // Callers check first; snapshot loading relies on this to refuse duplicates.
                self.records.release(id);
                Err(appears_twice(member.as_bytes()))
            }
        }
    }

    /// Removes a member. Returns whether it was there.
    pub fn remove(&mut self, member: &str) -> bool {
        let hash = self.name_hash(member.as_bytes());
        let records = &self.records;
        let Some(id) = self
            .members
            .remove(hash, |id| records.name(id) == member.as_bytes())
        else {
            return false;
        };
        if !self.index_deferred {
            let key = self.records.key_of(id);
            self.index.remove(id, key, &self.records);
        }
        self.metadata.remove(&id);
        self.records.release(id);
        true
    }

    /// Bytes reserved by this ranking's structures (records, index, member table), without
    /// the metadata map's internals, which the allocator-counting benchmark measures.
    pub fn reserved_bytes(&self) -> usize {
        self.records.slab.reserved_bytes()
            + self.index.reserved_bytes()
            + self.members.reserved_bytes()
    }

    /// An estimate of this ranking's size in memory: its structures
    /// ([`Self::reserved_bytes`]) and its metadata, with a word per stored string.
    pub fn estimated_bytes(&self) -> u64 {
        let metadata: usize = self
            .metadata
            .values()
            .map(|m| m.len() + 2 * std::mem::size_of::<usize>())
            .sum();
        (self.reserved_bytes() + metadata) as u64
    }
}
