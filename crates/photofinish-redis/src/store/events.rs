//! Live events on Redis (docs/SPEC.md §8). The write, remove and board scripts append each
//! change in a board's current period to the board's capped stream (ids `0-1`, `0-2`, …;
//! the sequence part is the event id), so every Photofinish node sharing the Redis sees
//! every node's writes. A node watching a board keeps one feed for it: seeded from the
//! stream's last entries (a reader that reconnects to another node replays from there),
//! then filled by a task blocked in `XREAD` on a connection of its own (a blocking read on
//! the shared connection would hold up every other command behind it).
//!
//! The task stops when its feed has gone unread for `FEED_IDLE_KEEP` or the board is
//! deleted (the drop script appends a `deleted` entry that every node's task reads).
//!
//! Writes append score and remove events only while some node has readers of the board
//! (docs/redis-layout.md, "Events only while watched"): the task refreshes the board's
//! readers key every `READERS_EVERY` (`readers` in board.lua), and a refresh that found it
//! gone appended a `gap` entry, after which the feed starts again ([`EventFeed::gap`]).

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use photofinish_core::events::{
    Event, EventFeed, EventKind, Feeds, EVENT_RING_LEN, MAX_EVENTS_PER_READ,
};
use photofinish_core::BoardError;
use redis::Value;

use super::{common_status, unavailable, Attempt, RedisStore};
use crate::conn::Conn;
use crate::layout::BoardKeys;
use crate::reply::Reply;
use crate::scripts::board::BoardCall;
use crate::scripts::status;

/// How long one `XREAD` blocks; also how often an unread feed is checked for idleness.
const BLOCK_MS: u64 = 1_000;
/// How long the reader's connection waits for an answer (past the block).
const READ_TIMEOUT: Duration = Duration::from_millis(BLOCK_MS + 2_000);
/// The pause after a failed read before the next.
const RETRY_PAUSE: Duration = Duration::from_secs(1);
/// How often a watched board's readers key is refreshed. Between two refreshes the task
/// may also wait out a slow refresh, a read's timeout and the pause after a failed read:
/// together still well inside the key's [`crate::layout::READERS_TTL_MS`] (a test checks).
const READERS_EVERY: Duration = Duration::from_secs(1);

/// One stream entry: an event, a gap (events before it may be missing), or the end of the
/// board.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Event(Event),
    Gap(u64),
    Deleted(u64),
}

impl Entry {
    fn id(&self) -> u64 {
        match self {
            Entry::Event(e) => e.id,
            Entry::Gap(id) | Entry::Deleted(id) => *id,
        }
    }
}

fn text(v: &Value) -> Option<&str> {
    match v {
        Value::BulkString(b) => std::str::from_utf8(b).ok(),
        Value::SimpleString(s) => Some(s),
        _ => None,
    }
}

/// One entry `[id, [field, value, …]]`; `None` for one this layout never writes.
fn parse_entry(v: &Value) -> Option<Entry> {
    let Value::Array(parts) = v else { return None };
    let [id, Value::Array(fields)] = &parts[..] else {
        return None;
    };
    let (ms, seq) = text(id)?.split_once('-')?;
    if ms != "0" {
        return None;
    }
    let id: u64 = seq.parse().ok()?;
    let get = |name: &str| -> Option<String> {
        fields
            .chunks(2)
            .find(|kv| text(&kv[0]) == Some(name))
            .and_then(|kv| kv.get(1))
            .and_then(text)
            .map(str::to_owned)
    };
    let kind = match get("k")?.as_str() {
        "score" => EventKind::Score {
            member: get("m")?,
            score: get("s")?.parse().ok()?,
            rank: get("r")?.parse().ok()?,
            reached_at_us: get("a")?.parse().ok()?,
            period: get("p")?,
        },
        "remove" => EventKind::Remove {
            member: get("m")?,
            period: get("p")?,
        },
        "reset" => EventKind::Reset {
            period: get("p")?,
            previous: get("q")?,
        },
        "deleted" => return Some(Entry::Deleted(id)),
        "gap" => return Some(Entry::Gap(id)),
        _ => return None,
    };
    Some(Entry::Event(Event { id, kind }))
}

