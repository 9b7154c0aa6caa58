//! The [`Store`]: the log behind one lock, a writer thread beside it, and a snapshotter.
//!
//! Write path: commands are committed in batches under the log's lock (group commit). A
//! commit stamps each command with the next LSN and — unless it carries an explicit `at` —
//! the monotonic clock, appends the batch, fsyncs once under `always`, and only then applies
//! the batch to the state and replies; so LSN order is apply order. If the append or fsync
//! fails, the batch is cut from the file again and every command in it answers
//! `Unavailable`: the state never saw it. Later batches retry, so writes resume when the
//! disk does. Reads never take the log's lock.
//!
//! Who commits depends on the policy. Under `always` a command is queued to the writer
//! thread (bounded queue; full → `Overloaded`), which takes everything queued and shares one
//! fsync among it. Under `everysec` and `never` nothing waits for an fsync, so no thread
//! hand-off is needed: the command joins a shared queue (same bound), and the first one
//! queued calls [`StoreOptions::on_queued`], whose owner runs [`Store::commit_queued`] soon
//! (the server: a tokio task, after the requests that are ready have queued theirs, so one
//! `write()` serves them all and their answers go out together). Without that hook the
//! caller commits at once. Whoever holds the log commits what was queued meanwhile before
//! it lets go, so nothing queued is left behind. The writer thread then only fsyncs about
//! once a second. docs/bench-history.md §2 measures the designs tried.
//!
//! Snapshots: when a segment passes `segment_bytes`, the writer seals it (fsync) and starts
//! a new one; if a snapshot is due (the segments sealed since the last one hold as many
//! bytes as it does) and the snapshotter is idle, the writer then copies the state —
//! between two commits, so the copy is the state at the last LSN — and hands it over. The
//! snapshotter writes the copy atomically and deletes what it covers
//! ([`crate::compaction`]). Commits wait for the copy (~30 ms per million members); reads
//! do not. A backup takes the same copy ([`Store::backup_to`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use photofinish_core::clock::{Clock, MonotonicClock};
use photofinish_core::BoardError;

use crate::command::Command;
use crate::compaction::{remove_covered, snapshotter, write_snapshot, SnapshotJob, SnapshotShared};
use crate::io::Storage;
use crate::log::segment_name;
use crate::recovery::{replay, scan};
use crate::state::{Applied, State};
use crate::StoreError;
use photofinish_core::events::Feeds;

mod log;

use log::{LogWriter, Sequencer};

/// Most commands one group commit takes: bounds the batch buffer and reply latency.
pub const MAX_BATCH_COMMANDS: usize = 4096;
/// Default queue length in front of the writer; a full queue answers `Overloaded`.
pub const DEFAULT_QUEUE_COMMANDS: usize = 65_536;
/// Default segment size that triggers a new segment and a snapshot.
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 * 1024 * 1024;
/// The encoding buffer is given back when a batch grew it past this.
const KEEP_BUF_BYTES: usize = 1 << 20;
/// How often the idle writer wakes to honour `everysec`.
const TICK: Duration = Duration::from_millis(200);

/// When the log is fsynced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Before every acknowledgement (group commit shares one fsync per batch).
    #[default]
    Always,
    /// About once a second; a crash may lose the last second of writes.
    EverySec,
    /// Never explicitly; the OS writes back when it likes.
    Never,
}

impl FsyncPolicy {
    /// Parses `always`, `everysec` or `never`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "always" => Some(Self::Always),
            "everysec" => Some(Self::EverySec),
            "never" => Some(Self::Never),
            _ => None,
        }
    }

    /// Whether the writer thread commits (`always`: one fsync per batch). Under the other
    /// policies nothing waits for an fsync: commands are queued for whoever the store's
    /// [`StoreOptions::on_queued`] hook wakes, or committed by the caller without one.
    pub fn writer_thread_commits(self) -> bool {
        self == Self::Always
    }
}

/// How to open a store.
#[derive(Clone)]
pub struct StoreOptions {
    /// Data directory.
    pub dir: PathBuf,
    /// fsync policy.
    pub fsync: FsyncPolicy,
    /// Segment size that triggers a snapshot.
    pub segment_bytes: u64,
    /// Queue length in front of the writer.
    pub queue_commands: usize,
    /// Called with the duration of every fsync (metrics).
    pub on_fsync: Option<Arc<dyn Fn(Duration) + Send + Sync>>,
    /// Under `everysec` and `never`: called when a command is queued while nothing else
    /// was; the callee must make [`Store::commit_queued`] run soon (the server wakes a task
    /// for it, so that one commit takes every request that became ready meanwhile). Without
    /// it the submitting thread commits at once.
    pub on_queued: Option<Arc<dyn Fn() + Send + Sync>>,
    /// Write a snapshot of the live state at graceful shutdown, so the next start loads it
    /// instead of replaying the log (default on).
    pub snapshot_on_shutdown: bool,
    /// Most boards (docs/SPEC.md §7); `None` for no limit.
    pub max_boards: Option<u64>,
}

