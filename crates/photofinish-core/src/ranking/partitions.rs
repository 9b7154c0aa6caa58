//! A ranking's partitions (docs/SPEC.md §17): each partition is an order-statistic index
//! of its own over the same record ids as the ranking's, so a partition's ranks, pages and
//! windows cost what the whole ranking's do, O(log n + page), and no record is stored
//! twice. Beside each record id is the partition it is in (2 bytes: an index into the
//! names, from 1; 0 for none). A member's partition is set by the write that adds it and
//! kept until it leaves the ranking; a later write may repeat it or name none, never
//! another ([`Partitions::place`] decides before anything changes). The ranking keeps the
//! partition indexes in step with its own: a record's key that moves is taken out of its
//! partition's index and put back, and a replay defers them with the ranking's and
//! rebuilds them from its order in one pass.

use hashbrown::HashMap;

use std::borrow::Cow;

use super::storage::prefetch_beside;
use super::{tree, Ranking, Records, Tree, Visible, Write};
use crate::columns::Shape;
use crate::error::BoardError;
use crate::index::{Approach, KeyOf, Spot};

/// The partitions of one ranking. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Partitions {
    /// The most partitions this ranking holds (the board's `partitions.max`).
    max: u32,
    /// Each partition's key, by its index.
    names: Vec<Box<str>>,
    by_name: HashMap<Box<str>, u16>,
    /// Each partition's index, by its index.
    trees: Vec<Tree>,
    /// Each partition's member count, by its index (kept while the indexes are deferred).
    sizes: Vec<u32>,
    /// Partitions holding a member: what the limit counts. A partition its last member
    /// left is closed, and its slot goes to the next one opened.
    live: u32,
    /// Record id → its partition's index + 1, 0 for none (ids past the end: none).
    of: Vec<u16>,
    shape: Shape,
}

/// Where a write puts its member, decided before the ranking changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// Where it is (a member already ranked, or a new one naming none).
    Stay,
    /// Into partition `p`, which exists.
    Into(u16),
    /// Into a partition opened for it.
    Open,
}

impl Partitions {
    pub(super) fn new(shape: Shape, max: u32) -> Self {
        Self {
            max,
            names: Vec::new(),
            by_name: HashMap::new(),
            trees: Vec::new(),
            sizes: Vec::new(),
            live: 0,
            of: Vec::new(),
            shape,
        }
    }

    /// The partition record `id` is in.
    #[inline]
    pub(super) fn of(&self, id: u32) -> Option<u16> {
        match self.of.get(id as usize) {
            Some(&p) if p > 0 => Some(p - 1),
            _ => None,
        }
    }

    /// Asks for the line holding record `id`'s partition ([`crate::prefetch`]).
    #[inline]
    pub(super) fn prefetch_of(&self, id: u32) {
        prefetch_beside(&self.of, id);
    }

    /// The partition named `name`.
    pub(super) fn find(&self, name: &str) -> Option<u16> {
        self.by_name.get(name).copied()
    }

    /// Partition `p`'s key.
    pub(super) fn name(&self, p: u16) -> &str {
        &self.names[p as usize]
    }

    /// Partition `p`'s index; an empty one for `None` (a partition nobody is in).
    pub(super) fn tree(&self, p: Option<u16>) -> &Tree {
        p.map_or(Tree::empty(&self.shape), |p| &self.trees[p as usize])
    }

