//! The teams as a reader sees them (docs/SPEC.md §17): the teams' index as it is, except
//! in a hidden member's own view, where its team counts its score back in — one team
//! ([`Over`]) seen with another key, which reads as the index without that team and with
//! the team at its new key. Every read here is the one algorithm for both: a position
//! counts the keys before it less the team's public key and plus its seen key; a page
//! walks the index skipping the team and puts it in at its seen position. Each costs what
//! the index's reads do, O(log t + page), and a dense rank O(log t) more.

use super::{clamp, Team, Teams};
use crate::key::{Key, Score};
use crate::ranking::{Entry, RankStyle, Visible};
use crate::scoring::Order;

/// A team as a read returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamEntry {
    /// Rank in the style asked for, from 1.
    pub rank: u64,
    /// The team's key.
    pub team: String,
    /// The sum of its visible members' scores.
    pub score: i64,
    /// Its members the reader sees.
    pub members: u64,
    /// When its sum last changed.
    pub reached_at_us: i64,
}

/// The one team a hidden reader sees otherwise: its own, its score counted in.
#[derive(Debug, Clone, Copy)]
struct Over {
    t: u32,
    key: Key,
    score: i64,
    visible: u32,
    /// The team is in the index (it has a visible member).
    listed: bool,
}

/// The teams as a reader sees them. See the module docs.
#[derive(Debug, Clone)]
pub struct TeamsView<'a> {
    view: Visible<'a>,
    teams: &'a Teams,
    over: Option<Over>,
}

impl<'a> Visible<'a> {
    /// The ranking's teams as this reader sees them, on a ranking of teams: a hidden
    /// reader's team counts its score (its instant the later of the team's and the
    /// member's).
    pub fn teams(&self) -> Option<TeamsView<'a>> {
        let teams = self.ranking.teams.as_deref()?;
        let over = self.own.and_then(|id| {
            let t = teams.of(id)?;
            let (team, public) = (teams.get(t), teams.key(t));
            let record = self.ranking.records.slab.get(id);
            let sum = team.sum + i128::from(self.ranking.scores_at(id).first());
            let score = clamp(sum);
            Some(Over {
                t,
                key: Key {
                    nscore: Order::Desc.normalize(score),
                    tail: (),
                    reached_at_us: public.reached_at_us.max(record.reached_at_us),
                    seq: public.seq,
                },
                score,
                visible: u32::from(team.visible) + 1,
                listed: team.visible > 0,
            })
        });
        Some(TeamsView {
            view: self.clone(),
            teams,
            over,
        })
    }
}

impl<'a> TeamsView<'a> {
    /// Teams the reader sees.
    pub fn len(&self) -> u64 {
        let extra = self.over.is_some_and(|o| !o.listed);
        self.teams.index.len() + u64::from(extra)
    }

    /// Whether the reader sees no team.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Teams the reader sees whose key is below `probe`.
    fn before(&self, probe: &Key) -> u64 {
        let ix = &self.teams.index;
        let n = ix.count_below(probe, &self.teams.keys);
        match self.over {
            None => n,
            Some(o) => {
                let public = o.listed && self.teams.key(o.t) < *probe;
                n - u64::from(public) + u64::from(o.key < *probe)
            }
        }
    }

    /// Teams in the index whose score is `nscore`.
    fn held(&self, nscore: i64) -> u64 {
        let ix = &self.teams.index;
        let last = Key {
            nscore,
            tail: (),
            reached_at_us: i64::MAX,
            seq: u64::MAX,
        };
        ix.count_below(&last, &self.teams.keys)
            - ix.count_below(&Key::first_of_score(nscore), &self.teams.keys)
    }

    /// Distinct scores the reader sees below `nscore`.
    fn distinct_before(&self, nscore: i64) -> u64 {
        let ix = &self.teams.index;
        let n = ix.distinct_below(Score::of(nscore), &self.teams.keys);
        let Some(o) = self.over else {
            return n;
        };
        let public = self.teams.key(o.t).nscore;
        let gone = o.listed && public < nscore && self.held(public) == 1;
        let others = self.held(o.key.nscore) - u64::from(o.listed && public == o.key.nscore);
        let new = o.key.nscore < nscore && others == 0;
        n - u64::from(gone) + u64::from(new)
    }

