//! `/healthz`, `/readyz`, `/metrics`, `/openapi.json`, and the JSON answers for unknown routes and
//! methods.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;

use crate::app::AppState;
use crate::error::ApiError;
use crate::input::Auth;
use crate::wire::types::{Health, Ready};
use photofinish_core::ErrorCode;

/// Liveness: always 200 while the process serves; `degraded` while writes fail.
#[utoipa::path(get, path = "/healthz", tag = "ops", responses((status = 200, body = Health)))]
pub async fn healthz(State(app): State<AppState>) -> Json<Health> {
    let storage_error = app.gate.health().await;
    let status = if storage_error.is_some() {
        "degraded"
    } else {
        "ok"
    };
    Json(Health {
        status: status.into(),
        storage_error,
    })
}

/// Readiness: 200 only when this node can serve — the store loaded, and on Redis, Redis
/// answering with a clock within `--max-clock-skew` of this node's — 503 with the reasons
/// otherwise, and at once when a stop begins (docs/SPEC.md §18). Open to anyone, as
/// `/healthz` is; a league's close keeps it 200. (Its 503 is documented with the
/// document's other statuses, `openapi/fit.rs`.)
#[utoipa::path(get, path = "/readyz", tag = "ops", responses(
        (status = 200, body = Ready, description = "The node can serve")))]
pub async fn readyz(State(app): State<AppState>) -> (StatusCode, Json<Ready>) {
    let mut reasons = Vec::new();
    if app.stop.draining() {
        reasons.push("stopping: the server received a signal to stop".to_owned());
    }
    reasons.extend(app.gate.unready().await);
    let (code, status) = if reasons.is_empty() {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not_ready")
    };
    let ready = Ready {
        status: status.into(),
        reasons,
    };
    (code, Json(ready))
}

/// Prometheus metrics in the OpenMetrics text format.
#[utoipa::path(get, path = "/metrics", tag = "ops", responses(
        (status = 200, description = "OpenMetrics text", content_type = "application/openmetrics-text")))]
pub async fn metrics(
    State(app): State<AppState>,
    Auth(id): Auth,
) -> Result<impl IntoResponse, ApiError> {
    let figures = app.gate.figures(&id.caller).await?;
    let memory = app.gate.budget().map(|b| (b.estimate(), b.limit()));
    let body = app
        .metrics
        .render(figures.totals, figures.failing, memory, figures.log_counts);
    Ok((
        [(
            CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        body,
    ))
}

/// This API's OpenAPI 3 document.
#[utoipa::path(get, path = "/openapi.json", tag = "ops", responses((status = 200, description = "OpenAPI document", content_type = "application/json")))]
pub async fn openapi(State(app): State<AppState>) -> impl IntoResponse {
    ([(CONTENT_TYPE, "application/json")], app.openapi.clone())
}

/// Unknown route.
pub async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such route")
}

/// Known route, unknown method.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "method not allowed on this route",
    )
}
