//! The Redis store as the core's [`Leaderboard`] service: each method is one of the store's
//! operations (in `boards.rs`, `writes.rs`, `reads.rs`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use photofinish_core::events::EventFeed;
use photofinish_core::hook::HookState;
use photofinish_core::idempotency::{IdempotencyKey, Keyed, Replayable};
use photofinish_core::query::{MemberSet, ScoreRank, ThresholdQuery, Thresholds};
use photofinish_core::transfer::{ImportSource, Imported};
use photofinish_core::view::{
    BoardPatch, BoardState, MemberRow, PeriodSummary, ReadOptions, Rows, Totals, WriteOutcome,
    WriteRequest,
};
use photofinish_core::{Around, BoardConfig, BoardError, Leaderboard, PeriodRef};

use super::RedisStore;
use crate::scripts::read::ReadMode;

#[async_trait]
impl Leaderboard for RedisStore {
    fn now_us(&self) -> i64 {
        RedisStore::now_us(self)
    }

    async fn health(&self) -> Option<String> {
        RedisStore::health(self).await
    }

    async fn keyed(
        &self,
        board: &str,
        key: &IdempotencyKey,
        op: Keyed,
    ) -> Result<Replayable, BoardError> {
        self.keyed_op(board, key, op).await
    }

    async fn memory_estimate(&self) -> Result<u64, BoardError> {
        self.used_memory().await
    }

    async fn totals(&self) -> Result<Totals, BoardError> {
        self.count_all().await
    }

    async fn create_board(&self, board: &str, config: BoardConfig) -> Result<bool, BoardError> {
        self.create(board, config).await
    }

    async fn check_board(&self, board: &str) -> Result<(), BoardError> {
        // A cached config counts: a stale entry is caught by the next script's check.
        self.cached(board).await.map(drop)
    }

    async fn config(&self, board: &str) -> Result<BoardConfig, BoardError> {
        // Read from Redis, not the cache: access decisions rest on it (docs/security.md).
        Ok(self.fresh(board).await?.config.clone())
    }

    async fn update_board(
        &self,
        board: &str,
        patch: &BoardPatch,
    ) -> Result<BoardState, BoardError> {
        self.patch(board, patch).await?;
        self.describe(board).await
    }

    async fn board(&self, board: &str) -> Result<BoardState, BoardError> {
        self.describe(board).await
    }

    async fn boards(&self) -> Result<Vec<BoardState>, BoardError> {
        self.list().await
    }

    async fn delete_board(&self, board: &str) -> Result<(), BoardError> {
        self.drop_board(board).await
    }

    async fn periods(&self, board: &str) -> Result<Vec<PeriodSummary>, BoardError> {
        self.period_list(board).await
    }

    async fn write(&self, board: &str, w: WriteRequest) -> Result<WriteOutcome, BoardError> {
        self.write_one(board, &w).await
    }

    async fn write_batch(
        &self,
        board: &str,
        writes: Vec<WriteRequest>,
    ) -> Result<Vec<Result<WriteOutcome, BoardError>>, BoardError> {
        self.write_many(board, &writes).await
    }

    async fn member(
        &self,
        board: &str,
        member: &str,
        read: &ReadOptions,
    ) -> Result<MemberRow, BoardError> {
        let (mut rows, pos) = self
            .read(board, &read.period, read.ranking, ReadMode::Member(member))
            .await?;
        let entry = rows.entries.pop().ok_or_else(|| {
            BoardError::Unavailable("the read script answered a member read with no row".into())
        })?;
        Ok(MemberRow {
            entry,
            ordinal: pos + 1,
            total: rows.total,
            period: rows.period,
        })
    }

    async fn members(
        &self,
        board: &str,
        members: &[String],
        read: &ReadOptions,
    ) -> Result<MemberSet, BoardError> {
        self.query_members(board, members, read).await
    }

    async fn rank_of_score(
        &self,
        board: &str,
        score: i64,
        read: &ReadOptions,
    ) -> Result<ScoreRank, BoardError> {
        self.score_rank(board, score, read).await
    }

    async fn thresholds(
        &self,
        board: &str,
        query: &ThresholdQuery,
        period: &PeriodRef,
    ) -> Result<Thresholds, BoardError> {
        self.tiers(board, query, period).await
    }

    async fn page(
        &self,
        board: &str,
        offset: u64,
        limit: u64,
        read: &ReadOptions,
    ) -> Result<Rows, BoardError> {
        let mode = ReadMode::Page { offset, limit };
        Ok(self.read(board, &read.period, read.ranking, mode).await?.0)
    }

    async fn around(
        &self,
        board: &str,
        member: &str,
        window: Around,
        read: &ReadOptions,
    ) -> Result<Rows, BoardError> {
        let mode = ReadMode::Around {
            member,
            before: window.before,
            after: window.after,
        };
        Ok(self.read(board, &read.period, read.ranking, mode).await?.0)
    }

    async fn remove(
        &self,
        board: &str,
        member: &str,
        period: &PeriodRef,
    ) -> Result<(), BoardError> {
        self.remove_member(board, member, period).await
    }

    async fn events(&self, board: &str) -> Result<Arc<EventFeed>, BoardError> {
        self.watch(board).await
    }

    async fn announce_period(&self, board: &str) -> Result<(), BoardError> {
        self.announce_current(board).await
    }

    async fn hooks(&self) -> Result<Vec<HookState>, BoardError> {
        self.hook_states().await
    }

    async fn hook_advance(&self, board: &str, cursor_us: i64) -> Result<(), BoardError> {
        self.advance_hook(board, cursor_us).await
    }

    async fn import(
        &self,
        board: &str,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
    ) -> Result<Imported, BoardError> {
        self.import_rows(board, period, source).await
    }

    async fn hook_claim(
        &self,
        board: &str,
        token: &str,
        until_us: i64,
        hold: Duration,
        renew: bool,
    ) -> Result<bool, BoardError> {
        self.claim_hook(board, token, until_us, hold, renew).await
    }

    fn shutdown(&self) {}
}
