//! How a ranking finds its members: a name's hash, its slot in the member table and the
//! record that confirms it — one at a time ([`Ranking::find`]), or a batch at a time with
//! their memory loads overlapped ([`Ranking::find_all`], [`Prefetch`]).

use std::hash::BuildHasher;

use super::Ranking;

/// Members a batch read looks up together: the memory loads of this many overlap (the
/// CPU tracks a few dozen misses at once; more would queue instead of overlapping).
pub(super) const BATCH: usize = 16;

/// The steps of prefetching a member lookup ([`Ranking::prefetch_member`]), run over a
/// whole batch one after the other ([`Prefetch::STEPS`]): the record's address is in the
/// slot, so the slots must be on their way before any is read, its team's in the team
/// side array the record step asks for, and its team's leaf in the team's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefetch {
    /// The member-table slot where the name's probe starts.
    Slot,
    /// The record of the first id on the probe whose tag matches the name's, and its
    /// partition and team on a ranking that keeps them.
    Record,
    /// The record and key of that record's team, on a ranking of teams.
    Team,
    /// The teams' index leaf that team was last found in, which a write's change of its
    /// sum tries first (`Teams::moved`): a write's step, a read has no use for it.
    TeamLeaf,
}

impl Prefetch {
    /// Every step, in the order a batch runs them.
    pub const STEPS: [Prefetch; 4] = [
        Prefetch::Slot,
        Prefetch::Record,
        Prefetch::Team,
        Prefetch::TeamLeaf,
    ];
}

impl Ranking {
    /// The member table's hash of a name: of its bytes, however the name is held (every
    /// lookup, insert and bulk fill must agree on it).
    pub(super) fn name_hash(&self, name: &[u8]) -> u64 {
        self.hasher.hash_one(name)
    }

    pub(super) fn find(&self, member: &str) -> Option<u32> {
        self.find_hashed(self.name_hash(member.as_bytes()), member.as_bytes())
    }

    /// [`Self::find`] for a write: the moment the member table names a candidate record,
    /// the candidate's partition and team (side arrays as large as the records, each a
    /// likely miss) are asked for too, so their loads overlap the record's instead of
    /// following it; once the record confirms the member, its team's record and key are
    /// asked for, which the write reads next (its checks, then its team's move).
    pub(super) fn find_writing(&self, member: &str) -> Option<u32> {
        let name = member.as_bytes();
        let id = self.find_seeing(self.name_hash(name), name, |id| self.prefetch_groups(id))?;
        if let Some(t) = self.teams.as_deref() {
            t.prefetch_team(id);
        }
        Some(id)
    }

    /// Asks for record `id`'s partition and team, on a ranking that keeps them.
    #[inline]
    fn prefetch_groups(&self, id: u32) {
        if let Some(p) = self.partitions.as_deref() {
            p.prefetch_of(id);
        }
        if let Some(t) = self.teams.as_deref() {
            t.prefetch_of(id);
        }
    }

    /// The id of the member named `name`, whose hash is `hash`: a slot with its tag,
    /// confirmed by the record's name.
    pub(super) fn find_hashed(&self, hash: u64, name: &[u8]) -> Option<u32> {
        self.find_seeing(hash, name, |_| {})
    }

    /// [`Self::find_hashed`], handing `seen` each candidate id before its record is read
    /// to confirm it.
    #[inline]
    fn find_seeing(&self, hash: u64, name: &[u8], seen: impl Fn(u32)) -> Option<u32> {
        let records = &self.records;
        self.members.find(hash, |id| {
            seen(id);
            records.name(id) == name
        })
    }

    /// One step of a batch's lookups ([`Prefetch`]) for the member with name hash `hash`.
    /// The slot step only asks for a line; the record step reads the slot (in cache by
    /// then, if the batch's slots were all asked for first) to learn which record to ask
    /// for.
    pub(super) fn prefetch_hashed(&self, hash: u64, step: Prefetch) {
        match step {
            Prefetch::Slot => self.members.prefetch(hash),
            Prefetch::Record => {
                if let Some(id) = self.members.candidate(hash) {
                    self.records.slab.prefetch(id);
                    self.prefetch_groups(id);
                }
            }
            Prefetch::Team | Prefetch::TeamLeaf => {
                if let Some(teams) = self.teams.as_deref() {
                    if let Some(id) = self.members.candidate(hash) {
                        match step {
                            Prefetch::Team => teams.prefetch_team(id),
                            _ => teams.prefetch_leaf_of(id),
                        }
                    }
                }
            }
        }
    }

    /// [`Prefetch`] step `step` of a lookup of `member`. The store's writer runs each step
    /// of [`Prefetch::STEPS`] for every write of a batch before the next step, before it
    /// appends the batch to the log, so these loads overlap the log write instead of
    /// stalling the apply one member at a time (docs/bench-history.md §13, §42); a batch
    /// of reads (`op::Each`) does the same before its first read (a member's answer names
    /// its team). Changes nothing.
    pub fn prefetch_member(&self, member: &str, step: Prefetch) {
        self.prefetch_hashed(self.name_hash(member.as_bytes()), step);
    }

    /// The ids of `names` (`None` for an absent one), [`BATCH`] at a time with their
    /// memory loads overlapped: every home slot is prefetched, then the record each
    /// slot's tag points at (with its partition and team), then its team's record, then
    /// every name is confirmed — where one [`Self::find`] after another waits for a slot
    /// and then a record, member after member.
    pub(super) fn find_all<S: AsRef<str>>(&self, names: &[S]) -> Vec<Option<u32>> {
        let mut out = Vec::with_capacity(names.len());
        let mut hashes = [0u64; BATCH];
        for chunk in names.chunks(BATCH) {
            let hashes = &mut hashes[..chunk.len()];
            for (h, name) in hashes.iter_mut().zip(chunk) {
                *h = self.name_hash(name.as_ref().as_bytes());
            }
            // A read moves no team: its leaf is not asked for.
            for step in Prefetch::STEPS
                .into_iter()
                .filter(|&s| s != Prefetch::TeamLeaf)
            {
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
}
