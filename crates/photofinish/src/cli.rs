//! Command-line flags (clap) and what each subcommand does with them.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::{Parser, Subcommand};
use photofinish_server::rate::Rate;
use photofinish_server::serve::ServeOptions;
use photofinish_store::FsyncPolicy;
use serde_json::{json, Map, Value};

use crate::client::Client;
use crate::table;

/// Photofinish: leaderboards ranked by score, ties broken by who got there first.
#[derive(Debug, Parser)]
#[command(version, about)]
pub struct Args {
    /// Server URL for client commands.
    #[arg(
        long,
        global = true,
        env = "PHOTOFINISH_SERVER",
        default_value = "http://127.0.0.1:7770"
    )]
    server: String,
    /// Credential for client commands: an API key (`pf_…`) or a player's token.
    #[arg(long, global = true, env = "PHOTOFINISH_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Print the server's JSON instead of a table.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server: on the embedded store by default, or on Redis with --storage.
    Serve {
        /// Address to listen on.
        #[arg(long, env = "PHOTOFINISH_LISTEN", default_value = "127.0.0.1:7770")]
        listen: String,
        /// Address of the RESP door (Redis protocol, `LB.*` commands), or `off`.
        #[arg(
            long,
            env = "PHOTOFINISH_RESP_LISTEN",
            default_value = "127.0.0.1:7771"
        )]
        resp_listen: String,
        /// Data directory.
        #[arg(
            long,
            env = "PHOTOFINISH_DATA_DIR",
            default_value = "./photofinish-data"
        )]
        data_dir: PathBuf,
        /// When the log is fsynced: always, everysec or never.
        #[arg(long, env = "PHOTOFINISH_FSYNC", default_value = "always")]
        fsync: String,
        /// Keep the data in Redis instead of the data directory:
        /// redis://host:port[/db] or redis+cluster://host:port[,host:port...].
        #[arg(long, env = "PHOTOFINISH_STORAGE")]
        storage: Option<String>,
        /// Prefix of every Redis key.
        #[arg(long, env = "PHOTOFINISH_REDIS_NAMESPACE", default_value = "pf")]
        redis_namespace: String,
        #[command(flatten)]
        scale_out: Box<ScaleOutFlags>,
        /// Threads that serve requests (1 to 1024; default: one per core).
        #[arg(long, env = "PHOTOFINISH_WORKERS",
              value_parser = clap::value_parser!(u16).range(1..=MAX_WORKERS))]
        workers: Option<u16>,
        #[command(flatten)]
        access: Box<AccessFlags>,
        #[command(flatten)]
        limits: Box<LimitFlags>,
    },
    /// Convert a Redis namespace written by an earlier Photofinish (the Lua data model,
    /// format 2) to the log layout, in place (docs/redis-layout.md, "Upgrade"). Stop every
    /// server on it first; an interrupted run is resumed by running it again.
    RedisUpgrade {
        /// redis://host:port[/db] or redis+cluster://host:port[,host:port...].
        #[arg(long, env = "PHOTOFINISH_STORAGE")]
        storage: String,
        /// Prefix of every Redis key.
        #[arg(long, env = "PHOTOFINISH_REDIS_NAMESPACE", default_value = "pf")]
        redis_namespace: String,
    },
    /// Download a consistent backup of every board from a running server on the embedded
    /// store (admin key for every board), made while writes go on; checked before it is
    /// kept.
    Backup {
        /// The backup file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Make a data directory from a backup (checked whole first); DIR must be empty or
    /// missing. Then `photofinish serve --data-dir DIR` answers as the server did when the
    /// backup was made.
    Restore {
        /// The backup file.
        file: PathBuf,
        /// The data directory to make.
        #[arg(long)]
        data_dir: PathBuf,
    },
    /// Write one period of a board as JSON Lines in rank order (docs/SPEC.md §11).
    Export {
        /// Board name.
        #[arg(long)]
        board: String,
        /// current (default), previous or a period id.
        #[arg(long)]
        period: Option<String>,
        /// The file to write (written whole, then named); stdout when absent.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Fill an empty period of an existing board from JSON Lines (admin): all or nothing.
    Import {
        /// Board name (create it first, with the config you want).
        #[arg(long)]
        board: String,
        /// current (default), previous or a retained period id.
        #[arg(long)]
        period: Option<String>,
        /// The JSON Lines file (an export's format).
        file: PathBuf,
    },
    /// Import an existing Redis ZSET, decoding the score packing it uses (docs/migrate.md).
    ImportRedis {
        /// The Redis holding the ZSET: redis://host:port[/db].
        #[arg(long)]
        redis: String,
        /// The ZSET's key.
        #[arg(long)]
        key: String,
        /// Board name (create it first).
        #[arg(long)]
        board: String,
        /// current (default), previous or a retained period id.
        #[arg(long)]
        period: Option<String>,
        #[command(flatten)]
        packing: Box<crate::packing::PackingFlags>,
    },
    /// Manage API keys in a keys file (the server re-reads it on SIGHUP).
    Key {
        #[command(subcommand)]
        command: crate::keys_cmd::KeyCommand,
    },
    /// Create, list, show or delete boards.
    Board {
        #[command(subcommand)]
        command: BoardCommand,
    },
    /// Submit a score.
    Submit {
        /// Board name.
        board: String,
        /// Member name.
        member: String,
        /// Score (an integer; any i64).
        #[arg(allow_hyphen_values = true)]
        score: String,
        /// incr, best or set (default: the board's).
        #[arg(long)]
        op: Option<String>,
        /// Metadata, a JSON object.
        #[arg(long)]
        metadata: Option<String>,
        /// RFC 3339 instant of the write.
        #[arg(long)]
        at: Option<String>,
    },
    /// Show the top of a board.
    Top {
        /// Board name.
        board: String,
        /// Rows.
        #[arg(long, default_value_t = 10)]
        limit: u64,
        /// 0-based start.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// ordinal, competition or dense.
        #[arg(long)]
        ranking: Option<String>,
        /// current, previous or a period id.
        #[arg(long)]
        period: Option<String>,
    },
    /// Show a member's rank.
    Rank {
        /// Board name.
        board: String,
        /// Member name.
        member: String,
        /// ordinal, competition or dense.
        #[arg(long)]
        ranking: Option<String>,
        /// current, previous or a period id.
        #[arg(long)]
        period: Option<String>,
    },
    /// Show the rows around a member.
    Around {
        /// Board name.
        board: String,
        /// Member name.
        member: String,
        /// Rows above.
        #[arg(long, default_value_t = 5)]
        before: u64,
        /// Rows below.
        #[arg(long, default_value_t = 5)]
        after: u64,
        /// ordinal, competition or dense.
        #[arg(long)]
        ranking: Option<String>,
        /// current, previous or a period id.
        #[arg(long)]
        period: Option<String>,
    },
}

/// Who may use the server (docs/SPEC.md §6) and how it is reached.
#[derive(Debug, clap::Args)]
struct AccessFlags {
    /// API keys file (made with `photofinish key new`); re-read on SIGHUP.
    #[arg(long, env = "PHOTOFINISH_KEYS")]
    keys: Option<PathBuf>,
    /// PEM public key (RS256, ES256 or EdDSA) that verifies players' tokens.
    #[arg(
        long,
        env = "PHOTOFINISH_JWT_KEY",
        conflicts_with = "jwt_hs256_secret_file"
    )]
    jwt_key: Option<PathBuf>,
    /// File whose bytes (trailing whitespace trimmed) are the HS256 secret of players' tokens.
    #[arg(long, env = "PHOTOFINISH_JWT_HS256_SECRET_FILE")]
    jwt_hs256_secret_file: Option<PathBuf>,
    /// Required `iss` of players' tokens.
    #[arg(long, env = "PHOTOFINISH_JWT_ISSUER")]
    jwt_issuer: Option<String>,
    /// Required `aud` of players' tokens.
    #[arg(long, env = "PHOTOFINISH_JWT_AUDIENCE")]
    jwt_audience: Option<String>,
    /// Serve without any credential on a non-loopback address.
    #[arg(long, env = "PHOTOFINISH_ALLOW_UNAUTHENTICATED")]
    allow_unauthenticated: bool,
    /// TLS certificate chain (PEM); serve HTTPS.
    #[arg(long, env = "PHOTOFINISH_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, env = "PHOTOFINISH_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Key that signs period-close webhook posts (HMAC-SHA256 in X-Photofinish-Signature);
    /// prefer the environment variable, which `ps` does not show.
    #[arg(
        long,
        env = "PHOTOFINISH_WEBHOOK_SECRET",
        hide_env_values = true,
        conflicts_with = "webhook_secret_file"
    )]
    webhook_secret: Option<String>,
    /// File whose bytes (trailing whitespace trimmed) are the webhook signing key.
    #[arg(long, env = "PHOTOFINISH_WEBHOOK_SECRET_FILE")]
    webhook_secret_file: Option<PathBuf>,
    /// Microseconds added to the system clock: for tests that cross a period's end.
    #[arg(
        long,
        env = "PHOTOFINISH_CLOCK_OFFSET_US",
        hide = true,
        allow_hyphen_values = true
    )]
    clock_offset_us: Option<i64>,
}

