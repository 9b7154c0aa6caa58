//! The HTTP listener: accept connections (under the cap and timeouts of [`crate::conns`]),
//! optionally wrap them in TLS (rustls), and serve each with hyper (HTTP/1.1), until
//! shutdown; then stop accepting, close idle connections and let every busy one finish
//! the request it is serving, for the rest of the stop's grace ([`crate::stop`]). Each
//! request carries the peer address (`axum::extract::ConnectInfo`).

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::conns::{Connections, MarkIdle, Watched};

/// How long a TLS handshake may take before the connection is dropped.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// PEM files of a TLS certificate chain and its private key.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// A rustls acceptor for `files`; the error names the file and what is wrong.
pub fn tls_acceptor(files: &TlsFiles) -> Result<TlsAcceptor, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let named = |p: &Path, e: &dyn std::fmt::Display| format!("{}: {e}", p.display());
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .map_err(|e| named(&files.cert, &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| named(&files.cert, &e))?;
    if certs.is_empty() {
        return Err(named(&files.cert, &"no certificate in the file"));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| named(&files.key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("{} and {}: {e}", files.cert.display(), files.key.display()))?;
    let mut config = config;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// What the listener holds its connections to: the cap (`on_refusal` runs for every
/// connection refused or evicted at it), and how long the requests in flight have once
/// it stops accepting.
pub struct Doors<F> {
    /// The connections held, under their cap.
    pub connections: Arc<Connections>,
    /// Runs for every connection refused or evicted at the cap.
    pub on_refusal: F,
    /// How long shutdown waits for the requests in flight before it cuts their
    /// connections (they were answered 503 a second before: [`crate::stop`]).
    pub drain: Duration,
}

/// Serves `router` on `listener` until `shutdown` completes, then lets go of the listener
/// (it stops accepting once no other server holds it: the data's loading hands it on,
/// `serve::starting`) and waits for the requests in flight, for at most `doors.drain`.
pub async fn serve<F: Fn() + Send + Sync + 'static>(
    listener: Arc<TcpListener>,
    router: Router,
    tls: Option<TlsAcceptor>,
    doors: Doors<F>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let Doors {
        connections,
        on_refusal,
        drain,
    } = doors;
    let builder = Arc::new(http1_builder());
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = accept(&listener) => accepted,
            () = &mut shutdown => break,
        };
        let Some(registered) = connections.admit(&on_refusal) else {
            drop(stream); // over the cap with every connection busy: closed at once
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let conn = registered.conn().clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
            conn.busy();
            req.extensions_mut().insert(ConnectInfo(peer));
            let conn = conn.clone();
            let answer = router.clone().oneshot(req.map(axum::body::Body::new));
            async move {
                let res = answer.await?;
                Ok::<_, std::convert::Infallible>(res.map(|body| MarkIdle::new(body, conn)))
            }
        });
        let builder = builder.clone();
        match &tls {
            None => {
                let io = TokioIo::new(Watched::new(stream, registered.conn().clone()));
                let conn = builder.serve_connection(io, service);
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(registered.run(conn));
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    let handshake =
                        tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
                    let Ok(Ok(stream)) = handshake else {
                        tracing::debug!(%peer, "TLS handshake failed or timed out");
                        return;
                    };
                    let io = TokioIo::new(Watched::new(stream, registered.conn().clone()));
                    let conn = watcher.watch(builder.serve_connection(io, service).into_owned());
                    registered.run(conn).await;
                });
            }
        }
    }
    drop(listener);
    wind_down(graceful, drain).await;
}

/// Closes the idle connections at once and the busy ones after their current request,
/// waiting for them at most `drain`; then what is left is cut.
async fn wind_down(graceful: GracefulShutdown, drain: Duration) {
    if tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            drain_ms = drain.as_millis() as u64,
            "connections still busy at the end of the shutdown grace were cut off"
        );
    }
}

/// The connection builder: HTTP/1.1 only, since the auto builder would also sniff for
/// HTTP/2, a step with no timer. The header and idle deadlines are `conns`' (hyper's
/// header timer would also cut idle keep-alive connections at the header timeout).
fn http1_builder() -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(None);
    builder
}

/// The next connection. An accept that fails (out of file descriptors, or the peer gave
/// up before it was accepted) backs off briefly instead of spinning.
async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(conn) => return conn,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Whether `listen` (`host:port`) names only loopback addresses.
pub fn is_loopback(listen: &str, resolved: &[SocketAddr]) -> bool {
    let host = listen.rsplit_once(':').map_or(listen, |(h, _)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    !resolved.is_empty() && resolved.iter().all(|a| a.ip().is_loopback())
}
