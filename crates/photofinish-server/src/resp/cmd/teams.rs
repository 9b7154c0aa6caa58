//! The teams (docs/SPEC.md §17): `LB.TEAMS board [LIMIT offset count] [RANKING style]
//! [PERIOD p]` — a page of the period's teams, each `[rank, team, score, members,
//! reached_at]` (default the first 10) — and `LB.TEAM board team [LIMIT offset count]
//! [RANKING style] [PERIOD p]` — `[rank, score, members, reached_at, rows]`, the rows its
//! members' entries ranked among themselves as `LB.RANGE` answers them; nil for a team
//! holding no member the reader sees. The same reads as `GET /v1/boards/{board}/teams`
//! and `GET /v1/boards/{board}/teams/{team}`.

use photofinish_core::columns::ColumnNames;
use photofinish_core::names::GroupKey;
use photofinish_core::op::{ReadTeam, ReadTeams};
use photofinish_core::ranking::TeamEntry;
use photofinish_core::{BoardName, ErrorCode, PeriodRef, RankStyle};

use super::args::{invalid, option, options_in, text};
use super::read::number;
use super::spec::{Family, Spec};
use crate::limits::{DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT};
use crate::resp::error::CmdError;
use crate::resp::frame::Args;
use crate::resp::reply::Out;
use crate::resp::session::Session;

/// This family's rows.
pub const COMMANDS: &[Spec] = &[
    Spec::new("lb.teams", -2, &["readonly"], 1, Family::Teams),
    Spec::new("lb.team", -3, &["readonly"], 1, Family::Teams),
];

/// The options of a teams read from argument `from` on: `LIMIT offset count` (anywhere
/// among them), `RANKING` and `PERIOD`.
struct TeamOptions {
    offset: u64,
    limit: u64,
    style: RankStyle,
    period: PeriodRef,
}

fn team_options(args: &Args<'_>, from: usize, command: &str) -> Result<TeamOptions, CmdError> {
    let allowed = &["RANKING", "PERIOD"];
    let at = (from..args.len()).find(|&i| args.get(i).eq_ignore_ascii_case(b"LIMIT"));
    let (offset, limit, opts) = match at {
        None => (
            0,
            DEFAULT_PAGE_LIMIT,
            options_in(args, from..args.len(), allowed, command, Vec::new())?,
        ),
        Some(i) => {
            if i + 2 >= args.len() {
                return Err(invalid(format!(
                    "LIMIT of '{command}' takes an offset and a count"
                )));
            }
            let before = options_in(args, from..i, allowed, command, Vec::new())?;
            let opts = options_in(args, i + 3..args.len(), allowed, command, before)?;
            (
                number(args, i + 1, "offset", u64::MAX)?,
                number(args, i + 2, "count", MAX_PAGE_LIMIT)?,
                opts,
            )
        }
    };
    Ok(TeamOptions {
        offset,
        limit,
        style: super::read::style(&opts)?,
        period: option(&opts, "PERIOD").map_or(PeriodRef::Current, PeriodRef::parse),
    })
}

/// A team as `LB.TEAMS` answers it (`with_name`) or `LB.TEAM` begins its answer.
fn out_team(out: &mut Out, t: &TeamEntry, with_name: bool) {
    out.count(t.rank);
    if with_name {
        out.bulk(t.team.as_bytes());
    }
    out.int(t.score);
    out.count(t.members);
    out.int(t.reached_at_us);
}

/// Runs a teams read.
pub async fn run(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    board: BoardName,
) -> Result<(), CmdError> {
    let gate = &s.app.gate;
    let caller = &s.identity.caller;
    if spec.name == "lb.teams" {
        let o = team_options(args, 2, spec.name)?;
        let op = ReadTeams {
            board,
            period: o.period,
            offset: o.offset,
            limit: o.limit,
            style: o.style,
        };
        let list = gate.read(caller, &op).await?;
        s.out.array(list.entries.len());
        for t in &list.entries {
            s.out.array(5);
            out_team(&mut s.out, t, true);
        }
        return Ok(());
    }
    let team = text(args, 2, "the team", ErrorCode::InvalidParameter)?;
    let o = team_options(args, 3, spec.name)?;
    let op = ReadTeam {
        board,
        team: GroupKey::parse(team.to_owned())?,
        period: o.period,
        offset: o.offset,
        limit: o.limit,
        style: o.style,
    };
    match gate.read(caller, &op).await {
        Ok(d) => {
            s.out.array(5);
            out_team(&mut s.out, &d.team, false);
            super::read::out_rows(&mut s.out, &d.entries, &ColumnNames::default());
        }
        Err(e) if e.code() == ErrorCode::TeamNotFound => s.out.nil(),
        Err(e) => return Err(e.into()),
    }
    Ok(())
}