impl StoreOptions {
    /// Defaults for `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            fsync: FsyncPolicy::Always,
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            queue_commands: DEFAULT_QUEUE_COMMANDS,
            on_fsync: None,
            on_queued: None,
            snapshot_on_shutdown: true,
            max_boards: None,
        }
    }
}

/// Receives the result of one command.
pub type Reply = Box<dyn FnOnce(Result<Applied, BoardError>) + Send>;

struct Job {
    cmd: Command,
    stamp: bool,
    reply: Reply,
}

/// Whether the last write reached the disk.
#[derive(Debug, Default)]
pub struct Health {
    failing: AtomicBool,
    last_error: Mutex<Option<String>>,
}

impl Health {
    /// `None` when writes work; else the last I/O error.
    pub fn write_error(&self) -> Option<String> {
        if self.failing.load(Ordering::SeqCst) {
            self.last_error.lock().ok().and_then(|e| e.clone())
        } else {
            None
        }
    }
    fn set(&self, err: Option<String>) {
        if err.is_none() && !self.failing.load(Ordering::SeqCst) {
            return; // the common case, once per commit: no lock
        }
        self.failing.store(err.is_some(), Ordering::SeqCst);
        if let Ok(mut e) = self.last_error.lock() {
            *e = err;
        }
    }
}

/// The open store. See the module docs.
pub struct Store {
    state: Arc<State>,
    clock: Arc<MonotonicClock<Box<dyn Clock>>>,
    health: Arc<Health>,
    sequencer: Arc<Sequencer>,
    /// Callers commit themselves (`everysec`, `never`) instead of queueing to the writer.
    caller_commits: bool,
    queue_commands: usize,
    on_queued: Option<Arc<dyn Fn() + Send + Sync>>,
    /// The writer's queue (`always`); `None` once shut down.
    tx: Mutex<Option<SyncSender<Job>>>,
    /// The writer returns the LSN of its last durable record, or `None` after a failure.
    writer: Mutex<Option<JoinHandle<Option<u64>>>>,
    snapshotter: Mutex<Option<JoinHandle<()>>>,
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    snapshot_on_shutdown: bool,
    max_boards: Option<u64>,
    /// Live event feeds of watched boards (docs/SPEC.md §8), published by the commit.
    feeds: Arc<Feeds>,
    /// The data directory's lock, held while the store is open ([`lock_dir`]).
    _lock: std::fs::File,
}

/// The file in a data directory that the open store holds an exclusive lock on.
pub const LOCK_FILE: &str = "LOCK";

/// Locks `dir` for this store (an exclusive `flock` on its [`LOCK_FILE`], released when
/// the file closes, a crash included): a second server started on the same directory is
/// refused before it reads anything, instead of replaying, cutting torn tails and
/// appending beside the first — and the files recovery maps (`io.rs`) are never changed
/// by another process meanwhile.
fn lock_dir(dir: &Path) -> Result<std::fs::File, StoreError> {
    let path = dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StoreError::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::io(
            &path,
            std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                "the data directory is in use: another Photofinish process holds its lock",
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(StoreError::io(&path, e)),
    }
}

/// Recovers the state in `dir` (the newest snapshot and the log after it; import files
/// no record names are removed) and opens the log's last segment for appending: the
/// state, the log file, its first LSN and its length.
fn recover(
    storage: &dyn Storage,
    dir: &Path,
) -> Result<
    (
        crate::recovery::Recovered,
        Box<dyn crate::io::LogFile>,
        u64,
        u64,
    ),
    StoreError,
> {
    let (snaps, segments) = scan(storage, dir)?;
    let newest_snap = snaps.last().map(|(_, p)| p.clone());
    let rec = replay(storage, newest_snap.as_deref(), &segments)?;
    let needed = rec.imports.iter().cloned().collect();
    crate::import::remove_unreferenced(storage, dir, &needed);
    let next_lsn = rec.last_lsn + 1;
    let (seg_first, seg_len) = match segments.last() {
        Some(s) if rec.tail_len > 0 || s.first_lsn == next_lsn => (s.first_lsn, rec.tail_len),
        _ => (next_lsn, 0),
    };
    let path = dir.join(segment_name(seg_first));
    let log = storage
        .open_log(&path, seg_len)
        .map_err(|e| StoreError::io(&path, e))?;
    tracing::info!(dir = %dir.display(), last_lsn = rec.last_lsn, snapshot = ?rec.snapshot, snapshot_ms = rec.snapshot_ms, replayed_records = rec.replayed_records, replay_ms = rec.replay_ms, "store recovered");
    Ok((rec, log, seg_first, seg_len))
}