impl AccessFlags {
    fn apply(self, opts: ServeOptions) -> Result<ServeOptions> {
        use photofinish_server::auth::jwt::{JwtKey, JwtOptions};
        let key = match (self.jwt_key, self.jwt_hs256_secret_file) {
            (Some(pem), _) => Some(JwtKey::Pem(pem)),
            (None, Some(secret)) => Some(JwtKey::Hs256SecretFile(secret)),
            (None, None) => None,
        };
        let tls = self.tls_cert.zip(self.tls_key);
        let secret = match (self.webhook_secret, self.webhook_secret_file) {
            (Some(s), _) => Some(s.into_bytes()),
            (None, Some(file)) => {
                let mut bytes = std::fs::read(&file).map_err(|e| {
                    anyhow!("cannot read --webhook-secret-file {}: {e}", file.display())
                })?;
                while bytes.last().is_some_and(u8::is_ascii_whitespace) {
                    bytes.pop();
                }
                Some(bytes)
            }
            (None, None) => None,
        };
        if secret.as_ref().is_some_and(Vec::is_empty) {
            return Err(anyhow!("the webhook secret is empty"));
        }
        let clock = match self.clock_offset_us {
            Some(offset) => photofinish_server::serve::SharedClock(std::sync::Arc::new(
                photofinish_core::clock::OffsetClock::new(offset),
            )),
            None => opts.clock.clone(),
        };
        Ok(ServeOptions {
            keys: self.keys,
            jwt: key.map(|key| JwtOptions {
                key,
                issuer: self.jwt_issuer,
                audience: self.jwt_audience,
            }),
            allow_unauthenticated: self.allow_unauthenticated,
            tls: tls.map(|(cert, key)| photofinish_server::listen::TlsFiles { cert, key }),
            webhook: photofinish_server::webhook::WebhookOptions {
                secret: secret.map(Into::into),
            },
            clock,
            ..opts
        })
    }
}

