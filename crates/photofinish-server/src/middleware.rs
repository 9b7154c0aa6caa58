//! Per-request bookkeeping: a request id (taken from `x-request-id` when the client sends a
//! sane one, else minted), a tracing span carrying it, the metrics, and the id echoed back.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

use crate::app::AppState;
use crate::metrics::{RequestLabels, RouteLabels};

/// Longest client-supplied request id kept; longer ones are replaced.
const MAX_REQUEST_ID_BYTES: usize = 64;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn request_id(req: &Request) -> String {
    let given = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok());
    match given {
        Some(id)
            if !id.is_empty()
                && id.len() <= MAX_REQUEST_ID_BYTES
                && id.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            id.to_owned()
        }
        _ => format!(
            "{:x}-{}",
            std::process::id(),
            NEXT_ID.fetch_add(1, Ordering::Relaxed)
        ),
    }
}

/// The middleware: see the module docs.
pub async fn observe(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = req.method().as_str().to_owned();
    let id = request_id(&req);
    let span = tracing::info_span!("request", request_id = %id, method = %method, route = %route);
    let start = Instant::now();
    let mut resp = next.run(req).instrument(span.clone()).await;
    let elapsed = start.elapsed();
    let status = resp.status().as_u16();
    span.in_scope(|| {
        tracing::debug!(
            status,
            latency_us = elapsed.as_micros() as u64,
            "request done"
        )
    });
    app.metrics
        .requests
        .get_or_create(&RequestLabels {
            route: route.clone(),
            method,
            status,
        })
        .inc();
    app.metrics
        .latency
        .get_or_create(&RouteLabels { route })
        .observe(elapsed.as_secs_f64());
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert("x-request-id", v);
    }
    resp
}
