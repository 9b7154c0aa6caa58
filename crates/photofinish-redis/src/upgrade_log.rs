//! `photofinish upgrade` (alias `redis-upgrade`): moves a namespace of the log layout's
//! first format (`log`) to the newest ([`crate::formats`]: only the format key changes;
//! the next snapshots are written in the newer format), and converts a namespace written
//! in format 2 (the Lua data model, docs/redis-layout.md) to the log layout (SPEC §12,
//! "Upgrade"), as follows.
//!
//! First every earlier node's writes are made to fail: the namespace's format key says
//! `log-converting` (a format-2 server refuses to start on it), and each board's config
//! key is replaced by a fence before its data is read (every format-2 script compares the
//! config first, so a running format-2 server's writes to it fail from then on). Then each
//! board becomes the log layout's: its config, every retained period with every entry
//! (score, `reached_at`, tie order, metadata), its webhook cursor and its remembered
//! idempotency keys are built into one state with the store's own state machine, published
//! as the board's snapshot after a first entry (its create), and the format-2 keys are
//! deleted. The log below the snapshot is trimmed, so no node rebuilds the board from the
//! create alone. It is resumable: a board whose snapshot is published is done, and one
//! interrupted midway is read again from its saved config (`…:upgrade:cfg`).

use photofinish_core::idempotency::{digest, Answer};
use photofinish_core::op::WriteOutcome;
use photofinish_core::ranking::{RankingBuilder, SavedEntry};
use photofinish_core::view::BoardState;
use photofinish_core::{
    BoardConfig, BoardError, ErrorCode, Op, Order, Outcome, Period, Scores, Shape,
};
use photofinish_store::{Command, State};
use redis::Value;

use crate::conn::unavailable;
use crate::conn::{Conn, Target};
use crate::formats::{NsFormat, CONVERTING, LATER, NEWEST};
use crate::layout::{self, BoardKeys};
use crate::log::{BoardLog, LogKeys};
use crate::replica::{encode_entry, SNAPSHOT_VERSION};
use crate::reply::Reply;

/// The status words of format 2's script answers, as its idempotency records hold them.
mod format;
pub use format::check_log_format;
use format::format_1;

mod status {
    pub const OK: &[u8] = b"ok";
    pub const PERIOD_NOT_RETAINED: &[u8] = b"period_not_retained";
    pub const SCORE_OVERFLOW: &[u8] = b"score_overflow";
    pub const RANKING_FULL: &[u8] = b"ranking_full";
    pub const CREATED: &[u8] = b"created";
    pub const SAME: &[u8] = b"same";
    pub const RULE_BROKEN: &[u8] = b"rule_broken";
    pub const OVER_BUDGET: &[u8] = b"over_budget";
    pub const REFUSED: &[u8] = b"refused";
}

/// What a format-2 config key holds once its board is being converted: no format-2
/// server parses it, so every one of its calls on the board fails.
pub const FENCE: &str = "{\"converted_to\":\"log\"}";

/// Ranking entries read per call.
const PAGE: isize = 10_000;

/// Keys asked for per `SCAN` step.
const SCAN_COUNT: usize = 1_000;

/// How long the upgrade holds a board's snapshot lease.
const LEASE: std::time::Duration = std::time::Duration::from_secs(300);

/// What an upgrade did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogUpgradeReport {
    /// The namespace was at the newest format already.
    pub already_current: bool,
    /// The log layout's older format the namespace was moved on from (`log`), if it was.
    pub moved_from: Option<String>,
    /// Boards converted (those done by an earlier, interrupted run not counted).
    pub boards: u64,
    /// Periods converted.
    pub periods: u64,
    /// Entries converted.
    pub entries: u64,
    /// Remembered idempotency keys converted.
    pub keys: u64,
}

fn damaged(what: String) -> BoardError {
    BoardError::Unavailable(format!("format-2 data: {what}"))
}

async fn get<T: redis::FromRedisValue>(conn: &Conn, cmd: &redis::Cmd) -> Result<T, BoardError> {
    conn.query(cmd).await.map_err(unavailable)
}

