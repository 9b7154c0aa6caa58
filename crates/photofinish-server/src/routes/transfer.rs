//! `GET /v1/boards/{board}/export` and `POST /v1/boards/{board}/import` (docs/SPEC.md §11,
//! docs/migrate.md): a period as JSON Lines, one `{"member","score","reached_at","metadata"}`
//! per line in rank order, out and back in.
//!
//! The export reads the period a page at a time through the service and streams each page
//! as it comes, so memory stays at one page whatever the size. The import parses the body
//! as it arrives, [`IMPORT_CHUNK_ROWS`] lines at a time, and hands the rows to the
//! service, which stages them and makes them visible all at once (or not at all).

use std::borrow::Cow;

use async_trait::async_trait;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use photofinish_core::columns::{ColumnNames, ScoreInput};
use photofinish_core::error::Refuses;
use photofinish_core::op::{ReadExportPage, ReadPage};
use photofinish_core::transfer::{ImportRow, ImportScores, ImportSource, IMPORT_CHUNK_ROWS};
use photofinish_core::view::ReadOptions;
use photofinish_core::{BoardError, Entry, ErrorCode, PeriodRef, RankStyle};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardPath, Params};
use crate::wire::parse;
use crate::wire::parse::rfc3339_us;
use crate::wire::types::{ImportAnswer, ScoresView};

/// Rows the export reads per page.
pub const EXPORT_PAGE_ROWS: u64 = 1000;
/// The longest line an import takes, bytes (a 1 KiB metadata object and a long name fit
/// many times over).
pub const MAX_IMPORT_LINE_BYTES: usize = 16 * 1024;

/// One line of an export, and of an import.
#[derive(Debug, Serialize, ToSchema)]
pub struct TransferLine<'a> {
    /// Member name.
    pub member: &'a str,
    /// Score (on a board of several columns, the first column's).
    pub score: i64,
    /// Every column's value by name, in column order (boards of several columns only).
    /// An import takes `scores` and `score` as an export writes them (both: `score` must
    /// be the first column's).
    #[schema(value_type = Option<HashMap<String, i64>>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scores: Option<ScoresView>,
    /// When the member first reached the score (RFC 3339, µs). On import, optional: the
    /// import's own time when absent.
    pub reached_at: String,
    /// Metadata (a JSON object), or null.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<&'a RawValue>,
    /// The member is hidden on the board (docs/SPEC.md §15): in an admin's export only
    /// (another reader's export leaves hidden members out); an import hides it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// The member's partition, on a board of partitions (docs/SPEC.md §17); an import
    /// puts the member in it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<&'a str>,
    /// The member's team, on a board of teams (docs/SPEC.md §17); an import puts the
    /// member in it again (the team's `reached_at` the latest of its members').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<&'a str>,
}

/// The NDJSON line of one entry on a board of `columns`, newline included.
fn line(e: &Entry, columns: &ColumnNames) -> Vec<u8> {
    let metadata = e
        .metadata
        .as_deref()
        .and_then(|m| serde_json::from_str::<&RawValue>(m).ok());
    let mut out = serde_json::to_vec(&TransferLine {
        member: &e.member,
        score: e.score(),
        scores: ScoresView::of(columns, &e.scores),
        reached_at: rfc3339_us(e.reached_at_us),
        metadata,
        hidden: e.hidden,
        partition: e.partition.as_deref(),
        team: e.team.as_deref(),
    })
    .unwrap_or_default();
    out.push(b'\n');
    out
}

/// An import into an empty period (docs/SPEC.md §11): what it may be refused with.
pub struct Import;

impl Refuses for Import {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::BoardNotEmpty,
        ErrorCode::InvalidEntries,
        ErrorCode::InvalidPeriod,
        ErrorCode::InvalidMember,
        ErrorCode::TooManyHidden,
        ErrorCode::InsufficientStorage,
    ];
}

/// A period as JSON Lines, in rank order.
#[utoipa::path(get, path = "/v1/boards/{board}/export", tag = "reads",
    description = "Every entry of one period as JSON Lines (`application/x-ndjson`), one `{\"member\",\"score\",\"reached_at\",\"metadata\"}` per line in rank order, streamed a page of 1,000 at a time. Who may read the board may export it; a hidden member (docs/SPEC.md §15) is in an admin's export only, with `\"hidden\": true`, and nobody else's. Each page is consistent; a period being written while it is exported may list a member whose score changed at its old and its new place (export a closed period, or take a backup, for a copy at one instant). `photofinish export` writes it to a file.",
    params(("board" = String, Path, description = "Board name"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id"),
        ("partition" = Option<String>, Query, description = "One partition's standings alone (docs/SPEC.md §17): ranks, totals and windows within it; 422 invalid_parameter on a board without partitions")),
    responses(
        (status = 200, description = "One JSON object per line", content_type = "application/x-ndjson", body = TransferLine),
        Refusals<ReadExportPage>))]
