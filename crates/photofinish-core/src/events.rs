//! A board's live events (docs/SPEC.md §8): what changed in its current period, each with an
//! increasing id, kept in a bounded ring so a reader that reconnects can replay what it
//! missed. One [`EventFeed`] per watched board lives in the process; the backend fills it
//! (the embedded store as it applies writes, the Redis backend from the board's stream,
//! so every node sharing a Redis sees every node's writes) and every door reads it.
//!
//! Readers never get a buffer of their own: each keeps only the id of the last event it
//! sent and reads the shared ring after it. A reader that falls more than the ring's length
//! behind finds its next event gone and is told so ([`Read::Behind`]), so memory is bounded
//! by the ring whatever the readers do. Waiting uses `event-listener`, so this stays free of
//! any async runtime.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use event_listener::Event as Signal;

/// Events a feed keeps for replay (the SPEC's "≥ 10,000"); a reader further behind is cut.
pub const EVENT_RING_LEN: usize = 10_000;

/// Most events one read hands out at once.
pub const MAX_EVENTS_PER_READ: usize = 256;

/// Most boards with a live feed in one process: a feed's ring holds up to
/// [`EVENT_RING_LEN`] events (~1 MB at most), so this bounds their memory (~1 GB).
pub const MAX_WATCHED_BOARDS: usize = 1_000;

/// How long a feed nobody reads is kept, so a reader that reconnects within it replays
/// what it missed.
pub const FEED_IDLE_KEEP: Duration = Duration::from_secs(300);

use crate::columns::{ColumnNames, Scores};
use crate::error::BoardError;

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// A member's score changed in the current period.
    Score {
        /// The member.
        member: String,
        /// Its new scores (one per column).
        scores: Scores,
        /// The board's column names, on a board of several (to name each score).
        columns: ColumnNames,
        /// Its ordinal rank after the write.
        rank: u64,
        /// When it reached the score, µs.
        reached_at_us: i64,
        /// The period (the current one).
        period: String,
        /// Its partition and its ordinal rank there, and its team (docs/SPEC.md §17).
        groups: Box<EventGroups>,
    },
    /// A member was removed from the current period.
    Remove {
        /// The member.
        member: String,
        /// The period.
        period: String,
    },
    /// A new period began.
    Reset {
        /// The period that began.
        period: String,
        /// The period before it.
        previous: String,
    },
}

impl EventKind {
    /// The member an event is about (`None` for a reset, which every reader gets).
    pub fn member(&self) -> Option<&str> {
        match self {
            EventKind::Score { member, .. } | EventKind::Remove { member, .. } => Some(member),
            EventKind::Reset { .. } => None,
        }
    }
}

/// A score event's partition, rank in it and team (docs/SPEC.md §17), when the member
/// is in them: boxed beside the event, so an event of a board without them stays small.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventGroups {
    /// The member's partition.
    pub partition: Option<String>,
    /// Its ordinal rank in its partition after the write.
    pub partition_rank: Option<u64>,
    /// The member's team.
    pub team: Option<String>,
}

/// One event with its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Increasing within the board's feed.
    pub id: u64,
    /// What happened.
    pub kind: EventKind,
}

/// What a reader finds after the id it last saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// The next events (at most [`MAX_EVENTS_PER_READ`]); empty when there are none yet.
    Events(Vec<Arc<Event>>),
    /// Events after that id are no longer kept (or the id was never this feed's): the
    /// reader must reload what it shows and go on from `last_id`.
    Behind {
        /// The feed's newest id.
        last_id: u64,
    },
    /// The board is gone: nothing will follow.
    Closed,
}

impl Ring {
    fn next_id(&self) -> u64 {
        self.last_id.max(self.base) + 1
    }
}

#[derive(Debug)]
struct Ring {
    events: VecDeque<Arc<Event>>,
    /// The newest id handed out (the one before the first event, while there is none).
    last_id: u64,
    /// Every event after this id is held (it moves up as the ring drops its oldest, or
    /// over a gap): a reader at an earlier id may have missed some.
    floor: u64,
    /// The next event's id is past this too ([`EventFeed::advance_to`]).
    base: u64,
    /// The current period last announced, to send each reset once.
    announced: Option<String>,
    closed: bool,
}

