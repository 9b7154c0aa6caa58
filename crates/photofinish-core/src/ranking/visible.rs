//! What a reader sees of a ranking while members of its board are hidden (docs/SPEC.md
//! §15): a [`Visible`] answers the ranking's reads — its length, pages, a member's rank,
//! the window around a member, several members, the rank a score would get, the entry at a
//! position — as if the hidden members were not there. A rank is the ranking's own less
//! the hidden entries before it: keys below it (ordinal), better scores (competition),
//! better scores that hidden members alone hold (dense). A hidden member's own rank
//! counted that way is the rank it would have were it visible, which is what its own view
//! (a shadow ban) and an admin's read of it show.
//!
//! With no hidden member every read is the ranking's own. With `h` of them (at most
//! [`crate::config::MAX_HIDDEN_MEMBERS`]) a view costs `h` look-ups and a sort to make;
//! a rank then costs O(log n + log h) more, a page's start a binary search over `h + 1`
//! positions (each O(log n)), and a dense rank O(log n) more per score above it that
//! hidden members hold.

use super::reads::{by_key_of, page_rank, window};
use super::{tree, Entry, RankStyle, Ranking, Records, Tree};
use crate::columns::Scores;
use crate::index::{KeyOf, NodeTail, RankedIndex};
use crate::key::{Key, Score};

/// A ranking as its readers see it. See the module docs.
#[derive(Debug, Clone)]
pub struct Visible<'a> {
    ranking: &'a Ranking,
    /// The hidden members' record ids that the ranking holds, best first.
    hidden: Vec<u32>,
    /// The same ids, ascending, to tell whether an id is hidden.
    by_id: Vec<u32>,
}

impl Ranking {
    /// The ranking with the members named by `hidden` left out (names it does not hold
    /// are ignored).
    pub fn visible<'a, S: AsRef<str>>(
        &'a self,
        hidden: impl IntoIterator<Item = S>,
    ) -> Visible<'a> {
        let mut ids: Vec<u32> = hidden
            .into_iter()
            .filter_map(|m| self.find(m.as_ref()))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Visible {
                ranking: self,
                hidden: Vec::new(),
                by_id: Vec::new(),
            };
        }
        let records = &self.records;
        let hidden: Vec<u32> = tree!(&self.index, ix => by_key_of(ix, ids.iter().copied(), records)
            .into_iter()
            .map(|(_, id)| id)
            .collect());
        Visible {
            ranking: self,
            hidden,
            by_id: ids,
        }
    }
}

