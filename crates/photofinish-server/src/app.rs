//! The shared application state: the gate over the service behind every route and RESP
//! command, the credentials and rate limits, the metrics, the OpenAPI document and the
//! event streams' permits. (The answers' wire views are `wire::views`.)

use std::sync::Arc;

use crate::auth::Authenticator;
use crate::gate::Gate;
use crate::metrics::Metrics;

/// Everything a handler needs.
pub struct App {
    /// The service behind the access rules: the embedded store or Redis, chosen at
    /// start-up; routes never ask which.
    pub gate: Gate,
    /// Who a request is.
    pub auth: Arc<Authenticator>,
    /// The rate limits, on a server with credentials (an open server has none).
    pub limiter: Option<Arc<crate::rate::Limiter>>,
    /// The OpenAPI document as this server is configured, rendered once.
    pub openapi: String,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// Event streams that may open (docs/SPEC.md §8): one permit each.
    pub streams: Arc<tokio::sync::Semaphore>,
    /// The number of permits `streams` started with.
    pub streams_limit: usize,
    /// Turns `true` when the listeners close in a stop: event streams end, RESP
    /// connections close ([`crate::stop`]).
    pub closing: tokio::sync::watch::Receiver<bool>,
    /// Where the server is in its stop: `/readyz`, `Connection: close`, the 503s.
    pub stop: Arc<crate::stop::Stop>,
    /// Every request is logged at `info`, not only the failed ones.
    pub access_log: bool,
}

/// The state axum hands to handlers.
pub type AppState = Arc<App>;
