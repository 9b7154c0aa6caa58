//! Compaction: the snapshotter thread turns sealed log segments into a snapshot — load the
//! newest snapshot, replay the sealed segments into a private state, write the new snapshot
//! atomically, delete what it covers — at a lower priority than request handling. Also the
//! two helpers the shutdown snapshot shares with it.

use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use crate::io::Storage;
use crate::recovery::{replay, scan, Tail};
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

/// Compacts sealed segments into a snapshot whenever the writer seals one.
pub(crate) fn snapshotter(storage: &dyn Storage, dir: &std::path::Path, rx: Receiver<u64>) {
    lower_thread_priority(SNAPSHOTTER_NICE);
    while let Ok(mut active_first) = rx.recv() {
        while let Ok(newer) = rx.try_recv() {
            active_first = newer;
        }
        if let Err(e) = compact(storage, dir, active_first) {
            tracing::error!(error = %e, "snapshot failed; the log keeps everything");
        }
    }
}

/// Writes a snapshot covering every segment below `active_first`, then deletes them.
pub fn compact(
    storage: &dyn Storage,
    dir: &std::path::Path,
    active_first: u64,
) -> Result<(), StoreError> {
    let start = Instant::now();
    let (snaps, segments) = scan(storage, dir)?;
    let sealed: Vec<_> = segments
        .into_iter()
        .filter(|s| s.first_lsn < active_first)
        .collect();
    if sealed.is_empty() {
        return Ok(());
    }
    let old = snaps.last().map(|(_, p)| p.clone());
    let rec = replay(storage, old.as_deref(), &sealed, Tail::Refuse)?;
    let path = write_snapshot(storage, dir, &rec.state, rec.last_lsn, rec.max_time_us)?;
    remove_covered(storage, &snaps, &sealed, &path);
    // The import files the sealed segments named are in the snapshot now.
    for file in &rec.imports {
        let _ = storage.remove(file);
    }
    tracing::info!(snapshot = %path.display(), last_lsn = rec.last_lsn, took_ms = start.elapsed().as_millis() as u64, "snapshot written");
    Ok(())
}

/// Writes the snapshot of `state` at `last_lsn` atomically; returns its path.
pub(crate) fn write_snapshot(
    storage: &dyn Storage,
    dir: &std::path::Path,
    state: &State,
    last_lsn: u64,
    max_time_us: i64,
) -> Result<PathBuf, StoreError> {
    let path = dir.join(snapshot_name(last_lsn));
    storage
        .write_atomic(&path, &mut |w| {
            snapshot::write(state, last_lsn, max_time_us, w)
        })
        .map_err(|e| StoreError::io(&path, e))?;
    Ok(path)
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