pub async fn get_export(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
) -> Result<Response, ApiError> {
    let mut op = ReadPage {
        board,
        offset: 0,
        limit: EXPORT_PAGE_ROWS,
        options: ReadOptions {
            ranking: RankStyle::Ordinal,
            period: q.period(),
            partition: q.partition()?,
        },
    };
    // The first page answers errors (no such board, period, access) before any byte.
    let first = app
        .gate
        .read(&id.caller, &ReadExportPage(op.clone()))
        .await?;
    // The pages after it read the period the first one resolved, even if a new period
    // begins meanwhile.
    op.options.period = PeriodRef::Id(first.period.id.clone());
    let caller = id.caller;
    let columns = first.columns.clone();
    let state = (Some(first.entries), 0u64);
    let pages = futures_util::stream::unfold(state, move |(page, offset)| {
        let (app, caller, columns) = (app.clone(), caller.clone(), columns.clone());
        let op = ReadPage {
            offset,
            ..op.clone()
        };
        async move {
            let entries = match page {
                Some(entries) => entries,
                None => match app.gate.read(&caller, &ReadExportPage(op)).await {
                    Ok(rows) => rows.entries,
                    // Cut short: the client sees the body end in an error.
                    Err(e) => {
                        return Some((Err(std::io::Error::other(e.to_string())), (None, u64::MAX)))
                    }
                },
            };
            if entries.is_empty() || offset == u64::MAX {
                return None;
            }
            let next = offset + entries.len() as u64;
            let mut buf = Vec::with_capacity(entries.len() * 96);
            for e in &entries {
                buf.extend_from_slice(&line(e, &columns));
            }
            Some((Ok(Bytes::from(buf)), (None, next)))
        }
    });
    Ok((
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(pages),
    )
        .into_response())
}

/// An import's line as read. An unknown field is refused (a misspelt `reached_at` would
/// otherwise silently become the import's time).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InLine<'a> {
    #[serde(borrow)]
    member: Cow<'a, str>,
    #[serde(borrow, default)]
    score: Option<&'a RawValue>,
    #[serde(default)]
    scores: Option<std::collections::BTreeMap<String, serde_json::Value>>,
    #[serde(borrow, default)]
    reached_at: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
    #[serde(default)]
    hidden: bool,
    #[serde(default)]
    partition: Option<String>,
    #[serde(default)]
    team: Option<String>,
}

/// The request body as import rows: lines split as bytes arrive, parsed a chunk at a time.
struct BodyRows {
    body: axum::body::BodyDataStream,
    buf: Vec<u8>,
    /// Where the unparsed part of `buf` starts.
    start: usize,
    line: u64,
    done: bool,
}

impl BodyRows {
    fn bad(&self, why: impl std::fmt::Display) -> BoardError {
        BoardError::InvalidEntries(format!("line {}: {why}", self.line))
    }

    fn parse(&self, text: &[u8]) -> Result<ImportRow, BoardError> {
        let l: InLine<'_> = serde_json::from_slice(text).map_err(|e| self.bad(e))?;
        let score = match l.score.map(RawValue::get) {
            None => None,
            Some(raw) => Some(match raw.parse::<i64>() {
                Ok(s) => s,
                Err(_) => {
                    let v: serde_json::Value =
                        serde_json::from_str(raw).map_err(|e| self.bad(e))?;
                    parse::score(&v).map_err(|e| self.bad(e.message))?
                }
            }),
        };
        let scores = match (score, &l.scores) {
            (None, None) => return Err(self.bad("a line needs \"score\" (or \"scores\")")),
            (Some(v), None) => ImportScores::Score(v),
            (first, Some(_)) => {
                let named = parse::write_scores(None, l.scores.as_ref())
                    .map_err(|e| self.bad(e.message))?;
                match named {
                    ScoreInput::Named(pairs) => ImportScores::Named { pairs, first },
                    other => return Err(self.bad(format!("unexpected scores {other:?}"))),
                }
            }
        };
        let reached_at_us = match l.reached_at {
            None => None,
            Some(t) => {
                let v = serde_json::Value::String(t.into_owned());
                parse::at(Some(&v)).map_err(|e| self.bad(e.message))?
            }
        };
        let metadata = match l.metadata {
            None => None,
            Some(raw) => {
                let v: serde_json::Value =
                    serde_json::from_str(raw.get()).map_err(|e| self.bad(e))?;
                parse::metadata(Some(&v)).map_err(|e| self.bad(e.message))?
            }
        };
        Ok(ImportRow {
            member: l.member.into_owned(),
            scores,
            reached_at_us,
            metadata,
            hidden: l.hidden,
            partition: l.partition,
            team: l.team,
        })
    }

