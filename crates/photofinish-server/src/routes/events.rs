//! `GET /v1/boards/{board}/events` (docs/SPEC.md §8): the board's live events as
//! Server-Sent Events. A thin adapter over the backend's feed ([`EventFeed`]): each stream
//! keeps only the id it last sent and reads the shared ring after it, so a slow consumer
//! costs no memory; one that falls out of the ring is disconnected — the connection is
//! closed, not just the response ended, so no client can take the end for a quiet board
//! and an EventSource reconnects with its `Last-Event-ID` (and is told `resync`). `Last-Event-ID` replays
//! what the ring still holds, else the stream opens with `resync`. When the board's period
//! ends the stream asks the backend to announce the next (each reset is sent once,
//! whichever stream, write or node gets there first).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use photofinish_core::access::Caller;
use photofinish_core::error::Refuses;
use photofinish_core::events::{Event, EventFeed, EventKind, Read};
use photofinish_core::names::GroupKey;
use photofinish_core::op::ReadBoard;
use photofinish_core::{BoardError, BoardName, ErrorCode};
use serde_json::json;
use tokio::sync::OwnedSemaphorePermit;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardPath};
use crate::limits::{EVENTS_KEEP_ALIVE, MAX_EVENT_FILTER_MEMBERS, MAX_PERIOD_WAIT};
use crate::wire::parse::{self, rfc3339_us};
use crate::wire::types::ScoresView;

/// Watching a board's events (docs/SPEC.md §8): what it may be refused with.
pub struct Watch;

impl Refuses for Watch {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::BoardNotFound, ErrorCode::TooManyStreams];
}

/// The live events of a board.
#[utoipa::path(get, path = "/v1/boards/{board}/events", tag = "events",
    params(("board" = String, Path, description = "Board name, [A-Za-z0-9_.-]{1,64}", pattern = r"^[A-Za-z0-9_.-]{1,64}$"),
        ("members" = Option<Vec<String>>, Query, description = "Only score and remove events of these members (reset always passes). One `members=a,b` is split on commas; repeated `members=` are taken one name each (for names with commas). At most 1000 names.", style = Form, explode = true),
        ("partition" = Option<String>, Query, description = "Only score events of members of this partition (docs/SPEC.md §17; remove and reset events pass, a client drops a remove of a member it does not show); 422 on a board without partitions"),
        ("access_token" = Option<String>, Query, description = "The bearer token, for clients that cannot send headers (browsers' EventSource); accepted on this endpoint only"),
        ("Last-Event-ID" = Option<String>, Header, description = "The id of the last event received: what followed it is replayed while the board's last 10,000 events hold it, else the stream opens with `resync`")),
    responses(
        (status = 200, description = "An event stream: `score` {member, score, rank, reached_at, period, and partition, partition_rank and team when the member is in them}, `remove` {member, period}, `reset` {period, previous}, `resync` {} (reload what you show); each with an increasing integer id; a keep-alive comment every 15 s", content_type = "text/event-stream", body = String),
        Refusals<Watch>))]
pub async fn get_events(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, FellBehind>>>, ApiError> {
    let (filter, partition) = filters(query.as_deref())?;
    let last_seen = last_event_id(&headers)?;
    let permit =
        app.streams
            .clone()
            .try_acquire_owned()
            .map_err(|_| BoardError::TooManyStreams {
                limit: app.streams_limit,
                what: "event streams",
            })?;
    let feed = app.gate.events(&id.caller, &board).await?;
    if partition.is_some() {
        let state = app
            .gate
            .read(
                &id.caller,
                &ReadBoard {
                    board: board.clone(),
                },
            )
            .await?;
        photofinish_core::groups::require_partitions(&state.config)?;
    }
    let reader = Reader {
        app: app.clone(),
        caller: id.caller,
        board,
        after: last_seen.unwrap_or_else(|| feed.last_id()),
        resync_first: last_seen.is_some(),
        feed,
        filter,
        partition,
        queue: VecDeque::new(),
        period_end_us: None,
        closing: app.closing.clone(),
        stopping_said: false,
        _permit: permit,
    };
    let stream =
        futures_util::stream::unfold(
            reader,
            |mut r| async move { r.next().await.map(|e| (e, r)) },
        );
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(EVENTS_KEEP_ALIVE)))
}

