//! [`RedisStore`]: every board operation of docs/SPEC.md §2 on Redis. The server resolves the
//! period (the calendar needs the board's time zone, which Lua does not have) with the
//! core's [`PeriodWindow`], then one script does the whole operation atomically on the
//! board's slot. Each script first checks that the board's stored config is the one the
//! period was resolved with, so a board deleted or re-created through another Photofinish
//! server is noticed, the cached config dropped, and the operation retried once with the
//! fresh one.
//!
//! - [`boards`]: create, drop, describe and list boards and their periods.
//! - [`writes`]: one write, and batches as one pipeline of write scripts.
//! - [`reads`]: member, page and around reads, and removing a member.
//! - [`events`]: live events: the board's stream read into this node's feed.
//! - `upgrade.rs`: the data format: checked at connect, upgraded on request.
//! - `service.rs`: the core's `Leaderboard` trait over these.

mod boards;
mod events;
mod hooks;
mod import;
mod keyed;
mod reads;
mod service;
mod upgrade;
mod writes;

pub use upgrade::UpgradeReport;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use photofinish_core::clock::{Clock, MonotonicClock};
use photofinish_core::events::Feeds;
use photofinish_core::window::Resolved;
use photofinish_core::{BoardConfig, BoardError, Order, Period, PeriodWindow};

use crate::conn::{Conn, Target};
use crate::layout::{self, BoardKeys};
use crate::reply::Reply;
use crate::scripts::read::PeriodTarget;
use crate::scripts::status;

/// What the store keeps of one board: its config (and the text scripts compare), the
/// period window, and per-period values computed once (the retention floor and expiry of
/// the period writes last landed in).
#[derive(Debug)]
struct CachedBoard {
    config: BoardConfig,
    config_text: String,
    window: PeriodWindow,
    floor: Mutex<Option<(String, Period)>>,
    retention_end: Mutex<Option<(String, Option<i64>)>>,
    previous: Mutex<Option<(String, String)>>,
}

/// `compute(key)`, unless `cache` already holds the answer for `key`.
fn cached<T: Clone>(
    cache: &Mutex<Option<(String, T)>>,
    key: &str,
    compute: impl FnOnce() -> T,
) -> T {
    let mut c = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((k, v)) = c.as_ref() {
        if k == key {
            return v.clone();
        }
    }
    let v = compute();
    *c = Some((key.to_owned(), v.clone()));
    v
}

impl CachedBoard {
    fn desc(&self) -> bool {
        self.config.order == Order::Desc
    }

    /// The board-period a read or remove of `resolved` acts on.
    fn target<'a>(&'a self, keys: &'a BoardKeys, resolved: &'a Resolved) -> PeriodTarget<'a> {
        PeriodTarget {
            keys,
            config_text: &self.config_text,
            period: &resolved.period,
            is_current: resolved.is_current,
        }
    }

    /// The retention floor of `period`, computed once per period.
    fn floor(&self, period: &Period) -> Period {
        cached(&self.floor, &period.id, || {
            self.window.retention_floor(period)
        })
    }

    /// The id of the period before `period` (`""` for none); computed once per period.
    fn previous(&self, period: &Period) -> String {
        cached(&self.previous, &period.id, || {
            self.window
                .calendar()
                .previous(period)
                .map(|p| p.id)
                .unwrap_or_default()
        })
    }

    /// How long from `now_us` (the server's clock) `period`'s keys live, ms, at least 1;
    /// `None` for ever. Scripts take expiries as times to live and make the deadline on
    /// Redis' clock (`deadline` in common.lua), so a server whose clock is not Redis'
    /// neither drops a retained period's keys at once nor keeps them too long. The end of
    /// retention is computed once per period.
    fn ttl_ms(&self, period: &Period, now_us: i64) -> Option<i64> {
        let end_us = cached(&self.retention_end, &period.id, || {
            self.window.retention_end_us(period)
        })?;
        Some(end_us.saturating_sub(now_us).div_euclid(1000).max(1))
    }
}

/// The Redis backend. See the module docs.
pub struct RedisStore {
    conn: Conn,
    /// Where Redis is (a watched board's reader connects on its own).
    target: Target,
    /// Live event feeds of the boards this node's readers watch.
    feeds: Arc<Feeds>,
    ns: String,
    clock: MonotonicClock<Box<dyn Clock>>,
    boards: Mutex<HashMap<String, Arc<CachedBoard>>>,
    /// Most boards in the namespace (docs/SPEC.md §7); `None` for no limit.
    max_boards: Option<u64>,
    /// The member-name hash of bucket fields.
    hasher: layout::NameHasher,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("conn", &self.conn)
            .field("ns", &self.ns)
            .finish_non_exhaustive()
    }
}

