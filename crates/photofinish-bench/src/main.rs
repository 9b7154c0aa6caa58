//! `photofinish-bench`: one command that measures Photofinish beside the seeds' Redis
//! approach. It starts what it needs (its own `redis-server` on a free loopback port, its own
//! Photofinish servers on a temp data dir and on that Redis), loads the same N members into
//! each target, drives the same Zipf-skewed mix for a fixed time from N concurrent clients,
//! and prints one table. See docs/BENCHMARKS.md.

mod alloc;
mod board_ops;
mod claim_http;
mod drive;
mod engine_ops;
mod erase;
mod latency;
mod league_close;
mod partition_ops;
mod progress;
mod rewards_ops;
mod targets;
mod workload;

use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use photofinish_testkit::redis::RedisProcess;

use crate::drive::{drive, Report, Settings};
use crate::targets::Target;
use crate::workload::Mix;

/// Counts live heap bytes (for the engine's memory per member) on top of mimalloc.
#[global_allocator]
static GLOBAL: alloc::Counting<mimalloc::MiMalloc> = alloc::Counting::new(mimalloc::MiMalloc);

#[derive(Debug, Parser)]
#[command(name = "photofinish-bench", version, about)]
struct Args {
    #[command(subcommand)]
    serve: Option<Internal>,
    /// Members loaded into each target (16-byte ids).
    #[arg(long, default_value_t = 1_000_000)]
    members: u64,
    /// Seconds each target is driven.
    #[arg(long, default_value_t = 20)]
    duration: u64,
    /// Concurrent clients: HTTP connections or Redis requests in flight; for the engine, OS
    /// threads, at most one per core.
    #[arg(long, default_value_t = 50)]
    clients: usize,
    /// Weights of writes, rank lookups, top-10 pages and around(5,5) windows.
    #[arg(long, default_value = "40,40,10,10")]
    mix: String,
    /// Zipf exponent of member popularity (0 = uniform).
    #[arg(long, default_value_t = 0.99)]
    zipf: f64,
    /// Targets to run, comma-separated: engine, http, http-redis (the Redis backend,
    /// docs/redis-layout.md), http-redis-local (the same with `--redis-reads local`),
    /// redis.
    #[arg(long, default_value = "engine,http,http-redis,redis")]
    targets: String,
    /// fsync policy of the embedded HTTP target.
    #[arg(long, default_value = "everysec")]
    fsync: String,
    /// Request threads of the HTTP servers the harness starts, as `serve --workers`
    /// (default: one per core).
    #[arg(long)]
    server_workers: Option<std::num::NonZeroUsize>,
    /// A smoke run: 20,000 members, 3 s per target, 8 clients (under a minute).
    #[arg(long)]
    quick: bool,
    /// Also print the results as JSON on the last line.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum Internal {
    /// (internal) run a Photofinish server for the harness; stops when stdin closes.
    #[command(name = "__serve", hide = true)]
    Serve {
        #[arg(long)]
        data_dir: Option<std::path::PathBuf>,
        #[arg(long)]
        storage: Option<String>,
        #[arg(long, default_value = "everysec")]
        fsync: String,
        /// `local`: the Redis backend's reads answer from the node's copy.
        #[arg(long)]
        local_reads: bool,
        #[arg(long, default_value = "pf")]
        redis_namespace: String,
        /// Microseconds added to the server's clock (a scenario that crosses a period's end).
        #[arg(long, allow_hyphen_values = true)]
        clock_offset_us: Option<i64>,
        /// Request threads (default: one per core).
        #[arg(long)]
        workers: Option<std::num::NonZeroUsize>,
    },
    /// Heap bytes per remembered idempotency key in the embedded store's table (counted
    /// by the allocator), for N keys of single writes.
    #[command(name = "idempotency-memory")]
    IdempotencyMemory {
        #[arg(long, default_value_t = 1_000_000)]
        keys: u64,
    },
    /// The ranking engine alone, one thread: a board of N 16-byte ids built in bulk, then
    /// the mean time of each operation over random members, and bytes per member.
    #[command(name = "engine-ops")]
    EngineOps {
        #[arg(long, default_value_t = 10_000_000)]
        members: u64,
        /// Random members each operation is timed over.
        #[arg(long, default_value_t = 1_000_000)]
        ops: usize,
        /// Columns the board ranks by (docs/SPEC.md §13), 1 to 5.
        #[arg(long, default_value_t = 1)]
        columns: usize,
        /// Also print the results as one JSON line, last.
        #[arg(long)]
        json: bool,
    },
    /// What cohorts cost a board (docs/SPEC.md §14): a plain board and one with
    /// cohort_size, each written member by member, then updates on each and a member's
    /// cohort and member answers, one thread.
    #[command(name = "board-ops")]
    BoardOps {
        #[arg(long, default_value_t = 1_000_000)]
        members: u64,
        /// Random members each update is timed over (reads over a tenth of it).
        #[arg(long, default_value_t = 1_000_000)]
        ops: usize,
        /// Members per cohort.
        #[arg(long, default_value_t = 50)]
        cohort_size: u32,
        /// Also print the results as one JSON line, last.
        #[arg(long)]
        json: bool,
    },
    /// What partitions and teams cost a ranking (docs/SPEC.md §17): a plain board, one
    /// whose members are in P partitions and one with teams of 50 too, updates timed in
    /// rotating rounds, and their reads, one thread.
    #[command(name = "partition-ops")]
    PartitionOps {
        #[arg(long, default_value_t = 1_000_000)]
        members: u64,
        /// Random members each round's updates are timed over (reads over a tenth).
        #[arg(long, default_value_t = 1_000_000)]
        ops: usize,
        /// Partitions the members are spread over.
        #[arg(long, default_value_t = 200)]
        partitions: u32,
        /// Rounds of updates, the two boards alternating which goes first.
        #[arg(long, default_value_t = 6)]
        rounds: usize,
        /// Also print the results as one JSON line, last.
        #[arg(long)]
        json: bool,
    },
    /// A league's close under load (docs/SPEC.md §14): an HTTP server on the embedded
    /// store with a daily league board of N members, its period closed while other
    /// boards take writes; the close's wall time and the other writes' latency.
    #[command(name = "league-close")]
    LeagueClose {
        #[arg(long, default_value_t = 1_000_000)]
        members: u64,
        /// Connections writing to the other boards.
        #[arg(long, default_value_t = 16)]
        clients: usize,
        /// Reward rows granting ranks 1 to K of each cohort (docs/SPEC.md §16): the close
        /// then grants K per cohort (5: 100,000 of a million members); 0, none.
        #[arg(long, default_value_t = 0)]
        rewards_per_cohort: u64,
        /// Also print the results as one JSON line, last.
        #[arg(long)]
        json: bool,
    },
    /// What rewards cost a board (docs/SPEC.md §16): the close step that makes a period's
    /// grants, beside one with no rows, and a claim beside an update.
    #[command(name = "rewards-ops")]
    RewardsOps {
        #[arg(long, default_value_t = 1_000_000)]
        members: u64,
        /// Ranks 1 to G paid: the grants the close makes.
        #[arg(long, default_value_t = 100_000)]
        grants: u64,
        /// Also print the results as one JSON line, last.
        #[arg(long)]
        json: bool,
    },
    /// A claim beside a write, over HTTP (docs/SPEC.md §16): every grant of a closed
    /// board claimed once through C connections, then as many writes to a board of the
    /// same size; each side's rate and latency.
    #[command(name = "claim-http")]
    ClaimHttp {
        #[arg(long, default_value_t = 1_000_000)]
        members: u64,
        /// Ranks 1 to G paid: the grants claimed.
        #[arg(long, default_value_t = 100_000)]
        grants: u64,
        /// Connections.
        #[arg(long, default_value_t = 16)]
        clients: usize,
        /// Also print the results as one JSON line, last.
        #[arg(long)]
        json: bool,
    },
    /// A member erased everywhere (docs/SPEC.md §16): B boards each holding it, on the
    /// embedded store and on a Redis the harness starts; each erase's wall time.
    #[command(name = "erase")]
    Erase {
        #[arg(long, default_value_t = 10_000)]
        boards: u64,
        /// Erases timed per backend (the member written to every board before each).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Backends: embedded, redis.
        #[arg(long, default_value = "embedded,redis")]
        backends: String,
        /// Also print the results as one JSON line, last.
        #[arg(long)]
        json: bool,
    },
    /// What one cache miss costs here: a chain of dependent loads through buffers of each
    /// size, and four such chains interleaved (overlapped misses).
    #[command(name = "memory-latency")]
    MemoryLatency {
        /// Buffer sizes in MiB.
        #[arg(long, value_delimiter = ',', default_values_t = [4, 64, 1024])]
        mib: Vec<usize>,
        /// Loads timed per size.
        #[arg(long, default_value_t = 5_000_000)]
        loads: usize,
    },
}

