//! The ranking's reads: a member's rank in each style, several members in one pass (their
//! lookups overlapped), the rank a score would have, the member at a position, a page and
//! the window around a member — each O(log n) through the index. Each is one algorithm,
//! [`super::Visible`]'s: a ranking's own reads are those of its view with nothing hidden
//! ([`Ranking::whole`]). What is here are the steps they share (a record's rank, its
//! entry, a page's ranks, a window's bounds) and the reads of a group (a cohort's).
//!
//! Each read that walks the index is one generic body (`*_in`, over [`RankedIndex<T>`]),
//! run on the ranking's index by [`tree!`] whichever its key.

use super::{by_key, tree, Entry, RankStyle, Ranking, Records, Tree};
use crate::columns::Scores;
use crate::index::{KeyOf, LeafHints, NodeTail, RankedIndex};
use crate::key::{Key, Score};

impl Ranking {
    pub(super) fn rank_in<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
        id: u32,
        key: &Key<T>,
        style: RankStyle,
    ) -> u64
    where
        Records: KeyOf<T>,
    {
        if style == RankStyle::Ordinal {
            return 1 + ix.position_in(ix.seek(key, &self.records), id).unwrap_or(0);
        }
        let Some(r) = ix.ranks(id, key, &self.records) else {
            return 0;
        };
        1 + match style {
            RankStyle::Ordinal => r.position,
            RankStyle::Competition => r.competition,
            RankStyle::Dense => r.dense,
        }
    }

    pub(super) fn entry(&self, id: u32, rank: u64) -> Entry {
        Entry {
            rank,
            hidden: false,
            member: String::from_utf8_lossy(self.records.name(id)).into_owned(),
            scores: self.scores_at(id),
            reached_at_us: self.records.slab.get(id).reached_at_us,
            metadata: self.metadata.get(&id).map(|m| m.to_string()),
            partition: self.partition_of_id(id).map(str::to_owned),
            team: self.team_of_id(id).map(str::to_owned),
        }
    }

    /// The entries of `members` this ranking holds, ranked among themselves in `style` —
    /// a cohort's standings (docs/SPEC.md §14): one lookup each, then the group sorted by
    /// key, no walk of the index. Members it does not hold are left out.
    pub fn rank_among<S: AsRef<str>>(&self, members: &[S], style: RankStyle) -> Vec<Entry> {
        let ids = self.find_all(members).into_iter().flatten();
        let records = &self.records;
        tree!(&self.index, ix => {
            let keyed = by_key_of(ix, ids, records);
            self.ranked_group(&keyed, style)
        })
    }

    /// The positions in `members` of those this ranking holds, best first (their
    /// ordinal order): what a league's close reads of each cohort, without building
    /// entries.
    pub fn order_among<S: AsRef<str>>(&self, members: &[S]) -> Vec<usize> {
        let found = self.find_all(members);
        let records = &self.records;
        tree!(&self.index, ix => positions_by_key(ix, &found, records))
    }

    /// `member`'s rank in `style` among the entries of `members` this ranking holds (it
    /// among them), without building their entries: one lookup each and a count.
    /// `None` when the ranking does not hold `member`.
    pub fn rank_within<S: AsRef<str>>(
        &self,
        members: &[S],
        member: &str,
        style: RankStyle,
    ) -> Option<u64> {
        let id = self.find(member)?;
        let ids = self.find_all(members).into_iter().flatten();
        let records = &self.records;
        Some(tree!(&self.index, ix => {
            let keyed = unsorted_keys_of(ix, ids, records);
            let own = records.key_of(id);
            rank_in_group(&keyed, &own, style)
        }))
    }

    /// Entries for `keyed` (sorted by key), ranked among themselves in `style`.
    fn ranked_group<T: NodeTail>(&self, keyed: &[(Key<T>, u32)], style: RankStyle) -> Vec<Entry> {
        let (mut first_of_score, mut distinct) = (0u64, 0u64);
        let mut out = Vec::with_capacity(keyed.len());
        for (i, (key, id)) in keyed.iter().enumerate() {
            if i == 0 || keyed[i - 1].0.score() != key.score() {
                first_of_score = i as u64 + 1;
                distinct += 1;
            }
            let rank = match style {
                RankStyle::Ordinal => i as u64 + 1,
                RankStyle::Competition => first_of_score,
                RankStyle::Dense => distinct,
            };
            out.push(self.entry(*id, rank));
        }
        out
    }

    /// Whether the ranking holds `member`.
    pub fn contains(&self, member: &str) -> bool {
        self.find(member).is_some()
    }

    /// The member's entry with its rank in `style`, or `None` if absent.
    pub fn member(&self, member: &str, style: RankStyle) -> Option<Entry> {
        self.whole().member(member, style)
    }

    /// The member's entry with its rank in `style` and its ordinal rank, or `None` if
    /// absent.
    pub fn member_ranked(&self, member: &str, style: RankStyle) -> Option<(Entry, u64)> {
        self.whole().member_ranked(member, style)
    }

    /// The entries of `members` in rank order, ranked in `style`, and the indexes (into
    /// `members`) of those absent, in order; a name given twice counts once.
    /// O(m log n).
    pub fn members_of(&self, members: &[String], style: RankStyle) -> (Vec<Entry>, Vec<usize>) {
        self.whole().members_of(members, style, false)
    }

    /// The rank in `style` a member reaching `scores` (one per column, in column order)
    /// now would get: after every entry already at that tuple (ordinal), sharing theirs
    /// (competition, dense). O(log n).
    pub fn rank_of_scores(&self, scores: &Scores, style: RankStyle) -> u64 {
        self.whole().rank_of_scores(scores, style)
    }

    pub(super) fn rank_of_score_in<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
        score: Score<T>,
        style: RankStyle,
    ) -> u64
    where
        Records: KeyOf<T>,
    {
        1 + match style {
            RankStyle::Ordinal => ix.count_below(&Key::last_of(score), &self.records),
            RankStyle::Competition => ix.count_below(&Key::first_of(score), &self.records),
            RankStyle::Dense => ix.distinct_below(score, &self.records),
        }
    }

    /// The member and scores at 0-based position `pos`, if the ranking is that long.
    pub fn at(&self, pos: u64) -> Option<(String, Scores)> {
        self.whole().at(pos)
    }

    /// Up to `limit` entries from 0-based position `offset`, ranked in `style`.
    pub fn page(&self, offset: u64, limit: usize, style: RankStyle) -> Vec<Entry> {
        self.whole().page(offset, limit, style)
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
        self.whole().around(member, before, after, style)
    }

    /// The name and scores of record `id`.
    pub(super) fn named_scores(&self, id: u32) -> (String, Scores) {
        (
            String::from_utf8_lossy(self.records.name(id)).into_owned(),
            self.scores_at(id),
        )
    }
}