/// Limits against abuse and floods (docs/SPEC.md §7).
#[derive(Debug, clap::Args)]
struct LimitFlags {
    /// Seconds a request's headers may take, counted from the connection's accept or the
    /// request's first byte.
    #[arg(long, env = "PHOTOFINISH_HEADER_TIMEOUT", default_value_t = 10.0)]
    header_timeout: f64,
    /// Connections held at once (default: the open-file limit less a reserve).
    #[arg(long, env = "PHOTOFINISH_MAX_CONNECTIONS")]
    max_connections: Option<u64>,
    /// Most boards; creating one more is refused (too_many_boards). 0 for no limit.
    #[arg(long, env = "PHOTOFINISH_MAX_BOARDS", default_value_t = photofinish_server::serve::DEFAULT_MAX_BOARDS)]
    max_boards: u64,
    /// Memory budget for the data, bytes with an optional suffix (512MiB, 4GiB, 2GB);
    /// over it, writes adding members are refused (507). Default: 75% of physical memory.
    #[arg(long, env = "PHOTOFINISH_MAX_MEMORY", value_parser = parse_bytes)]
    max_memory: Option<u64>,
    /// Each player's rate: N/s or N/min, optionally ,burst=B (burst: one second's worth).
    #[arg(long, env = "PHOTOFINISH_PLAYER_RATE", default_value = "10/s,burst=20", value_parser = Rate::parse)]
    player_rate: Rate,
    /// Each client address's rate for requests without a credential (servers with
    /// credentials only).
    #[arg(long, env = "PHOTOFINISH_ANONYMOUS_RATE", default_value = "100/s", value_parser = Rate::parse)]
    anonymous_rate: Rate,
    /// How long Idempotency-Keys are remembered: seconds, or with a unit (36h, 2d); at
    /// least 24h.
    #[arg(long, env = "PHOTOFINISH_IDEMPOTENCY_TTL", default_value = "24h", value_parser = parse_ttl)]
    idempotency_ttl: std::time::Duration,
}

