//! The key layout and value encodings of docs/redis-layout.md, in one place: key names
//! (every key of a board carries the board's hash tag), the 33-digit tie-break that makes
//! equal ZSET scores list first-reached first, the period record, and the config text.

use photofinish_core::calendar::MAX_INSTANT_US;
use photofinish_core::{BoardConfig, Order, Period};

/// The largest |score| this backend holds: a ZSET score is an f64, exact to 2^53.
pub const MAX_SCORE: i64 = (1 << 53) - 1;

/// Digits of the `reached_at` part of the tie-break (µs up to year 9999).
const REACHED_DIGITS: usize = 18;
/// Digits of the sequence part of the tie-break.
const SEQ_DIGITS: usize = 15;
/// The largest sequence the tie-break holds (`MAX_SEQ` in `common.lua`).
pub const MAX_SEQ: i64 = 10_i64.pow(SEQ_DIGITS as u32) - 1;
/// Digits of the whole tie-break: reached_at, then the sequence.
pub const TIEBREAK_DIGITS: usize = REACHED_DIGITS + SEQ_DIGITS;

/// The keys of one board-period, in the order every period script takes them: the ranking
/// ZSET, member → record, member → metadata, the distinct-score ZSET. (`PERIOD_KEYS` in
/// `lua/common.lua` lists the same, for deleting a period.)
pub const PERIOD_PARTS: [&str; 4] = ["z", "m", "meta", "d"];

/// Key names of one board under a namespace.
#[derive(Debug, Clone)]
pub struct BoardKeys {
    base: String,
}

impl BoardKeys {
    /// The keys of `board` in namespace `ns`: `{ns}:{<board>}:…`.
    pub fn new(ns: &str, board: &str) -> Self {
        Self {
            base: format!("{ns}:{{{board}}}:"),
        }
    }
    /// The board's config (JSON).
    pub fn config(&self) -> String {
        format!("{}cfg", self.base)
    }
    /// The board's sequence counter.
    pub fn seq(&self) -> String {
        format!("{}seq", self.base)
    }
    /// The last stamped `reached_at`.
    pub fn clock(&self) -> String {
        format!("{}clock", self.base)
    }
    /// The board's event stream (docs/SPEC.md §8).
    pub fn events(&self) -> String {
        format!("{}events", self.base)
    }
    /// The current period last announced on the event stream.
    pub fn announced(&self) -> String {
        format!("{}announced", self.base)
    }
    /// Hash of period id → period record.
    pub fn periods(&self) -> String {
        format!("{}periods", self.base)
    }
    /// Prefix of every period key: `…:p:`.
    pub fn period_prefix(&self) -> String {
        format!("{}p:", self.base)
    }
    /// The record of an idempotency key (`IdempotencyKey::id`), with its TTL.
    pub fn idempotency(&self, id: &str) -> String {
        format!("{}idem:{id}", self.base)
    }
    /// One key of period `id`: `z`, `m`, `meta` or `d`.
    pub fn period(&self, id: &str, part: &str) -> String {
        format!("{}p:{id}:{part}", self.base)
    }
}

/// The registry of board names (a SET) in namespace `ns`.
pub fn registry_key(ns: &str) -> String {
    format!("{ns}:boards")
}

/// `reached_at` as the 18 zero-padded digits the tie-break starts with.
pub fn reached_digits(at_us: i64) -> String {
    format!("{:018}", at_us.clamp(0, MAX_INSTANT_US))
}

/// Each digit `d` replaced by `9 − d` (the desc boards' tie-break digits).
pub fn complement(digits: &str) -> String {
    digits
        .bytes()
        .map(|d| char::from(b'9' - (d - b'0')))
        .collect()
}

/// The `reached_at` inside a tie-break (digit-complemented on desc boards).
pub fn reached_of(tiebreak: &[u8], order: Order) -> Option<i64> {
    let digits = tiebreak.get(..REACHED_DIGITS)?;
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        let d = if order == Order::Desc { 9 - d } else { d };
        v = v * 10 + d;
    }
    Some(v)
}

