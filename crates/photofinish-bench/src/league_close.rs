//! A league's close under load, end to end (docs/SPEC.md §14, issue 44): a Photofinish
//! server on the embedded store (this binary's `__serve`, its clock moved so that a UTC
//! midnight comes a few seconds after the load) holds a daily league board of N members
//! in cohorts of 50 (4 tiers, 5 up and 5 down in each), imported. Meanwhile `clients`
//! connections write to four other boards. The period ends, the server's closer closes
//! it, and this reports the close's wall time (from the period's end to `closed` in the
//! moves answer, the closer's one-second tick included) and the other boards' write
//! latency — p50, p99 and the longest — in the seconds before the end and during the
//! close. With reward rows (ranks 1 to K of each cohort, docs/SPEC.md §16) the close also
//! grants K a cohort, and the close ends when the period's grants are made too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, ensure, Context, Result};
use serde_json::{json, Value};

use crate::targets::ServerProc;
use crate::workload::Rng;

const DAY_US: i64 = 86_400_000_000;
/// Seconds from the start to the server's midnight: the import of 1M members and the
/// writers' warm-up fit well inside.
const LEAD_S: u64 = 40;

/// What one run measured.
pub struct LeagueClose {
    pub members: u64,
    pub clients: usize,
    pub import_s: f64,
    pub close_s: f64,
    pub moves: u64,
    /// Grants the close made (0 without reward rows).
    pub grants: u64,
    /// (p50, p99, max) in ms of other boards' writes started in the 5 s before the end.
    pub before_ms: (f64, f64, f64),
    /// The same for writes started during the close.
    pub during_ms: (f64, f64, f64),
    pub writes_during: usize,
}

impl LeagueClose {
    /// The human table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "league-close: {} members in cohorts of 50, {} grants, {} writers on other boards, HTTP, embedded store\n",
            self.members, self.grants, self.clients
        );
        let mut row = |what: &str, v: String| out += &format!("{what:<58} {v:>22}\n");
        row(
            "import of the league board",
            format!("{:.2} s", self.import_s),
        );
        row(
            "close: period end to `closed` (closer tick included)",
            format!("{:.2} s ({} moves)", self.close_s, self.moves),
        );
        let ms = |(p50, p99, max): (f64, f64, f64)| format!("{p50:.2} / {p99:.2} / {max:.1} ms");
        row(
            "other boards' writes before, p50 / p99 / max",
            ms(self.before_ms),
        );
        row(
            &format!(
                "other boards' writes during ({}), p50 / p99 / max",
                self.writes_during
            ),
            ms(self.during_ms),
        );
        out
    }

    /// The one-line JSON form.
    pub fn json(&self) -> Value {
        json!({
            "members": self.members,
            "clients": self.clients,
            "import_s": self.import_s,
            "close_s": self.close_s,
            "moves": self.moves,
            "grants": self.grants,
            "before_ms": [self.before_ms.0, self.before_ms.1, self.before_ms.2],
            "during_ms": [self.during_ms.0, self.during_ms.1, self.during_ms.2],
            "writes_during": self.writes_during,
        })
    }
}

/// Runs the scenario. See the module docs.
pub async fn run(members: u64, clients: usize, rewards: u64) -> Result<LeagueClose> {
    ensure!(
        members > 0 && clients > 0,
        "--members and --clients must be at least 1"
    );
    let now_us = SystemTime::now().duration_since(UNIX_EPOCH)?.as_micros() as i64;
    let started = Instant::now();
    let midnight = (now_us / DAY_US + 1) * DAY_US;
    let offset = midnight - LEAD_S as i64 * 1_000_000 - now_us;
    let ends_at = started + Duration::from_secs(LEAD_S);
    let dir = tempfile::tempdir().context("a temp data dir")?;
    let server = ServerProc::start(&[
        "--data-dir".into(),
        dir.path().display().to_string(),
        "--fsync".into(),
        "everysec".into(),
        "--clock-offset-us".into(),
        offset.to_string(),
    ])
    .await?;
    let http = reqwest::Client::new();
    let import_s = fill(&http, &server.base, members, rewards).await?;
    ensure!(
        Instant::now() + Duration::from_secs(6) < ends_at,
        "the import took too long: the period ends before the writers warm up"
    );

    // Writers on the other boards, each request's start and latency kept.
    let stop = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(Mutex::new(Vec::<(Instant, f64)>::new()));
    let tasks = start_writers(&http, &server.base, clients, &stop, &samples);

    // The period ends; the close runs; a second after it the writers stop.
    tokio::time::sleep_until(ends_at.into()).await;
    let (closed_at, moves, grants) =
        wait_for_close(&http, &server.base, ends_at, rewards > 0).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await?;
    }
    let samples = std::mem::take(&mut *samples.lock().map_err(|_| anyhow!("poisoned"))?);
    let window = |from: Instant, to: Instant| -> Vec<f64> {
        samples
            .iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .map(|&(_, ms)| ms)
            .collect()
    };
    let before = window(ends_at - Duration::from_secs(5), ends_at);
    let during = window(ends_at, closed_at);
    drop(server);
    Ok(LeagueClose {
        members,
        clients,
        import_s,
        close_s: (closed_at - ends_at).as_secs_f64(),
        moves,
        grants,
        before_ms: crate::claim_http::percentiles(before),
        writes_during: during.len(),
        during_ms: crate::claim_http::percentiles(during),
    })
}

