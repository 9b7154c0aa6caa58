//! [`RedisStore`]: every board operation of SPEC.md §2 on Redis. The server resolves the
//! period (the calendar needs the board's time zone, which Lua does not have), then one
//! script does the whole operation atomically on the board's slot. Each script first checks
//! that the board's stored config is the one the period was resolved with, so a board
//! deleted or re-created through another Photofinish server is noticed, the cached config
//! dropped, and the operation retried once with the fresh one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use photofinish_core::calendar::{validate_instant, MAX_INSTANT_US};
use photofinish_core::clock::{Clock, MonotonicClock};
use photofinish_core::ranking::{Entry, Outcome};
use photofinish_core::view::{BoardState, Rows, WriteRequest, Written};
use photofinish_core::{BoardConfig, Calendar, CoreError, Order, Period, PeriodRef, RankStyle};
use redis::{Script, ScriptInvocation, Value};

use crate::conn::{Conn, Target};
use crate::layout::{self, BoardKeys, MAX_SCORE, PERIOD_PARTS};
use crate::scripts;

/// Why an operation did nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedisError {
    /// No board of that name.
    #[error("board {0:?} does not exist")]
    BoardNotFound(String),
    /// The board exists with another config.
    #[error("board {board:?} exists with a different config")]
    ConfigConflict {
        /// Board name.
        board: String,
        /// The config it has.
        existing: Box<BoardConfig>,
    },
    /// The member is not in that period.
    #[error("member {member:?} is not ranked on board {board:?} in period {period}")]
    MemberNotFound {
        /// Board name.
        board: String,
        /// Member name.
        member: String,
        /// Period id.
        period: String,
    },
    /// A period other than the current one with no ranking.
    #[error("no ranking for period {0}")]
    PeriodNotFound(String),
    /// A score beyond what a ZSET score holds exactly.
    #[error("score {0} is outside ±9007199254740991 (2^53 − 1), the range the Redis backend holds exactly")]
    ScoreOutOfRange(i64),
    /// An `incr` whose result leaves ±(2^53 − 1).
    #[error("score overflow: {old} + {delta} leaves ±9007199254740991 (2^53 − 1), the range the Redis backend holds exactly")]
    ScoreOverflow {
        /// The score before.
        old: i64,
        /// The increment.
        delta: i64,
    },
    /// A rule of the ranking semantics.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// Redis could not be reached or answered an error; nothing was changed.
    #[error("redis is unavailable: {0}")]
    Unavailable(String),
}

impl From<redis::RedisError> for RedisError {
    fn from(e: redis::RedisError) -> Self {
        RedisError::Unavailable(e.to_string())
    }
}

/// A board's cached config and calendar, with the last retention floor and expiry computed
/// and the current period.
#[derive(Debug)]
struct Meta {
    config: BoardConfig,
    text: String,
    calendar: Calendar,
    floor: Mutex<Option<(String, Period)>>,
    expiry: Mutex<Option<(String, Option<i64>)>>,
    current: Mutex<Option<(Period, i64)>>,
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

impl Meta {
    fn desc(&self) -> &'static str {
        if self.config.order == Order::Desc {
            "1"
        } else {
            "0"
        }
    }

    /// The retention floor of `period`, computed once per period.
    fn floor(&self, period: &Period) -> Period {
        cached(&self.floor, &period.id, || {
            self.calendar.retention_floor(period, self.config.retention)
        })
    }

    /// When `period`'s keys expire, ms; computed once per period.
    fn expiry_ms(&self, period: &Period) -> Option<i64> {
        cached(&self.expiry, &period.id, || {
            self.calendar
                .retention_end_us(period, self.config.retention)
                .map(|us| us.div_euclid(1000))
        })
    }

    /// The current period at `now_us` and the start of the oldest period readers see, kept
    /// until the clock leaves that period: no calendar work on the hot path, and apart from
    /// the floor cache, which writes into other periods (imports) use.
    fn visible(&self, now_us: i64) -> Result<(Period, i64), RedisError> {
        let now = now_us.clamp(0, MAX_INSTANT_US);
        let mut cached = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((current, floor)) = cached.as_ref() {
            if current.contains(now) {
                return Ok((current.clone(), *floor));
            }
        }
        let current = self.calendar.period_at(now)?;
        let floor = self
            .calendar
            .retention_floor(&current, self.config.retention);
        *cached = Some((current.clone(), floor.start_us));
        Ok((current, floor.start_us))
    }
}