/// The entries of an `XRANGE`/`XREVRANGE` reply.
fn parse_range(v: &Value) -> Vec<Entry> {
    match v {
        Value::Array(items) => items.iter().filter_map(parse_entry).collect(),
        _ => Vec::new(),
    }
}

/// The entries of an `XREAD` reply for one stream: RESP2 `[[key, entries]]`, RESP3
/// `{key: entries}`, nil when the block timed out.
fn parse_read(v: &Value) -> Vec<Entry> {
    match v {
        Value::Map(streams) => streams
            .first()
            .map_or_else(Vec::new, |(_, e)| parse_range(e)),
        Value::Array(streams) => match streams.first() {
            Some(Value::Array(stream)) => stream.get(1).map_or_else(Vec::new, parse_range),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

impl RedisStore {
    /// The board's feed on this node, seeded from its stream and kept filled by a reader
    /// task (docs/SPEC.md §8).
    pub(super) async fn watch(&self, board: &str) -> Result<Arc<EventFeed>, BoardError> {
        self.fresh(board).await?;
        if let Some(feed) = self.feeds.get(board) {
            return Ok(feed);
        }
        // Writes append events from here on (a gap entry first if they did not), and the
        // current period is recorded the first time anyone watches the board, so the next
        // one is announced.
        let keys = self.keys(board);
        let r = self
            .run("board", &BoardCall::Readers.invocation(&keys))
            .await?;
        common_status::<()>(&r)?;
        self.announce_current(board).await?;
        let key = keys.events();
        let seed: Value = self
            .conn
            .query(
                redis::cmd("XREVRANGE")
                    .arg(&key)
                    .arg("+")
                    .arg("-")
                    .arg("COUNT")
                    .arg(EVENT_RING_LEN),
            )
            .await
            .map_err(unavailable)?;
        let mut seed = parse_range(&seed);
        seed.reverse();
        let last = seed.last().map_or(0, Entry::id);
        // Nothing before the last gap can be replayed: the feed starts there.
        if let Some(g) = seed.iter().rposition(|e| matches!(e, Entry::Gap(_))) {
            seed.drain(..g);
        }
        let first = match seed.first() {
            Some(Entry::Gap(id)) => *id,
            Some(e) => e.id().saturating_sub(1),
            None => last,
        };
        let reader = Conn::connect_with(&self.target, READ_TIMEOUT)
            .await
            .map_err(unavailable)?;
        let (feed, new) = self.feeds.watch(board, 2, || {
            let feed = EventFeed::new(first, EVENT_RING_LEN);
            feed.extend(seed.into_iter().filter_map(|e| match e {
                Entry::Event(e) => Some(e),
                Entry::Gap(_) | Entry::Deleted(_) => None,
            }));
            feed
        })?;
        if new {
            tokio::spawn(read_stream(
                Watch {
                    feeds: Arc::downgrade(&self.feeds),
                    board: board.to_owned(),
                    keys,
                    shared: self.conn.clone(),
                },
                feed.clone(),
                reader,
                last,
            ));
        }
        Ok(feed)
    }

    /// Sends the current period's reset event unless a write, reader or node has (the
    /// first period is only recorded).
    pub(super) async fn announce_current(&self, board: &str) -> Result<(), BoardError> {
        let keys = self.keys(board);
        let now = self.now_us();
        self.with_board(board, |cached| {
            let keys = keys.clone();
            async move {
                let current = cached.window.visible(now)?.current;
                let previous = cached.previous(&current);
                let call = BoardCall::Announce {
                    config_text: &cached.config_text,
                    period_id: &current.id,
                    previous_id: &previous,
                };
                let r = self.run("board", &call.invocation(&keys)).await?;
                Ok(common_status(&r)?.unwrap_or(Attempt::Done(())))
            }
        })
        .await
    }
}

/// What a board's reader task works with.
struct Watch {
    /// The store's feeds: gone once the store is dropped, which ends the task.
    feeds: Weak<Feeds>,
    board: String,
    keys: BoardKeys,
    /// The node's shared connection, for the readers key's refresh (the task's own
    /// connection blocks in `XREAD`).
    shared: Conn,
}

/// Fills `feed` from the stream until the feed goes unread, the board is deleted or the
/// store is dropped, and keeps the board's readers key alive meanwhile.
async fn read_stream(w: Watch, feed: Arc<EventFeed>, conn: Conn, mut last: u64) {
    let Watch {
        feeds,
        board,
        keys,
        shared,
    } = w;
    let key = keys.events();
    let mut refreshed = Instant::now();
    loop {
        let Some(feeds) = feeds.upgrade() else { return };
        if feeds.idle(&board, &feed) {
            return;
        }
        if refreshed.elapsed() >= READERS_EVERY {
            refreshed = Instant::now();
            match shared
                .call::<Value>(&BoardCall::Readers.invocation(&keys))
                .await
            {
                Ok(v) => {
                    // The board is gone (and its `deleted` entry perhaps with its stream).
                    let gone = Reply::new("board", v)
                        .is_ok_and(|r| r.status().ok() == Some(status::NO_BOARD));
                    if gone {
                        feeds.remove(&board);
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!(board = %board, error = %e, "refreshing the board's readers key failed; retrying");
                }
            }
        }
        let read = redis::cmd("XREAD")
            .arg("COUNT")
            .arg(MAX_EVENTS_PER_READ)
            .arg("BLOCK")
            .arg(BLOCK_MS)
            .arg("STREAMS")
            .arg(&key)
            .arg(format!("0-{last}"))
            .to_owned();
        match conn.query::<Value>(&read).await {
            Ok(v) => {
                let mut events = Vec::new();
                for entry in parse_read(&v) {
                    last = last.max(entry.id());
                    match entry {
                        Entry::Event(e) => events.push(e),
                        Entry::Gap(id) => {
                            feed.extend(std::mem::take(&mut events));
                            feed.gap(id);
                        }
                        Entry::Deleted(_) => {
                            feed.extend(events);
                            feeds.remove(&board);
                            return;
                        }
                    }
                }
                feed.extend(events);
            }
            Err(e) => {
                tracing::warn!(board = %board, error = %e, "reading the board's event stream failed; retrying");
                tokio::time::sleep(RETRY_PAUSE).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    fn entry(id: &str, fields: &[&str]) -> Value {
        Value::Array(vec![
            bulk(id),
            Value::Array(fields.iter().map(|f| bulk(f)).collect()),
        ])
    }

    #[test]
    fn the_readers_key_is_refreshed_well_inside_its_time_to_live() {
        let worst = READERS_EVERY + crate::conn::RESPONSE_TIMEOUT + READ_TIMEOUT + RETRY_PAUSE;
        assert!(
            worst * 2 < Duration::from_millis(crate::layout::READERS_TTL_MS),
            "{worst:?}"
        );
    }

    #[test]
    fn stream_entries_become_events() {
        let range = Value::Array(vec![
            entry(
                "0-7",
                &[
                    "k", "score", "m", "ann", "s", "-5", "r", "2", "a", "17", "p", "all",
                ],
            ),
            entry("0-8", &["k", "remove", "m", "ann", "p", "all"]),
            entry("0-9", &["k", "reset", "p", "2026-11-24", "q", "2026-11-23"]),
            entry("0-10", &["k", "deleted"]),
            entry("0-12", &["k", "gap"]),
            entry("5-1", &["k", "remove", "m", "x", "p", "all"]),
            entry("0-11", &["k", "score", "m", "no score"]),
        ]);
        let parsed = parse_range(&range);
        assert_eq!(parsed.len(), 5, "{parsed:?}");
        assert_eq!(
            parsed[0],
            Entry::Event(Event {
                id: 7,
                kind: EventKind::Score {
                    member: "ann".into(),
                    score: -5,
                    rank: 2,
                    reached_at_us: 17,
                    period: "all".into()
                }
            })
        );
        assert_eq!(parsed[3], Entry::Deleted(10));
        assert_eq!(parsed[4], Entry::Gap(12));
        // XREAD wraps the entries in [[key, entries]] (RESP2) or {key: entries} (RESP3).
        let xread = Value::Array(vec![Value::Array(vec![
            bulk("pf:{b}:events"),
            range.clone(),
        ])]);
        assert_eq!(parse_read(&xread), parsed);
        let resp3 = Value::Map(vec![(bulk("pf:{b}:events"), range)]);
        assert_eq!(parse_read(&resp3), parsed);
        assert!(parse_read(&Value::Nil).is_empty());
    }
}
