//! A board's snapshot in Redis and the lease that lets one node at a time write it
//! (docs/redis-layout.md, "Snapshots, lease, trim"). The bytes are opaque here (the state
//! machine's snapshot encoding); what this module guarantees is that a published snapshot
//! is whole (chunk count, length and CRC-32C checked on every read), that only the
//! lease's current holder can publish (a fencing token), that the log still holds the entry
//! the snapshot was taken at when it is published, and that the log is trimmed only below
//! a published snapshot, from the entry the publisher names ([`BoardLog::publish_snapshot`]).

use std::sync::LazyLock;
use std::time::Duration;

use redis::{Script, Value};

use super::{array, number, text, BoardLog, Check, LogError};

/// Largest chunk a snapshot is written in (Redis strings hold 512 MiB; small chunks keep
/// every command short, so one board's snapshot never stalls Redis for long). 64 bytes
/// short of 512 KiB: with the string's header, a chunk fills jemalloc's 512 KiB size class
/// exactly (a chunk of 512 KiB took the next class, 640 KiB: a quarter more memory).
pub const SNAPSHOT_CHUNK_BYTES: usize = 512 * 1024 - 64;

/// Commands kept below the head when the log is trimmed: the entries holding the last
/// 10,000 commands stay (docs/SPEC.md §12's "at least the last 10,000 events"; an entry
/// is a group of commands, so this is counted by the publisher, who took them).
pub const KEEP_COMMANDS: u64 = 10_000;

/// Chunks one read asks for, or one write sends, at once (16 × 512 KiB: 8 MiB a round
/// trip).
pub const CHUNKS_PER_READ: u64 = 16;

/// How long unpublished chunks live: a writer that dies mid-snapshot, or an import whose
/// entry is never appended, leaves nothing for longer (publishing the snapshot, or
/// appending the import's entry, makes them permanent).
pub const UNPUBLISHED_CHUNK_TTL: Duration = Duration::from_secs(3600);

/// `lease.lua`: a key held by a token for a while (docs/redis-layout.md, "Snapshots,
/// lease, trim"): the snapshot lease, whose tokens are fresh fencing tokens, and the
/// webhook's claim, whose token is the claimant's.
/// - KEYS: 1 the key; 2 the fence counter (taking with a fresh token only).
/// - ARGV: 1 `take`, `renew` or `release`; 2 the hold (ms); 3 the holder's token (`""`
///   when taking with a fresh one).
/// - `take` of a key nobody holds: held by the token given, answering 1, or by a fresh
///   token from `INCR` of the counter, answering it. Any other call: 1 if the caller's
///   token holds the key (renewed for the hold, or released), else 0 — so `take` by its
///   holder renews, and `renew` never takes a key nobody holds (the caller's expired:
///   another may be at work).
pub(crate) static LEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("lease.lua")));
/// `publish.lua`: publishes a snapshot written as chunks if the writer still holds the
/// lease, the log still holds the entry it was taken at and every chunk is still there;
/// then deletes the previous snapshot's chunks, trims the log below it (keeping the
/// entries for replay) and deletes the chunks of imports taken by entries trimmed (no
/// node can take them any more: one that has not loads the board from this snapshot).
/// Answers `ok`, `lease_lost`, `entry_gone` or `chunks_gone`.
/// - KEYS: 1 lease, 2 log stream, 3 head (unused), 4 snapshot hash, 5 imports taken
///   (sorted set of `imp<id>.<chunks>`, score = the entry).
/// - ARGV: 1 token, 2 n, 3 check, 4 format version, 5 chunks, 6 bytes, 7 crc, 8 this
///   snapshot's chunk key prefix (`…:snap:<token>.<n>:`), 9 the lowest entry kept (the
///   publisher keeps the entries holding the last 10,000 commands), 10 the import
///   counter's key (import chunks are `<it>:<id>:<i>`).
static PUBLISH: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("publish.lua")));

/// A held snapshot lease: its fencing token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// The token, larger than every earlier holder's.
    pub token: u64,
}

/// What a published snapshot says of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotMeta {
    /// The last entry it includes.
    pub n: u64,
    /// That entry's check.
    pub check: Check,
    /// The format version of its bytes.
    pub version: u32,
    /// The lease token it was published under.
    pub token: u64,
    /// How many chunks.
    pub chunks: u64,
    /// How many bytes in all.
    pub bytes: u64,
    /// CRC-32C of the bytes.
    pub crc: u32,
}

/// Why a publish did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The lease is no longer the caller's (it expired; another node may hold it).
    LeaseLost,
    /// The log no longer holds the entry the snapshot was taken at (lost or rewritten).
    EntryGone,
    /// A chunk written for it is gone (expired or evicted before the publish).
    ChunksGone,
}

