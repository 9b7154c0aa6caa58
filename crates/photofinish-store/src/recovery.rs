//! Start-up: the newest snapshot plus the log after it.
//!
//! Damage is never skipped: a snapshot that fails its checksum, a damaged record with valid
//! records after it, a gap in the LSNs, or a torn tail anywhere but in the last segment
//! stops start-up with the file and offset named. A torn tail of the last segment is what
//! a crash mid-append leaves; it is cut off and logged.

use std::path::{Path, PathBuf};

use crate::io::Storage;
use crate::log::{parse_segment_name, read_segment};
use crate::snapshot::{self, parse_snapshot_name};
use crate::state::State;
use crate::StoreError;

/// One log segment on disk.
#[derive(Debug, Clone)]
pub struct Segment {
    /// LSN of its first record.
    pub first_lsn: u64,
    /// Its path.
    pub path: PathBuf,
}

/// The recovered state and where the log goes on.
#[derive(Debug)]
pub struct Recovered {
    /// The state.
    pub state: State,
    /// LSN of the last command applied (0 if none).
    pub last_lsn: u64,
    /// Latest instant seen in the recovered data.
    pub max_time_us: i64,
    /// The snapshot loaded, if any.
    pub snapshot: Option<PathBuf>,
    /// Valid length of the last segment (where appends continue).
    pub tail_len: u64,
    /// Size of the snapshot loaded (0 if none).
    pub snapshot_bytes: u64,
    /// Valid bytes of the segments replayed, the last one's included.
    pub log_bytes: u64,
    /// Time spent loading the snapshot.
    pub snapshot_ms: u64,
    /// Time spent replaying the log.
    pub replay_ms: u64,
    /// Log records replayed.
    pub replayed_records: u64,
    /// The import files the replayed records named ([`crate::import`]), in log order.
    pub imports: Vec<PathBuf>,
    /// A replayed record erased a member (docs/SPEC.md §16): its snapshot is still owed.
    pub erased: bool,
}

/// Snapshot files as `(last_lsn, path)`.
pub type Snapshots = Vec<(u64, PathBuf)>;

/// Snapshots and segments in `dir`, each sorted by LSN.
pub fn scan(storage: &dyn Storage, dir: &Path) -> Result<(Snapshots, Vec<Segment>), StoreError> {
    let names = storage.list(dir).map_err(|e| StoreError::io(dir, e))?;
    let mut snaps = Vec::new();
    let mut segments = Vec::new();
    for name in names {
        if let Some(lsn) = parse_snapshot_name(&name) {
            snaps.push((lsn, dir.join(&name)));
        } else if let Some(first_lsn) = parse_segment_name(&name) {
            segments.push(Segment {
                first_lsn,
                path: dir.join(&name),
            });
        }
    }
    snaps.sort();
    segments.sort_by_key(|s| s.first_lsn);
    Ok((snaps, segments))
}

/// Loads the newest snapshot and replays `segments` (start-up). A torn tail of the last
/// segment — what a crash mid-append leaves — is cut off and logged; damage anywhere else
/// stops the replay.
pub fn replay(
    storage: &dyn Storage,
    snapshot: Option<&Path>,
    segments: &[Segment],
) -> Result<Recovered, StoreError> {
    let started = std::time::Instant::now();
    let (mut r, snapshot_bytes) = Replay::from_snapshot(storage, snapshot)?;
    let snapshot_ms = started.elapsed().as_millis() as u64;
    let started = std::time::Instant::now();
    let mut tail_len = 0;
    let mut log_bytes = 0;
    for (i, seg) in segments.iter().enumerate() {
        if let Some(next) = segments.get(i + 1) {
            if next.first_lsn <= r.last_lsn + 1 {
                continue; // wholly covered by the snapshot
            }
        }
        tail_len = r.segment(storage, seg, i + 1 == segments.len())?;
        log_bytes += tail_len;
    }
    r.state.finish_replay();
    let replay_ms = started.elapsed().as_millis() as u64;
    Ok(Recovered {
        state: r.state,
        last_lsn: r.last_lsn,
        max_time_us: r.max_time_us,
        snapshot: snapshot.map(Path::to_path_buf),
        tail_len,
        snapshot_bytes,
        log_bytes,
        snapshot_ms,
        replay_ms,
        replayed_records: r.records,
        imports: r.imports,
        erased: r.erased,
    })
}

/// A replay under way: the state so far and what it has seen.
struct Replay {
    state: State,
    last_lsn: u64,
    max_time_us: i64,
    records: u64,
    imports: Vec<PathBuf>,
    erased: bool,
}

