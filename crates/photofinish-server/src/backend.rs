//! The two storage backends behind one set of async operations: the embedded store (log,
//! snapshots, in-memory rankings) and Redis (standalone or cluster). Handlers call these and
//! never know which backend answers; both answer in the core's neutral shapes
//! ([`photofinish_core::view`]), and every error becomes an [`ApiError`] here.

use std::sync::Arc;

use photofinish_core::ranking::Entry;
use photofinish_core::view::{BoardState, Rows, WriteRequest, Written};
use photofinish_core::{Board, BoardConfig, CoreError, Period, PeriodRef, RankStyle};
use photofinish_redis::{RedisError, RedisStore};
use photofinish_store::state::{read_lock, BoardHandle};
use photofinish_store::{Applied, Command, Store};

use crate::error::{ApiError, Code};

/// Where the data lives.
#[derive(Clone)]
pub enum Backend {
    /// The embedded store.
    Embedded(Arc<Store>),
    /// Redis or Valkey.
    Redis(Arc<RedisStore>),
}

/// A queued embedded command's result.
type Pending = tokio::sync::oneshot::Receiver<
    Result<Result<Applied, photofinish_store::ApplyError>, photofinish_store::SubmitError>,
>;

impl From<RedisError> for ApiError {
    fn from(e: RedisError) -> Self {
        let code = match &e {
            RedisError::BoardNotFound(_) => Code::BoardNotFound,
            RedisError::ConfigConflict { board, existing } => {
                return ApiError::new(
                    Code::BoardConfigConflict,
                    format!(
                        "board {board:?} exists with a different config: {}",
                        serde_json::to_string(&**existing).unwrap_or_default()
                    ),
                )
            }
            RedisError::MemberNotFound { .. } => Code::MemberNotFound,
            RedisError::PeriodNotFound(_) => Code::PeriodNotFound,
            RedisError::ScoreOutOfRange(_) => Code::ScoreOutOfRange,
            RedisError::ScoreOverflow { .. } => Code::ScoreOverflow,
            RedisError::Core(c) => return c.clone().into(),
            RedisError::Unavailable(_) => Code::StorageUnavailable,
        };
        ApiError::new(code, e.to_string())
    }
}

fn member_missing(board: &str, member: &str, period: &str) -> ApiError {
    ApiError::new(
        Code::MemberNotFound,
        format!("member {member:?} is not ranked on board {board:?} in period {period}"),
    )
}

impl Backend {
    /// Now on this backend's clock, µs.
    pub fn now_us(&self) -> i64 {
        match self {
            Backend::Embedded(s) => s.now_us(),
            Backend::Redis(r) => r.now_us(),
        }
    }

    /// `None` while writes can succeed, else why they cannot.
    pub async fn health(&self) -> Option<String> {
        match self {
            Backend::Embedded(s) => s.write_error(),
            Backend::Redis(r) => r.health().await,
        }
    }

    /// Boards and members over all retained periods, for the metrics gauges.
    pub async fn totals(&self) -> Result<(u64, u64), ApiError> {
        match self {
            Backend::Embedded(s) => {
                let boards = s.state().boards();
                let members = boards
                    .iter()
                    .map(|(_, b)| read_lock(b).total_members())
                    .sum();
                Ok((boards.len() as u64, members))
            }
            Backend::Redis(r) => Ok(r.totals().await?),
        }
    }

    fn embedded_board(store: &Store, name: &str) -> Result<BoardHandle, ApiError> {
        store.state().board(name).ok_or_else(|| {
            ApiError::new(
                Code::BoardNotFound,
                format!("board {name:?} does not exist"),
            )
        })
    }

    fn embedded_state(name: &str, b: &Board, now_us: i64) -> Result<BoardState, ApiError> {
        let current = b.resolve(&PeriodRef::Current, now_us)?;
        Ok(BoardState {
            name: name.to_owned(),
            config: b.config().clone(),
            members: b.ranking(&current).map_or(0, |r| r.len()),
            current,
        })
    }

