//! The closer (docs/SPEC.md §14 and §16, core `league.rs`, docs/rewards.md): every
//! [`TICK`] it asks the service which boards owe a period's close — a league's, or a
//! period's grants — and runs each close, step by step, until none is due. Each step is one command in the board's log, bounded in work, so
//! other boards' writes pass between steps; a step that finds nothing due changes
//! nothing, so every node of a shared Redis may run this at once and a close still
//! happens once, and a restart simply continues it.

use std::sync::Weak;
use std::time::Duration;

use photofinish_core::Leaderboard;

/// How often the closer looks for closes due: a period's close begins within this after
/// its end and grace.
pub const TICK: Duration = Duration::from_secs(1);

/// Runs the closer until the service is gone, each step ranking up to `budget` members.
pub async fn run(service: Weak<dyn Leaderboard>, budget: u32) {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(service) = service.upgrade() else {
            return;
        };
        let boards = match service.closes_due().await {
            Ok(b) => b,
            Err(e) => {
                tracing::debug!(error = %e, "leagues: cannot list the closes due");
                continue;
            }
        };
        for board in boards {
            close(&*service, &board, budget).await;
        }
    }
}

/// Runs `board`'s closes due, step by step, until none is.
async fn close(service: &dyn Leaderboard, board: &str, budget: u32) {
    loop {
        match service.close_step(board, budget).await {
            Ok(Some(step)) => {
                if step.done {
                    tracing::info!(board, period = %step.period, "league period closed");
                }
                tokio::task::yield_now().await;
            }
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(board, error = %e, "league close step failed; retried next tick");
                return;
            }
        }
    }
}
