//! What a period-close post carries (docs/SPEC.md §10, §14, §16, §17, docs/webhooks.md):
//! a period's top entries, its top teams and its grants; on a cohort board, one post a
//! cohort with its standings and its league's moves — each read through the service as
//! a reader would, and shaped here.

use std::collections::HashMap;
use std::sync::Arc;

use photofinish_core::hook::HookState;
use photofinish_core::op::{ReadCohortPage, ReadMoves, ReadPage, ReadPeriodRewards, ReadTeams};
use photofinish_core::view::ReadOptions;
use photofinish_core::{BoardError, BoardName, Leaderboard, Period, PeriodRef, RankStyle, RunRead};
use serde::Serialize;
use utoipa::ToSchema;

use crate::wire::parse::rfc3339_us;
use crate::wire::types::{EntryView, GrantView, MoveView, TeamEntryView};
use crate::wire::views::{cohort_view, grant_view, move_view, page_view, team_entry_view};

/// What a period-close post carries (its JSON body).
#[derive(Debug, Serialize, ToSchema)]
pub struct PeriodClosed {
    /// The board.
    pub board: String,
    /// The period that closed.
    pub period: String,
    /// Its first instant (RFC 3339, µs).
    pub starts_at: String,
    /// The first instant after it.
    pub ends_at: String,
    /// Members in the period.
    pub total: u64,
    /// Its top entries (up to the board's `webhook_top`), ordinal ranks.
    pub entries: Vec<EntryView>,
    /// Its top teams (up to the board's `webhook_top`), ordinal ranks, on a board of
    /// teams (docs/SPEC.md §17).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub teams: Option<Vec<TeamEntryView>>,
    /// Its grants, every one (docs/SPEC.md §16; empty on a board without reward rows).
    pub grants: Vec<GrantView>,
}

/// Cohorts read at once when posting a cohort board's period.
pub(super) const COHORTS_PER_READ: u64 = 1_000;

/// What a cohort board's period-close post carries, once per cohort (docs/SPEC.md §14).
#[derive(Debug, Serialize, ToSchema)]
pub struct CohortClosed {
    /// The board.
    pub board: String,
    /// The period that closed.
    pub period: String,
    /// Its first instant (RFC 3339, µs).
    pub starts_at: String,
    /// The first instant after it.
    pub ends_at: String,
    /// The cohort's tier (null without a league).
    pub tier: Option<String>,
    /// The cohort, from 1.
    pub cohort: u32,
    /// Its members that played.
    pub total: u64,
    /// All of them, ordinal cohort ranks.
    pub entries: Vec<EntryView>,
    /// Its members whose tier changed at the close (empty without a league).
    pub moves: Vec<MoveView>,
    /// Its grants (docs/SPEC.md §16; empty on a board without reward rows).
    pub grants: Vec<GrantView>,
}

/// A period's grants by cohort (`None` off a cohort board): (tier name, cohort) → its
/// grants.
type CohortGrants = HashMap<Option<(Option<String>, u32)>, Vec<GrantView>>;

/// Every grant of `period`, by cohort.
pub(super) async fn period_grants(
    service: &Arc<dyn Leaderboard>,
    board: &str,
    period: &Period,
) -> Result<CohortGrants, String> {
    let op = ReadPeriodRewards {
        board: BoardName::parse(board).map_err(|e| e.to_string())?,
        period: PeriodRef::Id(period.id.clone()),
        offset: 0,
        limit: u64::MAX,
    };
    let mut by_cohort = CohortGrants::new();
    match service.read(&op).await {
        Ok(r) => {
            for g in r.grants {
                let at = g.grant.cohort.clone();
                by_cohort.entry(at).or_default().push(grant_view(g));
            }
            Ok(by_cohort)
        }
        Err(BoardError::PeriodNotFound(_)) => Ok(by_cohort),
        Err(e) => Err(format!("cannot read the period's grants: {e}")),
    }
}

/// A period's moves by cohort: (tier name, cohort) → its moves.
type CohortMoves = HashMap<(String, u32), Vec<MoveView>>;