/// A duration: digits with an optional unit (ms, s, m, h, d; seconds without one).
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a duration like 500ms, 2s or 24h"))?;
    let ms_per = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {s:?}: use ms, s, m, h or d"
            ))
        }
    };
    let ms = n
        .checked_mul(ms_per)
        .ok_or_else(|| format!("{s:?} is too long"))?;
    Ok(std::time::Duration::from_millis(ms))
}

/// A key lifetime ([`parse_duration`]), at least 24 h (docs/SPEC.md §7).
fn parse_ttl(s: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(s)?;
    if d < std::time::Duration::from_secs(86_400) {
        return Err(format!("{s:?} is under 24h: keys are kept at least a day, so a client's retries are recognised"));
    }
    Ok(d)
}

/// The largest `--max-clock-skew`.
const MAX_CLOCK_SKEW_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// `--max-clock-skew` ([`parse_duration`]): over 0, at most a minute.
fn parse_skew(s: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() || d > MAX_CLOCK_SKEW_LIMIT {
        return Err(format!("{s:?} must be over 0 and at most 60s"));
    }
    Ok(d)
}

/// Most replicas `--redis-wait` may ask for.
const MAX_REDIS_WAIT: i64 = 64;

/// How the Redis backend runs (docs/SPEC.md §12; docs/redis-layout.md).
#[derive(Debug, clap::Args)]
struct ScaleOutFlags {
    /// On Redis: `fresh` reads see every write acknowledged before them, on any node;
    /// `local` reads answer from what this node applied within the last 100 ms.
    #[arg(long, env = "PHOTOFINISH_REDIS_READS", default_value = "fresh", value_parser = ["fresh", "local"])]
    redis_reads: String,
    /// On Redis: replicas that must confirm each write before it is acknowledged
    /// (`WAIT`, at most 1 s; else 503, outcome unknown). 0: none.
    #[arg(long, env = "PHOTOFINISH_REDIS_WAIT", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=MAX_REDIS_WAIT))]
    redis_wait: u32,
    /// On Redis: the largest difference allowed between this node's clock and Redis's
    /// (500ms, 1s, …); a write stamped further off is refused (503).
    #[arg(long, env = "PHOTOFINISH_MAX_CLOCK_SKEW", default_value = "1s", value_parser = parse_skew)]
    max_clock_skew: std::time::Duration,
}

impl ScaleOutFlags {
    fn apply(self, opts: ServeOptions) -> Result<ServeOptions> {
        if (self.redis_reads != "fresh" || self.redis_wait > 0) && opts.storage.is_none() {
            return Err(anyhow!(
                "--redis-reads and --redis-wait are for --storage redis://…"
            ));
        }
        Ok(ServeOptions {
            redis_reads: if self.redis_reads == "local" {
                photofinish_redis::node::Reads::Local
            } else {
                photofinish_redis::node::Reads::Fresh
            },
            redis_wait: self.redis_wait,
            max_clock_skew: Some(self.max_clock_skew),
            ..opts
        })
    }
}

/// A size: digits and an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size like 512MiB or 4GiB"))?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {s:?}: use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB"
            ))
        }
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("{s:?} is too large"))
}

