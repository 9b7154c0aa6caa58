//! Connection limits (docs/SPEC.md §7): how long a client may take to send a request's
//! headers, how long an idle keep-alive connection stays open, and how many connections
//! the server holds at once.
//!
//! Every accepted connection is registered in [`Connections`] and goes through three
//! phases: *head* (waiting for a request's headers, with a deadline counted from the accept
//! or from the first byte after an idle spell — a total deadline, so trickled headers are
//! cut too), *busy* (a request is being answered: no timer) and *idle* (between requests,
//! closed after the idle timeout). [`Watched`] notices the first byte of a request, the
//! service wrapper in `listen.rs` marks busy and idle, and [`Conn::watchdog`] closes the
//! connection when a deadline passes. hyper's own header timer is not used: it starts when
//! a response is sent, so it would close idle keep-alive connections after the header
//! timeout instead of the idle one.
//!
//! At the cap, a new connection takes the place of the connection that has waited longest
//! without a request in progress (a silent or idle one): a flood of silent connections
//! cannot lock out a client that sends a request. Only when every connection is busy is the
//! new one closed at once. Both count as `connection_cap` refusals, logged at most once a
//! second.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

/// Default time a request's headers may take (`--header-timeout`, docs/SPEC.md §7).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an idle keep-alive connection stays open (docs/SPEC.md §7).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// File descriptors kept free of connections: the log, snapshots, Redis connections, the
/// listener and accept's own need. The cap is the open-file limit minus this (or minus a
/// tenth of the limit, if that is more).
pub const RESERVED_DESCRIPTORS: u64 = 64;
/// The most connections ever held, whatever the open-file limit.
pub const MAX_CONNECTIONS: u64 = 1_000_000;
/// At most one log line about refused connections per this interval.
const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(1);

/// The connection limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A request's headers must arrive within this.
    pub header_timeout: Duration,
    /// An idle keep-alive connection is closed after this.
    pub idle_timeout: Duration,
    /// Connections held at once.
    pub max_connections: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            max_connections: cap_for(1024),
        }
    }
}

/// The connection cap under an open-file limit of `nofile`.
pub fn cap_for(nofile: u64) -> u64 {
    let reserve = RESERVED_DESCRIPTORS.max(nofile / 10);
    nofile.saturating_sub(reserve).clamp(1, MAX_CONNECTIONS)
}

/// Raises the soft open-file limit to the hard one and answers the limit in force (the
/// soft limit as it was, if it cannot be raised).
pub fn raise_open_file_limit() -> u64 {
    match rlimit::Resource::NOFILE.get() {
        Ok((soft, hard)) if soft < hard => match rlimit::Resource::NOFILE.set(hard, hard) {
            Ok(()) => {
                tracing::info!(from = soft, to = hard, "raised the open-file limit");
                hard
            }
            Err(e) => {
                tracing::warn!(error = %e, soft, hard, "cannot raise the open-file limit");
                soft
            }
        },
        Ok((soft, _)) => soft,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the open-file limit; assuming 1024");
            1024
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a request's headers until `deadline`.
    Head { deadline: Instant, since: Instant },
    /// Answering a request.
    Busy,
    /// Between requests since `since`.
    Idle { since: Instant },
}

/// One connection's phase, shared by its IO wrapper, its service and its watchdog.
#[derive(Debug)]
pub struct Conn {
    phase: Mutex<Phase>,
    changed: Notify,
    evicted: AtomicBool,
    limits: Limits,
}

/// Locks `m` even if a panic poisoned it (the guarded maps stay usable).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Conn {
    fn new(limits: Limits) -> Self {
        let now = Instant::now();
        Self {
            phase: Mutex::new(Phase::Head {
                deadline: now + limits.header_timeout,
                since: now,
            }),
            changed: Notify::new(),
            evicted: AtomicBool::new(false),
            limits,
        }
    }

    /// A request's headers were read: no timer runs while it is answered.
    pub fn busy(&self) {
        *lock(&self.phase) = Phase::Busy;
    }

    /// The answer was sent: the idle timer starts.
    pub fn idle(&self) {
        *lock(&self.phase) = Phase::Idle {
            since: Instant::now(),
        };
        self.changed.notify_one();
    }

    /// Bytes arrived: after an idle spell they start the next request's header deadline.
    fn bytes_arrived(&self) {
        let mut phase = lock(&self.phase);
        if let Phase::Idle { .. } = *phase {
            let now = Instant::now();
            *phase = Phase::Head {
                deadline: now + self.limits.header_timeout,
                since: now,
            };
            drop(phase);
            self.changed.notify_one();
        }
    }

    /// Since when the connection has waited without a request in progress, if it has.
    fn waiting_since(&self) -> Option<Instant> {
        match *lock(&self.phase) {
            Phase::Head { since, .. } | Phase::Idle { since } => Some(since),
            Phase::Busy => None,
        }
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::SeqCst);
        self.changed.notify_one();
    }

    /// Completes when the connection must close: its header deadline or idle timeout
    /// passed, or a new connection took its place at the cap. Race it against the
    /// connection; dropping the connection closes it.
    pub async fn watchdog(&self) {
        loop {
            let changed = self.changed.notified();
            if self.evicted.load(Ordering::SeqCst) {
                return;
            }
            let until = match *lock(&self.phase) {
                Phase::Head { deadline, .. } => Some(deadline),
                Phase::Idle { since } => Some(since + self.limits.idle_timeout),
                Phase::Busy => None,
            };
            match until {
                Some(t) if t <= Instant::now() => return,
                Some(t) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(t) => {}
                        () = changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

/// Every connection held, and the cap on them. See the module docs.
#[derive(Debug)]
pub struct Connections {
    limits: Limits,
    live: Mutex<HashMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
    refused: AtomicU64,
    last_log: Mutex<Option<Instant>>,
}

/// A registered connection; dropping it unregisters it.
#[derive(Debug)]
pub struct Registered {
    id: u64,
    conn: Arc<Conn>,
    owner: Arc<Connections>,
}

impl Registered {
    /// The connection's shared phase.
    pub fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }

    /// Drives `conn` (the connection being served) until it ends or its watchdog closes it
    /// (dropping it closes the socket); then the registration ends.
    pub async fn run(self, conn: impl std::future::Future) {
        tokio::select! {
            _ = conn => {}
            () = self.conn.watchdog() => {}
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.owner.live).remove(&self.id);
    }
}

impl Connections {
    /// No connections yet, under `limits`.
    pub fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            live: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            last_log: Mutex::new(None),
        })
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Connections held now.
    pub fn len(&self) -> usize {
        lock(&self.live).len()
    }

    /// Whether no connection is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Connections refused or evicted at the cap since start.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Registers a new connection; at the cap it evicts the one that has waited longest
    /// without a request in progress, or — if every one is busy — answers `None` (close
    /// the new one at once). Either way the refusal is counted and `on_refusal` called.
    pub fn admit(self: &Arc<Self>, on_refusal: impl FnOnce()) -> Option<Registered> {
        let mut live = lock(&self.live);
        let mut admitted = true;
        if live.len() as u64 >= self.limits.max_connections {
            let oldest = live
                .iter()
                .filter_map(|(id, c)| c.waiting_since().map(|s| (s, *id)))
                .min();
            match oldest.and_then(|(_, id)| live.remove(&id)) {
                Some(victim) => victim.evict(),
                None => admitted = false,
            }
            self.refused.fetch_add(1, Ordering::Relaxed);
            on_refusal();
            self.log_refusal(live.len(), admitted);
        }
        if !admitted {
            return None;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn::new(self.limits));
        live.insert(id, conn.clone());
        Some(Registered {
            id,
            conn,
            owner: self.clone(),
        })
    }

    fn log_refusal(&self, held: usize, evicted_one: bool) {
        let mut last = lock(&self.last_log);
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < REFUSAL_LOG_INTERVAL) {
            return;
        }
        *last = Some(now);
        tracing::warn!(
            held,
            cap = self.limits.max_connections,
            refused_total = self.refused(),
            action = if evicted_one {
                "closed the longest-waiting idle connection"
            } else {
                "closed the new connection"
            },
            "connection cap reached"
        );
    }
}

