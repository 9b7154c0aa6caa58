//! A board's delete as its log record holds it ([`DeleteBoard`]): its field, its bytes
//! (kind 2, docs/format.md) both ways, and its effect on the set of boards.

use std::collections::BTreeMap;

use photofinish_core::BoardError;

use crate::codec::{Dec, DecodeError, Enc};
use crate::state::BoardHandle;

/// `board` str.
pub(super) const DELETE_BOARD: u8 = 2;

/// Delete a board and all its periods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteBoard {
    /// Board name.
    pub board: String,
}

impl DeleteBoard {
    pub(super) fn encode(&self, e: &mut Enc) {
        e.u8(DELETE_BOARD);
        e.str(&self.board);
    }

    /// What [`Self::encode`] wrote after its kind byte.
    pub(super) fn decode(d: &mut Dec<'_>) -> Result<Self, DecodeError> {
        Ok(Self { board: d.str()? })
    }

    /// Its effect on `boards`: `board_not_found` when the board is not there.
    pub(crate) fn apply(
        &self,
        boards: &mut BTreeMap<String, BoardHandle>,
    ) -> Result<(), BoardError> {
        match boards.remove(&self.board) {
            Some(_) => Ok(()),
            None => Err(BoardError::BoardNotFound(self.board.clone())),
        }
    }
}
