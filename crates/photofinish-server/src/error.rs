//! The API's errors and the one table from each stable code ([`ErrorCode`], defined with
//! its wire name in the core) to an HTTP status. Every handler returns [`ApiError`];
//! nothing else writes an error body, so the shape `{"error":{"code","message"}}` holds for
//! every failure, including a malformed body, a bad query string, an unknown route and a
//! full disk. Errors of the service ([`BoardError`]) carry their own code and message.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use photofinish_core::error::Refuses;
use photofinish_core::{BoardError, ErrorCode};
use serde::Serialize;
use utoipa::ToSchema;

/// The HTTP status of each error code: the table.
pub fn status(code: ErrorCode) -> StatusCode {
    use ErrorCode as C;
    use StatusCode as S;
    match code {
        C::MalformedJson
        | C::InvalidParameter
        | C::InvalidBoardName
        | C::InvalidPeriod
        | C::InvalidConfig
        | C::InvalidScore
        | C::InvalidIdempotencyKey => S::BAD_REQUEST,
        C::NotFound
        | C::BoardNotFound
        | C::MemberNotFound
        | C::PeriodNotFound
        | C::RewardNotFound
        | C::TeamNotFound => S::NOT_FOUND,
        C::MethodNotAllowed => S::METHOD_NOT_ALLOWED,
        C::BoardConfigConflict
        | C::IdempotencyKeyInFlight
        | C::BoardNotEmpty
        | C::CohortPending
        | C::AlreadyClaimed
        | C::PartitionConflict
        | C::TeamConflict => S::CONFLICT,
        C::BodyTooLarge | C::BatchTooLarge => S::PAYLOAD_TOO_LARGE,
        C::InvalidMember
        | C::PeriodClosed
        | C::ScoreNotInteger
        | C::ScoreOutOfRange
        | C::ScoreOverflow
        | C::InvalidOp
        | C::InvalidMetadata
        | C::MetadataTooLarge
        | C::InvalidTime
        | C::PeriodNotRetained
        | C::RankingFull
        | C::ScoreRejected
        | C::BoardFull
        | C::TooManyHidden
        | C::BoardClosed
        | C::AttemptsExhausted
        | C::NotJoined
        | C::TooManyBoards
        | C::RewardExpired
        | C::TooManyPartitions
        | C::TeamFull
        | C::IdempotencyKeyReused => S::UNPROCESSABLE_ENTITY,
        C::InsufficientStorage => S::INSUFFICIENT_STORAGE,
        C::RateLimited => S::TOO_MANY_REQUESTS,
        C::StorageUnavailable | C::Overloaded | C::ShuttingDown | C::TooManyStreams => {
            S::SERVICE_UNAVAILABLE
        }
        C::Unauthorized => S::UNAUTHORIZED,
        C::Forbidden => S::FORBIDDEN,
        C::InvalidEntries => S::UNPROCESSABLE_ENTITY,
        C::NotSupported => S::NOT_IMPLEMENTED,
    }
}

/// The status the API document lists `code` under for an operation that may be refused
/// with it ([`Refuses`]): its own, but 422 for a code that is 400 only when the request
/// is malformed — an operation lists it for the rule it breaks (docs/SPEC.md §3), and
/// the malformed case is every request's 400.
fn documented_status(code: ErrorCode) -> StatusCode {
    use ErrorCode as C;
    match code {
        C::InvalidParameter | C::InvalidConfig | C::InvalidPeriod | C::InvalidScore => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        other => status(other),
    }
}

/// An error answer in the API document: `description`, with the error body.
pub fn error_response(description: &str) -> utoipa::openapi::Response {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .build()
}

/// How the API document begins the description of an operation's refusals.
pub const REFUSED: &str = "Refused; nothing changed. ";

/// A refusal as the API document lists it: its code and what it means.
pub fn refusal_line(code: ErrorCode) -> String {
    format!("`{}`: {}", code.as_str(), code.meaning())
}

