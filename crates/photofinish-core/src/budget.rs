//! The server's memory budget (docs/SPEC.md §7): a live estimate of the data's size
//! against `--max-memory`. While the estimate is over the limit, writes that would add a
//! member are refused (`insufficient_storage`); updates of existing members and reads go
//! on. The server samples the estimate; a write carries the verdict ([`OverBudget`]) into
//! its backend, which refuses it only if it adds a member — on the embedded store the
//! verdict is logged with the write, so a replay decides exactly as the write did.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::BoardError;

/// The budget was over when a write was admitted: the write may not add a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OverBudget {
    /// The estimate, bytes.
    pub estimate: u64,
    /// The limit, bytes.
    pub limit: u64,
}

impl OverBudget {
    /// The refusal of a write that would add a member.
    pub fn refusal(self) -> BoardError {
        BoardError::InsufficientStorage {
            estimate: self.estimate,
            limit: self.limit,
        }
    }
}

/// The limit and the latest estimate, shared by the sampler and every write.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: u64,
    estimate: AtomicU64,
}

impl MemoryBudget {
    /// A budget of `limit` bytes, with nothing estimated yet.
    pub fn new(limit: u64) -> Self {
        Self {
            limit,
            estimate: AtomicU64::new(0),
        }
    }

    /// The limit, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The latest estimate, bytes.
    pub fn estimate(&self) -> u64 {
        self.estimate.load(Ordering::Relaxed)
    }

    /// Records a new estimate.
    pub fn set_estimate(&self, bytes: u64) {
        self.estimate.store(bytes, Ordering::Relaxed);
    }

    /// `Some` while the estimate is over the limit.
    pub fn over(&self) -> Option<OverBudget> {
        let estimate = self.estimate();
        (estimate > self.limit).then_some(OverBudget {
            estimate,
            limit: self.limit,
        })
    }
}
