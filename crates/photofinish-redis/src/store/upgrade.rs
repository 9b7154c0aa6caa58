//! The data format in Redis (docs/redis-layout.md, "Format"): checked when a server
//! connects, and the explicit upgrade of a namespace written by format 1 (33-digit
//! tie-breaks, a member → record hash and a distinct-score set per period) to format 2, in
//! place. The upgrade is meant to run with every Photofinish server on the namespace
//! stopped; it can be interrupted and run again (entries already loaded are skipped).

use std::collections::HashMap;

use photofinish_core::BoardError;
use redis::Value;

use super::{unavailable, RedisStore};
use crate::conn::{Conn, Target};
use crate::layout::{self, BoardKeys, FORMAT};
use crate::scripts::load::{LoadCall, LoadEntry};

/// Entries sent to Redis per load call.
const LOAD_CHUNK: usize = 1000;
/// Fields asked of Redis per HSCAN step.
const SCAN_COUNT: usize = 1000;

/// What an upgrade did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpgradeReport {
    /// The namespace was at this format already; nothing was done.
    pub already_current: bool,
    /// Boards rewritten.
    pub boards: u64,
    /// Periods rewritten.
    pub periods: u64,
    /// Entries loaded in the new layout.
    pub entries: u64,
}

/// How to upgrade, for the refusal at start.
fn upgrade_hint(ns: &str) -> String {
    format!(
        "stop every Photofinish server on it, then run `photofinish redis-upgrade --storage \
         <url> --redis-namespace {ns}`, which rewrites it in place"
    )
}

/// Why a server refuses to start on namespace `ns` holding `found` (None: format 1, which
/// wrote no version), or `None` when it may.
pub(super) fn refusal(ns: &str, found: Option<&str>, boards: u64) -> Option<String> {
    match found {
        Some(FORMAT) => None,
        Some(other) => Some(format!(
            "redis namespace {ns:?} holds data format {other}; this Photofinish reads format \
             {FORMAT}: run a Photofinish that reads format {other}"
        )),
        None if boards > 0 => Some(format!(
            "redis namespace {ns:?} holds {boards} board(s) in data format 1 (written before \
             version 2 of the layout); this Photofinish reads format {FORMAT}: {}",
            upgrade_hint(ns)
        )),
        None => None,
    }
}

async fn get<T: redis::FromRedisValue>(conn: &Conn, cmd: &redis::Cmd) -> Result<T, BoardError> {
    conn.query(cmd).await.map_err(unavailable)
}

impl RedisStore {
    /// Checks the namespace's format: an empty namespace takes this version's; any other
    /// format is refused with what to do.
    pub(super) async fn check_format(&self) -> Result<(), BoardError> {
        let key = layout::format_key(&self.ns);
        let found: Option<String> = get(&self.conn, redis::cmd("GET").arg(&key)).await?;
        let boards: u64 = if found.is_none() {
            get(
                &self.conn,
                redis::cmd("SCARD").arg(layout::registry_key(&self.ns)),
            )
            .await?
        } else {
            0
        };
        if let Some(why) = refusal(&self.ns, found.as_deref(), boards) {
            return Err(BoardError::Unavailable(why));
        }
        if found.is_none() {
            let _: Value = get(
                &self.conn,
                redis::cmd("SET").arg(&key).arg(FORMAT).arg("NX"),
            )
            .await?;
        }
        Ok(())
    }

    /// Upgrades namespace `ns` on `target` to this format. See the module docs.
    pub async fn upgrade(target: &Target, ns: &str) -> Result<UpgradeReport, BoardError> {
        let conn = Conn::connect(target).await.map_err(unavailable)?;
        let key = layout::format_key(ns);
        let found: Option<String> = get(&conn, redis::cmd("GET").arg(&key)).await?;
        match found.as_deref() {
            Some(FORMAT) => {
                return Ok(UpgradeReport {
                    already_current: true,
                    ..UpgradeReport::default()
                })
            }
            Some(other) => {
                return Err(BoardError::Unavailable(format!(
                    "redis namespace {ns:?} holds data format {other}, which this Photofinish \
                     does not upgrade"
                )))
            }
            None => {}
        }
        let mut names: Vec<String> =
            get(&conn, redis::cmd("SMEMBERS").arg(layout::registry_key(ns))).await?;
        names.sort();
        let mut report = UpgradeReport::default();
        for board in names {
            upgrade_board(&conn, ns, &board, &mut report).await?;
        }
        let _: Value = get(&conn, redis::cmd("SET").arg(&key).arg(FORMAT)).await?;
        Ok(report)
    }
}

