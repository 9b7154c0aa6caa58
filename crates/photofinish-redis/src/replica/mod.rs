//! A node's copy of one board, kept by applying the board's log in Redis with the embedded
//! store's state machine (`photofinish_store::State::apply`) — the one implementation of
//! every rule (docs/redis-layout.md). A replica loads from the board's latest snapshot plus
//! the log after it, takes each entry only if it is the next one and chains from the last
//! ([`Tail`]), and appends its own commands in one call that also answers what other nodes
//! appended before them, so its answer to a command is what every node computes for that
//! entry. Any divergence (a gap, a rewritten entry, a log shorter than what it took) is an
//! error: the caller drops the replica and loads the board again, never serving a state
//! the log no longer supports.
//!
//! An entry holds one group commit: its payload is [`ENTRY_VERSION`], the number of
//! commands, then per command a flag byte (bit 0: the command's time is the node's stamp),
//! the node's stamp in µs, the command's length and the command as the embedded log encodes
//! it. So an append of many writes is one stream entry and one check in Redis, not one per
//! write. The time a command is applied with is decided at apply, from the entry: a stamped
//! command's effective time is max(stamp, previous effective time + 1 µs) (docs/SPEC.md
//! §12, "Time"), so every node applies it alike whatever the appending node's clock said.
//!
//! Here: loading, catching up and taking entries. The entry format is in `entry`, group
//! commit in `commit`, snapshots (when due, publishing, encoding) in `snapshots`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use photofinish_core::events::Feeds;
use photofinish_core::BoardError;
use photofinish_store::{snapshot, Applied, Command, State};

use std::time::Duration;

use crate::log::snapshot::SnapshotMeta;
use crate::log::{BoardLog, Check, Divergence, Entry, LogError, Tail, MAX_READ_ENTRIES};

use commit::Queue;

mod commit;
mod entry;
mod snapshots;

pub use commit::MAX_GROUP_ENTRIES;
pub use entry::*;
pub use snapshots::{
    Snapshotted, SNAPSHOT_MIN_LOG_BYTES, SNAPSHOT_QUIET_LOG_BYTES, SNAPSHOT_VERSION,
};

/// How a replica fails.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReplicaError {
    /// Redis failed or refused (skew included).
    #[error(transparent)]
    Log(#[from] LogError),
    /// The log no longer supports this replica's state: load the board again.
    #[error("the board's log diverged from this node's copy: {0}")]
    Diverged(#[from] Divergence),
    /// An entry or snapshot this build cannot read.
    #[error("unreadable board data: {0}")]
    Unreadable(String),
    /// An entry or snapshot in a format newer than this build knows (docs/SPEC.md §18):
    /// written by a newer Photofinish after `photofinish upgrade` moved the namespace on.
    /// Nothing of it is applied; this node must be upgraded to serve the board.
    #[error("the board's {what} is in format {found}, newer than this node reads (up to {known}): upgrade this node to serve it")]
    NewerFormat {
        /// `log entry` or `snapshot`.
        what: &'static str,
        /// The format found.
        found: u32,
        /// The newest this build reads.
        known: u32,
    },
    /// `--redis-wait`: fewer replicas than asked confirmed the group in time. The
    /// entries are in the log (this node took them), but a failover may yet drop them:
    /// the outcome is unknown to the client, who retries with the same Idempotency-Key.
    #[error("only {acked} of {wanted} redis replicas confirmed the write in time; its outcome is unknown (retry with the same Idempotency-Key)")]
    NotReplicated {
        /// Replicas that confirmed.
        acked: u32,
        /// Replicas asked for.
        wanted: u32,
    },
}

/// `--redis-wait`: how many replicas must confirm each group commit, and how long it may
/// take them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Replicas.
    pub replicas: u32,
    /// The longest wait.
    pub timeout: Duration,
}

