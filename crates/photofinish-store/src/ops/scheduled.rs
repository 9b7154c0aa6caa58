//! The steps the clock brings due, over any [`Engine`]: the period-close webhook's cursor
//! (started when a webhook is set, moved after each post; docs/webhooks.md) and a
//! league's close, one bounded step at a time (docs/SPEC.md §14). Each is logged only
//! when it changes something, and decided again where it is applied.

use photofinish_core::league::CloseStep;
use photofinish_core::{Board, BoardConfig, BoardError};

use super::{before_write, execute_one, unexpected, with_board, Engine};
use crate::command::Command;
use crate::state::Applied;

/// Starts the webhook cursor of a board created with a webhook at the period current
/// now, so that period is the first posted even if it ends before the dispatcher's next
/// look (which starts it otherwise: a failure here is only logged). A patch that adds a
/// webhook starts the cursor in its own record (core `op::patch`). docs/webhooks.md.
pub(super) async fn start_hook<E: Engine + ?Sized>(e: &E, board: &str, config: &BoardConfig) {
    if config.settings.webhook.is_none() {
        return;
    }
    let started = match photofinish_core::hook::first_cursor(config, e.now_us()) {
        Ok(cursor) => hook_advance(e, board, cursor).await,
        Err(err) => Err(err),
    };
    if let Err(err) = started {
        tracing::warn!(board, error = %err, "webhook cursor not started; the dispatcher will");
    }
}

/// `Leaderboard::hook_advance`: logged only if it moves the cursor.
pub async fn hook_advance<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    cursor_us: i64,
) -> Result<(), BoardError> {
    let moves = with_board(e, board, |b| {
        Ok(b.config().settings.webhook.is_some() && b.hook_cursor().is_none_or(|c| c < cursor_us))
    })
    .await?;
    if moves {
        let cmd = Command::HookAdvance {
            board: board.to_owned(),
            cursor_us,
        };
        execute_one(e, board, cmd, false).await?;
    }
    Ok(())
}

/// `Leaderboard::close_step`: one step of the board's league close due now, logged only
/// when one is due (as the board was last seen; the step itself decides again at its
/// own instant, so a step two nodes log at once changes nothing the second time).
pub async fn close_step<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    budget: u32,
) -> Result<Option<CloseStep>, BoardError> {
    let now = e.now_us();
    if before_write(e, board, |b| Ok(!b.step_due(now))).await? {
        return Ok(None);
    }
    let cmd = Command::Close {
        board: board.to_owned(),
        now_us: 0,
        budget,
    };
    match execute_one(e, board, cmd, true).await? {
        Applied::Closed(step) => Ok(step),
        other => Err(unexpected("a close step", &other)),
    }
}

/// Whether `b` owes a close step at `now_us`, a league's or a period's grants (what
/// `Leaderboard::closes_due` lists).
pub fn owes_close(b: &Board, now_us: i64) -> bool {
    b.step_due(now_us)
}
