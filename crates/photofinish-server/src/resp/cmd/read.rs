//! The reads: `LB.SCORE board member [PERIOD p]` and `LB.RANK board member [RANKING style]
//! [PERIOD p]` (integer, nil for a member not ranked), `LB.RANGE board offset count` and
//! `LB.AROUND board member before after` (arrays of `[rank, member, score, reached_at]`,
//! windows under the HTTP limits; `LB.AROUND` of a member not ranked is an empty array),
//! `LB.CARD board [PERIOD p]` and `LB.INFO board` (the fields of `GET /v1/boards/{board}`),
//! `LB.COHORT board member [RANKING style] [PERIOD p]` (a member's cohort, docs/SPEC.md
//! §14: its rows as `LB.RANGE`'s, cohort ranks; an empty array for a member with no place,
//! as `LB.AROUND`), `LB.TIER board member` (a league member's tier name).
//! On a board of several columns (docs/SPEC.md §13) a score is the array of its column
//! values, in `LB.SCORE`'s answer and in the rows' score place.

use photofinish_core::columns::ColumnNames;
use photofinish_core::op::{
    ReadAround, ReadBoard, ReadCohort, ReadPage, ReadStanding, ReadTier, Standing,
};
use photofinish_core::ranking::Entry;
use photofinish_core::view::{ReadOptions, Rows};
use photofinish_core::{Around, BoardError, BoardName, ErrorCode, PeriodRef, RankStyle};

use super::args::{option, options, text};
use super::spec::{Family, Spec};
use crate::limits::{MAX_AROUND_SIDE, MAX_PAGE_LIMIT};
use crate::resp::error::CmdError;
use crate::resp::frame::Args;
use crate::resp::reply::Out;
use crate::resp::session::Session;
use crate::wire::parse::{self, bounded_u64, ranking};
use crate::wire::views::board_view;

/// This family's rows.
pub const COMMANDS: &[Spec] = &[
    Spec::new("lb.score", -3, &["readonly", "fast"], 1, Family::Read),
    Spec::new("lb.rank", -3, &["readonly", "fast"], 1, Family::Read),
    Spec::new("lb.range", -4, &["readonly"], 1, Family::Read),
    Spec::new("lb.around", -5, &["readonly"], 1, Family::Read),
    Spec::new("lb.card", -2, &["readonly", "fast"], 1, Family::Read),
    Spec::new("lb.info", 2, &["readonly", "fast"], 1, Family::Read),
    Spec::new("lb.cohort", -3, &["readonly"], 1, Family::Read),
    Spec::new("lb.tier", 3, &["readonly", "fast"], 1, Family::Read),
];

