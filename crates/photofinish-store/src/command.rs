//! The commands the log records: every state change is one of these, applied in log order.
//!
//! A command is logged with everything its effect depends on — in particular the instant the
//! writer stamped on it — so replaying the log rebuilds exactly the state that was served.

use photofinish_core::budget::OverBudget;
use photofinish_core::columns::{ScoreInput, MAX_COLUMNS};
use photofinish_core::view::BoardPatch;
use photofinish_core::{BoardConfig, Op};

use crate::codec::{op_code, Dec, DecodeError, Enc};

/// A state change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Create a board (a no-op if it exists with this config; a conflict otherwise).
    CreateBoard {
        /// Board name.
        board: String,
        /// Its config.
        config: BoardConfig,
        /// The server's board limit when the command was sequenced (`None` in logs from
        /// before limits: no limit).
        max_boards: Option<u64>,
        /// The members hidden across every board when the create was sequenced (docs/SPEC.md
        /// §15): the new board hides them too. (On the embedded store the state's own set
        /// applies as well, so this is empty there.)
        hidden: Vec<String>,
    },
    /// Delete a board and all its periods.
    DeleteBoard {
        /// Board name.
        board: String,
    },
    /// A score write.
    Write {
        /// Board name.
        board: String,
        /// Member name.
        member: String,
        /// The operator, `None` for the board's rule.
        op: Option<Op>,
        /// The scores as the write gave them, resolved against the board's columns when
        /// the command is applied (so a replay decides alike).
        scores: ScoreInput,
        /// The write's instant: explicit `at`, or stamped by the writer from its clock.
        at_us: i64,
        /// An instant in (the start of) the period the write names (a closed one within the
        /// board's grace, checked before it was logged); `None` for the period of `at_us`.
        period_us: Option<i64>,
        /// New metadata (a serialized JSON object), or `None` to keep it.
        metadata: Option<String>,
        /// The memory budget was over when the write was admitted: it may not add a member.
        over_budget: Option<OverBudget>,
    },
    /// Change a board's changeable settings.
    PatchBoard {
        /// Board name.
        board: String,
        /// The change.
        patch: BoardPatch,
    },
    /// Commands applied under an idempotency key: a write, a batch of writes, a member
    /// delete or a board create, with the key in the same record.
    Keyed {
        /// The key.
        key: KeyRecord,
        /// Whether `cmds` is a batch (answered entry by entry) rather than one command.
        batch: bool,
        /// The commands.
        cmds: Vec<Command>,
    },
    /// Move a board's webhook cursor forward ([`photofinish_core::hook`]): the period
    /// before it was posted (or given up), or the webhook was first seen.
    HookAdvance {
        /// Board name.
        board: String,
        /// The new cursor, µs.
        cursor_us: i64,
    },
    /// Fill an empty period with a ranking built by an import (docs/SPEC.md §11), read
    /// from its import file ([`crate::import`]) in the data directory.
    Import {
        /// Board name.
        board: String,
        /// An instant in the period: its start (0 for `all`).
        period_us: i64,
        /// The import file's name.
        file: String,
        /// Entries in it.
        entries: u64,
        /// Members the import hides on the board (docs/SPEC.md §15): rows an admin's
        /// export marked `hidden`.
        hidden: Vec<String>,
    },
    /// Marks an instant in a board's log and changes nothing: on the scale-out layout a
    /// period that begins without writes is announced by the first entry in it, and a node
    /// whose readers wait for that reset appends this one (docs/redis-layout.md, "Events").
    Tick {
        /// Board name.
        board: String,
        /// The instant, stamped when the command is sequenced.
        now_us: i64,
    },
    /// One step of a league's close (docs/SPEC.md §14, core `league.rs`): the next
    /// cohorts of the oldest period whose close is due at `now_us`; nothing when none is.
    Close {
        /// Board name.
        board: String,
        /// The instant, stamped when the command is sequenced.
        now_us: i64,
        /// The most members the step ranks (whole cohorts).
        budget: u32,
    },
    /// A member joins the period of `at_us` (docs/SPEC.md §14): a seat without an entry.
    Join {
        /// Board name.
        board: String,
        /// Member name.
        member: String,
        /// The instant, stamped when the command is sequenced.
        at_us: i64,
        /// The memory budget was over when the join was admitted: it may not take a seat.
        over_budget: Option<OverBudget>,
    },
    /// An admin change with who made it and when (docs/SPEC.md §15): `cmd` applied, and
    /// on success an entry in the audit log, from this one record.
    Audited {
        /// The acting credential's name (`open` on a server without credentials).
        actor: String,
        /// The instant, stamped when the command is sequenced.
        at_us: i64,
        /// The change: a board created, patched or deleted, a member deleted, hidden or
        /// shown, an import (any of them under an idempotency key, where it takes one).
        cmd: Box<Command>,
    },
    /// Hide a member on a board, or show it again (docs/SPEC.md §15).
    Hide {
        /// Board name.
        board: String,
        /// Member name.
        member: String,
        /// Hide (`true`) or unhide.
        hidden: bool,
        /// As a hide across every board (the scale-out layout logs one in each board's
        /// log) rather than on this board alone.
        everywhere: bool,
    },
    /// Hide a member across every board, present and future, or undo that (the embedded
    /// store's one record of it; docs/SPEC.md §15).
    HideEverywhere {
        /// Member name.
        member: String,
        /// Hide (`true`) or unhide.
        hidden: bool,
    },
    /// Remove a member from one period.
    DeleteMember {
        /// Board name.
        board: String,
        /// `current`, `previous` or a period id, resolved at `now_us`.
        period: String,
        /// Member name.
        member: String,
        /// The writer's clock when the command was sequenced.
        now_us: i64,
    },
}