/// The erase scenario ([`erase`]) on each of `backends`.
async fn erase_bench(boards: u64, rounds: usize, backends: &str) -> Result<Vec<erase::Erased>> {
    let scratch = tempfile::tempdir()?;
    let mut runs = Vec::new();
    for backend in backends.split(',').map(str::trim) {
        let run = match backend {
            "embedded" => {
                let dir = scratch.path().join("data").display().to_string();
                let args = [
                    "--data-dir".to_owned(),
                    dir,
                    "--fsync".into(),
                    "always".into(),
                ];
                erase::run("embedded", &args, boards, rounds).await?
            }
            "redis" => {
                let dir = scratch.path().join("redis");
                let redis = tokio::task::spawn_blocking(move || RedisProcess::start(&dir, &[]))
                    .await?
                    .context("starting redis-server (install Debian's redis-server package)")?;
                let args = ["--storage".to_owned(), redis.url()];
                erase::run("redis", &args, boards, rounds).await?
            }
            other => anyhow::bail!("unknown backend {other:?}: embedded or redis"),
        };
        runs.push(run);
    }
    Ok(runs)
}

/// Fills the embedded store's idempotency table with `n` keys, each the answer of one write
/// (what a keyed submit remembers), and prints the heap bytes per key.
fn idempotency_memory(n: u64) {
    use photofinish_core::idempotency::{digest, Answer};
    use photofinish_core::op::WriteOutcome;
    use photofinish_store::idempotency::{Remembered, Table};
    let before = alloc::live_bytes();
    let mut table = Table::new(usize::try_from(n).unwrap_or(usize::MAX));
    for i in 0..n {
        let id = format!("key:game\u{1}bench\u{1}{i:08x}-{:016}", i * 7);
        let answer = Answer::Written(WriteOutcome {
            columns: Default::default(),
            outcome: photofinish_core::Outcome {
                scores: photofinish_core::Scores::one(i as i64),
                rank: i + 1,
                reached_at_us: 1_700_000_000_000_000 + i as i64,
                changed: true,
                partition_rank: None,
            },
            period: photofinish_core::Period {
                id: "2026-W48".into(),
                start_us: 0,
                end_us: 1,
            },
            partition: None,
            team: None,
        });
        let fingerprint = [(i % 251) as u8; 16];
        let expires_us = 1_800_000_000_000_000 + i as i64;
        table.insert(
            digest(&id),
            Remembered {
                fingerprint,
                expires_us,
                answer,
            },
        );
    }
    let bytes = alloc::live_bytes().saturating_sub(before);
    println!(
        "{n} keys: {bytes} heap bytes, {:.0} bytes per remembered key",
        bytes as f64 / n as f64
    );
    drop(table);
}

