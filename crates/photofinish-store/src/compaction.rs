//! Compaction: the snapshotter thread writes a snapshot of a copy of the live state and
//! deletes the sealed segments it covers, at a lower priority than request handling. Also
//! the two helpers the shutdown snapshot shares with it.
//!
//! When the writer seals a segment, a snapshot is due (the writer's `hand_over_snapshot`)
//! and the snapshotter is idle, the writer copies the state between two commits
//! ([`State::copy`]: flat arrays copied whole, about 30 ms per million members,
//! docs/bench-history.md §14) and hands the copy over with its LSN; the snapshotter writes it
//! and drops it. Nothing is replayed, so a snapshot costs the same whatever the writes
//! since the last one were (keyed or not), and at most one copy exists at a time: a
//! segment sealed while a snapshot is being written waits for the next seal.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

use crate::io::Storage;
use crate::recovery::scan;
use crate::snapshot::{self, snapshot_name};
use crate::state::State;
use crate::StoreError;

/// Nice value of the snapshotter thread: background compaction should yield to serving
/// requests. At 10 it gets about a tenth of a contended core and all of an idle one, so it
/// still progresses under full load (sealed segments then coalesce into one compaction).
const SNAPSHOTTER_NICE: i32 = 10;

/// Lowers the calling thread's scheduling priority (Linux: the nice value is per thread).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn lower_thread_priority(nice: i32) {
    // SAFETY: setpriority takes plain integers and touches no memory of ours; `who` = 0
    // names the calling thread. A failure (e.g. a sandbox forbidding it) is only logged.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if rc != 0 {
        tracing::warn!(error = %std::io::Error::last_os_error(), "could not lower the snapshotter's priority");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_thread_priority(_nice: i32) {}

/// A copy of the live state for the snapshotter, taken between two commits.
pub(crate) struct SnapshotJob {
    /// The copy.
    pub state: State,
    /// LSN of the last command it holds.
    pub last_lsn: u64,
    /// The clock when it was taken.
    pub max_time_us: i64,
    /// First LSN of the segment the log went on with: every segment before it is covered.
    pub active_first: u64,
    /// Import files named by records the copy holds: obsolete once it is written.
    pub imports: Vec<PathBuf>,
}

/// What the writer and the snapshotter share: whether a copy is being written, and the
/// size of the newest snapshot (which sets when the next one is due).
#[derive(Debug, Default)]
pub(crate) struct SnapshotShared {
    /// Set by the writer when it hands a copy over, cleared when it is written (or failed).
    pub busy: AtomicBool,
    /// Bytes of the newest snapshot written.
    pub last_bytes: AtomicU64,
}

/// Writes each copy it is handed as a snapshot, until the channel closes.
pub(crate) fn snapshotter(
    storage: &dyn Storage,
    dir: &std::path::Path,
    rx: Receiver<SnapshotJob>,
    shared: Arc<SnapshotShared>,
) {
    lower_thread_priority(SNAPSHOTTER_NICE);
    while let Ok(job) = rx.recv() {
        match compact(storage, dir, job) {
            Ok(bytes) => shared.last_bytes.store(bytes, Ordering::Release),
            Err(e) => tracing::error!(error = %e, "snapshot failed; the log keeps everything"),
        }
        shared.busy.store(false, Ordering::Release);
    }
}

/// Writes `job`'s copy as a snapshot, then deletes the older snapshots, the segments it
/// covers and the import files it holds; the snapshot's size.
fn compact(
    storage: &dyn Storage,
    dir: &std::path::Path,
    job: SnapshotJob,
) -> Result<u64, StoreError> {
    let start = Instant::now();
    let (path, bytes) = write_snapshot(storage, dir, &job.state, job.last_lsn, job.max_time_us)?;
    drop(job.state);
    let (snaps, segments) = scan(storage, dir)?;
    let covered: Vec<_> = segments
        .into_iter()
        .filter(|s| s.first_lsn < job.active_first)
        .collect();
    remove_covered(storage, &snaps, &covered, &path);
    for file in &job.imports {
        let _ = storage.remove(file);
    }
    tracing::info!(snapshot = %path.display(), last_lsn = job.last_lsn, bytes, took_ms = start.elapsed().as_millis() as u64, "snapshot written");
    Ok(bytes)
}

/// Writes the snapshot of `state` at `last_lsn` atomically; returns its path and size.
pub(crate) fn write_snapshot(
    storage: &dyn Storage,
    dir: &std::path::Path,
    state: &State,
    last_lsn: u64,
    max_time_us: i64,
) -> Result<(PathBuf, u64), StoreError> {
    let path = dir.join(snapshot_name(last_lsn));
    let mut bytes = 0;
    storage
        .write_atomic(&path, &mut |w| {
            bytes = snapshot::write(state, last_lsn, max_time_us, w)?;
            Ok(())
        })
        .map_err(|e| StoreError::io(&path, e))?;
    Ok((path, bytes))
}

/// Deletes the snapshots in `snaps` other than `keep`, and `segments`, once `keep` is durable.
pub(crate) fn remove_covered(
    storage: &dyn Storage,
    snaps: &[(u64, PathBuf)],
    segments: &[crate::recovery::Segment],
    keep: &std::path::Path,
) {
    for (_, p) in snaps {
        if p != keep {
            let _ = storage.remove(p);
        }
    }
    for s in segments {
        let _ = storage.remove(&s.path);
    }
}
