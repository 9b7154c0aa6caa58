//! # Photofinish server
//!
//! HTTP API v1 (docs/SPEC.md §3) and the RESP door (§9) over the embedded store or Redis.
//!
//! # Layout
//! - [`routes`]: the handlers, one file per resource; [`api`] registers each once.
//! - [`input`]: HTTP's extractors (body, query, path, caller).
//! - [`wire`]: what the doors share: JSON shapes with their OpenAPI schemas, answers built
//!   from the service's views, every text rule; [`openapi`]: the document.
//! - [`error`]: [`ApiError`](error::ApiError) and the code/status table.
//! - [`auth`]: credentials → a caller (API keys from the keys file, players' JWTs);
//!   [`gate`]: the service behind the access rules, what every route calls; [`rate`]:
//!   rates as operators write them.
//! - [`app`]: shared state (the gate over the core's `Leaderboard` service, whichever
//!   backend it is); [`middleware`]: request id, logs, metrics.
//! - [`metrics`]: Prometheus metrics; [`limits`]: every size limit.
//! - [`listen`]: the accept loop, TLS, per-connection limits.
//! - [`resp`]: the Redis protocol door: framing, the `LB.*` commands, pipelined rounds.
//! - [`serve`]: open the store or connect to Redis (the one place that knows there are
//!   two), bind, serve, shut down gracefully.
//! - [`stop`]: the graceful stop: not ready, then closed to new connections, then 503 for
//!   what still runs.
//! - [`webhook`]: the period-close webhook dispatcher: a timer, signed posts, retries.

pub(crate) mod app;
pub mod auth;
pub(crate) mod closer;
pub(crate) mod conns;
pub(crate) mod error;
pub(crate) mod gate;
pub(crate) mod idempotency;
pub(crate) mod input;
pub mod ledger;
pub(crate) mod limits;
pub mod listen;
pub(crate) mod metrics;
pub(crate) mod middleware;
pub(crate) mod openapi;
pub mod rate;
pub(crate) mod resp;
pub(crate) mod routes;
pub mod serve;
pub mod stop;
pub mod webhook;
pub mod wire;

use std::sync::Arc;

use axum::routing::get;
use axum::Router;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::{App, AppState};
use crate::routes::{
    admin, boards, cohorts, console, entries, events, leagues, members, moderation, ops,
    partitions, privacy, queries, rewards, scores, teams, transfer,
};

/// Every API route, each registered once: axum routes it by its handler's
/// `#[utoipa::path]`, and the same annotation is its operation in the OpenAPI document
/// ([`openapi::document`]). In the document's order.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(
            boards::put_board,
            boards::get_board,
            boards::patch_board,
            boards::delete_board
        ))
        .routes(routes!(boards::list_boards))
        .routes(routes!(boards::list_periods))
        .routes(routes!(scores::post_score))
        .routes(routes!(scores::post_batch))
        .routes(routes!(members::get_member, members::delete_member))
        .routes(routes!(entries::get_entries))
        .routes(routes!(members::get_around))
        .routes(routes!(members::post_join))
        .routes(routes!(cohorts::get_member_cohort))
        .routes(routes!(cohorts::get_cohorts))
        .routes(routes!(partitions::get_partitions))
        .routes(routes!(teams::get_teams))
        .routes(routes!(teams::get_team))
        .routes(routes!(cohorts::get_cohort_entries))
        .routes(routes!(leagues::get_moves))
        .routes(routes!(leagues::get_member_tier))
        .routes(routes!(moderation::post_hide))
        .routes(routes!(moderation::post_unhide))
        .routes(routes!(moderation::get_hidden))
        .routes(routes!(moderation::post_hide_everywhere))
        .routes(routes!(moderation::post_unhide_everywhere))
        .routes(routes!(moderation::get_audit))
        .routes(routes!(queries::post_members_query))
        .routes(routes!(queries::get_rank))
        .routes(routes!(queries::get_thresholds))
        .routes(routes!(queries::get_member_boards))
        .routes(routes!(rewards::get_period_rewards))
        .routes(routes!(rewards::get_member_rewards))
        .routes(routes!(rewards::post_claim))
        .routes(routes!(privacy::get_member_export))
        .routes(routes!(privacy::delete_member))
        .routes(routes!(events::get_events))
        .routes(routes!(transfer::get_export))
        .routes(routes!(transfer::post_import))
        .routes(routes!(admin::get_backup))
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::readyz))
        .routes(routes!(ops::metrics))
        .routes(routes!(ops::openapi))
}

/// The router of every route, with the observing middleware.
pub fn router(app: Arc<App>) -> Router {
    let (api, _) = api().split_for_parts();
    Router::new()
        .merge(api)
        .route("/", get(console::index))
        .route("/console.css", get(console::css))
        .route("/console.js", get(console::js))
        .route_layer(axum::middleware::from_fn_with_state(
            app.clone(),
            middleware::observe,
        ))
        .fallback(ops::not_found)
        .method_not_allowed_fallback(ops::method_not_allowed)
        .with_state::<()>(app as AppState)
}
