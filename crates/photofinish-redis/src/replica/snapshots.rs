//! Snapshots of a replica (docs/redis-layout.md, "Snapshots, lease, trim"): when one is
//! due (log growth by entries or bytes, or a quiet board), publishing it under the board's
//! lease with the lowest entry a trim must keep, and the encoding two nodes must agree on.

use std::sync::atomic::Ordering;
use std::time::Duration;

use photofinish_store::{snapshot, State};

use super::{Position, Replica, ReplicaError};
use crate::formats::NsFormat;
use crate::log::snapshot::{Lease, Refused, SnapshotMeta, KEEP_COMMANDS};

pub use crate::formats::SNAPSHOT_VERSION;

/// The least log growth, bytes, that makes a snapshot due by size
/// ([`Replica::snapshot_due`]).
pub const SNAPSHOT_MIN_LOG_BYTES: u64 = 4 << 20;

/// The least log growth, bytes, that makes a snapshot due once the board is quiet (no
/// entry taken between two looks; [`Replica::snapshot_due`]): after a large load, a new
/// node then loads a snapshot rather than replaying the load.
pub const SNAPSHOT_QUIET_LOG_BYTES: u64 = 1 << 20;

/// How [`Replica::snapshot`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Snapshotted {
    /// Published (the log trimmed below it).
    Published(SnapshotMeta),
    /// Not this node's to publish: another node held the lease, or had just published.
    Skipped,
    /// Written, but the publish refused it (its chunks expire): the lease ran out while
    /// the node wrote, or the log no longer held its entry, or a chunk was gone.
    Refused(Refused),
}

