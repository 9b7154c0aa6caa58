//! `photofinish export`, `import` and `import-redis` (docs/SPEC.md §11, docs/migrate.md):
//! JSON Lines out of and into a running server, and an existing Redis ZSET decoded
//! ([`crate::packing`]) and imported. Long work shows a progress bar (rate, ETA) on stderr
//! when stderr is a terminal; the result is one line on stdout (JSON with `--json`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressStyle};
use photofinish_server::wire::types::ImportAnswer;
use serde_json::json;

use crate::client::Client;
use crate::packing::{Decoded, Encoding};

/// Bytes of a file sent per chunk of an upload.
const UPLOAD_CHUNK_BYTES: usize = 1 << 20;
/// ZSET members read from Redis per request.
const REDIS_CHUNK: isize = 10_000;
/// Decoded chunks waiting for the upload.
const CHUNKS_QUEUED: usize = 4;

/// A progress bar on stderr counting `unit` (`bytes` or entries), with rate and ETA when
/// the total is known; hidden when stderr is not a terminal.
pub fn progress(total: Option<u64>, what: &str, bytes: bool) -> ProgressBar {
    let bar = match total {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    let count = if bytes {
        "{binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}"
    } else {
        "{human_pos}/{human_len} ({per_sec}"
    };
    let template = match (total, bytes) {
        (Some(_), _) => format!("{{msg}} [{{elapsed_precise}}] {{wide_bar}} {count}, ETA {{eta}})"),
        (None, true) => {
            "{msg} [{elapsed_precise}] {spinner} {binary_bytes} ({binary_bytes_per_sec})".into()
        }
        (None, false) => "{msg} [{elapsed_precise}] {spinner} {human_pos} ({per_sec})".into(),
    };
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar.set_message(what.to_owned());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// `out` with `.part` appended: where a file is written before it is complete.
fn part_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

/// `photofinish export --board B [--period P] [--out FILE]`.
pub async fn export(
    client: &Client,
    board: &str,
    period: Option<String>,
    out: Option<PathBuf>,
    json: bool,
) -> Result<()> {
    let query: Vec<(String, String)> = period
        .into_iter()
        .map(|p| ("period".to_owned(), p))
        .collect();
    // The period's size (for the bar) and id (for the summary); errors come from here.
    let mut head = query.clone();
    head.push(("limit".into(), "1".into()));
    let first = client.entries(board, &head).await?;
    let (total, period_id) = (first.total, first.period);
    let bar = progress(Some(total), &format!("export {board}"), false);
    let mut lines = 0u64;
    let mut count = |chunk: &[u8]| {
        let n = chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        lines += n;
        bar.inc(n);
    };
    let segments = ["v1", "boards", board, "export"];
    let done = match &out {
        Some(path) => download_to_file(client, &segments, &query, path, &mut count).await,
        None => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            let bytes = client
                .download_with(&segments, &query, &mut w, &mut count)
                .await;
            w.flush()
                .map_err(|e| anyhow!("cannot write to stdout: {e}"))?;
            bytes
        }
    };
    bar.finish_and_clear();
    let bytes = done?;
    let summary =
        json!({"board": board, "period": period_id, "entries": lines, "bytes": bytes, "file": out});
    match (&out, json) {
        // The entries went to stdout: the summary goes to stderr.
        (None, _) => eprintln!("exported {lines} entries of {board} period {period_id}"),
        (Some(_), true) => println!("{summary}"),
        (Some(path), false) => println!(
            "exported {lines} entries of {board} period {} to {}",
            period_id,
            path.display()
        ),
    }
    Ok(())
}

/// Downloads the export at `segments` into `path`: written to a `.part` file beside it,
/// synced, then renamed, so `path` is whole or absent. The bytes downloaded.
async fn download_to_file(
    client: &Client,
    segments: &[&str],
    query: &[(String, String)],
    path: &Path,
    count: &mut dyn FnMut(&[u8]),
) -> Result<u64> {
    let tmp = part_path(path);
    let file =
        std::fs::File::create(&tmp).map_err(|e| anyhow!("cannot create {}: {e}", tmp.display()))?;
    let mut w = std::io::BufWriter::with_capacity(UPLOAD_CHUNK_BYTES, file);
    let written = client
        .download_with(segments, query, &mut w, count)
        .await
        .and_then(|bytes| {
            let file = w.into_inner().map_err(|e| anyhow!("cannot write: {e}"))?;
            file.sync_all()
                .map_err(|e| anyhow!("cannot sync {}: {e}", tmp.display()))?;
            std::fs::rename(&tmp, path)
                .map_err(|e| anyhow!("cannot name {}: {e}", path.display()))?;
            Ok(bytes)
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// `photofinish import --board B [--period P] FILE`.
pub async fn import(
    client: &Client,
    board: &str,
    period: Option<String>,
    file: &Path,
    json: bool,
) -> Result<()> {
    let f =
        std::fs::File::open(file).map_err(|e| anyhow!("cannot open {}: {e}", file.display()))?;
    let size = f.metadata().ok().map(|m| m.len());
    let bar = progress(size, &format!("import {board}"), true);
    let reader_bar = bar.clone();
    let chunks = futures_util::stream::unfold(Some(f), move |f| {
        let bar = reader_bar.clone();
        async move {
            let mut f = f?;
            let mut buf = vec![0u8; UPLOAD_CHUNK_BYTES];
            match f.read(&mut buf) {
                Ok(0) => None,
                Ok(n) => {
                    buf.truncate(n);
                    bar.inc(n as u64);
                    Some((Ok::<_, std::io::Error>(buf), Some(f)))
                }
                Err(e) => Some((Err(e), None)),
            }
        }
    });
    let answer = upload(client, board, period, reqwest::Body::wrap_stream(chunks)).await;
    bar.finish_and_clear();
    print_imported(&answer?, board, json, &[]);
    Ok(())
}

async fn upload(
    client: &Client,
    board: &str,
    period: Option<String>,
    body: reqwest::Body,
) -> Result<ImportAnswer> {
    let query: Vec<(String, String)> = period
        .into_iter()
        .map(|p| ("period".to_owned(), p))
        .collect();
    client.import(board, &query, body).await
}

/// What an import did, as one line of text or, with `--json`, the server's answer with
/// `extra`'s fields added.
fn print_imported(v: &ImportAnswer, board: &str, json: bool, extra: &[(&str, &str)]) {
    if json {
        let mut out = json!(v);
        for (k, x) in extra {
            out[*k] = json!(x);
        }
        println!("{out}");
    } else {
        println!(
            "imported {} entries into {board} period {}",
            v.imported, v.period
        );
    }
}

/// A source ZSET and how its scores decode.
struct Zset {
    key: String,
    /// Best first (`ZREVRANGE`), for a `desc` board.
    desc: bool,
    encoding: Encoding,
    /// The instant of a packing that keeps no time.
    now_us: i64,
}

impl Zset {
    /// Reads the ZSET a chunk at a time into `tx` as JSON Lines, counting on `bar`; the
    /// reason it stopped early (a Redis error, a score that does not decode), also sent
    /// to `tx` as the body's error.
    async fn read(
        self,
        mut conn: redis::aio::MultiplexedConnection,
        tx: tokio::sync::mpsc::Sender<Result<Vec<u8>, std::io::Error>>,
        bar: indicatif::ProgressBar,
    ) -> Option<String> {
        let cmd = if self.desc { "ZREVRANGE" } else { "ZRANGE" };
        let mut start: isize = 0;
        let stopped = loop {
            let page = match redis::cmd(cmd)
                .arg(&self.key)
                .arg(start)
                .arg(start + REDIS_CHUNK - 1)
                .arg("WITHSCORES")
                .query_async::<Vec<(Vec<u8>, f64)>>(&mut conn)
                .await
            {
                Ok(p) if p.is_empty() => break None,
                Ok(p) => p,
                Err(e) => break Some(format!("{cmd} {}: {e}", self.key)),
            };
            let lines = match self.lines(&page) {
                Ok(lines) => lines,
                Err(why) => break Some(why),
            };
            bar.inc(page.len() as u64);
            if tx.send(Ok(lines)).await.is_err() {
                break None;
            }
            start += REDIS_CHUNK;
        };
        if let Some(why) = &stopped {
            let _ = tx.send(Err(std::io::Error::other(why.clone()))).await;
        }
        stopped
    }

    /// A page of `(member, score)` as import lines, or why a score does not decode.
    fn lines(&self, page: &[(Vec<u8>, f64)]) -> Result<Vec<u8>, String> {
        let mut buf = Vec::with_capacity(page.len() * 80);
        for (member, score) in page {
            let name = String::from_utf8_lossy(member);
            let Decoded { score, at_us } = self.encoding.decode(*score).map_err(|why| {
                format!(
                    "member {name:?}: ZSET score {score} does not decode as {}: {why}",
                    self.encoding.name()
                )
            })?;
            let reached = jiff::Timestamp::from_microsecond(at_us.unwrap_or(self.now_us))
                .map(|t| format!("{t:.6}"))
                .unwrap_or_default();
            let line = json!({"member": name, "score": score, "reached_at": reached});
            buf.extend_from_slice(line.to_string().as_bytes());
            buf.push(b'\n');
        }
        Ok(buf)
    }
}

/// `photofinish import-redis --redis URL --key KEY --board B --encoding NAME`: reads the
/// ZSET a chunk at a time in its own order (best first for a `desc` board), decodes every
/// member's score and time, and streams them to the server's import. A score that does
/// not decode stops it before anything is imported, naming the member.
pub async fn import_redis(
    client: &Client,
    redis_url: &str,
    key: &str,
    board: &str,
    period: Option<String>,
    encoding: Encoding,
    json: bool,
) -> Result<()> {
    let target = client.board(board).await?;
    if let Some(columns) = target.columns.as_ref().filter(|c| c.len() > 1) {
        return Err(anyhow!(
            "board {board:?} ranks by {} columns; import-redis fills one-column boards only \
             (a ZSET holds one score a member): nothing was imported",
            columns.len()
        ));
    }
    let desc = target.order != "asc";
    let redis = redis::Client::open(redis_url)
        .map_err(|e| anyhow!("--redis {redis_url:?} is not a Redis URL: {e}"))?;
    let mut conn = redis
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| anyhow!("cannot reach Redis at {redis_url}: {e}"))?;
    let total: u64 = redis::cmd("ZCARD")
        .arg(key)
        .query_async(&mut conn)
        .await
        .map_err(|e| anyhow!("ZCARD {key}: {e}"))?;
    let bar = progress(Some(total), &format!("import-redis {key}"), false);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(CHUNKS_QUEUED);
    // Reads and decodes while the upload sends; a decode error ends the body in an error,
    // so the server imports nothing.
    let zset = Zset {
        key: key.to_owned(),
        desc,
        encoding,
        now_us: jiff::Timestamp::now().as_microsecond(),
    };
    let reader = tokio::spawn(zset.read(conn, tx, bar.clone()));
    let body = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let answer = upload(client, board, period, reqwest::Body::wrap_stream(body)).await;
    bar.finish_and_clear();
    if let Ok(Some(why)) = reader.await {
        return Err(anyhow!("{why}; nothing was imported"));
    }
    let reached_at = if encoding.keeps_time() {
        "decoded"
    } else {
        "the import's time: this packing does not keep it"
    };
    print_imported(&answer?, board, json, &[("reached_at", reached_at)]);
    if !json && !encoding.keeps_time() {
        eprintln!(
            "note: {} keeps no time; the ZSET's order was kept and reached_at is the import's time",
            encoding.name()
        );
    }
    Ok(())
}