/// The Redis backend. See the module docs.
pub struct RedisStore {
    conn: Conn,
    ns: String,
    clock: MonotonicClock<Box<dyn Clock>>,
    meta: Mutex<HashMap<String, Arc<Meta>>>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("conn", &self.conn)
            .field("ns", &self.ns)
            .finish_non_exhaustive()
    }
}

/// The status word every script answers first.
fn status(v: &[Value]) -> &[u8] {
    match v.first() {
        Some(Value::BulkString(b)) => b,
        Some(Value::SimpleString(s)) => s.as_bytes(),
        _ => b"",
    }
}

fn bytes(v: Option<&Value>) -> Option<&[u8]> {
    match v {
        Some(Value::BulkString(b)) => Some(b),
        Some(Value::SimpleString(s)) => Some(s.as_bytes()),
        _ => None,
    }
}

fn int(v: Option<&Value>) -> Option<i64> {
    match v {
        Some(Value::Int(i)) => Some(*i),
        other => std::str::from_utf8(bytes(other)?).ok()?.parse().ok(),
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    bytes(v).map(|b| String::from_utf8_lossy(b).into_owned())
}

fn bad_reply(what: &str) -> RedisError {
    RedisError::Unavailable(format!("unexpected reply from redis to {what}"))
}

/// The board script with its four keys (cfg, periods, seq, clock) and the operation name.
fn board_call(keys: &BoardKeys, op: &str) -> ScriptInvocation<'static> {
    let mut inv = scripts::BOARD.prepare_invoke();
    inv.key(keys.config())
        .key(keys.periods())
        .key(keys.seq())
        .key(keys.clock())
        .arg(op);
    inv
}

/// Adds the keys of period `id`, in the order every period script takes them.
fn period_keys(inv: &mut ScriptInvocation<'_>, keys: &BoardKeys, id: &str) {
    for part in PERIOD_PARTS {
        inv.key(keys.period(id, part));
    }
}

/// A read or remove script on one period: KEYS cfg, periods, the period's keys; ARGV config,
/// period id, whether it is the current period.
fn period_call(
    script: &'static Script,
    keys: &BoardKeys,
    meta: &Meta,
    period: &Period,
    current: bool,
) -> ScriptInvocation<'static> {
    let mut inv = script.prepare_invoke();
    inv.key(keys.config()).key(keys.periods());
    period_keys(&mut inv, keys, &period.id);
    inv.arg(&meta.text)
        .arg(&period.id)
        .arg(if current { "1" } else { "0" });
    inv
}

/// Where a pipelined batch may be run again one by one without reordering: `ran[i]` is
/// `Some(true)` for an entry that was applied, `Some(false)` for one that failed without
/// effect, `None` for one whose script did not run. The answer is the first entry that did
/// not run, if no entry after it was applied.
fn rerun_from(ran: &[Option<bool>]) -> Option<usize> {
    let first = ran.iter().position(Option::is_none)?;
    ran[first..]
        .iter()
        .all(|r| *r != Some(true))
        .then_some(first)
}

/// A write ready for the write script: its period, keys and arguments.
struct PreparedWrite {
    period: Period,
    keys: Vec<String>,
    args: Vec<String>,
}

/// Outcome of one attempt that may have met a stale cached config.
enum Attempt<T> {
    Done(T),
    Stale,
}