/// Converts namespace `ns` on `target` to the log layout. See the module docs.
pub async fn upgrade_to_log(target: &Target, ns: &str) -> Result<LogUpgradeReport, BoardError> {
    let conn = Conn::connect(target).await.map_err(unavailable)?;
    let format_key = layout::format_key(ns);
    let found: Option<String> = get(&conn, redis::cmd("GET").arg(&format_key)).await?;
    let mut report = LogUpgradeReport::default();
    match found.as_deref() {
        Some(NEWEST) => {
            report.already_current = true;
            return Ok(report);
        }
        Some(older) if NsFormat::parse(older).is_some() => {
            // Every node runs this release (the operator says so by running it): from now
            // on they write the newest format.
            let _: () = get(&conn, redis::cmd("SET").arg(&format_key).arg(NEWEST)).await?;
            report.moved_from = Some(older.to_owned());
            return Ok(report);
        }
        Some(layout::FORMAT) | Some(CONVERTING) => {}
        None => {
            let boards: u64 = get(&conn, redis::cmd("SCARD").arg(layout::registry_key(ns))).await?;
            if boards > 0 {
                return Err(format_1(ns));
            }
            let _: () = get(&conn, redis::cmd("SET").arg(&format_key).arg(NEWEST)).await?;
            report.already_current = true;
            return Ok(report);
        }
        Some(other) if other.starts_with(LATER) => {
            return Err(BoardError::Unavailable(format!(
                "redis namespace {ns:?} is at format {other}, newer than this Photofinish \
                 knows ({NEWEST}): upgrade photofinish itself"
            )))
        }
        Some(other) => {
            return Err(BoardError::Unavailable(format!(
                "redis namespace {ns:?} holds data format {other}, which this Photofinish \
                 cannot convert"
            )))
        }
    }
    let _: () = get(&conn, redis::cmd("SET").arg(&format_key).arg(CONVERTING)).await?;
    let mut boards: Vec<String> =
        get(&conn, redis::cmd("SMEMBERS").arg(layout::registry_key(ns))).await?;
    boards.sort();
    for board in boards {
        convert_board(&conn, ns, &board, &mut report).await?;
    }
    let _: () = get(&conn, redis::cmd("DEL").arg(layout::hooks_key(ns))).await?;
    let _: () = get(&conn, redis::cmd("SET").arg(&format_key).arg(NEWEST)).await?;
    Ok(report)
}

/// The Redis clock, µs.
async fn redis_now_us(conn: &Conn) -> Result<i64, BoardError> {
    let (s, us): (i64, i64) = get(conn, &redis::cmd("TIME")).await?;
    Ok(s * 1_000_000 + us)
}

/// Converts one board (see the module docs); a board already converted only loses its
/// format-2 keys, if any are left.
pub async fn convert_board(
    conn: &Conn,
    ns: &str,
    board: &str,
    report: &mut LogUpgradeReport,
) -> Result<(), BoardError> {
    let keys = BoardKeys::new(ns, board);
    let log = BoardLog::new(conn.clone(), LogKeys::new(ns, board));
    if log.published_n().await.map_err(log_error)? > 0 {
        return delete_format2_keys(conn, ns, board).await;
    }
    let saved_key = format!("{ns}:{{{board}}}:upgrade:cfg");
    let Some(text) = config_text(conn, &keys, &saved_key).await? else {
        // Listed, but gone (a delete left the name): nothing to convert.
        return Ok(());
    };
    // From here on, no format-2 server writes this board.
    let _: () = get(conn, redis::cmd("SET").arg(keys.config()).arg(FENCE)).await?;
    let config = layout::parse_config(text.as_bytes())
        .ok_or_else(|| damaged(format!("board {board:?} has config {text:?}")))?;
    let now = redis_now_us(conn).await?;
    let checked = config
        .clone()
        .checked()
        .map_err(|e| damaged(format!("board {board:?} has config {text:?}: {e}")))?;
    let create = Command::from(photofinish_store::command::CreateBoard {
        board: board.to_owned(),
        config: checked,
        max_boards: None,
        hidden: Vec::new(),
    });
    let state = State::default();
    state.apply(&create)?;
    convert_periods(conn, &keys, board, &config, &state, report).await?;
    let hook: Option<i64> = get(conn, redis::cmd("GET").arg(keys.hook())).await?;
    if let Some(cursor_us) = hook {
        state.apply(&Command::HookAdvance {
            board: board.to_owned(),
            cursor_us,
        })?;
    }
    convert_keys(conn, &keys, ns, board, &config, &state, now, report).await?;
    write_log(conn, &log, board, &create, &state, now).await?;
    report.boards += 1;
    delete_format2_keys(conn, ns, board).await
}