/// An IO stream that tells its [`Conn`] when a request's first byte arrives.
pub struct Watched<S> {
    inner: S,
    conn: Arc<Conn>,
}

impl<S> Watched<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, conn: Arc<Conn>) -> Self {
        Self { inner, conn }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.bytes_arrived();
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// A response body that marks its connection idle once hyper is done with it (sent or
/// dropped).
pub struct MarkIdle {
    inner: axum::body::Body,
    conn: Arc<Conn>,
}

impl MarkIdle {
    /// Wraps `inner`.
    pub fn new(inner: axum::body::Body, conn: Arc<Conn>) -> Self {
        Self { inner, conn }
    }
}

impl Drop for MarkIdle {
    fn drop(&mut self) {
        self.conn.idle();
    }
}

impl hyper::body::Body for MarkIdle {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }
    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_descriptors_free() {
        assert_eq!(cap_for(1024), 1024 - 102);
        assert_eq!(cap_for(256), 256 - 64);
        assert_eq!(cap_for(10), 1);
        assert_eq!(cap_for(u64::MAX), MAX_CONNECTIONS);
    }

    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_longest_waiting_goes_and_busy_ones_stay() {
        let c = Connections::new(Limits {
            max_connections: 2,
            ..Limits::default()
        });
        let a = c.admit(|| {}).expect("a");
        tokio::time::advance(Duration::from_millis(5)).await;
        let b = c.admit(|| {}).expect("b");
        b.conn().busy();
        let mut refusals = 0;
        let d = c.admit(|| refusals += 1).expect("d replaces a");
        assert_eq!(refusals, 1);
        assert!(a.conn().evicted.load(Ordering::SeqCst));
        // a's watchdog ends at once; b (busy) and d (head) are held.
        a.conn().watchdog().await;
        d.conn().busy();
        assert!(
            c.admit(|| refusals += 1).is_none(),
            "all busy: the new one goes"
        );
        assert_eq!((refusals, c.refused(), c.len()), (2, 2, 2));
        drop(d);
        assert_eq!(c.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn deadlines_by_phase() {
        let limits = Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10,
        };
        let conn = Conn::new(limits);
        let start = Instant::now();
        conn.watchdog().await;
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(10),
            "silent since accept"
        );

        let conn = Arc::new(Conn::new(limits));
        conn.busy();
        conn.idle();
        let start = Instant::now();
        let watch = tokio::spawn({
            let conn = conn.clone();
            async move { conn.watchdog().await }
        });
        tokio::time::advance(Duration::from_secs(30)).await;
        conn.bytes_arrived(); // a request starts after 30 s idle: 10 s for its headers
        watch.await.expect("watchdog");
        assert_eq!(start.elapsed(), Duration::from_secs(40));
    }
}
