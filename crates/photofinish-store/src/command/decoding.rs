//! Reading a [`Command`] back from the log's bytes ([`super::encoding`] writes them):
//! every kind ever written decodes, and anything else is a [`DecodeError`], never a panic.

use super::encoding::*;
use super::write::dec_over_budget;
use super::{Command, KeyRecord};
use crate::codec::{Dec, DecodeError};
use photofinish_core::op::{Hide, Join, LoggedOp, Patch, Remove};
use photofinish_core::PeriodRef;

impl Command {
    /// Decodes a whole payload.
    pub fn decode(payload: &[u8]) -> Result<Command, DecodeError> {
        let mut d = Dec::new(payload);
        let cmd = Self::decode_from(&mut d)?;
        if !d.is_done() {
            return Err(DecodeError("trailing bytes after command".into()));
        }
        Ok(cmd)
    }

    fn decode_from(d: &mut Dec<'_>) -> Result<Command, DecodeError> {
        use super::registry::{Register, Unregister, REGISTER, UNREGISTER};
        match d.u8()? {
            REGISTER => Register::decode(d).map(Command::Register),
            UNREGISTER => Unregister::decode(d).map(Command::Unregister),
            super::erased::ERASED => super::erased::Erased::decode(d).map(Command::Erased),
            super::delete::DELETE_BOARD => {
                super::delete::DeleteBoard::decode(d).map(Command::DeleteBoard)
            }
            kind if super::create::is_create(kind) => {
                super::create::CreateBoard::decode(kind, d).map(Command::from)
            }
            kind if super::write::is_write(kind) => {
                super::write::decode(kind, d).map(Command::Write)
            }
            kind @ (KEYED | JOIN | OP | DELETE_MEMBER) => Self::decode_member_change(kind, d),
            kind @ (AUDITED | HIDE | HIDE_EVERYWHERE | IMPORT | IMPORT_HIDING) => {
                Self::decode_admin(kind, d)
            }
            kind => Self::decode_board(kind, d),
        }
    }

    /// What [`Self::encode_board`] wrote, and the kinds no longer written.
    fn decode_board(kind: u8, d: &mut Dec<'_>) -> Result<Command, DecodeError> {
        let cmd = match kind {
            PATCH_BOARD => {
                // No longer written: a patch is an operation of its own module, kind 24.
                let (board, patch) = (d.str()?, d.json()?);
                Command::Op {
                    board,
                    at_us: 0,
                    op: LoggedOp::new(Box::new(Patch::logged(patch))),
                }
            }
            HOOK_ADVANCE => Command::HookAdvance {
                board: d.str()?,
                cursor_us: d.i64()?,
            },
            TICK => Command::Tick {
                board: d.str()?,
                now_us: d.i64()?,
            },
            CLOSE => Command::Close {
                board: d.str()?,
                now_us: d.i64()?,
                budget: d.u32()?,
            },
            k => return Err(DecodeError(format!("unknown command kind {k}"))),
        };
        Ok(cmd)
    }

    /// What [`Self::encode_admin`] wrote.
    fn decode_admin(kind: u8, d: &mut Dec<'_>) -> Result<Command, DecodeError> {
        let cmd = match kind {
            HIDE_EVERYWHERE => Command::HideEverywhere {
                member: d.str()?,
                hidden: dec_flag(d)?,
            },
            AUDITED => {
                let (actor, at_us) = (d.str()?, d.i64()?);
                let cmd = Self::decode_from(d)?;
                if matches!(cmd, Command::Audited { .. }) {
                    return Err(DecodeError(
                        "an audited command inside an audited one".into(),
                    ));
                }
                Command::Audited {
                    actor,
                    at_us,
                    cmd: Box::new(cmd),
                }
            }
            HIDE => {
                let (board, member, flags) = (d.str()?, d.str()?, d.u8()?);
                if flags > 3 {
                    return Err(DecodeError(format!("a hide's flags {flags}")));
                }
                // No longer written: a hide is an operation of its own module, kind 24.
                let hide = Hide::logged(member, flags & 1 != 0, flags & 2 != 0);
                Command::Op {
                    board,
                    at_us: 0,
                    op: LoggedOp::new(Box::new(hide)),
                }
            }
            kind @ (IMPORT | IMPORT_HIDING) => {
                let (board, period_us, file, entries) = (d.str()?, d.i64()?, d.str()?, d.u64()?);
                let hidden = if kind == IMPORT_HIDING {
                    d.hidden_names()?
                } else {
                    Vec::new()
                };
                Command::Import {
                    board,
                    period_us,
                    file,
                    entries,
                    hidden,
                }
            }
            k => unreachable!("decode sends kind {k} elsewhere"),
        };
        Ok(cmd)
    }

    /// What [`Self::encode_member_change`] wrote, but writes.
    fn decode_member_change(kind: u8, d: &mut Dec<'_>) -> Result<Command, DecodeError> {
        let cmd = match kind {
            KEYED => {
                let key = KeyRecord {
                    id: d.u128()?,
                    fingerprint: d.array16()?,
                    ttl_us: d.i64()?,
                    now_us: d.i64()?,
                };
                let batch = d.u8()? != 0;
                let n = d.u32()?;
                let mut cmds = Vec::with_capacity(n.min(4096) as usize);
                for _ in 0..n {
                    match Self::decode_from(d)? {
                        Command::Keyed { .. } => {
                            return Err(DecodeError("a keyed command inside a keyed one".into()))
                        }
                        c => cmds.push(c),
                    }
                }
                Command::Keyed { key, batch, cmds }
            }
            JOIN => {
                let (board, member, at_us) = (d.str()?, d.str()?, d.i64()?);
                let over = d.u8()? & 1 != 0;
                let join = Join::logged(member, dec_over_budget(d, over)?);
                Command::Op {
                    board,
                    at_us,
                    op: LoggedOp::new(Box::new(join)),
                }
            }
            OP => {
                let (board, at_us, name) = (d.str()?, d.i64()?, d.str()?);
                let op = LoggedOp::decode(&name, d.json()?)
                    .map_err(|e| DecodeError(format!("operation {name:?}: {e}")))?;
                Command::Op { board, at_us, op }
            }
            DELETE_MEMBER => {
                // No longer written: a removal is an operation of its own module, kind 24.
                let (board, period, member, at_us) = (d.str()?, d.str()?, d.str()?, d.i64()?);
                let remove = Remove::new(member, &PeriodRef::parse(&period));
                Command::Op {
                    board,
                    at_us,
                    op: LoggedOp::new(Box::new(remove)),
                }
            }
            k => unreachable!("decode sends kind {k} elsewhere"),
        };
        Ok(cmd)
    }
}

/// A flag byte: 0 or 1.
fn dec_flag(d: &mut Dec<'_>) -> Result<bool, DecodeError> {
    match d.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        f => Err(DecodeError(format!("a flag {f}"))),
    }
}