/// Every move of `period` on a league board, by cohort (none without a league).
pub(super) async fn all_moves(
    service: &Arc<dyn Leaderboard>,
    board: &str,
    period: &Period,
) -> Result<CohortMoves, String> {
    let op = ReadMoves {
        board: BoardName::parse(board).map_err(|e| e.to_string())?,
        period: PeriodRef::Id(period.id.clone()),
        offset: 0,
        limit: u64::MAX,
    };
    let mut by_cohort = CohortMoves::new();
    match service.read(&op).await {
        Ok(m) => {
            for m in m.moves {
                by_cohort
                    .entry((m.from.clone(), m.cohort))
                    .or_default()
                    .push(move_view(m));
            }
            Ok(by_cohort)
        }
        Err(BoardError::InvalidParameter(_) | BoardError::PeriodNotFound(_)) => Ok(by_cohort),
        Err(e) => Err(format!("cannot read the period's moves: {e}")),
    }
}

/// One cohort's post: its whole standings and its moves.
pub(super) async fn cohort_body(
    service: &Arc<dyn Leaderboard>,
    h: &HookState,
    period: &Period,
    size: u32,
    tier: Option<String>,
    cohort: u32,
    moves: &mut CohortMoves,
) -> Result<CohortClosed, String> {
    let op = ReadCohortPage {
        board: BoardName::parse(&h.board).map_err(|e| e.to_string())?,
        cohort,
        tier: tier.clone(),
        offset: 0,
        limit: u64::from(size),
        options: ReadOptions {
            period: PeriodRef::Id(period.id.clone()),
            ..ReadOptions::default()
        },
    };
    let rows = service
        .read(&op)
        .await
        .map_err(|e| format!("cannot read cohort {cohort}: {e}"))?;
    let moves = moves
        .remove(&(tier.unwrap_or_default(), cohort))
        .unwrap_or_default();
    let view = cohort_view(&h.board, rows);
    Ok(CohortClosed {
        board: view.board,
        period: view.period,
        starts_at: rfc3339_us(period.start_us),
        ends_at: rfc3339_us(period.end_us),
        tier: view.tier,
        cohort: view.cohort,
        total: view.total,
        entries: view.entries,
        moves,
        grants: Vec::new(),
    })
}

/// The post of `period`: its top `top` entries (none when nobody wrote in it), and its
/// top teams on a board of `teams`.
pub(super) async fn body(
    service: &Arc<dyn Leaderboard>,
    board: &str,
    (top, teams): (u32, bool),
    period: &Period,
) -> Result<PeriodClosed, BoardError> {
    let op = ReadPage {
        board: BoardName::parse(board)?,
        offset: 0,
        limit: u64::from(top),
        options: ReadOptions {
            period: PeriodRef::Id(period.id.clone()),
            ..ReadOptions::default()
        },
    };
    let (total, entries) = match service.read(&op).await {
        Ok(rows) => {
            let page = page_view(rows);
            (page.total, page.entries)
        }
        Err(BoardError::PeriodNotFound(_)) => (0, Vec::new()),
        Err(e) => return Err(e),
    };
    let teams = match teams {
        false => None,
        true => Some(top_teams(service, board, top, period).await?),
    };
    Ok(PeriodClosed {
        board: board.to_owned(),
        period: period.id.clone(),
        starts_at: rfc3339_us(period.start_us),
        ends_at: rfc3339_us(period.end_us),
        total,
        entries,
        teams,
        grants: Vec::new(),
    })
}

/// The top `top` teams of `period` (none when nobody wrote in it).
async fn top_teams(
    service: &Arc<dyn Leaderboard>,
    board: &str,
    top: u32,
    period: &Period,
) -> Result<Vec<TeamEntryView>, BoardError> {
    let op = ReadTeams {
        board: BoardName::parse(board)?,
        period: PeriodRef::Id(period.id.clone()),
        offset: 0,
        limit: u64::from(top),
        style: RankStyle::Ordinal,
    };
    match service.read(&op).await {
        Ok(list) => Ok(list.entries.into_iter().map(team_entry_view).collect()),
        Err(BoardError::PeriodNotFound(_)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}
