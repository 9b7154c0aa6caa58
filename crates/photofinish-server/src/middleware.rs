//! Per-request bookkeeping: a request id (taken from `x-request-id` when the client sends a
//! sane one, else minted), the metrics, the id echoed back, and logs that carry the id;
//! and the graceful stop's answers ([`stop_guard`], run inside [`observe`]).
//!
//! Logging is cheap on purpose, since it runs on every request: at the default `info` level
//! only a failed request (5xx) writes a line, unless the server was started with
//! `--access-log`, which writes one for every request at `info` with the same fields — at `warn`, with its id, method, route,
//! status and latency. Under `RUST_LOG=debug` each request also gets a `request` span with
//! those fields (so anything logged while serving it carries the id) and a "request done"
//! line. An `info`-level span per request cost about 2 µs of CPU a request — over 10% of a
//! score submission (docs/bench-history.md §2).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tracing::Instrument;

use crate::app::AppState;
use crate::metrics::{RequestLabels, RouteLabels};
use photofinish_core::ErrorCode;

/// Longest client-supplied request id kept; longer ones are replaced.
const MAX_REQUEST_ID_BYTES: usize = 64;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The process id in hex, the first half of a minted request id (read once: `getpid` is a
/// system call).
fn pid_hex() -> &'static str {
    static PID: OnceLock<String> = OnceLock::new();
    PID.get_or_init(|| format!("{:x}", std::process::id()))
}

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
        _ => format!("{}-{}", pid_hex(), NEXT_ID.fetch_add(1, Ordering::Relaxed)),
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
    let span = tracing::debug_span!("request", request_id = %id, method = %method, route = %route);
    let start = Instant::now();
    let mut resp = stop_guard(&app, next.run(req))
        .instrument(span.clone())
        .await;
    let elapsed = start.elapsed();
    let status = resp.status().as_u16();
    let latency_us = elapsed.as_micros() as u64;
    if resp.status().is_server_error() {
        tracing::warn!(request_id = %id, %method, %route, status, latency_us, "request failed");
    } else if app.access_log {
        tracing::info!(request_id = %id, %method, %route, status, latency_us, "request");
    } else {
        span.in_scope(|| tracing::debug!(status, latency_us, "request done"));
    }
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
    if let Some(code) = resp
        .extensions()
        .get::<ErrorCode>()
        .filter(|c| c.is_refusal())
    {
        app.metrics.refused(code.as_str());
    }
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert("x-request-id", v);
    }
    resp
}

/// The graceful stop's part of every request ([`crate::stop`]): a request still running
/// when the grace is over is answered 503 `shutting_down`; every answer once the stop
/// began says `Connection: close`. Part of [`observe`] rather than a layer of its own: a
/// layer costs every request a boxed future and a cloned service (docs/bench-history.md
/// §35), and the answer it makes is one `observe` counts and logs like any other.
async fn stop_guard(app: &AppState, request: impl Future<Output = Response>) -> Response {
    let expired = app.stop.expired();
    let mut resp = tokio::select! {
        biased;
        resp = request => resp,
        () = crate::stop::until(expired) => crate::stop::shutting_down().into_response(),
    };
    if app.stop.draining() {
        resp.headers_mut().insert(
            axum::http::header::CONNECTION,
            HeaderValue::from_static("close"),
        );
    }
    resp
}
