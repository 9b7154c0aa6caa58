//! Live events on the embedded store (docs/SPEC.md §8): the writer publishes what each
//! applied command changed in a board's current period to that board's feed, if someone
//! watches it ([`publish`]); readers find the feed through the store's `watch`
//! (`service.rs`). Nothing here runs during recovery: only the live writer publishes.
//!
//! Event ids start, for each new feed, at the clock's µs: a feed made after a restart
//! numbers above every id a reader could hold from before it (while fewer than a million
//! events a second are published), so such a reader is told to resync, never given wrong
//! events.

use photofinish_core::events::{EventFeed, EventGroups, EventKind, Feeds};
use photofinish_core::idempotency::Answer;
use photofinish_core::op::{BoardOp, Hide, OpAnswer};
use photofinish_core::op::{LoggedWrite, WriteOutcome};
use photofinish_core::{BoardError, Period, PeriodRef};

use crate::command::Command;
use crate::state::{read_lock, Applied, State};

/// Publishes the events of `cmd`, applied at `now_us` with `applied` (the embedded
/// writer, and a Redis node's replica as it takes each entry).
pub fn publish(
    feeds: &Feeds,
    state: &State,
    cmd: &Command,
    applied: &Result<Applied, BoardError>,
    now_us: i64,
) {
    let Ok(applied) = applied else { return };
    // An admin change's events are its change's.
    let cmd = cmd.inner();
    match (cmd, applied) {
        (Command::DeleteBoard(d), Applied::BoardDeleted) => feeds.remove(&d.board),
        (Command::Write(lw), Applied::Written(w)) => written(feeds, state, lw, w, now_us),
        (Command::Op { board, op, .. }, Applied::Op(Answer::Op { value, .. })) => {
            operated(feeds, state, board, op.op(), value, now_us)
        }
        (Command::HideEverywhere { member, hidden }, Applied::Hidden(true)) => {
            // What watchers see is each board's, as a hide on it that changed it.
            let hide = Hide::everywhere(member, *hidden);
            let changed = OpAnswer::typed(true);
            for (board, _) in state.boards() {
                operated(feeds, state, &board, &hide, &changed, now_us);
            }
        }
        (Command::Keyed { cmds, .. }, Applied::Keyed(answer)) => match (answer, &cmds[..]) {
            (Answer::Written(w), [Command::Write(lw)]) => written(feeds, state, lw, w, now_us),
            (Answer::Batch(results), _) => {
                for (c, r) in cmds.iter().zip(results) {
                    if let (Command::Write(lw), Ok(w)) = (c, r) {
                        written(feeds, state, lw, w, now_us);
                    }
                }
            }
            (Answer::Op { value, .. }, [Command::Op { board, op, .. }]) => {
                operated(feeds, state, board, op.op(), value, now_us)
            }
            _ => {}
        },
        _ => {}
    }
}

/// The events an operation written as one module shows watchers of `board`
/// ([`BoardOp::events`]) after it answered `value`, from the board as it is then, each
/// score event after its period's reset event.
fn operated(
    feeds: &Feeds,
    state: &State,
    board: &str,
    op: &dyn BoardOp,
    value: &OpAnswer,
    now_us: i64,
) {
    let Some(feed) = feeds.get(board) else { return };
    if op.forgets().is_some() {
        // An erase: the events held name the member, and no replay crosses it.
        feed.cut();
        return;
    }
    let Some(handle) = state.board(board) else {
        return;
    };
    let events = op.events(&read_lock(&handle), value, now_us);
    for event in events {
        if let Some(period) = &event.announce {
            announce(&feed, state, board, period);
        }
        feed.push(event.kind);
    }
}

/// A score event for a write that changed a score in the current period (after the
/// period's reset event, if this write is the first to land in it).
fn written(feeds: &Feeds, state: &State, lw: &LoggedWrite, w: &WriteOutcome, now_us: i64) {
    let (board, member) = (&lw.board, &lw.member);
    let (outcome, period) = (&w.outcome, &w.period);
    if !outcome.changed || !period.contains(now_us) {
        return;
    }
    let Some(feed) = feeds.get(board) else { return };
    if is_hidden(state, board, member) {
        return;
    }
    announce(&feed, state, board, period);
    feed.push(EventKind::Score {
        member: member.clone(),
        scores: outcome.scores,
        columns: w.columns.clone(),
        rank: outcome.rank,
        reached_at_us: outcome.reached_at_us,
        period: period.id.clone(),
        groups: Box::new(EventGroups {
            partition: w.partition.clone(),
            partition_rank: outcome.partition_rank,
            team: w.team.clone(),
        }),
    });
}

/// Whether `member` is hidden on `board` (docs/SPEC.md §15): its events are nobody's.
fn is_hidden(state: &State, board: &str, member: &str) -> bool {
    state
        .board(board)
        .is_some_and(|h| read_lock(&h).is_hidden(member))
}

/// Sends `period`'s reset event unless the feed has (it records the first it learns).
fn announce(feed: &EventFeed, state: &State, board: &str, period: &Period) {
    feed.announce(&period.id, || {
        state
            .board(board)
            .and_then(|h| read_lock(&h).calendar().previous(period).ok())
            .map(|p| p.id)
            .unwrap_or_default()
    });
}

/// Sends `board`'s current period's (at `now_us`) reset event on `feed`, unless it was
/// sent.
pub fn announce_current(
    feed: &EventFeed,
    state: &State,
    board: &str,
    now_us: i64,
) -> Result<(), BoardError> {
    let handle = state.require(board)?;
    let current = read_lock(&handle).resolve(&PeriodRef::Current, now_us)?;
    announce(feed, state, board, &current);
    Ok(())
}