    /// Every partition holding a member — its index, its key, its member count — in the
    /// order of their slots.
    pub(super) fn counts(&self) -> impl Iterator<Item = (u16, &str, u64)> + '_ {
        self.names
            .iter()
            .zip(&self.sizes)
            .enumerate()
            .filter(|(_, (_, &n))| n > 0)
            .map(|(p, (name, &n))| (p as u16, &**name, u64::from(n)))
    }

    /// Members in a partition, over them all.
    pub(super) fn members(&self) -> u64 {
        self.sizes.iter().map(|&n| u64::from(n)).sum()
    }

    /// Where a write naming `asked` puts its member, whose record is `existing` when it is
    /// ranked: a member stays where its first write put it (naming none is staying), a
    /// new one goes into the partition it names, opened if need be.
    pub(super) fn place(
        &self,
        member: &str,
        existing: Option<u32>,
        asked: Option<&str>,
    ) -> Result<Place, BoardError> {
        let Some(asked) = asked else {
            return Ok(Place::Stay);
        };
        if let Some(id) = existing {
            let held = self.of(id);
            return if held.is_some_and(|p| self.name(p) == asked) {
                Ok(Place::Stay)
            } else {
                Err(BoardError::PartitionConflict {
                    member: member.to_owned(),
                    held: held.map_or_else(|| "none".to_owned(), |p| format!("{:?}", self.name(p))),
                    asked: asked.to_owned(),
                    period: String::new(),
                })
            };
        }
        match self.find(asked) {
            Some(p) if self.sizes[p as usize] > 0 || self.live < self.max => Ok(Place::Into(p)),
            None if self.live < self.max => Ok(Place::Open),
            _ => Err(BoardError::TooManyPartitions {
                max: self.max,
                asked: asked.to_owned(),
                period: String::new(),
            }),
        }
    }

    /// Puts record `id`, just added, where `place` says (`name` the partition it named);
    /// into its partition's index when the indexes are `kept`, returning its 0-based
    /// position there.
    pub(super) fn enter(
        &mut self,
        id: u32,
        place: Place,
        name: Option<&str>,
        records: &Records,
        kept: bool,
    ) -> Option<u64> {
        let p = self.join(id, place, name)?;
        kept.then(
            || tree!(&mut self.trees[p as usize], ix => ix.insert(id, records.key_of(id), records)),
        )
    }

    /// Records that `id` is in the partition `place` says (opened if need be), its
    /// index left alone; the partition, unless `place` leaves it in none.
    fn join(&mut self, id: u32, place: Place, name: Option<&str>) -> Option<u16> {
        let p = match (place, name) {
            (Place::Into(p), _) => p,
            (Place::Open, Some(name)) => self.open(name),
            _ => return None,
        };
        if self.sizes[p as usize] == 0 {
            self.live += 1;
        }
        self.sizes[p as usize] += 1;
        super::storage::set_beside(&mut self.of, id, p + 1);
        Some(p)
    }

    /// Takes record `id`, which leaves the ranking, out of its partition (and out of the
    /// partition's index when the indexes are `kept`).
    pub(super) fn take_out(&mut self, id: u32, records: &Records, kept: bool) {
        let Some(p) = self.of(id) else {
            return;
        };
        if kept {
            tree!(&mut self.trees[p as usize], ix => ix.remove(id, records.key_of(id), records));
        }
        self.of[id as usize] = 0;
        self.sizes[p as usize] -= 1;
        if self.sizes[p as usize] == 0 {
            self.live -= 1;
        }
    }

    /// A slot for a new partition named `name`: a new one while there are fewer than the
    /// limit, else the first closed one's, renamed.
    fn open(&mut self, name: &str) -> u16 {
        let reuse = (self.names.len() >= self.max as usize)
            .then(|| self.sizes.iter().position(|&n| n == 0))
            .flatten();
        match reuse {
            Some(p) => {
                self.by_name.remove(&self.names[p]);
                self.names[p] = name.into();
                self.by_name.insert(name.into(), p as u16);
                p as u16
            }
            None => {
                let p = self.names.len() as u16;
                self.names.push(name.into());
                self.by_name.insert(name.into(), p);
                self.trees.push(Tree::hinted(&self.shape));
                self.sizes.push(0);
                p
            }
        }
    }

    /// The way down record `id`'s partition index to the leaf that holds it (a descent
    /// that reads no record, then a prefetch of the leaf): taken before the board's own
    /// index moves the record, so that leaf is on its way while the board's index waits
    /// on its own, and kept for [`Self::spot_from`].
    pub(super) fn approach(&self, id: u32, records: &Records) -> Option<(u16, Approach)> {
        let p = self.of(id)?;
        let at = tree!(&self.trees[p as usize], ix => ix.approach(&records.key_of(id), records));
        Some((p, at))
    }

    /// Record `id` in its partition's index at the end of `at` ([`Self::approach`]).
    pub(super) fn spot_from(&self, (p, at): (u16, Approach), id: u32) -> Option<(u16, Spot)> {
        let spot = tree!(&self.trees[p as usize], ix => ix.spot_from(at, id));
        spot.map(|s| (p, s))
    }

    /// Moves record `id`, found at `spot`, to its key now in its partition's index; its
    /// 0-based position there.
    pub(super) fn move_to(&mut self, (p, spot): (u16, Spot), id: u32, records: &Records) -> u64 {
        tree!(&mut self.trees[p as usize], ix => ix.move_to(spot, id, records.key_of(id), records))
    }

    /// Record `id`'s 0-based position in its partition.
    pub(super) fn position(&self, id: u32, records: &Records) -> Option<u64> {
        let p = self.of(id)?;
        tree!(&self.trees[p as usize], ix => ix.position(id, &records.key_of(id), records))
    }

    /// Empties every partition's index (a replay defers them, as the ranking's).
    pub(super) fn defer(&mut self) {
        for t in &mut self.trees {
            *t = Tree::hinted(&self.shape);
        }
    }

    /// Builds every partition's index from `ordered`, the ranking's ids in rank order,
    /// bottom-up.
    pub(super) fn rebuild(&mut self, ordered: impl Iterator<Item = u32>, records: &Records) {
        let mut runs: Vec<Vec<u32>> = vec![Vec::new(); self.trees.len()];
        for id in ordered {
            if let Some(p) = self.of(id) {
                runs[p as usize].push(id);
            }
        }
        for (t, ids) in self.trees.iter_mut().zip(runs) {
            tree!(t, ix => *ix = crate::index::RankedIndex::from_sorted(&ids, records));
        }
    }

    /// Sets record `id`'s partition to the one named `name` (opened if need be) without
    /// touching the indexes: a snapshot's load, whose [`Self::rebuild`] follows. Refuses a
    /// partition past the limit.
    pub(super) fn assign(&mut self, id: u32, name: &str) -> Result<(), BoardError> {
        let place = self.place("", None, Some(name))?;
        self.join(id, place, Some(name));
        Ok(())
    }

    /// Checks that each partition's index holds exactly the members (`ids`) in it, in
    /// order, that its count is theirs, and that the live count counts the partitions
    /// holding a member; panics with what is wrong. For tests only.
    pub(super) fn check_invariants(&self, ids: impl Iterator<Item = u32>, records: &Records) {
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); self.names.len()];
        for id in ids {
            if let Some(p) = self.of(id) {
                members[p as usize].push(id);
            }
        }
        for (p, ids) in members.iter_mut().enumerate() {
            assert_eq!(
                self.sizes[p] as usize,
                ids.len(),
                "partition {:?}: its count and its members differ",
                self.names[p]
            );
            let t = &self.trees[p];
            tree!(t, ix => ix.check_invariants(records));
            assert_eq!(
                t.len(),
                ids.len() as u64,
                "partition {:?}: index size",
                self.names[p]
            );
            let mut indexed: Vec<u32> = t.ids().collect();
            indexed.sort_unstable();
            ids.sort_unstable();
            assert_eq!(
                &indexed, ids,
                "partition {:?}: index and members",
                self.names[p]
            );
            assert_eq!(self.by_name.get(&self.names[p]), Some(&(p as u16)));
        }
        let live = self.sizes.iter().filter(|&&n| n > 0).count() as u32;
        assert_eq!(self.live, live, "partitions: live count");
        assert!(self.live <= self.max, "partitions: over the limit");
    }

    pub(super) fn reserved_bytes(&self) -> usize {
        self.of.capacity() * std::mem::size_of::<u16>()
            + self.trees.iter().map(Tree::reserved_bytes).sum::<usize>()
            + self.names.iter().map(|n| n.len() * 2 + 48).sum::<usize>()
    }
}

