//! The read operations (docs/SPEC.md §2, §10): a member, several members, the rank a score
//! would have, thresholds, pages and windows — each a read of the board's state as the
//! engine holds it, after the engine made it fresh enough ([`Engine::board`]).

use photofinish_core::query::{MemberSet, ScoreRank, ThresholdQuery, Thresholds};
use photofinish_core::view::{MemberRow, ReadOptions, Rows};
use photofinish_core::{Around, BoardError, PeriodRef, Ranking};

use super::{with_period, Engine};

/// `Leaderboard::member`.
pub async fn member<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    member: &str,
    read: &ReadOptions,
) -> Result<MemberRow, BoardError> {
    with_period(e, board, &read.period, |period, ranking| {
        let entry = ranking.and_then(|r| r.member_ranked(member, read.ranking));
        let ((entry, ordinal), ranking) = entry
            .zip(ranking)
            .ok_or_else(|| BoardError::member_not_found(board, member, &period.id))?;
        Ok(MemberRow {
            entry,
            ordinal,
            total: ranking.len(),
            period,
        })
    })
    .await
}

/// `Leaderboard::members`.
pub async fn members<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    members: &[String],
    read: &ReadOptions,
) -> Result<MemberSet, BoardError> {
    with_period(e, board, &read.period, |period, ranking| {
        let Some(r) = ranking else {
            return Ok(MemberSet {
                total: 0,
                period,
                entries: Vec::new(),
                missing: members.to_vec(),
            });
        };
        let (entries, missing) = r.members_of(members, read.ranking);
        Ok(MemberSet {
            total: r.len(),
            period,
            entries,
            missing: missing.into_iter().map(|i| members[i].clone()).collect(),
        })
    })
    .await
}

/// `Leaderboard::rank_of_score`.
pub async fn rank_of_score<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    score: i64,
    read: &ReadOptions,
) -> Result<ScoreRank, BoardError> {
    with_period(e, board, &read.period, |period, ranking| {
        Ok(ScoreRank {
            score,
            rank: ranking.map_or(1, |r| r.rank_of_score(score, read.ranking)),
            total: ranking.map_or(0, Ranking::len),
            period,
        })
    })
    .await
}

/// `Leaderboard::thresholds`.
pub async fn thresholds<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    query: &ThresholdQuery,
    period: &PeriodRef,
) -> Result<Thresholds, BoardError> {
    with_period(e, board, period, |period, ranking| {
        let total = ranking.map_or(0, Ranking::len);
        let at = query
            .ordinal_ranks(total)
            .into_iter()
            .map(|rank| {
                ranking
                    .zip(rank.checked_sub(1))
                    .and_then(|(r, pos)| r.at(pos))
            })
            .collect();
        Ok(Thresholds {
            total,
            period,
            thresholds: query.answer(total, at),
        })
    })
    .await
}

/// `Leaderboard::page`.
pub async fn page<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    offset: u64,
    limit: u64,
    read: &ReadOptions,
) -> Result<Rows, BoardError> {
    with_period(e, board, &read.period, |period, ranking| {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Ok(Rows {
            total: ranking.map_or(0, Ranking::len),
            entries: ranking.map_or_else(Vec::new, |r| r.page(offset, limit, read.ranking)),
            period,
        })
    })
    .await
}

/// `Leaderboard::around`.
pub async fn around<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    member: &str,
    window: Around,
    read: &ReadOptions,
) -> Result<Rows, BoardError> {
    with_period(e, board, &read.period, |period, ranking| {
        let rows = ranking.and_then(|r| {
            r.around(member, window.before, window.after, read.ranking)
                .map(|entries| (entries, r.len()))
        });
        let (entries, total) =
            rows.ok_or_else(|| BoardError::member_not_found(board, member, &period.id))?;
        Ok(Rows {
            total,
            period,
            entries,
        })
    })
    .await
}
