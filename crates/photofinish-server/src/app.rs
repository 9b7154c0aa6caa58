//! The shared application state and the helpers every handler uses: run a command through
//! the writer and wait for it, find a board, resolve a period for a read, and turn core
//! values into API views.

use std::sync::Arc;

use photofinish_core::config::validate_board_name;
use photofinish_core::ranking::Entry;
use photofinish_core::{Board, Period, PeriodRef, Ranking};
use photofinish_store::state::BoardHandle;
use photofinish_store::{Applied, Command, Store};
use serde_json::value::RawValue;

use crate::dto::{BoardView, EntryView};
use crate::error::{ApiError, Code};
use crate::input::rfc3339_us;
use crate::metrics::Metrics;

/// Everything a handler needs.
pub struct App {
    /// The store: state for reads, writer for writes.
    pub store: Arc<Store>,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
}

/// The state axum hands to handlers.
pub type AppState = Arc<App>;

impl App {
    /// Queues `cmd` (stamped with the clock when `stamp`), waits until it is durable and
    /// applied, and returns what it did.
    pub async fn execute(&self, cmd: Command, stamp: bool) -> Result<Applied, ApiError> {
        let rx = self.enqueue(cmd, stamp)?;
        Self::outcome(rx).await
    }

    /// Queues `cmd` and returns where its result will arrive.
    pub fn enqueue(&self, cmd: Command, stamp: bool) -> Result<Pending, ApiError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.store
            .submit(cmd, stamp, Box::new(move |r| drop(tx.send(r))))?;
        Ok(rx)
    }

    /// Waits for a queued command's result.
    pub async fn outcome(rx: Pending) -> Result<Applied, ApiError> {
        let result = rx.await.map_err(|_| {
            ApiError::new(Code::ShuttingDown, "the writer stopped before answering")
        })?;
        Ok(result??)
    }

    /// The API view of board `name` now.
    pub fn board_view(&self, name: &str) -> Result<BoardView, ApiError> {
        let handle = self.board(name)?;
        let b = photofinish_store::state::read_lock(&handle);
        board_view(name, &b, self.store.now_us())
    }

    /// The board called `name`: 400 for an invalid name, 404 if absent.
    pub fn board(&self, name: &str) -> Result<BoardHandle, ApiError> {
        validate_board_name(name)?;
        self.store.state().board(name).ok_or_else(|| {
            ApiError::new(
                Code::BoardNotFound,
                format!("board {name:?} does not exist"),
            )
        })
    }
}

/// A queued command's result.
pub type Pending = tokio::sync::oneshot::Receiver<
    Result<Result<Applied, photofinish_store::ApplyError>, photofinish_store::SubmitError>,
>;

/// Resolves `r` for a read at `now_us`: the period and its ranking. The current period always
/// resolves (empty if nothing was written yet); any other period without a ranking is a 404.
pub fn read_period<'b>(
    board: &'b Board,
    r: &PeriodRef,
    now_us: i64,
) -> Result<(Period, Option<&'b Ranking>), ApiError> {
    let period = board.resolve(r, now_us)?;
    let ranking = board.ranking(&period);
    if ranking.is_none() && board.resolve(&PeriodRef::Current, now_us)? != period {
        return Err(ApiError::new(
            Code::PeriodNotFound,
            format!("no ranking for period {}", period.id),
        ));
    }
    Ok((period, ranking))
}

/// The API view of a board at `now_us`.
pub fn board_view(name: &str, board: &Board, now_us: i64) -> Result<BoardView, ApiError> {
    let c = board.config();
    let current = board.resolve(&PeriodRef::Current, now_us)?;
    Ok(BoardView {
        name: name.to_owned(),
        order: c.order.as_str().into(),
        update: c.update.as_str().into(),
        reset: c.reset.as_str().into(),
        timezone: c.timezone.clone(),
        week_start: c.week_start.as_str().into(),
        retention: c.retention,
        members: board.ranking(&current).map_or(0, Ranking::len),
        next_reset_at: (current.end_us != i64::MAX).then(|| rfc3339_us(current.end_us)),
        period: current.id,
    })
}

/// Stored metadata (always a serialized JSON object) as raw JSON.
pub fn raw_metadata(m: Option<String>) -> Option<Box<RawValue>> {
    m.and_then(|s| RawValue::from_string(s).ok())
}

/// The API view of a ranked entry.
pub fn entry_view(e: Entry) -> EntryView {
    EntryView {
        rank: e.rank,
        member: e.member,
        score: e.score,
        reached_at: rfc3339_us(e.reached_at_us),
        metadata: raw_metadata(e.metadata),
    }
}
