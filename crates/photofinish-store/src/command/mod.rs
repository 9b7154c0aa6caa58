//! The commands the log records: every state change is one of these, applied in log order.
//!
//! A command is logged with everything its effect depends on — in particular the instant the
//! writer stamped on it — so replaying the log rebuilds exactly the state that was served.

use photofinish_core::op::{LoggedOp, LoggedWrite};

pub use create::CreateBoard;
pub use delete::DeleteBoard;

/// A state change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Create a board ([`create`]: its record, bytes and effect). Boxed: its config is
    /// larger than a write, the command nearly every record is, and every command is
    /// moved several times between a door and the log (docs/bench-history.md §36).
    CreateBoard(Box<CreateBoard>),
    /// Delete a board and all its periods ([`delete`]).
    DeleteBoard(DeleteBoard),
    /// A score write: its record is its module's ([`LoggedWrite`]), its bytes
    /// [`write`]'s.
    Write(LoggedWrite),
    /// Commands applied under an idempotency key: a write, a batch of writes, a board
    /// create or an operation that takes a key (a member delete), with the key in the
    /// same record.
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
    /// An operation written as one module (core's `op::BoardOp`, e.g. a join): its
    /// name and its record, applied at `at_us`. Its record is the operation's own JSON; the
    /// operation is found again by its name (`LoggedOp::decode`).
    Op {
        /// Board name.
        board: String,
        /// The instant, stamped when the command is sequenced.
        at_us: i64,
        /// The operation.
        op: LoggedOp,
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
    /// Hide a member across every board, present and future, or undo that (the embedded
    /// store's one record of it; docs/SPEC.md §15).
    HideEverywhere {
        /// Member name.
        member: String,
        /// Hide (`true`) or unhide.
        hidden: bool,
    },
    /// List a board in a namespace's registry, within the board limit (docs/SPEC.md §12:
    /// the scale-out layout's lifecycle log; [`registry`]).
    Register(registry::Register),
    /// Take a board out of a namespace's registry ([`registry`]).
    Unregister(registry::Unregister),
    /// A member erased everywhere, entered in the erasure ledger ([`erased`]).
    Erased(erased::Erased),
}

impl From<CreateBoard> for Command {
    fn from(create: CreateBoard) -> Self {
        Command::CreateBoard(Box::new(create))
    }
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

pub mod create;
mod decoding;
pub mod delete;
mod encoding;
pub mod erased;
pub mod registry;
mod write;

pub use encoding::is_import;

/// The instant a command that takes one ([`Command::takes_time`]) is stamped with: the
/// clock's `now_us`, or 1 µs past the previous stamp when the clock has not moved past it
/// (docs/SPEC.md §12, "Time"). So stamped instants strictly increase in log order, and two
/// writes of one score never share a `reached_at`: the embedded writer and every Redis node
/// stamp by this one rule.
pub fn effective_time(now_us: i64, previous_us: i64) -> i64 {
    now_us.max(previous_us.saturating_add(1))
}

impl Command {
    /// Whether stamping gives this command an instant: a write whose time the writer
    /// stamps (`stamp`), an operation, and a keyed command (its record and the inner
    /// commands that wait for [`STAMP_AT_COMMIT`]).
    pub fn takes_time(&self, stamp: bool) -> bool {
        matches!(
            self,
            Command::Write(_) if stamp
        ) || matches!(
            self,
            Command::Audited { .. }
                | Command::Keyed { .. }
                | Command::Tick { .. }
                | Command::Close { .. }
                | Command::Op { .. }
                | Command::Erased(_)
        )
    }

    /// Gives the command the instant `now_us` where it takes one ([`Self::takes_time`]):
    /// what a log does when it sequences the command, so that applying it never reads a
    /// clock. A keyed command's record and inner commands share the one instant.
    pub fn stamp(&mut self, now_us: i64, stamp: bool) {
        match self {
            Command::Write(w) if stamp => w.at_us = now_us,
            Command::Tick { now_us: t, .. }
            | Command::Close { now_us: t, .. }
            | Command::Op { at_us: t, .. }
            | Command::Erased(erased::Erased { at_us: t, .. }) => *t = now_us,
            Command::Audited { at_us, cmd, .. } => {
                *at_us = now_us;
                cmd.stamp(now_us, stamp);
            }
            Command::Keyed { key, cmds, .. } => {
                key.now_us = now_us;
                for c in cmds {
                    match c {
                        Command::Write(w) if w.at_us == STAMP_AT_COMMIT => w.at_us = now_us,
                        Command::Op { at_us: t, .. } => *t = now_us,
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
            Command::HookAdvance { board, .. }
            | Command::Tick { board, .. }
            | Command::Close { board, .. }
            | Command::Op { board, .. }
            | Command::Import { board, .. } => board,
            Command::Write(w) => &w.board,
            Command::CreateBoard(c) => &c.board,
            Command::DeleteBoard(d) => &d.board,
            Command::Register(r) => &r.board,
            Command::Unregister(u) => &u.board,
            Command::Keyed { cmds, .. } => cmds.first().map_or("", Command::board),
            Command::Audited { cmd, .. } => cmd.board(),
            // Every board's: the embedded store's alone, which has one log.
            Command::HideEverywhere { .. } | Command::Erased(_) => "",
        }
    }

    /// The change itself: an audited command's inner one, any other as it is.
    pub fn inner(&self) -> &Command {
        match self {
            Command::Audited { cmd, .. } => cmd.inner(),
            other => other,
        }
    }

    /// Whether it erases a member ([`photofinish_core::op::BoardOp::forgets`],
    /// docs/SPEC.md §16): the store then snapshots so the name leaves its files.
    pub fn erases(&self) -> bool {
        match self.inner() {
            Command::Op { op, .. } => op.op().forgets().is_some(),
            Command::Erased(e) => e.member.is_some(),
            _ => false,
        }
    }
}
