//! Turning request input into checked values, each rule with its own error code.
//!
//! The JSON body is parsed with serde into loose types (a score may be a number or a
//! string), then each field is checked here, so that a fractional score, an out-of-range
//! integer, `1e400` or a non-object metadata gets a 422 with a precise code — never a panic
//! and never a silent rounding. Query parameters are checked the same way (400).

use std::collections::HashMap;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use photofinish_core::calendar::validate_instant;
use photofinish_core::config::MAX_METADATA_BYTES;
use photofinish_core::view::ReadOptions;
use photofinish_core::{BoardError, BoardName, Op, PeriodRef, RankStyle};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use crate::app::AppState;
use crate::auth::{bearer, Identity};
use crate::error::ApiError;
use crate::limits::{BODY_DISCARD_WAIT, MAX_BODY_BYTES, MAX_DISCARD_BYTES};
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

    /// `ranking`: ordinal (default), competition or dense.
    pub fn ranking(&self) -> Result<RankStyle, ApiError> {
        ranking(self.0.get("ranking").map(String::as_str))
    }

    /// `ranking` and `period` together.
    pub fn read_options(&self) -> Result<ReadOptions, ApiError> {
        Ok(ReadOptions {
            ranking: self.ranking()?,
            period: self.period(),
        })
    }

    /// `period`: current (default), previous or an id.
    pub fn period(&self) -> PeriodRef {
        self.0
            .get("period")
            .map_or(PeriodRef::Current, |s| PeriodRef::parse(s))
    }
}

/// Parameter `name`'s value `raw`: a non-negative integer at most `max`.
pub fn bounded_u64(name: &str, raw: &str, max: u64) -> Result<u64, ApiError> {
    let v: u64 = raw.parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidParameter,
            format!("{name} must be a non-negative integer, got {raw:?}"),
        )
    })?;
    if v > max {
        return Err(ApiError::new(
            ErrorCode::InvalidParameter,
            format!("{name} is {v}, over the limit of {max}"),
        ));
    }
    Ok(v)
}

/// A rank style: ordinal (also when absent), competition or dense.
pub fn ranking(s: Option<&str>) -> Result<RankStyle, ApiError> {
    match s {
        None => Ok(RankStyle::Ordinal),
        Some(s) => RankStyle::parse(s).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidParameter,
                format!("ranking must be ordinal, competition or dense, got {s:?}"),
            )
        }),
    }
}

/// The integer a JSON number's text denotes, as decimal digits (`1.0` → `1`, `25e-1` →
/// none, `2E3` → `2000`), or `None` if it has a fraction: JSON Schema's `integer` counts
/// `1.0` as one, so the server does too. A magnitude past 64 digits is written as 65
/// nines (out of every range).
pub fn integral_text(text: &str) -> Option<String> {
    let (neg, t) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits = format!("{int}{frac}");
    let point = i64::try_from(int.len()).ok()?.saturating_add(exp);
    if point <= 0 {
        return digits.bytes().all(|b| b == b'0').then(|| "0".to_owned());
    }
    let point = usize::try_from(point).ok()?;
    if point > 64 {
        return (!digits.bytes().all(|b| b == b'0'))
            .then(|| "9".repeat(65))
            .or(Some("0".into()));
    }
    if point >= digits.len() {
        digits.extend(std::iter::repeat_n('0', point - digits.len()));
    } else if digits[point..].bytes().all(|b| b == b'0') {
        digits.truncate(point);
    } else {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    let digits = if trimmed.is_empty() { "0" } else { trimmed };
    Some(if neg && digits != "0" {
        format!("-{digits}")
    } else {
        digits.to_owned()
    })
}

/// A count in a body (`retention`, `max_members`, …): a JSON integer (`1.0` included), or
/// null for absent; as `deserialize_with`.
pub fn whole<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => integral_text(&n.to_string())
            .and_then(|t| t.parse::<u64>().ok())
            .and_then(|u| T::try_from(u).ok())
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("{n} is not a whole number in range"))),
        Some(other) => Err(D::Error::custom(format!(
            "invalid type: {other}, expected a whole number"
        ))),
    }
}

/// [`whole`] for a field whose `null` means "remove" (present: `Some`).
pub fn whole_present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    whole(d).map(Some)
}

/// A score: a JSON integer in the i64 range (`1.0` included), or a decimal string of one.
pub fn score(v: &Value) -> Result<i64, ApiError> {
    let text = match v {
        Value::Number(n) => {
            let text = n.to_string();
            let Some(whole) = integral_text(&text) else {
                return score_text(&text); // has a fraction: not an integer
            };
            return score_text(&whole).map_err(|e| ApiError {
                message: e.message.replace(&whole, &text),
                ..e
            });
        }
        Value::String(s) => s.clone(),
        other => {
            return Err(ApiError::new(
                ErrorCode::ScoreNotInteger,
                format!("score must be an integer or a decimal string, got {other}"),
            ))
        }
    };
    score_text(&text)
}

/// A score written as decimal text: an optional `-` and digits, in the i64 range.
pub fn score_text(text: &str) -> Result<i64, ApiError> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::new(
            ErrorCode::ScoreNotInteger,
            format!("score must be a whole number, got {text:?}"),
        ));
    }
    text.parse::<i64>().map_err(|_| {
        ApiError::new(
            ErrorCode::ScoreOutOfRange,
            format!(
                "score {text} is outside the 64-bit range {} to {}",
                i64::MIN,
                i64::MAX
            ),
        )
    })
}

