//! `LB.CREATE board [ORDER …] [UPDATE …] [RESET …] [TZ …] [WEEKSTART …] [RETENTION n]`
//! (and the settings HTTP's body takes: `PUBLICREAD`, `PLAYERWRITES`, `MINSCORE`,
//! `MAXSCORE`, `MAXINCREMENT`, `MAXMEMBERS`; and `COLUMNS n name order update …`, n
//! triples, docs/SPEC.md §13, with `-` for a column's default order or update) → `+OK`; `LB.DROP board` → 1 or 0;
//! `LB.REM board member [PERIOD p]` → 1 or 0. `LB.CREATE` and `LB.REM` take
//! `[IDEMPOTENCY key]`. The config is built by the same function as `PUT
//! /v1/boards/{board}`'s, so every rule and message is HTTP's.

use photofinish_core::access::Action;
use photofinish_core::config::validate_member_name;
use photofinish_core::op::{Change, Hide, Join, Remove};
use photofinish_core::{BoardError, BoardName, ErrorCode, MemberName, PeriodRef};
use serde_json::Value;

use super::args::{option, options, options_in, text};
use super::spec::{Family, Spec};
use super::write::keyed_request;
use crate::error::ApiError;
use crate::resp::error::CmdError;
use crate::resp::frame::Args;
use crate::resp::session::Session;
use crate::wire::types::{
    BoardConfigBody, ColumnBody, LeagueView, PartitionsView, RewardRowView, TeamsView,
};

/// This family's rows.
pub const COMMANDS: &[Spec] = &[
    Spec::new("lb.create", -2, &["write", "denyoom"], 1, Family::Board),
    Spec::new("lb.rem", -3, &["write", "fast"], 1, Family::Board),
    Spec::new("lb.drop", 2, &["write"], 1, Family::Board),
    Spec::new(
        "lb.join",
        3,
        &["write", "denyoom", "fast"],
        1,
        Family::Board,
    ),
    Spec::new("lb.hide", 3, &["write", "fast"], 1, Family::Board),
    Spec::new("lb.unhide", 3, &["write", "fast"], 1, Family::Board),
];

const CREATE_OPTIONS: &[&str] = &[
    "PARTITIONS",
    "TEAMSIZE",
    "REWARDS",
    "REWARDTTL",
    "TIERS",
    "PROMOTE",
    "DEMOTE",
    "ORDER",
    "UPDATE",
    "RESET",
    "TZ",
    "WEEKSTART",
    "RETENTION",
    "PUBLICREAD",
    "PLAYERWRITES",
    "MINSCORE",
    "MAXSCORE",
    "MAXINCREMENT",
    "MAXMEMBERS",
    "GRACE",
    "WEBHOOK",
    "WEBHOOKTOP",
    "COHORTSIZE",
    "OPENSAT",
    "CLOSESAT",
    "MAXATTEMPTS",
    "JOINREQUIRED",
    "IDEMPOTENCY",
];

fn invalid_config(message: String) -> CmdError {
    CmdError::Api(ApiError::new(ErrorCode::InvalidConfig, message))
}

/// A whole-number option.
fn whole<T: std::str::FromStr>(v: Option<&str>, name: &str) -> Result<Option<T>, CmdError> {
    v.map(|s| {
        s.parse()
            .map_err(|_| invalid_config(format!("{name} must be a whole number, got {s:?}")))
    })
    .transpose()
}

/// A yes/no option.
fn flag(v: Option<&str>, name: &str) -> Result<Option<bool>, CmdError> {
    v.map(|s| match s.to_ascii_lowercase().as_str() {
        "yes" | "true" | "1" => Ok(true),
        "no" | "false" | "0" => Ok(false),
        _ => Err(invalid_config(format!(
            "{name} must be yes or no, got {s:?}"
        ))),
    })
    .transpose()
}

/// Option words with their values, as [`options`] reads them.
type Options<'a> = Vec<(&'static str, &'a str)>;

