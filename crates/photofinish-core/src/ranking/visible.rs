//! What a reader sees of a ranking while members of its board are hidden (docs/SPEC.md
//! §15), and the one place each read is written: a [`Visible`] answers the ranking's
//! reads — its length, pages, a member's rank, the window around a member, several
//! members, the rank a score would get, the entry at a position — as if the hidden
//! members were not there. A rank is the ranking's own less the hidden entries before it:
//! keys below it (ordinal), better scores (competition), better scores that hidden
//! members alone hold (dense). A hidden member's own rank counted that way is the rank it
//! would have were it visible, which is what its own view (a shadow ban) and an admin's
//! read of it show.
//!
//! The ranking keeps the hidden members it holds ([`HiddenIds`]: their record ids in key
//! order, and as a set), kept by its board as members are hidden, shown, written and
//! removed — so a view costs nothing to make. A ranking's own reads are its view with
//! nothing hidden ([`Ranking::whole`]), where each step that leaves the hidden out costs
//! a branch that is never taken. With `h` of them (at most
//! [`crate::config::MAX_HIDDEN_MEMBERS`]) a rank costs O(log n + log h), a page's start a
//! binary search over at most `h + 1` positions (each O(log n)), and a dense rank
//! O(log n) more per score above it that hidden members hold. A hidden member's own view
//! copies the `h` ids less its own (O(h), no look-up).

use std::borrow::Cow;

use hashbrown::HashSet;

use super::reads::{page_rank, window};
use super::{tree, Entry, RankStyle, Ranking, Records, Tree, BATCH};
use crate::columns::Scores;
use crate::index::{KeyOf, LeafHints, NodeTail, RankedIndex};
use crate::key::{Key, Score};

/// The hidden members a ranking holds: their record ids in key order (best first), and
/// the same ids as a set.
#[derive(Debug, Clone, Default)]
pub(crate) struct HiddenIds {
    by_key: Vec<u32>,
    set: HashSet<u32>,
}

/// A ranking as its readers see it. See the module docs.
#[derive(Debug, Clone)]
pub struct Visible<'a> {
    pub(super) ranking: &'a Ranking,
    /// The index read: the ranking's, or one partition's (docs/SPEC.md §17).
    pub(super) index: &'a Tree,
    /// The partition read, when one is: only its records are seen (a partition nobody
    /// is in reads as `u16::MAX`, which no record holds).
    pub(super) part: Option<u16>,
    /// The hidden members' record ids that the ranking holds, best first.
    pub(super) hidden: Cow<'a, [u32]>,
    /// The same ids (in a hidden member's own view, with its own among them: `own`).
    pub(super) set: Option<Cow<'a, HashSet<u32>>>,
    /// The reader's own id when it is hidden: it sees itself.
    pub(super) own: Option<u32>,
}

