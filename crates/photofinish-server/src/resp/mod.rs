//! The RESP door (docs/SPEC.md §9, docs/resp.md): the Redis protocol, RESP2 and RESP3, so
//! any Redis client library talks to Photofinish with `LB.*` commands — same boards,
//! same credentials, same rate limits and idempotency keys, same log as HTTP, because
//! every command is a [`Gate`](crate::gate::Gate) call.
//!
//! # Layout
//! - [`frame`]: request framing (multibulk and inline), every length under a named limit.
//! - [`reply`]: answers in RESP2 or RESP3.
//! - [`cmd`]: the command table and one file per family of commands.
//! - [`session`]: a connection's state between commands; [`error`]: how a command fails.
//! - [`conn`]: one connection — rounds of pipelined commands, writes gathered under one
//!   group commit, one write of the answers per round; `reads`: its member reads
//!   gathered into one read of each board.
//! - this file: the accept loop, the connection cap, TLS, shutdown.

pub mod cmd;
pub mod conn;
pub mod error;
pub mod frame;
mod reads;
pub mod reply;
pub mod session;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use crate::app::App;
use crate::listen::TLS_HANDSHAKE_TIMEOUT;

/// What a connection over the cap hears before it is closed (Redis's words).
const OVER_CAP: &[u8] = b"-ERR max number of clients reached\r\n";

/// How the RESP listener runs.
#[derive(Debug, Clone)]
pub struct RespOptions {
    /// Connections held at once; one more is told so and closed.
    pub max_connections: u64,
    /// The rest of a command must arrive within this once it has begun (the HTTP header
    /// deadline, `--header-timeout`).
    pub partial_timeout: Duration,
    /// How long the connections still in a round have once the listener closes (the
    /// rest of the stop's grace and a second: [`crate::stop`]); then they are cut. A
    /// round still running at the grace answers `shutting_down` and closes by itself
    /// (`Session::round`): this bounds a client that does not read its answers.
    pub drain: Duration,
}

impl RespOptions {
    /// The door's options under the HTTP door's `limits`, with `drain` at a stop.
    pub fn new(limits: &crate::conns::Limits, drain: Duration) -> Self {
        Self {
            max_connections: limits.max_connections,
            partial_timeout: limits.header_timeout,
            drain,
        }
    }
}

/// Serves RESP on `listener` until the server closes, then lets each connection finish
/// its round and waits (at most `opts.drain`) for them to close.
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    tls: Option<TlsAcceptor>,
    opts: RespOptions,
) {
    let cap = u32::try_from(opts.max_connections)
        .unwrap_or(u32::MAX)
        .min(Semaphore::MAX_PERMITS as u32)
        .max(1);
    let slots = Arc::new(Semaphore::new(cap as usize));
    let ids = AtomicU64::new(1);
    let mut closing = app.closing.clone();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    tracing::warn!(error = %e, "RESP accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = async { drop(closing.wait_for(|c| *c).await) } => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            let _ = stream.try_write(OVER_CAP);
            app.metrics.refused(crate::metrics::CONNECTION_CAP);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let session = session::Session::new(app.clone(), peer, ids.fetch_add(1, Ordering::Relaxed));
        let (closing, partial) = (app.closing.clone(), opts.partial_timeout);
        let tls = tls.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let served = match tls {
                None => conn::serve(stream, session, partial, closing).await,
                Some(acceptor) => match handshake(&acceptor, stream).await {
                    Some(s) => conn::serve(s, session, partial, closing).await,
                    None => return,
                },
            };
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "RESP connection ended");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(opts.drain, slots.acquire_many(cap))
        .await
        .is_err()
    {
        tracing::warn!("RESP connections still open at shutdown were cut off");
    }
}

async fn handshake(
    acceptor: &TlsAcceptor,
    stream: TcpStream,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(s)) => Some(s),
        _ => None,
    }
}
