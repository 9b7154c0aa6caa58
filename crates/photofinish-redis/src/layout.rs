//! The retired Lua data model's keys and value encodings (format 2, docs/redis-layout.md
//! "Format 2"), as the upgrade to the log layout reads them ([`crate::upgrade_log`]): key
//! names (every key of a board carries the board's hash tag), the 14-byte tie-break that
//! makes equal scores list first-reached first (and format 1's 33 digits, still inside
//! answers remembered before format 2), the 8-byte score key that orders scores past 2^53
//! exactly, the period record and the config text. The tests pin the bytes format 2's
//! scripts wrote.

use photofinish_core::{BoardConfig, Order, Period};

/// The data-format version of the retired Lua data model.
pub const FORMAT: &str = "2";

/// Bytes of a ranking entry's tie-break: reached_at (58 bits) then the sequence (54 bits).
pub const TIEBREAK_LEN: usize = 14;
/// Bytes of the exact score key in front of a big score's entry.
pub const KEY_LEN: usize = 8;
/// From 2^53 on, doubles do not hold every integer: an entry whose score's double is this
/// far from zero carries its exact score key in front (`is_big` in `common.lua`).
pub const BIG: f64 = 9_007_199_254_740_992.0;

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
    /// The period-close webhook's cursor (µs, decimal; `photofinish_core::hook`).
    pub fn hook(&self) -> String {
        format!("{}hook", self.base)
    }
    /// Hash of period id → period record.
    pub fn periods(&self) -> String {
        format!("{}periods", self.base)
    }
    /// The record of an idempotency key (`IdempotencyKey::id`), with its TTL.
    pub fn idempotency(&self, id: &str) -> String {
        format!("{}idem:{id}", self.base)
    }
    /// The prefix of every key of period `id`: `…:p:<id>:` (`P` in the scripts).
    pub fn period(&self, id: &str) -> String {
        format!("{}p:{id}:", self.base)
    }
}

/// The registry of board names (a SET) in namespace `ns`.
pub fn registry_key(ns: &str) -> String {
    format!("{ns}:boards")
}

/// The registry of boards with a webhook (a SET) in namespace `ns`: what the dispatcher
/// lists every second, instead of every board.
pub fn hooks_key(ns: &str) -> String {
    format!("{ns}:hooks")
}

/// The key of the data-format version in namespace `ns`.
pub fn format_key(ns: &str) -> String {
    format!("{ns}:format")
}

/// A score's 8-byte order-preserving key: big-endian with the sign bit flipped, so byte
/// order is numeric order (`i64_key` in `common.lua`).
#[cfg(test)]
fn score_key(score: i64) -> [u8; 8] {
    ((score as u64) ^ (1 << 63)).to_be_bytes()
}

/// The score of an 8-byte key.
fn score_of_key(key: &[u8]) -> Option<i64> {
    let b: [u8; 8] = key.try_into().ok()?;
    Some((u64::from_be_bytes(b) ^ (1 << 63)) as i64)
}

/// `reached_at` shifted left by 6 bits, big-endian (`r` in `common.lua`): the first 58
/// bits of the tie-break. Instants are clamped to 0..=MAX_INSTANT_US (< 2^58).
#[cfg(test)]
fn reached_bytes(at_us: i64) -> [u8; 8] {
    use photofinish_core::calendar::MAX_INSTANT_US;
    ((at_us.clamp(0, MAX_INSTANT_US) as u64) << 6).to_be_bytes()
}

/// Each byte `b` replaced by `255 − b` (a desc board's tie-break).
pub fn complement<const N: usize>(bytes: [u8; N]) -> [u8; N] {
    bytes.map(|b| !b)
}

/// The `reached_at` inside a tie-break (complemented on desc boards).
pub fn reached_of(tiebreak: &[u8], order: Order) -> Option<i64> {
    let b: [u8; 8] = tiebreak.get(..8)?.try_into().ok()?;
    let b = if order == Order::Desc {
        complement(b)
    } else {
        b
    };
    Some((u64::from_be_bytes(b) >> 6) as i64)
}