async fn serve(
    data_dir: Option<std::path::PathBuf>,
    storage: Option<String>,
    fsync: &str,
    local_reads: bool,
    redis_namespace: String,
    clock_offset_us: Option<i64>,
) -> Result<()> {
    use photofinish_server::serve::ServeOptions;
    use tokio::io::AsyncReadExt;
    let opts = ServeOptions {
        listen: "127.0.0.1:0".into(),
        data_dir: data_dir.unwrap_or_else(|| "./photofinish-data".into()),
        fsync: photofinish_store::FsyncPolicy::parse(fsync).context("fsync policy")?,
        storage,
        redis_namespace,
        redis_reads: if local_reads {
            photofinish_redis::node::Reads::Local
        } else {
            photofinish_redis::node::Reads::Fresh
        },
        clock: match clock_offset_us {
            Some(offset) => photofinish_server::serve::SharedClock(std::sync::Arc::new(
                photofinish_core::clock::OffsetClock::new(offset),
            )),
            None => photofinish_server::serve::SharedClock::default(),
        },
        ..ServeOptions::default()
    };
    let stdin_closed = async {
        let mut buf = [0u8; 64];
        let mut stdin = tokio::io::stdin();
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    };
    photofinish_server::serve::serve(
        opts,
        |bound| println!("photofinish listening on http://{}", bound.http),
        stdin_closed,
    )
    .await?;
    Ok(())
}