impl LimitFlags {
    fn apply(self, opts: ServeOptions) -> Result<ServeOptions> {
        if !(self.header_timeout > 0.0 && self.header_timeout <= 3600.0) {
            return Err(anyhow!(
                "--header-timeout must be in (0, 3600] seconds, got {}",
                self.header_timeout
            ));
        }
        Ok(ServeOptions {
            header_timeout: std::time::Duration::from_secs_f64(self.header_timeout),
            max_connections: self.max_connections,
            max_boards: (self.max_boards > 0).then_some(self.max_boards),
            max_memory: self.max_memory,
            player_rate: self.player_rate,
            anonymous_rate: self.anonymous_rate,
            idempotency_ttl: self.idempotency_ttl,
            ..opts
        })
    }
}

#[derive(Debug, Subcommand)]
enum BoardCommand {
    /// Create a board (or confirm it exists with the same config).
    Create {
        /// Board name.
        name: String,
        /// desc or asc.
        #[arg(long)]
        order: Option<String>,
        /// Default operator: incr, best or set.
        #[arg(long)]
        update: Option<String>,
        /// never, daily, weekly or monthly.
        #[arg(long)]
        reset: Option<String>,
        /// IANA time zone.
        #[arg(long)]
        timezone: Option<String>,
        /// monday or sunday.
        #[arg(long)]
        week_start: Option<String>,
        /// Periods kept.
        #[arg(long)]
        retention: Option<u32>,
    },
    /// List boards.
    List,
    /// Show one board.
    Show {
        /// Board name.
        name: String,
    },
    /// Delete a board.
    Delete {
        /// Board name.
        name: String,
    },
}

fn query(pairs: &[(&str, Option<String>)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| ((*k).to_owned(), v)))
        .collect()
}

/// `photofinish backup`: the download goes to a temporary file beside `out`, is checked
/// whole (magic, checksum, every record), and only then takes the name.
async fn backup(client: &Client, out: &std::path::Path, json: bool) -> Result<()> {
    let mut tmp_name = out.as_os_str().to_owned();
    tmp_name.push(".part");
    let tmp = PathBuf::from(tmp_name);
    let mut file =
        std::fs::File::create(&tmp).map_err(|e| anyhow!("cannot create {}: {e}", tmp.display()))?;
    let bar = crate::transfer_cmd::progress(None, "backup", true);
    let fetched = client
        .download_with(&["v1", "admin", "backup"], &[], &mut file, &mut |chunk| {
            bar.inc(chunk.len() as u64)
        })
        .await;
    bar.finish_and_clear();
    let fetched = fetched.and_then(|bytes| {
        file.sync_all()
            .map_err(|e| anyhow!("cannot sync {}: {e}", tmp.display()))?;
        let data = std::fs::read(&tmp)?;
        let loaded = photofinish_store::snapshot::read(&data)
            .map_err(|e| anyhow!("the backup does not verify: {}", e.0))?;
        Ok((bytes, loaded.last_lsn, loaded.state.boards().len()))
    });
    let (bytes, lsn, boards) = match fetched {
        Ok(v) => v,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, out).map_err(|e| anyhow!("cannot name {}: {e}", out.display()))?;
    if json {
        println!(
            "{}",
            json!({"file": out, "bytes": bytes, "last_lsn": lsn, "boards": boards})
        );
    } else {
        println!(
            "backup of {boards} boards at log position {lsn}: {} ({bytes} bytes)",
            out.display()
        );
    }
    Ok(())
}

/// `photofinish redis-upgrade`: converts the namespace and says what it did.
async fn redis_upgrade(storage: &str, ns: &str, json: bool) -> Result<()> {
    let target = photofinish_redis::Target::parse(storage).ok_or_else(|| {
        anyhow!("--storage must be redis://host:port[/db] or redis+cluster://host:port[,...]")
    })?;
    let r = photofinish_redis::upgrade_log::upgrade_to_log(&target, ns).await?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "already_current": r.already_current,
                "boards": r.boards,
                "periods": r.periods,
                "entries": r.entries,
                "idempotency_keys": r.keys,
                "format": photofinish_redis::upgrade_log::LOG_FORMAT,
            })
        );
    } else if r.already_current {
        println!("namespace {ns:?} is in the log layout already; nothing to do");
    } else {
        println!(
            "namespace {ns:?} converted to the log layout: {} board(s), {} period(s), {} \
             entries, {} idempotency key(s)",
            r.boards, r.periods, r.entries, r.keys
        );
    }
    Ok(())
}