/// The instant [`since_start_us`] counts from.
static START: std::sync::LazyLock<std::time::Instant> =
    std::sync::LazyLock::new(std::time::Instant::now);

/// Microseconds since this process's first call: when a replica last caught up.
fn since_start_us() -> u64 {
    u64::try_from(START.elapsed().as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// How many times a catch-up reads the head while the replica is ahead of it, before it
/// takes the writers' lock to decide (see [`Replica::catch_up`]).
const CATCH_UP_LOOKS: usize = 3;

/// What a replica has taken: where it stands in the log, and the last effective time.
#[derive(Debug, Default)]
struct Position {
    tail: Tail,
    effective_us: i64,
}

/// A node's copy of one board. See the module docs.
#[derive(Debug)]
pub struct Replica {
    log: BoardLog,
    state: State,
    /// Entries are taken in order, one taker at a time.
    position: tokio::sync::Mutex<Position>,
    skew: Option<crate::log::SkewBound>,
    /// The node's live event feeds, which each entry taken is published to.
    feeds: std::sync::OnceLock<Arc<Feeds>>,
    /// Calls waiting for the next group commit.
    waiting: std::sync::Mutex<Queue>,
    /// The last entry taken and its check, readable without the writers' lock.
    taken: AtomicU64,
    /// The entry the newest snapshot this node knows of was taken at.
    snapshot_n: AtomicU64,
    /// That snapshot's size, bytes.
    snapshot_bytes: AtomicU64,
    /// Bytes of the entries taken since (the log a new node would replay).
    log_bytes: AtomicU64,
    /// The last entry taken when [`Replica::snapshot_due`] last looked (`u64::MAX`: never).
    looked: AtomicU64,
    /// The latest entries taken and their command counts, as many as hold the last
    /// [`KEEP_COMMANDS`] commands: where a trim must stop.
    recent: std::sync::Mutex<std::collections::VecDeque<(u64, u64)>>,
    /// The newest entry taken that erased a member (docs/SPEC.md §16) and that no
    /// snapshot this node knows of covers yet (0: none): the board's snapshot is due, and
    /// its trim takes every entry up to it, so the name leaves the log.
    erased_at: AtomicU64,
    taken_check: std::sync::Mutex<Check>,
    /// When the latest catch-up that reached the head began ([`since_start_us`]; 0: never).
    caught_up_at: AtomicU64,
    /// When the node last saw this copy used ([`since_start_us`]), as of the last
    /// [`Replica::idle_for`] that found `used` set.
    used_at: AtomicU64,
    /// Whether the node used this copy since the last [`Replica::idle_for`]: a use sets a
    /// flag rather than reading the clock, as every read and write uses its board.
    used: std::sync::atomic::AtomicBool,
    wait: Option<Wait>,
}

impl Replica {
    /// Loads the board `log` holds: its published snapshot (checked whole), then the log
    /// after it. A snapshot that does not check out is passed over only if the log still
    /// starts at its first entry (the whole history); otherwise the board cannot be
    /// served, and the error says why. `skew` bounds how far this node's stamps may
    /// be from Redis's clock.
    ///
    /// A snapshot published between reading the snapshot and reading the log after it may
    /// have trimmed the entries after the one read: a load that meets a gap starts over
    /// (once), from the newer snapshot.
    pub async fn load(
        log: BoardLog,
        skew: Option<crate::log::SkewBound>,
    ) -> Result<Replica, ReplicaError> {
        match Self::load_once(log.clone(), skew).await {
            Err(ReplicaError::Diverged(why)) => {
                tracing::debug!(board = %log.keys().log, %why, "the log moved under a load; loading again");
                Self::load_once(log, skew).await
            }
            other => other,
        }
    }

    async fn load_once(
        log: BoardLog,
        skew: Option<crate::log::SkewBound>,
    ) -> Result<Replica, ReplicaError> {
        let started = std::time::Instant::now();
        let mut snapshot_bytes = 0;
        let mut read_at = started;
        let (state, position) = match log.read_snapshot().await {
            Ok(Some((meta, bytes))) => {
                snapshot_bytes = bytes.len() as u64;
                read_at = std::time::Instant::now();
                tokio::task::spawn_blocking(move || Self::from_snapshot(&meta, &bytes))
                    .await
                    .map_err(|e| ReplicaError::Unreadable(format!("reading a snapshot: {e}")))??
            }
            Ok(None) => (State::default(), Position::default()),
            Err(LogError::Damaged(why)) => Self::from_whole_log(&log, &why).await?,
            Err(e) => return Err(e.into()),
        };
        let (taken, taken_check) = (position.tail.n, position.tail.check.clone());
        let taken_from_snapshot = taken;
        let replica = Replica {
            log,
            state,
            position: tokio::sync::Mutex::new(position),
            skew,
            feeds: std::sync::OnceLock::new(),
            waiting: std::sync::Mutex::new(Queue::default()),
            taken: AtomicU64::new(taken),
            snapshot_n: AtomicU64::new(taken_from_snapshot),
            snapshot_bytes: AtomicU64::new(snapshot_bytes),
            log_bytes: AtomicU64::new(0),
            looked: AtomicU64::new(u64::MAX),
            recent: std::sync::Mutex::new(std::collections::VecDeque::new()),
            erased_at: AtomicU64::new(0),
            taken_check: std::sync::Mutex::new(taken_check),
            caught_up_at: AtomicU64::new(0),
            used_at: AtomicU64::new(since_start_us()),
            used: std::sync::atomic::AtomicBool::new(false),
            wait: None,
        };
        let built_at = std::time::Instant::now();
        replica.catch_up().await?;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        tracing::info!(
            board = %replica.log.keys().log,
            snapshot_n = taken_from_snapshot,
            snapshot_bytes,
            read_ms = ms(read_at - started),
            build_ms = ms(built_at - read_at),
            replayed = replica.taken.load(Ordering::Relaxed) - taken_from_snapshot,
            replay_ms = ms(built_at.elapsed()),
            "board loaded"
        );
        Ok(replica)
    }

    /// Where a board starts when its snapshot was refused (`why`): empty, to be loaded from
    /// its whole log — if the log still holds its whole history, which it does only if it
    /// starts at entry 1 (an empty log only if nothing was ever appended).
    async fn from_whole_log(log: &BoardLog, why: &str) -> Result<(State, Position), ReplicaError> {
        let first = log.read(0, 1).await?;
        let whole = match first.first() {
            Some(e) => e.n == 1,
            None => log.head().await?.n == 0,
        };
        if !whole {
            return Err(ReplicaError::Unreadable(format!(
                "{why}, and the log no longer starts at its first entry"
            )));
        }
        tracing::warn!(board = %log.keys().log, %why, "snapshot refused; loading the board from its whole log");
        Ok((State::default(), Position::default()))
    }

    fn from_snapshot(meta: &SnapshotMeta, bytes: &[u8]) -> Result<(State, Position), ReplicaError> {
        if meta.version > SNAPSHOT_VERSION {
            return Err(ReplicaError::NewerFormat {
                what: "snapshot",
                found: meta.version,
                known: SNAPSHOT_VERSION,
            });
        }
        if meta.version < crate::formats::OLDEST_SNAPSHOT_VERSION {
            return Err(ReplicaError::Unreadable(format!(
                "snapshot format {}; this build reads {} to {SNAPSHOT_VERSION}",
                meta.version,
                crate::formats::OLDEST_SNAPSHOT_VERSION
            )));
        }
        let loaded = snapshot::read(bytes)
            .map_err(|e| ReplicaError::Unreadable(format!("snapshot: {}", e.0)))?;
        if loaded.last_lsn != meta.n {
            return Err(ReplicaError::Unreadable(format!(
                "snapshot says entry {} inside, {} outside",
                loaded.last_lsn, meta.n
            )));
        }
        let position = Position {
            tail: Tail {
                n: meta.n,
                check: meta.check.clone(),
            },
            effective_us: loaded.max_time_us,
        };
        Ok((loaded.state, position))
    }

    /// Waits for `wait`'s replicas after each group commit (`--redis-wait`).
    pub fn with_wait(mut self, wait: Option<Wait>) -> Self {
        self.wait = wait;
        self
    }

    /// How long ago the latest catch-up that reached the log's head began (`None`: none
    /// has): what a read answered from this copy without catching up may miss is at most
    /// what was appended since.
    pub fn caught_up_ago(&self) -> Option<Duration> {
        match self.caught_up_at.load(Ordering::Acquire) {
            0 => None,
            at => Some(Duration::from_micros(since_start_us().saturating_sub(at))),
        }
    }

    /// Whether a catch-up that began after `began` has reached the log's head: then this
    /// copy holds every write acknowledged before `began`.
    pub fn caught_up_since(&self, began: std::time::Instant) -> bool {
        let began_us =
            u64::try_from(began.saturating_duration_since(*START).as_micros()).unwrap_or(u64::MAX);
        // Strictly later: a catch-up in the same microsecond may have begun before.
        self.caught_up_at.load(Ordering::Acquire) > began_us
    }

    /// Notes that the node used this copy (written only when not noted yet since the last
    /// [`Self::idle_for`]).
    pub fn mark_used(&self) {
        if !self.used.load(Ordering::Relaxed) {
            self.used.store(true, Ordering::Relaxed);
        }
    }

    /// How long the node has not used this copy, as seen by looks at it: a use noted
    /// since the last look counts as made now. Called by one task every look, so a copy
    /// is found idle at most one look later than its last use says.
    pub fn idle_for(&self) -> Duration {
        let now = since_start_us();
        if self.used.swap(false, Ordering::Relaxed) {
            self.used_at.store(now, Ordering::Relaxed);
        }
        Duration::from_micros(now.saturating_sub(self.used_at.load(Ordering::Relaxed)))
    }

    /// Publishes each entry taken from now on to `feeds` (a node's live events).
    pub fn set_feeds(&self, feeds: Arc<Feeds>) {
        let _ = self.feeds.set(feeds);
    }

    fn taken_check(&self) -> std::sync::MutexGuard<'_, Check> {
        self.taken_check.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The board's log.
    pub fn log(&self) -> &BoardLog {
        &self.log
    }

    /// The board's state as this node has taken it (read under the board's own locks).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Runs `f` with the last entry taken, while no entry is being taken (a live feed
    /// registered in `f` gets every entry's events after that one).
    pub async fn at_taken<R>(&self, f: impl FnOnce(u64) -> R) -> R {
        let pos = self.position.lock().await;
        f(pos.tail.n)
    }

    /// The last entry taken.
    pub async fn taken(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }

    /// Takes every entry up to the log's head as it is now: after this, the replica
    /// reflects every command appended before the call (docs/SPEC.md §12, "Reads").
    ///
    /// A replica already at the head (the same number and check) answers without waiting
    /// for the writers' lock: reads do not queue behind a group append. One ahead of the
    /// head it read asks again (its own appends may have come after that read), and takes
    /// the lock to decide only if it stays ahead.
    pub async fn catch_up(&self) -> Result<u64, ReplicaError> {
        let began = since_start_us();
        let mut head = self.log.fresh_head().await?;
        for _ in 0..CATCH_UP_LOOKS {
            let taken = self.taken.load(Ordering::Acquire);
            if taken == head.n && *self.taken_check() == head.check {
                self.caught_up_at.fetch_max(began, Ordering::AcqRel);
                return Ok(taken);
            }
            if taken < head.n {
                break;
            }
            head = self.log.head().await?;
        }
        let mut pos = self.position.lock().await;
        if pos.tail.n > head.n {
            // Entries taken while this call waited for the lock: ask again, now that
            // nothing else takes (a head read before them is not a shorter log).
            head = self.log.head().await?;
        }
        pos.tail.follows(&head)?;
        self.take_through(&mut pos, head.n).await?;
        self.caught_up_at.fetch_max(began, Ordering::AcqRel);
        Ok(pos.tail.n)
    }

    /// Takes the entries after the last one taken through entry `upto`, read a page at a
    /// time; a page that comes back empty first means the log does not hold them (a gap).
    async fn take_through(&self, pos: &mut Position, upto: u64) -> Result<(), ReplicaError> {
        while pos.tail.n < upto {
            let limit = (upto - pos.tail.n).min(MAX_READ_ENTRIES as u64) as usize;
            let page = self.log.read(pos.tail.n, limit).await?;
            if page.is_empty() {
                return Err(Divergence::Gap {
                    after: pos.tail.n,
                    found: upto,
                }
                .into());
            }
            self.follow_all(pos, &page).await?;
        }
        Ok(())
    }

    /// Before entry `e` is taken: if it puts an import's ranking in place, the ranking is
    /// staged, read from its chunks in Redis ([`import_file`]) unless this node staged it
    /// itself, and the import is listed as taken at `e` (its chunks go when the log is
    /// trimmed past it). The append that wrote `e` listed it already; listing it again here
    /// places the imports of entries appended before the append did (listed at `+inf`
    /// then), which no trim would otherwise reach. A ranking that cannot be read stops the replica (it would answer otherwise
    /// than the nodes that applied it) — unless the entry itself was trimmed meanwhile,
    /// which is a gap: the board is loaded again from the snapshot that includes it.
    async fn prepare(&self, e: &Entry, cmds: &[Decoded]) -> Result<(), ReplicaError> {
        for c in cmds {
            if let Command::Import { file, .. } = c.cmd.inner() {
                self.prepare_import(e, file).await?;
            }
        }
        Ok(())
    }

    async fn prepare_import(&self, e: &Entry, file: &str) -> Result<(), ReplicaError> {
        let file = file.to_owned();
        let keys = self.log.keys();
        if !self.state.is_staged(&file) {
            let unreadable =
                |why: String| ReplicaError::Unreadable(format!("import {file}: {why}"));
            let (id, chunks) = parse_import_file(&file)
                .ok_or_else(|| unreadable("a name no node writes".into()))?;
            let Some(bytes) = self.log.chunks(&keys.import_prefix(id), chunks).await? else {
                let next = self.log.read(e.n - 1, 1).await?;
                if next.first().is_none_or(|x| x.n != e.n) {
                    return Err(Divergence::Gap {
                        after: e.n - 1,
                        found: next.first().map_or(e.n, |x| x.n),
                    }
                    .into());
                }
                return Err(unreadable("its ranking is no longer in redis".into()));
            };
            let ranking = photofinish_store::import::decode(&bytes).map_err(|e| unreadable(e.0))?;
            self.state.stage(file.clone(), ranking);
        }
        let _: i64 = self
            .log
            .conn()
            .query(
                redis::cmd("ZADD")
                    .arg(&keys.imported)
                    .arg("XX")
                    .arg(e.n)
                    .arg(&file),
            )
            .await
            .map_err(LogError::from)?;
        Ok(())
    }

    /// Takes the entries of `page` in order, staging what they need first.
    async fn follow_all(&self, pos: &mut Position, page: &[Entry]) -> Result<(), ReplicaError> {
        for e in page {
            // Decoded before the position moves: an entry this build cannot read stops the
            // replica here, every time, instead of being passed over by the next catch-up.
            let cmds = decode_entry(&e.payload)?;
            self.prepare(e, &cmds).await?;
            self.take(pos, e, cmds)?;
        }
        Ok(())
    }

    /// Takes one entry (its commands decoded): checks it follows, applies each command in
    /// order; their answers.
    fn take(
        &self,
        pos: &mut Position,
        e: &Entry,
        cmds: Vec<Decoded>,
    ) -> Result<Vec<Result<Applied, BoardError>>, ReplicaError> {
        pos.tail.take(e)?;
        self.log_bytes
            .fetch_add(e.payload.len() as u64, Ordering::Relaxed);
        self.note_recent(e.n, cmds.len() as u64);
        let feeds = self.feeds.get().filter(|f| !f.is_empty());
        let mut answers = Vec::with_capacity(cmds.len());
        for (
            i,
            Decoded {
                stamped,
                stamp_us,
                mut cmd,
            },
        ) in cmds.into_iter().enumerate()
        {
            if cmd.takes_time(stamped) {
                let at = effective_time(stamp_us, pos.effective_us);
                pos.effective_us = at;
                cmd.stamp(at, stamped);
            }
            // A refusal by a rule is part of the history: every node refuses it alike.
            let applied = self.state.apply(&cmd);
            if applied.is_ok() && cmd.erases() {
                self.erased_at.fetch_max(e.n, Ordering::AcqRel);
            }
            if let Some(feeds) = feeds {
                let now = pos.effective_us.max(stamp_us);
                if let Some(feed) = feeds.get(cmd.board()) {
                    // Numbered from the entry, and a new period announced by its first
                    // entry (whatever command), so every node's feed says the same.
                    if i == 0 {
                        feed.advance_to(pos.tail.n << EVENT_ID_SHIFT);
                    }
                    if !matches!(cmd.inner(), Command::DeleteBoard(_)) {
                        let _ = photofinish_store::events::announce_current(
                            &feed,
                            &self.state,
                            cmd.board(),
                            now,
                        );
                    }
                }
                photofinish_store::events::publish(feeds, &self.state, &cmd, &applied, now);
            }
            answers.push(applied);
        }
        // Published after the apply: a read that finds the replica at the head without
        // taking the lock then sees the entry's effect.
        *self.taken_check() = pos.tail.check.clone();
        self.taken.store(pos.tail.n, Ordering::Release);
        Ok(answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_a_newer_version_is_refused() {
        let cmd =
            Command::DeleteBoard(photofinish_store::command::DeleteBoard { board: "b".into() });
        let p = encode_entry(&cmd, true, 42);
        assert_eq!(
            decode_entry(&p).expect("decode"),
            vec![Decoded {
                stamped: true,
                stamp_us: 42,
                cmd: cmd.clone()
            }]
        );
        let other =
            Command::DeleteBoard(photofinish_store::command::DeleteBoard { board: "c".into() });
        let group = encode_group([(&cmd, false, 1), (&other, true, 2)].into_iter());
        let got = decode_entry(&group).expect("decode");
        assert_eq!(
            (got.len(), &got[1].cmd, got[1].stamped, got[0].stamp_us),
            (2, &other, true, 1)
        );
        assert!(decode_entry(&group[..group.len() - 1]).is_err());
        let mut newer = p.clone();
        newer[0] = ENTRY_VERSION + 1;
        assert!(matches!(
            decode_entry(&newer),
            Err(ReplicaError::NewerFormat { found, known, .. })
                if found == u32::from(ENTRY_VERSION) + 1 && known == u32::from(ENTRY_VERSION)
        ));
        let mut older = p.clone();
        older[0] = ENTRY_VERSION - 1;
        assert!(matches!(
            decode_entry(&older),
            Err(ReplicaError::Unreadable(_))
        ));
        assert!(decode_entry(&p[..5]).is_err());
    }

    #[test]
    fn effective_time_never_goes_back_and_always_moves() {
        assert_eq!(effective_time(100, 50), 100);
        assert_eq!(effective_time(100, 100), 101);
        assert_eq!(effective_time(10, 100), 101);
        assert_eq!(effective_time(0, i64::MAX), i64::MAX);
    }
}
