//! The one place a `Leaderboard` method is delegated to its function in [`crate::ops`]:
//! [`leaderboard_over_engine!`](crate::leaderboard_over_engine), which both engines (the
//! embedded store, a Redis node) implement the trait with.

/// `impl Leaderboard for $engine`: the methods every engine answers alike, each a call of
/// this module's function of the same name, beside the methods the engine answers its own
/// way (`{ … }`, written as in an `#[async_trait]` impl). Both engines use it, so a board
/// operation is delegated in one place.
#[macro_export]
macro_rules! leaderboard_over_engine {
    ($engine:ty, { $($own:tt)* }) => {
        #[async_trait::async_trait]
        impl photofinish_core::Leaderboard for $engine {
            $($own)*

            async fn config(
                &self,
                board: &str,
            ) -> Result<photofinish_core::BoardConfig, photofinish_core::BoardError> {
                $crate::ops::config(self, board).await
            }

            async fn update_board(
                &self,
                board: &str,
                patch: &photofinish_core::view::BoardPatch,
            ) -> Result<photofinish_core::view::BoardState, photofinish_core::BoardError> {
                $crate::ops::update_board(self, board, patch).await
            }

            async fn board(
                &self,
                board: &str,
            ) -> Result<photofinish_core::view::BoardState, photofinish_core::BoardError> {
                $crate::ops::board(self, board).await
            }

            async fn periods(
                &self,
                board: &str,
            ) -> Result<Vec<photofinish_core::view::PeriodSummary>, photofinish_core::BoardError>
            {
                $crate::ops::periods(self, board).await
            }

            async fn write(
                &self,
                board: &str,
                w: photofinish_core::view::WriteRequest,
            ) -> Result<photofinish_core::view::WriteOutcome, photofinish_core::BoardError> {
                $crate::ops::write(self, board, w).await
            }

            async fn write_batch(
                &self,
                board: &str,
                writes: Vec<photofinish_core::view::WriteRequest>,
            ) -> Result<
                Vec<Result<photofinish_core::view::WriteOutcome, photofinish_core::BoardError>>,
                photofinish_core::BoardError,
            > {
                $crate::ops::write_batch(self, board, writes).await
            }

            async fn member(
                &self,
                board: &str,
                member: &str,
                read: &photofinish_core::view::ReadOptions,
            ) -> Result<photofinish_core::view::MemberRow, photofinish_core::BoardError> {
                $crate::ops::member(self, board, member, read).await
            }

            async fn members(
                &self,
                board: &str,
                members: &[String],
                read: &photofinish_core::view::ReadOptions,
            ) -> Result<photofinish_core::query::MemberSet, photofinish_core::BoardError> {
                $crate::ops::members(self, board, members, read).await
            }

            async fn rank_of_score(
                &self,
                board: &str,
                score: i64,
                read: &photofinish_core::view::ReadOptions,
            ) -> Result<photofinish_core::query::ScoreRank, photofinish_core::BoardError> {
                $crate::ops::rank_of_score(self, board, score, read).await
            }

            async fn thresholds(
                &self,
                board: &str,
                query: &photofinish_core::query::ThresholdQuery,
                period: &photofinish_core::PeriodRef,
            ) -> Result<photofinish_core::query::Thresholds, photofinish_core::BoardError> {
                $crate::ops::thresholds(self, board, query, period).await
            }

            async fn page(
                &self,
                board: &str,
                offset: u64,
                limit: u64,
                read: &photofinish_core::view::ReadOptions,
            ) -> Result<photofinish_core::view::Rows, photofinish_core::BoardError> {
                $crate::ops::page(self, board, offset, limit, read).await
            }

            async fn around(
                &self,
                board: &str,
                member: &str,
                window: photofinish_core::Around,
                read: &photofinish_core::view::ReadOptions,
            ) -> Result<photofinish_core::view::Rows, photofinish_core::BoardError> {
                $crate::ops::around(self, board, member, window, read).await
            }

            async fn remove(
                &self,
                board: &str,
                member: &str,
                period: &photofinish_core::PeriodRef,
            ) -> Result<(), photofinish_core::BoardError> {
                $crate::ops::remove(self, board, member, period).await
            }
        }
    };
}