/// What a keyed command is logged with (docs/SPEC.md §7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    /// The key's identity: scope, board and key
    /// ([`photofinish_core::idempotency::IdempotencyKey::id`]), hashed
    /// ([`photofinish_core::idempotency::digest`]).
    pub id: u128,
    /// The request's fingerprint ([`crate::idempotency::short_fingerprint`]).
    pub fingerprint: [u8; 16],
    /// How long it is kept, µs.
    pub ttl_us: i64,
    /// The writer's clock when the command was sequenced (stamped at commit): the key
    /// expires at `now_us + ttl_us`, and the inner writes without an `at` take this instant.
    pub now_us: i64,
}

/// The `at_us` of a write inside a keyed command that the commit stamps with the record's
/// `now_us` (never a valid instant: those are ≥ 0).
pub const STAMP_AT_COMMIT: i64 = i64::MIN;

/// CreateBoard as the first format wrote it: a config without settings (read only).
const CREATE_BOARD_V1: u8 = 1;
const DELETE_BOARD: u8 = 2;
const WRITE: u8 = 3;
const DELETE_MEMBER: u8 = 4;
const CREATE_BOARD: u8 = 5;
const PATCH_BOARD: u8 = 6;
/// CreateBoard with the board limit in force.
const CREATE_BOARD_LIMITED: u8 = 7;
/// Write with the memory budget's verdict (only while it is over: otherwise `WRITE`).
const WRITE_OVER_BUDGET: u8 = 8;
/// Commands under an idempotency key.
const KEYED: u8 = 9;
/// Write naming its period: the fields of kind 3, the period's start, then a flag byte
/// and, when it is 1, the memory budget's verdict as kind 8 carries it.
const WRITE_IN_PERIOD: u8 = 10;
/// The webhook's cursor moved: board, cursor.
const HOOK_ADVANCE: u8 = 11;
/// An import filled a period: board, period instant, import file name, entries.
const IMPORT: u8 = 12;
/// An instant marked in a board's log (the scale-out layout's): board, instant.
const TICK: u8 = 13;
/// Write with `scores` (docs/SPEC.md §13): board, member, operator, the form (1: by
/// name, 2: in column order), a count and each value (after its name, by name),
/// instant, metadata, then a flag byte (1: the period's start follows; 2: the budget's
/// verdict follows) and those. A write with `score` is logged as kinds 3, 8 and 10, as
/// before columns.
const WRITE_COLUMNS: u8 = 14;
/// A member joins a period (docs/SPEC.md §14): board, member, instant, then a flag byte
/// (1: the budget's verdict follows, as kind 8 carries it) and that.
const JOIN: u8 = 15;
/// One step of a league's close (docs/SPEC.md §14): board, instant, budget (members).
const CLOSE: u8 = 16;
/// A member hidden or shown again (docs/SPEC.md §15): board, member, then flags: bit 0
/// hide (else unhide), bit 1 as a hide across every board.
const HIDE: u8 = 17;
/// An import that hides members (docs/SPEC.md §15): the fields of kind 12, then a count
/// and each member's name. An import that hides none is kind 12.
const IMPORT_HIDING: u8 = 18;
/// A member hidden or shown across every board, on the embedded store (docs/SPEC.md
/// §15): `member` str, then 1 (hide) or 0.
const HIDE_EVERYWHERE: u8 = 20;
/// A create of a board that hides the members hidden across every board: `board` str,
/// `config2`, `limited` u8 and (when 1) `max_boards` u64, then a count u32 and each
/// member's name.
const CREATE_BOARD_HIDING: u8 = 21;
/// An admin change and who made it (docs/SPEC.md §15): `actor` str, `at_us` i64 (stamped
/// when sequenced), then the change as a command of its own, kind byte first.
const AUDITED: u8 = 19;
/// [`WRITE_COLUMNS`]' forms.
const BY_NAME: u8 = 1;
const IN_ORDER: u8 = 2;

