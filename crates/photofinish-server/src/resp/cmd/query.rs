//! The questions of docs/SPEC.md §10 on RESP, each the HTTP answer as a map (RESP3) or a
//! flat array of pairs (RESP2), nested values as maps and arrays:
//! `LB.QUERY board count member… [RANKING s] [PERIOD p]` (`members:query`; the count says
//! where the names end, as `ZINTERSTORE`'s numkeys does), `LB.RANKOF board score…
//! [RANKING s] [PERIOD p]` (an integer; one score per column, docs/SPEC.md §13), `LB.THRESHOLDS board [RANKS r,…] [TOP_PERCENT
//! p,…] [PERIOD p]`, and `LB.MEMBER member [BOARDS a,…] [RANKING s]` (a member across
//! boards; the only board command without a board key).

use photofinish_core::op::{ReadMembers, ReadRankOfScore, ReadThresholds};
use photofinish_core::query::MAX_QUERY_MEMBERS;
use photofinish_core::{BoardError, ErrorCode, MemberName, PeriodRef};
use serde::Serialize;

use super::args::{board, option, options, score_values, text};
use super::read::{read_options, style};
use super::spec::{Family, Spec};
use crate::resp::error::CmdError;
use crate::resp::frame::Args;
use crate::resp::reply::Out;
use crate::resp::session::Session;
use crate::wire::parse::{self, bounded_u64};
use crate::wire::parse::{board_list, threshold_query};
use crate::wire::views::{member_boards_view, members_query_view, thresholds_view};

/// This family's rows.
pub const COMMANDS: &[Spec] = &[
    Spec::new("lb.query", -3, &["readonly"], 1, Family::Query),
    Spec::new("lb.rankof", -3, &["readonly", "fast"], 1, Family::Query),
    Spec::new("lb.thresholds", -2, &["readonly"], 1, Family::Query),
    Spec::new("lb.member", -2, &["readonly"], 0, Family::Query),
];

/// An HTTP answer's JSON, nested.
pub(super) fn answer(out: &mut Out, view: &impl Serialize) -> Result<(), CmdError> {
    let v = serde_json::to_value(view)
        .map_err(|e| BoardError::Unavailable(format!("cannot show the answer: {e}")))?;
    out.nested(&v);
    Ok(())
}

/// Runs a question.
pub async fn run(s: &mut Session, spec: &Spec, args: &Args<'_>) -> Result<(), CmdError> {
    let gate = &s.app.gate;
    let caller = &s.identity.caller;
    if spec.name == "lb.member" {
        let member =
            MemberName::parse(text(args, 1, "the member name", ErrorCode::InvalidMember)?)?;
        let opts = options(args, 2, &["BOARDS", "RANKING"], spec.name)?;
        let style = style(&opts)?;
        let boards = option(&opts, "BOARDS").map(board_list).transpose()?;
        let rows = gate.member_boards(caller, &member, boards, style).await?;
        return answer(&mut s.out, &member_boards_view(member.into_string(), rows));
    }
    let board = board(args)?;
    match spec.name {
        "lb.query" => {
            let raw = text(args, 2, "the member count", ErrorCode::InvalidParameter)?;
            let n = bounded_u64("the member count", raw, MAX_QUERY_MEMBERS as u64)? as usize;
            if args.len() < 3 + n {
                return Err(super::args::invalid(format!(
                    "'lb.query' names {n} members but has {} after the count",
                    args.len() - 3
                )));
            }
            let names = (3..3 + n).map(|i| {
                text(args, i, "a member name", ErrorCode::InvalidMember).map(str::to_owned)
            });
            let names = names.collect::<Result<_, _>>()?;
            let options = read_options(args, 3 + n, true, spec.name)?;
            let set = gate
                .read(caller, &ReadMembers::new(board, names, options)?)
                .await?;
            answer(&mut s.out, &members_query_view(set))
        }
        "lb.rankof" => {
            let (scores, next) = score_values(args, 2, &["RANKING", "PERIOD"])?;
            let op = ReadRankOfScore {
                board,
                scores,
                options: read_options(args, next, true, spec.name)?,
            };
            let r = gate.read(caller, &op).await?;
            s.out.count(r.rank);
            Ok(())
        }
        _ => {
            let allowed = &["RANKS", "TOP_PERCENT", "PERIOD", "PARTITION"];
            let opts = options(args, 2, allowed, spec.name)?;
            let query = threshold_query(option(&opts, "RANKS"), option(&opts, "TOP_PERCENT"))?;
            let period = option(&opts, "PERIOD").map_or(PeriodRef::Current, PeriodRef::parse);
            let op = ReadThresholds {
                board,
                query,
                period,
                partition: parse::group_key(option(&opts, "PARTITION").map(str::to_owned))?,
            };
            let t = gate.read(caller, &op).await?;
            answer(&mut s.out, &thresholds_view(t))
        }
    }
}
