//! The text rules every door shares: numbers under a bound, rank styles, scores in any
//! JSON or text spelling, instants, operators, metadata, the members and boards lists and
//! the threshold query (a board config from its body is [`super::config`]'s). HTTP reads them from JSON and query
//! strings, RESP from command arguments; both answer a breach with the same code and
//! message ([`ApiError`]).

use photofinish_core::calendar::{validate_instant, year_in_pattern};
use photofinish_core::columns::{ScoreInput, MAX_COLUMNS};
use photofinish_core::config::MAX_METADATA_BYTES;
use photofinish_core::entry::parse_instant;
use photofinish_core::names::GroupKey;
use photofinish_core::op::WriteRequest;
use photofinish_core::query::{Percent, ThresholdQuery, MAX_MEMBER_BOARDS, MAX_THRESHOLDS};
use photofinish_core::MemberName;
use photofinish_core::{BoardName, ErrorCode, Op, RankStyle};
use serde::Deserialize;
use serde_json::Value;

use crate::error::ApiError;

/// An `invalid_parameter` error.
pub fn invalid(message: String) -> ApiError {
    ApiError::new(ErrorCode::InvalidParameter, message)
}

/// The comma-separated list `raw` of parameter `name`: at most `max` items, none empty.
pub fn comma_list<'a>(name: &str, raw: &'a str, max: usize) -> Result<Vec<&'a str>, ApiError> {
    let items: Vec<&str> = raw.split(',').collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(invalid(format!(
            "{name} must be a comma-separated list with no empty item, got {raw:?}"
        )));
    }
    if items.len() > max {
        return Err(invalid(format!(
            "{name} has {} items, over the limit of {max}",
            items.len()
        )));
    }
    Ok(items)
}

/// A thresholds question from its two lists (`ranks`, `top_percent`), each optional and of
/// at most [`MAX_THRESHOLDS`] items (neither: no thresholds, an empty answer). A rank is decimal
/// digits only (leading zeros allowed), 1 to u64::MAX.
pub fn threshold_query(
    ranks: Option<&str>,
    top_percent: Option<&str>,
) -> Result<ThresholdQuery, ApiError> {
    let ranks = match ranks {
        None => Vec::new(),
        Some(raw) => comma_list("ranks", raw, MAX_THRESHOLDS)?
            .into_iter()
            .map(|r| {
                if !r.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(invalid(format!("ranks must be whole numbers, got {r:?}")));
                }
                match bounded_u64("ranks", r, u64::MAX)? {
                    0 => Err(invalid("ranks start at 1".into())),
                    n => Ok(n),
                }
            })
            .collect::<Result<_, _>>()?,
    };
    let percents = match top_percent {
        None => Vec::new(),
        Some(raw) => comma_list("top_percent", raw, MAX_THRESHOLDS)?
            .into_iter()
            .map(|p| Percent::parse(p).map_err(invalid))
            .collect::<Result<_, _>>()?,
    };
    // Neither list: an empty answer, not a refusal — a query string cannot be required to
    // hold one of two parameters in the OpenAPI document, and nothing asked is nothing owed.
    Ok(ThresholdQuery { ranks, percents })
}

/// A list of board names (`boards`), each checked.
pub fn board_list(raw: &str) -> Result<Vec<BoardName>, ApiError> {
    let names = comma_list("boards", raw, MAX_MEMBER_BOARDS)?;
    Ok(names
        .into_iter()
        .map(BoardName::parse)
        .collect::<Result<_, _>>()?)
}

/// An instant parameter or field `name` written as `s`: RFC 3339 in the range writes take
/// (1970..9999), µs since the epoch; else `code`. Text that is no instant, or a year the
/// document's pattern leaves out, is 400; an instant its offset moves out of the range is
/// a rule the document cannot state, 422 (docs/SPEC.md §3).
pub fn instant_text(s: &str, name: &str, code: ErrorCode) -> Result<i64, ApiError> {
    let us = parse_instant(s).map_err(|e| ApiError::new(code, format!("{name}: {e}")))?;
    validate_instant(us).map_err(|_| {
        let message = format!(
            "{name} must be between 1970-01-01T00:00:00Z and 9999-01-01T00:00:00Z, got {s:?}"
        );
        if year_in_pattern(s) {
            ApiError::rule(code, message)
        } else {
            ApiError::new(code, message)
        }
    })?;
    Ok(us)
}

