//! What only this test binary needs; the server launcher and the Redis launcher are in
//! `photofinish-testkit`.

use std::sync::{Arc, OnceLock};

use photofinish_core::idempotency::Answer;
use photofinish_core::op::Change;
use photofinish_core::op::{WriteOutcome, WriteRequest};
use photofinish_core::{BoardConfig, BoardError, BoardName, Leaderboard};

pub use photofinish_testkit::conformance;
pub use photofinish_testkit::server::*;

/// Everything logged at `warn` and above by this test binary, from the first call on: a
/// global subscriber writing into a buffer (tests find their own lines by request id).
pub fn captured_logs() -> Arc<std::sync::Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<std::sync::Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(move || LogSink(sink.clone()))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
        buf
    })
    .clone()
}

struct LogSink(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for LogSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("logs").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A file of `tests/it/fixtures` (test keys and certificates).
pub fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures")
        .join(name)
}

/// Now, µs since the epoch (a node's stamp).
pub fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_micros() as i64
}

/// Now, whole seconds since the epoch (token claims).
pub fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// A token signed with the ES256 test key, with `claims`.
pub fn es256(claims: serde_json::Value) -> String {
    use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
    let pem = std::fs::read(fixture("es256-private.pem")).expect("key");
    let key = EncodingKey::from_ec_pem(&pem).expect("ec key");
    encode(&Header::new(Algorithm::ES256), &claims, &key).expect("sign")
}

/// A redis-rs connection to `s`'s RESP door, authenticated with `token` when given
/// (`AUTH` as the URL's password), in RESP3 when `resp3`.
pub async fn resp_as(
    s: &Server,
    token: Option<&str>,
    resp3: bool,
) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
    let addr = s.resp.expect("the server has a RESP door");
    let auth = token.map_or(String::new(), |t| format!(":{t}@"));
    let proto = if resp3 { "?protocol=resp3" } else { "" };
    let client = redis::Client::open(format!("redis://{auth}{addr}{proto}"))?;
    // redis-rs gives up on an answer after 500 ms by default; a pipeline of thousands in a
    // debug build on a busy 2-core machine may take longer.
    let config = redis::AsyncConnectionConfig::new()
        .set_response_timeout(Some(std::time::Duration::from_secs(60)));
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
}

/// An anonymous RESP2 connection.
pub async fn resp(s: &Server) -> redis::aio::MultiplexedConnection {
    resp_as(s, None, false).await.expect("RESP connection")
}

/// A reply as JSON, for comparing: integers, strings, arrays, `null`, booleans; a map as
/// an object; an error as `{"error": code}`, the code being the stable one after `ERR`
/// (or `NOAUTH`, `WRONGPASS`, … as sent).
pub fn reply_json(r: redis::RedisResult<redis::Value>) -> serde_json::Value {
    use redis::Value as R;
    use serde_json::{json, Value};
    fn value(v: R) -> Value {
        match v {
            R::Nil => Value::Null,
            R::Int(i) => json!(i),
            R::BulkString(b) => Value::String(String::from_utf8_lossy(&b).into_owned()),
            R::SimpleString(s) => Value::String(s),
            R::Okay => json!("OK"),
            R::Boolean(b) => json!(b),
            R::Double(d) => json!(d),
            R::Array(a) | R::Set(a) => Value::Array(a.into_iter().map(value).collect()),
            R::Map(m) => Value::Object(
                m.into_iter()
                    .map(|(k, v)| (value(k).as_str().unwrap_or_default().to_owned(), value(v)))
                    .collect(),
            ),
            R::ServerError(e) => json!({"error": error_code(e.code(), e.details())}),
            other => json!(format!("{other:?}")),
        }
    }
    match r {
        Ok(v) => value(v),
        Err(e) => json!({"error": error_code(e.code().unwrap_or("?"), e.detail())}),
    }
}

fn error_code(code: &str, detail: Option<&str>) -> String {
    if code == "ERR" {
        let first = detail.unwrap_or_default().split_whitespace().next();
        first.unwrap_or("ERR").to_owned()
    } else {
        code.to_owned()
    }
}

/// Sends one command; the reply as [`reply_json`] shows it.
pub async fn lb(c: &mut redis::aio::MultiplexedConnection, args: &[&str]) -> serde_json::Value {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    reply_json(cmd.query_async::<redis::Value>(c).await)
}

/// `member` scores `score` on `board`, which must answer 200.
pub async fn write(s: &Server, board: &str, member: &str, score: i64) {
    let (st, b) = s
        .post(
            &format!("/v1/boards/{board}/scores"),
            serde_json::json!({"member": member, "score": score}),
        )
        .await;
    assert_eq!(st, 200, "{member}: {b}");
}

/// The member names of a page's `entries`, in order.
pub fn member_names(page: &serde_json::Value) -> Vec<&str> {
    page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["member"].as_str().expect("member"))
        .collect()
}