/// Most request threads `serve --workers` takes.
pub const MAX_WORKERS: i64 = 1024;

impl Args {
    /// The request threads `serve --workers` asks for; `None`: one per core (and for the
    /// client commands, which need few).
    pub fn workers(&self) -> Option<usize> {
        match self.command {
            Command::Serve { workers, .. } => workers.map(usize::from),
            _ => None,
        }
    }
}

/// Runs the parsed command line.
pub async fn run(args: Args) -> Result<()> {
    let client = Client::new(&args.server, args.token.as_deref())?;
    let json = args.json;
    match args.command {
        Command::Serve {
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
        } => {
            let fsync = FsyncPolicy::parse(&fsync).ok_or_else(|| {
                anyhow!("--fsync must be always, everysec or never, got {fsync:?}")
            })?;
            let resp_listen = (!resp_listen.eq_ignore_ascii_case("off")).then_some(resp_listen);
            let opts = access.apply(ServeOptions {
                listen,
                resp_listen,
                data_dir,
                fsync,
                storage,
                redis_namespace,
                ..ServeOptions::default()
            })?;
            serve(scale_out.apply(limits.apply(opts)?)?).await
        }
        Command::RedisUpgrade {
            storage,
            redis_namespace,
        } => redis_upgrade(&storage, &redis_namespace, json).await,
        Command::Key { command } => crate::keys_cmd::run(command, json),
        Command::Backup { out } => backup(&client, &out, json).await,
        Command::Export { board, period, out } => {
            crate::transfer_cmd::export(&client, &board, period, out, json).await
        }
        Command::Import {
            board,
            period,
            file,
        } => crate::transfer_cmd::import(&client, &board, period, &file, json).await,
        Command::ImportRedis {
            redis,
            key,
            board,
            period,
            packing,
        } => {
            let encoding = packing.encoding()?;
            crate::transfer_cmd::import_redis(&client, &redis, &key, &board, period, encoding, json)
                .await
        }
        Command::Restore { file, data_dir } => {
            let r = photofinish_store::backup::restore(&file, &data_dir)?;
            if json {
                println!(
                    "{}",
                    json!({"last_lsn": r.last_lsn, "boards": r.boards, "data_dir": data_dir})
                );
            } else {
                println!(
                    "restored {} boards at log position {} into {}",
                    r.boards,
                    r.last_lsn,
                    data_dir.display()
                );
            }
            Ok(())
        }
        Command::Board { command } => match command {
            BoardCommand::Create {
                name,
                order,
                update,
                reset,
                timezone,
                week_start,
                retention,
            } => {
                let mut body = Map::new();
                for (k, v) in [
                    ("order", order),
                    ("update", update),
                    ("reset", reset),
                    ("timezone", timezone),
                    ("week_start", week_start),
                ] {
                    if let Some(v) = v {
                        body.insert(k.into(), Value::String(v));
                    }
                }
                if let Some(r) = retention {
                    body.insert("retention".into(), json!(r));
                }
                let v = client
                    .send(
                        reqwest::Method::PUT,
                        &["v1", "boards", &name],
                        &[],
                        Some(Value::Object(body)),
                    )
                    .await?;
                table::print(json, &v, table::board)
            }
            BoardCommand::List => {
                let v = client
                    .send(reqwest::Method::GET, &["v1", "boards"], &[], None)
                    .await?;
                table::print(json, &v, table::boards)
            }
            BoardCommand::Show { name } => {
                let v = client
                    .send(reqwest::Method::GET, &["v1", "boards", &name], &[], None)
                    .await?;
                table::print(json, &v, table::board)
            }
            BoardCommand::Delete { name } => {
                client
                    .send(reqwest::Method::DELETE, &["v1", "boards", &name], &[], None)
                    .await?;
                table::print(json, &json!({"deleted": name}), |_| {
                    format!("deleted board {name}\n")
                })
            }
        },
        Command::Submit {
            board,
            member,
            score,
            op,
            metadata,
            at,
        } => {
            let mut body = json!({"member": member, "score": score});
            if let Some(op) = op {
                body["op"] = Value::String(op);
            }
            if let Some(m) = metadata {
                body["metadata"] =
                    serde_json::from_str(&m).map_err(|e| anyhow!("--metadata is not JSON: {e}"))?;
            }
            if let Some(at) = at {
                body["at"] = Value::String(at);
            }
            let v = client
                .send(
                    reqwest::Method::POST,
                    &["v1", "boards", &board, "scores"],
                    &[],
                    Some(body),
                )
                .await?;
            table::print(json, &v, table::write)
        }
        Command::Top {
            board,
            limit,
            offset,
            ranking,
            period,
        } => {
            let q = query(&[
                ("limit", Some(limit.to_string())),
                ("offset", Some(offset.to_string())),
                ("ranking", ranking),
                ("period", period),
            ]);
            let v = client
                .send(
                    reqwest::Method::GET,
                    &["v1", "boards", &board, "entries"],
                    &q,
                    None,
                )
                .await?;
            table::print(json, &v, table::entries)
        }
        Command::Rank {
            board,
            member,
            ranking,
            period,
        } => {
            let q = query(&[("ranking", ranking), ("period", period)]);
            let v = client
                .send(
                    reqwest::Method::GET,
                    &["v1", "boards", &board, "members", &member],
                    &q,
                    None,
                )
                .await?;
            table::print(json, &v, table::member)
        }
        Command::Around {
            board,
            member,
            before,
            after,
            ranking,
            period,
        } => {
            let q = query(&[
                ("before", Some(before.to_string())),
                ("after", Some(after.to_string())),
                ("ranking", ranking),
                ("period", period),
            ]);
            let v = client
                .send(
                    reqwest::Method::GET,
                    &["v1", "boards", &board, "members", &member, "around"],
                    &q,
                    None,
                )
                .await?;
            table::print(json, &v, table::entries)
        }
    }
}

