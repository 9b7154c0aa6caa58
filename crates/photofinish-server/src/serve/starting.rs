//! What the HTTP door answers while the data loads (docs/SPEC.md §18): the listener is
//! bound first, so an orchestrator sees the node alive and not ready — `/healthz` 200,
//! `/readyz` 503 with the reason — and every other request is answered 503 at once with
//! `Retry-After` instead of waiting in the accept queue. Every answer closes its
//! connection, so clients come back to the server proper once it is loaded. (The RESP
//! door opens when the data is loaded.)

use axum::http::header::{CONNECTION, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use crate::error::ApiError;
use crate::wire::types::{Health, Ready};
use photofinish_core::ErrorCode;

/// The one reason `/readyz` gives while loading.
pub const LOADING: &str = "loading: the store is still being loaded";

/// The router served while the data loads.
pub fn router() -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .fallback(starting)
}

fn closing(mut resp: Response) -> Response {
    resp.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    resp
}

async fn healthz() -> Response {
    closing(
        Json(Health {
            status: "ok".into(),
            storage_error: None,
        })
        .into_response(),
    )
}

async fn readyz() -> Response {
    let ready = Ready {
        status: "not_ready".into(),
        reasons: vec![LOADING.into()],
    };
    closing((StatusCode::SERVICE_UNAVAILABLE, Json(ready)).into_response())
}

async fn starting() -> Response {
    let mut resp = ApiError::new(
        ErrorCode::StorageUnavailable,
        "the server is starting: its data is still being loaded; retry shortly",
    )
    .into_response();
    resp.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    closing(resp)
}
