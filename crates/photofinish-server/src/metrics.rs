//! Prometheus metrics: requests by route, method and status; RESP commands by command and
//! outcome; refusals by reason (either door); request latency by route;
//! boards and members (counted at scrape time); log fsync latency; whether writes fail;
//! period-close webhook posts by outcome and the periods awaiting one; on the Redis log
//! layout, how reads were answered (from the node's copy or after catching up) and the
//! staleness of the local ones.

use std::time::Duration;

use photofinish_core::view::{LogNodeCounts, Totals};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// Labels of a request counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// Route template, e.g. `/v1/boards/{board}/scores`.
    pub route: String,
    /// HTTP method.
    pub method: String,
    /// Status code.
    pub status: u16,
}

/// The refusal reason of a connection closed at the cap (the others are error codes).
pub const CONNECTION_CAP: &str = "connection_cap";

/// Labels of the refusal counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RefusalLabels {
    /// The error code, e.g. `unauthorized`.
    pub reason: String,
}

/// Labels of the RESP command counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RespLabels {
    /// The command, lower case (`lb.incr`, `ping`, `unknown`).
    pub command: String,
    /// `ok` or `error`.
    pub outcome: String,
}

/// Labels of the Redis log layout's read counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReadLabels {
    /// `local` (from what the node had applied, `--redis-reads local`) or `caught_up`
    /// (after reading the log's head).
    pub answered: String,
}

/// Labels of the Redis log layout's snapshot counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SnapshotLabels {
    /// `published`, `lease_lost` (the lease ran out before the publish: another node may
    /// hold it), `stale` (the log no longer held its entry, or a chunk was gone),
    /// `skipped` (another node held the lease or had just published) or `failed` (a Redis
    /// error; nothing was published).
    pub outcome: String,
}

/// Labels of the webhook post counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookLabels {
    /// `delivered` (a 2xx), `failed` (an attempt that will be retried) or `abandoned`
    /// (given up after a day, or the period left the board's retention).
    pub outcome: String,
}

/// Labels of a latency histogram.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    /// Route template.
    pub route: String,
}

fn latency_buckets() -> Histogram {
    // 50 µs to ~1.6 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

/// The registry and every metric in it.
pub struct Metrics {
    registry: Registry,
    /// Requests by route, method, status.
    pub requests: Family<RequestLabels, Counter>,
    /// Request latency by route.
    pub latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    /// Log fsync latency.
    pub fsync: Histogram,
    /// Requests refused, by reason (the error code).
    pub refusals: Family<RefusalLabels, Counter>,
    /// RESP commands by command and outcome.
    pub resp_commands: Family<RespLabels, Counter>,
    /// Period-close webhook posts by outcome.
    pub webhook_posts: Family<WebhookLabels, Counter>,
    webhook_pending: Gauge,
    boards: Gauge,
    members: Gauge,
    write_failing: Gauge,
    memory_estimate: Gauge,
    memory_limit: Gauge,
    redis_reads: Family<ReadLabels, Counter>,
    redis_read_staleness: Gauge<f64, std::sync::atomic::AtomicU64>,
    redis_snapshots: Family<SnapshotLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// `metric` registered under `name` with `help`; the handle to update it.
fn register<M: prometheus_client::registry::Metric + Clone>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    metric: M,
) -> M {
    registry.register(name, help, metric.clone());
    metric
}

/// A gauge registered under `name` with `help`.
fn gauge(registry: &mut Registry, name: &str, help: &str) -> Gauge {
    register(registry, name, help, Gauge::default())
}

/// A family of counters by labels `L`, registered under `name` with `help`.
fn counters<L>(registry: &mut Registry, name: &str, help: &str) -> Family<L, Counter>
where
    L: prometheus_client::encoding::EncodeLabelSet
        + Clone
        + std::hash::Hash
        + Eq
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    register(registry, name, help, Family::<L, Counter>::default())
}

