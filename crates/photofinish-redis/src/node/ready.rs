//! Whether this node can serve now (`/readyz`, docs/SPEC.md §18): Redis answers, and its
//! clock is within `--max-clock-skew` of this node's — one `TIME`, which proves both —
//! and no board it met is in a format newer than it reads. Such a board is recorded when
//! its load or catch-up meets the entry or snapshot ([`LogStore::replica_failed`], the one
//! place a replica's failure becomes a board's); it answers 503 from then on.

use photofinish_core::clock::Clock;
use photofinish_core::BoardError;

use super::LogStore;
use crate::log::LogError;
use crate::replica::ReplicaError;

impl LogStore {
    /// What replica failure `e` on board `board` answers: 503 (`storage_unavailable`)
    /// with its reason; a format newer than this build reads is also recorded for
    /// `/readyz` and logged, once a board.
    pub(super) fn replica_failed(&self, board: &str, e: ReplicaError) -> BoardError {
        let why = e.to_string();
        let newer = matches!(
            e,
            ReplicaError::NewerFormat { .. } | ReplicaError::Log(LogError::Newer { .. })
        );
        if newer {
            let mut newer = self.newer.lock().unwrap_or_else(|p| p.into_inner());
            if newer.insert(board.to_owned(), why.clone()).is_none() {
                tracing::error!(board, reason = %why, "a board in a newer format: this node answers 503 for it and is not ready");
            }
        }
        BoardError::Unavailable(why)
    }

    /// Why this node cannot serve now, one reason each; empty when it can.
    pub(super) async fn unready_reasons(&self) -> Vec<String> {
        let mut reasons: Vec<String> = {
            let newer = self.newer.lock().unwrap_or_else(|p| p.into_inner());
            newer
                .iter()
                .map(|(b, why)| format!("board {b:?}: {why}"))
                .collect()
        };
        reasons.extend(self.redis_reasons().await);
        reasons
    }

    /// Redis's answer to `TIME`, and its clock against this node's.
    async fn redis_reasons(&self) -> Vec<String> {
        let time: Result<(i64, i64), _> = self.conn.query(&redis::cmd("TIME")).await;
        let (secs, micros) = match time {
            Ok(t) => t,
            Err(e) => return vec![format!("redis: {e}")],
        };
        let Some(bound) = self.skew else {
            return Vec::new();
        };
        let redis_us = secs.saturating_mul(1_000_000).saturating_add(micros);
        let node_us = self.clock.now_us().saturating_sub(bound.offset_us);
        let skew_us = node_us.saturating_sub(redis_us).saturating_abs();
        if skew_us > bound.max_us {
            return vec![format!(
                "clock: this node's clock is {skew_us} µs from redis's, more than \
                 --max-clock-skew ({} µs): writes would be refused",
                bound.max_us
            )];
        }
        Vec::new()
    }
}
