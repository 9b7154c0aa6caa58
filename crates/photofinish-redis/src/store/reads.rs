//! Reads of one board-period (member, page, around) and removing a member: the period is
//! resolved with the board's window here, then one script answers.

use photofinish_core::view::Rows;
use photofinish_core::{BoardError, Entry, PeriodRef, RankStyle};

use super::{common_status, Attempt, RedisStore};
use crate::layout;
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

impl RedisStore {
    /// Runs the read script in `mode` and turns its rows into entries.
    pub(super) async fn read(
        &self,
        board: &str,
        r: &PeriodRef,
        style: RankStyle,
        mode: ReadMode<'_>,
    ) -> Result<Rows, BoardError> {
        let keys = self.keys(board);
        let now = self.now_us();
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
                let total = reply.count(1)?;
                let start = reply.count(2)?;
                let first_rank = reply.count(3)?;
                let mut entries = Vec::new();
                let mut prev: Option<(i64, u64)> = None;
                for row in reply.rows(4, 3)? {
                    let at = 4 + row * 3;
                    let e = reply.entry(at)?;
                    let score = e.score;
                    let pos = start + row as u64;
                    let rank = prev.map_or(first_rank, |p| next_rank(style, p, score, pos));
                    prev = Some((score, rank));
                    entries.push(Entry {
                        rank,
                        member: e.name.to_owned(),
                        score,
                        reached_at_us: layout::reached_of(e.tiebreak, cached.config.order)
                            .ok_or_else(|| reply.malformed(at, "has no reached_at"))?,
                        metadata: reply.opt_text(at + 2)?,
                    });
                }
                Ok(Attempt::Done(Rows {
                    total,
                    period,
                    entries,
                }))
            }
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
