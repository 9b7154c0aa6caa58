//! The partitions of a period (docs/SPEC.md §17): `GET /v1/boards/{board}/partitions`,
//! each partition holding a member the reader sees, with how many it sees, sorted by key
//! and paged. A partition's own standings are the ordinary reads with `partition` set
//! ([`ReadOptions::partition`](crate::view::ReadOptions)).

use crate::access::Viewer;
use crate::board::{Board, PeriodRef};
use crate::calendar::Period;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::BoardName;

use super::period::{in_period, page, require_partitions};
use super::BoardRead;

/// A page of a period's partitions, sorted by key.
#[derive(Debug, Clone)]
pub struct ReadPartitions {
    /// The board.
    pub board: BoardName,
    /// The period.
    pub period: PeriodRef,
    /// First partition, 0-based.
    pub offset: u64,
    /// Most partitions.
    pub limit: u64,
}

/// A period's partitions: how many hold a member the reader sees, and a page of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionList {
    /// The period read.
    pub period: Period,
    /// Partitions holding a member the reader sees.
    pub total: u64,
    /// The page: each partition's key and the members the reader sees in it.
    pub partitions: Vec<(String, u64)>,
}

impl Refuses for ReadPartitions {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadPartitions {
    type Output = PartitionList;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<PartitionList, BoardError> {
        require_partitions(b)?;
        in_period(b, &self.period, now_us, viewer, |period, ranking| {
            let all = ranking.map_or_else(Vec::new, |r| r.partition_counts());
            Ok(PartitionList {
                period,
                total: all.len() as u64,
                partitions: page(all, self.offset, self.limit),
            })
        })
    }
}