async fn run(mut args: Args) -> Result<()> {
    if args.quick {
        args.members = 20_000;
        args.duration = 3;
        args.clients = 8;
    }
    let settings = Settings {
        duration: Duration::from_secs(args.duration),
        clients: args.clients.max(1),
        mix: Mix::parse(&args.mix).map_err(anyhow::Error::msg)?,
        zipf: workload::Zipf::new(args.members, args.zipf),
    };
    let wanted: Vec<&str> = args.targets.split(',').map(str::trim).collect();
    let n = args.members;
    eprintln!(
        "photofinish-bench: {n} members, {} s per target, {} clients, mix {} (write,rank,top10,around), zipf {}",
        args.duration, settings.clients, args.mix, args.zipf
    );
    let mut reports: Vec<Report> = Vec::new();
    let scratch = tempfile::tempdir()?;
    let needs_redis = wanted
        .iter()
        .any(|t| matches!(*t, "http-redis" | "http-redis-local" | "redis"));
    let redis = if needs_redis {
        let dir = scratch.path().join("redis");
        Some(
            tokio::task::spawn_blocking(move || RedisProcess::start(&dir, &[]))
                .await?
                .context("starting redis-server (install Debian's redis-server package)")?,
        )
    } else {
        None
    };
    for t in &wanted {
        let report = run_target(t, &args, &settings, scratch.path(), redis.as_ref()).await?;
        reports.push(report);
    }
    drive::print_table(&reports);
    if args.json {
        println!("{}", serde_json::to_string(&drive::json(&reports))?);
    }
    Ok(())
}

impl Args {
    /// `--workers N` for a `__serve` child, when `--server-workers` was given.
    fn workers_arg(&self) -> Vec<String> {
        self.server_workers
            .map(|n| vec!["--workers".to_owned(), n.to_string()])
            .unwrap_or_default()
    }
}

/// Loads and drives one target of `--targets`.
async fn run_target(
    t: &str,
    args: &Args,
    settings: &Settings,
    scratch: &std::path::Path,
    redis: Option<&RedisProcess>,
) -> Result<Report> {
    let n = args.members;
    let report = match t {
        "engine" => {
            let (target, memory) = Target::engine(n, alloc::live_bytes)?;
            drive("engine (in process)", &target, memory, settings, None).await?
        }
        "http" => {
            let dir = scratch.join("data");
            let mut serve_args = vec![
                "--data-dir".to_owned(),
                dir.to_string_lossy().into_owned(),
                "--fsync".to_owned(),
                args.fsync.clone(),
            ];
            serve_args.extend(args.workers_arg());
            let (target, memory) = Target::http("http (embedded)", n, &serve_args, None).await?;
            let label = format!("http, embedded, fsync {}", args.fsync);
            drive(&label, &target, memory, settings, None).await?
        }
        "http-redis" | "http-redis-local" => {
            let local = t == "http-redis-local";
            let url = redis.context("redis")?.url();
            let conn = redis::Client::open(url.as_str())?
                .get_multiplexed_async_connection()
                .await?;
            // Each on a namespace of its own in the one Redis.
            let mut serve_args = vec!["--storage".to_owned(), url];
            serve_args.extend(args.workers_arg());
            if local {
                serve_args.extend([
                    "--local-reads".into(),
                    "--redis-namespace".into(),
                    "pflocal".into(),
                ]);
            }
            let (target, memory) = Target::http("http (redis)", n, &serve_args, Some(conn)).await?;
            let redis_pid = redis.and_then(RedisProcess::pid);
            let label = if local {
                "http, redis backend, local reads"
            } else {
                "http, redis backend"
            };
            drive(label, &target, memory, settings, redis_pid).await?
        }
        "redis" => {
            let url = redis.context("redis")?.url();
            let pid = redis.and_then(RedisProcess::pid);
            let (target, memory) = Target::seed(&url, pid, n).await?;
            drive("redis, seed 000 Lua", &target, memory, settings, None).await?
        }
        other => anyhow::bail!(
            "unknown target {other:?}: use engine, http, http-redis, http-redis-local, redis"
        ),
    };
    Ok(report)
}