/// Parameter `name`'s value `raw`: a non-negative integer at most `max`.
pub fn bounded_u64(name: &str, raw: &str, max: u64) -> Result<u64, ApiError> {
    let v: u64 = raw.parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidParameter,
            format!("{name} must be a non-negative integer, got {raw:?}"),
        )
    })?;
    if v > max {
        return Err(ApiError::new(
            ErrorCode::InvalidParameter,
            format!("{name} is {v}, over the limit of {max}"),
        ));
    }
    Ok(v)
}

/// A rank style: ordinal (also when absent), competition or dense.
pub fn ranking(s: Option<&str>) -> Result<RankStyle, ApiError> {
    match s {
        None => Ok(RankStyle::Ordinal),
        Some(s) => RankStyle::parse(s).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidParameter,
                format!("ranking must be ordinal, competition or dense, got {s:?}"),
            )
        }),
    }
}

/// The integer a JSON number's text denotes, as decimal digits (`1.0` → `1`, `25e-1` →
/// none, `2E3` → `2000`), or `None` if it has a fraction: JSON Schema's `integer` counts
/// `1.0` as one, so the server does too. A magnitude past 64 digits is written as 65
/// nines (out of every range).
pub fn integral_text(text: &str) -> Option<String> {
    let (neg, t) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits = format!("{int}{frac}");
    let point = i64::try_from(int.len()).ok()?.saturating_add(exp);
    if point <= 0 {
        return digits.bytes().all(|b| b == b'0').then(|| "0".to_owned());
    }
    let point = usize::try_from(point).ok()?;
    if point > 64 {
        return (!digits.bytes().all(|b| b == b'0'))
            .then(|| "9".repeat(65))
            .or(Some("0".into()));
    }
    if point >= digits.len() {
        digits.extend(std::iter::repeat_n('0', point - digits.len()));
    } else if digits[point..].bytes().all(|b| b == b'0') {
        digits.truncate(point);
    } else {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    let digits = if trimmed.is_empty() { "0" } else { trimmed };
    Some(if neg && digits != "0" {
        format!("-{digits}")
    } else {
        digits.to_owned()
    })
}

/// A count in a body (`retention`, `max_members`, …): a JSON integer (`1.0` included), or
/// null for absent; as `deserialize_with`.
pub fn whole<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => integral_text(&n.to_string())
            .and_then(|t| t.parse::<u64>().ok())
            .and_then(|u| T::try_from(u).ok())
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("{n} is not a whole number in range"))),
        Some(other) => Err(D::Error::custom(format!(
            "invalid type: {other}, expected a whole number"
        ))),
    }
}

/// [`whole`] for a field that must hold a number (`78.0` taken as 78, as everywhere).
pub fn whole_required<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    use serde::de::Error;
    whole(d)?.ok_or_else(|| D::Error::custom("null is not a whole number"))
}

/// [`whole`] for a field whose `null` means "remove" (present: `Some`).
pub fn whole_present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    whole(d).map(Some)
}

/// A write's `score` or `scores` (docs/SPEC.md §13): one of the two, each value a score.
/// Which columns the names are is the board's to say, when the write is applied.
pub fn write_scores(
    score: Option<&Value>,
    scores: Option<&std::collections::BTreeMap<String, Value>>,
) -> Result<ScoreInput, ApiError> {
    match (score, scores) {
        (Some(_), Some(_)) => Err(ApiError::new(
            ErrorCode::InvalidScore,
            "give \"score\" or \"scores\", not both",
        )),
        (Some(v), None) => Ok(ScoreInput::Score(self::score(v)?)),
        (None, Some(named)) => {
            if named.len() > MAX_COLUMNS {
                return Err(ApiError::new(
                    ErrorCode::InvalidScore,
                    format!(
                        "\"scores\" names {} columns; a board has at most {MAX_COLUMNS}",
                        named.len()
                    ),
                ));
            }
            let pairs = named
                .iter()
                .map(|(name, v)| {
                    self::score(v)
                        .map(|v| (name.clone(), v))
                        .map_err(|e| ApiError {
                            message: format!("scores.{name}: {}", e.message),
                            ..e
                        })
                })
                .collect::<Result<Vec<_>, ApiError>>()?;
            Ok(ScoreInput::Named(pairs))
        }
        (None, None) => Err(ApiError::new(
            ErrorCode::MalformedJson,
            "a write needs \"score\" (or \"scores\" by column name)",
        )),
    }
}