    /// Parses the complete lines buffered, up to `max` rows, into `rows`.
    fn take_lines(&mut self, rows: &mut Vec<ImportRow>, max: usize) -> Result<(), BoardError> {
        while rows.len() < max {
            let Some(nl) = memchr(&self.buf[self.start..]) else {
                if self.buf.len() - self.start > MAX_IMPORT_LINE_BYTES {
                    self.line += 1;
                    return Err(self.bad(format_args!(
                        "longer than the {MAX_IMPORT_LINE_BYTES}-byte limit"
                    )));
                }
                return Ok(());
            };
            self.line += 1;
            let (from, to) = (self.start, self.start + nl);
            self.start = to + 1;
            if nl > MAX_IMPORT_LINE_BYTES {
                return Err(self.bad(format_args!(
                    "longer than the {MAX_IMPORT_LINE_BYTES}-byte limit"
                )));
            }
            let text = &self.buf[from..to];
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let row = self.parse(text)?;
            rows.push(row);
        }
        Ok(())
    }
}

fn memchr(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

#[async_trait]
impl ImportSource for BodyRows {
    async fn next_chunk(&mut self) -> Result<Option<Vec<ImportRow>>, BoardError> {
        let mut rows = Vec::with_capacity(IMPORT_CHUNK_ROWS);
        loop {
            self.take_lines(&mut rows, IMPORT_CHUNK_ROWS)?;
            if rows.len() == IMPORT_CHUNK_ROWS {
                return Ok(Some(rows));
            }
            if self.done {
                // A last line without its newline.
                if self.start < self.buf.len() {
                    self.buf.push(b'\n');
                    self.take_lines(&mut rows, usize::MAX)?;
                }
                return Ok((!rows.is_empty()).then_some(rows));
            }
            // Keep only the unparsed tail, then read more.
            self.buf.drain(..self.start);
            self.start = 0;
            match self.body.next().await {
                Some(Ok(bytes)) => self.buf.extend_from_slice(&bytes),
                Some(Err(e)) => {
                    return Err(BoardError::InvalidEntries(format!(
                        "the request body could not be read: {e}"
                    )))
                }
                None => self.done = true,
            }
        }
    }
}

/// Fills an empty period from JSON Lines.
#[utoipa::path(post, path = "/v1/boards/{board}/import", tag = "boards",
    description = "Fills one empty period of an existing board from JSON Lines, one `{\"member\",\"score\",\"reached_at\",\"metadata\"}` per line (an export's format; `reached_at` and `metadata` optional: absent `reached_at` is the import's time; `\"hidden\": true` hides the member on the board, docs/SPEC.md §15). Every entry keeps its score, reached_at and metadata; entries with the same score and reached_at rank in file order; the lines need not be sorted. Nothing is visible until every line was read and checked: then the period appears whole, or the answer is an error and nothing changed (a malformed line, a member twice, a score outside the board's rules: 422 `invalid_entries` naming the line or entry). Needs an admin key for the board. The period must be empty (409 `board_not_empty`). Limits: 16 KiB per line, 100,000,000 entries, and the board's `max_members`.",
    params(("board" = String, Path, description = "Board name"),
        ("period" = Option<String>, Query, description = "current (default), previous or a retained period id")),
    request_body(content = TransferLine, content_type = "application/x-ndjson", description = "One JSON object per line; an empty body imports nothing (an empty export round-trips)"),
    responses((status = 200, body = ImportAnswer), Refusals<Import>))]
pub async fn post_import(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
    body: Body,
) -> Result<Json<ImportAnswer>, ApiError> {
    q.only(&["period"])?;
    let mut rows = BodyRows {
        body: body.into_data_stream(),
        buf: Vec::new(),
        start: 0,
        line: 0,
        done: false,
    };
    let (done, erased) = app
        .gate
        .import(&id.caller, &board, &q.period(), &mut rows)
        .await?;
    tracing::info!(board = %board, period = %done.period.id, entries = done.entries, erased_rows_dropped = erased, "import done");
    Ok(Json(ImportAnswer {
        period: done.period.id,
        imported: done.entries,
        erased_dropped: erased,
    }))
}