impl Metrics {
    /// All metrics, registered.
    pub fn new() -> Self {
        let mut r = Registry::with_prefix("photofinish");
        let latency_family =
            Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
                latency_buckets as fn() -> Histogram,
            );
        Self {
            requests: counters::<RequestLabels>(&mut r, "http_requests", "HTTP requests by route, method and status"),
            latency: register(
                &mut r,
                "http_request_duration_seconds",
                "HTTP request latency by route",
                latency_family,
            ),
            fsync: register(
                &mut r,
                "log_fsync_duration_seconds",
                "Write-ahead log fsync latency",
                Histogram::new(exponential_buckets(0.000_01, 2.0, 18)),
            ),
            refusals: counters::<RefusalLabels>(&mut r, "refusals", "Requests refused, by reason: unauthorized, forbidden, …"),
            resp_commands: counters::<RespLabels>(&mut r, "resp_commands", "RESP commands by command and outcome (ok, error)"),
            webhook_posts: counters::<WebhookLabels>(&mut r, "webhook_posts", "Period-close webhook attempts by outcome (delivered, failed, abandoned)"),
            webhook_pending: gauge(&mut r, "webhook_pending", "Periods closed whose webhook post has not had a 2xx yet"),
            boards: gauge(&mut r, "boards", "Boards"),
            members: gauge(&mut r, "members", "Members over all boards and retained periods"),
            write_failing: gauge(&mut r, "storage_write_failing", "1 while the log cannot be written"),
            memory_estimate: gauge(&mut r, "memory_estimate_bytes", "The data's estimated size, sampled each second (embedded: rankings and metadata; Redis: used_memory)"),
            memory_limit: gauge(&mut r, "memory_limit_bytes", "--max-memory: over it, writes adding members are refused"),
            redis_reads: counters::<ReadLabels>(&mut r, "redis_reads", "Redis log layout: reads answered from the node's copy (local) or after catching up with the board's log (caught_up)"),
            redis_read_staleness: register(
                &mut r,
                "redis_read_staleness_max_seconds",
                "Redis log layout, --redis-reads local: since the previous scrape, the longest a local read's copy had gone without catching up",
                Gauge::<f64, std::sync::atomic::AtomicU64>::default(),
            ),
            redis_snapshots: counters::<SnapshotLabels>(&mut r, "redis_snapshots", "Redis log layout: this node's snapshot attempts, by outcome (published, lease_lost, stale, skipped, failed)"),
            registry: r,
        }
    }

    /// Counts one refusal with `reason` (an error code, or [`CONNECTION_CAP`]), whichever
    /// door refused.
    pub fn refused(&self, reason: &str) {
        let reason = reason.to_owned();
        self.refusals.get_or_create(&RefusalLabels { reason }).inc();
    }

    /// Counts one webhook attempt with `outcome` ([`WebhookLabels`]).
    pub fn webhook_outcome(&self, outcome: &str) {
        let outcome = outcome.to_owned();
        self.webhook_posts
            .get_or_create(&WebhookLabels { outcome })
            .inc();
    }

    /// Sets how many periods await a post.
    pub fn webhook_pending(&self, pending: i64) {
        self.webhook_pending.set(pending);
    }

    /// Records one fsync.
    pub fn observe_fsync(&self, d: Duration) {
        self.fsync.observe(d.as_secs_f64());
    }

    /// The text exposition, with the state-derived gauges brought up to date.
    /// `totals` is `None` if the backend could not count them (the gauges keep their last
    /// value).
    /// `memory` is the budget's estimate and limit, bytes. `log` is how reads were
    /// answered and snapshots published since the previous scrape (the Redis log layout
    /// only).
    pub fn render(
        &self,
        totals: Option<Totals>,
        write_failing: bool,
        memory: Option<(u64, u64)>,
        log: Option<LogNodeCounts>,
    ) -> String {
        if let Some(f) = log {
            for (answered, n) in [("local", f.local), ("caught_up", f.caught_up)] {
                self.redis_reads
                    .get_or_create(&ReadLabels {
                        answered: answered.into(),
                    })
                    .inc_by(n);
            }
            self.redis_read_staleness
                .set(f.max_staleness_us as f64 / 1e6);
            for (outcome, n) in [
                ("published", f.snapshots_published),
                ("lease_lost", f.snapshots_lease_lost),
                ("stale", f.snapshots_stale),
                ("skipped", f.snapshots_skipped),
                ("failed", f.snapshots_failed),
            ] {
                self.redis_snapshots
                    .get_or_create(&SnapshotLabels {
                        outcome: outcome.into(),
                    })
                    .inc_by(n);
            }
        }
        if let Some((estimate, limit)) = memory {
            self.memory_estimate
                .set(i64::try_from(estimate).unwrap_or(i64::MAX));
            self.memory_limit
                .set(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        if let Some(t) = totals {
            self.boards.set(t.boards as i64);
            self.members.set(t.members as i64);
        }
        self.write_failing.set(i64::from(write_failing));
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
