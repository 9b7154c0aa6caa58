//! What the reads start from: the period a reader names with its ranking as the reader
//! sees it ([`in_period`]: hidden members left out but for the reader's own), and a page
//! of a list ([`page`]). Every read of [`super::read`], [`super::cohort`],
//! [`super::league`] and [`super::moderation`] takes them from here.

use crate::access::Viewer;
use crate::board::{Board, PeriodRef};
use crate::calendar::Period;
use crate::error::BoardError;
use crate::names::GroupKey;
use crate::ranking::Visible;
use crate::view::ReadOptions;

/// Runs `f` on the period `r` names and its ranking (if it has one) as `viewer` sees it
/// ([`Ranking::view`]); see [`Board::read`] for which periods a reader sees.
pub(crate) fn in_period<T>(
    b: &Board,
    r: &PeriodRef,
    now_us: i64,
    viewer: &Viewer,
    f: impl FnOnce(Period, Option<Visible<'_>>) -> Result<T, BoardError>,
) -> Result<T, BoardError> {
    in_period_seen_by(b, r, now_us, viewer.own(), f)
}

/// [`in_period`] as member `own` sees it (itself as if visible), or anyone else.
pub(crate) fn in_period_seen_by<T>(
    b: &Board,
    r: &PeriodRef,
    now_us: i64,
    own: Option<&str>,
    f: impl FnOnce(Period, Option<Visible<'_>>) -> Result<T, BoardError>,
) -> Result<T, BoardError> {
    in_partition(b, r, None, now_us, own, f)
}

/// [`in_period_seen_by`] of partition `partition` alone when it names one (docs/SPEC.md
/// §17): a board without partitions refuses it.
pub(crate) fn in_partition<T>(
    b: &Board,
    r: &PeriodRef,
    partition: Option<&GroupKey>,
    now_us: i64,
    own: Option<&str>,
    f: impl FnOnce(Period, Option<Visible<'_>>) -> Result<T, BoardError>,
) -> Result<T, BoardError> {
    let partition = partition_of(b, partition)?;
    let (period, ranking) = b.read(r, now_us)?;
    f(period, ranking.map(|r| r.view_in(own, partition)))
}

/// The partition a read names, refused on a board without partitions.
pub(crate) fn partition_of<'a>(
    b: &Board,
    partition: Option<&'a GroupKey>,
) -> Result<Option<&'a str>, BoardError> {
    if partition.is_some() {
        require_partitions(b)?;
    }
    Ok(partition.map(GroupKey::as_str))
}

/// Refuses a read of partitions on a board without them (docs/SPEC.md §17).
pub(crate) fn require_partitions(b: &Board) -> Result<(), BoardError> {
    crate::groups::require_partitions(b.config())
}

/// Refuses a partition on a read that has none (a cohort's, a league's: docs/SPEC.md
/// §17).
pub(crate) fn no_partition(options: &ReadOptions) -> Result<(), BoardError> {
    match options.partition {
        Some(_) => Err(BoardError::InvalidParameter(
            "partition: a cohort's standings are not read by partition".into(),
        )),
        None => Ok(()),
    }
}

/// Up to `limit` items of `all` from 0-based `offset` (only those are taken from it).
pub(crate) fn page<T>(all: impl IntoIterator<Item = T>, offset: u64, limit: u64) -> Vec<T> {
    let from = usize::try_from(offset).unwrap_or(usize::MAX);
    let take = usize::try_from(limit).unwrap_or(usize::MAX);
    all.into_iter().skip(from).take(take).collect()
}