/// The instant a command that takes one ([`Command::takes_time`]) is stamped with: the
/// clock's `now_us`, or 1 µs past the previous stamp when the clock has not moved past it
/// (docs/SPEC.md §12, "Time"). So stamped instants strictly increase in log order, and two
/// writes of one score never share a `reached_at`: the embedded writer and every Redis node
/// stamp by this one rule.
pub fn effective_time(now_us: i64, previous_us: i64) -> i64 {
    now_us.max(previous_us.saturating_add(1))
}

/// A count u32 and that many names (at most [`photofinish_core::config::MAX_HIDDEN_MEMBERS`]).
fn dec_names(d: &mut Dec<'_>) -> Result<Vec<String>, DecodeError> {
    let n = d.u32()? as usize;
    if n > photofinish_core::config::MAX_HIDDEN_MEMBERS {
        return Err(DecodeError(format!("{n} hidden members")));
    }
    (0..n).map(|_| d.str()).collect()
}

/// A flag byte: 0 or 1.
fn dec_flag(d: &mut Dec<'_>) -> Result<bool, DecodeError> {
    match d.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        f => Err(DecodeError(format!("a flag {f}"))),
    }
}

/// Whether an encoded command ([`Command::encode`]) is an import's (its ranking must be
/// staged before it is applied), read from its first byte without decoding it.
pub fn is_import(encoded: &[u8]) -> bool {
    match encoded.first() {
        Some(&(IMPORT | IMPORT_HIDING)) => true,
        // An audited import (admin changes are rare: decoding it whole costs nothing).
        Some(&AUDITED) => {
            Command::decode(encoded).is_ok_and(|c| matches!(c.inner(), Command::Import { .. }))
        }
        _ => false,
    }
}

impl Command {
    /// Whether stamping gives this command an instant: a write whose time the writer
    /// stamps (`stamp`), a member delete, and a keyed command (its record and the inner
    /// commands that wait for [`STAMP_AT_COMMIT`]).
    pub fn takes_time(&self, stamp: bool) -> bool {
        matches!(
            self,
            Command::Write { .. } if stamp
        ) || matches!(
            self,
            Command::DeleteMember { .. }
                | Command::Audited { .. }
                | Command::Keyed { .. }
                | Command::Tick { .. }
                | Command::Close { .. }
                | Command::Join { .. }
        )
    }