/// Splits a ZSET member `<tie-break>:<name>` into the two.
pub fn split_member(encoded: &[u8]) -> Option<(&[u8], &str)> {
    if encoded.len() <= TIEBREAK_DIGITS || encoded[TIEBREAK_DIGITS] != b':' {
        return None;
    }
    let name = std::str::from_utf8(&encoded[TIEBREAK_DIGITS + 1..]).ok()?;
    Some((&encoded[..TIEBREAK_DIGITS], name))
}

/// The period record the periods hash holds: `"<start_us> <end_us> <floor id>"`, where the
/// floor is the oldest period retention keeps while this one is the newest.
pub fn period_record(period: &Period, floor: &str) -> String {
    format!("{} {} {floor}", period.start_us, period.end_us)
}

/// Parses a period record back into its period (the id is the hash field).
pub fn parse_period_record(id: &str, record: &str) -> Option<Period> {
    let mut parts = record.split(' ');
    let start_us = parts.next()?.parse().ok()?;
    let end_us = parts.next()?.parse().ok()?;
    Some(Period {
        start_us,
        end_us,
        id: id.to_owned(),
    })
}

/// The config as stored: compact JSON with a fixed field order, so that equal configs are
/// equal strings and a script can compare them.
pub fn config_text(config: &BoardConfig) -> String {
    serde_json::to_string(config).unwrap_or_default()
}

/// Parses a stored config.
pub fn parse_config(text: &[u8]) -> Option<BoardConfig> {
    serde_json::from_slice(text).ok()
}

/// A score as Redis formats it (`%.17g` or shortest round-trip), back to an integer. Scores
/// on this backend are within ±(2^53 − 1), so the f64 is exact.
pub fn parse_score(text: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(text).ok()?;
    if let Ok(v) = s.parse::<i64>() {
        return Some(v);
    }
    let f: f64 = s.parse().ok()?;
    (f.fract() == 0.0 && f.abs() <= MAX_SCORE as f64).then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiebreak_digits_round_trip_both_orders() {
        let at = 1_795_000_000_123_456;
        let asc = format!("{}{:015}", reached_digits(at), 42);
        assert_eq!(reached_of(asc.as_bytes(), Order::Asc), Some(at));
        let desc = complement(&asc);
        assert_eq!(reached_of(desc.as_bytes(), Order::Desc), Some(at));
        assert_eq!(reached_of(b"12x", Order::Asc), None);
    }

    #[test]
    fn members_split_at_the_fixed_width() {
        let enc = format!("{}:a:b c", "1".repeat(TIEBREAK_DIGITS));
        let (tb, name) = split_member(enc.as_bytes()).expect("splits");
        assert_eq!(tb.len(), TIEBREAK_DIGITS);
        assert_eq!(name, "a:b c");
        assert!(split_member(b"123:x").is_none());
    }

    #[test]
    fn scores_parse_from_either_redis_format() {
        assert_eq!(parse_score(b"1500"), Some(1500));
        assert_eq!(parse_score(b"-42"), Some(-42));
        assert_eq!(parse_score(b"1e+15"), Some(1_000_000_000_000_000));
        assert_eq!(parse_score(b"9007199254740991"), Some(MAX_SCORE));
        assert_eq!(parse_score(b"1.5"), None);
        assert_eq!(parse_score(b"nan"), None);
    }

    #[test]
    fn keys_share_the_board_tag() {
        let k = BoardKeys::new("pf", "weekly.v2");
        assert_eq!(k.config(), "pf:{weekly.v2}:cfg");
        assert_eq!(k.period("2026-W47", "z"), "pf:{weekly.v2}:p:2026-W47:z");
        assert_eq!(registry_key("pf"), "pf:boards");
    }
}