impl Ranking {
    /// The ranking with the members named by `hidden` left out (names it does not hold
    /// are ignored): a view made on the spot, O(h log h) — what the hidden members a
    /// ranking keeps spare its reads; the model tests compare the two.
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
            return self.whole();
        }
        let records = &self.records;
        let hidden: Vec<u32> = tree!(&self.index, ix => super::reads::by_key_of(ix, ids.iter().copied(), records)
            .into_iter()
            .map(|(_, id)| id)
            .collect());
        Visible {
            ranking: self,
            index: &self.index,
            part: None,
            hidden: Cow::Owned(hidden),
            set: Some(Cow::Owned(ids.into_iter().collect())),
            own: None,
        }
    }

    /// The ranking as it is, nothing left out: the view its own reads are
    /// ([`Ranking::page`] and the others are this view's), one algorithm for every read.
    pub fn whole(&self) -> Visible<'_> {
        Visible {
            ranking: self,
            index: &self.index,
            part: None,
            hidden: Cow::Borrowed(&[]),
            set: None,
            own: None,
        }
    }

    /// The ranking as a reader sees it, the hidden members it keeps left out, except
    /// `own` — the reader itself, which sees itself as if visible.
    pub fn view(&self, own: Option<&str>) -> Visible<'_> {
        self.view_in(own, None)
    }

    pub(super) fn view_whole(&self, own: Option<&str>) -> Visible<'_> {
        let Some(h) = self.hidden.as_deref() else {
            return self.whole();
        };
        let own = own
            .and_then(|m| self.find(m))
            .filter(|id| h.set.contains(id));
        let hidden = match own {
            Some(own) => Cow::Owned(h.by_key.iter().copied().filter(|&id| id != own).collect()),
            None => Cow::Borrowed(h.by_key.as_slice()),
        };
        Visible {
            ranking: self,
            index: &self.index,
            part: None,
            hidden,
            set: Some(Cow::Borrowed(&h.set)),
            own,
        }
    }

    /// Keeps `member` (if the ranking holds it) among its hidden members at its key now
    /// (`hidden`), or no longer: what the board calls when it hides or shows a member,
    /// and after each write of a hidden one (its key may have moved). O(h).
    pub fn mark_hidden(&mut self, member: &str, hidden: bool) {
        let Some(id) = self.find(member) else {
            return;
        };
        self.forget_hidden(id);
        if !hidden {
            return;
        }
        let records = &self.records;
        let h = self.hidden.get_or_insert_with(Box::default);
        let at = tree!(&self.index, ix => position_of_key(ix, records, &h.by_key, id));
        h.by_key.insert(at, id);
        h.set.insert(id);
    }

    /// Whether the ranking keeps a hidden member.
    pub fn has_hidden(&self) -> bool {
        self.hidden.is_some()
    }

    /// Whether record `id` is among the hidden members kept.
    pub(super) fn is_hidden_id(&self, id: u32) -> bool {
        self.hidden.as_deref().is_some_and(|h| h.set.contains(&id))
    }

    /// Drops record `id` from the hidden members kept (its member was shown or removed,
    /// or its key is about to be placed again).
    pub(super) fn forget_hidden(&mut self, id: u32) {
        let Some(h) = self.hidden.as_deref_mut() else {
            return;
        };
        if h.set.remove(&id) {
            h.by_key.retain(|&x| x != id);
        }
        if h.set.is_empty() {
            self.hidden = None;
        }
    }
}

/// Where record `id`'s key goes among `sorted` (ids in key order), the key type taken
/// from index `_ix`.
fn position_of_key<T: NodeTail, H: LeafHints>(
    _ix: &RankedIndex<T, H>,
    records: &Records,
    sorted: &[u32],
    id: u32,
) -> usize
where
    Records: KeyOf<T>,
{
    let key: Key<T> = records.key_of(id);
    sorted.partition_point(|&h| records.key_of(h) < key)
}