/// Creates the league board (granting ranks 1 to `rewards` of each cohort, when not 0) and
/// four other boards, and imports `members` members into the league: the seconds the
/// import took.
async fn fill(http: &reqwest::Client, base: &str, members: u64, rewards: u64) -> Result<f64> {
    use crate::claim_http::put;
    let mut league = json!({"reset": "daily", "cohort_size": 50,
        "league": {"tiers": ["bronze", "silver", "gold", "diamond"], "promote": 5, "demote": 5}});
    if rewards > 0 {
        league["rewards"] = json!([{"from": 1, "to": rewards, "reward": "coin", "amount": 10}]);
    }
    put(http, base, "league", league).await?;
    for k in 0..4 {
        put(http, base, &format!("other{k}"), json!({"update": "incr"})).await?;
    }
    let mut rng = Rng::new(11);
    let mut body = String::with_capacity(members as usize * 40);
    for i in 0..members {
        body += &format!(
            "{{\"member\":\"p{i:010}\",\"score\":{}}}\n",
            rng.next_u64() % 1_000_000
        );
    }
    let t = Instant::now();
    crate::claim_http::post_import(http, base, "league", body).await?;
    Ok(t.elapsed().as_secs_f64())
}

/// `clients` writers on the other boards until `stop`, each request's start and latency
/// (ms) kept in `samples`.
fn start_writers(
    http: &reqwest::Client,
    base: &str,
    clients: usize,
    stop: &Arc<AtomicBool>,
    samples: &Arc<Mutex<Vec<(Instant, f64)>>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (http, base, stop, samples) =
            (http.clone(), base.to_owned(), stop.clone(), samples.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng::new(100 + c as u64);
            let mut mine = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let board = rng.next_u64() % 4;
                let body = json!({"member": format!("w{}", rng.next_u64() % 100_000), "score": 1});
                let t = Instant::now();
                let ok = http
                    .post(format!("{base}/v1/boards/other{board}/scores"))
                    .json(&body)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                if ok {
                    mine.push((t, t.elapsed().as_secs_f64() * 1e3));
                }
            }
            samples.lock().map(|mut s| s.extend(mine)).ok();
        }));
    }
    tasks
}

/// Waits for the league's previous period to say `closed` and, when it `pays`, its grants
/// made (up to 2 minutes after `ends_at`): when it did, its moves and its grants.
async fn wait_for_close(
    http: &reqwest::Client,
    base: &str,
    ends_at: Instant,
    pays: bool,
) -> Result<(Instant, u64, u64)> {
    let moves_url = format!("{base}/v1/boards/league/periods/previous/moves?limit=0");
    let grants_url = format!("{base}/v1/boards/league/periods/previous/rewards?limit=1");
    let closed = loop {
        let m: Value = http.get(&moves_url).send().await?.json().await?;
        if m["closed"] == json!(true) && !pays {
            break (Instant::now(), m["total"].as_u64().unwrap_or(0), 0);
        }
        if m["closed"] == json!(true) {
            let g: Value = http.get(&grants_url).send().await?.json().await?;
            if g["granted"] == json!(true) {
                let (moves, grants) = (m["total"].as_u64(), g["total"].as_u64());
                break (Instant::now(), moves.unwrap_or(0), grants.unwrap_or(0));
            }
        }
        ensure!(
            ends_at.elapsed() < Duration::from_secs(120),
            "the close did not end within 2 minutes"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    Ok(closed)
}