/// `LB.CREATE`'s options and its `COLUMNS n name order update …` (which takes `1 + 3n`
/// arguments, wherever it stands among the others).
fn create_options<'a>(
    args: &Args<'a>,
    command: &str,
) -> Result<(Options<'a>, Option<Vec<ColumnBody>>), CmdError> {
    let at = (2..args.len()).find(|&i| args.get(i).eq_ignore_ascii_case(b"COLUMNS"));
    let Some(at) = at else {
        return Ok((options(args, 2, CREATE_OPTIONS, command)?, None));
    };
    let count = text(args, at + 1, "the column count", ErrorCode::InvalidConfig)?;
    let n: usize = count
        .parse()
        .ok()
        .filter(|n| (1..=photofinish_core::columns::MAX_COLUMNS).contains(n))
        .ok_or_else(|| {
            invalid_config(format!(
                "COLUMNS takes a count of 1 to {} and that many name order update triples, \
                 got {count:?}",
                photofinish_core::columns::MAX_COLUMNS
            ))
        })?;
    let end = at + 2 + 3 * n;
    if end > args.len() {
        return Err(invalid_config(format!(
            "COLUMNS {n} needs {n} name order update triples"
        )));
    }
    let word = |i: usize| text(args, i, "a column", ErrorCode::InvalidConfig);
    let given = |s: &str| (s != "-").then(|| s.to_ascii_lowercase());
    let columns = (0..n)
        .map(|c| {
            let i = at + 2 + 3 * c;
            Ok(ColumnBody {
                name: word(i)?.to_owned(),
                order: given(word(i + 1)?),
                update: given(word(i + 2)?),
                ..ColumnBody::default()
            })
        })
        .collect::<Result<Vec<_>, CmdError>>()?;
    let before = options_in(args, 2..at, CREATE_OPTIONS, command, Vec::new())?;
    let all = options_in(args, end..args.len(), CREATE_OPTIONS, command, before)?;
    Ok((all, Some(columns)))
}

