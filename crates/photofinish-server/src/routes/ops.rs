//! `/healthz`, `/metrics`, `/openapi.json`, and the JSON answers for unknown routes and
//! methods.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::Json;

use crate::app::AppState;
use crate::error::ApiError;
use crate::input::Auth;
use crate::wire::types::Health;
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
