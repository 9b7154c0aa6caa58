//! HTTP's extractors: the body under its limit, the query string, the path (a board name
//! checked here, before the query string and the body are read), and the caller.
//!
//! The JSON body is parsed with serde into loose types (a score may be a number or a
//! string), then each field is checked by `wire::parse`, so that a fractional score, an
//! out-of-range integer, `1e400` or a non-object metadata gets a 422 with a precise code —
//! never a panic and never a silent rounding. Query parameters are checked the same way
//! (400).

use std::collections::HashMap;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use photofinish_core::view::ReadOptions;
use photofinish_core::{BoardError, BoardName, PeriodRef, RankStyle};
use serde::de::DeserializeOwned;

use crate::app::AppState;
use crate::auth::{anonymous_may_call, bearer, Identity};
use crate::error::ApiError;
use crate::limits::{
    BODY_DISCARD_WAIT, DEFAULT_PAGE_LIMIT, MAX_BODY_BYTES, MAX_DISCARD_BYTES, MAX_PAGE_LIMIT,
};
use crate::wire::parse::{self, bounded_u64, ranking};
use photofinish_core::access::{Action, Caller};
use photofinish_core::names::GroupKey;
use photofinish_core::ErrorCode;

/// A JSON body of at most [`MAX_BODY_BYTES`], parsed into `T`.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        let (parts, body) = req.into_parts();
        let body = read_body(&parts.headers, body).await?;
        parse_json(&body).map(JsonBody)
    }
}

/// A request body of at most [`MAX_BODY_BYTES`]. One over it is answered `413
/// body_too_large` only after the rest has been read and thrown away — up to
/// [`MAX_DISCARD_BYTES`] more, for at most [`BODY_DISCARD_WAIT`] — so the client has sent
/// everything when the answer comes: a server that answers and closes with the body unread
/// makes the kernel reset the connection, and the client loses the answer (a `BrokenPipe`
/// instead of the 413). A body announced larger than that bound, or one that asks to
/// wait for `100 Continue`, is answered at once without reading on.
pub async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    use futures_util::StreamExt;
    let too_large = || {
        ApiError::new(
            ErrorCode::BodyTooLarge,
            format!("request body is over the {MAX_BODY_BYTES}-byte limit"),
        )
    };
    let announced = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        let waits = headers
            .get(axum::http::header::EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        if waits || announced.is_some_and(|n| n > (MAX_BODY_BYTES + MAX_DISCARD_BYTES) as u64) {
            return Err(too_large());
        }
    }
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            ApiError::new(
                ErrorCode::MalformedJson,
                format!("request body could not be read: {e}"),
            )
        })?;
        if buf.len() + chunk.len() > MAX_BODY_BYTES {
            let discard = async {
                let mut thrown = chunk.len();
                while let Some(Ok(more)) = stream.next().await {
                    thrown += more.len();
                    if thrown > MAX_DISCARD_BYTES {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(BODY_DISCARD_WAIT, discard).await;
            return Err(too_large());
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(buf))
}

/// Parses `body` as JSON into `T`; every body is required (the document says so), so an
/// empty one is malformed: `{}` asks for the defaults.
pub fn parse_json<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::new(
            ErrorCode::MalformedJson,
            "a JSON body is required (send {} for the defaults)",
        ));
    }
    serde_json::from_slice(body).map_err(|e| {
        ApiError::new(
            ErrorCode::MalformedJson,
            format!("malformed JSON body: {e}"),
        )
    })
}

/// Path parameters, percent-decoded; a path that does not decode is a 400.
pub struct PathParams<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for PathParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| PathParams(p.0))
            .map_err(|e| ApiError::new(ErrorCode::InvalidParameter, format!("malformed path: {e}")))
    }
}

/// The `{board}` of a path, checked at the boundary: a name that breaks the rule is a 400
/// `invalid_board_name` before the handler runs, so no handler can skip the check.
pub struct BoardPath(pub BoardName);

impl<S: Send + Sync> FromRequestParts<S> for BoardPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let PathParams(board) = PathParams::<String>::from_request_parts(parts, state).await?;
        Ok(BoardPath(BoardName::parse(board)?))
    }
}

/// The `{board}` and `{member}` of a path: the board checked as [`BoardPath`] does, the
/// member percent-decoded and as given (a read looks it up; a name no write could have
/// made is simply not ranked).
pub struct BoardMemberPath(pub BoardName, pub String);

impl<S: Send + Sync> FromRequestParts<S> for BoardMemberPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let PathParams((board, member)) =
            PathParams::<(String, String)>::from_request_parts(parts, state).await?;
        Ok(BoardMemberPath(BoardName::parse(board)?, member))
    }
}