async fn serve(opts: ServeOptions) -> Result<()> {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        // A log line that cannot be written (stderr closed) is dropped: the subscriber's
        // own report of that failure goes through `eprintln!`, which panics on it and
        // took the server down with it.
        .log_internal_errors(false)
        .init();
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

/// Takes SIGINT (Ctrl-C) and SIGTERM now, and completes when either arrives.
///
/// The handlers are installed when this is called, before the server announces that it
/// listens: a supervisor may send SIGTERM the moment it sees that line, and a signal that
/// came before its handler would end the process by its default action, skipping the
/// clean stop (drain, log sync, shutdown snapshot).
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let (int, term) = {
        use tokio::signal::unix::{signal, SignalKind};
        (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
                match s {
                    Ok(mut s) => drop(s.recv().await),
                    Err(_) => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(int) => {},
                () = wait(term) => {},
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutdown signal received");
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("4GiB"), Ok(4 << 30));
        assert_eq!(parse_bytes("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert!(parse_bytes("4 parsecs").is_err());
        assert!(parse_bytes("99999999999TiB").is_err());
        assert!(parse_bytes("").is_err());
    }

    #[test]
    fn ttls() {
        use super::parse_ttl;
        assert_eq!(parse_ttl("24h").map(|d| d.as_secs()), Ok(86_400));
        assert_eq!(parse_ttl("2d").map(|d| d.as_secs()), Ok(172_800));
        assert!(parse_ttl("1h").is_err());
        assert!(parse_ttl("forever").is_err());
    }

    #[test]
    fn skews() {
        use super::parse_skew;
        assert_eq!(parse_skew("500ms").map(|d| d.as_millis()), Ok(500));
        assert_eq!(parse_skew("2").map(|d| d.as_millis()), Ok(2_000));
        assert!(parse_skew("0s").is_err());
        assert!(parse_skew("2m").is_err());
        assert!(parse_skew("1 fortnight").is_err());
    }
}
