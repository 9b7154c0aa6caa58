//! A board's create as its log record holds it ([`CreateBoard`]): its fields, its bytes
//! (kinds 1, 5, 7 and 21, docs/format.md) both ways, and its effect on the set of boards,
//! side by side. The door checked the config ([`CheckedConfig`]); the limit and the
//! members hidden everywhere are what the log knew when it sequenced the create, so a
//! replay and every node decide alike.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use photofinish_core::board::HideScope;
use photofinish_core::{Board, BoardConfig, BoardError, CheckedConfig};

use crate::codec::{Dec, DecodeError, Enc};
use crate::state::{read_lock, BoardHandle};

/// A create as the first format wrote it: a config without settings (read only).
pub(super) const CREATE_BOARD_V1: u8 = 1;
/// `board` str, `config2`.
pub(super) const CREATE_BOARD: u8 = 5;
/// Kind 5's fields, then the board limit in force, `max_boards` u64.
pub(super) const CREATE_BOARD_LIMITED: u8 = 7;
/// A create of a board that hides the members hidden across every board: `board` str,
/// `config2`, `limited` u8 and (when 1) `max_boards` u64, then a count u32 and each
/// member's name.
pub(super) const CREATE_BOARD_HIDING: u8 = 21;

/// Whether `kind` is a create's.
pub(super) fn is_create(kind: u8) -> bool {
    matches!(
        kind,
        CREATE_BOARD_V1 | CREATE_BOARD | CREATE_BOARD_LIMITED | CREATE_BOARD_HIDING
    )
}

/// Create a board (a no-op if it exists with this config; a conflict otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateBoard {
    /// Board name.
    pub board: String,
    /// Its config, checked where it entered (the door, or this record being read).
    pub config: CheckedConfig,
    /// The server's board limit when the command was sequenced (`None` in logs from
    /// before limits: no limit).
    pub max_boards: Option<u64>,
    /// The members hidden across every board when the create was sequenced (docs/SPEC.md
    /// §15): the new board hides them too. (On the embedded store the state's own set
    /// applies as well, so this is empty there.)
    pub hidden: Vec<String>,
}

impl CreateBoard {
    pub(super) fn encode(&self, e: &mut Enc) {
        let hiding = !self.hidden.is_empty();
        e.u8(if hiding {
            CREATE_BOARD_HIDING
        } else if self.max_boards.is_some() {
            CREATE_BOARD_LIMITED
        } else {
            CREATE_BOARD
        });
        e.str(&self.board);
        e.config2(&self.config);
        if hiding {
            e.u8(u8::from(self.max_boards.is_some()));
        }
        if let Some(max) = self.max_boards {
            e.u64(max);
        }
        if hiding {
            e.hidden_names(&self.hidden);
        }
    }

    /// What [`Self::encode`] wrote after the kind byte `kind` (one [`is_create`]
    /// accepts). A config that breaks its rules is damage: every create was checked
    /// before it was logged.
    pub(super) fn decode(kind: u8, d: &mut Dec<'_>) -> Result<Self, DecodeError> {
        let board = d.str()?;
        let config = match kind {
            CREATE_BOARD_V1 => d.config()?,
            _ => d.config2()?,
        };
        let config = checked(config)?;
        let max_boards = match kind {
            CREATE_BOARD_LIMITED => Some(d.u64()?),
            CREATE_BOARD_HIDING if d.u8()? != 0 => Some(d.u64()?),
            _ => None,
        };
        let hidden = match kind {
            CREATE_BOARD_HIDING => d.hidden_names()?,
            _ => Vec::new(),
        };
        Ok(Self {
            board,
            config,
            max_boards,
            hidden,
        })
    }

    /// Its effect on `boards`, the members in `everywhere` being hidden across every
    /// board by the state's own set: whether the board is new (`false`: it existed with
    /// this config). A board with another config is a conflict; one beyond the limit the
    /// record carries is refused; either changes nothing.
    pub(crate) fn apply(
        &self,
        boards: &mut BTreeMap<String, BoardHandle>,
        everywhere: impl FnOnce() -> Vec<String>,
    ) -> Result<bool, BoardError> {
        if let Some(existing) = boards.get(&self.board) {
            let existing = read_lock(existing).config().clone();
            return if existing == *self.config {
                Ok(false)
            } else {
                Err(BoardError::ConfigConflict {
                    board: self.board.clone(),
                    existing: serde_json::to_string(&existing).unwrap_or_default(),
                })
            };
        }
        if let Some(max) = self.max_boards.filter(|m| boards.len() as u64 >= *m) {
            return Err(BoardError::TooManyBoards(max));
        }
        let mut b = Board::new(self.config.clone())?;
        // The members hidden across every board: those the command carries (the scale-out
        // layout's, read when it was sequenced) and the state's own (the embedded store's).
        for m in self.hidden.iter().chain(&everywhere()) {
            b.hide_as(m, HideScope::Everywhere, None)?;
        }
        boards.insert(self.board.clone(), Arc::new(RwLock::new(b)));
        Ok(true)
    }
}

/// A logged config, checked as it is read.
fn checked(config: BoardConfig) -> Result<CheckedConfig, DecodeError> {
    config
        .checked()
        .map_err(|e| DecodeError(format!("a logged board config: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(board: &str, retention: u32, max_boards: Option<u64>) -> CreateBoard {
        let config = BoardConfig {
            retention,
            ..BoardConfig::default()
        };
        CreateBoard {
            board: board.into(),
            config: config.checked().expect("valid"),
            max_boards,
            hidden: vec!["mallory".into()],
        }
    }

    /// A create alike answers "not new"; another config conflicts, and a board past the
    /// limit is refused: neither changes the set of boards. A new board hides the members
    /// hidden everywhere, the record's and the state's.
    #[test]
    fn a_refusal_changes_nothing_and_a_new_board_hides_the_hidden() {
        let mut boards = BTreeMap::new();
        let everywhere = || vec!["eve".to_owned()];
        assert_eq!(
            create("a", 3, Some(2)).apply(&mut boards, everywhere),
            Ok(true)
        );
        assert_eq!(
            create("a", 3, Some(2)).apply(&mut boards, everywhere),
            Ok(false)
        );
        let conflict = create("a", 4, Some(2)).apply(&mut boards, everywhere);
        assert!(matches!(conflict, Err(BoardError::ConfigConflict { .. })));
        assert_eq!(
            create("b", 3, Some(2)).apply(&mut boards, everywhere),
            Ok(true)
        );
        let full = create("c", 3, Some(2)).apply(&mut boards, everywhere);
        assert_eq!(full, Err(BoardError::TooManyBoards(2)));
        assert_eq!(boards.keys().collect::<Vec<_>>(), ["a", "b"]);
        let a = boards["a"].read().expect("lock");
        assert_eq!(a.config().retention, 3);
        assert!(a.is_hidden("mallory") && a.is_hidden("eve"));
    }

    /// Every kind a create is written as reads back as the same record.
    #[test]
    fn every_kind_round_trips() {
        for (max, hidden) in [
            (None, vec![]),
            (Some(7), vec![]),
            (Some(7), vec!["m".into()]),
        ] {
            let c = CreateBoard {
                hidden,
                ..create("a", 3, max)
            };
            let mut e = Enc::default();
            c.encode(&mut e);
            let mut d = Dec::new(&e.0[1..]);
            assert_eq!(CreateBoard::decode(e.0[0], &mut d).expect("decodes"), c);
            assert!(d.is_done());
        }
    }
}