/// A score: a JSON integer in the i64 range (`1.0` included), or a decimal string of one.
pub fn score(v: &Value) -> Result<i64, ApiError> {
    let text = match v {
        Value::Number(n) => {
            let text = n.to_string();
            let Some(whole) = integral_text(&text) else {
                return score_text(&text); // has a fraction: not an integer
            };
            return score_text(&whole).map_err(|e| ApiError {
                message: e.message.replace(&whole, &text),
                ..e
            });
        }
        Value::String(s) => s.clone(),
        other => {
            return Err(ApiError::new(
                ErrorCode::ScoreNotInteger,
                format!("score must be an integer or a decimal string, got {other}"),
            ))
        }
    };
    score_text(&text)
}

/// A score written as decimal text: an optional `-` and digits, in the i64 range.
pub fn score_text(text: &str) -> Result<i64, ApiError> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::new(
            ErrorCode::ScoreNotInteger,
            format!("score must be a whole number, got {text:?}"),
        ));
    }
    text.parse::<i64>().map_err(|_| {
        ApiError::new(
            ErrorCode::ScoreOutOfRange,
            format!(
                "score {text} is outside the 64-bit range {} to {}",
                i64::MIN,
                i64::MAX
            ),
        )
    })
}

/// A write's request from its parsed parts, for every door (HTTP's body, RESP's
/// arguments): the one place it is built. A write names either a period or an `at`, not
/// both (docs/SPEC.md §10; the period's id is checked against the board's calendar by the
/// service); the memory budget's verdict is the gate's to set. `groups` are the partition
/// and the team it names (docs/SPEC.md §17), checked here.
pub fn write_request(
    member: MemberName,
    scores: ScoreInput,
    op: Option<Op>,
    metadata: Option<String>,
    at_us: Option<i64>,
    period: Option<String>,
    (partition, team): (Option<String>, Option<String>),
) -> Result<WriteRequest, ApiError> {
    if period.is_some() && at_us.is_some() {
        return Err(ApiError::new(
            ErrorCode::InvalidParameter,
            "a write names either a period or an at, not both",
        ));
    }
    Ok(WriteRequest {
        member,
        op,
        scores,
        at_us,
        period,
        metadata,
        partition: group_key(partition)?,
        over_budget: None,
        team: group_key(team)?,
    })
}

/// A partition or team key (docs/SPEC.md §17), when one is given: 400 `invalid_parameter`
/// outside `[A-Za-z0-9_-]{1,32}`.
pub fn group_key(key: Option<String>) -> Result<Option<GroupKey>, ApiError> {
    Ok(key.map(GroupKey::parse).transpose()?)
}

/// An operator name.
pub fn op(v: Option<&Value>) -> Result<Option<Op>, ApiError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => op_text(s).map(Some),
        Some(other) => Err(ApiError::new(
            ErrorCode::InvalidOp,
            format!("op must be incr, best or set, got {other}"),
        )),
    }
}

/// An operator written as text: `incr`, `best` or `set`.
pub fn op_text(s: &str) -> Result<Op, ApiError> {
    Op::parse(s).ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidOp,
            format!("op must be incr, best or set, got {s:?}"),
        )
    })
}

/// Metadata: a JSON object of at most 1 KiB serialized, returned serialized.
pub fn metadata(v: Option<&Value>) -> Result<Option<String>, ApiError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(obj @ Value::Object(_)) => {
            let s = obj.to_string();
            if s.len() > MAX_METADATA_BYTES {
                return Err(ApiError::new(
                    ErrorCode::MetadataTooLarge,
                    format!(
                        "metadata is {} bytes serialized, over the {MAX_METADATA_BYTES}-byte limit",
                        s.len()
                    ),
                ));
            }
            Ok(Some(s))
        }
        Some(other) => Err(ApiError::new(
            ErrorCode::InvalidMetadata,
            format!("metadata must be a JSON object, got {}", kind(other)),
        )),
    }
}

