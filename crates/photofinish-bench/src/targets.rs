//! The four targets, each loaded with the same members and driven with the same operations:
//! the engine in process, the HTTP server on the embedded store, the HTTP server on Redis,
//! and raw Redis doing what seed 000 does (its Lua composite-score increment and tied-rank
//! scripts, `ZREVRANGE` pages, `ZREVRANK` + `ZREVRANGE` for around).

use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use anyhow::{anyhow, bail, Context, Result};
use photofinish_core::ranking::Write;
use photofinish_core::{Op as CoreOp, Order, RankStyle, Ranking};
use redis::aio::MultiplexedConnection;
use redis::Script;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::progress::Progress;
use crate::workload::{member, Op, Rng};

/// Writes per batch request when loading over HTTP.
const LOAD_BATCH: u64 = 1000;
/// Batch requests in flight at once while loading.
const LOAD_CONCURRENCY: usize = 8;
/// The board every HTTP target uses.
const BOARD: &str = "bench";
/// The ZSET the seed-style Redis target uses.
const SEED_KEY: &str = "seed000:board";

/// Seed 000's increment: floor(old) + delta + a time fraction, as one script.
const SEED_INCR: &str = include_str!("../../../bench/seed000_incr.lua");
/// Seed 000's tied rank: the rank of the first member with the same integer part.
const SEED_RANK: &str = include_str!("../../../bench/seed000_rank.lua");

/// A server child process (this binary's hidden `__serve`), stopped when dropped.
pub struct ServerProc {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl ServerProc {
    /// Starts `__serve` with `args` and waits for its "listening" line.
    pub async fn start(args: &[String]) -> Result<Self> {
        let exe = std::env::current_exe().context("locating this binary")?;
        let mut child = Command::new(exe)
            .arg("__serve")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("starting the photofinish server")?;
        let stdout = child.stdout.take().context("server stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).await?;
        let base = line
            .trim()
            .strip_prefix("photofinish listening on ")
            .ok_or_else(|| anyhow!("the server did not start: {line:?}"))?
            .to_owned();
        Ok(Self { child, base })
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Resident memory of the server, bytes (Linux `/proc`).
    pub fn rss(&self) -> Option<u64> {
        let pid = self.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb * 1024)
    }
}

/// CPU time (user + system) process `pid` has used, seconds (Linux `/proc/<pid>/stat`,
/// in clock ticks of 10 ms).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// Redis `used_memory`, bytes.
pub async fn redis_used_memory(conn: &mut MultiplexedConnection) -> Result<u64> {
    let info: String = redis::cmd("INFO").arg("memory").query_async(conn).await?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| anyhow!("no used_memory in INFO"))
}

/// How a target's memory per member was measured.
#[derive(Debug, Clone, Copy)]
pub enum Memory {
    /// Bytes the allocator handed out while loading, per member.
    Allocated(f64),
    /// Growth of the server process's RSS while loading, per member.
    Rss(f64),
    /// Growth of Redis `used_memory` while loading, per member.
    Redis(f64),
}

/// One target, loaded.
pub enum Target {
    /// The engine in this process: one ranking behind a lock, one OS thread per client.
    Engine {
        /// The ranking.
        ranking: Arc<RwLock<Ranking>>,
        /// Stamps for writes, increasing.
        clock: Arc<AtomicI64>,
    },
    /// A Photofinish server over HTTP.
    Http {
        /// The server.
        server: ServerProc,
        /// A pooled client.
        http: reqwest::Client,
    },
    /// Raw Redis doing what the seeds do.
    Seed {
        /// The redis-server process id (for its CPU time).
        pid: Option<u32>,
        /// A multiplexed connection (cloned per client).
        conn: MultiplexedConnection,
        /// Seed 000's increment script.
        incr: Arc<Script>,
        /// Seed 000's tied-rank script.
        rank: Arc<Script>,
    },
}

/// The score a loaded member starts with.
fn initial_score(i: u64) -> i64 {
    let mut r = Rng::new(i + 1);
    (r.next_u64() % 1_000_000) as i64
}

/// Seed 000's time fraction: (a far future ms − now ms) × 1e-13, so earlier is bigger.
fn seed_fraction() -> f64 {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    (4_102_444_800_000u64.saturating_sub(now_ms)) as f64 * 1e-13
}

impl Target {
    /// The engine with `n` members; returns it and the bytes allocated per member.
    pub fn engine(n: u64, allocated: impl Fn() -> usize) -> Result<(Self, Memory)> {
        let before = allocated();
        let mut ranking = Ranking::new(photofinish_core::Shape::single(Order::Desc, CoreOp::Set));
        let clock = AtomicI64::new(1_795_000_000_000_000);
        let mut progress = Progress::new("engine", n);
        for i in 0..n {
            let name = member(i);
            ranking.submit(&Write {
                member: &name,
                op: Some(CoreOp::Set),
                values: photofinish_core::Operands::one(initial_score(i)),
                at_us: clock.fetch_add(1, Ordering::Relaxed),
                metadata: None,
                partition: None,
                team: None,
                hidden: false,
            })?;
            progress.set(i + 1);
        }
        progress.done();
        let per = (allocated().saturating_sub(before)) as f64 / n.max(1) as f64;
        let target = Self::Engine {
            ranking: Arc::new(RwLock::new(ranking)),
            clock: Arc::new(clock),
        };
        Ok((target, Memory::Allocated(per)))
    }

