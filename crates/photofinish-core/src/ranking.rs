//! One ranking — a board, or one period of a periodic board: who has which score, in order.
//!
//! A [`Ranking`] joins three structures, each holding what only it needs:
//! - records in a [`Slab`](crate::slab::Slab), 40 bytes each: the order key and the member
//!   name inline when it is at most 16 bytes (longer names live once in a side slab);
//! - a hash table from member name to record id (`members.rs`: one 8-byte slot of 32 hash
//!   bits and the `u32` id) that compares names through the records, so each name is
//!   stored once;
//! - on a board of several columns (docs/SPEC.md §13), the other columns beside the
//!   records ([`Tails`]: 8 bytes per further column and member; nothing on a one-column
//!   board, whose records and index are as they always were);
//! - the [`RankedIndex`](crate::index::RankedIndex) of record ids, which reads keys from
//!   the records — keyed by the first column alone, or by the whole tuple ([`Tree`]). Log
//!   replay ([`Ranking::submit_unranked`]) lets it go stale and rebuilds it once at the end
//!   ([`Ranking::rebuild_index`]); the other two are always exact.
//!
//! The records, the other columns and the index's two kinds are defined in `storage.rs`;
//! this file holds the ranking itself and its writes.
//!
//! Writes follow docs/SPEC.md §2 and §13 through [`Shape::combine`]: `incr` is checked,
//! `best` obeys the board order, and `reached_at` and the sequence move only when the
//! tuple changes.

use hashbrown::{DefaultHashBuilder, HashMap};

use crate::columns::{Operands, Scores, Shape};
use crate::config::{validate_member_name, Op, MAX_METADATA_BYTES};
use crate::error::BoardError;
use crate::index::KeyOf;

mod invariants;
mod lookup;
pub(crate) mod members;
pub(crate) mod partitions;
mod persist;
mod reads;
mod storage;
pub(crate) mod teams;
mod visible;

pub use lookup::Prefetch;
use lookup::BATCH;
use members::MemberTable;
use partitions::{Partitions, Place};
pub use persist::{RankingBuilder, SavedEntry, PARALLEL_BUILD_MIN};
use storage::{by_key, index_of, tree, Record, Records, Tails, Tree, INLINE_NAME_BYTES};
use teams::Teams;
pub use teams::{SavedTeam, TeamEntry, TeamsView};
pub use visible::Visible;

/// The refusal of a member pushed or loaded twice.
fn appears_twice(name: &[u8]) -> BoardError {
    BoardError::InvalidEntries(format!(
        "member {:?} appears twice",
        String::from_utf8_lossy(name)
    ))
}

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

/// One write to a ranking, already resolved to an instant.
#[derive(Debug, Clone, Copy)]
pub struct Write<'a> {
    /// The member.
    pub member: &'a str,
    /// How `values` combine with the current scores: `None` for the board's rule
    /// ([`Shape::combine`]).
    pub op: Option<Op>,
    /// The columns written, with their values.
    pub values: Operands,
    /// The instant of the write, µs since the epoch: `reached_at` if the score changes.
    pub at_us: i64,
    /// New metadata (serialized JSON object), or `None` to keep the current one.
    pub metadata: Option<&'a str>,
    /// The partition the write names (docs/SPEC.md §17), `None` for none.
    pub partition: Option<&'a str>,
    /// The team the write names (docs/SPEC.md §17), `None` for none.
    pub team: Option<&'a str>,
    /// The member is hidden (docs/SPEC.md §15): its score does not count in its team.
    /// Read for a member the write adds; a ranked member's is the ranking's own.
    pub hidden: bool,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The member's scores after the write.
    pub scores: Scores,
    /// Ordinal rank after the write, from 1.
    pub rank: u64,
    /// When the member first reached `score`.
    pub reached_at_us: i64,
    /// Whether the score changed (a new member always counts as changed).
    pub changed: bool,
    /// Ordinal rank in the member's partition after the write, from 1, on a ranking of
    /// partitions when the member is in one and the rank was asked for.
    pub partition_rank: Option<u64>,
}

