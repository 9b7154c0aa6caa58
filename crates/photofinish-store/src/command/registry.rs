//! The board registry's two records (docs/SPEC.md §12, "What spans boards"): a board's
//! name listed before its create is logged ([`Register`]), counted against the board
//! limit the record carries, and taken out after its delete ([`Unregister`]). On the
//! scale-out layout they are the entries of a namespace's lifecycle log
//! (docs/redis-layout.md), which every node applies in one order: a limit decided there
//! is exact under any number of nodes, and a refusal changes nothing. The embedded store
//! counts its boards in its one log and logs neither.
//!
//! Each record's fields, its bytes (a kind of its own: [`REGISTER`], [`UNREGISTER`]) and
//! its effect on the state are here, side by side.

use std::collections::BTreeSet;

use photofinish_core::BoardError;

use crate::codec::{Dec, DecodeError, Enc};

/// A board listed: `board` str, then a flag byte and, when it is 1, the limit u64.
pub(super) const REGISTER: u8 = 22;
/// A board unlisted: `board` str.
pub(super) const UNREGISTER: u8 = 23;

/// List `board` in the registry, unless that would take it past `max_boards`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    /// The board.
    pub board: String,
    /// The board limit in force when it was logged (`None`: none).
    pub max_boards: Option<u64>,
}

/// Take `board` out of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unregister {
    /// The board.
    pub board: String,
}

impl Register {
    pub(super) fn encode(&self, e: &mut Enc) {
        e.u8(REGISTER);
        e.str(&self.board);
        e.u8(u8::from(self.max_boards.is_some()));
        if let Some(max) = self.max_boards {
            e.u64(max);
        }
    }

    pub(super) fn decode(d: &mut Dec<'_>) -> Result<Self, DecodeError> {
        let board = d.str()?;
        let max_boards = match d.u8()? {
            0 => None,
            1 => Some(d.u64()?),
            f => return Err(DecodeError(format!("a registration's flag {f}"))),
        };
        Ok(Register { board, max_boards })
    }

    /// Lists the board in `listed`: `true` if it was not listed, `false` if it was (a
    /// create of a board that exists passes at the limit); `too_many_boards`, changing
    /// nothing, when `listed` holds the limit already.
    pub(crate) fn apply(&self, listed: &mut BTreeSet<String>) -> Result<bool, BoardError> {
        if listed.contains(&self.board) {
            return Ok(false);
        }
        if let Some(max) = self.max_boards.filter(|m| listed.len() as u64 >= *m) {
            return Err(BoardError::TooManyBoards(max));
        }
        listed.insert(self.board.clone());
        Ok(true)
    }
}

impl Unregister {
    pub(super) fn encode(&self, e: &mut Enc) {
        e.u8(UNREGISTER);
        e.str(&self.board);
    }

    pub(super) fn decode(d: &mut Dec<'_>) -> Result<Self, DecodeError> {
        Ok(Unregister { board: d.str()? })
    }

    /// Unlists the board from `listed` (whether or not it was listed).
    pub(crate) fn apply(&self, listed: &mut BTreeSet<String>) {
        listed.remove(&self.board);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Command;
    use crate::state::{Applied, State};

    fn register(board: &str, max: Option<u64>) -> Command {
        Command::Register(Register {
            board: board.into(),
            max_boards: max,
        })
    }

    #[test]
    fn records_round_trip() {
        for cmd in [
            register("a", None),
            register("b", Some(7)),
            Command::Unregister(Unregister { board: "c".into() }),
        ] {
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        }
    }

    #[test]
    fn the_limit_is_exact_and_a_refusal_changes_nothing() {
        let state = State::default();
        for b in ["a", "b"] {
            assert_eq!(
                state.apply(&register(b, Some(2))),
                Ok(Applied::Registered(true))
            );
        }
        assert_eq!(
            state.apply(&register("c", Some(2))),
            Err(BoardError::TooManyBoards(2))
        );
        // One listed already passes at the limit, changing nothing.
        assert_eq!(
            state.apply(&register("a", Some(2))),
            Ok(Applied::Registered(false))
        );
        assert_eq!(state.registered(), ["a", "b"]);
        let gone = Command::Unregister(Unregister { board: "a".into() });
        assert_eq!(state.apply(&gone), Ok(Applied::Unregistered));
        assert_eq!(
            state.apply(&register("c", Some(2))),
            Ok(Applied::Registered(true))
        );
        assert_eq!(state.registered(), ["b", "c"]);
    }
}