impl RedisStore {
    /// Connects to `target`; keys go under namespace `ns` (default `pf`).
    pub async fn connect(
        target: &Target,
        ns: &str,
        clock: Box<dyn Clock>,
    ) -> Result<Self, RedisError> {
        Ok(Self {
            conn: Conn::connect(target).await?,
            ns: ns.to_owned(),
            clock: MonotonicClock::new(clock),
            meta: Mutex::new(HashMap::new()),
        })
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

    fn keys(&self, board: &str) -> BoardKeys {
        BoardKeys::new(&self.ns, board)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Meta>>> {
        self.meta.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remember(&self, board: &str, config: BoardConfig) -> Result<Arc<Meta>, RedisError> {
        let meta = Arc::new(Meta {
            text: layout::config_text(&config),
            calendar: Calendar::new(&config)?,
            config,
            floor: Mutex::new(None),
            expiry: Mutex::new(None),
            current: Mutex::new(None),
        });
        self.cache().insert(board.to_owned(), meta.clone());
        Ok(meta)
    }

    /// The board's config, from the cache or from Redis.
    async fn meta(&self, board: &str) -> Result<Arc<Meta>, RedisError> {
        if let Some(m) = self.cache().get(board) {
            return Ok(m.clone());
        }
        let raw: Option<Vec<u8>> = self
            .conn
            .query(redis::cmd("GET").arg(self.keys(board).config()))
            .await?;
        let raw = raw.ok_or_else(|| RedisError::BoardNotFound(board.to_owned()))?;
        let config = layout::parse_config(&raw).ok_or_else(|| {
            RedisError::Unavailable(format!("board {board:?} has an unreadable config"))
        })?;
        self.remember(board, config)
    }

    /// Fails with `BoardNotFound` unless the board exists (its config cached counts: a
    /// stale entry is caught by the next script's config check).
    pub async fn check_board(&self, board: &str) -> Result<(), RedisError> {
        self.meta(board).await.map(|_| ())
    }

    fn forget(&self, board: &str) {
        self.cache().remove(board);
    }

    /// Runs `f` with the board's config; on a stale cache, forgets it and runs once more.
    async fn with_meta<T, F, Fut>(&self, board: &str, f: F) -> Result<T, RedisError>
    where
        F: Fn(Arc<Meta>) -> Fut,
        Fut: std::future::Future<Output = Result<Attempt<T>, RedisError>>,
    {
        for _ in 0..2 {
            let meta = self.meta(board).await?;
            match f(meta).await? {
                Attempt::Done(t) => return Ok(t),
                Attempt::Stale => self.forget(board),
            }
        }
        Err(RedisError::BoardNotFound(board.to_owned()))
    }

    /// Maps the statuses every config-checking script may answer.
    fn common_status<T>(v: &[Value]) -> Result<Option<Attempt<T>>, RedisError> {
        match status(v) {
            b"ok" => Ok(None),
            b"config_changed" | b"no_board" => Ok(Some(Attempt::Stale)),
            other => Err(RedisError::Unavailable(format!(
                "unexpected script status {:?}",
                String::from_utf8_lossy(other)
            ))),
        }
    }

    /// Adds (`SADD`) or removes (`SREM`) `board` in the registry of board names.
    async fn registry(&self, command: &str, board: &str) -> Result<(), RedisError> {
        self.conn
            .query::<i64>(
                redis::cmd(command)
                    .arg(layout::registry_key(&self.ns))
                    .arg(board),
            )
            .await?;
        Ok(())
    }

    /// The registered board names, sorted.
    async fn board_names(&self) -> Result<Vec<String>, RedisError> {
        let mut names: Vec<String> = self
            .conn
            .query(redis::cmd("SMEMBERS").arg(layout::registry_key(&self.ns)))
            .await?;
        names.sort();
        Ok(names)
    }

    /// Creates a board; `Ok(true)` if new, `Ok(false)` if it exists with the same config.
    pub async fn create_board(&self, board: &str, config: BoardConfig) -> Result<bool, RedisError> {
        config.validate()?;
        let keys = self.keys(board);
        let text = layout::config_text(&config);
        let v: Vec<Value> = self
            .conn
            .script(board_call(&keys, "create").arg(&text))
            .await?;
        let created = match status(&v) {
            b"created" => true,
            b"same" => false,
            b"conflict" => {
                let existing = bytes(v.get(1))
                    .and_then(layout::parse_config)
                    .ok_or_else(|| bad_reply("create"))?;
                return Err(RedisError::ConfigConflict {
                    board: board.to_owned(),
                    existing: Box::new(existing),
                });
            }
            _ => return Err(bad_reply("create")),
        };
        // The registry is on another slot: added after, idempotently, so a retried PUT
        // repairs an interrupted create.
        self.registry("SADD", board).await?;
        self.remember(board, config)?;
        Ok(created)
    }

    /// Deletes a board and all its periods.
    pub async fn delete_board(&self, board: &str) -> Result<(), RedisError> {
        let keys = self.keys(board);
        let v: Vec<Value> = self
            .conn
            .script(board_call(&keys, "drop").arg(keys.period_prefix()))
            .await?;
        self.forget(board);
        self.registry("SREM", board).await?;
        match status(&v) {
            b"ok" => Ok(()),
            b"no_board" => Err(RedisError::BoardNotFound(board.to_owned())),
            _ => Err(bad_reply("drop")),
        }
    }

    /// A board's config, current period and member count.
    pub async fn board(&self, board: &str) -> Result<BoardState, RedisError> {
        let keys = self.keys(board);
        let now = self.now_us();
        self.with_meta(board, |meta| {
            let keys = keys.clone();
            async move {
                let current = meta.calendar.period_at(now.clamp(0, MAX_INSTANT_US))?;
                let v: Vec<Value> = self
                    .conn
                    .script(
                        board_call(&keys, "count")
                            .arg(&meta.text)
                            .arg(keys.period_prefix())
                            .arg(&current.id),
                    )
                    .await?;
                if let Some(a) = Self::common_status(&v)? {
                    return Ok(a);
                }
                Ok(Attempt::Done(BoardState {
                    name: board.to_owned(),
                    config: meta.config.clone(),
                    members: int(v.get(1)).unwrap_or(0).max(0) as u64,
                    current,
                }))
            }
        })
        .await
    }

    /// Every board, by name.
    pub async fn boards(&self) -> Result<Vec<BoardState>, RedisError> {
        let names = self.board_names().await?;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            match self.board(&name).await {
                Ok(b) => out.push(b),
                // Deleted between the registry read and now, or a delete interrupted
                // before its registry step: not a board.
                Err(RedisError::BoardNotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The periods holding a ranking, newest first, with their member counts.
    pub async fn periods(&self, board: &str) -> Result<Vec<(Period, u64)>, RedisError> {
        let keys = self.keys(board);
        let now = self.now_us();
        self.with_meta(board, |meta| {
            let keys = keys.clone();
            async move {
                let v: Vec<Value> = self
                    .conn
                    .script(
                        board_call(&keys, "periods")
                            .arg(&meta.text)
                            .arg(keys.period_prefix()),
                    )
                    .await?;
                if let Some(a) = Self::common_status(&v)? {
                    return Ok(a);
                }
                let floor = meta.visible(now)?.1;
                let mut out = Vec::new();
                for row in v[1..].chunks(3) {
                    let id = text(row.first()).ok_or_else(|| bad_reply("periods"))?;
                    let record = text(row.get(1)).ok_or_else(|| bad_reply("periods"))?;
                    let period = layout::parse_period_record(&id, &record)
                        .ok_or_else(|| bad_reply("periods"))?;
                    if period.start_us >= floor {
                        out.push((period, int(row.get(2)).unwrap_or(0).max(0) as u64));
                    }
                }
                out.sort_by_key(|(p, _)| std::cmp::Reverse(p.start_us));
                Ok(Attempt::Done(out))
            }
        })
        .await
    }

    /// Everything the write script needs for `w`, checked on this side first (range,
    /// instant, retention by the clock).
    fn prepare_write(
        &self,
        meta: &Meta,
        keys: &BoardKeys,
        w: &WriteRequest,
    ) -> Result<PreparedWrite, RedisError> {
        if w.value.abs() > MAX_SCORE {
            return Err(RedisError::ScoreOutOfRange(w.value));
        }
        let (at_us, stamped, period) = match w.at_us {
            // Stamped now: the current period, never older than retention.
            None => {
                let now = self.now_us();
                validate_instant(now)?;
                (now, "1", meta.visible(now)?.0)
            }
            Some(at) => {
                validate_instant(at)?;
                let period = meta.calendar.period_at(at)?;
                if period.start_us < meta.visible(self.now_us())?.1 {
                    return Err(CoreError::PeriodNotRetained(period.id).into());
                }
                (at, "0", period)
            }
        };
        let mut key_names = vec![keys.config(), keys.seq(), keys.periods(), keys.clock()];
        key_names.extend(
            PERIOD_PARTS
                .iter()
                .map(|part| keys.period(&period.id, part)),
        );
        let reached = layout::reached_digits(at_us);
        let args = vec![
            meta.text.clone(),
            period.id.clone(),
            layout::period_record(&period, &meta.floor(&period).id),
            w.member.clone(),
            w.op.unwrap_or(meta.config.update).as_str().to_owned(),
            w.value.to_string(),
            stamped.to_owned(),
            reached.clone(),
            layout::reached_digits(period.end_us.saturating_sub(1)),
            meta.desc().to_owned(),
            w.metadata.clone().unwrap_or_default(),
            keys.period_prefix(),
            MAX_SCORE.to_string(),
            layout::complement(&reached),
            meta.expiry_ms(&period).unwrap_or(0).to_string(),
        ];
        Ok(PreparedWrite {
            period,
            keys: key_names,
            args,
        })
    }

    /// The write script's answer: the outcome, or `None` if the cached config was stale.
    fn parse_written(
        meta: &Meta,
        w: &WriteRequest,
        period: Period,
        v: &[Value],
    ) -> Result<Option<Written>, RedisError> {
        match status(v) {
            b"period_not_retained" => return Err(CoreError::PeriodNotRetained(period.id).into()),
            b"score_overflow" => {
                return Err(RedisError::ScoreOverflow {
                    old: bytes(v.get(1)).and_then(layout::parse_score).unwrap_or(0),
                    delta: w.value,
                })
            }
            b"ranking_full" => {
                return Err(CoreError::RankingFull("sequence numbers exhausted").into())
            }
            _ => {}
        }
        if Self::common_status::<()>(v)?.is_some() {
            return Ok(None);
        }
        let score = bytes(v.get(1))
            .and_then(layout::parse_score)
            .ok_or_else(|| bad_reply("write"))?;
        let reached_at_us = bytes(v.get(3))
            .and_then(|tb| layout::reached_of(tb, meta.config.order))
            .ok_or_else(|| bad_reply("write"))?;
        let outcome = Outcome {
            score,
            rank: int(v.get(2)).unwrap_or(0).max(0) as u64,
            reached_at_us,
            changed: int(v.get(4)) == Some(1),
        };
        Ok(Some((outcome, period)))
    }

    /// Applies one write atomically.
    pub async fn write(&self, board: &str, w: &WriteRequest) -> Result<Written, RedisError> {
        let keys = self.keys(board);
        self.with_meta(board, |meta| {
            let keys = keys.clone();
            async move {
                let p = self.prepare_write(&meta, &keys, w)?;
                let mut inv = scripts::WRITE.prepare_invoke();
                for k in &p.keys {
                    inv.key(k);
                }
                for a in &p.args {
                    inv.arg(a);
                }
                let v: Vec<Value> = self.conn.script(&inv).await?;
                Ok(match Self::parse_written(&meta, w, p.period, &v)? {
                    Some(written) => Attempt::Done(written),
                    None => Attempt::Stale,
                })
            }
        })
        .await
    }

    /// Applies writes in order, each on its own, in one pipeline of scripts: one round trip
    /// for the batch instead of one per write. Entries whose script did not run (the script
    /// cache was flushed, or the board changed under a stale config) are run again one by
    /// one when every later entry did not run either, so the order holds; otherwise they
    /// fail. If the pipeline itself fails, the outcome of its entries is unknown and each
    /// answers unavailable.
    pub async fn write_many(
        &self,
        board: &str,
        writes: &[WriteRequest],
    ) -> Result<Vec<Result<Written, RedisError>>, RedisError> {
        let meta = self.meta(board).await?;
        let keys = self.keys(board);
        let prepared: Vec<Result<PreparedWrite, RedisError>> = writes
            .iter()
            .map(|w| self.prepare_write(&meta, &keys, w))
            .collect();
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for p in prepared.iter().flatten() {
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(scripts::WRITE.get_hash())
                .arg(p.keys.len())
                .arg(&p.keys)
                .arg(&p.args);
            pipe.add_command(cmd);
        }
        let replies: Vec<redis::RedisResult<Value>> = if pipe.is_empty() {
            Vec::new()
        } else {
            self.conn.load(&scripts::WRITE).await?;
            match self.conn.pipeline(&pipe).await {
                Ok(r) => r,
                Err(e) => {
                    let unknown = format!("outcome unknown, the batch's pipeline failed: {e}");
                    return Ok(prepared
                        .into_iter()
                        .map(|p| p.and(Err(RedisError::Unavailable(unknown.clone()))))
                        .collect());
                }
            }
        };
        // Per entry: Ok(Some) done, Ok(None) did not run (retry), Err failed.
        let mut replies = replies.into_iter();
        let mut out: Vec<Result<Option<Written>, RedisError>> = Vec::with_capacity(writes.len());
        for (w, p) in writes.iter().zip(prepared) {
            out.push(match p {
                Err(e) => Err(e),
                Ok(p) => match replies.next() {
                    Some(Ok(Value::Array(v))) => Self::parse_written(&meta, w, p.period, &v),
                    Some(Err(e))
                        if e.kind()
                            == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                    {
                        Ok(None)
                    }
                    Some(Err(e)) => Err(e.into()),
                    _ => Err(bad_reply("write")),
                },
            });
        }
        let ran: Vec<Option<bool>> = out
            .iter()
            .map(|r| match r {
                Ok(Some(_)) => Some(true),
                Ok(None) => None,
                Err(_) => Some(false),
            })
            .collect();
        let retry_from = rerun_from(&ran);
        let mut result = Vec::with_capacity(out.len());
        for (i, r) in out.into_iter().enumerate() {
            result.push(match r {
                Ok(Some(written)) => Ok(written),
                Err(e) => Err(e),
                Ok(None) if retry_from.is_some_and(|from| i >= from) => {
                    self.write(board, &writes[i]).await
                }
                Ok(None) => Err(RedisError::Unavailable(
                    "the board changed while the batch ran; retry this entry".into(),
                )),
            });
        }
        Ok(result)
    }

    /// Resolves a period reference: the period and whether it is the current one. A period
    /// older than readers see is not found, whether or not its keys have expired yet.
    fn resolve(meta: &Meta, r: &PeriodRef, now_us: i64) -> Result<(Period, bool), RedisError> {
        let (current, floor) = meta.visible(now_us)?;
        let period = match r {
            PeriodRef::Current => current.clone(),
            PeriodRef::Previous => meta.calendar.previous(&current)?,
            PeriodRef::Id(id) => meta.calendar.parse(id)?,
        };
        if period.start_us < floor {
            return Err(RedisError::PeriodNotFound(period.id));
        }
        let is_current = period.id == current.id;
        Ok((period, is_current))
    }

    /// Runs the read script in `mode` with `extra` arguments and turns its rows into entries.
    async fn read(
        &self,
        board: &str,
        r: &PeriodRef,
        style: RankStyle,
        mode: &str,
        extra: &[String],
        member: Option<&str>,
    ) -> Result<Rows, RedisError> {
        let keys = self.keys(board);
        let now = self.now_us();
        self.with_meta(board, |meta| {
            let keys = keys.clone();
            async move {
                let (period, current) = Self::resolve(&meta, r, now)?;
                let mut inv = period_call(&scripts::READ, &keys, &meta, &period, current);
                inv.arg(meta.desc()).arg(style.as_str()).arg(mode);
                for a in extra {
                    inv.arg(a);
                }
                let v: Vec<Value> = self.conn.script(&inv).await?;
                match status(&v) {
                    b"period_not_found" => return Err(RedisError::PeriodNotFound(period.id)),
                    b"member_not_found" => {
                        return Err(RedisError::MemberNotFound {
                            board: board.to_owned(),
                            member: member.unwrap_or_default().to_owned(),
                            period: period.id,
                        })
                    }
                    _ => {}
                }
                if let Some(a) = Self::common_status(&v)? {
                    return Ok(a);
                }
                let total = int(v.get(1)).unwrap_or(0).max(0) as u64;
                let start = int(v.get(2)).unwrap_or(0).max(0) as u64;
                let first_rank = int(v.get(3)).unwrap_or(0).max(0) as u64;
                let mut entries = Vec::new();
                let mut prev: Option<(i64, u64)> = None;
                for (i, row) in v[4..].chunks(3).enumerate() {
                    let enc = bytes(row.first()).ok_or_else(|| bad_reply("read"))?;
                    let (tb, name) = layout::split_member(enc).ok_or_else(|| bad_reply("read"))?;
                    let score = bytes(row.get(1))
                        .and_then(layout::parse_score)
                        .ok_or_else(|| bad_reply("read"))?;
                    let pos = start + i as u64;
                    // The same rule as the embedded page: the first row's rank comes from
                    // the script, each later one from its predecessor.
                    let rank = match (style, prev) {
                        (_, None) => first_rank,
                        (RankStyle::Ordinal, _) => pos + 1,
                        (_, Some((s, rank))) if s == score => rank,
                        (RankStyle::Competition, Some(_)) => pos + 1,
                        (RankStyle::Dense, Some((_, rank))) => rank + 1,
                    };
                    prev = Some((score, rank));
                    entries.push(Entry {
                        rank,
                        member: name.to_owned(),
                        score,
                        reached_at_us: layout::reached_of(tb, meta.config.order)
                            .ok_or_else(|| bad_reply("read"))?,
                        metadata: text(row.get(2)),
                    });
                }
                Ok(Attempt::Done(Rows {
                    total,
                    period,
                    entries,
                }))
            }
        })
        .await
    }

    /// A member's entry in `style`, with the period's size.
    pub async fn member(
        &self,
        board: &str,
        member: &str,
        style: RankStyle,
        r: &PeriodRef,
    ) -> Result<(Entry, u64, Period), RedisError> {
        let mut rows = self
            .read(
                board,
                r,
                style,
                "member",
                &[member.to_owned()],
                Some(member),
            )
            .await?;
        let entry = rows.entries.pop().ok_or_else(|| bad_reply("member"))?;
        Ok((entry, rows.total, rows.period))
    }

    /// Up to `limit` entries from 0-based `offset`.
    pub async fn page(
        &self,
        board: &str,
        offset: u64,
        limit: u64,
        style: RankStyle,
        r: &PeriodRef,
    ) -> Result<Rows, RedisError> {
        let offset = offset.min(i64::MAX as u64);
        self.read(
            board,
            r,
            style,
            "page",
            &[offset.to_string(), limit.to_string()],
            None,
        )
        .await
    }

    /// The window around `member`.
    pub async fn around(
        &self,
        board: &str,
        member: &str,
        before: u64,
        after: u64,
        style: RankStyle,
        r: &PeriodRef,
    ) -> Result<Rows, RedisError> {
        let extra = [member.to_owned(), before.to_string(), after.to_string()];
        self.read(board, r, style, "around", &extra, Some(member))
            .await
    }

    /// Removes a member from a period.
    pub async fn remove(&self, board: &str, member: &str, r: &PeriodRef) -> Result<(), RedisError> {
        let keys = self.keys(board);
        let now = self.now_us();
        self.with_meta(board, |meta| {
            let keys = keys.clone();
            async move {
                let (period, current) = Self::resolve(&meta, r, now)?;
                let v: Vec<Value> = self
                    .conn
                    .script(
                        period_call(&scripts::REMOVE, &keys, &meta, &period, current).arg(member),
                    )
                    .await?;
                match status(&v) {
                    b"period_not_found" => Err(RedisError::PeriodNotFound(period.id)),
                    b"member_not_found" => Err(RedisError::MemberNotFound {
                        board: board.to_owned(),
                        member: member.to_owned(),
                        period: period.id,
                    }),
                    _ => match Self::common_status(&v)? {
                        Some(a) => Ok(a),
                        None => Ok(Attempt::Done(())),
                    },
                }
            }
        })
        .await
    }

    /// Number of boards and of members over all their retained periods (for metrics).
    pub async fn totals(&self) -> Result<(u64, u64), RedisError> {
        let names = self.board_names().await?;
        let (mut boards, mut members) = (0, 0);
        for name in names {
            match self.periods(&name).await {
                Ok(ps) => {
                    boards += 1;
                    members += ps.iter().map(|(_, n)| n).sum::<u64>();
                }
                Err(RedisError::BoardNotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok((boards, members))
    }
}

#[cfg(test)]
mod tests {
    use super::rerun_from;

    #[test]
    fn a_batch_reruns_only_an_unrun_tail() {
        let (done, failed, unrun) = (Some(true), Some(false), None);
        assert_eq!(rerun_from(&[done, done]), None);
        assert_eq!(rerun_from(&[done, unrun, unrun]), Some(1));
        assert_eq!(rerun_from(&[done, unrun, failed, unrun]), Some(1));
        // An entry after the gap was applied: running the gap now would reorder.
        assert_eq!(rerun_from(&[unrun, done]), None);
        assert_eq!(rerun_from(&[]), None);
    }
}