/// Prints a measurement's table, and its JSON on a line of its own when asked for.
fn show(table: &str, json: Option<serde_json::Value>) {
    print!("{table}");
    if let Some(json) = json {
        println!("{json}");
    }
}

/// The async runtime: one thread per core, or for a `__serve` child as many request
/// threads as it was asked for.
fn runtime(args: &Args) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(Internal::Serve {
        workers: Some(n), ..
    }) = &args.serve
    {
        builder.worker_threads(n.get());
    }
    builder.build()
}

/// Runs one of the scenarios that are subcommands of their own (not `__serve`).
fn scenario(cmd: Internal, runtime: &tokio::runtime::Runtime) -> Result<()> {
    match cmd {
        Internal::Serve { .. } => anyhow::bail!("`__serve` is not a scenario"),
        Internal::LeagueClose {
            members,
            clients,
            rewards_per_cohort,
            json,
        } => runtime
            .block_on(league_close::run(members, clients, rewards_per_cohort))
            .map(|m| show(&m.table(), json.then(|| m.json()))),
        Internal::RewardsOps {
            members,
            grants,
            json,
        } => rewards_ops::run(members, grants).map(|m| show(&m.table(), json.then(|| m.json()))),
        Internal::ClaimHttp {
            members,
            grants,
            clients,
            json,
        } => runtime
            .block_on(claim_http::run(members, grants, clients))
            .map(|m| show(&m.table(), json.then(|| m.json()))),
        Internal::Erase {
            boards,
            rounds,
            backends,
            json,
        } => runtime
            .block_on(erase_bench(boards, rounds, &backends))
            .map(|runs| show(&erase::table(&runs), json.then(|| erase::json(&runs)))),
        Internal::IdempotencyMemory { keys } => {
            idempotency_memory(keys);
            Ok(())
        }
        Internal::EngineOps {
            members,
            ops,
            columns,
            json,
        } => {
            engine_ops::run(members, ops, columns).map(|m| show(&m.table(), json.then(|| m.json())))
        }
        Internal::BoardOps {
            members,
            ops,
            cohort_size,
            json,
        } => board_ops::run(members, ops, cohort_size)
            .map(|m| show(&m.table(), json.then(|| m.json()))),
        Internal::PartitionOps {
            members,
            ops,
            partitions,
            rounds,
            json,
        } => partition_ops::run(members, ops, partitions, rounds)
            .map(|m| show(&m.table(), json.then(|| m.json()))),
        Internal::MemoryLatency { mib, loads } => {
            let rows: Vec<_> = mib.iter().map(|&m| latency::run(m, loads)).collect();
            print!("{}", latency::table(&rows));
            Ok(())
        }
    }
}

fn main() -> std::process::ExitCode {
    let mut args = Args::parse();
    let runtime = match runtime(&args) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = match args.serve.take() {
        Some(Internal::Serve {
            data_dir,
            storage,
            fsync,
            local_reads,
            redis_namespace,
            clock_offset_us,
            workers: _,
        }) => runtime.block_on(serve(
            data_dir,
            storage,
            &fsync,
            local_reads,
            redis_namespace,
            clock_offset_us,
        )),
        Some(cmd) => scenario(cmd, &runtime),
        None => runtime.block_on(run(args)),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