/// The board's format-2 config text: as saved by an earlier, interrupted run, or read
/// now and saved under `saved_key` (the fence that follows overwrites the live one);
/// `None` when the board is listed but gone.
async fn config_text(
    conn: &Conn,
    keys: &BoardKeys,
    saved_key: &str,
) -> Result<Option<String>, BoardError> {
    let saved: Option<String> = get(conn, redis::cmd("GET").arg(saved_key)).await?;
    if saved.is_some() {
        return Ok(saved);
    }
    let live: Option<String> = get(conn, redis::cmd("GET").arg(keys.config())).await?;
    let Some(t) = live else {
        return Ok(None);
    };
    let _: () = get(conn, redis::cmd("SET").arg(saved_key).arg(&t)).await?;
    Ok(Some(t))
}

/// Writes the converted board's log: its create as entry 1 (kept from an interrupted
/// run), the snapshot of the whole `state` at entry 1, and the log trimmed past it.
async fn write_log(
    conn: &Conn,
    log: &BoardLog,
    board: &str,
    create: &Command,
    state: &State,
    now: i64,
) -> Result<(), BoardError> {
    let head = log.head().await.map_err(log_error)?;
    let check = match head.n {
        0 => {
            let entry = encode_entry(create, false, now);
            log.append(None, now, None, &[entry])
                .await
                .map_err(log_error)?
                .check
        }
        1 => head.check,
        n => {
            return Err(BoardError::Unavailable(format!(
                "board {board:?} already has a log of {n} entries: a log-layout node wrote to \
                 it during the upgrade; stop every node and run the upgrade again"
            )))
        }
    };
    let mut bytes = Vec::new();
    photofinish_store::snapshot::write(state, 1, now, &mut bytes)
        .map_err(|e| BoardError::Unavailable(format!("encoding board {board:?}: {e}")))?;
    let lease = log
        .take_lease(LEASE)
        .await
        .map_err(log_error)?
        .ok_or_else(|| {
            BoardError::Unavailable(format!(
                "board {board:?}'s snapshot lease is held: a log-layout node is running"
            ))
        })?;
    let published = log
        .publish_snapshot(lease, 1, &check, SNAPSHOT_VERSION, &bytes, 1)
        .await
        .map_err(log_error)?;
    let _ = log.release_lease(lease).await;
    published.map_err(|why| {
        BoardError::Unavailable(format!(
            "board {board:?}'s snapshot was not published: {why:?}"
        ))
    })?;
    // No node may rebuild the board from entry 1 alone: the log starts after it.
    let _: i64 = get(
        conn,
        redis::cmd("XTRIM")
            .arg(&log.keys().log)
            .arg("MINID")
            .arg("0-2"),
    )
    .await?;
    Ok(())
}

fn log_error(e: crate::log::LogError) -> BoardError {
    BoardError::Unavailable(e.to_string())
}

/// Every retained period of the board, entry by entry in rank order, into `state`.
async fn convert_periods(
    conn: &Conn,
    keys: &BoardKeys,
    board: &str,
    config: &BoardConfig,
    state: &State,
    report: &mut LogUpgradeReport,
) -> Result<(), BoardError> {
    let records: Vec<(String, String)> =
        get(conn, redis::cmd("HGETALL").arg(keys.periods())).await?;
    for (id, record) in records {
        let period = layout::parse_period_record(&id, &record)
            .ok_or_else(|| damaged(format!("period record {id:?} = {record:?}")))?;
        let ranking = read_ranking(conn, keys, &period, config.order).await?;
        let entries = ranking.len();
        let file = format!("upgrade.{}", period.id);
        state.stage(file.clone(), ranking);
        state.apply(&Command::Import {
            board: board.to_owned(),
            // An instant in the period: its start (`all` has none: any instant is in it).
            period_us: period.start_us.max(0),
            file,
            entries,
            hidden: Vec::new(),
        })?;
        report.periods += 1;
        report.entries += entries;
    }
    Ok(())
}

