//! Reads of one board-period (member, page, around, a set of members, the rank of a
//! score, thresholds) and removing a member: the period is
//! resolved with the board's window here, then one script answers.

use photofinish_core::query::{MemberSet, ScoreRank, ThresholdQuery, Thresholds};
use photofinish_core::view::{ReadOptions, Rows};
use photofinish_core::{BoardError, Entry, Period, PeriodRef, RankStyle};

use super::{common_status, Attempt, CachedBoard, RedisStore};
use crate::layout;
use crate::reply::Reply;
use crate::scripts::read::{self, ReadMode};
use crate::scripts::status;

/// The rank of the row after one at `(score, rank)`, at 0-based position `pos`: the same
/// rule as the engine's pages (a row with the previous row's score shares its rank).
fn next_rank(style: RankStyle, prev: (i64, u64), score: i64, pos: u64) -> u64 {
    let (prev_score, prev_rank) = prev;
    match style {
        RankStyle::Ordinal => pos + 1,
        _ if prev_score == score => prev_rank,
        RankStyle::Competition => pos + 1,
        RankStyle::Dense => prev_rank + 1,
    }
}

/// The entry of the row whose ranking member is field `at` (score at `at + 1`,
/// metadata at `at + 2`), ranked by `rank` of its score.
fn entry_at(
    reply: &Reply,
    at: usize,
    cached: &CachedBoard,
    rank: impl FnOnce(i64) -> u64,
) -> Result<Entry, BoardError> {
    let e = reply.entry(at)?;
    Ok(Entry {
        rank: rank(e.score),
        member: e.name.to_owned(),
        score: e.score,
        reached_at_us: layout::reached_of(e.tiebreak, cached.config.order)
            .ok_or_else(|| reply.malformed(at, "has no reached_at"))?,
        metadata: reply.opt_text(at + 2)?,
    })
}

impl RedisStore {
    /// Runs the read script in `mode` on the period `r` names and hands its `ok` reply to
    /// `parse` (with the period and the board's cache); the script's refusals become errors.
    async fn read_with<T>(
        &self,
        board: &str,
        r: &PeriodRef,
        style: RankStyle,
        mode: ReadMode<'_>,
        parse: impl Fn(&Reply, Period, &CachedBoard) -> Result<T, BoardError>,
    ) -> Result<T, BoardError> {
        let keys = self.keys(board);
        let now = self.now_us();
        let parse = &parse;
        self.with_board(board, |cached| {
            let keys = keys.clone();
            async move {
                let resolved = cached.window.resolve(r, now)?;
                let target = cached.target(&keys, &resolved);
                let reply = self
                    .run("read", &read::read(&target, cached.desc(), style, mode))
                    .await?;
                let period = resolved.period;
                match reply.status()? {
                    status::PERIOD_NOT_FOUND => return Err(BoardError::PeriodNotFound(period.id)),
                    status::MEMBER_NOT_FOUND => {
                        let member = mode.member().unwrap_or_default();
                        return Err(BoardError::member_not_found(board, member, &period.id));
                    }
                    _ => {}
                }
                if let Some(a) = common_status(&reply)? {
                    return Ok(a);
                }
                parse(&reply, period, &cached).map(Attempt::Done)
            }
        })
        .await
    }

    /// Runs the read script in `mode` and turns its rows into entries; with the 0-based
    /// position of the first.
    pub(super) async fn read(
        &self,
        board: &str,
        r: &PeriodRef,
        style: RankStyle,
        mode: ReadMode<'_>,
    ) -> Result<(Rows, u64), BoardError> {
        self.read_with(board, r, style, mode, |reply, period, cached| {
            let total = reply.count(1)?;
            let start = reply.count(2)?;
            let first_rank = reply.count(3)?;
            let mut entries = Vec::new();
            let mut prev: Option<(i64, u64)> = None;
            for row in reply.rows(4, 3)? {
                let at = 4 + row * 3;
                let pos = start + row as u64;
                let e = entry_at(reply, at, cached, |score| {
                    prev.map_or(first_rank, |p| next_rank(style, p, score, pos))
                })?;
                prev = Some((e.score, e.rank));
                entries.push(e);
            }
            let rows = Rows {
                total,
                period,
                entries,
            };
            Ok((rows, start))
        })
        .await
    }