    /// Queues an embedded command (stamped with the clock when `stamp`).
    fn enqueue(store: &Store, cmd: Command, stamp: bool) -> Result<Pending, ApiError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        store.submit(cmd, stamp, Box::new(move |r| drop(tx.send(r))))?;
        Ok(rx)
    }

    /// Waits for a queued embedded command.
    async fn outcome(rx: Pending) -> Result<Applied, ApiError> {
        let result = rx.await.map_err(|_| {
            ApiError::new(Code::ShuttingDown, "the writer stopped before answering")
        })?;
        Ok(result??)
    }

    async fn execute(store: &Store, cmd: Command, stamp: bool) -> Result<Applied, ApiError> {
        Self::outcome(Self::enqueue(store, cmd, stamp)?).await
    }

    /// Fails with 404 unless the board exists; cheap on both backends (the Redis backend
    /// answers from its config cache when it can).
    pub async fn check_board(&self, name: &str) -> Result<(), ApiError> {
        match self {
            Backend::Embedded(s) => Self::embedded_board(s, name).map(|_| ()),
            Backend::Redis(r) => Ok(r.check_board(name).await?),
        }
    }

    /// Creates a board; `true` if it is new, `false` if it exists with the same config.
    pub async fn create_board(&self, name: &str, config: BoardConfig) -> Result<bool, ApiError> {
        match self {
            Backend::Embedded(s) => {
                let cmd = Command::CreateBoard {
                    board: name.to_owned(),
                    config,
                };
                Ok(Self::execute(s, cmd, false).await? == Applied::BoardCreated(true))
            }
            Backend::Redis(r) => Ok(r.create_board(name, config).await?),
        }
    }

    /// One board's summary.
    pub async fn board(&self, name: &str) -> Result<BoardState, ApiError> {
        match self {
            Backend::Embedded(s) => {
                let handle = Self::embedded_board(s, name)?;
                let b = read_lock(&handle);
                Self::embedded_state(name, &b, s.now_us())
            }
            Backend::Redis(r) => Ok(r.board(name).await?),
        }
    }

    /// Every board, by name.
    pub async fn boards(&self) -> Result<Vec<BoardState>, ApiError> {
        match self {
            Backend::Embedded(s) => {
                let now = s.now_us();
                s.state()
                    .boards()
                    .into_iter()
                    .map(|(name, handle)| Self::embedded_state(&name, &read_lock(&handle), now))
                    .collect()
            }
            Backend::Redis(r) => Ok(r.boards().await?),
        }
    }

    /// Deletes a board.
    pub async fn delete_board(&self, name: &str) -> Result<(), ApiError> {
        match self {
            Backend::Embedded(s) => {
                Self::embedded_board(s, name)?;
                let cmd = Command::DeleteBoard {
                    board: name.to_owned(),
                };
                Self::execute(s, cmd, false).await?;
                Ok(())
            }
            Backend::Redis(r) => Ok(r.delete_board(name).await?),
        }
    }

    /// The retained periods, newest first, with member counts.
    pub async fn periods(&self, name: &str) -> Result<Vec<(Period, u64)>, ApiError> {
        match self {
            Backend::Embedded(s) => {
                let handle = Self::embedded_board(s, name)?;
                let b = read_lock(&handle);
                let floor = b.visible_floor_us(s.now_us())?;
                Ok(b.periods()
                    .filter(|(p, _)| p.start_us >= floor)
                    .map(|(p, r)| (p.clone(), r.len()))
                    .collect())
            }
            Backend::Redis(r) => Ok(r.periods(name).await?),
        }
    }

    fn write_command(board: &str, w: WriteRequest) -> (Command, bool) {
        let stamp = w.at_us.is_none();
        let cmd = Command::Write {
            board: board.to_owned(),
            member: w.member,
            op: w.op,
            value: w.value,
            at_us: w.at_us.unwrap_or(0),
            metadata: w.metadata,
        };
        (cmd, stamp)
    }

    fn written(applied: Applied) -> Result<Written, ApiError> {
        match applied {
            Applied::Written(o, period) => Ok((o, period)),
            other => Err(ApiError::new(
                Code::StorageUnavailable,
                format!("unexpected result {other:?}"),
            )),
        }
    }

    /// Refuses a write with an explicit `at` in a period readers no longer see (older than
    /// retention counted back from the current period). The log's own rule, applied in the
    /// writer, only knows the newest period written; this one needs the clock, so it runs
    /// before the write is logged and replays never depend on when they run.
    fn embedded_check_retained(
        store: &Store,
        board: &str,
        at_us: Option<i64>,
    ) -> Result<(), ApiError> {
        let Some(at) = at_us else {
            return Ok(());
        };
        let handle = Self::embedded_board(store, board)?;
        let b = read_lock(&handle);
        let period = b.calendar().period_at(at)?;
        if period.start_us < b.visible_floor_us(store.now_us())? {
            return Err(CoreError::PeriodNotRetained(period.id).into());
        }
        Ok(())
    }

    /// Applies one write atomically.
    pub async fn write(&self, board: &str, w: WriteRequest) -> Result<Written, ApiError> {
        match self {
            Backend::Embedded(s) => {
                Self::embedded_check_retained(s, board, w.at_us)?;
                let (cmd, stamp) = Self::write_command(board, w);
                Self::written(Self::execute(s, cmd, stamp).await?)
            }
            Backend::Redis(r) => Ok(r.write(board, &w).await?),
        }
    }

    /// Applies writes in order; each succeeds or fails on its own. Entries that failed
    /// validation come in as errors and are passed through in place.
    pub async fn write_batch(
        &self,
        board: &str,
        writes: Vec<Result<WriteRequest, ApiError>>,
    ) -> Result<Vec<Result<Written, ApiError>>, ApiError> {
        match self {
            Backend::Embedded(s) => {
                Self::embedded_board(s, board)?;
                // Queue every valid entry first, in order, then collect: the writer applies
                // them in queue order, and one group commit can carry the whole batch.
                let pending: Vec<_> = writes
                    .into_iter()
                    .map(|w| {
                        let w = w?;
                        Self::embedded_check_retained(s, board, w.at_us)?;
                        let (cmd, stamp) = Self::write_command(board, w);
                        Self::enqueue(s, cmd, stamp)
                    })
                    .collect();
                let mut out = Vec::with_capacity(pending.len());
                for p in pending {
                    out.push(match p {
                        Ok(rx) => Self::outcome(rx).await.and_then(Self::written),
                        Err(e) => Err(e),
                    });
                }
                Ok(out)
            }
            Backend::Redis(r) => {
                // Valid entries go to Redis (which answers 404 for the whole batch if the
                // board is gone); invalid ones keep their place and their error.
                let mut valid = Vec::with_capacity(writes.len());
                let slots: Vec<Result<(), ApiError>> = writes
                    .into_iter()
                    .map(|w| w.map(|w| valid.push(w)))
                    .collect();
                let mut done = r.write_many(board, &valid).await?.into_iter();
                Ok(slots
                    .into_iter()
                    .map(|slot| {
                        slot?;
                        done.next()
                            .unwrap_or_else(|| {
                                Err(photofinish_redis::RedisError::Unavailable(
                                    "no answer for this entry".into(),
                                ))
                            })
                            .map_err(ApiError::from)
                    })
                    .collect())
            }
        }
    }

    /// Resolves `r` on an embedded board: the period and its ranking, if any. The current
    /// period always resolves (empty before its first write); any other period without a
    /// ranking, or older than readers see, is a 404.
    fn embedded_period<'b>(
        b: &'b Board,
        r: &PeriodRef,
        now_us: i64,
    ) -> Result<(Period, Option<&'b photofinish_core::Ranking>), ApiError> {
        let period = b.resolve(r, now_us)?;
        let ranking = b.ranking(&period);
        // The current period is never older than retention: reads of it, nearly all reads,
        // skip both checks (and the floor cache's lock).
        let current = *r == PeriodRef::Current || b.resolve(&PeriodRef::Current, now_us)? == period;
        if !current && (ranking.is_none() || period.start_us < b.visible_floor_us(now_us)?) {
            return Err(ApiError::new(
                Code::PeriodNotFound,
                format!("no ranking for period {}", period.id),
            ));
        }
        Ok((period, ranking))
    }

    /// Runs `f` on the period `r` names and its ranking, under the board's read lock.
    fn embedded_read<T>(
        store: &Store,
        board: &str,
        r: &PeriodRef,
        f: impl FnOnce(Period, Option<&photofinish_core::Ranking>) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let handle = Self::embedded_board(store, board)?;
        let b = read_lock(&handle);
        let (period, ranking) = Self::embedded_period(&b, r, store.now_us())?;
        f(period, ranking)
    }

    /// A member's entry in `style` and the period's size.
    pub async fn member(
        &self,
        board: &str,
        member: &str,
        style: RankStyle,
        r: &PeriodRef,
    ) -> Result<(Entry, u64), ApiError> {
        match self {
            Backend::Embedded(s) => Self::embedded_read(s, board, r, |period, ranking| {
                let missing = || member_missing(board, member, &period.id);
                let ranking = ranking.ok_or_else(missing)?;
                let e = ranking.member(member, style).ok_or_else(missing)?;
                Ok((e, ranking.len()))
            }),
            Backend::Redis(rs) => {
                let (e, total, _) = rs.member(board, member, style, r).await?;
                Ok((e, total))
            }
        }
    }

    /// Removes a member from a period.
    pub async fn remove(&self, board: &str, member: &str, period: &str) -> Result<(), ApiError> {
        match self {
            Backend::Embedded(s) => {
                {
                    let handle = Self::embedded_board(s, board)?;
                    let b = read_lock(&handle);
                    Self::embedded_period(&b, &PeriodRef::parse(period), s.now_us())?;
                }
                let cmd = Command::DeleteMember {
                    board: board.to_owned(),
                    period: period.to_owned(),
                    member: member.to_owned(),
                    now_us: 0,
                };
                Self::execute(s, cmd, true).await?;
                Ok(())
            }
            Backend::Redis(r) => Ok(r.remove(board, member, &PeriodRef::parse(period)).await?),
        }
    }

    /// Up to `limit` entries from 0-based `offset`.
    pub async fn page(
        &self,
        board: &str,
        offset: u64,
        limit: u64,
        style: RankStyle,
        r: &PeriodRef,
    ) -> Result<Rows, ApiError> {
        match self {
            Backend::Embedded(s) => Self::embedded_read(s, board, r, |period, ranking| {
                let (total, entries) = match ranking {
                    None => (0, Vec::new()),
                    Some(rk) => (rk.len(), rk.page(offset, limit as usize, style)),
                };
                Ok(Rows {
                    total,
                    period,
                    entries,
                })
            }),
            Backend::Redis(rs) => Ok(rs.page(board, offset, limit, style, r).await?),
        }
    }

    /// The window around `member`.
    pub async fn around(
        &self,
        board: &str,
        member: &str,
        (before, after): (u64, u64),
        style: RankStyle,
        r: &PeriodRef,
    ) -> Result<Rows, ApiError> {
        match self {
            Backend::Embedded(s) => Self::embedded_read(s, board, r, |period, ranking| {
                let missing = || member_missing(board, member, &period.id);
                let ranking = ranking.ok_or_else(missing)?;
                let entries = ranking
                    .around(member, before, after, style)
                    .ok_or_else(missing)?;
                Ok(Rows {
                    total: ranking.len(),
                    period,
                    entries,
                })
            }),
            Backend::Redis(rs) => Ok(rs.around(board, member, before, after, style, r).await?),
        }
    }
}