impl BoardLog {
    /// Takes the snapshot lease for `ttl` if nobody holds it.
    pub async fn take_lease(&self, ttl: Duration) -> Result<Option<Lease>, LogError> {
        let mut inv = LEASE.key(&self.keys().lease);
        inv.key(&self.keys().fence).arg("take").arg(ms(ttl)).arg("");
        let token = number(
            Some(&self.conn().invoke::<Value>(&inv).await?),
            "lease token",
        )?;
        Ok((token > 0).then_some(Lease { token }))
    }

    /// Extends `lease` by `ttl` if it is still the caller's; whether it was.
    pub async fn renew_lease(&self, lease: Lease, ttl: Duration) -> Result<bool, LogError> {
        self.lease_op("renew", lease, ttl).await
    }

    /// Gives `lease` up if it is still the caller's; whether it was.
    pub async fn release_lease(&self, lease: Lease) -> Result<bool, LogError> {
        self.lease_op("release", lease, Duration::ZERO).await
    }

    async fn lease_op(&self, op: &str, lease: Lease, ttl: Duration) -> Result<bool, LogError> {
        let mut inv = LEASE.key(&self.keys().lease);
        inv.key(&self.keys().fence)
            .arg(op)
            .arg(ms(ttl))
            .arg(lease.token);
        Ok(self.conn().invoke::<i64>(&inv).await? == 1)
    }

    /// Writes `bytes` (the state after entry `n`, whose check is `check`) as a snapshot of
    /// format `version` and publishes it under `lease`, then trims the log below it, but
    /// never below entry `keep_from` (the publisher keeps the last [`KEEP_COMMANDS`]). A
    /// refusal leaves the published snapshot as it was (the chunks written expire).
    pub async fn publish_snapshot(
        &self,
        lease: Lease,
        n: u64,
        check: &Check,
        version: u32,
        bytes: &[u8],
        keep_from: u64,
    ) -> Result<Result<SnapshotMeta, Refused>, LogError> {
        let prefix = self.keys().chunk_prefix(lease.token, n);
        let chunks = self
            .write_chunks(&prefix, bytes, Some(UNPUBLISHED_CHUNK_TTL))
            .await?;
        let meta = SnapshotMeta {
            n,
            check: check.clone(),
            version,
            token: lease.token,
            chunks,
            bytes: bytes.len() as u64,
            crc: crc32c::crc32c(bytes),
        };
        let keys = self.keys();
        let mut inv = PUBLISH.key(&keys.lease);
        inv.key(&keys.log)
            .key(&keys.head)
            .key(&keys.snap)
            .key(&keys.imported)
            .arg(meta.token)
            .arg(meta.n)
            .arg(&meta.check.0)
            .arg(meta.version)
            .arg(meta.chunks)
            .arg(meta.bytes)
            .arg(meta.crc)
            .arg(&prefix)
            .arg(keep_from)
            .arg(&keys.imports);
        let status: String = self.conn().invoke(&inv).await?;
        match status.as_str() {
            "ok" => Ok(Ok(meta)),
            "lease_lost" => Ok(Err(Refused::LeaseLost)),
            "entry_gone" => Ok(Err(Refused::EntryGone)),
            "chunks_gone" => Ok(Err(Refused::ChunksGone)),
            other => Err(LogError::Damaged(format!("publish answered {other:?}"))),
        }
    }

    /// The published snapshot and its bytes, checked whole; `None` if there is none.
    /// A snapshot replaced while it was read is read again (once).
    pub async fn read_snapshot(&self) -> Result<Option<(SnapshotMeta, Vec<u8>)>, LogError> {
        let mut last = None;
        for _ in 0..2 {
            let Some((meta, prefix)) = self.snapshot_meta().await? else {
                return Ok(None);
            };
            match self.read_chunks(&meta, &prefix).await? {
                Ok(bytes) => return Ok(Some((meta, bytes))),
                Err(why) => {
                    // Replaced meanwhile (its chunks unlinked): read the new one.
                    if self.snapshot_meta().await?.map(|(m, _)| m) != Some(meta.clone()) {
                        last = Some(why);
                        continue;
                    }
                    return Err(LogError::Damaged(why));
                }
            }
        }
        Err(LogError::Damaged(
            last.unwrap_or_else(|| "snapshot kept changing".into()),
        ))
    }

    /// The last entry the published snapshot includes (0: none published).
    pub async fn published_n(&self) -> Result<u64, LogError> {
        let n: Option<u64> = self
            .conn()
            .query(redis::cmd("HGET").arg(&self.keys().snap).arg("n"))
            .await?;
        Ok(n.unwrap_or(0))
    }

    /// The namespace's format key's value (`None`: not set).
    pub async fn namespace_format(&self) -> Result<Option<String>, LogError> {
        let cmd = redis::cmd("GET").arg(&self.keys().format).to_owned();
        Ok(self.conn().query(&cmd).await?)
    }