/// What a write's index upkeep leaves for the rest of the write, when the indexes are
/// kept up to date ([`Ranking::rekey`], [`Ranking::add`]): where it put the entry, and the
/// way down to its team that it took beforehand.
#[derive(Default)]
struct Moved {
    /// Its 0-based position: its rank for free.
    placed: Option<u64>,
    /// Its 0-based position in its partition.
    in_partition: Option<u64>,
    /// The way down the teams' index to its team's leaf, taken before the board's index
    /// moved it ([`teams::Teams::approach`]).
    team_at: Option<crate::index::Approach>,
}

/// A ranked entry as reads return it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Rank in the style asked for, from 1.
    pub rank: u64,
    /// The member is hidden (docs/SPEC.md §15): set on what an admin reads of a hidden
    /// member it names, and on an export's entries; the rank is the one it would have.
    pub hidden: bool,
    /// The member name.
    pub member: String,
    /// The scores, in column order.
    pub scores: Scores,
    /// When the member first reached the score.
    pub reached_at_us: i64,
    /// The serialized metadata object, if any.
    pub metadata: Option<String>,
    /// The member's partition, on a board of partitions (docs/SPEC.md §17).
    pub partition: Option<String>,
    /// The member's team, on a board of teams (docs/SPEC.md §17).
    pub team: Option<String>,
}

impl Outcome {
    /// The first column's score.
    pub fn score(&self) -> i64 {
        self.scores.first()
    }
}

impl Entry {
    /// The first column's score.
    pub fn score(&self) -> i64 {
        self.scores.first()
    }
}

/// One ranking. See the module docs. A clone is a deep copy: flat arrays copied whole.
#[derive(Debug, Clone)]
pub struct Ranking {
    shape: Shape,
    records: Records,
    members: MemberTable,
    hasher: DefaultHashBuilder,
    metadata: HashMap<u32, Box<str>>,
    index: Tree,
    next_seq: u64,
    /// Index upkeep is deferred (log replay, see [`Ranking::submit_unranked`]): `index` is
    /// empty until [`Ranking::rebuild_index`].
    index_deferred: bool,
    /// A ranked write came in the middle of a replay (an idempotent write, whose answer
    /// holds its rank): the index was rebuilt for it, and later replayed writes keep it up
    /// to date instead of deferring it again, so a replay rebuilds at most once.
    keep_index: bool,
    /// The hidden members this ranking holds (docs/SPEC.md §15), kept by the board as it
    /// hides, shows and writes them; `None` while there are none.
    hidden: Option<Box<visible::HiddenIds>>,
    /// The partitions (docs/SPEC.md §17), on a board that has them.
    partitions: Option<Box<Partitions>>,
    /// The teams (docs/SPEC.md §17), on a board that has them.
    teams: Option<Box<Teams>>,
}

impl Ranking {
    /// An empty ranking of a board of `shape` ([`crate::BoardConfig::shape`]; a
    /// one-column board's is [`Shape::single`]).
    pub fn new(shape: Shape) -> Self {
        Self {
            shape,
            records: Records {
                tails: Tails {
                    width: shape.len() - 1,
                    chunks: Vec::new(),
                },
                ..Records::default()
            },
            members: MemberTable::default(),
            hasher: DefaultHashBuilder::default(),
            metadata: HashMap::new(),
            index: Tree::new(&shape),
            next_seq: 1,
            index_deferred: false,
            keep_index: false,
            hidden: None,
            partitions: None,
            teams: None,
        }
    }

