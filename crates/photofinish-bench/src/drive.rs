//! Driving a loaded target: `clients` concurrent clients run the mix for the set time, each
//! timing every operation; then the latencies are merged into percentiles and one table row.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{json, Value};

use crate::targets::{cpu_seconds, Client, Memory, Target};
use crate::workload::{Mix, Op, Rng, Zipf};

/// What every target runs.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// How long each target is driven.
    pub duration: Duration,
    /// Concurrent clients.
    pub clients: usize,
    /// The operation mix.
    pub mix: Mix,
    /// Member popularity.
    pub zipf: Zipf,
}

impl Settings {
    /// The next operation: its kind, its member and, for writes, the increment (1..=100).
    fn draw(&self, rng: &mut Rng) -> (Op, u64, i64) {
        let op = self.mix.pick(rng.next_u64());
        let i = self.zipf.sample(rng);
        (op, i, (rng.next_u64() % 100 + 1) as i64)
    }
}

/// One target's results.
#[derive(Debug, Clone)]
pub struct Report {
    /// The target.
    pub label: String,
    /// Operations completed.
    pub ops: u64,
    /// Operations that failed.
    pub errors: u64,
    /// Seconds driven.
    pub secs: f64,
    /// Latency percentiles, µs: p50, p99, p99.9.
    pub p50_us: f64,
    /// See `p50_us`.
    pub p99_us: f64,
    /// See `p50_us`.
    pub p999_us: f64,
    /// Memory per member and how it was measured.
    pub memory: Memory,
    /// The server process's RSS after the run, bytes.
    pub rss: Option<u64>,
    /// CPU time the working process (engine: this process; HTTP: the Photofinish server;
    /// raw Redis: redis-server) spent per operation, µs.
    pub cpu_us_per_op: Option<f64>,
    /// For the HTTP server on Redis: redis-server's CPU time per operation, µs.
    pub redis_cpu_us_per_op: Option<f64>,
}

impl Report {
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.secs.max(1e-9)
    }
}

