//! `LB.INCR board member delta`, `LB.SET …`, `LB.BEST …` (answer: the score after the
//! write) and `LB.SUBMIT board member score [OP op]` (answer: `[score, rank, reached_at,
//! changed]`); all four take `[META json] [AT rfc3339] [IDEMPOTENCY key]`. On a board of
//! several columns (docs/SPEC.md §13) each takes one value per column in column order,
//! and the score in its answer is the array of the column values.
//!
//! A plain write is only parsed here: the connection ([`crate::resp::conn`]) runs the
//! writes of one round together, so they share one group commit. A write with
//! `IDEMPOTENCY` runs on its own ([`run_keyed`]), through the gate's keyed path.

use photofinish_core::op::Change;
use photofinish_core::op::{WriteOutcome, WriteRequest};
use photofinish_core::{BoardName, ErrorCode, MemberName, Op};

use super::args::{option, options, score_values, text};
use super::spec::{Family, Spec};
use crate::gate::KeyedRequest;
use crate::idempotency::{checked_key, resp_fingerprint};
use crate::resp::error::CmdError;
use crate::resp::frame::Args;
use crate::resp::reply::Out;
use crate::resp::session::Session;
use crate::wire::parse;

/// A score write's flags, as Redis lists `ZINCRBY`'s.
const FLAGS: &[&str] = &["write", "denyoom", "fast"];

/// This family's rows.
pub const COMMANDS: &[Spec] = &[
    Spec::new("lb.incr", -4, FLAGS, 1, Family::Write),
    Spec::new("lb.set", -4, FLAGS, 1, Family::Write),
    Spec::new("lb.best", -4, FLAGS, 1, Family::Write),
    Spec::new("lb.submit", -4, FLAGS, 1, Family::Write),
];

/// What a write answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The score after the write (`LB.INCR/SET/BEST`).
    Score,
    /// `[score, rank, reached_at, changed]` (`LB.SUBMIT`).
    Submit,
}

/// A parsed write.
#[derive(Debug)]
pub struct Parsed {
    /// The write.
    pub request: WriteRequest,
    /// Its answer's shape.
    pub shape: Shape,
    /// Its idempotency key, if it has one.
    pub keyed: Option<KeyedRequest>,
}

/// Whether `spec` is one of the four writes.
pub fn is_write(spec: &Spec) -> bool {
    spec.family == Family::Write
}

/// The fingerprint of a command, its `IDEMPOTENCY` pair left out.
pub fn fingerprint(args: &Args<'_>, options_from: usize) -> [u8; 32] {
    let mut parts: Vec<&[u8]> = Vec::with_capacity(args.len());
    let name = args.get(0).to_ascii_uppercase();
    let mut i = 1;
    while i < args.len() {
        if i >= options_from && args.get(i).eq_ignore_ascii_case(b"IDEMPOTENCY") {
            i += 2;
            continue;
        }
        parts.push(args.get(i));
        i += 1;
    }
    resp_fingerprint(std::iter::once(name.as_slice()).chain(parts))
}

/// The key of an `IDEMPOTENCY` option, checked, with the command's fingerprint.
pub fn keyed_request(
    opts: &[(&'static str, &str)],
    args: &Args<'_>,
    options_from: usize,
) -> Result<Option<KeyedRequest>, CmdError> {
    let Some(key) = option(opts, "IDEMPOTENCY") else {
        return Ok(None);
    };
    checked_key(key)?;
    Ok(Some(KeyedRequest {
        key: key.to_owned(),
        fingerprint: fingerprint(args, options_from),
    }))
}

/// Parses the write after its board name (checked by the caller).
pub fn parse(spec: &Spec, args: &Args<'_>) -> Result<Parsed, CmdError> {
    let member = MemberName::parse(text(args, 2, "the member name", ErrorCode::InvalidMember)?)?;
    let (op, shape) = match spec.name {
        "lb.incr" => (Some(Op::Incr), Shape::Score),
        "lb.set" => (Some(Op::Set), Shape::Score),
        "lb.best" => (Some(Op::Best), Shape::Score),
        _ => (None, Shape::Submit),
    };
    let allowed: &[&'static str] = match shape {
        Shape::Submit => &[
            "OP",
            "META",
            "AT",
            "PERIOD",
            "PARTITION",
            "TEAM",
            "IDEMPOTENCY",
        ],
        Shape::Score => &["META", "AT", "PERIOD", "PARTITION", "TEAM", "IDEMPOTENCY"],
    };
    let (scores, next) = score_values(args, 3, allowed)?;
    let opts = options(args, next, allowed, spec.name)?;
    let op = match option(&opts, "OP") {
        Some(s) => Some(parse::op_text(s)?),
        None => op,
    };
    let metadata = option(&opts, "META")
        .map(|s| parse::metadata_text("META", s))
        .transpose()?
        .flatten();
    let at_us = option(&opts, "AT").map(parse::at_text).transpose()?;
    Ok(Parsed {
        request: parse::write_request(
            member,
            scores,
            op,
            metadata,
            at_us,
            option(&opts, "PERIOD").map(str::to_owned),
            (
                option(&opts, "PARTITION").map(str::to_owned),
                option(&opts, "TEAM").map(str::to_owned),
            ),
        )?,
        shape,
        keyed: keyed_request(&opts, args, next)?,
    })
}

/// Encodes a write's answer.
pub fn reply(out: &mut Out, shape: Shape, w: &WriteOutcome) {
    let o = &w.outcome;
    match shape {
        Shape::Score => super::args::scores(out, &w.columns, &o.scores),
        Shape::Submit => {
            out.array(4);
            super::args::scores(out, &w.columns, &o.scores);
            out.count(o.rank);
            out.int(o.reached_at_us);
            out.bool(o.changed);
        }
    }
}

/// Runs a write that carries an idempotency key: access to the board first (as HTTP
/// checks the target before the body), then the arguments, then the keyed write.
pub async fn run_keyed(
    s: &mut Session,
    spec: &Spec,
    args: &Args<'_>,
    board: &BoardName,
) -> Result<(), CmdError> {
    let caller = s.identity.caller.clone();
    let target = s.app.gate.check_write_target(&caller, board).await?;
    let p = parse(spec, args)?;
    let keyed = p
        .keyed
        .ok_or_else(|| CmdError::Raw("ERR no idempotency key".into()))?;
    let change = Change::Write(p.request);
    let r = s.app.gate.submit(&target, change, Some(keyed)).await?;
    reply(&mut s.out, p.shape, &r.answer.into_written()?);
    Ok(())
}