impl Replay {
    /// The state of the newest snapshot (empty without one), and the snapshot's size.
    fn from_snapshot(
        storage: &dyn Storage,
        snapshot: Option<&Path>,
    ) -> Result<(Self, u64), StoreError> {
        let empty = |state, last_lsn, max_time_us| Self {
            state,
            last_lsn,
            max_time_us,
            records: 0,
            imports: Vec::new(),
            erased: false,
        };
        let Some(path) = snapshot else {
            return Ok((empty(State::default(), 0, i64::MIN), 0));
        };
        let bytes = storage.read(path).map_err(|e| StoreError::io(path, e))?;
        let loaded = snapshot::read(&bytes).map_err(|e| StoreError::Corrupt {
            file: path.to_path_buf(),
            offset: 0,
            reason: e.0,
        })?;
        let r = empty(loaded.state, loaded.last_lsn, loaded.max_time_us);
        Ok((r, bytes.len() as u64))
    }

    /// Replays one segment's records after the last one applied; answers the length of
    /// its valid part. A torn tail is cut (logged) only on the last segment.
    fn segment(
        &mut self,
        storage: &dyn Storage,
        seg: &Segment,
        is_last: bool,
    ) -> Result<u64, StoreError> {
        let bytes = storage
            .read(&seg.path)
            .map_err(|e| StoreError::io(&seg.path, e))?;
        let read = read_segment(&bytes).map_err(|d| StoreError::Corrupt {
            file: seg.path.clone(),
            offset: d.offset,
            reason: d.reason,
        })?;
        if let Some(reason) = &read.torn {
            if !is_last {
                return Err(StoreError::Corrupt {
                    file: seg.path.clone(),
                    offset: read.valid_len,
                    reason: reason.clone(),
                });
            }
            tracing::warn!(file = %seg.path.display(), offset = read.valid_len, cut_bytes = bytes.len() as u64 - read.valid_len, reason = %reason, "cutting torn log tail");
        }
        for (expected, frame) in (seg.first_lsn..).zip(read.frames.iter()) {
            let corrupt = |reason: String| StoreError::Corrupt {
                file: seg.path.clone(),
                offset: frame.offset,
                reason,
            };
            let lsn = frame.lsn;
            if lsn != expected {
                return Err(corrupt(format!(
                    "record lsn {lsn} where {expected} was due"
                )));
            }
            if lsn <= self.last_lsn {
                continue;
            }
            if lsn != self.last_lsn + 1 {
                return Err(corrupt(format!(
                    "log resumes at lsn {lsn} after {}: records missing",
                    self.last_lsn
                )));
            }
            self.record(storage, seg, &frame.cmd).map_err(|e| match e {
                RecordError::Io(path, e) => StoreError::io(&path, e),
                RecordError::Corrupt(reason) => corrupt(reason),
            })?;
            self.last_lsn = lsn;
        }
        Ok(read.valid_len)
    }

    /// Applies one record, with the import file it names read first.
    fn record(
        &mut self,
        storage: &dyn Storage,
        seg: &Segment,
        cmd: &crate::command::Command,
    ) -> Result<(), RecordError> {
        use crate::command::Command;
        use photofinish_core::op::LoggedWrite;
        if let Command::Audited { at_us, .. } = cmd {
            self.max_time_us = self.max_time_us.max(*at_us);
        }
        match cmd.inner() {
            Command::Write(LoggedWrite { at_us, .. }) | Command::Op { at_us, .. } => {
                self.max_time_us = self.max_time_us.max(*at_us);
            }
            Command::Keyed { key, .. } => self.max_time_us = self.max_time_us.max(key.now_us),
            _ => {}
        }
        if let Command::Import { file, .. } = cmd.inner() {
            // The ranking is in the file the record names, beside the segment.
            let path = seg.path.with_file_name(file);
            match crate::import::read(storage, &path) {
                Ok(ranking) => self.state.stage(file.clone(), ranking),
                Err(crate::import::ReadError::Io(e)) => return Err(RecordError::Io(path, e)),
                Err(crate::import::ReadError::Corrupt(e)) => {
                    return Err(RecordError::Corrupt(format!("import file {file}: {}", e.0)))
                }
            }
            self.imports.push(path);
        }
        // Errors are part of the history: the command failed the same way when served.
        let replayed = self.state.replay(cmd);
        self.erased |= replayed.is_ok() && cmd.erases();
        self.records += 1;
        Ok(())
    }
}

/// Why a record could not be replayed.
enum RecordError {
    /// Its import file could not be read.
    Io(PathBuf, std::io::Error),
    /// Its import file is damaged.
    Corrupt(String),
}