/// Format 1's tie-break: 33 digits, reached_at (18) then the sequence (15), each digit
/// `d` stored as `9 − d` on desc boards. Returns (reached_at, sequence).
pub fn legacy_tiebreak(digits: &[u8], order: Order) -> Option<(i64, i64)> {
    if digits.len() != 33 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = |part: &[u8]| {
        part.iter().fold(0_i64, |v, &d| {
            let d = i64::from(d - b'0');
            v * 10 + if order == Order::Desc { 9 - d } else { d }
        })
    };
    Some((value(&digits[..18]), value(&digits[18..])))
}

/// The `reached_at` of a tie-break in a script's answer: this format's 14 bytes, or
/// format 1's 33 digits (an idempotent answer remembered before an upgrade).
pub fn answer_reached(tiebreak: &[u8], order: Order) -> Option<i64> {
    match tiebreak.len() {
        TIEBREAK_LEN => reached_of(tiebreak, order),
        _ => legacy_tiebreak(tiebreak, order).map(|(at, _)| at),
    }
}

/// One ranking entry read back: its exact score, tie-break and name.
#[derive(Debug, PartialEq, Eq)]
pub struct RankedEntry<'a> {
    /// The exact score.
    pub score: i64,
    /// The 14-byte tie-break.
    pub tiebreak: &'a [u8],
    /// The member's name.
    pub name: &'a str,
}

/// Splits a ranking member `[score key] tie-break name` with ZSET score text `score`.
pub fn split_entry<'a>(member: &'a [u8], score: &[u8]) -> Option<RankedEntry<'a>> {
    let double: f64 = std::str::from_utf8(score).ok()?.parse().ok()?;
    let (exact, rest) = if double.abs() >= BIG {
        (score_of_key(member.get(..KEY_LEN)?)?, &member[KEY_LEN..])
    } else {
        (parse_score(score)?, member)
    };
    let tiebreak = rest.get(..TIEBREAK_LEN)?;
    let name = std::str::from_utf8(&rest[TIEBREAK_LEN..]).ok()?;
    Some(RankedEntry {
        score: exact,
        tiebreak,
        name,
    })
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

/// Parses a stored config.
pub fn parse_config(text: &[u8]) -> Option<BoardConfig> {
    serde_json::from_slice(text).ok()
}

