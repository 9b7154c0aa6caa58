//! What only these tests need; launching the binary is `photofinish_testkit::process`.

pub const BIN: &str = env!("CARGO_BIN_EXE_photofinish");

pub use photofinish_testkit::process::Proc;

/// `photofinish serve` on the Redis at `redis`, under namespace `ns` (from a test on the
/// multi-threaded runtime: the start blocks until the server listens).
pub fn redis_node(redis: &str, ns: &str) -> Proc {
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(["serve", "--listen", "127.0.0.1:0"]).args([
        "--storage",
        redis,
        "--redis-namespace",
        ns,
    ]);
    tokio::task::block_in_place(|| Proc::spawn_command(cmd))
}

/// splitmix64, seeded by the caller.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// Runs the binary as a client of `server`: whether it succeeded, its stdout and stderr.
pub fn cli(args: &[&str], server: &str) -> (bool, String, String) {
    let out = std::process::Command::new(BIN)
        .args(args)
        .env("PHOTOFINISH_SERVER", server)
        .output()
        .expect("run");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every entry of `board`'s current period, ranked by `ranking`: the first page as
/// answered, its `entries` extended with every later page's (read 1,000 at a time until a
/// page comes back short), so no caller depends on how many writes fit in a time.
pub async fn entries(
    http: &reqwest::Client,
    base: &str,
    board: &str,
    ranking: &str,
) -> serde_json::Value {
    const PAGE: usize = 1000;
    let mut first: Option<serde_json::Value> = None;
    let mut all = Vec::new();
    loop {
        let page: serde_json::Value = http
            .get(format!(
                "{base}/v1/boards/{board}/entries?limit={PAGE}&offset={}&ranking={ranking}",
                all.len()
            ))
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        let rows = page["entries"].as_array().cloned().unwrap_or_default();
        let done = rows.len() < PAGE;
        all.extend(rows);
        first.get_or_insert(page);
        if done {
            break;
        }
    }
    let mut v = first.expect("a page");
    if v.get("entries").is_some() {
        v["entries"] = serde_json::Value::Array(all);
    }
    v
}

/// The (member, score) rows of `board`'s current period, best first.
pub async fn scores(http: &reqwest::Client, base: &str, board: &str) -> Vec<(String, i64)> {
    let v = entries(http, base, board, "ordinal").await;
    v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["member"].as_str().expect("m").to_owned(),
                e["score"].as_i64().expect("s"),
            )
        })
        .collect()
}

/// Runs the binary with `args` and `env` (and no inherited `PHOTOFINISH_*` setting, which
/// would change what a test means): its exit status, stdout and stderr.
pub fn photofinish(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("PHOTOFINISH_") {
            cmd.env_remove(k);
        }
    }
    let out = cmd
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `GET path` on a connection of its own to `addr` (`host:port`, or an `http://` base):
/// the status and body, `None` when no connection is accepted or no answer comes.
pub fn raw_get(addr: &str, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let addr = addr.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let status = out.split_whitespace().nth(1)?.parse().ok()?;
    let body = out.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())?;
    Some((status, body))
}
