//! Board-level operations: create, drop, describe, list, periods and totals. The board
//! registry (a SET of names, for listing) lives on its own slot, so it is kept beside the
//! board's own keys, idempotently.

use photofinish_core::view::{BoardState, PeriodSummary, Totals};
use photofinish_core::{BoardConfig, BoardError};

use photofinish_core::view::BoardPatch;

use super::{common_status, unavailable, Attempt, CachedBoard, RedisStore};

/// Compare-and-set rounds a patch tries before giving up (each loses only to another
/// change of the same board landing in between).
const MAX_PATCH_ATTEMPTS: usize = 5;
use crate::layout;
use crate::scripts::board::BoardCall;
use crate::scripts::status;

impl RedisStore {
    /// Adds (`SADD`) or removes (`SREM`) `board` in the registry of board names.
    pub(super) async fn registry(&self, command: &str, board: &str) -> Result<(), BoardError> {
        self.conn
            .query::<i64>(
                redis::cmd(command)
                    .arg(layout::registry_key(&self.ns))
                    .arg(board),
            )
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// The registered board names, sorted.
    async fn board_names(&self) -> Result<Vec<String>, BoardError> {
        let mut names: Vec<String> = self
            .conn
            .query(redis::cmd("SMEMBERS").arg(layout::registry_key(&self.ns)))
            .await
            .map_err(unavailable)?;
        names.sort();
        Ok(names)
    }

    /// `too_many_boards` if creating `board` would pass the namespace's board limit.
    pub(super) async fn check_board_limit(&self, board: &str) -> Result<(), BoardError> {
        let Some(max) = self.max_boards else {
            return Ok(());
        };
        let registry = layout::registry_key(&self.ns);
        let count: u64 = self
            .conn
            .query(redis::cmd("SCARD").arg(&registry))
            .await
            .map_err(unavailable)?;
        let known = count >= max
            && self
                .conn
                .query::<bool>(redis::cmd("SISMEMBER").arg(&registry).arg(board))
                .await
                .map_err(unavailable)?;
        if count >= max && !known {
            return Err(BoardError::TooManyBoards(max));
        }
        Ok(())
    }

    /// Creates a board; `Ok(true)` if new, `Ok(false)` if it exists with the same config.
    pub(super) async fn create(
        &self,
        board: &str,
        config: BoardConfig,
    ) -> Result<bool, BoardError> {
        config.validate()?;
        self.check_board_limit(board).await?;
        let keys = self.keys(board);
        let config_text = layout::config_text(&config);
        let call = BoardCall::Create {
            config_text: &config_text,
        };
        let r = self.run("board", &call.invocation(&keys)).await?;
        let created = match r.status()? {
            status::CREATED => true,
            status::SAME => false,
            status::CONFLICT => {
                let existing = layout::parse_config(r.bytes(1)?)
                    .ok_or_else(|| r.malformed(1, "is no config"))?;
                return Err(BoardError::ConfigConflict {
                    board: board.to_owned(),
                    existing: Box::new(existing),
                });
            }
            other => return Err(r.malformed(0, &format!("is {other:?}"))),
        };
        // The registry is on another slot: added after, idempotently, so a retried create
        // repairs an interrupted one.
        self.registry("SADD", board).await?;
        // The text stored is the one that counts: ours if created or the same.
        let stored = String::from_utf8_lossy(r.bytes(1)?).into_owned();
        let cached = self.remember(board, config, stored)?;
        self.hook_registry(board, Some(&cached.config)).await?;
        Ok(created)
    }

    /// Changes a board's settings: compare-and-set of its config text, so a concurrent
    /// change (from this server or another) is never lost; on a lost race the fresh
    /// config is read and the patch applied again.
    pub(super) async fn patch(&self, board: &str, patch: &BoardPatch) -> Result<(), BoardError> {
        let keys = self.keys(board);
        for _ in 0..MAX_PATCH_ATTEMPTS {
            let cached = self.cached(board).await?;
            let config = patch.apply(&cached.config)?;
            let text = layout::config_text(&config);
            let call = BoardCall::Patch {
                expected_text: &cached.config_text,
                config_text: &text,
            };
            let r = self.run("board", &call.invocation(&keys)).await?;
            match common_status::<()>(&r)? {
                None => {
                    let retention_changed = config.retention != cached.config.retention;
                    let now = self.remember(board, config, text)?;
                    self.hook_registry(board, Some(&now.config)).await?;
                    if retention_changed {
                        self.retain(board, &now).await?;
                    }
                    return Ok(());
                }
                Some(_) => self.forget(board),
            }
        }
        Err(BoardError::Unavailable(format!(
            "board {board:?} kept changing; patch not applied"
        )))
    }

    /// After a retention change, the periods already written get the floor and expiry the
    /// new retention gives them (what a write would have set), so Redis keeps the same
    /// periods the embedded store does. A write racing the change sets its own period's
    /// from the new config already; this only catches up the rest.
    async fn retain(&self, board: &str, cached: &CachedBoard) -> Result<(), BoardError> {
        // period_list hides periods older than the window; they expire as they were set to.
        // Each record gets the floor it has as the newest (write.lua consults the newest's).
        let now = self.now_us();
        let updates: Vec<(String, String, Option<i64>)> = self
            .period_list(board)
            .await?
            .iter()
            .map(|p| {
                let floor = cached.floor(&p.period);
                (
                    p.period.id.clone(),
                    layout::period_record(&p.period, &floor.id),
                    cached.ttl_ms(&p.period, now),
                )
            })
            .collect();
        let call = BoardCall::Retain {
            config_text: &cached.config_text,
            periods: &updates,
        };
        let keys = self.keys(board);
        let r = self.run("board", &call.invocation(&keys)).await?;
        common_status::<()>(&r)?;
        Ok(())
    }

    /// Deletes a board and all its periods.
    pub(super) async fn drop_board(&self, board: &str) -> Result<(), BoardError> {
        let keys = self.keys(board);
        let r = self
            .run("board", &BoardCall::Drop.invocation(&keys))
            .await?;
        self.forget(board);
        self.registry("SREM", board).await?;
        self.hook_registry(board, None).await?;
        match r.status()? {
            status::OK => Ok(()),
            status::NO_BOARD => Err(BoardError::BoardNotFound(board.to_owned())),
            other => Err(r.malformed(0, &format!("is {other:?}"))),
        }
    }

    /// A board's config, current period and member count.
    pub(super) async fn describe(&self, board: &str) -> Result<BoardState, BoardError> {
        let keys = self.keys(board);
        let now = self.now_us();
        self.with_board(board, |cached| {
            let keys = keys.clone();
            async move {
                let current = cached.window.visible(now)?.current;
                let call = BoardCall::Count {
                    config_text: &cached.config_text,
                    period_id: &current.id,
                };
                let r = self.run("board", &call.invocation(&keys)).await?;
                if let Some(a) = common_status(&r)? {
                    return Ok(a);
                }
                Ok(Attempt::Done(BoardState {
                    name: board.to_owned(),
                    config: cached.config.clone(),
                    members: r.count(1)?,
                    current,
                }))
            }
        })
        .await
    }

    /// Every board, by name.
    pub(super) async fn list(&self) -> Result<Vec<BoardState>, BoardError> {
        let names = self.board_names().await?;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            match self.describe(&name).await {
                Ok(b) => out.push(b),
                // Deleted between the registry read and now, or a delete interrupted
                // before its registry step: not a board.
                Err(BoardError::BoardNotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The periods holding a ranking that readers see, newest first, with member counts.
    pub(super) async fn period_list(&self, board: &str) -> Result<Vec<PeriodSummary>, BoardError> {
        let keys = self.keys(board);
        let now = self.now_us();
        self.with_board(board, |cached| {
            let keys = keys.clone();
            async move {
                let call = BoardCall::Periods {
                    config_text: &cached.config_text,
                };
                let r = self.run("board", &call.invocation(&keys)).await?;
                if let Some(a) = common_status(&r)? {
                    return Ok(a);
                }
                let floor_us = cached.window.visible(now)?.floor_us;
                let mut out = Vec::new();
                for row in r.rows(1, 3)? {
                    let at = 1 + row * 3;
                    let id = r.text(at)?;
                    let period = layout::parse_period_record(&id, &r.text(at + 1)?)
                        .ok_or_else(|| r.malformed(at + 1, "is no period record"))?;
                    if period.start_us >= floor_us {
                        out.push(PeriodSummary {
                            period,
                            members: r.count(at + 2)?,
                        });
                    }
                }
                out.sort_by_key(|p| std::cmp::Reverse(p.period.start_us));
                Ok(Attempt::Done(out))
            }
        })
        .await
    }

    /// Number of boards and of members over all their retained periods (for metrics).
    pub(super) async fn count_all(&self) -> Result<Totals, BoardError> {
        let mut totals = Totals::default();
        for name in self.board_names().await? {
            match self.period_list(&name).await {
                Ok(ps) => {
                    totals.boards += 1;
                    totals.members += ps.iter().map(|p| p.members).sum::<u64>();
                }
                Err(BoardError::BoardNotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(totals)
    }
}