impl<'a> Visible<'a> {
    /// The ranking underneath, hidden members and all.
    pub fn ranking(&self) -> &'a Ranking {
        self.ranking
    }

    /// Entries the reader sees.
    pub fn len(&self) -> u64 {
        self.ranking.len() - self.hidden.len() as u64
    }

    /// Whether the reader sees no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn is_hidden(&self, id: u32) -> bool {
        !self.by_id.is_empty() && self.by_id.binary_search(&id).is_ok()
    }

    /// Whether `member` has an entry the reader does not see.
    pub fn hides(&self, member: &str) -> bool {
        !self.by_id.is_empty()
            && self
                .ranking
                .find(member)
                .is_some_and(|id| self.is_hidden(id))
    }

    /// Whether the reader sees an entry of `member`.
    pub fn shows(&self, member: &str) -> bool {
        self.ranking
            .find(member)
            .is_some_and(|id| !self.is_hidden(id))
    }

    /// `members` without those whose entries the reader does not see (a cohort's
    /// standings, a league's close).
    pub fn shown<'m>(&self, members: Vec<&'m str>) -> Vec<&'m str> {
        if self.by_id.is_empty() {
            return members;
        }
        members.into_iter().filter(|m| !self.hides(m)).collect()
    }

    /// The hidden entries before key `key` in `style` (see the module docs); for a
    /// competition or dense rank only its score counts.
    fn hidden_before<T: NodeTail>(&self, ix: &RankedIndex<T>, key: &Key<T>, style: RankStyle) -> u64
    where
        Records: KeyOf<T>,
    {
        if self.hidden.is_empty() {
            return 0;
        }
        let records = &self.ranking.records;
        let key_of = |id: u32| -> Key<T> { records.key_of(id) };
        let score = key.score();
        let better = || self.hidden.partition_point(|&h| key_of(h).score() < score);
        match style {
            RankStyle::Ordinal => self.hidden.partition_point(|&h| key_of(h) < *key) as u64,
            RankStyle::Competition => better() as u64,
            RankStyle::Dense => {
                // Hidden keys are sorted, so each score's hidden entries are a run: the
                // score is gone from the reader's view when the run is all it holds.
                let runs = &self.hidden[..better()];
                let mut gone = 0u64;
                let mut i = 0;
                while i < runs.len() {
                    let s = key_of(runs[i]).score();
                    let run = runs[i..].partition_point(|&h| key_of(h).score() == s);
                    if held(ix, records, s) == run as u64 {
                        gone += 1;
                    }
                    i += run;
                }
                gone
            }
        }
    }

    /// The rank in `style` of record `id` (key `key`) in the reader's view.
    fn rank_in<T: NodeTail>(
        &self,
        ix: &RankedIndex<T>,
        id: u32,
        key: &Key<T>,
        style: RankStyle,
    ) -> u64
    where
        Records: KeyOf<T>,
    {
        self.ranking.rank_in(ix, id, key, style) - self.hidden_before(ix, key, style)
    }

    /// `member`'s entry with its rank in `style` and its ordinal rank in the reader's
    /// view, or `None` if the ranking does not hold it. A hidden member is answered too,
    /// marked `hidden`, with the rank it would have: the caller decides who sees it.
    pub fn member_ranked(&self, member: &str, style: RankStyle) -> Option<(Entry, u64)> {
        if self.hidden.is_empty() {
            return self.ranking.member_ranked(member, style);
        }
        let id = self.ranking.find(member)?;
        let records = &self.ranking.records;
        Some(tree!(&self.ranking.index, ix => {
            let key = records.key_of(id);
            let ordinal = self.rank_in(ix, id, &key, RankStyle::Ordinal);
            let rank = match style {
                RankStyle::Ordinal => ordinal,
                _ => self.rank_in(ix, id, &key, style),
            };
            let mut entry = self.ranking.entry(id, rank);
            entry.hidden = self.is_hidden(id);
            (entry, ordinal)
        }))
    }

    /// The entries of `members` in rank order, ranked in `style`, and the indexes (into
    /// `members`) of those the reader does not find, in order; a name given twice counts
    /// once. A hidden member is among the missing unless `reveal` (an admin's read: then
    /// it is marked, with the rank it would have).
    pub fn members_of(
        &self,
        members: &[String],
        style: RankStyle,
        reveal: bool,
    ) -> (Vec<Entry>, Vec<usize>) {
        if self.hidden.is_empty() {
            return self.ranking.members_of(members, style);
        }
        let mut found = Vec::with_capacity(members.len());
        let mut missing = Vec::new();
        for (i, id) in self.ranking.find_all(members).into_iter().enumerate() {
            match id {
                Some(id) if reveal || !self.is_hidden(id) => found.push(id),
                _ => missing.push(i),
            }
        }
        found.sort_unstable();
        found.dedup();
        let records = &self.ranking.records;
        let entries = tree!(&self.ranking.index, ix => {
            let mut keyed = by_key_of(ix, found.into_iter(), records);
            keyed.dedup_by_key(|&mut (_, id)| id);
            keyed
                .into_iter()
                .map(|(key, id)| {
                    let mut entry = self.ranking.entry(id, self.rank_in(ix, id, &key, style));
                    entry.hidden = self.is_hidden(id);
                    entry
                })
                .collect()
        });
        (entries, missing)
    }

    /// The rank in `style` a member reaching `scores` now would get in the reader's view.
    pub fn rank_of_scores(&self, scores: &Scores, style: RankStyle) -> u64 {
        if self.hidden.is_empty() {
            return self.ranking.rank_of_scores(scores, style);
        }
        let shape = &self.ranking.shape;
        let nscore = shape.nscore(scores);
        match &self.ranking.index {
            Tree::One(ix) => self.rank_of_score_in(ix, Score::of(nscore), style),
            Tree::Many(ix) => {
                let score = Score {
                    nscore,
                    tail: shape.tail(scores),
                };
                self.rank_of_score_in(ix, score, style)
            }
        }
    }

    fn rank_of_score_in<T: NodeTail>(
        &self,
        ix: &RankedIndex<T>,
        score: Score<T>,
        style: RankStyle,
    ) -> u64
    where
        Records: KeyOf<T>,
    {
        let probe = match style {
            RankStyle::Ordinal => Key::last_of(score),
            _ => Key::first_of(score),
        };
        self.ranking.rank_of_score_in(ix, score, style) - self.hidden_before(ix, &probe, style)
    }

    /// The ranking's position of the reader's 0-based position `pos`, if the reader sees
    /// that many entries.
    fn raw_position<T: NodeTail>(&self, ix: &RankedIndex<T>, pos: u64) -> Option<u64>
    where
        Records: KeyOf<T>,
    {
        if pos >= self.len() {
            return None;
        }
        if self.hidden.is_empty() {
            return Some(pos);
        }
        let records = &self.ranking.records;
        // Entries the reader sees among the ranking's positions 0..=p: grows by one at each
        // entry it sees, so the first p where it reaches pos + 1 is the entry sought, and
        // it lies within the hidden entries' count past pos.
        let seen_through = |p: u64| -> u64 {
            let Some(id) = ix.get(p) else {
                return u64::MAX;
            };
            let key: Key<T> = records.key_of(id);
            p + 1 - self.hidden.partition_point(|&h| records.key_of(h) <= key) as u64
        };
        let (mut lo, mut hi) = (pos, pos + self.hidden.len() as u64);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if seen_through(mid) > pos {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(lo)
    }

    /// The member and scores at the reader's 0-based position `pos`, if it sees that many.
    pub fn at(&self, pos: u64) -> Option<(String, Scores)> {
        if self.hidden.is_empty() {
            return self.ranking.at(pos);
        }
        let raw = tree!(&self.ranking.index, ix => self.raw_position(ix, pos))?;
        self.ranking.at(raw)
    }

    /// Up to `limit` entries the reader sees, from its 0-based position `offset`, ranked
    /// in `style`.
    pub fn page(&self, offset: u64, limit: usize, style: RankStyle) -> Vec<Entry> {
        if self.hidden.is_empty() {
            return self.ranking.page(offset, limit, style);
        }
        tree!(&self.ranking.index, ix => self.page_in(ix, offset, limit, style))
    }

    fn page_in<T: NodeTail>(
        &self,
        ix: &RankedIndex<T>,
        offset: u64,
        limit: usize,
        style: RankStyle,
    ) -> Vec<Entry>
    where
        Records: KeyOf<T>,
    {
        let Some(start) = self.raw_position(ix, offset) else {
            return Vec::new();
        };
        let records = &self.ranking.records;
        let mut out = Vec::with_capacity(limit.min(self.len() as usize));
        let mut prev: Option<(Score<T>, u64)> = None;
        let ids = ix.iter_from(start).filter(|&id| !self.is_hidden(id));
        for (pos, id) in (offset..).zip(ids.take(limit)) {
            let key: Key<T> = records.key_of(id);
            let rank = page_rank(style, prev, pos, &key, || self.rank_in(ix, id, &key, style));
            prev = Some((key.score(), rank));
            out.push(self.ranking.entry(id, rank));
        }
        out
    }

    /// The window around `member` in the reader's view: `before` entries above and
    /// `after` below, shifted at either end to keep `before + after + 1` entries where
    /// there are that many; `None` unless the reader sees `member`.
    pub fn around(
        &self,
        member: &str,
        before: u64,
        after: u64,
        style: RankStyle,
    ) -> Option<Vec<Entry>> {
        if self.hidden.is_empty() {
            return self.ranking.around(member, before, after, style);
        }
        let id = self
            .ranking
            .find(member)
            .filter(|&id| !self.is_hidden(id))?;
        let records = &self.ranking.records;
        let pos = tree!(&self.ranking.index, ix => {
            let key = records.key_of(id);
            self.rank_in(ix, id, &key, RankStyle::Ordinal) - 1
        });
        let (start, limit) = window(pos, self.len(), before, after);
        Some(self.page(start, limit, style))
    }
}

/// How many entries of `ix` have score `s`.
fn held<T: NodeTail>(ix: &RankedIndex<T>, records: &Records, s: Score<T>) -> u64
where
    Records: KeyOf<T>,
{
    ix.count_below(&Key::last_of(s), records) - ix.count_below(&Key::first_of(s), records)
}
