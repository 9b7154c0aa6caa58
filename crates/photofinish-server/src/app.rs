//! The shared application state — the service behind every route, and the metrics — and
//! the helpers that turn the service's neutral answers into API views.

use photofinish_core::access::Caller;
use std::sync::Arc;

use photofinish_core::ranking::Entry;
use photofinish_core::view::{BoardState, Rows};
use serde_json::value::RawValue;

use crate::auth::Authenticator;
use crate::dto::{BoardView, EntriesPage, EntryView};
use crate::gate::Gate;
use crate::input::rfc3339_us;
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
    /// Turns `true` when the server stops: event streams end.
    pub closing: tokio::sync::watch::Receiver<bool>,
}

/// The state axum hands to handlers.
pub type AppState = Arc<App>;

/// The API view of a board, as `caller` may see it: the webhook's URL only to whoever
/// may manage the board (it may name hosts inside the studio's network).
pub fn board_view(b: BoardState, caller: &Caller) -> BoardView {
    let c = b.config;
    let webhook_top = c.settings.webhook_top();
    let webhook = c
        .settings
        .webhook
        .filter(|_| photofinish_core::access::may_manage(caller, &b.name));
    BoardView {
        name: b.name,
        order: c.order.as_str().into(),
        update: c.update.as_str().into(),
        reset: c.reset.as_str().into(),
        timezone: c.timezone,
        week_start: c.week_start.as_str().into(),
        retention: c.retention,
        public_read: c.settings.public_read,
        player_writes: c.settings.player_writes,
        min_score: c.settings.rules.min_score,
        max_score: c.settings.rules.max_score,
        max_increment: c.settings.rules.max_increment,
        max_members: c.settings.rules.max_members,
        grace: c.settings.grace,
        webhook_top,
        webhook,
        members: b.members,
        next_reset_at: (b.current.end_us != i64::MAX).then(|| rfc3339_us(b.current.end_us)),
        period: b.current.id,
    }
}

/// Stored metadata (always a serialized JSON object) as raw JSON.
pub fn raw_metadata(m: Option<String>) -> Option<Box<RawValue>> {
    m.and_then(|s| RawValue::from_string(s).ok())
}

/// The API view of a ranked entry.
pub fn entry_view(e: Entry) -> EntryView {
    EntryView {
        rank: e.rank,
        member: e.member,
        score: e.score,
        reached_at: rfc3339_us(e.reached_at_us),
        metadata: raw_metadata(e.metadata),
    }
}

/// The API view of a page of rows.
pub fn page_view(rows: Rows) -> EntriesPage {
    EntriesPage {
        total: rows.total,
        period: rows.period.id,
        entries: rows.entries.into_iter().map(entry_view).collect(),
    }
}