impl Ranking {
    /// This ranking with partitions, at most `max` of them (docs/SPEC.md §17), when `max`
    /// is given; as it is otherwise. For an empty ranking.
    pub fn with_partitions(mut self, max: Option<u32>) -> Self {
        self.partitions = max.map(|max| Box::new(Partitions::new(self.shape, max)));
        self
    }

    /// Whether this ranking has partitions.
    pub fn is_partitioned(&self) -> bool {
        self.partitions.is_some()
    }

    /// The most partitions this ranking holds, when it has them (an import file keeps it).
    pub fn partitions_max(&self) -> Option<u32> {
        self.partitions.as_deref().map(|p| p.max)
    }

    /// The partition of record `id`, if it is in one.
    pub(super) fn partition_of_id(&self, id: u32) -> Option<&str> {
        let p = self.partitions.as_deref()?;
        p.of(id).map(|i| p.name(i))
    }

    /// The partition `member` is in, if it is ranked in one.
    pub fn partition_of(&self, member: &str) -> Option<&str> {
        self.partition_of_id(self.find(member)?)
    }

    /// Members in a partition, over them all (a snapshot's count before it lists them).
    pub fn partitioned_len(&self) -> u64 {
        self.partitions.as_deref().map_or(0, Partitions::members)
    }

