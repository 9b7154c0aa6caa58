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

            async fn close_step(
                &self,
                board: &str,
                budget: u32,
            ) -> Result<Option<photofinish_core::league::CloseStep>, photofinish_core::BoardError> {
                $crate::ops::close_step(self, board, budget).await
            }

            async fn totals(
                &self,
            ) -> Result<photofinish_core::view::Totals, photofinish_core::BoardError> {
                $crate::ops::totals(self).await
            }

            async fn change_everywhere(
                &self,
                op: photofinish_core::op::LoggedOp,
                actor: &str,
            ) -> Result<Vec<(String, photofinish_core::op::OpAnswer)>, photofinish_core::BoardError> {
                $crate::ops::change_everywhere(self, op, actor).await
            }

            async fn record_erased(
                &self,
                hmac: &str,
                member: Option<&str>,
                key: Option<(&photofinish_core::idempotency::IdempotencyKey, u64)>,
            ) -> Result<i64, photofinish_core::BoardError> {
                $crate::ops::record_erased(self, hmac, member, key).await
            }

            async fn recall_erase(
                &self,
                key: &photofinish_core::idempotency::IdempotencyKey,
            ) -> Result<Option<u64>, photofinish_core::BoardError> {
                $crate::ops::recall_erase(self, key).await
            }

            async fn erasure_ledger(
                &self,
            ) -> Result<Vec<(String, i64)>, photofinish_core::BoardError> {
                <$engine as $crate::ops::Engine>::erasure_ledger(self).await
            }

            async fn names_where(
                &self,
                wanted: &(dyn for<'n> Fn(&'n str) -> bool + Sync),
            ) -> Result<Vec<String>, photofinish_core::BoardError> {
                $crate::ops::names_where(self, wanted).await
            }

            async fn board_names(&self) -> Result<Vec<String>, photofinish_core::BoardError> {
                <$engine as $crate::ops::Engine>::board_names(self).await
            }

            async fn read_board(
                &self,
                board: &photofinish_core::BoardName,
                read: &mut photofinish_core::ReadFn<'_>,
            ) -> Result<(), photofinish_core::BoardError> {
                $crate::ops::read_board(self, board, read).await
            }

        }
    };
}