    /// Gives the command the instant `now_us` where it takes one ([`Self::takes_time`]):
    /// what a log does when it sequences the command, so that applying it never reads a
    /// clock. A keyed command's record and inner commands share the one instant.
    pub fn stamp(&mut self, now_us: i64, stamp: bool) {
        match self {
            Command::Write { at_us, .. } if stamp => *at_us = now_us,
            Command::DeleteMember { now_us: t, .. }
            | Command::Tick { now_us: t, .. }
            | Command::Close { now_us: t, .. }
            | Command::Join { at_us: t, .. } => *t = now_us,
            Command::Audited { at_us, cmd, .. } => {
                *at_us = now_us;
                cmd.stamp(now_us, stamp);
            }
            Command::Keyed { key, cmds, .. } => {
                key.now_us = now_us;
                for c in cmds {
                    match c {
                        Command::Write { at_us, .. } if *at_us == STAMP_AT_COMMIT => {
                            *at_us = now_us
                        }
                        Command::DeleteMember { now_us: t, .. } => *t = now_us,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// The board the command is about.
    pub fn board(&self) -> &str {
        match self {
            Command::CreateBoard { board, .. }
            | Command::DeleteBoard { board }
            | Command::Write { board, .. }
            | Command::DeleteMember { board, .. }
            | Command::HookAdvance { board, .. }
            | Command::Tick { board, .. }
            | Command::Close { board, .. }
            | Command::Join { board, .. }
            | Command::Hide { board, .. }
            | Command::Import { board, .. }
            | Command::PatchBoard { board, .. } => board,
            Command::Keyed { cmds, .. } => cmds.first().map_or("", Command::board),
            Command::Audited { cmd, .. } => cmd.board(),
            // Every board's: the embedded store's alone, which has one log.
            Command::HideEverywhere { .. } => "",
        }
    }

    /// The change itself: an audited command's inner one, any other as it is.
    pub fn inner(&self) -> &Command {
        match self {
            Command::Audited { cmd, .. } => cmd.inner(),
            other => other,
        }
    }

    /// Appends the encoded command (docs/format.md, "Payload").
    pub fn encode(&self, e: &mut Enc) {
        match self {
            Command::CreateBoard {
                board,
                config,
                max_boards,
                hidden,
            } => {
                e.u8(if !hidden.is_empty() {
                    CREATE_BOARD_HIDING
                } else if max_boards.is_some() {
                    CREATE_BOARD_LIMITED
                } else {
                    CREATE_BOARD
                });
                e.str(board);
                e.config2(config);
                if !hidden.is_empty() {
                    e.u8(u8::from(max_boards.is_some()));
                }
                if let Some(max) = max_boards {
                    e.u64(*max);
                }
                if !hidden.is_empty() {
                    e.u32(hidden.len() as u32);
                    for m in hidden {
                        e.str(m);
                    }
                }
            }
            Command::HideEverywhere { member, hidden } => {
                e.u8(HIDE_EVERYWHERE);
                e.str(member);
                e.u8(u8::from(*hidden));
            }
            Command::PatchBoard { board, patch } => {
                e.u8(PATCH_BOARD);
                e.str(board);
                e.json(patch);
            }
            Command::DeleteBoard { board } => {
                e.u8(DELETE_BOARD);
                e.str(board);
            }
            Command::HookAdvance { board, cursor_us } => {
                e.u8(HOOK_ADVANCE);
                e.str(board);
                e.i64(*cursor_us);
            }
            Command::Tick { board, now_us } => {
                e.u8(TICK);
                e.str(board);
                e.i64(*now_us);
            }
            Command::Close {
                board,
                now_us,
                budget,
            } => {
                e.u8(CLOSE);
                e.str(board);
                e.i64(*now_us);
                e.u32(*budget);
            }
            Command::Join {
                board,
                member,
                at_us,
                over_budget,
            } => {
                e.u8(JOIN);
                e.str(board);
                e.str(member);
                e.i64(*at_us);
                e.u8(u8::from(over_budget.is_some()));
                enc_over_budget(e, over_budget);
            }
            Command::Audited { actor, at_us, cmd } => {
                e.u8(AUDITED);
                e.str(actor);
                e.i64(*at_us);
                cmd.encode(e);
            }
            Command::Hide {
                board,
                member,
                hidden,
                everywhere,
            } => {
                e.u8(HIDE);
                e.str(board);
                e.str(member);
                e.u8(u8::from(*hidden) | (u8::from(*everywhere) << 1));
            }
            Command::Import {
                board,
                period_us,
                file,
                entries,
                hidden,
            } => {
                e.u8(if hidden.is_empty() {
                    IMPORT
                } else {
                    IMPORT_HIDING
                });
                e.str(board);
                e.i64(*period_us);
                e.str(file);
                e.u64(*entries);
                if !hidden.is_empty() {
                    e.u32(hidden.len() as u32);
                    for m in hidden {
                        e.str(m);
                    }
                }
            }
            Command::Write {
                board,
                member,
                op,
                scores: scores @ (ScoreInput::Named(_) | ScoreInput::Positional(_)),
                at_us,
                period_us,
                metadata,
                over_budget,
            } => {
                e.u8(WRITE_COLUMNS);
                e.str(board);
                e.str(member);
                e.u8(op_code(*op));
                enc_scores(e, scores);
                e.i64(*at_us);
                e.opt_str(metadata.as_deref());
                e.u8(u8::from(period_us.is_some()) | u8::from(over_budget.is_some()) << 1);
                if let Some(start) = period_us {
                    e.i64(*start);
                }
                enc_over_budget(e, over_budget);
            }
            Command::Write {
                board,
                member,
                op,
                scores: ScoreInput::Score(value),
                at_us,
                period_us,
                metadata,
                over_budget,
            } => {
                e.u8(match (period_us, over_budget) {
                    (Some(_), _) => WRITE_IN_PERIOD,
                    (None, Some(_)) => WRITE_OVER_BUDGET,
                    (None, None) => WRITE,
                });
                e.str(board);
                e.str(member);
                e.u8(op_code(*op));
                e.i64(*value);
                e.i64(*at_us);
                e.opt_str(metadata.as_deref());
                if let Some(start) = period_us {
                    e.i64(*start);
                    e.u8(u8::from(over_budget.is_some()));
                }
                enc_over_budget(e, over_budget);
            }
            Command::Keyed { key, batch, cmds } => {
                e.u8(KEYED);
                e.0.extend_from_slice(&key.id.to_le_bytes());
                e.0.extend_from_slice(&key.fingerprint);
                e.i64(key.ttl_us);
                e.i64(key.now_us);
                e.u8(u8::from(*batch));
                e.u32(cmds.len() as u32);
                for c in cmds {
                    c.encode(e);
                }
            }
            Command::DeleteMember {
                board,
                period,
                member,
                now_us,
            } => {
                e.u8(DELETE_MEMBER);
                e.str(board);
                e.str(period);
                e.str(member);
                e.i64(*now_us);
            }
        }
    }

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
        let cmd = match d.u8()? {
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
            CREATE_BOARD_V1 => Command::CreateBoard {
                board: d.str()?,
                config: d.config()?,
                max_boards: None,
                hidden: Vec::new(),
            },
            kind @ (CREATE_BOARD | CREATE_BOARD_LIMITED) => Command::CreateBoard {
                board: d.str()?,
                config: d.config2()?,
                max_boards: if kind == CREATE_BOARD_LIMITED {
                    Some(d.u64()?)
                } else {
                    None
                },
                hidden: Vec::new(),
            },
            CREATE_BOARD_HIDING => {
                let (board, config) = (d.str()?, d.config2()?);
                let max_boards = if d.u8()? != 0 { Some(d.u64()?) } else { None };
                Command::CreateBoard {
                    board,
                    config,
                    max_boards,
                    hidden: dec_names(d)?,
                }
            }
            HIDE_EVERYWHERE => Command::HideEverywhere {
                member: d.str()?,
                hidden: dec_flag(d)?,
            },
            PATCH_BOARD => Command::PatchBoard {
                board: d.str()?,
                patch: d.json()?,
            },
            DELETE_BOARD => Command::DeleteBoard { board: d.str()? },
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
            JOIN => {
                let (board, member, at_us) = (d.str()?, d.str()?, d.i64()?);
                let over = d.u8()? & 1 != 0;
                Command::Join {
                    board,
                    member,
                    at_us,
                    over_budget: dec_over_budget(d, over)?,
                }
            }
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
                Command::Hide {
                    board,
                    member,
                    hidden: flags & 1 != 0,
                    everywhere: flags & 2 != 0,
                }
            }
            kind @ (IMPORT | IMPORT_HIDING) => {
                let (board, period_us, file, entries) = (d.str()?, d.i64()?, d.str()?, d.u64()?);
                let mut hidden = Vec::new();
                if kind == IMPORT_HIDING {
                    let n = d.u32()? as usize;
                    if n > photofinish_core::config::MAX_HIDDEN_MEMBERS {
                        return Err(DecodeError(format!("an import hiding {n} members")));
                    }
                    for _ in 0..n {
                        hidden.push(d.str()?);
                    }
                }
                Command::Import {
                    board,
                    period_us,
                    file,
                    entries,
                    hidden,
                }
            }
            WRITE_COLUMNS => {
                let (board, member, op) = (d.str()?, d.str()?, d.op()?);
                let scores = dec_scores(d)?;
                let (at_us, metadata, flags) = (d.i64()?, d.opt_str()?, d.u8()?);
                let period_us = if flags & 1 != 0 { Some(d.i64()?) } else { None };
                let over_budget = dec_over_budget(d, flags & 2 != 0)?;
                Command::Write {
                    board,
                    member,
                    op,
                    scores,
                    at_us,
                    period_us,
                    metadata,
                    over_budget,
                }
            }
            kind @ (WRITE | WRITE_OVER_BUDGET | WRITE_IN_PERIOD) => {
                let (board, member, op, value, at_us, metadata) = (
                    d.str()?,
                    d.str()?,
                    d.op()?,
                    d.i64()?,
                    d.i64()?,
                    d.opt_str()?,
                );
                let (period_us, over) = match kind {
                    WRITE_IN_PERIOD => (Some(d.i64()?), d.u8()? != 0),
                    _ => (None, kind == WRITE_OVER_BUDGET),
                };
                let over_budget = dec_over_budget(d, over)?;
                Command::Write {
                    board,
                    member,
                    op,
                    scores: ScoreInput::Score(value),
                    at_us,
                    period_us,
                    metadata,
                    over_budget,
                }
            }
            DELETE_MEMBER => Command::DeleteMember {
                board: d.str()?,
                period: d.str()?,
                member: d.str()?,
                now_us: d.i64()?,
            },
            k => return Err(DecodeError(format!("unknown command kind {k}"))),
        };
        Ok(cmd)
    }
}

/// A write's memory-budget verdict, when it has one: `estimate` u64, `limit` u64 (whether
/// it follows is the kind's or a flag's to say).
fn enc_over_budget(e: &mut Enc, over: &Option<OverBudget>) {
    if let Some(over) = over {
        e.u64(over.estimate);
        e.u64(over.limit);
    }
}

/// The verdict [`enc_over_budget`] wrote, when `present`.
fn dec_over_budget(d: &mut Dec<'_>, present: bool) -> Result<Option<OverBudget>, DecodeError> {
    if !present {
        return Ok(None);
    }
    Ok(Some(OverBudget {
        estimate: d.u64()?,
        limit: d.u64()?,
    }))
}

/// A write's `scores` in [`WRITE_COLUMNS`]' layout.
fn enc_scores(e: &mut Enc, scores: &ScoreInput) {
    match scores {
        ScoreInput::Named(pairs) => {
            e.u8(BY_NAME);
            e.u8(pairs.len() as u8);
            for (name, v) in pairs {
                e.str(name);
                e.i64(*v);
            }
        }
        ScoreInput::Positional(values) => {
            e.u8(IN_ORDER);
            e.u8(values.len() as u8);
            for v in values {
                e.i64(*v);
            }
        }
        ScoreInput::Score(v) => {
            e.u8(IN_ORDER);
            e.u8(1);
            e.i64(*v);
        }
    }
}

fn dec_scores(d: &mut Dec<'_>) -> Result<ScoreInput, DecodeError> {
    let (form, n) = (d.u8()?, d.u8()?);
    if n as usize > MAX_COLUMNS {
        return Err(DecodeError(format!("{n} scores in a write")));
    }
    Ok(match form {
        BY_NAME => ScoreInput::Named(
            (0..n)
                .map(|_| Ok((d.str()?, d.i64()?)))
                .collect::<Result<_, DecodeError>>()?,
        ),
        IN_ORDER => ScoreInput::Positional(
            (0..n)
                .map(|_| d.i64())
                .collect::<Result<_, DecodeError>>()?,
        ),
        f => return Err(DecodeError(format!("unknown scores form {f}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use photofinish_core::BoardSettings;

    /// Logs written before board settings existed (kind 1, config without settings)
    /// still replay: the settings take their defaults.
    #[test]
    fn a_first_format_create_board_still_decodes() {
        let config = BoardConfig {
            retention: 3,
            ..BoardConfig::default()
        };
        let mut e = Enc::default();
        e.u8(CREATE_BOARD_V1);
        e.str("b");
        e.config(&config);
        let cmd = Command::decode(&e.0).expect("decodes");
        assert_eq!(
            cmd,
            Command::CreateBoard {
                board: "b".into(),
                config: config.clone(),
                max_boards: None,
                hidden: Vec::new(),
            }
        );
    }

    /// A write naming its period round-trips with and without the budget's verdict, and
    /// a plain write still encodes as kind 3.
    #[test]
    fn writes_naming_a_period_round_trip() {
        let write = |period_us, over_budget| Command::Write {
            board: "b".into(),
            member: "ann".into(),
            op: Some(Op::Set),
            scores: photofinish_core::columns::ScoreInput::Score(-7),
            at_us: 1_795_392_005_000_000,
            period_us,
            metadata: Some("{}".into()),
            over_budget,
        };
        let over = Some(OverBudget {
            estimate: 9,
            limit: 8,
        });
        for cmd in [
            write(Some(1_795_305_600_000_000), None),
            write(Some(0), over),
            write(None, over),
            write(None, None),
        ] {
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        }
        let mut e = Enc::default();
        write(None, None).encode(&mut e);
        assert_eq!(e.0[0], WRITE);
    }

    #[test]
    fn imports_round_trip() {
        for (hidden, kind) in [
            (Vec::new(), IMPORT),
            (vec!["mallory".to_owned(), "eve".to_owned()], IMPORT_HIDING),
        ] {
            let cmd = Command::Import {
                board: "b".into(),
                period_us: 1_795_305_600_000_000,
                file: "import-1-2.rank".into(),
                entries: 10_000_000,
                hidden,
            };
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], kind);
            assert!(is_import(&e.0));
            assert_eq!(Command::decode(&e.0).expect("ok"), cmd);
        }
    }

    #[test]
    fn hook_advances_round_trip() {
        for cursor_us in [0, 1_795_392_000_000_000, i64::MAX] {
            let cmd = Command::HookAdvance {
                board: "daily".into(),
                cursor_us,
            };
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], HOOK_ADVANCE);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        }
    }

    #[test]
    fn joins_round_trip() {
        for over_budget in [
            None,
            Some(OverBudget {
                estimate: 9,
                limit: 8,
            }),
        ] {
            let mut cmd = Command::Join {
                board: "cup".into(),
                member: "ann".into(),
                at_us: 0,
                over_budget,
            };
            assert!(cmd.takes_time(true));
            cmd.stamp(1_795_392_000_000_000, true);
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], JOIN);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            assert!(matches!(
                cmd,
                Command::Join {
                    at_us: 1_795_392_000_000_000,
                    ..
                }
            ));
        }
    }

    #[test]
    fn audited_commands_round_trip() {
        let import = Command::Import {
            board: "b".into(),
            period_us: 0,
            file: "import-1.rank".into(),
            entries: 3,
            hidden: vec!["x".into()],
        };
        for inner in [
            import,
            Command::DeleteBoard { board: "b".into() },
            Command::DeleteMember {
                board: "b".into(),
                period: "current".into(),
                member: "m".into(),
                now_us: 0,
            },
        ] {
            let mut cmd = Command::Audited {
                actor: "moderator".into(),
                at_us: 0,
                cmd: Box::new(inner.clone()),
            };
            assert!(cmd.takes_time(false));
            cmd.stamp(1_795_392_000_000_000, false);
            let Command::Audited {
                at_us,
                cmd: stamped,
                ..
            } = &cmd
            else {
                unreachable!()
            };
            assert_eq!(*at_us, 1_795_392_000_000_000);
            if let Command::DeleteMember { now_us, .. } = **stamped {
                assert_eq!(
                    now_us, 1_795_392_000_000_000,
                    "the inner command is stamped too"
                );
            }
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], AUDITED);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            assert_eq!(cmd.board(), "b");
            assert_eq!(cmd.inner().board(), "b");
            assert_eq!(is_import(&e.0), matches!(inner, Command::Import { .. }));
        }
        // One inside another is a damaged record.
        let twice = Command::Audited {
            actor: "a".into(),
            at_us: 1,
            cmd: Box::new(Command::Audited {
                actor: "a".into(),
                at_us: 1,
                cmd: Box::new(Command::DeleteBoard { board: "b".into() }),
            }),
        };
        let mut e = Enc::default();
        twice.encode(&mut e);
        assert!(Command::decode(&e.0).is_err());
    }