    /// Puts each member of `pairs` into the partition named beside it, then builds the
    /// partitions' indexes: a snapshot's load, whose entries came without them (docs/
    /// format.md). Refuses a member the ranking does not hold, one given twice, a ranking
    /// without partitions and a partition past its limit.
    pub fn load_partitions<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(), BoardError> {
        let refuse = |what: String| BoardError::InvalidEntries(what);
        for (member, partition) in pairs {
            let id = self
                .find(member)
                .ok_or_else(|| refuse(format!("partition of {member:?}, who is not ranked")))?;
            let parts = self
                .partitions
                .as_deref_mut()
                .ok_or_else(|| refuse("partitions on a board without them".into()))?;
            if parts.of(id).is_some() {
                return Err(refuse(format!("member {member:?}'s partition given twice")));
            }
            crate::groups::validate_group_key(partition)?;
            parts.assign(id, partition)?;
        }
        if let (Some(p), false) = (self.partitions.as_deref_mut(), self.index_deferred) {
            p.rebuild(self.index.ids(), &self.records);
        }
        Ok(())
    }

    /// Calls `f` with each member in a partition and its partition's key, in no order (a
    /// snapshot's partitions section).
    pub fn for_each_partitioned(&self, mut f: impl FnMut(&str, &str)) {
        let Some(p) = self.partitions.as_deref() else {
            return;
        };
        for id in self.members.ids() {
            if let Some(part) = p.of(id) {
                f(
                    &String::from_utf8_lossy(self.records.name(id)),
                    p.name(part),
                );
            }
        }
    }

    /// Where write `w` puts its member among the partitions (refused before anything
    /// changes: a partition other than the member's, one too many, or one named on a
    /// ranking without partitions).
    pub(super) fn place(&self, w: &Write<'_>, existing: Option<u32>) -> Result<Place, BoardError> {
        match (&self.partitions, w.partition) {
            (Some(p), asked) => p.place(w.member, existing, asked),
            (None, None) => Ok(Place::Stay),
            (None, Some(_)) => Err(BoardError::InvalidParameter(
                "the board has no partitions: a write may name a partition only on a board \
                 created with partitions"
                    .into(),
            )),
        }
    }
}

impl<'a> Visible<'a> {
    /// This view narrowed to the partition named `partition`, when one is (one the
    /// ranking does not hold reads as empty).
    pub fn in_partition(self, partition: Option<&str>) -> Visible<'a> {
        match partition {
            None => self,
            Some(name) => {
                let p = self
                    .ranking
                    .partitions
                    .as_deref()
                    .and_then(|p| p.find(name));
                self.into_partition(p)
            }
        }
    }

    /// This view narrowed to partition `p` (`None`: one nobody is in): its index, and
    /// the hidden members in it.
    fn into_partition(self, p: Option<u16>) -> Visible<'a> {
        let parts = self.ranking.partitions.as_deref();
        let index = match parts {
            Some(parts) => parts.tree(p),
            None => Tree::empty(&self.ranking.shape),
        };
        let p = p.unwrap_or(u16::MAX);
        let in_p = |id: &u32| parts.is_some_and(|parts| parts.of(*id) == Some(p));
        let hidden = if self.hidden.is_empty() {
            self.hidden
        } else {
            Cow::Owned(self.hidden.iter().copied().filter(in_p).collect())
        };
        Visible {
            index,
            part: Some(p),
            hidden,
            ..self
        }
    }

    /// The view of `member`'s partition as this reader sees it, when the member is
    /// ranked in one (docs/SPEC.md §17: a member answer's `partition_rank`).
    pub fn partition_of_member(&self, member: &str) -> Option<Visible<'a>> {
        let parts = self.ranking.partitions.as_deref()?;
        let p = parts.of(self.ranking.find(member)?)?;
        Some(self.clone().into_partition(Some(p)))
    }

    /// Every partition holding a member the reader sees, with how many it sees, sorted
    /// by key (docs/SPEC.md §17): each partition's count less its hidden members, one
    /// pass over them. Nothing on a ranking without partitions.
    pub fn partition_counts(&self) -> Vec<(String, u64)> {
        let Some(parts) = self.ranking.partitions.as_deref() else {
            return Vec::new();
        };
        let mut hidden: hashbrown::HashMap<u16, u64> = hashbrown::HashMap::new();
        for &id in self.hidden.iter() {
            if let Some(p) = parts.of(id) {
                *hidden.entry(p).or_default() += 1;
            }
        }
        let mut counts: Vec<(String, u64)> = parts
            .counts()
            .filter_map(|(p, name, n)| {
                let seen = n - hidden.get(&p).unwrap_or(&0);
                (seen > 0).then(|| (name.to_owned(), seen))
            })
            .collect();
        counts.sort_unstable();
        counts
    }
}

impl Ranking {
    /// [`Self::view`] of partition `partition` alone (docs/SPEC.md §17), or of the
    /// whole ranking for `None`. A partition the ranking does not hold reads as empty.
    pub fn view_in(&self, own: Option<&str>, partition: Option<&str>) -> Visible<'_> {
        self.view_whole(own).in_partition(partition)
    }
}
