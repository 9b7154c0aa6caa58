//! The answers in their wire shapes ([`super::types`]): a board as a caller may see it,
//! entries, pages, a members query, thresholds and a member across boards — what HTTP
//! answers as JSON and RESP as nested maps, built in one place.

use photofinish_core::access::Caller;
use photofinish_core::query::{top_percent, MemberSet, Percent, Thresholds};
use photofinish_core::ranking::Entry;
use photofinish_core::view::{BoardState, CohortList, CohortRows, MemberRow, MoveRow, Rows};
use serde_json::value::RawValue;

use super::parse::rfc3339_us;
use super::types::{
    AuditEntryView, BoardExportView, BoardView, CohortListView, CohortSummary, CohortView,
    ColumnView, EntriesPage, EntryView, GrantView, LeagueView, MemberBoardsView, MemberExportView,
    MemberView, MembersQueryView, MoveView, PartitionsView, PeriodExportView, RewardRowView,
    ScoresView, TeamEntryView, TeamsView, ThresholdView, ThresholdsView,
};
use photofinish_core::columns::ColumnNames;
use photofinish_core::rewards::{GrantState, RewardRow};

/// The API view of a board, as `caller` may see it: the webhook's URL only to whoever
/// may manage the board (it may name hosts inside the studio's network).
pub fn board_view(b: BoardState, caller: &Caller) -> BoardView {
    let c = b.config;
    let columns = column_views(&c);
    let webhook_top = c.settings.webhook_top();
    let webhook = c
        .settings
        .webhook
        .filter(|_| photofinish_core::access::may_manage(caller, &b.name));
    BoardView {
        name: b.name,
        order: c.order.as_str().into(),
        update: c.update.as_str().into(),
        columns,
        reset: c.reset.as_str().into(),
        timezone: c.timezone,
        week_start: c.week_start.as_str().into(),
        retention: c.retention,
        public_read: c.settings.public_read,
        player_writes: c.settings.player_writes,
        min_score: c.settings.rules.min_score,
        max_score: c.settings.rules.max_score,
        max_increment: c.settings.rules.max_increment,
        max_members: c.settings.rules.max_members,
        grace: c.settings.grace,
        cohort_size: c.cohort_size,
        league: c.league.map(|l| LeagueView {
            tiers: l.tiers,
            promote: l.promote,
            demote: l.demote,
        }),
        partitions: c.partitions.map(|p| PartitionsView { max: p.max }),
        teams: c.teams.map(|t| TeamsView {
            max_size: t.max_size,
        }),
        opens_at: c.settings.entry.opens_at.map(rfc3339_us),
        closes_at: c.settings.entry.closes_at.map(rfc3339_us),
        max_attempts: c.settings.entry.max_attempts,
        join_required: c.settings.entry.join_required,
        reward_ttl: (!c.settings.rewards.is_empty()).then(|| {
            c.settings
                .reward_ttl
                .unwrap_or(photofinish_core::rewards::DEFAULT_REWARD_TTL_S)
        }),
        rewards: (!c.settings.rewards.is_empty()).then(|| reward_row_views(&c.settings.rewards)),
        webhook_top,
        webhook,
        members: b.members,
        next_reset_at: (b.current.end_us != i64::MAX).then(|| rfc3339_us(b.current.end_us)),
        period: b.current.id,
    }
}

/// A board's reward rows as the API shows them.
pub fn reward_row_views(rows: &[RewardRow]) -> Vec<RewardRowView> {
    rows.iter()
        .map(|r| RewardRowView {
            from: r.from,
            to: r.to,
            top_percent: r.top_hundredths.map(|h| f64::from(h) / 100.0),
            reward: r.reward.clone(),
            amount: Some(r.amount),
            tier: r.tier.clone(),
        })
        .collect()
}

/// A grant as the API shows it.
pub fn grant_view(g: GrantState) -> GrantView {
    GrantView {
        id: g.id,
        board: g.board,
        period: g.period,
        member: g.grant.member,
        rank: g.grant.rank,
        reward: g.grant.reward,
        amount: g.grant.amount,
        granted_at: rfc3339_us(g.grant.granted_at_us),
        expires_at: rfc3339_us(g.grant.expires_at_us),
        claimed_at: g.grant.claimed_at_us.map(rfc3339_us),
        claimed_by: g.grant.claimed_by,
    }
}

/// A config's columns as it says them, with the direction and rule each has in force;
/// `None` when the config names none.
fn column_views(c: &photofinish_core::BoardConfig) -> Option<Vec<ColumnView>> {
    if c.columns.is_empty() {
        return None;
    }
    let best = c.update == photofinish_core::Op::Best;
    let default_update = if c.update == photofinish_core::Op::Set {
        photofinish_core::Update::Set
    } else {
        photofinish_core::Update::Incr
    };
    Some(
        c.columns
            .iter()
            .map(|col| ColumnView {
                name: col.name.clone(),
                order: col.order.unwrap_or(c.order).as_str().into(),
                update: (!best).then(|| col.update.unwrap_or(default_update).as_str().into()),
                min: col.min,
                max: col.max,
                max_increment: col.max_increment,
            })
            .collect(),
    )
}

/// Stored metadata (always a serialized JSON object) as raw JSON.
pub fn raw_metadata(m: Option<String>) -> Option<Box<RawValue>> {
    m.and_then(|s| RawValue::from_string(s).ok())
}

/// The API view of a ranked entry on a board of `columns`.
pub fn entry_view(e: Entry, columns: &ColumnNames) -> EntryView {
    EntryView {
        rank: e.rank,
        score: e.score(),
        scores: ScoresView::of(columns, &e.scores),
        member: e.member,
        reached_at: rfc3339_us(e.reached_at_us),
        metadata: raw_metadata(e.metadata),
        hidden: e.hidden,
        partition: e.partition,
        team: e.team,
    }
}