/// The page around 0-based position `pos` of `len` entries: its first position and size,
/// `before` entries above and `after` below, shifted at either end to keep
/// `before + after + 1` entries where there are that many.
pub(super) fn window(pos: u64, len: u64, before: u64, after: u64) -> (u64, usize) {
    let size = before.saturating_add(after).saturating_add(1);
    let start = pos.saturating_sub(before).min(len.saturating_sub(size));
    (start, usize::try_from(size).unwrap_or(usize::MAX))
}

/// The rank in `style` of the entry at 0-based position `pos` of a page (key `key`),
/// from the entry before it on the page (`prev`: its score and rank): the same rank on a
/// tie, else the next; the page's first entry asks `first`.
pub(super) fn page_rank<T: NodeTail>(
    style: RankStyle,
    prev: Option<(Score<T>, u64)>,
    pos: u64,
    key: &Key<T>,
    first: impl FnOnce() -> u64,
) -> u64 {
    match (style, prev) {
        (RankStyle::Ordinal, _) => pos + 1,
        (_, None) => first(),
        (_, Some((score, rank))) if score == key.score() => rank,
        (RankStyle::Competition, Some(_)) => pos + 1,
        (RankStyle::Dense, Some((_, rank))) => rank + 1,
    }
}

/// [`by_key`] with its key type taken from index `_ix` (what [`tree!`] binds).
pub(super) fn by_key_of<T: NodeTail, H: LeafHints>(
    _ix: &RankedIndex<T, H>,
    ids: impl Iterator<Item = u32>,
    records: &Records,
) -> Vec<(Key<T>, u32)>
where
    Records: KeyOf<T>,
{
    by_key(ids, records)
}

/// The positions of the found ids in `found`, sorted by their keys (the key type taken
/// from index `_ix`).
fn positions_by_key<T: NodeTail, H: LeafHints>(
    _ix: &RankedIndex<T, H>,
    found: &[Option<u32>],
    records: &Records,
) -> Vec<usize>
where
    Records: KeyOf<T>,
{
    let mut keyed: Vec<(Key<T>, usize)> = found
        .iter()
        .enumerate()
        .filter_map(|(i, id)| id.map(|id| (records.key_of(id), i)))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The keys of `ids`, unsorted, with the key type taken from index `_ix`.
fn unsorted_keys_of<T: NodeTail, H: LeafHints>(
    _ix: &RankedIndex<T, H>,
    ids: impl Iterator<Item = u32>,
    records: &Records,
) -> Vec<Key<T>>
where
    Records: KeyOf<T>,
{
    ids.map(|id| records.key_of(id)).collect()
}

/// The rank in `style` of key `own` among `keys` (which hold it): ordinal counts the keys
/// below it, competition the keys of better scores, dense the distinct better scores.
fn rank_in_group<T: NodeTail>(keys: &[Key<T>], own: &Key<T>, style: RankStyle) -> u64 {
    let score = own.score();
    1 + match style {
        RankStyle::Ordinal => keys.iter().filter(|k| *k < own).count() as u64,
        RankStyle::Competition => keys.iter().filter(|k| k.score() < score).count() as u64,
        RankStyle::Dense => {
            let mut better: Vec<Score<T>> =
                keys.iter().map(Key::score).filter(|s| *s < score).collect();
            better.sort_unstable();
            better.dedup();
            better.len() as u64
        }
    }
}
