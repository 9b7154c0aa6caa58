//! A member erased everywhere, end to end (docs/SPEC.md §16, issue 61): a Photofinish
//! server (this binary's `__serve`) on the embedded store and on a Redis the harness
//! starts holds B boards, the member on each; `DELETE /v1/members/{member}` is timed
//! from request to answer, `rounds` times (the member written again to every board before
//! each), and the median and the longest reported per backend.

use std::time::Instant;

use anyhow::{ensure, Context, Result};
use serde_json::{json, Value};

use crate::targets::ServerProc;

/// What one backend measured.
pub struct Erased {
    pub backend: &'static str,
    pub boards: u64,
    /// Seconds of each erase, in the order run.
    pub seconds: Vec<f64>,
}

/// The human table of every backend's run.
pub fn table(runs: &[Erased]) -> String {
    let mut out = String::from("erase: one member on every board, HTTP DELETE /v1/members/{m}\n");
    for r in runs {
        let mut s = r.seconds.clone();
        s.sort_by(f64::total_cmp);
        let median = s[s.len() / 2];
        let max = s[s.len() - 1];
        out += &format!(
            "{:<10} {:>6} boards  median {:>7.3} s  max {:>7.3} s  ({} erases)\n",
            r.backend,
            r.boards,
            median,
            max,
            s.len()
        );
    }
    out
}

/// The one-line JSON form.
pub fn json(runs: &[Erased]) -> Value {
    Value::Array(
        runs.iter()
            .map(|r| json!({"backend": r.backend, "boards": r.boards, "seconds": r.seconds}))
            .collect(),
    )
}

/// `boards` boards, each holding the member and one other.
async fn fill(http: &reqwest::Client, base: &str, boards: u64) -> Result<()> {
    use futures_util::StreamExt;
    let made = futures_util::stream::iter(0..boards)
        .map(|i| async move {
            let url = format!("{base}/v1/boards/e{i:05}");
            let st = http.put(&url).json(&json!({})).send().await?.status();
            ensure!(st.is_success(), "create answered {st}");
            Ok::<_, anyhow::Error>(())
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    made.into_iter().collect::<Result<Vec<_>>>()?;
    write_everywhere(http, base, boards, "stays").await
}

/// `member` written to every board.
async fn write_everywhere(
    http: &reqwest::Client,
    base: &str,
    boards: u64,
    member: &str,
) -> Result<()> {
    use futures_util::StreamExt;
    let written = futures_util::stream::iter(0..boards)
        .map(|i| async move {
            let url = format!("{base}/v1/boards/e{i:05}/scores");
            let body = json!({"member": member, "score": i});
            let st = http.post(&url).json(&body).send().await?.status();
            ensure!(st.is_success(), "write answered {st}");
            Ok::<_, anyhow::Error>(())
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    written.into_iter().collect::<Result<Vec<_>>>().map(drop)
}

/// Runs the scenario on one server started with `serve_args`.
pub async fn run(
    backend: &'static str,
    serve_args: &[String],
    boards: u64,
    rounds: usize,
) -> Result<Erased> {
    ensure!(
        boards > 0 && rounds > 0,
        "--boards and --rounds must be at least 1"
    );
    let server = ServerProc::start(serve_args).await?;
    let http = reqwest::Client::new();
    fill(&http, &server.base, boards).await?;
    let mut seconds = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        write_everywhere(&http, &server.base, boards, "leaves").await?;
        let started = Instant::now();
        let answer: Value = http
            .delete(format!("{}/v1/members/leaves", server.base))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await
            .context("the erase's answer")?;
        seconds.push(started.elapsed().as_secs_f64());
        ensure!(
            answer["boards"] == json!(boards),
            "the erase answered {answer}, not {boards} boards"
        );
    }
    Ok(Erased {
        backend,
        boards,
        seconds,
    })
}
