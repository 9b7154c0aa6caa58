//! The key layout and value encodings of docs/redis-layout.md (format 2), in one place: key
//! names (every key of a board carries the board's hash tag), the 14-byte tie-break that
//! makes equal scores list first-reached first, the 8-byte score key that orders scores
//! past 2^53 exactly, the name hash that places a member's bucket field, the period record,
//! and the config text. `common.lua` builds the same bytes; the tests here pin them.

use photofinish_core::calendar::MAX_INSTANT_US;
use photofinish_core::{BoardConfig, Order, Period};

/// The data-format version this code reads and writes (docs/redis-layout.md, "Format").
pub const FORMAT: &str = "2";

/// Bytes of a ranking entry's tie-break: reached_at (58 bits) then the sequence (54 bits).
pub const TIEBREAK_LEN: usize = 14;
/// Bytes of the exact score key in front of a big score's entry.
pub const KEY_LEN: usize = 8;
/// How long a board's readers key ([`BoardKeys::readers`]) lives unless a node with readers
/// refreshes it, ms (`READERS_TTL_MS` in `common.lua`).
pub const READERS_TTL_MS: u64 = 15_000;
/// The largest sequence the tie-break holds (`MAX_SEQ` in `common.lua`).
pub const MAX_SEQ: i64 = 999_999_999_999_999;
/// From 2^53 on, doubles do not hold every integer: an entry whose score's double is this
/// far from zero carries its exact score key in front (`is_big` in `common.lua`).
pub const BIG: f64 = 9_007_199_254_740_992.0;

/// How member names are hashed into bucket fields: [`name_hash`], or in tests one that
/// collides on purpose.
pub type NameHasher = fn(&str) -> ([u8; 8], u32);

/// Key names of one board under a namespace, and the name hash its buckets use.
#[derive(Debug, Clone)]
pub struct BoardKeys {
    base: String,
    hasher: NameHasher,
}

impl BoardKeys {
    /// The keys of `board` in namespace `ns`: `{ns}:{<board>}:…`.
    pub fn new(ns: &str, board: &str) -> Self {
        Self::with_hasher(ns, board, name_hash)
    }

    /// [`Self::new`] with another name hash.
    pub fn with_hasher(ns: &str, board: &str, hasher: NameHasher) -> Self {
        Self {
            base: format!("{ns}:{{{board}}}:"),
            hasher,
        }
    }

    /// A member's bucket field and bucket bits ([`name_hash`]).
    pub fn name_hash(&self, member: &str) -> ([u8; 8], u32) {
        (self.hasher)(member)
    }
    /// The board's config (JSON).
    pub fn config(&self) -> String {
        format!("{}cfg", self.base)
    }
    /// The board's sequence counter.
    pub fn seq(&self) -> String {
        format!("{}seq", self.base)
    }
    /// The last stamped `reached_at`, as the 8 bytes of [`reached_bytes`].
    pub fn clock(&self) -> String {
        format!("{}clk", self.base)
    }
    /// The board's event stream (docs/SPEC.md §8).
    pub fn events(&self) -> String {
        format!("{}events", self.base)
    }
    /// Present (with a time to live) while some node has readers of the board's events:
    /// writes append events only then. The scripts name it from [`Self::events`]
    /// (`readers_key` in common.lua): the same text with `readers` for `events`.
    pub fn readers(&self) -> String {
        format!("{}readers", self.base)
    }
    /// The current period last announced on the event stream.
    pub fn announced(&self) -> String {
        format!("{}announced", self.base)
    }
    /// The period-close webhook's cursor (µs, decimal; `photofinish_core::hook`).
    pub fn hook(&self) -> String {
        format!("{}hook", self.base)
    }
    /// Who posts the board's webhook now (a node's token, with a TTL: the claim).
    pub fn hook_claim(&self) -> String {
        format!("{}hookclaim", self.base)
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
    /// The prefix of every key an import stages its period under: `…:imp:<token>:` (the
    /// same keys as a period's, renamed into place when the import commits).
    pub fn import_stage(&self, token: &str) -> String {
        format!("{}imp:{token}:", self.base)
    }
    /// The hash holding a staged import's period record.
    pub fn import_record(&self, token: &str) -> String {
        format!("{}imp:{token}:rec", self.base)
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
pub fn score_key(score: i64) -> [u8; 8] {
    ((score as u64) ^ (1 << 63)).to_be_bytes()
}

/// The score of an 8-byte key.
fn score_of_key(key: &[u8]) -> Option<i64> {
    let b: [u8; 8] = key.try_into().ok()?;
    Some((u64::from_be_bytes(b) ^ (1 << 63)) as i64)
}

/// A score as the scripts take it: (hi, lo) = (x >> 32, x & 0xffff_ffff).
pub fn score_halves(score: i64) -> (i64, i64) {
    (score >> 32, score & 0xffff_ffff)
}

/// `reached_at` shifted left by 6 bits, big-endian (`r` in `common.lua`): the first 58
/// bits of the tie-break. Instants are clamped to 0..=MAX_INSTANT_US (< 2^58).
pub fn reached_bytes(at_us: i64) -> [u8; 8] {
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

/// A member name's 64-bit hash (FNV-1a, then the splitmix64 finalizer): the same on every
/// server and version, since it places the name's bucket field. Returns the 8-byte field
/// and the 32 bits that choose the bucket (its last four bytes).
pub fn name_hash(name: &str) -> ([u8; 8], u32) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    (h.to_be_bytes(), h as u32)
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
            let (hi, lo) = score_halves(x);
            assert_eq!(hi * (1 << 32) + lo, x);
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
    fn name_hashes_are_fixed() {
        // The field places a name's entry: it may never change between versions.
        let (field, h32) = name_hash("alice");
        assert_eq!(
            u32::from_be_bytes(field[4..].try_into().expect("4 bytes")),
            h32
        );
        assert_eq!(name_hash("alice"), (field, h32));
        assert_ne!(name_hash("alicf").0, field);
    }

    #[test]
    fn keys_share_the_board_tag() {
        let k = BoardKeys::new("pf", "weekly.v2");
        assert_eq!(k.config(), "pf:{weekly.v2}:cfg");
        assert_eq!(k.period("2026-W47"), "pf:{weekly.v2}:p:2026-W47:");
        assert_eq!(registry_key("pf"), "pf:boards");
    }
}