/// The refusals of operation `T` as the API document lists them: its codes
/// ([`Refuses::REFUSALS`]) under their statuses, each with what it means. A route names
/// its operation's in its `responses(…)`; the refusals every request may meet (400, the
/// access refusals, 503) the document adds to every route.
pub struct Refusals<T>(std::marker::PhantomData<T>);

impl<T: Refuses> utoipa::IntoResponses for Refusals<T> {
    fn responses() -> std::collections::BTreeMap<
        String,
        utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
    > {
        let mut by_status = std::collections::BTreeMap::<u16, Vec<ErrorCode>>::new();
        for code in T::REFUSALS {
            by_status
                .entry(documented_status(*code).as_u16())
                .or_default()
                .push(*code);
        }
        by_status
            .into_iter()
            .map(|(status, codes)| {
                let each: Vec<String> = codes.iter().map(|c| refusal_line(*c)).collect();
                let description = format!("{REFUSED}{}", each.join("; "));
                (status.to_string(), error_response(&description).into())
            })
            .collect()
    }
}

/// An error answer: a code from the table and a human sentence.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The code.
    pub code: ErrorCode,
    /// The message: lowercase, no trailing period, with the offending value.
    pub message: String,
    /// Whole seconds after which a rate-limited request would pass (`Retry-After`).
    pub retry_after_s: Option<u64>,
    /// The status when it is not the code's own: 422 for a rule the document cannot
    /// state, under a code that also names malformed input (docs/SPEC.md §3: a well-formed
    /// period the board does not have is 422 `invalid_period`, a malformed id 400).
    pub status: Option<StatusCode>,
    /// The grant an `already_claimed` refusal carries (docs/SPEC.md §16), in its wire
    /// shape (a `GrantView`: the claim's route puts it there).
    pub grant: Option<Box<serde_json::Value>>,
}

impl ApiError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retry_after_s: None,
            status: None,
            grant: None,
        }
    }

    /// A refusal by a rule the OpenAPI document allows but cannot state (one of two
    /// parameters required, two fields that exclude each other, an instant an offset
    /// moves out of range): 422 under `code` (docs/SPEC.md §3).
    pub fn rule(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status: Some(StatusCode::UNPROCESSABLE_ENTITY),
            ..Self::new(code, message)
        }
    }
}

/// The error body.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// The error's code and message.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable `snake_case` code, e.g. `score_overflow`.
    pub code: String,
    /// A human sentence.
    pub message: String,
    /// On `already_claimed`: the grant, as it was claimed (docs/SPEC.md §16; its schema
    /// is `GrantView`'s).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub grant: Option<serde_json::Value>,
}

impl ApiError {
    /// The JSON body of this error.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code.as_str().to_owned(),
                message: self.message.clone(),
                grant: self.grant.as_deref().cloned(),
            },
        }
    }
}

/// The `WWW-Authenticate` header of every 401 (and the OpenAPI document's statement of it).
pub const WWW_AUTHENTICATE: &str = "Bearer realm=\"photofinish\"";

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status.unwrap_or_else(|| status(self.code));
        let mut resp = (status, Json(self.body())).into_response();
        // The middleware counts refusals by code.
        resp.extensions_mut().insert(self.code);
        if self.code == ErrorCode::Unauthorized {
            resp.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static(WWW_AUTHENTICATE),
            );
        }
        if let Some(s) = self.retry_after_s {
            resp.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, s.into());
        }
        if matches!(self.code, ErrorCode::BodyTooLarge) {
            // The rest of the body was never read, so this connection cannot carry another
            // request: say so, or a client would reuse it and fail writing its next one.
            resp.headers_mut().insert(
                axum::http::header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
        }
        resp
    }
}

impl From<BoardError> for ApiError {
    fn from(e: BoardError) -> Self {
        let retry_after_s = match &e {
            BoardError::RateLimited { retry_after_s, .. } => Some(*retry_after_s),
            _ => None,
        };
        let status = e.is_rule().then_some(StatusCode::UNPROCESSABLE_ENTITY);
        ApiError {
            retry_after_s,
            status,
            ..ApiError::new(e.code(), e.to_string())
        }
    }
}