/// The member names of `members=` parameters (see the route's docs), `None` for all, and
/// the `partition=` one.
fn filters(query: Option<&str>) -> Result<(Option<HashSet<String>>, Option<String>), ApiError> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.unwrap_or("")).map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidParameter,
                format!("malformed query string: {e}"),
            )
        })?;
    let (mut values, mut partition) = (Vec::new(), None);
    for (k, v) in pairs {
        match k.as_str() {
            "members" => values.push(v),
            "partition" => partition = parse::group_key(Some(v))?.map(GroupKey::into_string),
            "access_token" => {}
            other => {
                return Err(ApiError::new(
                    ErrorCode::InvalidParameter,
                    format!(
                        "unknown parameter {other:?}: this endpoint takes members, partition and access_token"
                    ),
                ))
            }
        }
    }
    let names: HashSet<String> = match values.len() {
        0 => return Ok((None, partition)),
        1 => values[0].split(',').map(str::to_owned).collect(),
        _ => values.into_iter().collect(),
    };
    if names.len() > MAX_EVENT_FILTER_MEMBERS {
        return Err(ApiError::new(
            ErrorCode::InvalidParameter,
            format!(
                "members= names {} members, over the limit of {MAX_EVENT_FILTER_MEMBERS}",
                names.len()
            ),
        ));
    }
    for n in &names {
        photofinish_core::config::validate_member_name(n)?;
    }
    Ok((Some(names), partition))
}

/// The `Last-Event-ID` header: a non-negative integer, or absent.
fn last_event_id(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    let Some(v) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let text = v.to_str().unwrap_or("").trim();
    text.parse().map(Some).map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidParameter,
            format!("invalid Last-Event-ID {text:?}: an event id is a non-negative integer"),
        )
    })
}

/// Why a stream is cut: its consumer fell out of the ring. Ending the stream with this
/// error makes the server drop the connection (an HTTP/1.1 response cut before its last
/// chunk, an HTTP/2 stream reset) instead of ending the response as if the board had gone
/// quiet, which left a keep-alive connection open and a reader waiting forever.
#[derive(Debug, thiserror::Error)]
#[error("the event consumer fell more than the board's ring of events behind")]
pub struct FellBehind;

/// One consumer's place in the feed.
struct Reader {
    app: AppState,
    /// Who reads: the board's current period is read as it (a key revoked since the
    /// stream began reads nothing, and the stream then waits for events alone).
    caller: Caller,
    board: BoardName,
    feed: Arc<EventFeed>,
    /// The id of the last event sent (or skipped by the filter).
    after: u64,
    /// The consumer gave a `Last-Event-ID`: if it is no longer held, say `resync` first.
    resync_first: bool,
    filter: Option<HashSet<String>>,
    /// Only score events of this partition's members (docs/SPEC.md §17).
    partition: Option<String>,
    queue: VecDeque<SseEvent>,
    /// When the current period ends, µs (fetched lazily; `i64::MAX` for never).
    period_end_us: Option<i64>,
    /// The server is stopping: the stream ends, after a `retry:` hint.
    closing: tokio::sync::watch::Receiver<bool>,
    /// The hint was sent.
    stopping_said: bool,
    _permit: OwnedSemaphorePermit,
}

