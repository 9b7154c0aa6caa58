//! The doors' side of idempotent requests (docs/SPEC.md §7): the `Idempotency-Key` header
//! (1 to 255 printable ASCII characters, else 400 `invalid_idempotency_key`) and the
//! request's fingerprint — SHA-256 of the method, the path with its query and the body —
//! read by the extractors here (and a RESP command's, [`resp_fingerprint`]); the answer of a replay carries `Idempotent-Replayed: true`
//! ([`replayed`]). What a key means is the service's (`Leaderboard::keyed`); who may use
//! it, and the one-at-a-time rule per key, the gate's.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use axum::response::Response;
use photofinish_core::idempotency::validate_key;
use photofinish_core::ErrorCode;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::input::parse_json;

/// The request header naming a key.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// The answer header of a replay.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

use crate::gate::KeyedRequest;

fn fingerprint(method: &Method, uri: &Uri, body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(method.as_str());
    h.update([0]);
    h.update(uri.path_and_query().map_or(uri.path(), |p| p.as_str()));
    h.update([0]);
    h.update(body);
    h.finalize().into()
}

/// The fingerprint of a RESP command (docs/resp.md): SHA-256 of `RESP`, then each
/// argument, length-prefixed — the caller leaves the `IDEMPOTENCY` pair out and passes
/// the name upper-cased, so the same command spelled in another case is the same request.
pub fn resp_fingerprint<'a>(args: impl Iterator<Item = &'a [u8]>) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"RESP");
    for a in args {
        h.update((a.len() as u64).to_le_bytes());
        h.update(a);
    }
    h.finalize().into()
}

/// A checked `Idempotency-Key` (or RESP `IDEMPOTENCY`) value.
pub fn checked_key(key: &str) -> Result<(), ApiError> {
    validate_key(key).map_err(|m| ApiError::new(ErrorCode::InvalidIdempotencyKey, m))
}

/// The key the headers name, checked; `None` without one.
fn key_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(v) = headers.get(&IDEMPOTENCY_KEY) else {
        return Ok(None);
    };
    let key = v.to_str().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidIdempotencyKey,
            "Idempotency-Key must be printable ASCII",
        )
    })?;
    checked_key(key)?;
    Ok(Some(key.to_owned()))
}

/// A JSON body (at most [`crate::limits::MAX_BODY_BYTES`]) parsed into `T`, and the request's key.
pub struct KeyedJson<T>(pub T, pub Option<KeyedRequest>);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for KeyedJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        let (parts, body) = req.into_parts();
        let key = key_of(&parts.headers)?;
        let body = crate::input::read_body(&parts.headers, body).await?;
        let keyed = key.map(|key| KeyedRequest {
            fingerprint: fingerprint(&parts.method, &parts.uri, &body),
            key,
        });
        Ok(KeyedJson(parse_json(&body)?, keyed))
    }
}

/// The key of a request without a body (a member delete).
pub struct KeyHeader(pub Option<KeyedRequest>);

impl<S: Send + Sync> FromRequestParts<S> for KeyHeader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        Ok(KeyHeader(key_of(&parts.headers)?.map(|key| KeyedRequest {
            fingerprint: fingerprint(&parts.method, &parts.uri, b""),
            key,
        })))
    }
}

/// Marks `resp` as a replay when `replayed`.
pub fn replayed(mut resp: Response, replayed: bool) -> Response {
    if replayed {
        resp.headers_mut()
            .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    }
    resp
}
