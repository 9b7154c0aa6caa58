//! The ranking's reads: a member's rank in each style, several members in one pass (their
//! lookups overlapped), the rank a score would have, the member at a position, a page and
//! the window around a member — each O(log n) through the index.

use super::{Entry, RankStyle, Ranking, BATCH};
use crate::index::{KeyOf, Seek};
use crate::key::Key;

impl Ranking {
    /// The ordinal rank of `id` in the leaf a seek for its key found.
    fn ordinal_at(&self, seek: Seek<'_>, id: u32) -> u64 {
        1 + self.index.position_in(seek, id).unwrap_or(0)
    }

    fn rank_of(&self, id: u32, key: &Key, style: RankStyle) -> u64 {
        if style == RankStyle::Ordinal {
            return self.ordinal_at(self.index.seek(key), id);
        }
        let Some(r) = self.index.ranks(id, key, &self.records) else {
            return 0;
        };
        1 + match style {
            RankStyle::Ordinal => r.position,
            RankStyle::Competition => r.competition,
            RankStyle::Dense => r.dense,
        }
    }

    fn entry(&self, id: u32, rank: u64) -> Entry {
        let key = self.records.key_of(id);
        Entry {
            rank,
            member: String::from_utf8_lossy(self.records.name(id)).into_owned(),
            score: self.order.denormalize(key.nscore),
            reached_at_us: key.reached_at_us,
            metadata: self.metadata.get(&id).map(|m| m.to_string()),
        }
    }

    /// The member's entry with its rank in `style`, or `None` if absent.
    pub fn member(&self, member: &str, style: RankStyle) -> Option<Entry> {
        debug_assert!(!self.index_deferred, "read before rebuild_index");
        let id = self.find(member)?;
        let key = self.records.key_of(id);
        Some(self.entry(id, self.rank_of(id, &key, style)))
    }

    /// The member's entry with its rank in `style` and its ordinal rank, or `None` if
    /// absent.
    pub fn member_ranked(&self, member: &str, style: RankStyle) -> Option<(Entry, u64)> {
        debug_assert!(!self.index_deferred, "read before rebuild_index");
        let id = self.find(member)?;
        let key = self.records.key_of(id);
        let ordinal = self.rank_of(id, &key, RankStyle::Ordinal);
        let rank = match style {
            RankStyle::Ordinal => ordinal,
            _ => self.rank_of(id, &key, style),
        };
        Some((self.entry(id, rank), ordinal))
    }

    /// The entries of `members` in rank order, ranked in `style`, and the indexes (into
    /// `members`) of those absent, in order; a name given twice counts once.
    /// O(m log n).
    pub fn members_of(&self, members: &[String], style: RankStyle) -> (Vec<Entry>, Vec<usize>) {
        debug_assert!(!self.index_deferred, "read before rebuild_index");
        let mut found: Vec<(Key, u32)> = Vec::with_capacity(members.len());
        let mut missing = Vec::new();
        for (i, id) in self.find_all(members).into_iter().enumerate() {
            match id {
                Some(id) => found.push((self.records.key_of(id), id)),
                None => missing.push(i),
            }
        }
        found.sort_unstable_by_key(|&(key, _)| key);
        found.dedup_by_key(|&mut (_, id)| id);
        // Every leaf of a batch is sought (and so prefetched) before the first is read. An
        // ordinal rank is read from its seek; the others descend again, over the inner
        // nodes the seek left in cache, to the leaf it brought in.
        let mut entries = Vec::with_capacity(found.len());
        let mut seeks = Vec::with_capacity(BATCH);
        for chunk in found.chunks(BATCH) {
            seeks.clear();
            seeks.extend(chunk.iter().map(|(key, _)| self.index.seek(key)));
            for (&(key, id), &seek) in chunk.iter().zip(&seeks) {
                let rank = match style {
                    RankStyle::Ordinal => self.ordinal_at(seek, id),
                    _ => self.rank_of(id, &key, style),
                };
                entries.push(self.entry(id, rank));
            }
        }
        (entries, missing)
    }

    /// The rank in `style` a member reaching `score` now would get: after every entry
    /// already at `score` (ordinal), sharing theirs (competition, dense). O(log n).
    pub fn rank_of_score(&self, score: i64, style: RankStyle) -> u64 {
        debug_assert!(!self.index_deferred, "read before rebuild_index");
        let nscore = self.order.normalize(score);
        1 + match style {
            RankStyle::Ordinal => self.index.count_below(
                &Key {
                    nscore,
                    reached_at_us: i64::MAX,
                    seq: u64::MAX,
                },
                &self.records,
            ),
            RankStyle::Competition => self
                .index
                .count_below(&Key::first_of_score(nscore), &self.records),
            RankStyle::Dense => self.index.distinct_below(nscore, &self.records),
        }
    }

    /// The member and score at 0-based position `pos`, if the ranking is that long.
    pub fn at(&self, pos: u64) -> Option<(String, i64)> {
        debug_assert!(!self.index_deferred, "read before rebuild_index");
        let id = self.index.get(pos)?;
        let key = self.records.key_of(id);
        Some((
            String::from_utf8_lossy(self.records.name(id)).into_owned(),
            self.order.denormalize(key.nscore),
        ))
    }

    /// Up to `limit` entries from 0-based position `offset`, ranked in `style`.
    pub fn page(&self, offset: u64, limit: usize, style: RankStyle) -> Vec<Entry> {
        debug_assert!(!self.index_deferred, "read before rebuild_index");
        let mut out: Vec<Entry> = Vec::with_capacity(limit.min(self.len() as usize));
        let mut prev: Option<(i64, u64)> = None;
        // Neighbours in rank order are strangers in memory: each record is a cache miss, and
        // building an entry is too long for the CPU to start the next one's load on its
        // own. So the records are prefetched BATCH entries ahead of the one being read.
        let ids = self.index.iter_from(offset).take(limit);
        let mut ahead = ids.clone();
        for id in ahead.by_ref().take(BATCH) {
            self.records.slab.prefetch(id);
        }
        for (i, id) in ids.enumerate() {
            if let Some(next) = ahead.next() {
                self.records.slab.prefetch(next);
            }
            let pos = offset + i as u64;
            let key = self.records.key_of(id);
            let rank = match (style, prev) {
                (RankStyle::Ordinal, _) => pos + 1,
                (_, None) => self.rank_of(id, &key, style),
                (_, Some((score, rank))) if score == key.nscore => rank,
                (RankStyle::Competition, Some(_)) => pos + 1,
                (RankStyle::Dense, Some((_, rank))) => rank + 1,
            };
            prev = Some((key.nscore, rank));
            out.push(self.entry(id, rank));
        }
        out
    }

    /// The window around `member`: `before` entries above and `after` below, shifted at the
    /// top or bottom so that it keeps `before + after + 1` entries where the ranking has them.
    pub fn around(
        &self,
        member: &str,
        before: u64,
        after: u64,
        style: RankStyle,
    ) -> Option<Vec<Entry>> {
        debug_assert!(!self.index_deferred, "read before rebuild_index");
        let id = self.find(member)?;
        let pos = self.index.position(id, &self.records.key_of(id))?;
        let size = before.saturating_add(after).saturating_add(1);
        let start = pos
            .saturating_sub(before)
            .min(self.len().saturating_sub(size));
        let limit = usize::try_from(size).unwrap_or(usize::MAX);
        Some(self.page(start, limit, style))
    }
}
