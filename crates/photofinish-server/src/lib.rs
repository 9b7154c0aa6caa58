//! # Photofinish server
//!
//! HTTP API v1 (docs/SPEC.md §3) and the RESP door (§9) over the embedded store or Redis.
//!
//! # Layout
//! - [`routes`]: the handlers, one file per resource.
//! - [`input`]: request parsing and every input rule; the body and query extractors.
//! - [`dto`]: JSON shapes with their OpenAPI schemas; [`openapi`]: the document.
//! - [`error`]: [`ApiError`](error::ApiError) and the code/status table.
//! - [`auth`]: credentials → a caller (API keys from the keys file, players' JWTs);
//!   [`gate`]: the service behind the access rules, what every route calls; [`rate`]:
//!   rates as operators write them.
//! - [`app`]: shared state (the core's `Leaderboard` service, whichever backend it is) and
//!   view helpers; [`middleware`]: request id, logs, metrics.
//! - [`metrics`]: Prometheus metrics; [`limits`]: every size limit.
//! - [`listen`]: the accept loop, TLS, per-connection limits.
//! - [`resp`]: the Redis protocol door: framing, the `LB.*` commands, pipelined rounds.
//! - [`serve`]: open the store or connect to Redis (the one place that knows there are
//!   two), bind, serve, shut down gracefully.
//! - [`webhook`]: the period-close webhook dispatcher: a timer, signed posts, retries.

pub mod app;
pub mod auth;
pub mod conns;
pub mod error;
pub mod gate;
pub mod idempotency;
pub mod input;
pub mod limits;
pub mod listen;
pub mod metrics;
pub mod middleware;
pub mod openapi;
pub mod rate;
pub mod resp;
pub mod routes;
pub mod serve;
pub mod webhook;
pub mod wire;

use std::sync::Arc;

use axum::routing::{get, post, put};
use axum::Router;

use crate::app::{App, AppState};
use crate::routes::{
    admin, boards, console, entries, events, members, ops, queries, scores, transfer,
};

/// The router of every route, with the observing middleware.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/v1/boards", get(boards::list_boards))
        .route(
            "/v1/boards/{board}",
            put(boards::put_board)
                .get(boards::get_board)
                .patch(boards::patch_board)
                .delete(boards::delete_board),
        )
        .route("/v1/boards/{board}/periods", get(boards::list_periods))
        .route("/v1/boards/{board}/scores", post(scores::post_score))
        .route("/v1/boards/{board}/scores:batch", post(scores::post_batch))
        .route("/v1/boards/{board}/entries", get(entries::get_entries))
        .route(
            "/v1/boards/{board}/members/{member}",
            get(members::get_member).delete(members::delete_member),
        )
        .route(
            "/v1/boards/{board}/members/{member}/around",
            get(members::get_around),
        )
        .route(
            "/v1/boards/{board}/members:query",
            post(queries::post_members_query),
        )
        .route("/v1/boards/{board}/rank", get(queries::get_rank))
        .route(
            "/v1/boards/{board}/thresholds",
            get(queries::get_thresholds),
        )
        .route("/v1/members/{member}", get(queries::get_member_boards))
        .route("/v1/boards/{board}/events", get(events::get_events))
        .route("/v1/boards/{board}/export", get(transfer::get_export))
        .route("/v1/boards/{board}/import", post(transfer::post_import))
        .route("/", get(console::index))
        .route("/console.css", get(console::css))
        .route("/console.js", get(console::js))
        .route("/v1/admin/backup", get(admin::get_backup))
        .route("/healthz", get(ops::healthz))
        .route("/metrics", get(ops::metrics))
        .route("/openapi.json", get(ops::openapi))
        .route_layer(axum::middleware::from_fn_with_state(
            app.clone(),
            middleware::observe,
        ))
        .fallback(ops::not_found)
        .method_not_allowed_fallback(ops::method_not_allowed)
        .with_state::<()>(app as AppState)
}
