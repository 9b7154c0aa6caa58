//! The bytes of a remembered answer (docs/format.md, "Idempotency keys"): a kind byte,
//! then a write's outcome and period, a batch's, or an operation's answer — written by
//! [`super::Table::write_to`] and read back by [`decode`]. Kinds are never reused: an
//! answer as an older version wrote it still reads.

use photofinish_core::columns::ColumnNames;
use photofinish_core::idempotency::Answer;
use photofinish_core::op::WriteOutcome;
use photofinish_core::op::{Hide, Join, OpAnswer, Patch, Remove};
use photofinish_core::view::{BoardState, JoinOutcome};
use photofinish_core::{BoardError, ErrorCode, Outcome, Period, Scores};

use super::Remembered;
use crate::codec::{Dec, DecodeError, Enc};

pub(super) const WRITTEN: u8 = 1;
pub(super) const BATCH: u8 = 2;
/// A removal's answer as it was written before a removal was an operation of its own
/// module (read as [`OP`]'s, without its period).
pub(super) const REMOVED: u8 = 3;
pub(super) const CREATED: u8 = 4;
/// A patch's answer as it was written before a patch was an operation of its own module
/// (read as [`OP`]'s; no request took a key on a patch, so no table held one).
pub(super) const PATCHED: u8 = 5;
pub(super) const DELETED: u8 = 6;
/// A join's answer as it was written before a join was an operation of its own module
/// (no request took a key on a join, docs/SPEC.md §7; read as [`OP`]'s).
pub(super) const JOINED: u8 = 7;
/// A hide's answer as it was written before a hide was an operation of its own module
/// (read as [`OP`]'s).
pub(super) const HIDDEN: u8 = 8;
/// The answer of an operation written as one module: its name, then its answer as JSON.
pub(super) const OP: u8 = 9;

pub(super) fn enc_period(e: &mut Enc, p: &Period) {
    e.str(&p.id);
    e.i64(p.start_us);
    e.i64(p.end_us);
}

fn dec_period(d: &mut Dec<'_>) -> Result<Period, DecodeError> {
    Ok(Period {
        id: d.str()?,
        start_us: d.i64()?,
        end_us: d.i64()?,
    })
}

/// An outcome: the first score, rank, reached_at, then a byte whose bit 0 says whether
/// the score changed and bit 1 that the board has several columns, whose names and
/// other values follow (a count byte, each name, each further value), and bit 2 that
/// the member is in a partition, whose key and the rank there (0 for none) follow, and
/// bit 3 that it is in a team, whose key follows that — so a one-column answer is
/// encoded as before columns.
pub(super) fn enc_outcome(e: &mut Enc, o: &Outcome, columns: &ColumnNames, groups: Groups<'_>) {
    e.i64(o.scores.first());
    e.u64(o.rank);
    e.i64(o.reached_at_us);
    let names = columns.get().unwrap_or_default();
    e.u8(u8::from(o.changed)
        | u8::from(!names.is_empty()) << 1
        | u8::from(groups.partition.is_some()) << 2
        | u8::from(groups.team.is_some()) << 3);
    if let Some(p) = groups.partition {
        e.str(p);
        e.u64(o.partition_rank.unwrap_or(0));
    }
    if let Some(t) = groups.team {
        e.str(t);
    }
    if !names.is_empty() {
        e.u8(names.len() as u8);
        for name in names {
            e.str(name);
        }
        for &v in &o.scores.as_slice()[1..] {
            e.i64(v);
        }
    }
}

/// The partition and team of a write's answer.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Groups<'a> {
    pub(super) partition: Option<&'a str>,
    pub(super) team: Option<&'a str>,
}

/// A decoded outcome, with its column names, partition and team.
type DecodedOutcome = (Outcome, ColumnNames, Option<String>, Option<String>);

fn dec_outcome(d: &mut Dec<'_>) -> Result<DecodedOutcome, DecodeError> {
    let (first, rank, reached_at_us, flags) = (d.i64()?, d.u64()?, d.i64()?, d.u8()?);
    let (partition, partition_rank) = if flags & 4 != 0 {
        let (p, rank) = (d.str()?, d.u64()?);
        (Some(p), (rank > 0).then_some(rank))
    } else {
        (None, None)
    };
    let team = if flags & 8 != 0 { Some(d.str()?) } else { None };
    let mut values = vec![first];
    let mut names = Vec::new();
    if flags & 2 != 0 {
        let n = d.u8()?;
        for _ in 0..n {
            names.push(d.str()?);
        }
        for _ in 1..n {
            values.push(d.i64()?);
        }
    }
    let scores = Scores::new(&values)
        .ok_or_else(|| DecodeError(format!("{} scores in an outcome", values.len())))?;
    let outcome = Outcome {
        scores,
        rank,
        reached_at_us,
        changed: flags & 1 != 0,
        partition_rank,
    };
    Ok((outcome, ColumnNames::from_names(names), partition, team))
}