fn body(
    opts: &[(&'static str, &str)],
    columns: Option<Vec<ColumnBody>>,
) -> Result<BoardConfigBody, CmdError> {
    let lower = |k| option(opts, k).map(str::to_ascii_lowercase);
    Ok(BoardConfigBody {
        columns,
        order: lower("ORDER"),
        update: lower("UPDATE"),
        reset: lower("RESET"),
        timezone: option(opts, "TZ").map(str::to_owned),
        week_start: lower("WEEKSTART"),
        retention: whole(option(opts, "RETENTION"), "RETENTION")?,
        public_read: flag(option(opts, "PUBLICREAD"), "PUBLICREAD")?,
        player_writes: flag(option(opts, "PLAYERWRITES"), "PLAYERWRITES")?,
        min_score: option(opts, "MINSCORE").map(|s| Value::String(s.to_owned())),
        max_score: option(opts, "MAXSCORE").map(|s| Value::String(s.to_owned())),
        max_increment: whole(option(opts, "MAXINCREMENT"), "MAXINCREMENT")?,
        max_members: whole(option(opts, "MAXMEMBERS"), "MAXMEMBERS")?,
        grace: whole(option(opts, "GRACE"), "GRACE")?,
        webhook: option(opts, "WEBHOOK").map(str::to_owned),
        webhook_top: whole(option(opts, "WEBHOOKTOP"), "WEBHOOKTOP")?,
        cohort_size: whole(option(opts, "COHORTSIZE"), "COHORTSIZE")?,
        opens_at: option(opts, "OPENSAT").map(str::to_owned),
        closes_at: option(opts, "CLOSESAT").map(str::to_owned),
        max_attempts: whole(option(opts, "MAXATTEMPTS"), "MAXATTEMPTS")?,
        join_required: flag(option(opts, "JOINREQUIRED"), "JOINREQUIRED")?,
        league: league(opts)?,
        partitions: whole(option(opts, "PARTITIONS"), "PARTITIONS")?
            .map(|max| PartitionsView { max }),
        teams: whole(option(opts, "TEAMSIZE"), "TEAMSIZE")?.map(|max_size| TeamsView { max_size }),
        rewards: option(opts, "REWARDS").map(reward_rows).transpose()?,
        reward_ttl: whole(option(opts, "REWARDTTL"), "REWARDTTL")?,
    })
}

/// `REWARDS rows`: the reward rows as the HTTP body's JSON array (docs/SPEC.md §16).
fn reward_rows(json: &str) -> Result<Vec<RewardRowView>, CmdError> {
    serde_json::from_str(json).map_err(|e| {
        invalid_config(format!(
            "REWARDS takes a JSON array of reward rows, as the HTTP body's rewards: {e}"
        ))
    })
}

/// `TIERS a,b,c [PROMOTE p] [DEMOTE d]`: a league (PROMOTE and DEMOTE default to 0).
fn league(opts: &[(&'static str, &str)]) -> Result<Option<LeagueView>, CmdError> {
    let promote = whole(option(opts, "PROMOTE"), "PROMOTE")?;
    let demote = whole(option(opts, "DEMOTE"), "DEMOTE")?;
    let Some(tiers) = option(opts, "TIERS") else {
        if promote.is_some() || demote.is_some() {
            return Err(invalid_config(
                "PROMOTE and DEMOTE belong to a league: name its TIERS too".to_owned(),
            ));
        }
        return Ok(None);
    };
    Ok(Some(LeagueView {
        tiers: tiers.split(',').map(str::to_owned).collect(),
        promote: promote.unwrap_or(0),
        demote: demote.unwrap_or(0),
    }))
}

/// Runs `LB.CREATE`, `LB.DROP`, `LB.REM`, `LB.JOIN` (1 when the member took a seat, 0
/// when it had one, as `SADD` counts), `LB.HIDE` or `LB.UNHIDE` (1 when the member was
/// not already hidden, or shown; docs/SPEC.md §15): one function a command.
pub async fn run(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    board: &BoardName,
) -> Result<(), CmdError> {
    match spec.name {
        "lb.create" => create(s, spec, args, board).await,
        "lb.join" => join(s, args, board).await,
        "lb.hide" => hide(s, args, board, true).await,
        "lb.unhide" => hide(s, args, board, false).await,
        "lb.drop" => drop_board(s, board).await,
        _ => remove(s, spec, args, board).await,
    }
}

/// `LB.CREATE board [options…]` → `+OK`.
async fn create(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    board: &BoardName,
) -> Result<(), CmdError> {
    let (gate, caller) = (&s.app.gate, &s.identity.caller);
    gate.admit(caller, Action::Manage { board }).await?;
    let (opts, columns) = create_options(args, spec.name)?;
    let change = Change::Create(crate::wire::config::config(body(&opts, columns)?)?);
    let key = keyed_request(&opts, args, 2)?;
    gate.change(caller, board, change, key)
        .await?
        .answer
        .into_created()?;
    s.out.ok();
    Ok(())
}

/// `LB.JOIN board member` → 1 when it took a seat, 0 when it had one.
async fn join(s: &mut Session, args: &Args<'_>, board: &BoardName) -> Result<(), CmdError> {
    let member = MemberName::parse(text(args, 2, "the member name", ErrorCode::InvalidMember)?)?;
    let change = Change::Op(Box::new(Join::new(member)));
    let joined = s
        .app
        .gate
        .change(&s.identity.caller, board, change, None)
        .await?;
    s.out.int(i64::from(!Join::answer(joined.answer)?.already));
    Ok(())
}

/// `LB.HIDE` / `LB.UNHIDE board member` → 1 when it changed, 0 when it already was.
async fn hide(
    s: &mut Session,
    args: &Args<'_>,
    board: &BoardName,
    hidden: bool,
) -> Result<(), CmdError> {
    let member = MemberName::parse(text(args, 2, "the member name", ErrorCode::InvalidMember)?)?;
    let change = Change::Op(Box::new(Hide::new(member, hidden)));
    let r = s
        .app
        .gate
        .change(&s.identity.caller, board, change, None)
        .await?;
    s.out.int(i64::from(Hide::answer(r.answer)?));
    Ok(())
}

/// `LB.DROP board` → 1, or 0 when there was no such board.
async fn drop_board(s: &mut Session, board: &BoardName) -> Result<(), CmdError> {
    let done = (s.app.gate)
        .change(&s.identity.caller, board, Change::Delete, None)
        .await;
    let done = done.and_then(|r| r.answer.into_deleted());
    one_or_zero(s, done, ErrorCode::BoardNotFound)
}

/// A delete's answer as `DEL` counts: 1 when it was done, 0 when what it names was not
/// there (`absent`).
fn one_or_zero(
    s: &mut Session,
    done: Result<(), BoardError>,
    absent: ErrorCode,
) -> Result<(), CmdError> {
    match done {
        Ok(()) => s.out.int(1),
        Err(e) if e.code() == absent => s.out.int(0),
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// `LB.REM board member [PERIOD p] [IDEMPOTENCY key]` → 1, or 0 when the member was not
/// there.
async fn remove(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    board: &BoardName,
) -> Result<(), CmdError> {
    let member = text(args, 2, "the member name", ErrorCode::InvalidParameter)?;
    validate_member_name(member)
        .map_err(|e| ApiError::new(ErrorCode::InvalidParameter, e.to_string()))?;
    let opts = options(args, 3, &["PERIOD", "IDEMPOTENCY"], spec.name)?;
    let period = option(&opts, "PERIOD").map_or(PeriodRef::Current, PeriodRef::parse);
    let change = Change::Op(Box::new(Remove::new(member.to_owned(), &period)));
    let key = keyed_request(&opts, args, 3)?;
    let done = (s.app.gate)
        .change(&s.identity.caller, board, change, key)
        .await;
    let done = done.and_then(|r| Remove::answer(r.answer).map(drop));
    one_or_zero(s, done, ErrorCode::MemberNotFound)
}
