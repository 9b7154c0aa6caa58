//! The log's writing end: the [`Sequencer`] that puts commands in log order (the open log
//! behind its lock, and the queue of commands waiting for whoever holds it next), and the
//! [`LogWriter`] that commits a batch — stamp, append, fsync by the policy, apply, reply —
//! seals full segments and hands the snapshotter a copy of the state when one is due.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

use photofinish_core::clock::{Clock, MonotonicClock};
use photofinish_core::events::Feeds;
use photofinish_core::BoardError;

use super::{lock, FsyncPolicy, Health, Job, KEEP_BUF_BYTES, MAX_BATCH_COMMANDS, TICK};
use crate::command::Command;
use crate::compaction::{SnapshotJob, SnapshotShared};
use crate::io::{LogFile, Storage};
use crate::log::{encode_frame, segment_name};
use crate::state::State;

/// Puts commands in log order: the open log behind its lock, and the queue of commands
/// waiting for whoever holds it next. The store's callers and its writer thread share it.
pub(super) struct Sequencer {
    pub(super) log: Mutex<LogWriter>,
    /// Commands waiting for whoever holds `log` next (`everysec`, `never`).
    pub(super) queued: Mutex<Vec<Job>>,
}

impl Sequencer {
    /// Commits everything queued, unless another thread holds the log: that thread runs
    /// this after letting go, so a queued command is never left behind.
    pub(super) fn commit_queued(&self) {
        loop {
            let mut log = match self.log.try_lock() {
                Ok(log) => log,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => return,
            };
            let batch = std::mem::take(&mut *lock(&self.queued));
            if !batch.is_empty() {
                if log.closed {
                    for job in batch {
                        (job.reply)(Err(BoardError::ShuttingDown));
                    }
                } else {
                    log.commit(batch);
                    log.rotate_if_full();
                }
            }
            drop(log);
            // A command queued while we held the log found it taken: commit it now.
            if lock(&self.queued).is_empty() {
                return;
            }
        }
    }

    /// Runs `f` on the log, then commits what was queued meanwhile.
    pub(super) fn with_log<R>(&self, f: impl FnOnce(&mut LogWriter) -> R) -> R {
        let r = f(&mut lock(&self.log));
        self.commit_queued();
        r
    }

