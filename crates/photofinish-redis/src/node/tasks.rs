//! A node's background tasks (docs/redis-layout.md, "Node settings"): snapshots of the
//! boards it holds published when due, idle boards dropped from memory, and watched boards
//! followed so other nodes' writes reach this node's live readers.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use photofinish_core::events::EventFeed;

use super::{LogStore, FOLLOW_EVERY, SNAPSHOT_LEASE};
use crate::log::snapshot::Refused;
use crate::replica::{Replica, ReplicaError, Snapshotted};

impl LogStore {
    /// Drops from memory each board nobody read, wrote or watched for `after`, looking
    /// every `look`; it loads again on its next use. The task ends with the store.
    pub fn with_idle_drop(self, after: Duration, look: Duration) -> Self {
        let replicas = Arc::downgrade(&self.replicas);
        let feeds = Arc::downgrade(&self.feeds);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(look).await;
                let (Some(map), Some(feeds)) = (replicas.upgrade(), feeds.upgrade()) else {
                    return;
                };
                let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
                map.retain(|board, slot| {
                    let Some(r) = slot.get() else { return true };
                    let keep = feeds.get(board).is_some() || r.idle_for() < after;
                    if !keep {
                        tracing::debug!(board, "dropped an idle board from memory");
                    }
                    keep
                });
            }
        });
        self
    }

    /// Publishes the snapshot of each loaded board whose log grew by `every` entries since
    /// its last one, looking every `look` (docs/redis-layout.md, "Snapshots, lease, trim"):
    /// under the board's lease, so one node at a time writes it, and the log is trimmed
    /// below it. The task ends when the store is dropped.
    pub fn with_snapshots(self, every: u64, look: Duration) -> Self {
        let replicas = Arc::downgrade(&self.replicas);
        let counts = Arc::downgrade(&self.counts);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(look).await;
                let (Some(map), Some(counts)) = (replicas.upgrade(), counts.upgrade()) else {
                    return;
                };
                let loaded: Vec<Arc<Replica>> = {
                    let map = map.lock().unwrap_or_else(|p| p.into_inner());
                    map.values().filter_map(|s| s.get().cloned()).collect()
                };
                drop(map);
                for r in loaded {
                    match r.snapshot_due(every).await {
                        Ok(true) => {}
                        Ok(false) => continue,
                        Err(e) => {
                            tracing::debug!(board = %r.log().keys().log, error = %e, "snapshot not looked at");
                            continue;
                        }
                    }
                    let board = &r.log().keys().log;
                    match r.snapshot(SNAPSHOT_LEASE).await {
                        Ok(Snapshotted::Published(meta)) => {
                            tracing::debug!(%board, n = meta.n, bytes = meta.bytes, "snapshot published");
                            counts.snapshots_published.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(Snapshotted::Skipped) => {
                            counts.snapshots_skipped.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(Snapshotted::Refused(Refused::LeaseLost)) => {
                            tracing::warn!(%board, "snapshot not published: the lease ran out while it was written");
                            counts.snapshots_lease_lost.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(Snapshotted::Refused(why)) => {
                            tracing::warn!(%board, ?why, "snapshot not published: the log moved under it");
                            counts.snapshots_stale.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            tracing::warn!(%board, error = %e, "snapshot not published");
                            counts.snapshots_failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
        });
        self
    }

    /// Follows `board` while `feed` is its feed: catches the replica up every
    /// [`FOLLOW_EVERY`], so what other nodes append reaches this node's readers (the
    /// replica publishes each entry it takes). Ends when the feed is dropped or the
    /// replica can no longer follow (the next read loads the board again).
    pub(super) fn follow(&self, board: String, feed: Arc<EventFeed>, replica: Arc<Replica>) {
        let feeds = self.feeds.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(FOLLOW_EVERY).await;
                if feeds.idle(&board, &feed) {
                    return;
                }
                if let Err(e) = replica.catch_up().await {
                    tracing::debug!(board, error = %e, "following a watched board stopped");
                    if matches!(e, ReplicaError::Diverged(_)) {
                        feed.close();
                        feeds.remove(&board);
                        return;
                    }
                }
            }
        });
    }
}