/// Starts the writer thread (it sequences and commits `rx`'s commands) and the snapshot
/// thread (it writes the snapshots `snap_rx` asks for).
fn start_threads(
    sequencer: &Arc<Sequencer>,
    rx: mpsc::Receiver<Job>,
    storage: &Arc<dyn Storage>,
    dir: &Path,
    snap_rx: mpsc::Receiver<SnapshotJob>,
    snap: Arc<SnapshotShared>,
) -> Result<(JoinHandle<Option<u64>>, JoinHandle<()>), StoreError> {
    let writer_sequencer = sequencer.clone();
    let w = std::thread::Builder::new()
        .name("pf-writer".into())
        .spawn(move || writer_sequencer.run_writer(rx))
        .map_err(|e| StoreError::io(dir, e))?;
    let (snap_dir, snap_storage) = (dir.to_owned(), storage.clone());
    let s = std::thread::Builder::new()
        .name("pf-snapshot".into())
        .spawn(move || snapshotter(&*snap_storage, &snap_dir, snap_rx, snap))
        .map_err(|e| StoreError::io(dir, e))?;
    Ok((w, s))
}

impl Store {
    /// Writes a consistent snapshot of the data to `out` while writes go on
    /// ([`crate::backup`]); its LSN. The state is copied between two commits, as for a
    /// snapshot, and written from the copy.
    pub fn backup_to(&self, out: &mut dyn std::io::Write) -> Result<u64, StoreError> {
        let (copy, last_lsn, now_us) = self.sequencer.with_log(|log| log.copy_state());
        crate::snapshot::write(&copy, last_lsn, now_us, out)
            .map_err(|e| StoreError::io(&self.dir, e))?;
        Ok(last_lsn)
    }

    /// The storage and data directory (for import files, [`crate::import`]).
    pub(crate) fn files(&self) -> (&Arc<dyn Storage>, &std::path::Path) {
        (&self.storage, &self.dir)
    }