impl Replica {
    /// Writes the replica's state as the board's snapshot under `lease` (catching up
    /// first, so the snapshot is of the log's head as this node saw it).
    pub async fn publish_snapshot(
        &self,
        lease: Lease,
    ) -> Result<Result<SnapshotMeta, Refused>, ReplicaError> {
        // The format the namespace is at; a namespace not marked is a new one.
        let (version, format) = match self.log.namespace_format().await? {
            None => NsFormat::NEWEST,
            Some(found) => NsFormat::parse(&found).ok_or(ReplicaError::Unreadable(format!(
                "the namespace is at format {found}, which this node does not know: a newer \
                 release's nodes publish its snapshots"
            )))?,
        }
        .snapshot();
        self.catch_up().await?;
        // Copied between two entries under the writers' lock, encoded outside it (a
        // large board's encoding does not hold writes up), as the embedded store does.
        let pos = self.position.lock().await;
        if pos.tail.n == 0 {
            return Ok(Err(Refused::EntryGone));
        }
        let copy = self.state.copy();
        let (n, check, effective_us) = (pos.tail.n, pos.tail.check.clone(), pos.effective_us);
        // After an erase, nothing up to it is kept (the Lua caps this at `n + 1`).
        let erased = self.erased_at.load(Ordering::Acquire);
        let keep_from = self.keep_from().max(erased.saturating_add(1));
        // The log this snapshot covers; entries taken while it is written stay counted.
        let covered = self.log_bytes.load(Ordering::Relaxed);
        drop(pos);
        let bytes = tokio::task::spawn_blocking(move || encode(&copy, n, effective_us, format))
            .await
            .map_err(|e| ReplicaError::Unreadable(format!("encoding a snapshot: {e}")))?;
        let published = self
            .log
            .publish_snapshot(lease, n, &check, version, &bytes, keep_from)
            .await?;
        if let Ok(meta) = &published {
            if erased <= meta.n {
                let _ =
                    self.erased_at
                        .compare_exchange(erased, 0, Ordering::AcqRel, Ordering::Acquire);
            }
            self.snapshot_n.fetch_max(meta.n, Ordering::AcqRel);
            self.snapshot_bytes.store(meta.bytes, Ordering::Relaxed);
            let _ = self
                .log_bytes
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                    Some(b.saturating_sub(covered))
                });
        }
        Ok(published)
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, std::collections::VecDeque<(u64, u64)>> {
        self.recent.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers that entry `n` held `commands` commands, forgetting entries no trim
    /// needs to keep.
    pub(super) fn note_recent(&self, n: u64, commands: u64) {
        let mut recent = self.recent();
        recent.push_back((n, commands));
        let mut total: u64 = recent.iter().map(|(_, c)| c).sum();
        while let Some(&(_, first)) = recent.front() {
            if total - first < KEEP_COMMANDS {
                break;
            }
            total -= first;
            recent.pop_front();
        }
    }

    /// The lowest entry a trim must keep: the first of those holding the last
    /// [`KEEP_COMMANDS`] commands, or 1 (keep all) when this node has not taken that many.
    fn keep_from(&self) -> u64 {
        let recent = self.recent();
        let total: u64 = recent.iter().map(|(_, c)| c).sum();
        match recent.front() {
            Some(&(n, _)) if total >= KEEP_COMMANDS => n,
            _ => 1,
        }
    }

    /// Whether the log grew by `every` entries since the board's newest snapshot, or by
    /// more bytes than that snapshot holds (at least [`SNAPSHOT_MIN_LOG_BYTES`]: a log of a
    /// few large group entries is due too) — by the snapshot this node knows of, then (when
    /// that one is old) the one published: of the nodes that hold the board, the first to
    /// find it due publishes and the others learn of it instead of publishing again.
    /// A board that went quiet since the last look is due once its log grew by
    /// [`SNAPSHOT_QUIET_LOG_BYTES`]: the log a burst of writes left is not replayed by every
    /// node that loads the board later.
    pub async fn snapshot_due(&self, every: u64) -> Result<bool, ReplicaError> {
        let taken = self.taken.load(Ordering::Acquire);
        let by_entries = |known: u64| taken.saturating_sub(known) >= every.max(1);
        let log_bytes = self.log_bytes.load(Ordering::Relaxed);
        let by_bytes = log_bytes
            >= self
                .snapshot_bytes
                .load(Ordering::Relaxed)
                .max(SNAPSHOT_MIN_LOG_BYTES);
        let quiet = self.looked.swap(taken, Ordering::Relaxed) == taken
            && log_bytes >= SNAPSHOT_QUIET_LOG_BYTES;
        let known = self.snapshot_n.load(Ordering::Acquire);
        // An erase not yet covered is due at once (docs/SPEC.md §16). A node that did
        // not publish it keeps looking until a snapshot past the erase is published: every
        // node trims alike.
        let erased = self.erased_at.load(Ordering::Acquire);
        if erased > 0 {
            let published = self.log.published_n().await?;
            self.learn_published(published);
            if published < erased {
                return Ok(true);
            }
            let _ = self
                .erased_at
                .compare_exchange(erased, 0, Ordering::AcqRel, Ordering::Acquire);
        }
        if !by_entries(known) && !by_bytes && !quiet {
            return Ok(false);
        }
        let published = self.log.published_n().await?;
        if self.learn_published(published) {
            return Ok(by_entries(published));
        }
        Ok(true)
    }

    /// Notes that the board's published snapshot is at entry `n`: when that is newer than
    /// the one this node knows of (another node published since), what this node took is
    /// counted from there, and `true`.
    fn learn_published(&self, n: u64) -> bool {
        if n <= self.snapshot_n.load(Ordering::Acquire) {
            return false;
        }
        self.snapshot_n.fetch_max(n, Ordering::AcqRel);
        self.log_bytes.store(0, Ordering::Relaxed);
        true
    }

    /// Publishes this replica's state as the board's snapshot under the board's lease, held
    /// for `lease`: how that ended.
    pub async fn snapshot(&self, lease: Duration) -> Result<Snapshotted, ReplicaError> {
        let Some(held) = self.log.take_lease(lease).await? else {
            return Ok(Snapshotted::Skipped);
        };
        // Publishers take turns under the lease: one that published while this node
        // looked has published what this one would.
        let published_n = match self.log.published_n().await {
            Ok(n) => n,
            Err(e) => {
                let _ = self.log.release_lease(held).await;
                return Err(e.into());
            }
        };
        if self.learn_published(published_n) {
            let _ = self.log.release_lease(held).await;
            return Ok(Snapshotted::Skipped);
        }
        let published = self.publish_snapshot(held).await;
        // Given back either way; a lease lost meanwhile is simply not ours to give.
        let _ = self.log.release_lease(held).await;
        Ok(match published? {
            Ok(meta) => Snapshotted::Published(meta),
            Err(why) => Snapshotted::Refused(why),
        })
    }

    /// The replica's state encoded as a snapshot (what two nodes that took the same
    /// entries must agree on byte for byte).
    pub async fn encoded(&self) -> Vec<u8> {
        self.encode_at(&*self.position.lock().await)
    }

    /// The state as a snapshot taken at `pos` (held under the writers' lock).
    fn encode_at(&self, pos: &Position) -> Vec<u8> {
        encode(
            &self.state,
            pos.tail.n,
            pos.effective_us,
            snapshot::Format::NEWEST,
        )
    }
}

/// `state` after entry `n` (the last effective time `effective_us`) as a snapshot in
/// `format`.
fn encode(state: &State, n: u64, effective_us: i64, format: snapshot::Format) -> Vec<u8> {
    let mut bytes = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = snapshot::write_as(format, state, n, effective_us, &mut bytes);
    bytes
}
