//! `claim-http`: a claim beside a write, over HTTP (docs/SPEC.md §16: a claim costs no more
//! than a write). A Photofinish server on the embedded store (this binary's `__serve`)
//! holds two boards of `members` members each, imported: `cup`, without a reset, whose
//! single period closes a few seconds after the import and pays ranks 1 to `grants`, and
//! `open`, an `incr` board. Once `cup`'s grants are made, `clients` connections claim
//! every grant once, in a shuffled order (`POST /v1/members/{m}/rewards/{id}/claim`),
//! and make as many writes of random members of `open` (`POST /v1/boards/open/scores`):
//! in [`ROUNDS`] paired rounds, a tenth of each a round, which side goes first
//! alternating, so a drift of the machine (a snapshot after the imports, the CPU's
//! clock) weighs on both alike. Each side's throughput (its requests over its own time)
//! and latency (p50, p99, longest) are reported; neither sends an `Idempotency-Key`.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{ensure, Context, Result};
use serde_json::{json, Value};

use crate::targets::ServerProc;
use crate::workload::Rng;

/// Seconds from the start to `cup`'s close: the imports fit well inside.
const LEAD_S: u64 = 20;
/// Paired rounds of claims and writes.
const ROUNDS: usize = 10;

/// One side's numbers: requests a second, p50 / p99 / longest, ms, and the server's CPU
/// time a request, µs (user and system, read in ticks of 10 ms around each round).
pub struct Side {
    pub per_s: f64,
    pub ms: (f64, f64, f64),
    pub cpu_us: f64,
}

/// What one run measured.
pub struct ClaimHttp {
    pub members: u64,
    pub grants: u64,
    pub clients: usize,
    pub claims: Side,
    pub writes: Side,
}

impl ClaimHttp {
    /// The human table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "claim-http: boards of {} members, {} grants claimed once, {} connections, HTTP, embedded store\n",
            self.members, self.grants, self.clients
        );
        let mut row = |what: &str, s: &Side| {
            let (p50, p99, max) = s.ms;
            out += &format!(
                "{what:<34} {:>9.0}/s   p50 / p99 / max {p50:.2} / {p99:.2} / {max:.1} ms   server CPU {:.1} µs a request\n",
                s.per_s, s.cpu_us
            );
        };
        row("claims (each grant once)", &self.claims);
        row("writes (incr, random members)", &self.writes);
        out
    }

    /// The one-line JSON form.
    pub fn json(&self) -> Value {
        let side = |s: &Side| json!({"per_s": s.per_s, "ms": [s.ms.0, s.ms.1, s.ms.2], "cpu_us": s.cpu_us});
        json!({
            "members": self.members,
            "grants": self.grants,
            "clients": self.clients,
            "claims": side(&self.claims),
            "writes": side(&self.writes),
        })
    }
}

/// The member at ordinal rank `rank` of `cup` (scores are imported best first).
fn member(i: u64) -> String {
    format!("p{i:010}")
}

/// Runs the scenario. See the module docs.
pub async fn run(members: u64, grants: u64, clients: usize) -> Result<ClaimHttp> {
    ensure!(
        grants > 0 && grants <= members && clients > 0,
        "--grants must be 1 to --members, and --clients at least 1"
    );
    let dir = tempfile::tempdir().context("a temp data dir")?;
    let server = ServerProc::start(&[
        "--data-dir".into(),
        dir.path().display().to_string(),
        "--fsync".into(),
        "everysec".into(),
    ])
    .await?;
    let http = reqwest::Client::new();
    prepare(&http, &server.base, members, grants).await?;
    let (claims, writes) = requests(&server.base, members, grants);
    let pid = server.pid().context("the server's pid")?;
    let (claimed, written) = paired_rounds(&http, clients, pid, &claims, &writes).await?;
    drop(server);
    Ok(ClaimHttp {
        members,
        grants,
        clients,
        claims: claimed.side(),
        writes: written.side(),
    })
}

/// Creates and fills `cup` and `open`, then waits past `cup`'s close for its grants.
async fn prepare(http: &reqwest::Client, base: &str, members: u64, grants: u64) -> Result<()> {
    let now_us = SystemTime::now().duration_since(UNIX_EPOCH)?.as_micros() as i64;
    let closes = now_us / 1_000_000 + LEAD_S as i64;
    let ends_at = Instant::now() + Duration::from_secs(LEAD_S + 1);
    put(
        http,
        base,
        "cup",
        json!({"update": "best", "closes_at": rfc3339(closes)?,
        "rewards": [{"from": 1, "to": grants, "reward": "coin", "amount": 10}]}),
    )
    .await?;
    put(http, base, "open", json!({"update": "incr"})).await?;
    for board in ["cup", "open"] {
        import(http, base, board, members).await?;
    }
    ensure!(
        Instant::now() < ends_at,
        "the imports took longer than {LEAD_S} s"
    );
    tokio::time::sleep_until(ends_at.into()).await;
    wait_for_grants(http, base, grants).await
}

/// A request: its URL and its JSON body (`Null` for none).
type Request = (String, Value);