    /// Team `t`'s key as the reader sees it.
    fn key(&self, t: u32) -> Key {
        match self.over {
            Some(o) if o.t == t => o.key,
            _ => self.teams.key(t),
        }
    }

    /// The rank in `style` of the team whose seen key is `key`.
    fn rank(&self, key: &Key, style: RankStyle) -> u64 {
        1 + match style {
            RankStyle::Ordinal => self.before(key),
            RankStyle::Competition => self.before(&Key::first_of_score(key.nscore)),
            RankStyle::Dense => self.distinct_before(key.nscore),
        }
    }

    fn entry(&self, t: u32, rank: u64) -> TeamEntry {
        let team: &Team = self.teams.get(t);
        let (score, members, reached_at_us) = match self.over {
            Some(o) if o.t == t => (o.score, o.visible, o.key.reached_at_us),
            _ => (
                team.score(),
                u32::from(team.visible),
                self.teams.key(t).reached_at_us,
            ),
        };
        TeamEntry {
            rank,
            team: team.name.to_string(),
            score,
            members: u64::from(members),
            reached_at_us,
        }
    }

    /// Whether the reader sees team `t`.
    fn shows(&self, t: u32) -> bool {
        self.teams.get(t).visible > 0 || self.over.is_some_and(|o| o.t == t)
    }

    /// Team `team` as the reader sees it, ranked in `style`.
    pub fn team(&self, team: &str, style: RankStyle) -> Option<TeamEntry> {
        let t = self.teams.find(team).filter(|&t| self.shows(t))?;
        Some(self.entry(t, self.rank(&self.key(t), style)))
    }

    /// The ids of up to `limit` teams from position `offset`, in order.
    fn ids(&self, offset: u64, limit: usize) -> Vec<u32> {
        let ix = &self.teams.index;
        let Some(o) = self.over else {
            return ix.iter_from(offset).take(limit).collect();
        };
        // Where the team goes among the others, and where the walk of the index starts.
        let q = self.before(&o.key);
        let mut from = if offset <= q { offset } else { offset - 1 };
        if o.listed {
            let at = ix.position(o.t, &self.teams.key(o.t), &self.teams.keys);
            from += u64::from(at.is_some_and(|at| at <= from));
        }
        let mut others = ix.iter_from(from).filter(|&t| t != o.t);
        let mut out = Vec::with_capacity(limit.min(1024));
        let mut at = offset;
        while out.len() < limit && at < self.len() {
            let next = if at == q { Some(o.t) } else { others.next() };
            let Some(t) = next else { break };
            out.push(t);
            at += 1;
        }
        out
    }

    /// Up to `limit` teams from position `offset` (0-based), ranked in `style`: the
    /// first row's rank from the index, each next one from the row before it.
    pub fn page(&self, offset: u64, limit: usize, style: RankStyle) -> Vec<TeamEntry> {
        let mut out: Vec<TeamEntry> = Vec::new();
        let mut prev: Option<(i64, u64)> = None;
        for (i, t) in self.ids(offset, limit).into_iter().enumerate() {
            let key = self.key(t);
            let position = offset + i as u64;
            let rank = match (style, prev) {
                (RankStyle::Ordinal, _) => position + 1,
                (_, None) => self.rank(&key, style),
                (_, Some((nscore, rank))) if nscore == key.nscore => rank,
                (RankStyle::Competition, _) => position + 1,
                (_, Some((_, rank))) => rank + 1,
            };
            prev = Some((key.nscore, rank));
            out.push(self.entry(t, rank));
        }
        out
    }

    /// The members of team `team` the reader sees, ranked among themselves in `style`,
    /// up to `limit` from position `offset` (its members' contributions). O(S log S)
    /// for a team of S members.
    pub fn contributions(
        &self,
        team: &str,
        offset: u64,
        limit: usize,
        style: RankStyle,
    ) -> Vec<Entry> {
        let Some(t) = self.teams.find(team) else {
            return Vec::new();
        };
        let ranking = self.view.ranking;
        let names: Vec<String> = self
            .teams
            .get(t)
            .members
            .iter()
            .map(|&id| String::from_utf8_lossy(ranking.records.name(id)).into_owned())
            .collect();
        let seen = self.view.shown(names.iter().map(String::as_str).collect());
        let mut rows = ranking.rank_among(&seen, style);
        let from = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(rows.len());
        rows.drain(..from);
        rows.truncate(limit);
        rows
    }
}