/// The events of one board. See the module docs.
#[derive(Debug)]
pub struct EventFeed {
    ring: Mutex<Ring>,
    signal: Signal,
    capacity: usize,
}

impl EventFeed {
    /// An empty feed whose next event gets id `last_id + 1`, holding up to `capacity`.
    pub fn new(last_id: u64, capacity: usize) -> Self {
        Self {
            ring: Mutex::new(Ring {
                events: VecDeque::new(),
                last_id,
                floor: last_id,
                base: last_id,
                announced: None,
                closed: false,
            }),
            signal: Signal::new(),
            capacity: capacity.max(1),
        }
    }

    fn ring(&self) -> MutexGuard<'_, Ring> {
        self.ring.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `kind` with the next id (feeds that number their own events).
    pub fn push(&self, kind: EventKind) -> u64 {
        let id = {
            let mut ring = self.ring();
            let id = ring.next_id();
            self.append(&mut ring, Event { id, kind });
            id
        };
        self.signal.notify(usize::MAX);
        id
    }

    /// Appends events numbered elsewhere (a Redis stream), skipping any not newer than
    /// the newest held.
    pub fn extend(&self, events: impl IntoIterator<Item = Event>) {
        {
            let mut ring = self.ring();
            for e in events {
                if e.id > ring.last_id {
                    self.append(&mut ring, e);
                }
            }
        }
        self.signal.notify(usize::MAX);
    }

    fn append(&self, ring: &mut Ring, event: Event) {
        if ring.events.len() == self.capacity {
            if let Some(dropped) = ring.events.pop_front() {
                ring.floor = dropped.id;
            }
        }
        ring.last_id = event.id;
        if let EventKind::Reset { period, .. } = &event.kind {
            ring.announced = Some(period.clone());
        }
        ring.events.push_back(Arc::new(event));
    }

    /// Sends the reset event of `period` (with the id `previous` gives) unless this feed
    /// has announced it or a later one; `true` if it did. The first period a feed learns is
    /// only recorded: nothing began while nobody watched.
    pub fn announce(&self, period: &str, previous: impl FnOnce() -> String) -> bool {
        let sent = {
            let mut ring = self.ring();
            match ring.announced.as_deref() {
                Some(p) if p >= period => false,
                Some(_) => {
                    let id = ring.next_id();
                    let kind = EventKind::Reset {
                        period: period.to_owned(),
                        previous: previous(),
                    };
                    self.append(&mut ring, Event { id, kind });
                    true
                }
                None => {
                    ring.announced = Some(period.to_owned());
                    false
                }
            }
        };
        if sent {
            self.signal.notify(usize::MAX);
        }
        sent
    }

    /// Events up to `id` may be missing (a Redis board went unwatched, so its writes wrote
    /// none): the ring is emptied and goes on after `id`, so a reader at an earlier id is
    /// [`Read::Behind`] — told to reload — instead of skipping past what it never got.
    pub fn gap(&self, id: u64) {
        {
            let mut ring = self.ring();
            if id <= ring.last_id {
                return;
            }
            ring.events.clear();
            ring.last_id = id;
            ring.floor = id;
        }
        self.signal.notify(usize::MAX);
    }

    /// Forgets every event held (a member was erased, docs/SPEC.md §16: no replay across
    /// an erase): a reader at an earlier id is [`Read::Behind`], told to reload.
    pub fn cut(&self) {
        {
            let mut ring = self.ring();
            ring.events.clear();
            ring.floor = ring.last_id;
        }
        self.signal.notify(usize::MAX);
    }

    /// Numbers the next event after `id` (skipping ids, holding every event): a feed whose
    /// ids are derived from something all nodes agree on (the scale-out layout's entry
    /// numbers) moves to that number before the entry's events. A feed already past
    /// `id` stays where it is.
    pub fn advance_to(&self, id: u64) {
        let mut ring = self.ring();
        ring.base = ring.base.max(id);
    }

    /// The newest period this feed announced or recorded.
    pub fn announced(&self) -> Option<String> {
        self.ring().announced.clone()
    }

    /// Ends the feed (its board was deleted): readers get [`Read::Closed`].
    pub fn close(&self) {
        self.ring().closed = true;
        self.signal.notify(usize::MAX);
    }

    /// The newest id.
    pub fn last_id(&self) -> u64 {
        self.ring().last_id
    }