/// A ZSET score as Redis formats it (`%.17g` or shortest round-trip), back to an integer:
/// only below 2^53, where the double is the exact score (beyond, the entry's key is).
pub fn parse_score(text: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(text).ok()?;
    if let Ok(v) = s.parse::<i64>() {
        return Some(v);
    }
    let f: f64 = s.parse().ok()?;
    (f.fract() == 0.0 && f.abs() < BIG).then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest sequence the tie-break holds (`MAX_SEQ` in format 2's `common.lua`).
    const MAX_SEQ: i64 = 999_999_999_999_999;
    use photofinish_core::calendar::MAX_INSTANT_US;

    // The tie-break as `common.lua`'s `tiebreak` builds it, and back: the byte format the
    // readers above decode, pinned here.

    /// The tie-break of (`reached_at`, `seq`) as `common.lua`'s `tiebreak` builds it.
    fn tiebreak(at_us: i64, seq: i64, order: Order) -> [u8; TIEBREAK_LEN] {
        let v = ((at_us.clamp(0, MAX_INSTANT_US) as u128) << 54) | (seq as u128 & ((1 << 54) - 1));
        let mut out = [0; TIEBREAK_LEN];
        out.copy_from_slice(&v.to_be_bytes()[16 - TIEBREAK_LEN..]);
        if order == Order::Desc {
            out = complement(out);
        }
        out
    }

    /// The sequence inside a tie-break.
    fn seq_of(tiebreak: &[u8], order: Order) -> Option<i64> {
        let b: [u8; TIEBREAK_LEN] = tiebreak.get(..TIEBREAK_LEN)?.try_into().ok()?;
        let b = if order == Order::Desc {
            complement(b)
        } else {
            b
        };
        let mut full = [0u8; 16];
        full[16 - TIEBREAK_LEN..].copy_from_slice(&b);
        Some((u128::from_be_bytes(full) & ((1 << 54) - 1)) as i64)
    }

    #[test]
    fn tiebreaks_round_trip_and_order_both_ways() {
        let at = 1_795_000_000_123_456;
        for order in [Order::Asc, Order::Desc] {
            let tb = tiebreak(at, 42, order);
            assert_eq!(reached_of(&tb, order), Some(at));
            assert_eq!(seq_of(&tb, order), Some(42));
        }
        let max = tiebreak(MAX_INSTANT_US, MAX_SEQ, Order::Asc);
        assert_eq!(reached_of(&max, Order::Asc), Some(MAX_INSTANT_US));
        assert_eq!(seq_of(&max, Order::Asc), Some(MAX_SEQ));
        // Byte order is (reached_at, seq) order on asc, the reverse on desc.
        let pairs = [
            (0, 0),
            (0, 1),
            (0, MAX_SEQ),
            (1, 0),
            (at, 7),
            (MAX_INSTANT_US, 0),
        ];
        for w in pairs.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(tiebreak(a.0, a.1, Order::Asc) < tiebreak(b.0, b.1, Order::Asc));
            assert!(tiebreak(a.0, a.1, Order::Desc) > tiebreak(b.0, b.1, Order::Desc));
        }
        // The reached_at part is reached_bytes' first 58 bits.
        assert_eq!(tiebreak(at, 0, Order::Asc)[..8], reached_bytes(at));
    }

    #[test]
    fn format_1_tiebreaks_still_read() {
        let asc = format!("{:018}{:015}", 1_795_000_000_123_456_i64, 42);
        let got = legacy_tiebreak(asc.as_bytes(), Order::Asc);
        assert_eq!(got, Some((1_795_000_000_123_456, 42)));
        let desc: String = asc.bytes().map(|d| char::from(b'9' - (d - b'0'))).collect();
        assert_eq!(legacy_tiebreak(desc.as_bytes(), Order::Desc), got);
        assert_eq!(
            answer_reached(desc.as_bytes(), Order::Desc),
            got.map(|g| g.0)
        );
        assert_eq!(legacy_tiebreak(b"12x", Order::Asc), None);
    }

    #[test]
    fn score_keys_order_like_scores() {
        let xs = [i64::MIN, -(1 << 53) - 1, -1, 0, 1, 1 << 53, i64::MAX];
        for w in xs.windows(2) {
            assert!(score_key(w[0]) < score_key(w[1]));
        }
        for x in xs {
            assert_eq!(score_of_key(&score_key(x)), Some(x));
        }
    }

    #[test]
    fn entries_split_small_and_big() {
        let tb = tiebreak(5, 6, Order::Asc);
        let small = [&tb[..], b"al:ice"].concat();
        let e = split_entry(&small, b"1500").expect("small");
        assert_eq!((e.score, e.tiebreak, e.name), (1500, &tb[..], "al:ice"));
        let big = i64::MAX - 3;
        let m = [&score_key(big)[..], &tb[..], b"bob"].concat();
        let e = split_entry(&m, format!("{:e}", big as f64).as_bytes()).expect("big");
        assert_eq!((e.score, e.name), (big, "bob"));
        assert!(split_entry(b"short", b"1").is_none());
    }

    #[test]
    fn scores_parse_from_either_redis_format() {
        assert_eq!(parse_score(b"1500"), Some(1500));
        assert_eq!(parse_score(b"-42"), Some(-42));
        assert_eq!(parse_score(b"1e+15"), Some(1_000_000_000_000_000));
        assert_eq!(parse_score(b"9007199254740991"), Some((1 << 53) - 1));
        assert_eq!(parse_score(b"1.5"), None);
        assert_eq!(parse_score(b"nan"), None);
    }

    #[test]
    fn keys_share_the_board_tag() {
        let k = BoardKeys::new("pf", "weekly.v2");
        assert_eq!(k.config(), "pf:{weekly.v2}:cfg");
        assert_eq!(k.period("2026-W47"), "pf:{weekly.v2}:p:2026-W47:");
        assert_eq!(registry_key("pf"), "pf:boards");
    }
}