/// The rank style the `RANKING` option names (any case), ordinal when absent.
pub(super) fn style(opts: &[(&'static str, &str)]) -> Result<RankStyle, CmdError> {
    let asked = option(opts, "RANKING").map(str::to_ascii_lowercase);
    Ok(ranking(asked.as_deref())?)
}

/// `RANKING` and `PERIOD` among the options (`RANKING` only where `ranked`).
pub(super) fn read_options(
    args: &Args<'_>,
    from: usize,
    ranked: bool,
    command: &str,
) -> Result<ReadOptions, CmdError> {
    let allowed: &[&'static str] = if ranked {
        &["RANKING", "PERIOD", "PARTITION"]
    } else {
        &["PERIOD", "PARTITION"]
    };
    let opts = options(args, from, allowed, command)?;
    Ok(ReadOptions {
        ranking: style(&opts)?,
        period: option(&opts, "PERIOD").map_or(PeriodRef::Current, PeriodRef::parse),
        partition: parse::group_key(option(&opts, "PARTITION").map(str::to_owned))?,
    })
}

/// A number argument under `max`.
pub(super) fn number(args: &Args<'_>, i: usize, name: &str, max: u64) -> Result<u64, CmdError> {
    let raw = text(args, i, name, ErrorCode::InvalidParameter)?;
    Ok(bounded_u64(name, raw, max)?)
}

fn rows(out: &mut Out, rows: &Rows) {
    out_rows(out, &rows.entries, &rows.columns);
}

/// Entries as `LB.RANGE` answers them: `[rank, member, score, reached_at]` each.
pub(super) fn out_rows(out: &mut Out, entries: &[Entry], columns: &ColumnNames) {
    out.array(entries.len());
    for e in entries {
        out.array(4);
        out.count(e.rank);
        out.bulk(e.member.as_bytes());
        super::args::scores(out, columns, &e.scores);
        out.int(e.reached_at_us);
    }
}

/// A wire view's fields as a map (`LB.INFO`).
fn fields(out: &mut Out, view: &impl serde::Serialize) -> Result<(), CmdError> {
    let view = serde_json::to_value(view)
        .map_err(|e| BoardError::Unavailable(format!("cannot show the board: {e}")))?;
    let fields = view.as_object().cloned().unwrap_or_default();
    out.map(fields.len());
    for (k, v) in &fields {
        out.bulk(k.as_bytes());
        out.json(v);
    }
    Ok(())
}

/// Whether `e` says the member is not ranked (a nil answer, not an error).
fn not_ranked(e: &BoardError) -> bool {
    e.code() == ErrorCode::MemberNotFound
}

/// Whether `spec` is a read of one member's entry (`LB.SCORE`, `LB.RANK`): the reads a
/// connection gathers from a pipeline and runs together ([`photofinish_core::op::Each`]).
pub fn is_member_read(spec: &Spec) -> bool {
    matches!(spec.name, "lb.score" | "lb.rank")
}

/// The read `LB.SCORE` or `LB.RANK` (`spec`) asks of `board`: the member's standing,
/// not its whole row (both answer one of its numbers).
pub fn member_read(
    spec: &Spec,
    args: &Args<'_>,
    board: BoardName,
) -> Result<ReadStanding, CmdError> {
    Ok(ReadStanding {
        board,
        member: text(args, 2, "the member name", ErrorCode::InvalidMember)?.to_owned(),
        options: read_options(args, 3, spec.name == "lb.rank", spec.name)?,
    })
}

/// Answers `LB.SCORE` or `LB.RANK` (`spec`) with what its read found: the score or the
/// rank, nil for a member not ranked.
pub fn answer_member(
    out: &mut Out,
    spec: &Spec,
    found: Result<Standing, BoardError>,
) -> Result<(), CmdError> {
    match found {
        Ok(s) if spec.name == "lb.score" => super::args::scores(out, &s.columns, &s.scores),
        Ok(s) => out.count(s.rank),
        Err(e) if not_ranked(&e) => out.nil(),
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// Runs a read.
pub async fn run(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    board: BoardName,
) -> Result<(), CmdError> {
    let gate = &s.app.gate;
    let caller = &s.identity.caller;
    match spec.name {
        "lb.score" | "lb.rank" => {
            let op = member_read(spec, args, board)?;
            let row = gate.read(caller, &op).await;
            answer_member(&mut s.out, spec, row)?;
        }
        "lb.range" => {
            let op = ReadPage {
                board,
                offset: number(args, 2, "offset", u64::MAX)?,
                limit: number(args, 3, "count", MAX_PAGE_LIMIT)?,
                options: read_options(args, 4, true, spec.name)?,
            };
            let page = gate.read(caller, &op).await?;
            rows(&mut s.out, &page);
        }
        "lb.around" | "lb.cohort" | "lb.tier" => run_near(s, spec, args, board).await?,
        "lb.card" => {
            let op = ReadPage {
                board,
                offset: 0,
                limit: 0,
                options: read_options(args, 2, false, spec.name)?,
            };
            let page = gate.read(caller, &op).await?;
            s.out.count(page.total);
        }
        _ => {
            let state = gate.read(caller, &ReadBoard { board }).await?;
            fields(&mut s.out, &board_view(state, caller))?;
        }
    }
    Ok(())
}

/// The reads of a member's neighbours: around it, its cohort, its tier.
async fn run_near(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    board: BoardName,
) -> Result<(), CmdError> {
    let gate = &s.app.gate;
    let caller = &s.identity.caller;
    let member = text(args, 2, "the member name", ErrorCode::InvalidMember)?.to_owned();
    match spec.name {
        "lb.around" => {
            let op = ReadAround {
                board,
                member,
                window: Around {
                    before: number(args, 3, "before", MAX_AROUND_SIDE)?,
                    after: number(args, 4, "after", MAX_AROUND_SIDE)?,
                },
                options: read_options(args, 5, true, spec.name)?,
            };
            match gate.read(caller, &op).await {
                Ok(r) => rows(&mut s.out, &r),
                Err(e) if not_ranked(&e) => s.out.array(0),
                Err(e) => return Err(e.into()),
            }
        }
        "lb.cohort" => {
            let op = ReadCohort {
                board,
                member,
                options: read_options(args, 3, true, spec.name)?,
            };
            match gate.read(caller, &op).await {
                Ok(c) => out_rows(&mut s.out, &c.entries, &c.columns),
                Err(e) if not_ranked(&e) => s.out.array(0),
                Err(e) => return Err(e.into()),
            }
        }
        "lb.tier" => {
            let op = ReadTier { board, member };
            let row = gate.read(caller, &op).await?;
            s.out.bulk(row.tier.as_bytes());
        }
        other => unreachable!("run sends {other} elsewhere"),
    }
    Ok(())
}
