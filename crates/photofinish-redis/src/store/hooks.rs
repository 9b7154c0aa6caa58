//! The period-close webhook's state on Redis (docs/webhooks.md): each board's cursor and
//! claim live beside it (`hook`, `hookclaim`, same hash tag), changed by `board.lua` under
//! the config check; a registry SET of the boards with a webhook (kept like the board
//! registry, idempotently, after the board's own keys) spares the dispatcher a walk over
//! every board. Several servers share the cursor, and the claim (a key with a TTL, set only
//! when free) makes one of them post at a time.

use std::time::Duration;

use photofinish_core::hook::HookState;
use photofinish_core::{BoardConfig, BoardError};

use super::{common_status, unavailable, Attempt, RedisStore};
use crate::layout;
use crate::scripts::board::BoardCall;
use crate::scripts::status;

impl RedisStore {
    /// Adds `board` to the registry of boards with a webhook when `config` has one, else
    /// removes it (`None`: the board is gone).
    pub(super) async fn hook_registry(
        &self,
        board: &str,
        config: Option<&BoardConfig>,
    ) -> Result<(), BoardError> {
        let command = match config {
            Some(c) if c.settings.webhook.is_some() => "SADD",
            _ => "SREM",
        };
        self.conn
            .query::<i64>(
                redis::cmd(command)
                    .arg(layout::hooks_key(&self.ns))
                    .arg(board),
            )
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// The boards with a webhook, by name, with their cursors; registry entries left by a
    /// board deleted or changed on another server are removed on the way.
    pub(super) async fn hook_states(&self) -> Result<Vec<HookState>, BoardError> {
        let mut names: Vec<String> = self
            .conn
            .query(redis::cmd("SMEMBERS").arg(layout::hooks_key(&self.ns)))
            .await
            .map_err(unavailable)?;
        names.sort();
        let mut out = Vec::with_capacity(names.len());
        for board in names {
            let keys = self.keys(&board);
            let (config, cursor): (Option<Vec<u8>>, Option<i64>) = self
                .conn
                .query(redis::cmd("MGET").arg(keys.config()).arg(keys.hook()))
                .await
                .map_err(unavailable)?;
            let config = match config {
                Some(raw) => Some(self.stored(&board, raw)?.config.clone()),
                None => None,
            };
            match config {
                Some(config) if config.settings.webhook.is_some() => out.push(HookState {
                    board,
                    config,
                    cursor_us: cursor,
                }),
                other => self.hook_registry(&board, other.as_ref()).await?,
            }
        }
        Ok(out)
    }

    /// Moves the board's cursor forward and ends the claim on its post.
    pub(super) async fn advance_hook(&self, board: &str, cursor_us: i64) -> Result<(), BoardError> {
        let keys = self.keys(board);
        self.with_board(board, |cached| {
            let keys = keys.clone();
            async move {
                let call = BoardCall::HookAdvance {
                    config_text: &cached.config_text,
                    cursor_us,
                };
                let r = self.run("board", &call.invocation(&keys)).await?;
                Ok(common_status(&r)?.unwrap_or(Attempt::Done(())))
            }
        })
        .await
    }

    /// Claims (or renews a claim on) the board's post of the period ending at `until_us`:
    /// `false` when another node holds it or it was posted.
    pub(super) async fn claim_hook(
        &self,
        board: &str,
        token: &str,
        until_us: i64,
        hold: Duration,
        renew: bool,
    ) -> Result<bool, BoardError> {
        let keys = self.keys(board);
        let hold_ms = u64::try_from(hold.as_millis()).unwrap_or(u64::MAX).max(1);
        self.with_board(board, |cached| {
            let keys = keys.clone();
            async move {
                let call = BoardCall::HookClaim {
                    config_text: &cached.config_text,
                    token,
                    until_us,
                    hold_ms,
                    renew,
                };
                let r = self.run("board", &call.invocation(&keys)).await?;
                if r.status()? == status::HELD {
                    return Ok(Attempt::Done(false));
                }
                Ok(common_status(&r)?.unwrap_or(Attempt::Done(true)))
            }
        })
        .await
    }
}