/// Rewrites one board: the stamped clock, then each period's entries.
async fn upgrade_board(
    conn: &Conn,
    ns: &str,
    board: &str,
    report: &mut UpgradeReport,
) -> Result<(), BoardError> {
    let keys = BoardKeys::new(ns, board);
    let Some(raw) = get::<Option<Vec<u8>>>(conn, redis::cmd("GET").arg(keys.config())).await?
    else {
        return Ok(()); // registered but deleted: nothing to rewrite
    };
    let config = layout::parse_config(&raw).ok_or_else(|| {
        BoardError::Unavailable(format!("board {board:?} has an unreadable config"))
    })?;
    let old_clock = format!("{ns}:{{{board}}}:clock");
    if let Some(clock) = get::<Option<String>>(conn, redis::cmd("GET").arg(&old_clock)).await? {
        let at: i64 = clock.parse().map_err(|_| {
            BoardError::Unavailable(format!("board {board:?} has an unreadable clock {clock:?}"))
        })?;
        let _: Value = get(
            conn,
            redis::cmd("SET")
                .arg(keys.clock())
                .arg(&layout::reached_bytes(at)[..]),
        )
        .await?;
        let _: Value = get(conn, redis::cmd("UNLINK").arg(&old_clock)).await?;
    }
    let periods: HashMap<String, String> =
        get(conn, redis::cmd("HGETALL").arg(keys.periods())).await?;
    for (id, record) in periods {
        let Some(period) = layout::parse_period_record(&id, &record) else {
            continue;
        };
        let floor_id = record.split(' ').nth(2).unwrap_or(&id).to_owned();
        let old = |part: &str| format!("{}{part}", keys.period(&id));
        // Scripts take expiries as times to live (`deadline` in common.lua): PTTL answers
        // -1 for none, -2 for no such key, 0 for a key expiring this millisecond. The first
        // chunk's deadline holds for the rest (load.lua keeps the period's `r` deadline).
        let pttl: i64 = get(conn, redis::cmd("PTTL").arg(old("z"))).await?;
        let ttl = (pttl >= 0).then_some(pttl.max(1));
        let (prefix, periods_key) = (keys.period(&id), keys.periods());
        let call = |entries: &[LoadEntry]| {
            LoadCall {
                keys: &keys,
                prefix: &prefix,
                periods_key: &periods_key,
                seq_key: None,
                period: &period,
                floor_id: &floor_id,
                desc: config.order == photofinish_core::Order::Desc,
                expiry_ms: ttl,
                entries,
            }
            .invocation()
        };
        let mut cursor = 0_u64;
        let mut loaded_any = false;
        loop {
            let (next, fields): (u64, Vec<(String, String)>) = get(
                conn,
                redis::cmd("HSCAN")
                    .arg(old("m"))
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(SCAN_COUNT),
            )
            .await?;
            let entries = fields
                .into_iter()
                .map(|(name, rec)| legacy_entry(name, &rec, config.order))
                .collect::<Result<Vec<_>, _>>()?;
            for chunk in entries.chunks(LOAD_CHUNK) {
                loaded_any = true;
                let v: Value = conn.call(&call(chunk)).await.map_err(unavailable)?;
                if let Value::Array(a) = v {
                    if let Some(Value::Int(n)) = a.get(1) {
                        report.entries += *n as u64;
                    }
                }
            }
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        if !loaded_any {
            // No entries (or all loaded by an earlier run): the record still gets its state.
            let _: Value = conn.call(&call(&[])).await.map_err(unavailable)?;
        }
        let _: Value = get(
            conn,
            redis::cmd("UNLINK")
                .arg(old("z"))
                .arg(old("m"))
                .arg(old("d")),
        )
        .await?;
        report.periods += 1;
    }
    report.boards += 1;
    Ok(())
}

/// One format-1 record `"<score> <33-digit tie-break>"` of member `name`.
fn legacy_entry(
    name: String,
    record: &str,
    order: photofinish_core::Order,
) -> Result<LoadEntry, BoardError> {
    let bad = || {
        BoardError::Unavailable(format!(
            "unreadable format-1 record of {name:?}: {record:?}"
        ))
    };
    let (score, tb) = record.split_once(' ').ok_or_else(bad)?;
    let score = layout::parse_score(score.as_bytes()).ok_or_else(bad)?;
    let (reached_at_us, seq) = layout::legacy_tiebreak(tb.as_bytes(), order).ok_or_else(bad)?;
    Ok(LoadEntry {
        name,
        score,
        reached_at_us,
        seq,
        metadata: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_empty_or_current_namespace_starts() {
        assert_eq!(refusal("pf", Some(FORMAT), 3), None);
        assert_eq!(refusal("pf", None, 0), None);
        let old = refusal("pf", None, 2).expect("format 1 refused");
        assert!(old.contains("photofinish redis-upgrade"), "{old}");
        assert!(refusal("pf", Some("9"), 0)
            .expect("newer")
            .contains("format 9"));
    }
}