/// The period a write names, if any: not together with an explicit `at` (docs/SPEC.md
/// §10; the id itself is checked against the board's calendar by the service).
pub fn write_period(
    period: Option<String>,
    at_us: Option<i64>,
) -> Result<Option<String>, ApiError> {
    match (period, at_us) {
        (Some(_), Some(_)) => Err(ApiError::new(
            ErrorCode::InvalidParameter,
            "a write names either a period or an at, not both",
        )),
        (period, _) => Ok(period),
    }
}

/// An operator name.
pub fn op(v: Option<&Value>) -> Result<Option<Op>, ApiError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Op::parse(s).map(Some).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidOp,
                format!("op must be incr, best or set, got {s:?}"),
            )
        }),
        Some(other) => Err(ApiError::new(
            ErrorCode::InvalidOp,
            format!("op must be incr, best or set, got {other}"),
        )),
    }
}

/// Metadata: a JSON object of at most 1 KiB serialized, returned serialized.
pub fn metadata(v: Option<&Value>) -> Result<Option<String>, ApiError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(obj @ Value::Object(_)) => {
            let s = obj.to_string();
            if s.len() > MAX_METADATA_BYTES {
                return Err(ApiError::new(
                    ErrorCode::MetadataTooLarge,
                    format!(
                        "metadata is {} bytes serialized, over the {MAX_METADATA_BYTES}-byte limit",
                        s.len()
                    ),
                ));
            }
            Ok(Some(s))
        }
        Some(other) => Err(ApiError::new(
            ErrorCode::InvalidMetadata,
            format!("metadata must be a JSON object, got {}", kind(other)),
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An explicit `at`: an RFC 3339 timestamp between 1970 and 9999, as µs since the epoch.
pub fn at(v: Option<&Value>) -> Result<Option<i64>, ApiError> {
    let s = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(ApiError::new(
                ErrorCode::InvalidTime,
                format!(
                    "at must be an RFC 3339 timestamp string, got {}",
                    kind(other)
                ),
            ))
        }
    };
    let ts: jiff::Timestamp = s.parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidTime,
            format!("at must be an RFC 3339 timestamp, got {s:?}"),
        )
    })?;
    let us = ts.as_microsecond();
    validate_instant(us)?;
    Ok(Some(us))
}

/// Formats µs since the epoch as RFC 3339 UTC with microseconds.
pub fn rfc3339_us(us: i64) -> String {
    match jiff::Timestamp::from_microsecond(us) {
        Ok(ts) => format!("{ts:.6}"),
        Err(_) => us.to_string(),
    }
}

#[cfg(test)]
mod integral_tests {
    use super::integral_text;

    #[test]
    fn json_integers_in_any_spelling() {
        for (text, want) in [
            ("5", Some("5")),
            ("-5", Some("-5")),
            ("1.0", Some("1")),
            ("-0.000", Some("0")),
            ("2E3", Some("2000")),
            ("25e-1", None),
            ("1.5", None),
            ("1234.5e1", Some("12345")),
            ("0.5e1", Some("5")),
            (
                "1e400",
                Some("99999999999999999999999999999999999999999999999999999999999999999"),
            ),
            ("007", Some("7")),
        ] {
            assert_eq!(integral_text(text).as_deref(), want, "{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores() {
        let ok = |j: &str| score(&serde_json::from_str(j).expect("json"));
        assert_eq!(ok("42").ok(), Some(42));
        assert_eq!(ok("1.0").ok(), Some(1), "JSON Schema's integer");
        assert_eq!(ok("-2E3").ok(), Some(-2000));
        assert_eq!(ok("-9223372036854775808").ok(), Some(i64::MIN));
        assert_eq!(ok("\"9223372036854775807\"").ok(), Some(i64::MAX));
        for (j, code) in [
            ("9223372036854775808", ErrorCode::ScoreOutOfRange),
            ("\"-9223372036854775809\"", ErrorCode::ScoreOutOfRange),
            ("1e400", ErrorCode::ScoreOutOfRange),
            ("1.5", ErrorCode::ScoreNotInteger),
            ("25e-1", ErrorCode::ScoreNotInteger),
            ("\"NaN\"", ErrorCode::ScoreNotInteger),
            ("\"\"", ErrorCode::ScoreNotInteger),
            ("\" 1\"", ErrorCode::ScoreNotInteger),
            ("true", ErrorCode::ScoreNotInteger),
            ("null", ErrorCode::ScoreNotInteger),
        ] {
            assert_eq!(ok(j).map_err(|e| e.code).err(), Some(code), "{j}");
        }
    }

    #[test]
    fn times_format_with_microseconds() {
        assert_eq!(
            rfc3339_us(1_795_305_600_000_001),
            "2026-11-22T00:00:00.000001Z"
        );
        assert_eq!(rfc3339_us(0), "1970-01-01T00:00:00.000000Z");
        let v = Value::String("2026-11-22T08:00:00.5+08:00".into());
        assert_eq!(at(Some(&v)).ok().flatten(), Some(1_795_305_600_500_000));
        assert!(at(Some(&Value::String("yesterday".into()))).is_err());
        assert!(at(Some(&Value::String("1969-12-31T23:59:59Z".into()))).is_err());
    }
}