    /// The writer thread, until the queue closes: group commits under `always`, the
    /// `everysec` fsync under every policy. Returns the LSN of the last durable record, or
    /// `None` if the log ended unclean (a failed append or sync).
    pub(super) fn run_writer(&self, rx: Receiver<Job>) -> Option<u64> {
        loop {
            let first = match rx.recv_timeout(TICK) {
                Ok(job) => job,
                Err(RecvTimeoutError::Timeout) => {
                    self.with_log(|log| {
                        log.sync_if_due();
                        // An erase whose snapshot waited for a busy snapshotter.
                        log.rotate_if_full();
                    });
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH_COMMANDS {
                match rx.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            self.with_log(|log| {
                log.commit(batch);
                log.sync_if_due();
                log.rotate_if_full();
            });
        }
        self.with_log(LogWriter::finish)
    }
}

/// The writing end of the log: the open segment, where the next record goes, and what a
/// commit needs (the state to apply to, the clock to stamp with).
pub(super) struct LogWriter {
    pub(super) storage: Arc<dyn Storage>,
    pub(super) dir: PathBuf,
    pub(super) file: Box<dyn LogFile>,
    pub(super) seg_first: u64,
    pub(super) seg_len: u64,
    pub(super) next_lsn: u64,
    pub(super) fsync: FsyncPolicy,
    pub(super) segment_bytes: u64,
    pub(super) dirty: bool,
    pub(super) last_sync: Instant,
    /// Bytes past `seg_len` may be in the file after a failed append: cut them first.
    pub(super) broken_tail: bool,
    /// Shut down: queued commands are refused.
    pub(super) closed: bool,
    /// Frames being encoded (kept to reuse its allocation).
    pub(super) buf: Vec<u8>,
    pub(super) state: Arc<State>,
    pub(super) clock: Arc<MonotonicClock<Box<dyn Clock>>>,
    pub(super) health: Arc<Health>,
    pub(super) feeds: Arc<Feeds>,
    /// Hands the snapshotter a copy of the state; dropped at shutdown, which ends it.
    pub(super) snap_tx: Option<mpsc::Sender<SnapshotJob>>,
    /// Shared with the snapshotter: busy, and the newest snapshot's size.
    pub(super) snap: Arc<SnapshotShared>,
    /// Bytes sealed since the last copy handed over: a snapshot is due when they reach
    /// the newest snapshot's size (and at least one segment).
    pub(super) since_snapshot: u64,
    /// Import files named by logged records, not yet in a snapshot handed over.
    pub(super) imports: Vec<PathBuf>,
    pub(super) on_fsync: Option<Arc<dyn Fn(Duration) + Send + Sync>>,
    /// The last instant a command was stamped with ([`crate::command::effective_time`]).
    pub(super) last_stamp_us: i64,
    /// An erase was applied since the last snapshot was handed over: the next chance
    /// seals the segment and snapshots, whatever their sizes.
    pub(super) erased: bool,
}

impl LogWriter {
    /// Closes the log at shutdown (later commands are refused) and makes it durable; the
    /// LSN of the last durable record, or `None` if the log ended unclean.
    pub(super) fn finish(&mut self) -> Option<u64> {
        self.closed = true;
        self.snap_tx = None;
        if self.dirty {
            if let Err(e) = self.sync() {
                tracing::error!(error = %e, "final log sync failed");
                return None;
            }
        }
        tracing::info!(next_lsn = self.next_lsn, "log writer stopped");
        (!self.broken_tail && self.health.write_error().is_none()).then_some(self.next_lsn - 1)
    }

    pub(super) fn sync(&mut self) -> std::io::Result<()> {
        let start = Instant::now();
        self.file.sync()?;
        if let Some(f) = &self.on_fsync {
            f(start.elapsed());
        }
        self.dirty = false;
        self.last_sync = Instant::now();
        Ok(())
    }

    pub(super) fn sync_if_due(&mut self) {
        if self.dirty
            && self.fsync == FsyncPolicy::EverySec
            && self.last_sync.elapsed() >= Duration::from_secs(1)
        {
            if let Err(e) = self.sync() {
                tracing::error!(error = %e, "background log sync failed");
                self.health.set(Some(e.to_string()));
            }
        }
    }

    /// Appends `self.buf` durably per policy; on error the file is cut back to where it was.
    pub(super) fn append(&mut self) -> std::io::Result<()> {
        if self.broken_tail {
            self.file.truncate(self.seg_len)?;
            self.broken_tail = false;
        }
        let result = self.file.append(&self.buf).and_then(|()| {
            self.dirty = true;
            if self.fsync == FsyncPolicy::Always {
                self.sync()
            } else {
                Ok(())
            }
        });
        if result.is_err() {
            self.broken_tail = self.file.truncate(self.seg_len).is_err();
        }
        result
    }

    /// Stamps, logs, applies and answers `batch`, in order: all of it, or — when the log
    /// cannot be written — none of it.
    pub(super) fn commit(&mut self, mut batch: Vec<Job>) {
        if self.buf.capacity() > KEEP_BUF_BYTES {
            self.buf = Vec::new();
        }
        self.buf.clear();
        for (i, job) in batch.iter_mut().enumerate() {
            if job.cmd.takes_time(job.stamp) {
                let at = crate::command::effective_time(self.clock.now_us(), self.last_stamp_us);
                self.last_stamp_us = at;
                self.clock.observe(at);
                job.cmd.stamp(at, job.stamp);
            }
            encode_frame(&mut self.buf, self.next_lsn + i as u64, &job.cmd);
        }
        let mut keys = batch
            .iter()
            .filter_map(|job| match job.cmd.inner() {
                Command::Keyed { key, .. } => Some(key.id),
                _ => None,
            })
            .peekable();
        if keys.peek().is_some() {
            self.state.idempotency().warm(keys, self.clock.now_us());
        }
        self.state
            .prefetch(batch.iter().map(|job| &job.cmd), self.last_stamp_us);
        match self.append() {
            Ok(()) => {
                self.health.set(None);
                self.next_lsn += batch.len() as u64;
                self.seg_len += self.buf.len() as u64;
                for job in batch {
                    if let Command::Import { file, .. } = job.cmd.inner() {
                        self.imports.push(self.dir.join(file));
                    }
                    let result = self.state.apply(&job.cmd);
                    if result.is_ok() && job.cmd.erases() {
                        self.erased = true;
                    }
                    if !self.feeds.is_empty() {
                        let now = self.clock.now_us();
                        crate::events::publish(&self.feeds, &self.state, &job.cmd, &result, now);
                    }
                    (job.reply)(result);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, commands = batch.len(), "log append failed; writes refused");
                self.health.set(Some(e.to_string()));
                for job in batch {
                    (job.reply)(Err(BoardError::Unavailable(e.to_string())));
                }
            }
        }
    }

    pub(super) fn rotate_if_full(&mut self) {
        // An erase (docs/SPEC.md §16) seals the segment holding it and snapshots at once,
        // so the name leaves every file: the snapshot deletes the segments it covers.
        let erase_due = self.erased && !self.snap.busy.load(Ordering::Acquire);
        if erase_due && self.seg_len == 0 {
            self.hand_over_snapshot();
            return;
        }
        if self.seg_len < self.segment_bytes && !erase_due {
            return;
        }
        let path = self.dir.join(segment_name(self.next_lsn));
        let opened = self.sync().and_then(|()| self.storage.open_log(&path, 0));
        match opened {
            Ok(file) => {
                self.file = file;
                self.seg_first = self.next_lsn;
                self.since_snapshot += self.seg_len;
                self.seg_len = 0;
                self.hand_over_snapshot();
            }
            Err(e) => tracing::warn!(error = %e, "could not start a new log segment; will retry"),
        }
    }

    /// A copy of the state as of the last LSN, that LSN and the clock (for a snapshot or
    /// a backup). Run under the log's lock, between two commits.
    pub(super) fn copy_state(&self) -> (State, u64, i64) {
        (self.state.copy(), self.next_lsn - 1, self.clock.now_us())
    }

    /// Right after a seal: copies the state for the snapshotter when one is due — the
    /// segments sealed since the last copy hold at least as many bytes as the newest
    /// snapshot — and the snapshotter is idle; otherwise a later seal's snapshot covers
    /// this segment too. So snapshot work stays in proportion to the log written (as
    /// Redis's `auto-aof-rewrite-percentage 100`), and a start after a crash replays at
    /// most about one snapshot's size of log, plus the open segment.
    pub(super) fn hand_over_snapshot(&mut self) {
        let Some(tx) = &self.snap_tx else { return };
        if self.since_snapshot < self.snap.last_bytes.load(Ordering::Acquire) && !self.erased {
            return;
        }
        if self.snap.busy.swap(true, Ordering::AcqRel) {
            return;
        }
        self.erased = false;
        self.since_snapshot = 0;
        let start = Instant::now();
        let (state, last_lsn, max_time_us) = self.copy_state();
        let job = SnapshotJob {
            state,
            last_lsn,
            max_time_us,
            active_first: self.seg_first,
            imports: std::mem::take(&mut self.imports),
        };
        tracing::debug!(
            last_lsn = job.last_lsn,
            took_ms = start.elapsed().as_millis() as u64,
            "state copied for a snapshot"
        );
        if tx.send(job).is_err() {
            self.snap.busy.store(false, Ordering::Release);
        }
    }
}