    /// The entries of `members` in one period, in rank order, and those it lacks.
    pub(super) async fn query_members(
        &self,
        board: &str,
        members: &[String],
        read: &ReadOptions,
    ) -> Result<MemberSet, BoardError> {
        let mode = ReadMode::Query(members);
        self.read_with(
            board,
            &read.period,
            read.ranking,
            mode,
            |reply, period, cached| {
                let total = reply.count(1)?;
                let mut found: Vec<(u64, Entry)> = Vec::new();
                let mut present = vec![false; members.len()];
                for row in reply.rows(2, 6)? {
                    let at = 2 + row * 6;
                    let index = reply.count(at)? as usize;
                    let asked = index
                        .checked_sub(1)
                        .and_then(|i| present.get_mut(i))
                        .ok_or_else(|| reply.malformed(at, "names no member asked"))?;
                    *asked = true;
                    let rank = reply.count(at + 2)?;
                    found.push((
                        reply.count(at + 1)?,
                        entry_at(reply, at + 3, cached, |_| rank)?,
                    ));
                }
                found.sort_unstable_by_key(|(pos, _)| *pos);
                let missing = members
                    .iter()
                    .zip(present)
                    .filter(|(_, p)| !p)
                    .map(|(m, _)| m.clone())
                    .collect();
                Ok(MemberSet {
                    total,
                    period,
                    entries: found.into_iter().map(|(_, e)| e).collect(),
                    missing,
                })
            },
        )
        .await
    }

    /// The rank a member reaching `score` now would get.
    pub(super) async fn score_rank(
        &self,
        board: &str,
        score: i64,
        read: &ReadOptions,
    ) -> Result<ScoreRank, BoardError> {
        let mode = ReadMode::RankOf(score);
        self.read_with(
            board,
            &read.period,
            read.ranking,
            mode,
            |reply, period, _| {
                Ok(ScoreRank {
                    score,
                    rank: reply.count(2)?,
                    total: reply.count(1)?,
                    period,
                })
            },
        )
        .await
    }

    /// The entries at the ordinal ranks `query` names, read by one script.
    pub(super) async fn tiers(
        &self,
        board: &str,
        query: &ThresholdQuery,
        r: &PeriodRef,
    ) -> Result<Thresholds, BoardError> {
        let mode = ReadMode::Tiers(query);
        self.read_with(board, r, RankStyle::Ordinal, mode, |reply, period, _| {
            let total = reply.count(1)?;
            let ranks = query.ordinal_ranks(total);
            if reply.rows(2, 3)?.len() != ranks.len() {
                return Err(reply.malformed(2, "does not hold one row per threshold"));
            }
            let mut at_rank = Vec::with_capacity(ranks.len());
            for (i, rank) in ranks.iter().enumerate() {
                let at = 2 + i * 3;
                // The script ranks percentages by the same rule; a difference is a bug.
                if reply.count(at)? != (*rank).min(read::MAX_EXACT_OFFSET) {
                    return Err(reply.malformed(at, "is not the rank asked for"));
                }
                at_rank.push(match reply.opt_bytes(at + 1)? {
                    None => None,
                    Some(_) => {
                        let e = reply.entry(at + 1)?;
                        Some((e.name.to_owned(), e.score))
                    }
                });
            }
            Ok(Thresholds {
                total,
                period,
                thresholds: query.answer(total, at_rank),
            })
        })
        .await
    }

    /// Removes a member from a period.
    pub(super) async fn remove_member(
        &self,
        board: &str,
        member: &str,
        r: &PeriodRef,
    ) -> Result<(), BoardError> {
        let keys = self.keys(board);
        let now = self.now_us();
        self.with_board(board, |cached| {
            let keys = keys.clone();
            async move {
                let resolved = cached.window.resolve(r, now)?;
                let target = cached.target(&keys, &resolved);
                let reply = self.run("remove", &read::remove(&target, member)).await?;
                let period = resolved.period;
                match reply.status()? {
                    status::PERIOD_NOT_FOUND => Err(BoardError::PeriodNotFound(period.id)),
                    status::MEMBER_NOT_FOUND => {
                        Err(BoardError::member_not_found(board, member, &period.id))
                    }
                    _ => Ok(common_status(&reply)?.unwrap_or(Attempt::Done(()))),
                }
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::next_rank;
    use photofinish_core::RankStyle;

    #[test]
    fn later_rows_rank_from_their_predecessor() {
        // Scores 9, 9, 7 from position 0: 1,2,3 / 1,1,3 / 1,1,2.
        assert_eq!(next_rank(RankStyle::Ordinal, (9, 1), 9, 1), 2);
        assert_eq!(next_rank(RankStyle::Competition, (9, 1), 9, 1), 1);
        assert_eq!(next_rank(RankStyle::Competition, (9, 1), 7, 2), 3);
        assert_eq!(next_rank(RankStyle::Dense, (9, 1), 9, 1), 1);
        assert_eq!(next_rank(RankStyle::Dense, (9, 1), 7, 2), 2);
    }
}
