//! The serve command's flag groups — who may use the server (§6), its limits (§7), the
//! scale-out settings (§12) — each applied to `ServeOptions`, and the parsers of their
//! values (durations, TTLs, clock skew, sizes).

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use photofinish_server::rate::Rate;
use photofinish_server::serve::ServeOptions;

/// Who may use the server (docs/SPEC.md §6) and how it is reached.
#[derive(Debug, clap::Args)]
pub(super) struct AccessFlags {
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
    /// Microseconds added to the system clock: for tests that cross a period's end. On
    /// Redis, `--max-clock-skew` then compares this node's clock with Redis's `TIME` plus
    /// the same offset, so writes are not refused as skewed.
    #[arg(
        long,
        env = "PHOTOFINISH_CLOCK_OFFSET_US",
        hide = true,
        allow_hyphen_values = true
    )]
    clock_offset_us: Option<i64>,
    /// The most members one step of a close looks at (a league's, or a period's grants):
    /// for tests that stop a server mid-close.
    #[arg(
        long,
        env = "PHOTOFINISH_CLOSE_STEP_MEMBERS",
        hide = true,
        default_value_t = photofinish_core::league::CLOSE_STEP_MEMBERS,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    close_step_members: u32,
}

impl AccessFlags {
    pub(super) fn apply(self, opts: ServeOptions) -> Result<ServeOptions> {
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
            close_step_members: self.close_step_members,
            ..opts
        })
    }
}

/// Limits against abuse and floods (docs/SPEC.md §7).
#[derive(Debug, clap::Args)]
pub(super) struct LimitFlags {
    /// Seconds a request's headers may take, counted from the connection's accept or the
    /// request's first byte.
    #[arg(long, env = "PHOTOFINISH_HEADER_TIMEOUT", default_value_t = 10.0,
          value_parser = parse_header_timeout)]
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
    /// How long the audit log keeps each admin change (docs/SPEC.md §15): a duration
    /// (90d, 36h), at least a day, at most 10 years.
    #[arg(long, env = "PHOTOFINISH_AUDIT_RETENTION", default_value = "90d", value_parser = parse_audit_retention)]
    audit_retention: std::time::Duration,
    /// Where the erasure key is kept (docs/privacy.md): the key erased members are named
    /// by (HMAC-SHA-256) in the audit log; made there on first use when absent. Default:
    /// `erasure.key` in the data dir, or in Redis on Redis.
    #[arg(long, env = "PHOTOFINISH_ERASURE_KEY_FILE")]
    erasure_key_file: Option<std::path::PathBuf>,
    /// The erasure ledger's file (docs/privacy.md): each erase is appended to it, and at
    /// start-up every erase it holds that the data lacks (a restored older backup) is
    /// applied again. Default: beside the data dir (`DATA_DIR.erasure-ledger`); on Redis,
    /// none (the ledger is kept in Redis). Keep it out of your backups.
    #[arg(long, env = "PHOTOFINISH_ERASURE_LEDGER")]
    erasure_ledger: Option<std::path::PathBuf>,
}

/// `--audit-retention` ([`parse_duration`]): a day to ten years.
fn parse_audit_retention(s: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(s)?;
    let (day, years) = (86_400, 10 * 366 * 86_400);
    if d < std::time::Duration::from_secs(day) || d > std::time::Duration::from_secs(years) {
        return Err(format!("{s:?} must be at least 1d and at most 3660d"));
    }
    Ok(d)
}

/// A duration: digits with an optional unit (ms, s, m, h, d; seconds without one).
pub(super) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
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
pub(super) struct ScaleOutFlags {
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
    pub(super) fn apply(self, opts: ServeOptions) -> Result<ServeOptions> {
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

/// `--header-timeout`: seconds in (0, 3600].
fn parse_header_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 3600.0 => Ok(t),
        _ => Err(format!("must be seconds in (0, 3600], got {s:?}")),
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
    pub(super) fn apply(self, opts: ServeOptions) -> Result<ServeOptions> {
        Ok(ServeOptions {
            header_timeout: std::time::Duration::from_secs_f64(self.header_timeout),
            max_connections: self.max_connections,
            max_boards: (self.max_boards > 0).then_some(self.max_boards),
            max_memory: self.max_memory,
            player_rate: self.player_rate,
            anonymous_rate: self.anonymous_rate,
            idempotency_ttl: self.idempotency_ttl,
            audit_retention: self.audit_retention,
            erasure_key_file: self.erasure_key_file,
            erasure_ledger: self.erasure_ledger,
            ..opts
        })
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
