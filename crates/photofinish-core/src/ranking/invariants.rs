//! The ranking's self-check, a test and debugging aid: that its records, member table,
//! long names, metadata, index, partitions and teams agree.

use super::{tree, Ranking, Tree, INLINE_NAME_BYTES};

impl Ranking {
    /// Checks that the structures agree and panics with what is wrong if not: every live
    /// record is in the member table exactly once, under its own name; every long name
    /// belongs to a record; every metadata entry and every indexed id is a member; sequence
    /// numbers are below [`Self::next_seq`]; the index holds exactly the members and passes
    /// [`RankedIndex::check_invariants`]. While the index is deferred
    /// ([`Self::submit_unranked`] until [`Self::rebuild_index`]) it is stale by design, so
    /// only its emptiness is checked. A test and debugging aid: O(n), for tests only.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        let records = &self.records;
        let member_of = |id: u32| {
            let name = records.name(id);
            self.find_hashed(self.name_hash(name), name)
        };
        let mut long = 0;
        let mut seen = std::collections::HashSet::new();
        for id in self.members.ids() {
            assert!(
                seen.insert(id),
                "ranking: record {id} is in the member table twice"
            );
            let name = || String::from_utf8_lossy(records.name(id));
            assert_eq!(
                member_of(id),
                Some(id),
                "ranking: record {id} ({:?}) is not found under its name",
                name()
            );
            let seq = records.slab.get(id).seq_len >> 8;
            assert!(
                seq > 0 && seq < self.next_seq,
                "ranking: record {id} ({:?}) has seq {} outside 1..{}",
                name(),
                seq,
                self.next_seq
            );
            long += usize::from(records.slab.get(id).name_len() > INLINE_NAME_BYTES);
        }
        assert_eq!(
            records.slab.len(),
            self.members.len(),
            "ranking: live records and members differ"
        );
        assert_eq!(
            records.long_names.len(),
            long,
            "ranking: live long names and long-named members differ"
        );
        for &id in self.metadata.keys() {
            assert_eq!(
                member_of(id),
                Some(id),
                "ranking: metadata kept for record {id}, not a member"
            );
        }
        self.check_teams();
        if self.index_deferred {
            assert!(
                self.index.is_empty(),
                "ranking: the deferred index is not empty"
            );
            return;
        }
        self.check_index();
        if let Some(p) = self.partitions.as_deref() {
            p.check_invariants(self.members.ids(), records);
        }
    }

    /// The index (kept, not deferred) holds exactly the members, in order.
    fn check_index(&self) {
        let records = &self.records;
        tree!(&self.index, ix => ix.check_invariants(records));
        assert_eq!(
            self.index.len(),
            self.len(),
            "ranking: the index and the member table differ in size"
        );
        // With equal sizes and the index's ids distinct, this makes the two sets equal.
        for id in self.index.ids() {
            let name = records.name(id);
            assert_eq!(
                self.find_hashed(self.name_hash(name), name),
                Some(id),
                "ranking: indexed id {id} is not a member"
            );
        }
    }
}
