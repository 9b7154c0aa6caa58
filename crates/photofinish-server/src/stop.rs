//! The graceful stop (docs/SPEC.md §18, docs/production.md "Stopping"), in three marks
//! counted from the first SIGTERM or SIGINT:
//!
//! 1. at once, **draining**: `/readyz` answers 503 so load balancers take the node out,
//!    and every answer says `Connection: close`, so clients leave their keep-alive
//!    connections after the request they are on (none is cut while a request is on it);
//! 2. after `--shutdown-delay`, **closing**: the listeners accept nothing new, idle HTTP
//!    and RESP connections close, busy ones after their current request or pipeline,
//!    event streams end with a `retry:` hint;
//! 3. at `--shutdown-grace`, **expired**: a request still running is answered 503
//!    (`shutting_down`; its outcome unknown: retry it with its `Idempotency-Key`), and a
//!    RESP command still running, and the rest of its pipeline, `-ERR shutting_down`
//!    ([`shutting_down`], one answer for both doors), so no request goes unanswered; then
//!    the log is flushed and synced and the process exits 0.
//!
//! The grace counts from the signal and includes the delay. A second signal exits at once
//! (the CLI's). `middleware::stop_guard` answers marks 1 and 3 on every route;
//! [`Stop::run`] sets the marks.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;

/// The default `--shutdown-delay`.
pub const DEFAULT_DELAY: Duration = Duration::from_secs(2);
/// The default `--shutdown-grace`.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(10);
/// The longest `--shutdown-grace` (a named limit: a supervisor's own timeout is longer).
pub const MAX_GRACE: Duration = Duration::from_secs(3600);
/// The reconnection delay an event stream's last message asks for.
pub const STREAM_RETRY: Duration = Duration::from_secs(2);

/// The stop's delay and grace (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopTimes {
    /// From the signal to the listeners' close.
    pub delay: Duration,
    /// From the signal to the 503 answers of requests still running.
    pub grace: Duration,
}

impl Default for StopTimes {
    fn default() -> Self {
        Self {
            delay: DEFAULT_DELAY,
            grace: DEFAULT_GRACE,
        }
    }
}

impl StopTimes {
    /// What runs after the listeners close has: the rest of the grace, then its 503s are
    /// written — a second more; then what is left is cut.
    pub fn drain(self) -> Duration {
        self.grace.saturating_sub(self.delay) + Duration::from_secs(1)
    }

    /// Checks that the delay ends before the grace, and the grace is at most [`MAX_GRACE`].
    pub fn check(self) -> Result<Self, String> {
        if self.grace > MAX_GRACE {
            return Err(format!(
                "--shutdown-grace is at most {}s",
                MAX_GRACE.as_secs()
            ));
        }
        if self.delay >= self.grace {
            return Err(
                "--shutdown-delay must be shorter than --shutdown-grace, which counts from \
                 the signal too"
                    .into(),
            );
        }
        Ok(self)
    }
}

/// Where a server is in its stop. See the module docs.
#[derive(Debug)]
pub struct Stop {
    draining: AtomicBool,
    closing: watch::Sender<bool>,
    expired: watch::Sender<bool>,
}

impl Default for Stop {
    fn default() -> Self {
        Self {
            draining: AtomicBool::new(false),
            closing: watch::channel(false).0,
            expired: watch::channel(false).0,
        }
    }
}

impl Stop {
    /// Whether the stop has begun (`/readyz` is 503).
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Turns `true` when the listeners close: event streams end, RESP connections close.
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Turns `true` when the grace is over.
    pub fn expired(&self) -> watch::Receiver<bool> {
        self.expired.subscribe()
    }

    /// Waits for `signal`, then sets the marks at their times; completes at the second
    /// (the listeners' close). The third is set by a task of its own.
    pub async fn run(self: std::sync::Arc<Self>, signal: impl Future<Output = ()>, t: StopTimes) {
        signal.await;
        self.draining.store(true, Ordering::Relaxed);
        tracing::info!(
            delay_ms = t.delay.as_millis() as u64,
            grace_ms = t.grace.as_millis() as u64,
            "stopping: not ready; serving on until the delay ends"
        );
        let stop = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(t.grace).await;
            tracing::info!("shutdown grace over: requests still running are answered 503");
            stop.expired.send_replace(true);
        });
        tokio::time::sleep(t.delay).await;
        tracing::info!("stopping: accepting nothing new");
        self.closing.send_replace(true);
    }
}

/// Waits until `rx` is `true`.
pub async fn until(mut rx: watch::Receiver<bool>) {
    drop(rx.wait_for(|v| *v).await);
}

/// `f`'s output, or `None` when the grace (`expired`, [`Stop::expired`]) ends first. A
/// stop that went away (its sender dropped) ends no grace: `f` runs on.
pub async fn before_grace<T>(
    expired: &mut watch::Receiver<bool>,
    f: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        biased;
        out = f => Some(out),
        Ok(_) = expired.wait_for(|v| *v) => None,
    }
}

/// The answer to a request still running when the grace ends, on either door: 503 over
/// HTTP, `-ERR shutting_down …` over RESP.
pub fn shutting_down() -> crate::error::ApiError {
    crate::error::ApiError::new(
        photofinish_core::ErrorCode::ShuttingDown,
        "the server stopped before this request finished; its outcome is unknown: retry \
         it (with the same idempotency key) on another node or after the restart",
    )
}