/// One client's tally: latencies in ns, and errors.
#[derive(Default)]
struct Tally {
    lat_ns: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

impl Tally {
    fn record(&mut self, started: Instant, result: Result<()>) {
        let ns = started.elapsed().as_nanos().min(u128::from(u32::MAX)) as u32;
        match result {
            Ok(()) => self.lat_ns.push(ns),
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

fn percentile(sorted: &[u32], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    f64::from(sorted[i.min(sorted.len() - 1)]) / 1000.0
}

/// Drives `target` and reports; `redis_pid` is the Redis behind an HTTP target, if any.
pub async fn drive(
    label: &str,
    target: &Target,
    memory: Memory,
    s: &Settings,
    redis_pid: Option<u32>,
) -> Result<Report> {
    eprintln!("  running {label} for {} s", s.duration.as_secs());
    let cpu = |pid: Option<u32>| pid.and_then(cpu_seconds);
    let (cpu0, redis_cpu0) = (cpu(target.worker_pid()), cpu(redis_pid));
    let started = Instant::now();
    let deadline = started + s.duration;
    let tallies = run_clients(target, s, deadline).await?;
    let secs = started.elapsed().as_secs_f64();
    let (cpu1, redis_cpu1) = (cpu(target.worker_pid()), cpu(redis_pid));
    let errors: u64 = tallies.iter().map(|t| t.errors).sum();
    if let Some(e) = tallies.iter().find_map(|t| t.first_error.clone()) {
        eprintln!("  {label}: {errors} operations failed; first: {e}");
    }
    let mut lat: Vec<u32> = tallies.into_iter().flat_map(|t| t.lat_ns).collect();
    lat.sort_unstable();
    let ops = lat.len() as u64;
    let per_op = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if ops > 0 => Some((b - a) * 1e6 / ops as f64),
        _ => None,
    };
    Ok(Report {
        label: label.to_owned(),
        ops,
        errors,
        secs,
        p50_us: percentile(&lat, 0.50),
        p99_us: percentile(&lat, 0.99),
        p999_us: percentile(&lat, 0.999),
        memory,
        rss: target.server_rss(),
        cpu_us_per_op: per_op(cpu0, cpu1),
        redis_cpu_us_per_op: per_op(redis_cpu0, redis_cpu1),
    })
}

/// Runs `s.clients` clients of `target` until `deadline`: each one's tally.
async fn run_clients(target: &Target, s: &Settings, deadline: Instant) -> Result<Vec<Tally>> {
    let mut tallies = Vec::with_capacity(s.clients);
    match target.client() {
        Client::Engine(ranking, clock) => {
            // In process, a client is an OS thread: more threads than cores would measure the
            // scheduler, not the engine.
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let threads = s.clients.min(cores);
            let handles: Vec<_> = (0..threads)
                .map(|c| {
                    let (ranking, clock, s) = (ranking.clone(), clock.clone(), *s);
                    std::thread::spawn(move || {
                        let mut rng = Rng::new(c as u64 + 1);
                        let mut t = Tally::default();
                        while Instant::now() < deadline {
                            let (op, i, delta) = s.draw(&mut rng);
                            let at = Instant::now();
                            t.record(at, Client::engine_op(&ranking, &clock, op, i, delta));
                        }
                        t
                    })
                })
                .collect();
            for h in handles {
                tallies.push(h.join().map_err(|_| anyhow::anyhow!("client panicked"))?);
            }
        }
        _ => {
            let handles: Vec<_> = (0..s.clients)
                .map(|c| {
                    let (mut client, s) = (target.client(), *s);
                    tokio::spawn(async move {
                        let mut rng = Rng::new(c as u64 + 1);
                        let mut t = Tally::default();
                        while Instant::now() < deadline {
                            let (op, i, delta) = s.draw(&mut rng);
                            let at = Instant::now();
                            let r = client.op(op, i, delta).await;
                            t.record(at, r);
                        }
                        t
                    })
                })
                .collect();
            for h in handles {
                tallies.push(h.await?);
            }
        }
    }
    Ok(tallies)
}

fn memory_cell(m: Memory) -> String {
    match m {
        Memory::Allocated(b) => format!("{b:.1} B (heap)"),
        Memory::Rss(b) => format!("{b:.1} B (rss)"),
        Memory::Redis(b) => format!("{b:.1} B (redis)"),
    }
}

fn cpu_cell(r: &Report) -> String {
    match (r.cpu_us_per_op, r.redis_cpu_us_per_op) {
        (Some(c), Some(rc)) => format!("{c:.1} µs + redis {rc:.1} µs"),
        (Some(c), None) => format!("{c:.1} µs"),
        _ => "-".into(),
    }
}

fn latency(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

/// The ratio of each target's throughput to the seed-style Redis target's, if it ran.
fn baseline(reports: &[Report]) -> Option<f64> {
    reports
        .iter()
        .find(|r| r.label.starts_with("redis"))
        .map(Report::ops_per_sec)
        .filter(|&b| b > 0.0)
}

/// Prints the table.
pub fn print_table(reports: &[Report]) {
    let base = baseline(reports);
    let head = [
        "target",
        "ops/s",
        "p50",
        "p99",
        "p99.9",
        "errors",
        "memory/member",
        "cpu/op",
        "vs redis",
    ];
    let rows: Vec<[String; 9]> = reports
        .iter()
        .map(|r| {
            [
                r.label.clone(),
                format!("{:.0}", r.ops_per_sec()),
                latency(r.p50_us),
                latency(r.p99_us),
                latency(r.p999_us),
                r.errors.to_string(),
                memory_cell(r.memory),
                cpu_cell(r),
                base.map_or("-".into(), |b| format!("{:.2}×", r.ops_per_sec() / b)),
            ]
        })
        .collect();
    let mut width = head.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let parts: Vec<String> = cells
            .iter()
            .zip(width)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = w - c.chars().count();
                if i == 0 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        println!("{}", parts.join("  "));
    };
    line(head.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        line(row.to_vec());
    }
}

/// The results as JSON.
pub fn json(reports: &[Report]) -> Value {
    let base = baseline(reports);
    Value::Array(
        reports
            .iter()
            .map(|r| {
                let (kind, bytes) = match r.memory {
                    Memory::Allocated(b) => ("heap", b),
                    Memory::Rss(b) => ("rss", b),
                    Memory::Redis(b) => ("redis", b),
                };
                json!({
                    "target": r.label,
                    "ops": r.ops,
                    "ops_per_sec": r.ops_per_sec(),
                    "errors": r.errors,
                    "p50_us": r.p50_us,
                    "p99_us": r.p99_us,
                    "p999_us": r.p999_us,
                    "bytes_per_member": bytes,
                    "memory_measured_as": kind,
                    "server_rss": r.rss,
                    "cpu_us_per_op": r.cpu_us_per_op,
                    "redis_cpu_us_per_op": r.redis_cpu_us_per_op,
                    "vs_redis": base.map(|b| r.ops_per_sec() / b),
                })
            })
            .collect(),
    )
}