/// The API view of a ranked team (docs/SPEC.md §17).
pub fn team_entry_view(t: photofinish_core::ranking::TeamEntry) -> TeamEntryView {
    TeamEntryView {
        rank: t.rank,
        team: t.team,
        score: t.score,
        members: t.members,
        reached_at: rfc3339_us(t.reached_at_us),
    }
}

/// The API view of a page of rows.
pub fn page_view(rows: Rows) -> EntriesPage {
    EntriesPage {
        total: rows.total,
        period: rows.period.id,
        entries: rows
            .entries
            .into_iter()
            .map(|e| entry_view(e, &rows.columns))
            .collect(),
    }
}

/// A member whose tier changed at a close.
pub fn move_view(m: MoveRow) -> MoveView {
    MoveView {
        member: m.member,
        from: m.from,
        to: m.to,
        cohort: m.cohort,
        rank: m.rank,
    }
}

/// A cohort's standings.
pub fn cohort_view(board: &str, rows: CohortRows) -> CohortView {
    CohortView {
        board: board.to_owned(),
        period: rows.period.id,
        tier: rows.tier,
        cohort: rows.place.cohort,
        total: rows.total,
        entries: rows
            .entries
            .into_iter()
            .map(|e| entry_view(e, &rows.columns))
            .collect(),
    }
}

/// A period's cohorts.
pub fn cohort_list_view(board: &str, list: CohortList) -> CohortListView {
    CohortListView {
        board: board.to_owned(),
        period: list.period.id,
        total: list.total,
        cohorts: list
            .cohorts
            .into_iter()
            .map(|(tier, cohort, members)| CohortSummary {
                tier,
                cohort,
                members,
            })
            .collect(),
    }
}

/// The answer to `members:query`.
pub fn members_query_view(set: MemberSet) -> MembersQueryView {
    MembersQueryView {
        total: set.total,
        period: set.period.id,
        entries: set
            .entries
            .into_iter()
            .map(|e| entry_view(e, &set.columns))
            .collect(),
        missing: set.missing,
    }
}

/// The answer to `thresholds`.
pub fn thresholds_view(t: Thresholds) -> ThresholdsView {
    let columns = t.columns;
    let thresholds = t
        .thresholds
        .into_iter()
        .map(|t| {
            let (member, scores) = t.entry.unzip();
            ThresholdView {
                top_percent: t.top_percent.map(Percent::as_f64),
                rank: t.rank,
                score: scores.map(|s| s.first()),
                scores: scores.and_then(|s| ScoresView::of(&columns, &s)),
                member,
            }
        })
        .collect();
    ThresholdsView {
        total: t.total,
        period: t.period.id,
        thresholds,
    }
}

/// A member answer (docs/SPEC.md §3, §10, §14): its entry, rank, total and percentage,
/// its attempts on a board that counts them, its cohort on a cohort board; `board` named
/// and `period` named in an answer across boards. The one place a member answer is made.
pub fn member_view(row: MemberRow, board: Option<String>) -> MemberView {
    let e = row.entry;
    // A hidden member's percentage is of the members it would rank among: itself too.
    let among = row.total + u64::from(e.hidden);
    MemberView {
        period: board.is_some().then_some(row.period.id),
        board,
        hidden: e.hidden,
        score: e.score(),
        scores: ScoresView::of(&row.columns, &e.scores),
        member: e.member,
        rank: e.rank,
        reached_at: rfc3339_us(e.reached_at_us),
        metadata: raw_metadata(e.metadata),
        total: row.total,
        top_percent: top_percent(row.ordinal, among),
        attempts: row.attempts,
        tier: row.cohort.map(|_| row.tier.clone()),
        cohort: row.cohort.map(|(place, _)| place.cohort),
        cohort_rank: row.cohort.map(|(_, rank)| rank),
        partition: e.partition,
        partition_rank: row.partition_rank,
        team: e.team,
    }
}

/// The answer to a member across boards.
pub fn member_boards_view(member: String, rows: Vec<(String, MemberRow)>) -> MemberBoardsView {
    let boards = rows
        .into_iter()
        .map(|(board, row)| member_view(row, Some(board)))
        .collect();
    MemberBoardsView { member, boards }
}

/// The API view of an audit entry.
pub fn audit_entry_view(e: photofinish_core::audit::AuditEntry) -> AuditEntryView {
    AuditEntryView {
        at: rfc3339_us(e.at_us),
        actor: e.actor,
        action: e.action,
        board: e.board,
        member: e.member,
        detail: RawValue::from_string(e.detail)
            .unwrap_or_else(|_| RawValue::from_string("{}".into()).expect("an object")),
    }
}

/// A member's export (docs/SPEC.md §16): each board's data, and the audit entries naming
/// it when the caller is an admin; made at `now_us`.
pub fn member_export_view(
    member: String,
    boards: Vec<(String, photofinish_core::op::MemberData)>,
    audit: Option<Vec<photofinish_core::audit::AuditEntry>>,
    now_us: i64,
) -> MemberExportView {
    let boards = boards
        .into_iter()
        .map(|(board, data)| BoardExportView {
            board,
            hidden: data.hidden,
            tier: data.tier,
            periods: data
                .periods
                .into_iter()
                .map(|p| PeriodExportView {
                    period: p.period.id,
                    entry: p.row.map(|row| member_view(row, None)),
                    waiting: p.waiting,
                })
                .collect(),
            grants: data.grants.into_iter().map(grant_view).collect(),
        })
        .collect();
    MemberExportView {
        member,
        exported_at: rfc3339_us(now_us),
        boards,
        audit: audit.map(|a| a.into_iter().map(audit_entry_view).collect()),
    }
}
