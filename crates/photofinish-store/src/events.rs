//! Live events on the embedded store (docs/SPEC.md §8): the writer publishes what each
//! applied command changed in a board's current period to that board's feed, if someone
//! watches it ([`publish`]); readers find the feed through the store's `watch`
//! (`service.rs`). Nothing here runs during recovery: only the live writer publishes.
//!
//! Event ids start, for each new feed, at the clock's µs: a feed made after a restart
//! numbers above every id a reader could hold from before it (while fewer than a million
//! events a second are published), so such a reader is told to resync, never given wrong
//! events.

use photofinish_core::events::{EventFeed, EventKind, Feeds};
use photofinish_core::idempotency::Answer;
use photofinish_core::view::WriteOutcome;
use photofinish_core::{BoardError, Period, PeriodRef, RankStyle};

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
        (Command::DeleteBoard { board }, Applied::BoardDeleted) => feeds.remove(board),
        (Command::Write { .. }, Applied::Written(w)) => written(feeds, state, cmd, w, now_us),
        (Command::DeleteMember { .. }, Applied::MemberRemoved) => removed(feeds, state, cmd),
        (
            Command::Hide {
                board,
                member,
                hidden,
                ..
            },
            Applied::Hidden(true),
        ) => moderated(feeds, state, board, member, *hidden, now_us),
        (Command::HideEverywhere { member, hidden }, Applied::Hidden(true)) => {
            for (board, _) in state.boards() {
                moderated(feeds, state, &board, member, *hidden, now_us);
            }
        }
        (Command::Keyed { cmds, .. }, Applied::Keyed(answer)) => match (answer, &cmds[..]) {
            (Answer::Written(w), [c]) => written(feeds, state, c, w, now_us),
            (Answer::Batch(results), _) => {
                for (c, r) in cmds.iter().zip(results) {
                    if let Ok(w) = r {
                        written(feeds, state, c, w, now_us);
                    }
                }
            }
            (Answer::Removed, [c]) => removed(feeds, state, c),
            _ => {}
        },
        _ => {}
    }
}

/// A score event for a write that changed a score in the current period (after the
/// period's reset event, if this write is the first to land in it).
fn written(feeds: &Feeds, state: &State, cmd: &Command, w: &WriteOutcome, now_us: i64) {
    let Command::Write { board, member, .. } = cmd else {
        return;
    };
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
    });
}

/// A remove event for a member removed from the current period.
fn removed(feeds: &Feeds, state: &State, cmd: &Command) {
    let Command::DeleteMember {
        board,
        period,
        member,
        now_us,
    } = cmd
    else {
        return;
    };
    let Some(feed) = feeds.get(board) else { return };
    let Some(handle) = state.board(board) else {
        return;
    };
    let current = {
        let b = read_lock(&handle);
        if b.is_hidden(member) {
            return;
        }
        let asked = b.resolve(&PeriodRef::parse(period), *now_us);
        let current = b.resolve(&PeriodRef::Current, *now_us);
        match (asked, current) {
            (Ok(asked), Ok(current)) if asked == current => current,
            _ => return,
        }
    };
    feed.push(EventKind::Remove {
        member: member.clone(),
        period: current.id,
    });
}

/// Whether `member` is hidden on `board` (docs/SPEC.md §15): its events are nobody's.
fn is_hidden(state: &State, board: &str, member: &str) -> bool {
    state
        .board(board)
        .is_some_and(|h| read_lock(&h).is_hidden(member))
}

/// A member hidden or shown again, as watchers see it: a hidden member with an entry in
/// the current period leaves it (a remove event), a member shown again enters it with its
/// entry (a score event).
fn moderated(feeds: &Feeds, state: &State, board: &str, member: &str, hidden: bool, now_us: i64) {
    let Some(feed) = feeds.get(board) else { return };
    let Some(handle) = state.board(board) else {
        return;
    };
    let found = {
        let b = read_lock(&handle);
        let Ok((period, Some(ranking))) = b.read(&PeriodRef::Current, now_us) else {
            return;
        };
        let view = ranking.view(None);
        view.member_ranked(member, RankStyle::Ordinal)
            .map(|found| (found, period, b.column_names()))
    };
    let Some(((entry, ordinal), period, columns)) = found else {
        return;
    };
    if hidden {
        feed.push(EventKind::Remove {
            member: member.to_owned(),
            period: period.id,
        });
    } else if !entry.hidden {
        // Shown again (not still hidden another way).
        announce(&feed, state, board, &period);
        feed.push(EventKind::Score {
            member: member.to_owned(),
            scores: entry.scores,
            columns,
            rank: ordinal,
            reached_at_us: entry.reached_at_us,
            period: period.id,
        });
    }
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