    /// The events after `after`.
    pub fn read(&self, after: u64) -> Read {
        let ring = self.ring();
        if ring.closed {
            return Read::Closed;
        }
        if after > ring.last_id {
            return Read::Behind {
                last_id: ring.last_id,
            };
        }
        if after < ring.floor {
            return Read::Behind {
                last_id: ring.last_id,
            };
        }
        // Ids increase but may skip (a Redis stream trimmed elsewhere): find by search.
        let start = ring.events.partition_point(|e| e.id <= after);
        Read::Events(
            ring.events
                .range(start..)
                .take(MAX_EVENTS_PER_READ)
                .cloned()
                .collect(),
        )
    }

    /// Waits until there is an event after `after` or the feed is closed.
    pub async fn changed(&self, after: u64) {
        loop {
            if self.is_ready(after) {
                return;
            }
            let listener = self.signal.listen();
            if self.is_ready(after) {
                return;
            }
            listener.await;
        }
    }

    fn is_ready(&self, after: u64) -> bool {
        let ring = self.ring();
        ring.closed || ring.last_id != after
    }
}

#[derive(Debug)]
struct Watched {
    feed: Arc<EventFeed>,
    /// Handles the backend itself keeps (the registry's, a reader task's): more are readers.
    held: usize,
    idle_since: Option<Instant>,
}

impl Watched {
    fn readers(&self) -> usize {
        Arc::strong_count(&self.feed).saturating_sub(self.held)
    }

    /// Whether nobody has read the feed for [`FEED_IDLE_KEEP`] by `now` (then it is closed
    /// and should be dropped); a feed with readers starts its idle time again.
    fn expire(&mut self, now: Instant) -> bool {
        if self.readers() > 0 {
            self.idle_since = None;
            return false;
        }
        let since = *self.idle_since.get_or_insert(now);
        let expired = now.duration_since(since) >= FEED_IDLE_KEEP;
        if expired {
            self.feed.close();
        }
        expired
    }
}

/// The feeds of one process, by board: at most [`MAX_WATCHED_BOARDS`]; a feed nobody has
/// read for [`FEED_IDLE_KEEP`] is dropped.
#[derive(Debug, Default)]
pub struct Feeds {
    map: Mutex<HashMap<String, Watched>>,
    len: AtomicUsize,
}

impl Feeds {
    fn map(&self) -> MutexGuard<'_, HashMap<String, Watched>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any board has a feed (a cheap check before looking one up).
    pub fn is_empty(&self) -> bool {
        self.len.load(Ordering::Relaxed) == 0
    }

    /// The board's feed, if it has one.
    pub fn get(&self, board: &str) -> Option<Arc<EventFeed>> {
        if self.is_empty() {
            return None;
        }
        self.map().get(board).map(|w| w.feed.clone())
    }

    /// The board's feed, or a new one from `make` (`true` when new); `held` is how many
    /// handles of it the backend keeps besides readers (1 for this registry, 2 with a
    /// reader task). At the limit, feeds idle longest go first; if none is idle,
    /// `too_many_streams`.
    pub fn watch(
        &self,
        board: &str,
        held: usize,
        make: impl FnOnce() -> EventFeed,
    ) -> Result<(Arc<EventFeed>, bool), BoardError> {
        let mut map = self.map();
        if let Some(w) = map.get_mut(board) {
            w.idle_since = None;
            return Ok((w.feed.clone(), false));
        }
        if map.len() >= MAX_WATCHED_BOARDS {
            let now = Instant::now();
            let idlest = map
                .iter()
                .filter(|(_, w)| w.readers() == 0)
                .min_by_key(|(_, w)| w.idle_since.unwrap_or(now))
                .map(|(name, _)| name.clone());
            match idlest {
                Some(name) => {
                    if let Some(w) = map.remove(&name) {
                        w.feed.close();
                    }
                }
                None => {
                    return Err(BoardError::TooManyStreams {
                        limit: MAX_WATCHED_BOARDS,
                        what: "watched boards",
                    })
                }
            }
        }
        let feed = Arc::new(make());
        map.insert(
            board.to_owned(),
            Watched {
                feed: feed.clone(),
                held,
                idle_since: None,
            },
        );
        self.len.store(map.len(), Ordering::Relaxed);
        Ok((feed, true))
    }