/// µs since the epoch of an RFC 3339 `reached_at`.
pub fn micros(rfc3339: &serde_json::Value) -> i64 {
    let ts: jiff::Timestamp = rfc3339
        .as_str()
        .expect("a timestamp")
        .parse()
        .expect("RFC 3339");
    ts.as_microsecond()
}

/// A small deterministic generator (xorshift64*), so a failure replays from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// The value of one series of `/metrics` (`name{labels}` exactly as printed), read with
/// `token`; `None` while the series is absent.
pub async fn metric(s: &Server, token: Option<&str>, series: &str) -> Option<String> {
    let mut req = s.http.get(format!("{}/metrics", s.base));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let text = req
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let prefix = format!("{series} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.trim().to_owned())
}

/// A service's changes called directly, as the tests that drive a node without a door
/// write them: each one [`Leaderboard::change`] without a key.
pub trait Changes {
    /// Creates `board`: whether it is new.
    async fn create_board(&self, board: &str, config: BoardConfig) -> Result<bool, BoardError>;
    /// Deletes `board`.
    async fn delete_board(&self, board: &str) -> Result<(), BoardError>;
    /// One write.
    async fn write(&self, board: &str, w: WriteRequest) -> Result<WriteOutcome, BoardError>;
    /// A batch, each write answered on its own.
    async fn write_batch(
        &self,
        board: &str,
        writes: Vec<WriteRequest>,
    ) -> Result<Vec<Result<WriteOutcome, BoardError>>, BoardError>;
}

async fn change_of<L: Leaderboard + ?Sized>(
    l: &L,
    board: &str,
    change: Change,
) -> Result<Answer, BoardError> {
    let board = BoardName::parse(board)?;
    Ok(l.change(&board, change, None, "test").await?.answer)
}

impl<L: Leaderboard + ?Sized> Changes for L {
    async fn create_board(&self, board: &str, config: BoardConfig) -> Result<bool, BoardError> {
        Ok(change_of(self, board, Change::Create(config.checked()?))
            .await?
            .into_created()?
            .0)
    }
    async fn delete_board(&self, board: &str) -> Result<(), BoardError> {
        change_of(self, board, Change::Delete).await?.into_deleted()
    }
    async fn write(&self, board: &str, w: WriteRequest) -> Result<WriteOutcome, BoardError> {
        change_of(self, board, Change::Write(w))
            .await?
            .into_written()
    }
    async fn write_batch(
        &self,
        board: &str,
        writes: Vec<WriteRequest>,
    ) -> Result<Vec<Result<WriteOutcome, BoardError>>, BoardError> {
        change_of(self, board, Change::Batch(writes))
            .await?
            .into_batch()
    }
}

/// Every file under `dir` (at any depth) whose name ends in `.{ext}`: the source checks'
/// one walk (`sizes.rs`, `layering.rs`).
pub fn files_under(dir: &std::path::Path, ext: &str, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files_under(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// A page's rows (`entries`) as (member, score, rank).
pub fn rows(v: &serde_json::Value) -> Vec<(String, i64, u64)> {
    v["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("entries in {v}"))
        .iter()
        .map(|e| {
            (
                e["member"].as_str().expect("member").to_owned(),
                e["score"].as_i64().expect("score"),
                e["rank"].as_u64().expect("rank"),
            )
        })
        .collect()
}

/// A server taking an admin key and players' ES256 tokens (issuer `studio`, audience
/// `game`): the server, the admin key's secret, and the directory its keys file is in
/// (kept while the server runs).
pub async fn start_with_players(kind: Kind) -> (Server, String, tempfile::TempDir) {
    use photofinish_core::access::Scope;
    use photofinish_server::auth::jwt::{JwtKey, JwtOptions};
    use photofinish_server::auth::keys;
    let dir = tempfile::tempdir().expect("tmp");
    let (k, secret) = keys::new_key("admin", Scope::Admin, vec![], None, "t".into()).expect("key");
    let file = dir.path().join("keys.json");
    keys::write_file(&file, vec![k]).expect("keys");
    let s = Server::start_configured(kind, |o| photofinish_server::serve::ServeOptions {
        keys: Some(file),
        jwt: Some(JwtOptions {
            key: JwtKey::Pem(fixture("es256-public.pem")),
            issuer: Some("studio".into()),
            audience: Some("game".into()),
        }),
        ..o
    })
    .await;
    (s, secret.expose().to_owned(), dir)
}

/// A token of player `ann` for [`start_with_players`]' server, with `claims` added.
pub fn ann_token(claims: serde_json::Value) -> String {
    let mut c =
        serde_json::json!({"sub": "ann", "exp": now_s() + 600, "iss": "studio", "aud": "game"});
    if let (Some(c), Some(extra)) = (c.as_object_mut(), claims.as_object()) {
        c.extend(extra.clone());
    }
    es256(c)
}
