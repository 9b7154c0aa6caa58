//! Online backup and restore (docs/SPEC.md §11, docs/backup.md).
//!
//! A backup is a snapshot file (docs/format.md) of the state at one log position, made
//! while writes go on: [`Store::backup_to`](crate::Store::backup_to) copies the live state
//! between two commits, as the snapshotter's copies are taken, and writes the copy out.
//! The answers of a server restored from it are exactly those of the live server right
//! after that record (its LSN is in the file's header). It costs a second copy of the data
//! in memory while the file is written, and a pause of the commits (not the reads) while
//! the state is copied (~30 ms per million members).
//!
//! Restore checks the file whole (magic, CRC-32C, every record decoded) before anything is
//! written, and only into an empty (or new) directory, where it becomes the snapshot a
//! server recovers from.

use std::io::Write;
use std::path::Path;

use crate::snapshot::{self, snapshot_name};

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