    /// The published snapshot's description and chunk prefix.
    async fn snapshot_meta(&self) -> Result<Option<(SnapshotMeta, String)>, LogError> {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(&self.keys().snap);
        for f in [
            "n", "c", "version", "token", "chunks", "bytes", "crc", "prefix",
        ] {
            cmd.arg(f);
        }
        let items = array(self.conn().query(&cmd).await?, "snapshot")?;
        if matches!(items.first(), None | Some(Value::Nil)) {
            return Ok(None);
        }
        let field = |i: usize, what: &str| number(items.get(i), what);
        let meta = SnapshotMeta {
            n: field(0, "snapshot n")?,
            check: Check(text(items.get(1), "snapshot c")?),
            version: u32::try_from(field(2, "snapshot version")?)
                .map_err(|_| LogError::Damaged("snapshot version past u32".into()))?,
            token: field(3, "snapshot token")?,
            chunks: field(4, "snapshot chunks")?,
            bytes: field(5, "snapshot bytes")?,
            crc: u32::try_from(field(6, "snapshot crc")?)
                .map_err(|_| LogError::Damaged("snapshot crc past u32".into()))?,
        };
        Ok(Some((meta, text(items.get(7), "snapshot prefix")?)))
    }

    /// The bytes of `meta`'s chunks, or why they do not check out.
    async fn read_chunks(
        &self,
        meta: &SnapshotMeta,
        prefix: &str,
    ) -> Result<Result<Vec<u8>, String>, LogError> {
        let Some(bytes) = self.chunks(prefix, meta.chunks).await? else {
            return Ok(Err(format!(
                "snapshot at entry {} lacks a chunk of {}",
                meta.n, meta.chunks
            )));
        };
        if bytes.len() as u64 != meta.bytes {
            return Ok(Err(format!(
                "snapshot at entry {} has {} bytes, not {}",
                meta.n,
                bytes.len(),
                meta.bytes
            )));
        }
        if crc32c::crc32c(&bytes) != meta.crc {
            return Ok(Err(format!(
                "snapshot at entry {} fails its checksum",
                meta.n
            )));
        }
        Ok(Ok(bytes))
    }

    /// Writes `bytes` as chunks of at most [`SNAPSHOT_CHUNK_BYTES`] under keys `prefix0`,
    /// `prefix1`, … (living `ttl` if given); how many.
    pub async fn write_chunks(
        &self,
        prefix: &str,
        bytes: &[u8],
        ttl: Option<Duration>,
    ) -> Result<u64, LogError> {
        let chunks: Vec<&[u8]> = bytes.chunks(SNAPSHOT_CHUNK_BYTES).collect();
        if chunks.is_empty() {
            return Ok(0);
        }
        // A pipeline of [`CHUNKS_PER_READ`] at a time: the board's appends share the
        // connection, and must not queue behind hundreds of megabytes (their stamps would
        // look skewed by the time Redis runs them).
        for (g, group) in chunks.chunks(CHUNKS_PER_READ as usize).enumerate() {
            let mut pipe = redis::pipe();
            for (j, chunk) in group.iter().enumerate() {
                let i = g * CHUNKS_PER_READ as usize + j;
                let cmd = pipe.cmd("SET").arg(format!("{prefix}{i}")).arg(*chunk);
                if let Some(ttl) = ttl {
                    cmd.arg("PX").arg(ms(ttl));
                }
                cmd.ignore();
            }
            self.conn().run(&pipe).await?;
        }
        Ok(chunks.len() as u64)
    }

    /// The bytes of chunks `prefix0` … `prefix{count-1}`, or `None` if one is missing.
    /// Read [`CHUNKS_PER_READ`] at a time (one `MGET`: a board's keys share one slot).
    pub async fn chunks(&self, prefix: &str, count: u64) -> Result<Option<Vec<u8>>, LogError> {
        let mut bytes = Vec::new();
        let mut first = 0;
        while first < count {
            let last = (first + CHUNKS_PER_READ).min(count);
            let mut cmd = redis::cmd("MGET");
            for i in first..last {
                cmd.arg(format!("{prefix}{i}"));
            }
            let got: Vec<Option<Vec<u8>>> = self.conn().query(&cmd).await?;
            if got.len() as u64 != last - first {
                return Err(LogError::Damaged(format!(
                    "MGET of {} chunks answered {}",
                    last - first,
                    got.len()
                )));
            }
            for chunk in got {
                match chunk {
                    Some(c) => bytes.extend_from_slice(&c),
                    None => return Ok(None),
                }
            }
            first = last;
        }
        Ok(Some(bytes))
    }

    /// Deletes chunks `prefix0` … `prefix{count-1}`.
    pub async fn delete_chunks(&self, prefix: &str, count: u64) -> Result<(), LogError> {
        if count == 0 {
            return Ok(());
        }
        let mut cmd = redis::cmd("UNLINK");
        for i in 0..count {
            cmd.arg(format!("{prefix}{i}"));
        }
        self.conn().query::<i64>(&cmd).await?;
        Ok(())
    }
}

/// `d` in whole milliseconds, at least 1 (a Redis TTL of 0 is refused).
pub(crate) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
