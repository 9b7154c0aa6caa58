//! Online backup and restore (docs/SPEC.md §11, docs/backup.md).
//!
//! A backup is a snapshot file (docs/format.md) of the state at one log position, made
//! while writes go on and without stopping them: the newest snapshot on disk is loaded and
//! every segment after it replayed — the active one up to its last complete record — into a
//! private state, which is then written out. The answers of a server restored from it are
//! exactly those of the live server right after that record (its LSN is in the file's
//! header). It costs a second copy of the data in memory while it runs, and the time to
//! replay what the log holds beyond the last snapshot (at most one segment, 64 MiB).
//!
//! Restore checks the file whole (magic, CRC-32C, every record decoded) before anything is
//! written, and only into an empty (or new) directory, where it becomes the snapshot a
//! server recovers from.

use std::io::Write;
use std::path::Path;

use crate::io::Storage;
use crate::recovery::{replay, scan, Tail};
use crate::snapshot::{self, snapshot_name};
use crate::StoreError;

/// How often a backup starts over when the snapshotter removed a file it was reading.
const BACKUP_ATTEMPTS: usize = 3;

/// Writes a consistent snapshot of the data in `dir` to `out`; returns its LSN.
pub fn backup(storage: &dyn Storage, dir: &Path, out: &mut dyn Write) -> Result<u64, StoreError> {
    let mut last_err = None;
    for _ in 0..BACKUP_ATTEMPTS {
        let (snaps, segments) = scan(storage, dir)?;
        let newest = snaps.last().map(|(_, p)| p.clone());
        match replay(storage, newest.as_deref(), &segments, Tail::InFlight) {
            Ok(rec) => {
                snapshot::write(&rec.state, rec.last_lsn, rec.max_time_us, out).map_err(
                    |source| StoreError::Io {
                        path: dir.to_path_buf(),
                        source,
                    },
                )?;
                return Ok(rec.last_lsn);
            }
            // A snapshot or segment compacted away between the scan and the read: again.
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                last_err = Some(source);
            }
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Io {
        path: dir.to_path_buf(),
        source: last_err.unwrap_or_else(|| std::io::Error::other("the log kept changing")),
    })
}

/// What a restore made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    /// The log position the data is at.
    pub last_lsn: u64,
    /// Boards in it.
    pub boards: usize,
}

/// Why a restore refused.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The backup file cannot be used (not a snapshot, bad checksum, undecodable).
    #[error("{file}: not a usable backup: {reason}")]
    BadBackup {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
    /// The target directory holds something.
    #[error("{0} is not empty: restore makes a new data directory and never mixes data")]
    NotEmpty(String),
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Makes `dir` (created if missing, refused unless empty) a data directory holding the
/// backup `file`, checked whole first.
pub fn restore(file: &Path, dir: &Path) -> Result<Restored, RestoreError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| RestoreError::Io { path, source }
    };
    let bytes = std::fs::read(file).map_err(io(file))?;
    let loaded = snapshot::read(&bytes).map_err(|e| RestoreError::BadBackup {
        file: file.display().to_string(),
        reason: e.0,
    })?;
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(RestoreError::NotEmpty(dir.display().to_string()));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        Err(e) => return Err(io(dir)(e)),
    }
    let target = dir.join(snapshot_name(loaded.last_lsn));
    let tmp = target.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
    f.write_all(&bytes).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    std::fs::rename(&tmp, &target).map_err(io(&target))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir))?;
    Ok(Restored {
        last_lsn: loaded.last_lsn,
        boards: loaded.state.boards().len(),
    })
}
