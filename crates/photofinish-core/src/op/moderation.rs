//! The moderation read of docs/SPEC.md §15 as a value: a board's hidden members
//! ([`ReadHidden`], admins only). Hiding and showing a member are changes
//! (the [`Hide`](super::Hide) operation); what a hidden member means to every other read
//! is the board's view of its rankings ([`crate::Ranking::view`], [`crate::ranking::Visible`]).

use crate::access::{Action, Viewer};
use crate::board::Board;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::BoardName;
use crate::view::HiddenList;

use super::period::page;
use super::BoardRead;

/// A board's hidden members, by name; `offset`/`limit` page them. Admins only: the list
/// says who is hidden.
#[derive(Debug, Clone)]
pub struct ReadHidden {
    /// The board.
    pub board: BoardName,
    /// First member listed, 0-based.
    pub offset: u64,
    /// Most members listed.
    pub limit: u64,
}

impl Refuses for ReadHidden {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::BoardNotFound];
}

impl BoardRead for ReadHidden {
    type Output = HiddenList;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn action(&self) -> Action<'_> {
        Action::Manage { board: &self.board }
    }
    fn read(&self, b: &Board, _now_us: i64, _viewer: &Viewer) -> Result<HiddenList, BoardError> {
        let all = b.hidden();
        Ok(HiddenList {
            total: all.len() as u64,
            members: page(all, self.offset, self.limit)
                .into_iter()
                .map(str::to_owned)
                .collect(),
        })
    }
}