/// The claims (each grant once, shuffled; grant n is paid to rank n) and as many writes
/// of random members of `open`.
fn requests(base: &str, members: u64, grants: u64) -> (Vec<Request>, Vec<Request>) {
    let mut rng = Rng::new(5);
    let mut order: Vec<u64> = (1..=grants).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    let claims = order
        .iter()
        .map(|&n| {
            let url = format!(
                "{base}/v1/members/{}/rewards/cup:all:{n}/claim",
                member(n - 1)
            );
            (url, Value::Null)
        })
        .collect();
    let writes = (0..grants)
        .map(|_| {
            let m = member(rng.next_u64() % members);
            (
                format!("{base}/v1/boards/open/scores"),
                json!({"member": m, "score": 1}),
            )
        })
        .collect();
    (claims, writes)
}

/// Sends the claims and the writes in [`ROUNDS`] paired rounds, which side first
/// alternating, timing each side and the server's (`pid`) CPU time in it.
async fn paired_rounds(
    http: &reqwest::Client,
    clients: usize,
    pid: u32,
    claims: &[Request],
    writes: &[Request],
) -> Result<(Timed, Timed)> {
    let (mut claimed, mut written) = (Timed::default(), Timed::default());
    let cpu = || crate::targets::cpu_seconds(pid).unwrap_or(f64::NAN);
    let per_round = claims.len().div_ceil(ROUNDS);
    for (round, (c, w)) in claims
        .chunks(per_round)
        .zip(writes.chunks(per_round))
        .enumerate()
    {
        for side in [round % 2, 1 - round % 2] {
            let (timed, work) = match side {
                0 => (&mut claimed, c),
                _ => (&mut written, w),
            };
            let before = cpu();
            let (ms, secs) = drive(http, clients, work.to_vec()).await?;
            timed.add(ms, secs, cpu() - before);
        }
    }
    Ok((claimed, written))
}

/// One side's rounds: its latencies, its own time and the server's CPU time in it.
#[derive(Default)]
struct Timed {
    ms: Vec<f64>,
    secs: f64,
    cpu_s: f64,
}

impl Timed {
    fn add(&mut self, ms: Vec<f64>, secs: f64, cpu_s: f64) {
        self.ms.extend(ms);
        self.secs += secs;
        self.cpu_s += cpu_s;
    }

    fn side(self) -> Side {
        let n = self.ms.len() as f64;
        Side {
            per_s: n / self.secs,
            cpu_us: self.cpu_s / n * 1e6,
            ms: percentiles(self.ms),
        }
    }
}

/// An RFC 3339 instant of Unix seconds `s`.
fn rfc3339(s: i64) -> Result<String> {
    Ok(jiff::Timestamp::from_second(s)?.to_string())
}

/// p50, p99 and the longest of `ms` (zeros when empty).
pub(crate) fn percentiles(mut ms: Vec<f64>) -> (f64, f64, f64) {
    if ms.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99), ms[ms.len() - 1])
}

/// Creates `board` with config `body`.
pub(crate) async fn put(
    http: &reqwest::Client,
    base: &str,
    board: &str,
    body: Value,
) -> Result<()> {
    let r = http
        .put(format!("{base}/v1/boards/{board}"))
        .json(&body)
        .send()
        .await?;
    ensure!(
        r.status().is_success(),
        "create {board}: {}",
        r.text().await?
    );
    Ok(())
}

/// Imports `members` members into `board`, member i scoring `members - i`.
async fn import(http: &reqwest::Client, base: &str, board: &str, members: u64) -> Result<()> {
    let mut body = String::with_capacity(members as usize * 40);
    for i in 0..members {
        body += &format!(
            "{{\"member\":\"{}\",\"score\":{}}}\n",
            member(i),
            members - i
        );
    }
    post_import(http, base, board, body).await
}

/// Imports `ndjson` (a line an entry) into `board`.
pub(crate) async fn post_import(
    http: &reqwest::Client,
    base: &str,
    board: &str,
    ndjson: String,
) -> Result<()> {
    let r = http
        .post(format!("{base}/v1/boards/{board}/import"))
        .header("content-type", "application/x-ndjson")
        .body(ndjson)
        .send()
        .await?;
    ensure!(r.status().is_success(), "import: {}", r.text().await?);
    Ok(())
}

/// Waits (up to a minute) for `cup`'s grants, `grants` of them.
async fn wait_for_grants(http: &reqwest::Client, base: &str, grants: u64) -> Result<()> {
    let url = format!("{base}/v1/boards/cup/periods/all/rewards?limit=1");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let g: Value = http.get(&url).send().await?.json().await?;
        if g["granted"] == json!(true) {
            ensure!(
                g["total"].as_u64() == Some(grants),
                "the close made {} grants, not {grants}",
                g["total"]
            );
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "no grants a minute after the close"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Posts every request (URL, JSON body or none) once through `clients` connections, each
/// required to succeed: the latencies, ms, and the seconds it took.
async fn drive(
    http: &reqwest::Client,
    clients: usize,
    work: Vec<Request>,
) -> Result<(Vec<f64>, f64)> {
    let work = Arc::new(work);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, work, next) = (http.clone(), work.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut ms = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((url, body)) = work.get(i) else {
                    return Ok::<_, anyhow::Error>(ms);
                };
                let t = Instant::now();
                let mut req = http.post(url);
                if !body.is_null() {
                    req = req.json(body);
                }
                let r = req.send().await?;
                ensure!(r.status().is_success(), "{url}: {}", r.text().await?);
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    Ok((all, started.elapsed().as_secs_f64()))
}