/// Who the request is: from `Authorization: Bearer <token>` (docs/SPEC.md §6). A
/// credential that does not check out is a 401, never anonymous. The request then takes
/// one token from its caller's rate limit (docs/SPEC.md §7): 429 when there is none.
pub struct Auth(pub Identity);

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        if !app.auth.has_credentials() {
            // An open server ignores credentials, well-formed or not.
            return Ok(Auth(app.auth.identify(None)?));
        }
        let token = match parts.headers.get(axum::http::header::AUTHORIZATION) {
            None => query_token(parts).map(std::borrow::Cow::Owned),
            Some(v) => {
                let v = v.to_str().map_err(|_| {
                    ApiError::from(BoardError::Unauthorized(
                        "the Authorization header is not ASCII".into(),
                    ))
                })?;
                Some(std::borrow::Cow::Borrowed(bearer(v)?))
            }
        };
        let id = app.auth.identify(token.as_deref())?;
        if matches!(id.caller, Caller::Anonymous) {
            anonymous_may_try(parts, app).await?;
        }
        if let Some(limiter) = &app.limiter {
            let peer = parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|c| c.0.ip());
            limiter.check(&id.caller, id.rate, peer)?;
        }
        Ok(Auth(id))
    }
}

/// Before anything of an anonymous request is read — its query string, its body — on a
/// server with credentials: 401 unless it could be allowed at all (docs/SPEC.md §6), so a
/// caller without a valid credential learns nothing but that it needs one. What may be
/// allowed is a read ([`anonymous_may_call`]) of a `public_read` board (a board that is
/// not public, or does not exist, or has a malformed name: 401, as the gate answers it),
/// or of the lists that show each caller what it may read (`/v1/boards`,
/// `/v1/members/{member}`). The gate still decides each request.
async fn anonymous_may_try(parts: &mut Parts, app: &AppState) -> Result<(), ApiError> {
    let path = parts.uri.path().to_owned();
    if !anonymous_may_call(parts.method.as_str(), &path) {
        return Err(photofinish_core::access::unauthorized().into());
    }
    let params = axum::extract::RawPathParams::from_request_parts(parts, app)
        .await
        .ok();
    let board = params
        .as_ref()
        .and_then(|p| p.iter().find(|(name, _)| *name == "board"))
        .map(|(_, value)| value.to_owned());
    match board {
        Some(board) => {
            // Percent-decoded already; one that does not decode names no board (below).
            app.gate
                .admit(&Caller::Anonymous, Action::Read { board: &board })
                .await?;
        }
        None if path == "/v1/boards" || path.starts_with("/v1/members/") => {}
        None => return Err(photofinish_core::access::unauthorized().into()),
    }
    Ok(())
}

/// The `access_token` query parameter, taken on the event stream only: browsers'
/// `EventSource` cannot send an `Authorization` header (docs/security.md says why nowhere
/// else: tokens in URLs end up in logs).
fn query_token(parts: &Parts) -> Option<String> {
    if !parts.uri.path().ends_with("/events") {
        return None;
    }
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(parts.uri.query()?).ok()?;
    pairs
        .into_iter()
        .find(|(k, _)| k == "access_token")
        .map(|(_, v)| v)
}

/// The query string as a map; a malformed query string is a 400.
pub struct Params(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|q| Params(q.0))
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::InvalidParameter,
                    format!("malformed query string: {e}"),
                )
            })
    }
}

impl Params {
    /// A non-negative integer parameter, `default` when absent, at most `max`.
    pub fn u64(&self, name: &str, default: u64, max: u64) -> Result<u64, ApiError> {
        self.0
            .get(name)
            .map_or(Ok(default), |raw| bounded_u64(name, raw, max))
    }

    /// `limit`, a page's size: [`DEFAULT_PAGE_LIMIT`] when absent, at most
    /// [`MAX_PAGE_LIMIT`] (docs/SPEC.md §3) — every page of the API but the board list's
    /// default ([`Self::limit_or`]) and the audit log's own bounds.
    pub fn page_limit(&self) -> Result<u64, ApiError> {
        self.limit_or(DEFAULT_PAGE_LIMIT)
    }

    /// `limit`, a page's size: `default` when absent, at most [`MAX_PAGE_LIMIT`].
    pub fn limit_or(&self, default: u64) -> Result<u64, ApiError> {
        self.u64("limit", default, MAX_PAGE_LIMIT)
    }

    /// `ranking`: ordinal (default), competition or dense.
    pub fn ranking(&self) -> Result<RankStyle, ApiError> {
        ranking(self.0.get("ranking").map(String::as_str))
    }

    /// `ranking` and `period` together.
    pub fn read_options(&self) -> Result<ReadOptions, ApiError> {
        Ok(ReadOptions {
            ranking: self.ranking()?,
            period: self.period(),
            partition: self.partition()?,
        })
    }

    /// `partition`: a partition read alone (docs/SPEC.md §17).
    pub fn partition(&self) -> Result<Option<GroupKey>, ApiError> {
        parse::group_key(self.0.get("partition").cloned())
    }

    /// 400 `invalid_parameter` for a parameter not in `allowed` (where a stray one could
    /// hide a mistake: an import, which fills a period for good).
    pub fn only(&self, allowed: &[&str]) -> Result<(), ApiError> {
        match self.0.keys().find(|k| !allowed.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(ApiError::new(
                ErrorCode::InvalidParameter,
                format!(
                    "unknown parameter {k:?}: this endpoint takes {}",
                    allowed.join(", ")
                ),
            )),
        }
    }

    /// `period`: current (default), previous or an id.
    pub fn period(&self) -> PeriodRef {
        self.0
            .get("period")
            .map_or(PeriodRef::Current, |s| PeriodRef::parse(s))
    }
}