    /// Closes and drops the board's feed (the board was deleted).
    pub fn remove(&self, board: &str) {
        let mut map = self.map();
        if let Some(w) = map.remove(board) {
            w.feed.close();
        }
        self.len.store(map.len(), Ordering::Relaxed);
    }

    /// Whether `feed` is no longer `board`'s (removed, or replaced): else, if nobody has
    /// read it for [`FEED_IDLE_KEEP`], drops it and says so. Looks at that board only (a
    /// reader task asks this every second).
    pub fn idle(&self, board: &str, feed: &Arc<EventFeed>) -> bool {
        let mut map = self.map();
        let Some(w) = map.get_mut(board).filter(|w| Arc::ptr_eq(&w.feed, feed)) else {
            return true;
        };
        if !w.expire(Instant::now()) {
            return false;
        }
        map.remove(board);
        self.len.store(map.len(), Ordering::Relaxed);
        true
    }

    /// Drops feeds nobody has read for [`FEED_IDLE_KEEP`]; `true` if `board`'s feed is
    /// gone (a reader task then stops).
    pub fn sweep(&self, board: &str) -> bool {
        let now = Instant::now();
        let mut map = self.map();
        map.retain(|_, w| !w.expire(now));
        self.len.store(map.len(), Ordering::Relaxed);
        !map.contains_key(board)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(member: &str) -> EventKind {
        EventKind::Score {
            member: member.into(),
            scores: Scores::one(1),
            columns: ColumnNames::default(),
            rank: 1,
            reached_at_us: 0,
            period: "all".into(),
            groups: Box::default(),
        }
    }

    #[test]
    fn ids_numbered_elsewhere_skip_without_losing_a_reader() {
        // A feed whose ids come from entry numbers: entry 3's events after 3 << 11.
        let feed = EventFeed::new((3 << 11) - 1, 4);
        feed.advance_to(3 << 11);
        assert_eq!(feed.push(score("a")), (3 << 11) + 1);
        // Entry 4 emits nothing; entry 9's event skips past both.
        feed.advance_to(4 << 11);
        feed.advance_to(9 << 11);
        assert_eq!(feed.push(score("b")), (9 << 11) + 1);
        // A reader from the start, or after the first event, misses nothing.
        for after in [(3 << 11) - 1, (3 << 11) + 1] {
            match feed.read(after) {
                Read::Events(e) => assert_eq!(e.last().map(|e| e.id), Some((9 << 11) + 1)),
                other => panic!("{other:?}"),
            }
        }
        // One from before the feed began may have missed some: behind.
        assert!(matches!(feed.read(5), Read::Behind { .. }));
        // Once the ring drops its oldest, a reader before it is behind.
        for m in ["c", "d", "e"] {
            feed.push(score(m));
        }
        assert!(matches!(feed.read((3 << 11) - 1), Read::Behind { .. }));
        assert!(matches!(feed.read((3 << 11) + 1), Read::Events(_)));
    }

    fn ids(r: Read) -> Vec<u64> {
        match r {
            Read::Events(v) => v.iter().map(|e| e.id).collect(),
            other => panic!("expected events, got {other:?}"),
        }
    }

    #[test]
    fn replays_after_an_id_while_it_is_kept() {
        let feed = EventFeed::new(100, 3);
        for m in ["a", "b", "c", "d"] {
            feed.push(score(m));
        }
        assert_eq!(feed.last_id(), 104);
        // 101 fell out of the ring: a reader at 100 is behind, one at 101 is not.
        assert_eq!(feed.read(100), Read::Behind { last_id: 104 });
        assert_eq!(ids(feed.read(101)), vec![102, 103, 104]);
        assert_eq!(ids(feed.read(103)), vec![104]);
        assert!(ids(feed.read(104)).is_empty());
        // An id from the future (another life of the board) is behind too.
        assert_eq!(feed.read(105), Read::Behind { last_id: 104 });
    }

    #[test]
    fn a_cut_sends_every_reader_before_it_to_reload() {
        let feed = EventFeed::new(0, 10);
        for m in ["zed", "ann"] {
            feed.push(score(m));
        }
        feed.cut();
        for before in [0, 1] {
            assert_eq!(feed.read(before), Read::Behind { last_id: 2 });
        }
        assert!(ids(feed.read(2)).is_empty());
        feed.push(score("bob"));
        assert_eq!(ids(feed.read(2)), vec![3]);
    }

    #[test]
    fn a_gap_sends_every_reader_before_it_to_reload() {
        let feed = EventFeed::new(0, 10);
        feed.extend([1, 2].map(|id| Event {
            id,
            kind: score("a"),
        }));
        feed.gap(5);
        assert_eq!(feed.last_id(), 5);
        for before in [0, 2, 4] {
            assert_eq!(feed.read(before), Read::Behind { last_id: 5 });
        }
        assert!(ids(feed.read(5)).is_empty());
        feed.extend([Event {
            id: 6,
            kind: score("b"),
        }]);
        assert_eq!(ids(feed.read(5)), vec![6]);
        // A gap no later than what the feed holds (read again from the stream) changes nothing.
        feed.gap(3);
        assert_eq!(ids(feed.read(5)), vec![6]);
    }

    #[test]
    fn an_empty_feed_knows_only_its_last_id() {
        let feed = EventFeed::new(7, 10);
        assert!(ids(feed.read(7)).is_empty());
        assert_eq!(feed.read(6), Read::Behind { last_id: 7 });
    }

    #[test]
    fn numbered_events_skip_old_ids_and_may_leave_gaps() {
        let feed = EventFeed::new(2, 10);
        let ev = |id| Event {
            id,
            kind: score("x"),
        };
        feed.extend([ev(3), ev(5)]);
        feed.extend([ev(5), ev(4), ev(9)]);
        assert_eq!(ids(feed.read(2)), vec![3, 5, 9]);
        assert_eq!(ids(feed.read(4)), vec![5, 9]);
    }

    #[test]
    fn each_period_is_announced_once_and_never_backwards() {
        let feed = EventFeed::new(0, 10);
        let prev = || "before".to_string();
        assert!(
            !feed.announce("2026-W47", prev),
            "the first period is only learned"
        );
        assert!(!feed.announce("2026-W47", prev));
        assert!(feed.announce("2026-W48", || "2026-W47".into()));
        assert!(
            !feed.announce("2026-W47", prev),
            "a late node's older period is ignored"
        );
        assert_eq!(
            feed.read(0),
            Read::Events(vec![Arc::new(Event {
                id: 1,
                kind: EventKind::Reset {
                    period: "2026-W48".into(),
                    previous: "2026-W47".into()
                }
            })])
        );
    }

    #[test]
    fn a_closed_feed_wakes_its_readers() {
        let feed = Arc::new(EventFeed::new(0, 10));
        let waiting = {
            let feed = feed.clone();
            std::thread::spawn(move || futures_lite_block_on(feed.changed(0)))
        };
        feed.close();
        waiting.join().expect("the reader wakes");
        assert_eq!(feed.read(0), Read::Closed);
    }

    #[test]
    fn feeds_are_shared_and_bounded() {
        let feeds = Feeds::default();
        assert!(feeds.is_empty());
        let (a, new) = feeds.watch("a", 1, || EventFeed::new(0, 4)).expect("watch");
        assert!(new);
        let (a2, new) = feeds.watch("a", 1, || EventFeed::new(0, 4)).expect("watch");
        assert!(!new && Arc::ptr_eq(&a, &a2));
        drop(a2);
        // A read feed survives a sweep; `remove` closes it for its readers.
        assert!(!feeds.sweep("a"));
        feeds.remove("a");
        assert_eq!(a.read(0), Read::Closed);
        assert!(feeds.get("a").is_none() && feeds.is_empty());
        // At the limit an unread feed makes room; read ones do not.
        let held: Vec<_> = (0..MAX_WATCHED_BOARDS)
            .map(|i| {
                feeds
                    .watch(&i.to_string(), 1, || EventFeed::new(0, 1))
                    .expect("watch")
                    .0
            })
            .collect();
        let refused = feeds.watch("x", 1, || EventFeed::new(0, 1));
        assert_eq!(
            refused.map(|_| ()).map_err(|e| e.code()),
            Err(crate::ErrorCode::TooManyStreams)
        );
        drop(held);
        assert!(feeds.watch("x", 1, || EventFeed::new(0, 1)).is_ok());
    }

    /// A minimal executor for one future (the core has no runtime).
    fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Wake, Waker};
        struct Thread(std::thread::Thread);
        impl Wake for Thread {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(Thread(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        let mut f = std::pin::pin!(f);
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
            std::thread::park();
        }
    }
}
