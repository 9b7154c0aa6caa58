//! The API's errors and the one table that maps each to a stable `snake_case` code and an
//! HTTP status. Every handler returns [`ApiError`]; nothing else writes an error body, so
//! the shape `{"error":{"code","message"}}` holds for every failure, including a malformed
//! body, a bad query string, an unknown route and a full disk.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use photofinish_core::CoreError;
use photofinish_store::{ApplyError, SubmitError};
use serde::Serialize;
use utoipa::ToSchema;

/// Every error code the API answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// 400: the body is not JSON, or not the expected shape.
    MalformedJson,
    /// 400: a query parameter is missing its rules (negative offset, unknown ranking, …).
    InvalidParameter,
    /// 400: a board name outside `[A-Za-z0-9_.-]{1,64}`.
    InvalidBoardName,
    /// 400: a malformed period id.
    InvalidPeriod,
    /// 404: no such route.
    NotFound,
    /// 404: no such board.
    BoardNotFound,
    /// 404: no such member.
    MemberNotFound,
    /// 404: no ranking for that period.
    PeriodNotFound,
    /// 405: the route exists, the method does not.
    MethodNotAllowed,
    /// 409: the board exists with another config.
    BoardConfigConflict,
    /// 413: the body is over the limit.
    BodyTooLarge,
    /// 413: a batch over the entry limit.
    BatchTooLarge,
    /// 422: a member name that breaks the rules.
    InvalidMember,
    /// 422: a score that is not an integer.
    ScoreNotInteger,
    /// 422: an integer score outside i64 (outside ±(2^53 − 1) on the Redis backend).
    ScoreOutOfRange,
    /// 422: `incr` would leave i64 (±(2^53 − 1) on the Redis backend).
    ScoreOverflow,
    /// 422: an unknown operator.
    InvalidOp,
    /// 422: metadata that is not a JSON object.
    InvalidMetadata,
    /// 422: metadata over 1 KiB.
    MetadataTooLarge,
    /// 422: a config field with a value it does not take (unknown time zone, …).
    InvalidConfig,
    /// 422: an `at` that is not RFC 3339 or outside the supported range.
    InvalidTime,
    /// 422: a write into a period older than the board retains.
    PeriodNotRetained,
    /// 422: a ranking that cannot take more.
    RankingFull,
    /// 503: the storage (the log, or Redis) cannot be written or reached; nothing changed.
    StorageUnavailable,
    /// 503: too many writes queued.
    Overloaded,
    /// 503: the server is shutting down.
    ShuttingDown,
}

impl Code {
    /// The wire code and status of each error: the table.
    pub fn parts(self) -> (&'static str, StatusCode) {
        use StatusCode as S;
        match self {
            Code::MalformedJson => ("malformed_json", S::BAD_REQUEST),
            Code::InvalidParameter => ("invalid_parameter", S::BAD_REQUEST),
            Code::InvalidBoardName => ("invalid_board_name", S::BAD_REQUEST),
            Code::InvalidPeriod => ("invalid_period", S::BAD_REQUEST),
            Code::NotFound => ("not_found", S::NOT_FOUND),
            Code::BoardNotFound => ("board_not_found", S::NOT_FOUND),
            Code::MemberNotFound => ("member_not_found", S::NOT_FOUND),
            Code::PeriodNotFound => ("period_not_found", S::NOT_FOUND),
            Code::MethodNotAllowed => ("method_not_allowed", S::METHOD_NOT_ALLOWED),
            Code::BoardConfigConflict => ("board_config_conflict", S::CONFLICT),
            Code::BodyTooLarge => ("body_too_large", S::PAYLOAD_TOO_LARGE),
            Code::BatchTooLarge => ("batch_too_large", S::PAYLOAD_TOO_LARGE),
            Code::InvalidMember => ("invalid_member", S::UNPROCESSABLE_ENTITY),
            Code::ScoreNotInteger => ("score_not_integer", S::UNPROCESSABLE_ENTITY),
            Code::ScoreOutOfRange => ("score_out_of_range", S::UNPROCESSABLE_ENTITY),
            Code::ScoreOverflow => ("score_overflow", S::UNPROCESSABLE_ENTITY),
            Code::InvalidOp => ("invalid_op", S::UNPROCESSABLE_ENTITY),
            Code::InvalidMetadata => ("invalid_metadata", S::UNPROCESSABLE_ENTITY),
            Code::MetadataTooLarge => ("metadata_too_large", S::UNPROCESSABLE_ENTITY),
            Code::InvalidConfig => ("invalid_config", S::UNPROCESSABLE_ENTITY),
            Code::InvalidTime => ("invalid_time", S::UNPROCESSABLE_ENTITY),
            Code::PeriodNotRetained => ("period_not_retained", S::UNPROCESSABLE_ENTITY),
            Code::RankingFull => ("ranking_full", S::UNPROCESSABLE_ENTITY),
            Code::StorageUnavailable => ("storage_unavailable", S::SERVICE_UNAVAILABLE),
            Code::Overloaded => ("overloaded", S::SERVICE_UNAVAILABLE),
            Code::ShuttingDown => ("shutting_down", S::SERVICE_UNAVAILABLE),
        }
    }
}

/// An error answer: a code from the table and a human sentence.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The code.
    pub code: Code,
    /// The message: lowercase, no trailing period, with the offending value.
    pub message: String,
}

impl ApiError {
    /// An error with `code` and `message`.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
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
}

impl ApiError {
    /// The JSON body of this error.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code.parts().0.to_owned(),
                message: self.message.clone(),
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.code.parts().1;
        let mut resp = (status, Json(self.body())).into_response();
        if matches!(self.code, Code::BodyTooLarge) {
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

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        let code = match &e {
            CoreError::InvalidBoardName(_) => Code::InvalidBoardName,
            CoreError::InvalidMemberName(_) => Code::InvalidMember,
            CoreError::InvalidConfig(_) => Code::InvalidConfig,
            CoreError::ScoreOverflow { .. } => Code::ScoreOverflow,
            CoreError::TimeOutOfRange(_) => Code::InvalidTime,
            CoreError::RankingFull(_) => Code::RankingFull,
            CoreError::MetadataTooLarge(_) => Code::MetadataTooLarge,
            CoreError::PeriodNotRetained(_) => Code::PeriodNotRetained,
            CoreError::MalformedPeriod(_) => Code::InvalidPeriod,
        };
        ApiError::new(code, e.to_string())
    }
}

impl From<ApplyError> for ApiError {
    fn from(e: ApplyError) -> Self {
        match e {
            ApplyError::BoardNotFound(b) => {
                ApiError::new(Code::BoardNotFound, format!("board {b:?} does not exist"))
            }
            ApplyError::ConfigConflict { board, existing } => ApiError::new(
                Code::BoardConfigConflict,
                format!(
                    "board {board:?} exists with a different config: {}",
                    serde_json::to_string(&*existing).unwrap_or_default()
                ),
            ),
            ApplyError::MemberNotFound { .. } => ApiError::new(Code::MemberNotFound, e.to_string()),
            ApplyError::Core(c) => c.into(),
        }
    }
}

impl From<SubmitError> for ApiError {
    fn from(e: SubmitError) -> Self {
        let code = match e {
            SubmitError::Unavailable(_) => Code::StorageUnavailable,
            SubmitError::Overloaded => Code::Overloaded,
            SubmitError::ShuttingDown => Code::ShuttingDown,
        };
        ApiError::new(code, e.to_string())
    }
}