impl Reader {
    /// The next SSE event; `None` ends the stream (board deleted, server stopping), an
    /// error cuts the connection (consumer too slow).
    async fn next(&mut self) -> Option<Result<SseEvent, FellBehind>> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(Ok(e));
            }
            if *self.closing.borrow() {
                // The stop's last message: reconnect (to another node, or this one once
                // it is back) after a pause, from the last id.
                if self.stopping_said {
                    return None;
                }
                self.stopping_said = true;
                return Some(Ok(SseEvent::default()
                    .comment("server stopping")
                    .retry(crate::stop::STREAM_RETRY)));
            }
            match self.feed.read(self.after) {
                Read::Closed => return None,
                Read::Behind { last_id } if self.resync_first => {
                    self.resync_first = false;
                    self.after = last_id;
                    return Some(Ok(SseEvent::default()
                        .event("resync")
                        .id(last_id.to_string())
                        .data("{}")));
                }
                Read::Behind { .. } => {
                    tracing::info!(board = %self.board, "an event consumer fell behind the feed (more than its ring, or across a gap in a Redis board's stream); disconnected");
                    return Some(Err(FellBehind));
                }
                Read::Events(events) if events.is_empty() => {
                    self.resync_first = false;
                    self.wait().await;
                }
                Read::Events(events) => {
                    self.resync_first = false;
                    for e in events {
                        self.after = e.id;
                        if self.passes(&e) {
                            self.queue.push_back(sse(&e));
                        }
                    }
                }
            }
        }
    }

    fn passes(&self, e: &Event) -> bool {
        let member = match (&self.filter, e.kind.member()) {
            (Some(names), Some(m)) => names.contains(m),
            _ => true,
        };
        let partition = match (&self.partition, &e.kind) {
            (Some(p), EventKind::Score { groups, .. }) => groups.partition.as_ref() == Some(p),
            _ => true,
        };
        member && partition
    }

    /// Waits for the next event, or for the period to end (then asks for its reset).
    async fn wait(&mut self) {
        let end = match self.period_end_us {
            Some(end) => end,
            None => {
                let board = ReadBoard {
                    board: self.board.clone(),
                };
                let end = match self.app.gate.read(&self.caller, &board).await {
                    Ok(b) => b.current.end_us,
                    Err(_) => i64::MAX,
                };
                self.period_end_us = Some(end);
                end
            }
        };
        let now = self.app.gate.now_us();
        let until_end = u64::try_from(end.saturating_sub(now)).unwrap_or(0);
        let pause = Duration::from_micros(until_end).min(MAX_PERIOD_WAIT);
        let mut closing = self.closing.clone();
        tokio::select! {
            () = self.feed.changed(self.after) => {}
            _ = async { drop(closing.wait_for(|c| *c).await) } => {}
            () = tokio::time::sleep(pause) => {
                if self.app.gate.now_us() >= end {
                    // Announced once over every stream and node; a failure is retried on
                    // the next wake.
                    if let Err(e) = self.app.gate.announce_period(&self.caller, &self.board).await {
                        tracing::debug!(board = %self.board, error = %e, "period announce failed");
                    }
                    self.period_end_us = None;
                }
            }
        }
    }
}

/// An event on the wire.
fn sse(e: &Event) -> SseEvent {
    let (name, data) = match &e.kind {
        EventKind::Score {
            member,
            scores,
            columns,
            rank,
            reached_at_us,
            period,
            groups,
        } => {
            // A struct, not `json!`, so that `scores` keeps the board's column order.
            #[derive(serde::Serialize)]
            struct Score<'a> {
                member: &'a str,
                score: i64,
                #[serde(skip_serializing_if = "Option::is_none")]
                scores: Option<ScoresView>,
                rank: u64,
                reached_at: String,
                period: &'a str,
                #[serde(skip_serializing_if = "Option::is_none")]
                partition: Option<&'a str>,
                #[serde(skip_serializing_if = "Option::is_none")]
                partition_rank: Option<u64>,
                #[serde(skip_serializing_if = "Option::is_none")]
                team: Option<&'a str>,
            }
            let data = Score {
                member,
                score: scores.first(),
                scores: ScoresView::of(columns, scores),
                rank: *rank,
                reached_at: rfc3339_us(*reached_at_us),
                period,
                partition: groups.partition.as_deref(),
                partition_rank: groups.partition_rank,
                team: groups.team.as_deref(),
            };
            let text = serde_json::to_string(&data).unwrap_or_default();
            return SseEvent::default()
                .event("score")
                .id(e.id.to_string())
                .data(text);
        }
        EventKind::Remove { member, period } => {
            ("remove", json!({"member": member, "period": period}))
        }
        EventKind::Reset { period, previous } => {
            ("reset", json!({"period": period, "previous": previous}))
        }
    };
    SseEvent::default()
        .event(name)
        .id(e.id.to_string())
        .data(data.to_string())
}