/// A period's ranking: its ZSET in rank order (a page at a time), each entry's `reached_at`
/// from its tie-break, its metadata from the period's metadata hash.
async fn read_ranking(
    conn: &Conn,
    keys: &BoardKeys,
    period: &Period,
    order: Order,
) -> Result<photofinish_core::Ranking, BoardError> {
    let prefix = keys.period(&period.id);
    let (zset, meta) = (format!("{prefix}r"), format!("{prefix}meta"));
    // Rank order: ascending boards read up, descending down (a desc tie-break is stored
    // complemented, so the earlier entry sorts later).
    let range = if order == Order::Desc {
        "ZREVRANGE"
    } else {
        "ZRANGE"
    };
    // Format 2 had no columns: every board it held ranks by one.
    let mut builder = RankingBuilder::new(Shape::single(order, Op::Incr), 0);
    let mut start: isize = 0;
    loop {
        let page: Vec<(Vec<u8>, Vec<u8>)> = get(
            conn,
            redis::cmd(range)
                .arg(&zset)
                .arg(start)
                .arg(start + PAGE - 1)
                .arg("WITHSCORES"),
        )
        .await?;
        if page.is_empty() {
            break;
        }
        let mut rows = Vec::with_capacity(page.len());
        for (member, score) in &page {
            let e = layout::split_entry(member, score)
                .ok_or_else(|| damaged(format!("an entry of {zset}: {member:?}")))?;
            let at = layout::reached_of(e.tiebreak, order)
                .ok_or_else(|| damaged(format!("a tie-break in {zset}")))?;
            rows.push((e.name.to_owned(), e.score, at));
        }
        let mut ask = redis::cmd("HMGET");
        ask.arg(&meta);
        for (name, _, _) in &rows {
            ask.arg(name);
        }
        let metadata: Vec<Option<String>> = get(conn, &ask).await?;
        for ((name, score, at), metadata) in rows.iter().zip(&metadata) {
            builder.push(SavedEntry {
                member: name,
                scores: Scores::one(*score),
                reached_at_us: *at,
                seq: builder.len() + 1,
                metadata: metadata.as_deref(),
            })?;
        }
        start += PAGE;
    }
    builder.finish()
}

/// Every remembered idempotency key of the board, into `state`'s table with the time to
/// live it has left. A record is read by a script (`cmsgpack` is Redis's).
#[allow(clippy::too_many_arguments)]
async fn convert_keys(
    conn: &Conn,
    keys: &BoardKeys,
    ns: &str,
    board: &str,
    config: &BoardConfig,
    state: &State,
    now_us: i64,
    report: &mut LogUpgradeReport,
) -> Result<(), BoardError> {
    static UNPACK: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
        redis::Script::new(
            "local v = redis.call('GET', KEYS[1]) \
             if not v then return false end \
             return {cmsgpack.unpack(v), redis.call('PTTL', KEYS[1])}",
        )
    });
    let prefix = keys.idempotency("");
    let names = conn
        .scan_slot(&keys.config(), &format!("{prefix}*"), SCAN_COUNT)
        .await
        .map_err(unavailable)?;
    let _ = ns;
    for name in names {
        let v: Value = conn.invoke(&UNPACK.key(&name)).await.map_err(unavailable)?;
        let Value::Array(parts) = v else { continue };
        let (Some(Value::Array(rec)), Some(Value::Int(ttl_ms))) = (parts.first(), parts.get(1))
        else {
            continue;
        };
        let rec = Reply::new("upgrade", Value::Array(rec.clone()))?;
        let fingerprint =
            hex16(&rec.text(0)?).ok_or_else(|| rec.malformed(0, "is no fingerprint"))?;
        let answer = answer_of(&rec.nested(1)?, board, config)?;
        let id = &name[prefix.len()..];
        let expires = now_us.saturating_add(ttl_ms.max(&0).saturating_mul(1_000));
        state
            .idempotency()
            .remember(digest(id), fingerprint, expires, &answer);
        report.keys += 1;
    }
    Ok(())
}

/// The first 16 bytes of a fingerprint's hex (the log layout keeps 16).
fn hex16(hex: &str) -> Option<[u8; 16]> {
    photofinish_store::hex::decode(hex.get(..32)?)
}