    /// A Photofinish server started with `args`, loaded with `n` members over the batch API.
    /// `redis` is the Redis it stores in, if any, to measure memory there.
    pub async fn http(
        label: &str,
        n: u64,
        args: &[String],
        mut redis: Option<MultiplexedConnection>,
    ) -> Result<(Self, Memory)> {
        let server = ServerProc::start(args).await?;
        let http = reqwest::Client::new();
        let resp = http
            .put(format!("{}/v1/boards/{BOARD}", server.base))
            .json(&json!({}))
            .send()
            .await?;
        if !resp.status().is_success() {
            bail!("creating the board answered {}", resp.status());
        }
        let rss_before = server.rss().unwrap_or(0);
        let redis_before = match redis.as_mut() {
            Some(c) => redis_used_memory(c).await?,
            None => 0,
        };
        let mut progress = Progress::new(label, n);
        let mut done = 0;
        let starts: Vec<u64> = (0..n).step_by(LOAD_BATCH as usize).collect();
        for wave in starts.chunks(LOAD_CONCURRENCY) {
            let mut tasks = Vec::with_capacity(wave.len());
            for &start in wave {
                let end = (start + LOAD_BATCH).min(n);
                let entries: Vec<_> = (start..end)
                    .map(|i| json!({"member": member(i), "score": initial_score(i), "op": "set"}))
                    .collect();
                let req = http
                    .post(format!("{}/v1/boards/{BOARD}/scores:batch", server.base))
                    .json(&json!({ "entries": entries }));
                tasks.push(tokio::spawn(async move { req.send().await }));
            }
            for (t, &start) in tasks.into_iter().zip(wave) {
                let resp = t.await??;
                if !resp.status().is_success() {
                    bail!("loading answered {}", resp.status());
                }
                done += (start + LOAD_BATCH).min(n) - start;
            }
            progress.set(done);
        }
        progress.done();
        let memory = match redis.as_mut() {
            Some(c) => Memory::Redis(
                redis_used_memory(c).await?.saturating_sub(redis_before) as f64 / n.max(1) as f64,
            ),
            None => Memory::Rss(
                server.rss().unwrap_or(0).saturating_sub(rss_before) as f64 / n.max(1) as f64,
            ),
        };
        Ok((Self::Http { server, http }, memory))
    }

    /// Raw Redis at `url` (process `pid`), loaded with `n` members scored the seed-000 way.
    pub async fn seed(url: &str, pid: Option<u32>, n: u64) -> Result<(Self, Memory)> {
        let client = redis::Client::open(url)?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        let before = redis_used_memory(&mut conn).await?;
        let mut progress = Progress::new("redis (seed 000)", n);
        let frac = seed_fraction();
        for start in (0..n).step_by(LOAD_BATCH as usize) {
            let end = (start + LOAD_BATCH).min(n);
            let mut cmd = redis::cmd("ZADD");
            cmd.arg(SEED_KEY);
            for i in start..end {
                cmd.arg(initial_score(i) as f64 + frac).arg(member(i));
            }
            cmd.query_async::<i64>(&mut conn).await?;
            progress.set(end);
        }
        progress.done();
        let per =
            redis_used_memory(&mut conn).await?.saturating_sub(before) as f64 / n.max(1) as f64;
        let target = Self::Seed {
            pid,
            conn,
            incr: Arc::new(Script::new(SEED_INCR)),
            rank: Arc::new(Script::new(SEED_RANK)),
        };
        Ok((target, Memory::Redis(per)))
    }

    /// Resident memory of the target's server process, if it has one.
    pub fn server_rss(&self) -> Option<u64> {
        match self {
            Target::Http { server, .. } => server.rss(),
            _ => None,
        }
    }