/// Outcome of one attempt that may have met a stale cached config.
enum Attempt<T> {
    Done(T),
    Stale,
}

/// Every string in a reply (a node's INFO text, or each node's in a cluster's map).
fn collect_text(v: &redis::Value, out: &mut Vec<String>) {
    match v {
        redis::Value::BulkString(b) => out.push(String::from_utf8_lossy(b).into_owned()),
        redis::Value::SimpleString(s) | redis::Value::VerbatimString { text: s, .. } => {
            out.push(s.clone())
        }
        redis::Value::Array(items) | redis::Value::Set(items) => {
            items.iter().for_each(|i| collect_text(i, out))
        }
        redis::Value::Map(pairs) => pairs.iter().for_each(|(_, v)| collect_text(v, out)),
        _ => {}
    }
}

/// A Redis error: the storage is unavailable, and nothing changed.
/// The memory Redis reports in use (`INFO memory`, `used_memory`), bytes; on a cluster,
/// summed over the nodes that answer.
pub(crate) async fn used_memory(conn: &Conn) -> Result<u64, BoardError> {
    let info: redis::Value = conn
        .query(redis::cmd("INFO").arg("memory"))
        .await
        .map_err(unavailable)?;
    let mut texts = Vec::new();
    collect_text(&info, &mut texts);
    let found: Vec<u64> = texts
        .iter()
        .flat_map(|t| t.lines())
        .filter_map(|l| l.strip_prefix("used_memory:"))
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    if found.is_empty() {
        return Err(BoardError::Unavailable(
            "redis INFO has no used_memory".into(),
        ));
    }
    Ok(found.iter().sum())
}

pub(crate) fn unavailable(e: redis::RedisError) -> BoardError {
    BoardError::Unavailable(format!("redis: {e}"))
}

impl RedisStore {
    /// Connects to `target`; keys go under namespace `ns` (default `pf`).
    pub async fn connect(
        target: &Target,
        ns: &str,
        clock: Box<dyn Clock>,
    ) -> Result<Self, BoardError> {
        let store = Self {
            conn: Conn::connect(target).await.map_err(unavailable)?,
            target: target.clone(),
            feeds: Arc::new(Feeds::default()),
            ns: ns.to_owned(),
            clock: MonotonicClock::new(clock),
            boards: Mutex::new(HashMap::new()),
            max_boards: None,
            hasher: layout::name_hash,
        };
        crate::conn::refuse_eviction(&store.conn)
            .await
            .map_err(BoardError::Unavailable)?;
        store.check_format().await?;
        Ok(store)
    }

    /// Refuses creating a board beyond `max` in the namespace (`too_many_boards`). The
    /// registry of names is counted before the create: concurrent creates on several
    /// servers may pass it together, so the bound may be exceeded by as many.
    pub fn with_max_boards(mut self, max: Option<u64>) -> Self {
        self.max_boards = max;
        self
    }

    /// The memory Redis reports in use (`INFO memory`, `used_memory`), bytes; on a cluster,
    /// summed over the nodes that answer.
    pub async fn used_memory(&self) -> Result<u64, BoardError> {
        used_memory(&self.conn).await
    }

    /// Now, µs since the epoch, never going backwards.
    pub fn now_us(&self) -> i64 {
        self.clock.now_us()
    }

    /// `None` when Redis answers a PING, else why not.
    pub async fn health(&self) -> Option<String> {
        match self.conn.query::<String>(&redis::cmd("PING")).await {
            Ok(_) => None,
            Err(e) => Some(format!("redis is unavailable: {e}")),
        }
    }

    /// Hashes member names with `hasher` instead of [`layout::name_hash`]: for tests that
    /// make names collide. Data written with one hash is not found with another.
    #[doc(hidden)]
    pub fn with_name_hash(mut self, hasher: layout::NameHasher) -> Self {
        self.hasher = hasher;
        self
    }

