//! The one read of every engine: [`read_board`] runs a read of
//! [`photofinish_core::op::read`] on the board's state as the engine holds it, after the
//! engine made it fresh enough ([`Engine::board`]). What each read answers lives with
//! the read, in core.

use photofinish_core::{BoardError, BoardName, ReadFn};

use super::Engine;
use crate::state::read_lock;

/// `Leaderboard::read_board`. The clock is read before the board is made fresh, as a
/// request's instant is when it arrived.
pub async fn read_board<E: Engine + ?Sized>(
    e: &E,
    board: &BoardName,
    read: &mut ReadFn<'_>,
) -> Result<(), BoardError> {
    let now = e.now_us();
    let handle = e.board(board).await?;
    let b = read_lock(&handle);
    read(&b, now);
    Ok(())
}
