//! The commands the log records: every state change is one of these, applied in log order.
//!
//! A command is logged with everything its effect depends on — in particular the instant the
//! writer stamped on it — so replaying the log rebuilds exactly the state that was served.

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
        /// The operator, `None` for the board default.
        op: Option<Op>,
        /// The operand.
        value: i64,
        /// The write's instant: explicit `at`, or stamped by the writer from its clock.
        at_us: i64,
        /// New metadata (a serialized JSON object), or `None` to keep it.
        metadata: Option<String>,
    },
    /// Change a board's changeable settings.
    PatchBoard {
        /// Board name.
        board: String,
        /// The change.
        patch: BoardPatch,
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

/// CreateBoard as the first format wrote it: a config without settings (read only).
const CREATE_BOARD_V1: u8 = 1;
const DELETE_BOARD: u8 = 2;
const WRITE: u8 = 3;
const DELETE_MEMBER: u8 = 4;
const CREATE_BOARD: u8 = 5;
const PATCH_BOARD: u8 = 6;

impl Command {
    /// The board the command is about.
    pub fn board(&self) -> &str {
        match self {
            Command::CreateBoard { board, .. }
            | Command::DeleteBoard { board }
            | Command::Write { board, .. }
            | Command::DeleteMember { board, .. }
            | Command::PatchBoard { board, .. } => board,
        }
    }

    /// Appends the encoded command (docs/format.md, "Payload").
    pub fn encode(&self, e: &mut Enc) {
        match self {
            Command::CreateBoard { board, config } => {
                e.u8(CREATE_BOARD);
                e.str(board);
                e.config2(config);
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
            Command::Write {
                board,
                member,
                op,
                value,
                at_us,
                metadata,
            } => {
                e.u8(WRITE);
                e.str(board);
                e.str(member);
                e.u8(op_code(*op));
                e.i64(*value);
                e.i64(*at_us);
                e.opt_str(metadata.as_deref());
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
        let cmd = match d.u8()? {
            CREATE_BOARD_V1 => Command::CreateBoard {
                board: d.str()?,
                config: d.config()?,
            },
            CREATE_BOARD => Command::CreateBoard {
                board: d.str()?,
                config: d.config2()?,
            },
            PATCH_BOARD => Command::PatchBoard {
                board: d.str()?,
                patch: d.json()?,
            },
            DELETE_BOARD => Command::DeleteBoard { board: d.str()? },
            WRITE => Command::Write {
                board: d.str()?,
                member: d.str()?,
                op: d.op()?,
                value: d.i64()?,
                at_us: d.i64()?,
                metadata: d.opt_str()?,
            },
            DELETE_MEMBER => Command::DeleteMember {
                board: d.str()?,
                period: d.str()?,
                member: d.str()?,
                now_us: d.i64()?,
            },
            k => return Err(DecodeError(format!("unknown command kind {k}"))),
        };
        if !d.is_done() {
            return Err(DecodeError("trailing bytes after command".into()));
        }
        Ok(cmd)
    }
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
            }
        );
    }

    #[test]
    fn settings_and_patches_round_trip() {
        let config = BoardConfig {
            settings: BoardSettings {
                public_read: true,
                player_writes: true,
            },
            ..BoardConfig::default()
        };
        let patch = BoardPatch {
            retention: Some(9),
            public_read: Some(false),
            player_writes: None,
        };
        for cmd in [
            Command::CreateBoard {
                board: "b".into(),
                config,
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
