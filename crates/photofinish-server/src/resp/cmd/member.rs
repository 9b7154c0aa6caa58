//! A member's own data across boards on RESP (docs/SPEC.md §16), commands without a
//! board key: `LB.REWARDS member [STATUS s] [BOARDS a,…]` (its grants, newest first, the
//! HTTP answer nested) and `LB.CLAIM member id [IDEMPOTENCY key]` (the grant, claimed;
//! a second claim is the error `already_claimed`).

use photofinish_core::op::{Change, Claim};
use photofinish_core::rewards::GrantStatus;
use photofinish_core::{ErrorCode, MemberName};

use super::args::{invalid, option, options, text};
use super::spec::{Family, Spec};
use super::write::keyed_request;
use crate::resp::error::CmdError;
use crate::resp::frame::Args;
use crate::resp::session::Session;
use crate::wire::parse::board_list;
use crate::wire::types::MemberRewardsView;
use crate::wire::views::grant_view;

/// This family's rows.
pub const COMMANDS: &[Spec] = &[
    Spec::new("lb.rewards", -2, &["readonly"], 0, Family::Member),
    Spec::new("lb.claim", -3, &["write", "fast"], 0, Family::Member),
];

/// Runs `LB.REWARDS` or `LB.CLAIM`.
pub async fn run(s: &mut Session, spec: &Spec, args: &Args<'_>) -> Result<(), CmdError> {
    let member = MemberName::parse(text(args, 1, "the member name", ErrorCode::InvalidMember)?)?;
    match spec.name {
        "lb.claim" => claim(s, spec, args, member).await,
        _ => rewards(s, spec, args, member).await,
    }
}

/// `LB.REWARDS member [STATUS s] [BOARDS a,…]`.
async fn rewards(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    member: MemberName,
) -> Result<(), CmdError> {
    let opts = options(args, 2, &["STATUS", "BOARDS"], spec.name)?;
    let status = match option(&opts, "STATUS")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("all") => None,
        Some(s) => Some(GrantStatus::parse(s).ok_or_else(|| {
            invalid(format!(
                "STATUS must be unclaimed, claimed, expired or all, got {s:?}"
            ))
        })?),
    };
    let boards = option(&opts, "BOARDS").map(board_list).transpose()?;
    let grants = (s.app.gate)
        .member_rewards(&s.identity.caller, &member, boards, status)
        .await?;
    let view = MemberRewardsView {
        member: member.into_string(),
        total: grants.len() as u64,
        grants: grants.into_iter().map(grant_view).collect(),
    };
    super::query::answer(&mut s.out, &view)
}

/// `LB.CLAIM member id [IDEMPOTENCY key]`.
async fn claim(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    member: MemberName,
) -> Result<(), CmdError> {
    let id = text(args, 2, "the grant id", ErrorCode::RewardNotFound)?;
    let opts = options(args, 3, &["IDEMPOTENCY"], spec.name)?;
    let key = keyed_request(&opts, args, 3)?;
    let name = member.to_string();
    let (board, op) = Claim::new(member, id, &s.identity.caller)?;
    let r = (s.app.gate)
        .change(&s.identity.caller, &board, Change::Op(Box::new(op)), key)
        .await
        .map_err(|e| Claim::refusal(id, &name, e))?;
    super::query::answer(&mut s.out, &grant_view(Claim::answer(r.answer, id)?))
}
