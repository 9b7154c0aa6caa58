//! `photofinish serve`: logging set up, the server run until SIGINT or SIGTERM, and the
//! lines a launcher waits for.

use std::io::Write;

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use photofinish_server::serve::ServeOptions;
use photofinish_store::FsyncPolicy;

use super::flags::{AccessFlags, LimitFlags, ScaleOutFlags};
use super::MAX_WORKERS;

/// `photofinish serve`'s flags.
#[derive(Debug, clap::Args)]
pub(super) struct ServeArgs {
    /// A TOML file of settings: each key a flag of `serve` (`data-dir = "…"`), used where
    /// neither a flag nor the environment sets it (docs/SPEC.md §18).
    #[arg(long, env = "PHOTOFINISH_CONFIG")]
    pub(super) config: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "PHOTOFINISH_LISTEN", default_value = "127.0.0.1:7770")]
    pub(super) listen: String,
    /// Address of the RESP door (Redis protocol, `LB.*` commands), or `off`.
    #[arg(
        long,
        env = "PHOTOFINISH_RESP_LISTEN",
        default_value = "127.0.0.1:7771"
    )]
    pub(super) resp_listen: String,
    /// Data directory.
    #[arg(
        long,
        env = "PHOTOFINISH_DATA_DIR",
        default_value = "./photofinish-data"
    )]
    pub(super) data_dir: PathBuf,
    /// When the log is fsynced: always, everysec or never.
    #[arg(long, env = "PHOTOFINISH_FSYNC", default_value = "always",
          value_parser = ["always", "everysec", "never"])]
    pub(super) fsync: String,
    /// Keep the data in Redis instead of the data directory:
    /// redis://host:port[/db] or redis+cluster://host:port[,host:port...].
    #[arg(long, env = "PHOTOFINISH_STORAGE")]
    pub(super) storage: Option<String>,
    /// Prefix of every Redis key.
    #[arg(long, env = "PHOTOFINISH_REDIS_NAMESPACE", default_value = "pf")]
    pub(super) redis_namespace: String,
    #[command(flatten)]
    pub(super) scale_out: Box<ScaleOutFlags>,
    /// Threads that serve requests (1 to 1024; default: one per core).
    #[arg(long, env = "PHOTOFINISH_WORKERS",
          value_parser = clap::value_parser!(u16).range(1..=MAX_WORKERS))]
    pub(super) workers: Option<u16>,
    /// How log lines are written: `text` (for people) or `json` (one object a line).
    #[arg(long, env = "PHOTOFINISH_LOG_FORMAT", default_value = "text",
          value_parser = ["text", "json"])]
    pub(super) log_format: String,
    /// Log every HTTP request at `info` (request id, method, route template, status,
    /// latency), not only the failed ones.
    #[arg(long, env = "PHOTOFINISH_ACCESS_LOG")]
    pub(super) access_log: bool,
    /// After SIGTERM or SIGINT, how long the listeners keep accepting (while `/readyz`
    /// says 503) so load balancers notice; then they accept nothing new.
    #[arg(long, env = "PHOTOFINISH_SHUTDOWN_DELAY", default_value = "2s",
          value_parser = super::flags::parse_duration)]
    pub(super) shutdown_delay: std::time::Duration,
    /// After SIGTERM or SIGINT (counted from the signal, the delay included), how long
    /// requests in flight may run before they are answered 503.
    #[arg(long, env = "PHOTOFINISH_SHUTDOWN_GRACE", default_value = "10s",
          value_parser = super::flags::parse_duration)]
    pub(super) shutdown_grace: std::time::Duration,
    #[command(flatten)]
    pub(super) access: Box<AccessFlags>,
    #[command(flatten)]
    pub(super) limits: Box<LimitFlags>,
}

impl ServeArgs {
    /// The server's options these flags say, checked, and whether logs are JSON.
    pub(super) fn options(self) -> Result<(ServeOptions, bool)> {
        let ServeArgs {
            config: _, // read into the other flags before they were parsed (config.rs)
            listen,
            resp_listen,
            data_dir,
            fsync,
            storage,
            redis_namespace,
            access,
            limits,
            scale_out,
            workers: _, // the runtime's, set up before this runs (main.rs)
            log_format,
            access_log,
            shutdown_delay,
            shutdown_grace,
        } = self;
        let stop = photofinish_server::stop::StopTimes {
            delay: shutdown_delay,
            grace: shutdown_grace,
        }
        .check()
        .map_err(|e| anyhow!(e))?;
        let fsync = FsyncPolicy::parse(&fsync)
            .ok_or_else(|| anyhow!("--fsync must be always, everysec or never, got {fsync:?}"))?;
        let resp_listen = (!resp_listen.eq_ignore_ascii_case("off")).then_some(resp_listen);
        let opts = access.apply(ServeOptions {
            listen,
            resp_listen,
            data_dir,
            fsync,
            storage,
            redis_namespace,
            access_log,
            stop,
            ..ServeOptions::default()
        })?;
        Ok((scale_out.apply(limits.apply(opts)?)?, log_format == "json"))
    }
}

/// Sends the log to stderr, as text or (`json`) one JSON object a line: the time, the
/// level, the message and the event's fields at the top level.
fn init_logs(json: bool) {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let ansi = !json && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        // A log line that cannot be written (stderr closed) is dropped: the subscriber's
        // own report of that failure goes through `eprintln!`, which panics on it and
        // took the server down with it.
        .log_internal_errors(false);
    if json {
        logs.json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .init();
    } else {
        logs.init();
    }
}

pub(super) async fn serve((opts, json_logs): (ServeOptions, bool)) -> Result<()> {
    init_logs(json_logs);
    let scheme = if opts.tls.is_some() { "https" } else { "http" };
    photofinish_server::serve::serve(
        opts,
        |bound| {
            // The RESP line first: the "listening" line is the last a launcher waits for.
            // Written without `println!`, which panics when the write fails: a launcher
            // that closed our stdout (`| head -1`) must not stop the server.
            let mut out = std::io::stdout().lock();
            if let Some(resp) = bound.resp {
                let _ = writeln!(out, "photofinish RESP on {resp}");
            }
            let _ = writeln!(out, "photofinish listening on {scheme}://{}", bound.http);
            let _ = out.flush();
        },
        shutdown_signal(),
    )
    .await?;
    Ok(())
}

/// The exit status when a second signal cuts a graceful stop short.
const CUT_SHORT: i32 = 1;

/// Takes SIGINT (Ctrl-C) and SIGTERM now, and completes when either arrives; a second
/// one then exits the process at once (status [`CUT_SHORT`]), without the rest of the
/// stop: writes acknowledged were already in the log, synced as `--fsync` says.
///
/// The handlers are installed when this is called, before the server announces that it
/// listens: a supervisor may send SIGTERM the moment it sees that line, and a signal that
/// came before its handler would end the process by its default action, skipping the
/// clean stop (drain, log sync, shutdown snapshot).
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{signal, Signal, SignalKind};
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut term = signal(SignalKind::terminate()).ok();
    async fn one(s: &mut Option<Signal>) {
        match s {
            Some(s) => drop(s.recv().await),
            None => std::future::pending::<()>().await,
        }
    }
    async fn either(int: &mut Option<Signal>, term: &mut Option<Signal>) {
        tokio::select! {
            () = one(int) => {},
            () = one(term) => {},
        }
    }
    async move {
        either(&mut int, &mut term).await;
        tracing::info!("shutdown signal received");
        tokio::spawn(async move {
            either(&mut int, &mut term).await;
            tracing::warn!("a second signal: exiting at once");
            std::process::exit(CUT_SHORT);
        });
    }
}
