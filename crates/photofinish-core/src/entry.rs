//! A tournament's entry rules (docs/SPEC.md §14): when a board takes writes
//! (`opens_at`, `closes_at`), how many accepted writes a member has per period
//! (`max_attempts`), and whether a member must `join` a period before it writes
//! (`join_required`) — and the per-period [`Seats`] those rules are kept in: who joined
//! without playing yet, and each member's attempts.
//!
//! Every check here runs where a write or a join is applied ([`crate::Board`]), against
//! the instant in its log record, so a replay and every Redis node decide alike. A join
//! reserves a seat (it counts toward `max_members`, the tournament's capacity) but is no
//! entry: it is in no page, rank, total or threshold until the member's first accepted
//! write.

use hashbrown::{HashMap, HashSet};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::calendar::validate_instant;
use crate::cohort::Cohorts;
use crate::error::{instant_text, BoardError};
use crate::league::Closing;

/// Most attempts `max_attempts` may allow (docs/SPEC.md §14).
pub const MAX_ATTEMPTS: u32 = 1_000_000;

/// A board's entry rules, each absent by default and each changeable over the board's
/// life (`PATCH`). Flattened into the board's settings, each left out while unset, so a
/// config without them reads and prints as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct EntryRules {
    /// The first instant a write or join is taken, µs (RFC 3339 in JSON).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "rfc3339")]
    pub opens_at: Option<i64>,
    /// The first instant a write or join is no longer taken, µs (RFC 3339 in JSON).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "rfc3339")]
    pub closes_at: Option<i64>,
    /// Accepted writes a member may make per period, 1 to [`MAX_ATTEMPTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// A member writes only after joining the period ([`Seats::join`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub join_required: bool,
}

impl EntryRules {
    /// Whether no rule is set (the common case: nothing to check or keep).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Whether the board counts each member's attempts ([`Seats::attempts`]).
    pub fn counts_attempts(&self) -> bool {
        self.max_attempts.is_some()
    }

    /// The rules' own consistency.
    pub fn validate(&self) -> Result<(), BoardError> {
        for (name, at) in [("opens_at", self.opens_at), ("closes_at", self.closes_at)] {
            if let Some(at) = at {
                // The document's pattern bounds the year; an offset can still move the
                // instant past the range, which only the instant shows: a rule.
                validate_instant(at).map_err(|_| {
                    BoardError::ConfigRule(format!(
                        "{name} must be between 1970-01-01T00:00:00Z and 9999-01-01T00:00:00Z"
                    ))
                })?;
            }
        }
        if let (Some(open), Some(close)) = (self.opens_at, self.closes_at) {
            if open >= close {
                return Err(BoardError::ConfigRule(format!(
                    "opens_at {} is not before closes_at {}",
                    instant_text(open),
                    instant_text(close)
                )));
            }
        }
        if let Some(n) = self.max_attempts {
            if !(1..=MAX_ATTEMPTS).contains(&n) {
                return Err(BoardError::InvalidConfig(format!(
                    "max_attempts {n} is outside 1..={MAX_ATTEMPTS}"
                )));
            }
        }
        Ok(())
    }

    /// `board_closed` unless instant `at_us` is in `[opens_at, closes_at)`.
    pub fn check_window(&self, at_us: i64) -> Result<(), BoardError> {
        if let Some(open) = self.opens_at.filter(|&o| at_us < o) {
            return Err(BoardError::BoardClosed(format!(
                "it opens at {}",
                instant_text(open)
            )));
        }
        if let Some(close) = self.closes_at.filter(|&c| at_us >= c) {
            return Err(BoardError::BoardClosed(format!(
                "it closed at {}",
                instant_text(close)
            )));
        }
        Ok(())
    }
}

/// `Option<i64>` µs as an RFC 3339 string (a finer fraction is cut to the µs, as `at`).
mod rfc3339 {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(us) => s.serialize_str(&instant_text(*us)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        let Some(s) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        parse_instant(&s)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

/// An RFC 3339 instant as µs (the config's `opens_at`/`closes_at`; a finer fraction is
/// cut to the µs, as a write's `at` is).
pub fn parse_instant(s: &str) -> Result<i64, String> {
    let t: jiff::Timestamp = s
        .parse()
        .map_err(|e| format!("{s:?} is not an RFC 3339 instant: {e}"))?;
    Ok(t.as_microsecond())
}

/// What a period keeps of its entry rules: the members who joined and have not played
/// yet (seats held without an entry), and each member's accepted writes when the board
/// counts them. A member with an entry holds its seat through the entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seats {
    /// Joined, no entry yet.
    pub waiting: HashSet<Box<str>>,
    /// Accepted writes this period, by member (kept while `max_attempts` is set).
    pub attempts: HashMap<Box<str>, u32>,
    /// The period's cohorts, on a board with `cohort_size`.
    pub cohorts: Cohorts,
    /// The period's league close once begun (docs/SPEC.md §14).
    pub close: Option<Box<Closing>>,
}

impl Seats {
    /// Whether there is nothing to keep.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
            && self.attempts.is_empty()
            && self.cohorts.is_empty()
            && self.close.is_none()
    }

    /// Whether its league close is done.
    pub fn closed(&self) -> bool {
        self.close.as_ref().is_some_and(|c| c.done)
    }

    /// Whether `member` joined and has not played yet.
    pub fn is_waiting(&self, member: &str) -> bool {
        self.waiting.contains(member)
    }

    /// `member`'s accepted writes this period.
    pub fn attempts_of(&self, member: &str) -> u32 {
        self.attempts.get(member).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_takes_its_opening_instant_and_refuses_its_closing_one() {
        let r = EntryRules {
            opens_at: Some(10),
            closes_at: Some(20),
            ..EntryRules::default()
        };
        assert!(r.check_window(9).is_err());
        assert!(r.check_window(10).is_ok());
        assert!(r.check_window(19).is_ok());
        let closed = r.check_window(20).expect_err("closed");
        assert_eq!(closed.code().as_str(), "board_closed");
    }

    #[test]
    fn bad_rules_are_invalid_config() {
        for bad in [
            EntryRules {
                opens_at: Some(20),
                closes_at: Some(20),
                ..EntryRules::default()
            },
            EntryRules {
                max_attempts: Some(0),
                ..EntryRules::default()
            },
            EntryRules {
                max_attempts: Some(MAX_ATTEMPTS + 1),
                ..EntryRules::default()
            },
            EntryRules {
                closes_at: Some(-1),
                ..EntryRules::default()
            },
        ] {
            assert_eq!(
                bad.validate().expect_err("invalid").code().as_str(),
                "invalid_config",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn instants_read_and_print_as_rfc3339() {
        let r = EntryRules {
            opens_at: Some(1_767_225_600_000_000),
            closes_at: Some(1_767_225_600_000_001),
            max_attempts: Some(3),
            join_required: true,
        };
        let json = serde_json::to_value(r).expect("json");
        assert_eq!(json["opens_at"], "2026-01-01T00:00:00Z");
        assert_eq!(json["closes_at"], "2026-01-01T00:00:00.000001Z");
        assert_eq!(
            serde_json::from_value::<EntryRules>(json).expect("reads"),
            r
        );
        assert_eq!(
            parse_instant("2026-01-01T00:00:00.0000019Z"),
            Ok(1_767_225_600_000_001)
        );
        assert!(parse_instant("yesterday").is_err());
        assert_eq!(
            serde_json::to_value(EntryRules::default()).expect("json"),
            serde_json::json!({})
        );
    }
}