/// Metadata written as JSON text in the argument `what` (RESP's `META`), as [`metadata`]
/// takes it (`null` is none).
pub fn metadata_text(what: &str, s: &str) -> Result<Option<String>, ApiError> {
    let v: Value = serde_json::from_str(s).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidMetadata,
            format!("{what} must be a JSON object: {e}"),
        )
    })?;
    metadata(Some(&v))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An explicit `at`: an RFC 3339 timestamp between 1970 and 9999, as µs since the epoch.
pub fn at(v: Option<&Value>) -> Result<Option<i64>, ApiError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => at_text(s).map(Some),
        Some(other) => Err(ApiError::new(
            ErrorCode::InvalidTime,
            format!(
                "at must be an RFC 3339 timestamp string, got {}",
                kind(other)
            ),
        )),
    }
}

/// An instant written as RFC 3339 text, µs since the epoch, in the range writes take.
pub fn at_text(s: &str) -> Result<i64, ApiError> {
    let us = parse_instant(s).map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidTime,
            format!("at must be an RFC 3339 timestamp, got {s:?}"),
        )
    })?;
    validate_instant(us)?;
    Ok(us)
}

/// Formats µs since the epoch as RFC 3339 UTC with microseconds.
pub fn rfc3339_us(us: i64) -> String {
    match jiff::Timestamp::from_microsecond(us) {
        Ok(ts) => format!("{ts:.6}"),
        Err(_) => us.to_string(),
    }
}

#[cfg(test)]
mod integral_tests {
    use super::integral_text;

    #[test]
    fn json_integers_in_any_spelling() {
        for (text, want) in [
            ("5", Some("5")),
            ("-5", Some("-5")),
            ("1.0", Some("1")),
            ("-0.000", Some("0")),
            ("2E3", Some("2000")),
            ("25e-1", None),
            ("1.5", None),
            ("1234.5e1", Some("12345")),
            ("0.5e1", Some("5")),
            (
                "1e400",
                Some("99999999999999999999999999999999999999999999999999999999999999999"),
            ),
            ("007", Some("7")),
        ] {
            assert_eq!(integral_text(text).as_deref(), want, "{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores() {
        let ok = |j: &str| score(&serde_json::from_str(j).expect("json"));
        assert_eq!(ok("42").ok(), Some(42));
        assert_eq!(ok("1.0").ok(), Some(1), "JSON Schema's integer");
        assert_eq!(ok("-2E3").ok(), Some(-2000));
        assert_eq!(ok("-9223372036854775808").ok(), Some(i64::MIN));
        assert_eq!(ok("\"9223372036854775807\"").ok(), Some(i64::MAX));
        for (j, code) in [
            ("9223372036854775808", ErrorCode::ScoreOutOfRange),
            ("\"-9223372036854775809\"", ErrorCode::ScoreOutOfRange),
            ("1e400", ErrorCode::ScoreOutOfRange),
            ("1.5", ErrorCode::ScoreNotInteger),
            ("25e-1", ErrorCode::ScoreNotInteger),
            ("\"NaN\"", ErrorCode::ScoreNotInteger),
            ("\"\"", ErrorCode::ScoreNotInteger),
            ("\" 1\"", ErrorCode::ScoreNotInteger),
            ("true", ErrorCode::ScoreNotInteger),
            ("null", ErrorCode::ScoreNotInteger),
        ] {
            assert_eq!(ok(j).map_err(|e| e.code).err(), Some(code), "{j}");
        }
    }

    #[test]
    fn times_format_with_microseconds() {
        assert_eq!(
            rfc3339_us(1_795_305_600_000_001),
            "2026-11-22T00:00:00.000001Z"
        );
        assert_eq!(rfc3339_us(0), "1970-01-01T00:00:00.000000Z");
        let v = Value::String("2026-11-22T08:00:00.5+08:00".into());
        assert_eq!(at(Some(&v)).ok().flatten(), Some(1_795_305_600_500_000));
        assert!(at(Some(&Value::String("yesterday".into()))).is_err());
        assert!(at(Some(&Value::String("1969-12-31T23:59:59Z".into()))).is_err());
    }
}