/// A remembered answer as `keyed.lua` stored it: a write's (`ok …` with its period), a
/// batch's (one answer per entry), a remove's (`ok`) or a create's (`created`/`same` …).
fn answer_of(a: &Reply, board: &str, config: &BoardConfig) -> Result<Answer, BoardError> {
    if a.nested(0).is_ok() {
        let entries = a.nested_all(0)?;
        return Ok(Answer::Batch(
            entries.iter().map(|e| written(e, config)).collect(),
        ));
    }
    match a.status()? {
        status::OK if a.len() == 1 => Ok(photofinish_core::op::Remove::remembered()),
        s @ (status::CREATED | status::SAME) => {
            let stored =
                layout::parse_config(a.bytes(1)?).ok_or_else(|| a.malformed(1, "is no config"))?;
            let instant = |at: usize| -> Result<i64, BoardError> {
                a.text(at)?
                    .parse()
                    .map_err(|_| a.malformed(at, "is no instant"))
            };
            Ok(Answer::Created {
                created: s == status::CREATED,
                state: Box::new(BoardState {
                    name: board.to_owned(),
                    config: stored,
                    members: a.count(2)?,
                    current: Period {
                        id: a.text(3)?,
                        start_us: instant(4)?,
                        end_us: instant(5)?,
                    },
                }),
            })
        }
        _ => Ok(Answer::Written(written(a, config)?)),
    }
}

/// One write's remembered answer: its outcome in the period it names, or its refusal
/// (the code kept; a rule's refusal is worded here, not as the first answer worded it).
fn written(r: &Reply, config: &BoardConfig) -> Result<WriteOutcome, BoardError> {
    let code = match r.status()? {
        status::OK => {
            let n = r.len();
            let id = r.text(n.saturating_sub(2))?;
            let period = layout::parse_period_record(&id, &r.text(n.saturating_sub(1))?)
                .ok_or_else(|| r.malformed(n - 1, "is no period record"))?;
            let outcome = Outcome {
                scores: Scores::one(r.integer(1)?),
                rank: r.count(2)?,
                reached_at_us: layout::answer_reached(r.bytes(3)?, config.order)
                    .ok_or_else(|| r.malformed(3, "is no tie-break"))?,
                changed: r.flag(4)?,
                partition_rank: None,
            };
            return Ok(WriteOutcome {
                outcome,
                period,
                columns: Default::default(),
                partition: None,
                team: None,
            });
        }
        status::REFUSED => {
            let code = r.text(1)?;
            return Err(BoardError::Remembered {
                code: ErrorCode::parse(&code).ok_or_else(|| r.malformed(1, "is no error code"))?,
                message: r.text(2)?,
            });
        }
        status::PERIOD_NOT_RETAINED => ErrorCode::PeriodNotRetained,
        status::SCORE_OVERFLOW => ErrorCode::ScoreOverflow,
        status::RANKING_FULL => ErrorCode::RankingFull,
        status::RULE_BROKEN => ErrorCode::ScoreRejected,
        status::OVER_BUDGET => ErrorCode::InsufficientStorage,
        other => return Err(r.malformed(0, &format!("is {:?}", String::from_utf8_lossy(other)))),
    };
    Err(BoardError::Remembered {
        code,
        message: format!(
            "refused when first applied ({}; remembered from before the upgrade to the log layout)",
            code.as_str()
        ),
    })
}

/// Deletes the board's format-2 keys (every key under its hash tag that the log layout
/// does not use).
async fn delete_format2_keys(conn: &Conn, ns: &str, board: &str) -> Result<(), BoardError> {
    let base = format!("{ns}:{{{board}}}:");
    let log = LogKeys::new(ns, board);
    let kept = |k: &str| {
        k == log.log
            || k == log.head
            || k == log.lease
            || k == log.fence
            || k == log.snap
            || k == log.groups
            || k == log.imports
            || k == log.imported
            || k.starts_with(&format!("{}:", log.snap))
            || k.starts_with(&format!("{}:", log.imports))
    };
    let names = conn
        .scan_slot(&format!("{base}cfg"), &format!("{base}*"), SCAN_COUNT)
        .await
        .map_err(unavailable)?;
    for chunk in names
        .iter()
        .filter(|k| !kept(k))
        .collect::<Vec<_>>()
        .chunks(100)
    {
        let mut del = redis::cmd("UNLINK");
        for k in chunk {
            del.arg(k.as_str());
        }
        let _: i64 = get(conn, &del).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_keeps_its_first_16_bytes() {
        let hex: String = (0u8..32).map(|b| format!("{b:02x}")).collect();
        let got = hex16(&hex).expect("hex");
        assert_eq!(got[0], 0);
        assert_eq!(got[15], 15);
        assert_eq!(hex16("zz"), None);
    }
}