    /// The board shape this ranking was made with.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Takes a board's rules for its later writes ([`Shape`]), when they order entries as
    /// this ranking's do (an import file records only the directions). Returns whether
    /// it did.
    pub fn adopt_shape(&mut self, shape: Shape) -> bool {
        let fits = self.shape.orders_like(&shape);
        if fits {
            self.shape = shape;
        }
        fits
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

    /// A member's scores, if it is ranked.
    pub fn scores_of(&self, member: &str) -> Option<Scores> {
        self.find(member).map(|id| self.scores_at(id))
    }

    /// The scores of record `id`.
    fn scores_at(&self, id: u32) -> Scores {
        let nscore = self.records.slab.get(id).nscore;
        if self.shape.is_multi() {
            self.shape.scores(nscore, &self.records.tails.get(id))
        } else {
            Scores::one(self.shape.order(0).denormalize(nscore))
        }
    }

    /// 0-based position of record `id` in the index.
    fn position_of(&self, id: u32) -> Option<u64> {
        let records = &self.records;
        tree!(&self.index, ix => ix.position(id, &records.key_of(id), records))
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
            self.index = Tree::new(&self.shape);
            if let Some(p) = self.partitions.as_deref_mut() {
                p.defer();
            }
        }
        self.submit_with(w, false)
    }

    /// Builds the index again after [`Self::submit_unranked`]: every member's key, sorted,
    /// then the tree bottom-up — O(n log n) once instead of a descent per replayed write.
    pub fn rebuild_index(&mut self) {
        if !self.index_deferred {
            return;
        }
        let (records, ids) = (&self.records, self.members.ids());
        tree!(&mut self.index, ix => *ix = index_of(by_key(ids, records), records));
        self.index_deferred = false;
        if let Some(p) = self.partitions.as_deref_mut() {
            p.rebuild(self.index.ids(), &self.records);
        }
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
        let existing = self.find_writing(w.member);
        let place = self.place(w, existing)?;
        let old = existing.map(|id| self.scores_at(id));
        let new = self.shape.combine(w.op, old.as_ref(), &w.values)?;
        let team = self.team_step(w, existing, old.as_ref(), &new)?;
        let changed = old != Some(new);
        if changed && self.next_seq > MAX_SEQ {
            return Err(BoardError::RankingFull("sequence numbers exhausted"));
        }
        // Where the index put the entry, when it was (re)inserted: its rank for free.
        let (id, moved) = match existing {
            Some(id) if changed => (id, self.rekey(id, &new, w.at_us)),
            Some(id) => (id, Moved::default()),
            None => self.add(w.member, &new, w.at_us, place, w.partition)?,
        };
        let (placed, mut in_partition) = (moved.placed, moved.in_partition);
        if changed {
            self.take_team_step(team, w, id, existing.is_none(), moved.team_at);
        }
        if let Some(m) = w.metadata {
            self.metadata.insert(id, m.into());
        }
        if ranked && in_partition.is_none() {
            in_partition = self
                .partitions
                .as_deref()
                .and_then(|p| p.position(id, &self.records));
        }
        Ok(Outcome {
            partition_rank: in_partition.filter(|_| ranked).map(|p| p + 1),
            scores: new,
            rank: if ranked {
                placed.or_else(|| self.position_of(id)).map_or(0, |p| p + 1)
            } else {
                0
            },
            reached_at_us: self.records.slab.get(id).reached_at_us,
            changed,
        })
    }

    fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Gives entry `id` a new score and time. Each index finds the entry under its old
    /// key first and moves it once the record holds the new one ([`crate::index::Spot`]:
    /// inside its leaf when it can).
    fn rekey(&mut self, id: u32, scores: &Scores, at_us: i64) -> Moved {
        let kept = !self.index_deferred;
        let (mut spot, mut in_part, mut team_at) = (None, None, None);
        if kept {
            let records = &self.records;
            // The ways down to the record's place in the board's, its partition's and
            // its team's indexes, taken now, the board's first: each leaf loads while the
            // next index is descended (docs/bench-history.md §36, §46), and none is
            // descended again.
            let board_at = tree!(&self.index, ix => ix.approach(&records.key_of(id), records));
            let part_at = self
                .partitions
                .as_deref()
                .and_then(|p| p.approach(id, records));
            team_at = self.teams.as_deref().and_then(|t| t.approach(id));
            spot = tree!(&self.index, ix => ix.spot_from(board_at, id));
            in_part = part_at.and_then(|at| self.partitions.as_deref()?.spot_from(at, id));
        }
        let seq = self.take_seq();
        let r = self.records.slab.get_mut(id);
        r.nscore = self.shape.nscore(scores);
        r.reached_at_us = at_us;
        r.seq_len = seq << 8 | (r.seq_len & 0xff);
        self.records.tails.set(id, &self.shape.tail(scores));
        let records = &self.records;
        let placed = spot
            .map(|s| tree!(&mut self.index, ix => ix.move_to(s, id, records.key_of(id), records)));
        let in_partition = match (self.partitions.as_deref_mut(), in_part) {
            (Some(p), Some(s)) => Some(p.move_to(s, id, records)),
            _ => None,
        };
        Moved {
            placed,
            in_partition,
            team_at,
        }
    }

    /// Adds a member into the partition `place` says (`partition` the one its write
    /// named); returns its id and, when the indexes are kept up to date, its position and
    /// its position in its partition.
    fn add(
        &mut self,
        member: &str,
        scores: &Scores,
        at_us: i64,
        place: Place,
        partition: Option<&str>,
    ) -> Result<(u32, Moved), BoardError> {
        let id = self.push_record(member, scores, at_us, self.next_seq)?;
        self.next_seq += 1;
        let records = &self.records;
        let kept = !self.index_deferred;
        let placed =
            kept.then(|| tree!(&mut self.index, ix => ix.insert(id, records.key_of(id), records)));
        let in_partition = self
            .partitions
            .as_deref_mut()
            .and_then(|p| p.enter(id, place, partition, &self.records, kept));
        Ok((
            id,
            Moved {
                placed,
                in_partition,
                team_at: None,
            },
        ))
    }

    /// Stores the record (and a long name), not yet in the member table or the index.
    fn new_record(
        &mut self,
        member: &str,
        scores: &Scores,
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
            nscore: self.shape.nscore(scores),
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
        self.records.tails.set(id, &self.shape.tail(scores));
        Ok(id)
    }

    /// Stores the record and the member-table entry, not yet in the index.
    fn push_record(
        &mut self,
        member: &str,
        scores: &Scores,
        at_us: i64,
        seq: u64,
    ) -> Result<u32, BoardError> {
        let id = self.new_record(member, scores, at_us, seq)?;
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

    /// Removes a member at `at_us` (its team's sum changes then). Returns whether it
    /// was there.
    pub fn remove(&mut self, member: &str, at_us: i64) -> bool {
        let hash = self.name_hash(member.as_bytes());
        let records = &self.records;
        let Some(id) = self
            .members
            .remove(hash, |id| records.name(id) == member.as_bytes())
        else {
            return false;
        };
        self.leave_team(id, at_us);
        if !self.index_deferred {
            let records = &self.records;
            tree!(&mut self.index, ix => ix.remove(id, records.key_of(id), records));
        }
        if let Some(p) = self.partitions.as_deref_mut() {
            p.take_out(id, &self.records, !self.index_deferred);
        }
        // Its id may be reused: it is no longer a hidden member's.
        self.forget_hidden(id);
        self.metadata.remove(&id);
        self.records.release(id);
        true
    }

    /// Bytes reserved by this ranking's structures (records, index, member table), without
    /// the metadata map's internals, which the allocator-counting benchmark measures.
    pub fn reserved_bytes(&self) -> usize {
        self.records.slab.reserved_bytes()
            + self.records.tails.reserved_bytes()
            + self.index.reserved_bytes()
            + self.members.reserved_bytes()
            + self
                .partitions
                .as_deref()
                .map_or(0, Partitions::reserved_bytes)
            + self.teams.as_deref().map_or(0, Teams::reserved_bytes)
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