impl<'a> Visible<'a> {
    /// The ranking underneath, hidden members and all.
    pub fn ranking(&self) -> &'a Ranking {
        self.ranking
    }

    /// Whether the reader reads record `id`'s partition (every record, when no partition
    /// is read).
    #[inline]
    pub(super) fn in_view(&self, id: u32) -> bool {
        match self.part {
            None => true,
            Some(p) => self
                .ranking
                .partitions
                .as_deref()
                .is_some_and(|parts| parts.of(id) == Some(p)),
        }
    }

    /// The record of `member`, if the reader reads its partition.
    fn find(&self, member: &str) -> Option<u32> {
        self.ranking.find(member).filter(|&id| self.in_view(id))
    }

    /// Entries the reader sees.
    pub fn len(&self) -> u64 {
        self.index.len() - self.hidden.len() as u64
    }

    /// Whether the reader sees no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn is_hidden(&self, id: u32) -> bool {
        self.set
            .as_ref()
            .is_some_and(|s| s.contains(&id) && self.own != Some(id))
    }

    /// Whether `member` has an entry the reader does not see.
    pub fn hides(&self, member: &str) -> bool {
        self.set.is_some() && self.find(member).is_some_and(|id| self.is_hidden(id))
    }

    /// Whether the reader sees an entry of `member`.
    pub fn shows(&self, member: &str) -> bool {
        self.find(member).is_some_and(|id| !self.is_hidden(id))
    }

    /// `members` without those whose entries the reader does not see (a cohort's
    /// standings, a league's close).
    pub fn shown<'m>(&self, members: Vec<&'m str>) -> Vec<&'m str> {
        if self.hidden.is_empty() {
            return members;
        }
        members.into_iter().filter(|m| !self.hides(m)).collect()
    }

    /// The hidden entries before key `key` in `style` (see the module docs); for a
    /// competition or dense rank only its score counts. Nothing hidden (every read of a
    /// ranking's own, [`Ranking::whole`]) costs one branch: the count is out of line.
    #[inline]
    fn hidden_before<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
        key: &Key<T>,
        style: RankStyle,
    ) -> u64
    where
        Records: KeyOf<T>,
    {
        if self.hidden.is_empty() {
            return 0;
        }
        self.count_hidden_before(ix, key, style)
    }

    #[cold]
    #[inline(never)]
    fn count_hidden_before<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
        key: &Key<T>,
        style: RankStyle,
    ) -> u64
    where
        Records: KeyOf<T>,
    {
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
    fn rank_in<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
        id: u32,
        key: &Key<T>,
        style: RankStyle,
    ) -> u64
    where
        Records: KeyOf<T>,
    {
        self.ranking.rank_in(ix, id, key, style) - self.hidden_before(ix, key, style)
    }

    /// `member`'s entry with its rank in `style` in the reader's view, or `None` if the
    /// ranking does not hold it (a hidden member is answered, marked, as in
    /// [`Self::member_ranked`]).
    pub fn member(&self, member: &str, style: RankStyle) -> Option<Entry> {
        let (id, rank) = self.ranked(member, style)?;
        let mut entry = self.ranking.entry(id, rank);
        entry.hidden = self.is_hidden(id);
        Some(entry)
    }

    /// `member`'s rank in `style` and scores in the reader's view, and whether it is hidden
    /// from the reader (ranked as it would be, as in [`Self::member`]); `None` if the
    /// ranking does not hold it. Builds no entry.
    pub fn standing(&self, member: &str, style: RankStyle) -> Option<(u64, Scores, bool)> {
        let (id, rank) = self.ranked(member, style)?;
        Some((rank, self.ranking.scores_at(id), self.is_hidden(id)))
    }

    /// `member`'s record id and its rank in `style` in the reader's view.
    fn ranked(&self, member: &str, style: RankStyle) -> Option<(u32, u64)> {
        debug_assert!(!self.ranking.index_deferred, "read before rebuild_index");
        let id = self.find(member)?;
        let records = &self.ranking.records;
        let rank = tree!(&self.index, ix => self.rank_in(ix, id, &records.key_of(id), style));
        Some((id, rank))
    }

    /// `member`'s entry with its rank in `style` and its ordinal rank in the reader's
    /// view, or `None` if the ranking does not hold it. A hidden member is answered too,
    /// marked `hidden`, with the rank it would have: the caller decides who sees it.
    pub fn member_ranked(&self, member: &str, style: RankStyle) -> Option<(Entry, u64)> {
        debug_assert!(!self.ranking.index_deferred, "read before rebuild_index");
        let id = self.find(member)?;
        let records = &self.ranking.records;
        Some(tree!(&self.index, ix => {
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
        debug_assert!(!self.ranking.index_deferred, "read before rebuild_index");
        tree!(&self.index, ix => self.members_in(ix, members, style, reveal))
    }

    fn members_in<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
        members: &[String],
        style: RankStyle,
        reveal: bool,
    ) -> (Vec<Entry>, Vec<usize>)
    where
        Records: KeyOf<T>,
    {
        let records = &self.ranking.records;
        let mut found: Vec<(Key<T>, u32)> = Vec::with_capacity(members.len());
        let mut missing = Vec::new();
        for (i, id) in self.ranking.find_all(members).into_iter().enumerate() {
            match id.filter(|&id| self.in_view(id)) {
                Some(id) if reveal || !self.is_hidden(id) => found.push((records.key_of(id), id)),
                _ => missing.push(i),
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
            seeks.extend(chunk.iter().map(|(key, _)| ix.seek(key, records)));
            for (&(key, id), &seek) in chunk.iter().zip(&seeks) {
                let rank = match style {
                    RankStyle::Ordinal => {
                        1 + ix.position_in(seek, id).unwrap_or(0)
                            - self.hidden_before(ix, &key, style)
                    }
                    _ => self.rank_in(ix, id, &key, style),
                };
                let mut entry = self.ranking.entry(id, rank);
                entry.hidden = self.is_hidden(id);
                entries.push(entry);
            }
        }
        (entries, missing)
    }

    /// The rank in `style` a member reaching `scores` now would get in the reader's view.
    pub fn rank_of_scores(&self, scores: &Scores, style: RankStyle) -> u64 {
        debug_assert!(!self.ranking.index_deferred, "read before rebuild_index");
        let shape = &self.ranking.shape;
        let nscore = shape.nscore(scores);
        let many = || Score {
            nscore,
            tail: shape.tail(scores),
        };
        match &self.index {
            Tree::One(ix) => self.rank_of_score_in(ix, Score::of(nscore), style),
            Tree::OneHinted(ix) => self.rank_of_score_in(ix, Score::of(nscore), style),
            Tree::Many(ix) => self.rank_of_score_in(ix, many(), style),
            Tree::ManyHinted(ix) => self.rank_of_score_in(ix, many(), style),
        }
    }

    fn rank_of_score_in<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
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
    fn raw_position<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
        pos: u64,
    ) -> Option<u64>
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
        debug_assert!(!self.ranking.index_deferred, "read before rebuild_index");
        let raw = tree!(&self.index, ix => self.raw_position(ix, pos))?;
        let id = self.index.get(raw)?;
        Some(self.ranking.named_scores(id))
    }

    /// Up to `limit` entries the reader sees, from its 0-based position `offset`, ranked
    /// in `style`.
    pub fn page(&self, offset: u64, limit: usize, style: RankStyle) -> Vec<Entry> {
        debug_assert!(!self.ranking.index_deferred, "read before rebuild_index");
        tree!(&self.index, ix => self.page_in(ix, offset, limit, style))
    }

    fn page_in<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
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
        let from = ix.iter_from(start);
        // One body, two iterators: with nothing hidden (a ranking's own read) the entries
        // are taken as they come, without asking each whether it is hidden.
        if self.set.is_none() {
            self.rows(ix, from.take(limit), offset, limit, style)
        } else {
            let seen = from.filter(|&id| !self.is_hidden(id));
            self.rows(ix, seen.take(limit), offset, limit, style)
        }
    }

    /// The entries of `ids` (the page's, in rank order), the first at the reader's
    /// position `offset`, ranked in `style`.
    fn rows<T: NodeTail, H: LeafHints>(
        &self,
        ix: &RankedIndex<T, H>,
        ids: impl Iterator<Item = u32> + Clone,
        offset: u64,
        limit: usize,
        style: RankStyle,
    ) -> Vec<Entry>
    where
        Records: KeyOf<T>,
    {
        let records = &self.ranking.records;
        let mut out = Vec::with_capacity(limit.min(self.len() as usize));
        let mut prev: Option<(Score<T>, u64)> = None;
        // Neighbours in rank order are strangers in memory: each record is a cache miss, and
        // building an entry is too long for the CPU to start the next one's load on its
        // own. So the records are prefetched BATCH entries ahead of the one being read.
        let mut ahead = ids.clone();
        for id in ahead.by_ref().take(BATCH) {
            records.slab.prefetch(id);
        }
        for (pos, id) in (offset..).zip(ids) {
            if let Some(next) = ahead.next() {
                records.slab.prefetch(next);
            }
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
        debug_assert!(!self.ranking.index_deferred, "read before rebuild_index");
        let id = self.find(member).filter(|&id| !self.is_hidden(id))?;
        let records = &self.ranking.records;
        let pos = tree!(&self.index, ix => {
            let key = records.key_of(id);
            ix.position(id, &key, records)? - self.hidden_before(ix, &key, RankStyle::Ordinal)
        });
        let (start, limit) = window(pos, self.len(), before, after);
        Some(self.page(start, limit, style))
    }
}

/// How many entries of `ix` have score `s`.
fn held<T: NodeTail, H: LeafHints>(ix: &RankedIndex<T, H>, records: &Records, s: Score<T>) -> u64
where
    Records: KeyOf<T>,
{
    ix.count_below(&Key::last_of(s), records) - ix.count_below(&Key::first_of(s), records)
}