    #[test]
    fn hides_round_trip() {
        for (hidden, everywhere) in [(true, false), (false, false), (true, true), (false, true)] {
            let cmd = Command::Hide {
                board: "cup".into(),
                member: "mallory".into(),
                hidden,
                everywhere,
            };
            assert!(!cmd.takes_time(true));
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], HIDE);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            let all = Command::HideEverywhere {
                member: "mallory".into(),
                hidden,
            };
            let mut e = Enc::default();
            all.encode(&mut e);
            assert_eq!(e.0[0], HIDE_EVERYWHERE);
            assert_eq!(Command::decode(&e.0).expect("decodes"), all);
        }
        let mut e = Enc::default();
        e.u8(HIDE);
        e.str("cup");
        e.str("mallory");
        e.u8(4);
        assert!(Command::decode(&e.0).is_err());
        // A create that hides the members hidden everywhere, with and without a limit.
        for max_boards in [None, Some(7)] {
            let cmd = Command::CreateBoard {
                board: "new".into(),
                config: BoardConfig::default(),
                max_boards,
                hidden: vec!["mallory".into(), "eve".into()],
            };
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], CREATE_BOARD_HIDING);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        }
    }

    #[test]
    fn settings_and_patches_round_trip() {
        let config = BoardConfig {
            settings: BoardSettings {
                public_read: true,
                player_writes: true,
                rules: photofinish_core::ScoreRules {
                    min_score: Some(-5),
                    max_score: Some(i64::MAX),
                    max_increment: Some(10),
                    max_members: Some(3),
                },
                grace: 60,
                webhook: Some("https://rewards.example/close".into()),
                webhook_top: Some(10),
                entry: photofinish_core::entry::EntryRules {
                    opens_at: Some(1_795_392_000_000_000),
                    closes_at: Some(1_795_996_800_000_000),
                    max_attempts: Some(3),
                    join_required: true,
                },
            },
            ..BoardConfig::default()
        };
        let patch = BoardPatch {
            retention: Some(9),
            public_read: Some(false),
            player_writes: None,
            min_score: Some(None),
            max_members: Some(Some(4)),
            grace: Some(30),
            webhook: Some(None),
            webhook_top: Some(Some(5)),
            closes_at: Some(None),
            max_attempts: Some(Some(1)),
            ..BoardPatch::default()
        };
        for cmd in [
            Command::CreateBoard {
                board: "b".into(),
                config: config.clone(),
                max_boards: None,
                hidden: Vec::new(),
            },
            Command::CreateBoard {
                board: "b".into(),
                config,
                max_boards: Some(10_000),
                hidden: Vec::new(),
            },
            Command::Write {
                board: "b".into(),
                member: "m".into(),
                op: None,
                scores: photofinish_core::columns::ScoreInput::Score(1),
                at_us: 2,
                period_us: None,
                metadata: None,
                over_budget: Some(OverBudget {
                    estimate: 5,
                    limit: 4,
                }),
            },
            Command::Keyed {
                key: KeyRecord {
                    id: photofinish_core::idempotency::digest("key:ci\u{1}b\u{1}retry-1"),
                    fingerprint: [9; 16],
                    ttl_us: 86_400_000_000,
                    now_us: 77,
                },
                batch: true,
                cmds: vec![
                    Command::Write {
                        board: "b".into(),
                        member: "m".into(),
                        op: Some(photofinish_core::Op::Set),
                        scores: photofinish_core::columns::ScoreInput::Score(-1),
                        at_us: STAMP_AT_COMMIT,
                        period_us: None,
                        metadata: Some("{}".into()),
                        over_budget: None,
                    },
                    Command::DeleteMember {
                        board: "b".into(),
                        period: "current".into(),
                        member: "m".into(),
                        now_us: 0,
                    },
                ],
            },
            Command::PatchBoard {
                board: "b".into(),
                patch,
            },
        ] {
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        }
    }
}