    fn keys(&self, board: &str) -> BoardKeys {
        BoardKeys::with_hasher(&self.ns, board, self.hasher)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CachedBoard>>> {
        self.boards.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Caches `config`, stored in Redis as `config_text` (the very text scripts compare:
    /// a config written by an older version may print differently today).
    fn remember(
        &self,
        board: &str,
        config: BoardConfig,
        config_text: String,
    ) -> Result<Arc<CachedBoard>, BoardError> {
        let cached = Arc::new(CachedBoard {
            config_text,
            window: PeriodWindow::new(&config)?,
            config,
            floor: Mutex::new(None),
            retention_end: Mutex::new(None),
            previous: Mutex::new(None),
        });
        self.cache().insert(board.to_owned(), cached.clone());
        Ok(cached)
    }

    fn forget(&self, board: &str) {
        self.cache().remove(board);
    }

    /// The board's config, from the cache or from Redis.
    async fn cached(&self, board: &str) -> Result<Arc<CachedBoard>, BoardError> {
        if let Some(m) = self.cache().get(board) {
            return Ok(m.clone());
        }
        self.fetch(board).await
    }

    /// The board's config as Redis holds it now (the cache kept when it is unchanged): for
    /// decisions that must not rest on this server's cache, such as who may read a board
    /// that another server's PATCH just made private.
    async fn fresh(&self, board: &str) -> Result<Arc<CachedBoard>, BoardError> {
        match self.stored_config(board).await? {
            None => {
                self.forget(board);
                Err(BoardError::BoardNotFound(board.to_owned()))
            }
            Some(raw) => self.stored(board, raw),
        }
    }

    /// The board's cache for the config text `raw` Redis holds: the entry kept when its
    /// text is the same (with what it learnt), else `raw` parsed and cached.
    fn stored(&self, board: &str, raw: Vec<u8>) -> Result<Arc<CachedBoard>, BoardError> {
        let cached = self.cache().get(board).cloned();
        match cached {
            Some(c) if c.config_text.as_bytes() == raw.as_slice() => Ok(c),
            _ => self.parse_and_remember(board, raw),
        }
    }

    /// Reads the board's config from Redis and caches it.
    async fn fetch(&self, board: &str) -> Result<Arc<CachedBoard>, BoardError> {
        let raw = self.stored_config(board).await?;
        let raw = raw.ok_or_else(|| BoardError::BoardNotFound(board.to_owned()))?;
        self.parse_and_remember(board, raw)
    }

    /// The board's config text as Redis holds it, `None` if there is no such board.
    async fn stored_config(&self, board: &str) -> Result<Option<Vec<u8>>, BoardError> {
        self.conn
            .query(redis::cmd("GET").arg(self.keys(board).config()))
            .await
            .map_err(unavailable)
    }

    fn parse_and_remember(
        &self,
        board: &str,
        raw: Vec<u8>,
    ) -> Result<Arc<CachedBoard>, BoardError> {
        let config = layout::parse_config(&raw).ok_or_else(|| {
            BoardError::Unavailable(format!("board {board:?} has an unreadable config"))
        })?;
        let text = String::from_utf8(raw).map_err(|_| {
            BoardError::Unavailable(format!("board {board:?} has a config that is not UTF-8"))
        })?;
        self.remember(board, config, text)
    }

    /// Runs `f` with the board's config; on a stale cache, forgets it and runs once more.
    async fn with_board<T, F, Fut>(&self, board: &str, f: F) -> Result<T, BoardError>
    where
        F: Fn(Arc<CachedBoard>) -> Fut,
        Fut: std::future::Future<Output = Result<Attempt<T>, BoardError>>,
    {
        for _ in 0..2 {
            let cached = self.cached(board).await?;
            match f(cached).await? {
                Attempt::Done(t) => return Ok(t),
                Attempt::Stale => self.forget(board),
            }
        }
        Err(BoardError::BoardNotFound(board.to_owned()))
    }

    /// Runs a script and reads its reply strictly.
    async fn run(
        &self,
        script: &'static str,
        call: &crate::scripts::Call,
    ) -> Result<Reply, BoardError> {
        let v: redis::Value = self.conn.call(call).await.map_err(unavailable)?;
        Reply::new(script, v)
    }
}

/// The statuses every config-checking script may answer: `Ok(None)` to go on with an `ok`
/// reply, `Some(Stale)` for a stale cache; any other status is a malformed reply.
fn common_status<T>(r: &Reply) -> Result<Option<Attempt<T>>, BoardError> {
    match r.status()? {
        status::OK => Ok(None),
        status::CONFIG_CHANGED | status::NO_BOARD => Ok(Some(Attempt::Stale)),
        other => Err(r.malformed(0, &format!("is {:?}", String::from_utf8_lossy(other)))),
    }
}