fn enc_written(e: &mut Enc, w: &WriteOutcome) {
    let groups = Groups {
        partition: w.partition.as_deref(),
        team: w.team.as_deref(),
    };
    enc_outcome(e, &w.outcome, &w.columns, groups);
    enc_period(e, &w.period);
}

fn dec_written(d: &mut Dec<'_>) -> Result<WriteOutcome, DecodeError> {
    let (outcome, columns, partition, team) = dec_outcome(d)?;
    Ok(WriteOutcome {
        outcome,
        period: dec_period(d)?,
        columns,
        partition,
        team,
    })
}

pub(super) fn enc_answer(e: &mut Enc, answer: &Answer) {
    match answer {
        Answer::Written(w) => {
            e.u8(WRITTEN);
            enc_written(e, w);
        }
        Answer::Batch(entries) => {
            e.u8(BATCH);
            e.u32(entries.len() as u32);
            for entry in entries {
                match entry {
                    Ok(w) => {
                        e.u8(1);
                        enc_written(e, w);
                    }
                    Err(err) => {
                        e.u8(0);
                        e.str(err.code().as_str());
                        e.str(&err.to_string());
                    }
                }
            }
        }
        Answer::Created { created, state } => {
            e.u8(CREATED);
            e.u8(u8::from(*created));
            enc_state(e, state);
        }
        Answer::Deleted => e.u8(DELETED),
        Answer::Op { op, value } => {
            e.u8(OP);
            e.str(op);
            e.json(value);
        }
    }
}

fn enc_state(e: &mut Enc, state: &BoardState) {
    e.str(&state.name);
    e.config2(&state.config);
    enc_period(e, &state.current);
    e.u64(state.members);
}

fn dec_state(d: &mut Dec<'_>) -> Result<BoardState, DecodeError> {
    Ok(BoardState {
        name: d.str()?,
        config: d.config2()?,
        current: dec_period(d)?,
        members: d.u64()?,
    })
}

/// Reads a remembered key as [`Table::write_to`] writes it.
pub fn decode(d: &mut Dec<'_>) -> Result<(u128, Remembered), DecodeError> {
    let id = d.u128()?;
    let fingerprint = d.array16()?;
    let expires_us = d.i64()?;
    let answer = match d.u8()? {
        WRITTEN => Answer::Written(dec_written(d)?),
        BATCH => {
            let n = d.u32()?;
            let mut entries = Vec::with_capacity(n.min(4096) as usize);
            for _ in 0..n {
                entries.push(if d.u8()? == 1 {
                    Ok(dec_written(d)?)
                } else {
                    let code = d.str()?;
                    let code = ErrorCode::parse(&code)
                        .ok_or_else(|| DecodeError(format!("unknown error code {code:?}")))?;
                    Err(BoardError::Remembered {
                        code,
                        message: d.str()?,
                    })
                });
            }
            Answer::Batch(entries)
        }
        REMOVED => Remove::remembered(),
        CREATED => Answer::Created {
            created: d.u8()? != 0,
            state: Box::new(dec_state(d)?),
        },
        PATCHED => Answer::Op {
            op: Patch::NAME.to_owned(),
            value: OpAnswer::typed(dec_state(d)?),
        },
        DELETED => Answer::Deleted,
        JOINED => {
            let joined = JoinOutcome {
                member: d.str()?,
                period: dec_period(d)?,
                already: d.u8()? != 0,
            };
            Answer::Op {
                op: Join::NAME.to_owned(),
                value: OpAnswer::typed(joined),
            }
        }
        OP => Answer::Op {
            op: d.str()?,
            value: d.json::<serde_json::Value>()?.into(),
        },
        HIDDEN => Answer::Op {
            op: Hide::NAME.to_owned(),
            value: OpAnswer::typed(d.u8()? != 0),
        },
        k => return Err(DecodeError(format!("unknown answer kind {k}"))),
    };
    Ok((
        id,
        Remembered {
            fingerprint,
            expires_us,
            answer,
        },
    ))
}
