//! The period-close webhook's schedule (docs/SPEC.md §10, docs/webhooks.md): which period a
//! board owes its receiver next, when it falls due, how long to wait after a failed
//! attempt and when to give up. Pure rules: the server's dispatcher asks them, every
//! backend keeps only the board's *cursor* — the end of the last period delivered (or
//! given up), or the start of the period current when the webhook was first seen.
//!
//! The cursor is the whole durable outbox: the periods owed are those that ended after it,
//! so a server that dies between a period's end and its delivery finds the period still
//! owed when it starts again (at least once), and a delivery advances the cursor past it
//! (the receiver dedups by `Idempotency-Key: <board>/<period>` the rare repeat of a
//! delivery acknowledged just before a crash).

use std::time::Duration;

use crate::calendar::{Period, MAX_INSTANT_US};
use crate::config::BoardConfig;
use crate::error::BoardError;

/// A board with a webhook, as a backend lists it for the dispatcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookState {
    /// The board.
    pub board: String,
    /// Its config (with the webhook's URL, size and the board's grace).
    pub config: BoardConfig,
    /// The cursor (see the module docs), `None` until the dispatcher first saw the board.
    pub cursor_us: Option<i64>,
}

/// How long after a period falls due an undelivered post is given up (and counted as
/// abandoned).
pub const GIVE_UP_AFTER_US: i64 = 24 * 3600 * 1_000_000;
/// The first wait after a failed attempt.
pub const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest wait between attempts.
pub const MAX_RETRY: Duration = Duration::from_secs(3600);

/// What a board's webhook owes at `now_us`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owed {
    /// Nothing yet: the next period closes (with its grace) at this instant, µs.
    Until(i64),
    /// This period is due: post it.
    Due(Period),
    /// This period was due more than [`GIVE_UP_AFTER_US`] ago: give it up.
    GiveUp(Period),
}

/// The cursor of a board first seen at `now_us`: the start of its current period, so its
/// close is the first post.
pub fn first_cursor(config: &BoardConfig, now_us: i64) -> Result<i64, BoardError> {
    let calendar = config.calendar()?;
    Ok(calendar
        .period_at(now_us.clamp(0, MAX_INSTANT_US))?
        .start_us)
}

/// What the board owes at `now_us` given its cursor: the first period ending after the
/// cursor, due once it ended `grace` ago (a late result within grace still counts).
pub fn owed(config: &BoardConfig, cursor_us: i64, now_us: i64) -> Result<Owed, BoardError> {
    let calendar = config.calendar()?;
    let period = calendar.period_at(cursor_us.clamp(0, MAX_INSTANT_US))?;
    let due_us = period.end_us.saturating_add(config.settings.grace_us());
    Ok(if now_us < due_us {
        Owed::Until(due_us)
    } else if now_us.saturating_sub(due_us) > GIVE_UP_AFTER_US {
        Owed::GiveUp(period)
    } else {
        Owed::Due(period)
    })
}

/// The wait after a failed attempt, by how long the post has been due: as long again
/// (so attempts come at 1, 2, 4, 8… seconds after the first), between [`FIRST_RETRY`] and
/// [`MAX_RETRY`]. It needs no attempt counter, so every node and a restarted server agree.
pub fn retry_after(due_for_us: i64) -> Duration {
    let due_for = Duration::from_micros(u64::try_from(due_for_us).unwrap_or(0));
    due_for.clamp(FIRST_RETRY, MAX_RETRY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Reset;

    const DAY_US: i64 = 86_400_000_000;
    // 2026-11-23T00:00:00Z
    const MIDNIGHT: i64 = 1_795_392_000_000_000;

    fn daily(grace: u32) -> BoardConfig {
        let mut c = BoardConfig {
            reset: Reset::Daily,
            ..BoardConfig::default()
        };
        c.settings.grace = grace;
        c.settings.webhook = Some("http://127.0.0.1:9/h".into());
        c
    }

    #[test]
    fn owes_the_period_after_the_cursor_once_it_and_its_grace_ended() {
        let c = daily(10);
        let cursor = first_cursor(&c, MIDNIGHT - 5).expect("placed");
        assert_eq!(cursor, MIDNIGHT - DAY_US);
        assert_eq!(
            owed(&c, cursor, MIDNIGHT - 5).expect("placed"),
            Owed::Until(MIDNIGHT + 10_000_000)
        );
        assert_eq!(
            owed(&c, cursor, MIDNIGHT + 9_999_999).expect("placed"),
            Owed::Until(MIDNIGHT + 10_000_000)
        );
        let Owed::Due(p) = owed(&c, cursor, MIDNIGHT + 10_000_000).expect("placed") else {
            panic!("not due")
        };
        assert_eq!((p.start_us, p.end_us), (MIDNIGHT - DAY_US, MIDNIGHT));
        // Delivered: the cursor moves to its end; the next day is owed next.
        assert_eq!(
            owed(&c, p.end_us, MIDNIGHT + 20_000_000).expect("placed"),
            Owed::Until(MIDNIGHT + DAY_US + 10_000_000)
        );
        // A day and more later, a period never delivered is given up.
        let late = MIDNIGHT + 10_000_000 + GIVE_UP_AFTER_US + 1;
        assert!(matches!(
            owed(&c, cursor, late).expect("placed"),
            Owed::GiveUp(_)
        ));
        assert!(matches!(
            owed(&c, cursor, late - 1).expect("placed"),
            Owed::Due(_)
        ));
    }

    #[test]
    fn a_server_down_for_days_owes_each_day_in_order() {
        let c = daily(0);
        let mut cursor = first_cursor(&c, MIDNIGHT).expect("placed");
        let now = MIDNIGHT + 3 * DAY_US + 1;
        let mut posted = Vec::new();
        while let Owed::Due(p) | Owed::GiveUp(p) = owed(&c, cursor, now).expect("placed") {
            posted.push(p.id.clone());
            cursor = p.end_us;
        }
        assert_eq!(posted, ["2026-11-23", "2026-11-24", "2026-11-25"]);
    }

    #[test]
    fn waits_double_between_bounds() {
        assert_eq!(retry_after(-5), FIRST_RETRY);
        assert_eq!(retry_after(0), FIRST_RETRY);
        assert_eq!(retry_after(4_000_000), Duration::from_secs(4));
        assert_eq!(retry_after(GIVE_UP_AFTER_US), MAX_RETRY);
    }
}