    /// The process that does the target's work: this one for the engine, the Photofinish
    /// server, or redis-server. With a Redis backend, Redis's own CPU is counted apart.
    pub fn worker_pid(&self) -> Option<u32> {
        match self {
            Target::Engine { .. } => Some(std::process::id()),
            Target::Http { server, .. } => server.pid(),
            Target::Seed { pid, .. } => *pid,
        }
    }
}

/// A cheap per-client handle on a target.
#[derive(Clone)]
pub enum Client {
    /// See [`Target::Engine`].
    Engine(Arc<RwLock<Ranking>>, Arc<AtomicI64>),
    /// See [`Target::Http`].
    Http(reqwest::Client, String),
    /// See [`Target::Seed`].
    Seed(MultiplexedConnection, Arc<Script>, Arc<Script>),
}

impl Target {
    /// A handle for one client.
    pub fn client(&self) -> Client {
        match self {
            Target::Engine { ranking, clock } => Client::Engine(ranking.clone(), clock.clone()),
            Target::Http { server, http } => Client::Http(http.clone(), server.base.clone()),
            Target::Seed {
                conn, incr, rank, ..
            } => Client::Seed(conn.clone(), incr.clone(), rank.clone()),
        }
    }
}

impl Client {
    /// One operation on member `i`, synchronously (the engine only).
    pub fn engine_op(
        ranking: &RwLock<Ranking>,
        clock: &AtomicI64,
        op: Op,
        i: u64,
        delta: i64,
    ) -> Result<()> {
        let name = member(i);
        let ok = match op {
            Op::Write => {
                let mut r = ranking.write().map_err(|_| anyhow!("poisoned"))?;
                r.submit(&Write {
                    member: &name,
                    op: Some(CoreOp::Incr),
                    values: photofinish_core::Operands::one(delta),
                    at_us: clock.fetch_add(1, Ordering::Relaxed),
                    metadata: None,
                    partition: None,
                    team: None,
                    hidden: false,
                })
                .is_ok()
            }
            Op::Rank => {
                let r = ranking.read().map_err(|_| anyhow!("poisoned"))?;
                r.member(&name, RankStyle::Ordinal).is_some()
            }
            Op::Top10 => {
                let r = ranking.read().map_err(|_| anyhow!("poisoned"))?;
                r.page(0, 10, RankStyle::Ordinal).len() == 10
            }
            Op::Around => {
                let r = ranking.read().map_err(|_| anyhow!("poisoned"))?;
                r.around(&name, 5, 5, RankStyle::Ordinal).is_some()
            }
        };
        if ok {
            Ok(())
        } else {
            bail!("engine {op:?} failed")
        }
    }

    /// One operation on member `i` over the network.
    pub async fn op(&mut self, op: Op, i: u64, delta: i64) -> Result<()> {
        let name = member(i);
        match self {
            Client::Engine(r, c) => Self::engine_op(r, c, op, i, delta),
            Client::Http(http, base) => {
                let req = match op {
                    Op::Write => http
                        .post(format!("{base}/v1/boards/{BOARD}/scores"))
                        .json(&json!({"member": name, "score": delta})),
                    Op::Rank => http.get(format!("{base}/v1/boards/{BOARD}/members/{name}")),
                    Op::Top10 => http.get(format!("{base}/v1/boards/{BOARD}/entries?limit=10")),
                    Op::Around => http.get(format!(
                        "{base}/v1/boards/{BOARD}/members/{name}/around?before=5&after=5"
                    )),
                };
                let resp = req.send().await?;
                let status = resp.status();
                resp.bytes().await?;
                if !status.is_success() {
                    bail!("{op:?} answered {status}");
                }
                Ok(())
            }
            Client::Seed(conn, incr, rank) => {
                match op {
                    Op::Write => {
                        incr.key(SEED_KEY)
                            .key(&name)
                            .arg(delta)
                            .arg(seed_fraction())
                            .invoke_async::<i64>(conn)
                            .await?;
                    }
                    Op::Rank => {
                        rank.key(SEED_KEY)
                            .key(&name)
                            .invoke_async::<redis::Value>(conn)
                            .await?;
                    }
                    Op::Top10 => {
                        redis::cmd("ZREVRANGE")
                            .arg(SEED_KEY)
                            .arg(0)
                            .arg(9)
                            .arg("WITHSCORES")
                            .query_async::<redis::Value>(conn)
                            .await?;
                    }
                    Op::Around => {
                        // What the seeds do: the rank, then the window, two round trips.
                        let pos: Option<i64> = redis::cmd("ZREVRANK")
                            .arg(SEED_KEY)
                            .arg(&name)
                            .query_async(conn)
                            .await?;
                        let pos = pos.ok_or_else(|| anyhow!("member missing"))?;
                        redis::cmd("ZREVRANGE")
                            .arg(SEED_KEY)
                            .arg((pos - 5).max(0))
                            .arg(pos + 5)
                            .arg("WITHSCORES")
                            .query_async::<redis::Value>(conn)
                            .await?;
                    }
                }
                Ok(())
            }
        }
    }
}