    /// Recovers the state in `opts.dir` and starts the writer and snapshotter.
    pub fn open(
        storage: Arc<dyn Storage>,
        opts: StoreOptions,
        clock: Box<dyn Clock>,
    ) -> Result<Store, StoreError> {
        storage
            .create_dir_all(&opts.dir)
            .map_err(|e| StoreError::io(&opts.dir, e))?;
        let lock = lock_dir(&opts.dir)?;
        let (rec, log, seg_first, seg_len) = recover(&*storage, &opts.dir)?;
        let clock = Arc::new(MonotonicClock::new(clock));
        clock.observe(rec.max_time_us);
        let next_lsn = rec.last_lsn + 1;
        let state = Arc::new(rec.state);
        let health = Arc::new(Health::default());
        let feeds = Arc::new(Feeds::default());
        let (snap_tx, snap_rx) = mpsc::channel::<SnapshotJob>();
        let snap = Arc::new(SnapshotShared::default());
        snap.last_bytes.store(rec.snapshot_bytes, Ordering::Relaxed);
        let (tx, rx) = mpsc::sync_channel(opts.queue_commands);
        let log = LogWriter {
            storage: storage.clone(),
            dir: opts.dir.clone(),
            file: log,
            seg_first,
            seg_len,
            next_lsn,
            fsync: opts.fsync,
            segment_bytes: opts.segment_bytes,
            dirty: false,
            last_sync: Instant::now(),
            broken_tail: false,
            closed: false,
            buf: Vec::new(),
            state: state.clone(),
            clock: clock.clone(),
            health: health.clone(),
            feeds: feeds.clone(),
            snap_tx: Some(snap_tx),
            snap: snap.clone(),
            since_snapshot: rec.log_bytes - seg_len,
            imports: rec.imports.clone(),
            on_fsync: opts.on_fsync.clone(),
            last_stamp_us: rec.max_time_us,
            erased: rec.erased,
        };
        let sequencer = Arc::new(Sequencer {
            log: Mutex::new(log),
            queued: Mutex::new(Vec::new()),
        });
        let (w, s) = start_threads(&sequencer, rx, &storage, &opts.dir, snap_rx, snap)?;
        Ok(Store {
            state,
            clock,
            health,
            sequencer,
            caller_commits: !opts.fsync.writer_thread_commits(),
            queue_commands: opts.queue_commands,
            on_queued: opts.on_queued.clone(),
            tx: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(w)),
            snapshotter: Mutex::new(Some(s)),
            storage,
            dir: opts.dir,
            snapshot_on_shutdown: opts.snapshot_on_shutdown,
            max_boards: opts.max_boards,
            feeds,
            _lock: lock,
        })
    }

    /// The live event feeds.
    pub(crate) fn feeds(&self) -> &Feeds {
        &self.feeds
    }

    /// The served state (for reads).
    pub fn state(&self) -> &Arc<State> {
        &self.state
    }

    /// The store's monotonic clock, µs since the epoch.
    pub fn now_us(&self) -> i64 {
        self.clock.now_us()
    }

    /// The board limit put on every create.
    pub fn max_boards(&self) -> Option<u64> {
        self.max_boards
    }

    /// The last write error, while writes are failing.
    pub fn write_error(&self) -> Option<String> {
        self.health.write_error()
    }

    /// Queues `cmd`; `stamp` sets its instant from the clock at commit. `reply` is called
    /// once the command is durable (per the fsync policy) and applied, or failed: under
    /// `always` on the writer thread; under `everysec` and `never` in whichever thread
    /// commits it — the one [`StoreOptions::on_queued`] woke, or without that hook usually
    /// the caller before `submit` returns. Either way it must be quick.
    pub fn submit(&self, cmd: Command, stamp: bool, reply: Reply) -> Result<(), BoardError> {
        if self.caller_commits {
            {
                let mut queued = lock(&self.sequencer.queued);
                if queued.len() >= self.queue_commands {
                    return Err(BoardError::Overloaded);
                }
                queued.push(Job { cmd, stamp, reply });
                if queued.len() > 1 {
                    return Ok(()); // whoever queued the first one arranged the commit
                }
            }
            match &self.on_queued {
                Some(wake) => wake(),
                None => self.sequencer.commit_queued(),
            }
            return Ok(());
        }
        let guard = self.tx.lock().map_err(|_| BoardError::ShuttingDown)?;
        let tx = guard.as_ref().ok_or(BoardError::ShuttingDown)?;
        match tx.try_send(Job { cmd, stamp, reply }) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(BoardError::Overloaded),
            Err(TrySendError::Disconnected(_)) => Err(BoardError::ShuttingDown),
        }
    }

    /// Commits everything queued under `everysec`/`never` (see
    /// [`StoreOptions::on_queued`]); returns at once if another thread holds the log, which
    /// then commits it.
    pub fn commit_queued(&self) {
        self.sequencer.commit_queued();
    }

    /// Stops taking commands, lets the writer finish the queued ones and sync, joins the
    /// threads, and — when the log is clean and has records past the newest snapshot —
    /// writes a snapshot of the live state (nothing writes any more, so it stalls no one)
    /// and deletes the segments it covers. A failure there loses nothing: the log stays.
    pub fn shutdown(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let writer = self.writer.lock().ok().and_then(|mut w| w.take());
        let last_lsn = writer.and_then(|w| w.join().ok().flatten());
        // The writer's exit closed the snapshotter's channel: it ends after its current job.
        if let Some(s) = self.snapshotter.lock().ok().and_then(|mut s| s.take()) {
            let _ = s.join();
        }
        if let (Some(lsn), true) = (last_lsn, self.snapshot_on_shutdown) {
            if let Err(e) = self.snapshot_at_shutdown(lsn) {
                tracing::error!(error = %e, "shutdown snapshot failed; the log keeps everything");
            }
        }
    }

    fn snapshot_at_shutdown(&self, last_lsn: u64) -> Result<(), StoreError> {
        let (snaps, segments) = scan(&*self.storage, &self.dir)?;
        if last_lsn == 0 || snaps.last().is_some_and(|(l, _)| *l >= last_lsn) {
            return Ok(());
        }
        let start = Instant::now();
        let (path, _) = write_snapshot(
            &*self.storage,
            &self.dir,
            &self.state,
            last_lsn,
            self.clock.now_us(),
        )?;
        remove_covered(&*self.storage, &snaps, &segments, &path);
        // Every import is in the snapshot now.
        crate::import::remove_unreferenced(&*self.storage, &self.dir, &Default::default());
        tracing::info!(snapshot = %path.display(), last_lsn, took_ms = start.elapsed().as_millis() as u64, "shutdown snapshot written");
        Ok(())
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Locks even if a panic poisoned the lock: the log's fields only change after the bytes
/// they describe were written, so they stay true; a queue is a queue.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
