//! What the reads start from: the period a reader names with its ranking as the reader
//! sees it ([`in_period`]: hidden members left out but for the reader's own), and a page
//! of a list ([`page`]). Every read of [`super::read`], [`super::cohort`],
//! [`super::league`] and [`super::moderation`] takes them from here.

use crate::access::Viewer;
use crate::board::{Board, PeriodRef};
use crate::calendar::Period;
use crate::error::BoardError;
use crate::ranking::Visible;

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
    let (period, ranking) = b.read(r, now_us)?;
    f(period, ranking.map(|r| r.view(own)))
}

/// Up to `limit` items of `all` from 0-based `offset` (only those are taken from it).
pub(crate) fn page<T>(all: impl IntoIterator<Item = T>, offset: u64, limit: u64) -> Vec<T> {
    let from = usize::try_from(offset).unwrap_or(usize::MAX);
    let take = usize::try_from(limit).unwrap_or(usize::MAX);
    all.into_iter().skip(from).take(take).collect()
}
