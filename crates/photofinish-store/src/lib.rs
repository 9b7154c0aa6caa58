//! # Photofinish store
//!
//! Durable embedded storage for Photofinish: a write-ahead log of commands, snapshots, and
//! recovery, behind a [`Storage`](io::Storage) trait that tests inject faults through.
//!
//! # Layout
//! - [`io`]: the `Storage` and `LogFile` traits, the real file system, fault injection.
//! - [`codec`]: little-endian encoding shared by log and snapshot.
//! - [`command`]: the logged state changes.
//! - [`log`]: frames, segment reading, torn tails versus damage.
//! - [`snapshot`]: the whole state in one checksummed file.
//! - [`state`]: the served boards and [`State::apply`](state::State::apply), the only code
//!   that changes them.
//! - [`recovery`]: newest snapshot + log replay.
//! - [`writer`]: the [`Store`]: the log behind one lock; whoever commits (the writer thread
//!   under `fsync=always`, else the caller's committer) sequences, logs (group commit), then
//!   applies; snapshot at shutdown.
//! - [`compaction`]: the snapshotter, which writes a copy of the live state taken when a
//!   segment is sealed, in the background, and deletes what it covers.
//! - [`keyindex`]: the idempotency table's index, flat so the writer can prefetch it.
//! - [`import`]: the files imports build their rankings in, named by one log record.
//! - [`backup`]: a consistent snapshot made while writes go on, and restore.
//! - [`events`]: what the writer publishes to watched boards' live event feeds.
//! - [`ops`]: the board operations written once over an [`ops::Engine`] (where a board is
//!   read, how commands are logged and applied): the embedded store and a Redis node are
//!   the two engines.
//! - [`service`]: the store as the core's `Leaderboard` service: the engine, and what only
//!   a local store does (listings from memory, events from its writer, import files,
//!   backup).

use std::path::{Path, PathBuf};

pub mod backup;
pub mod codec;
pub mod command;
pub(crate) mod compaction;
pub mod erasure;
pub mod events;
pub mod hex;
pub mod idempotency;
pub mod import;
pub mod io;
pub(crate) mod keyindex;
pub mod log;
pub mod ops;
pub(crate) mod recovery;
pub(crate) mod service;
pub mod snapshot;
pub mod state;
pub mod writer;

pub use command::Command;
pub use state::{Applied, State};
pub use writer::{FsyncPolicy, Reply, Store, StoreOptions, LOCK_FILE};

/// Why the store cannot open or go on.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Damaged data that start-up will not skip.
    #[error("{file} at offset {offset}: {reason}")]
    Corrupt {
        /// The damaged file.
        file: PathBuf,
        /// Offset of the damage.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

impl StoreError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
