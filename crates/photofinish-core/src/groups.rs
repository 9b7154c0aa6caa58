//! Partitions and teams (docs/SPEC.md §17): a board's config of them, fixed for its life,
//! and the rule of a key that names one. A partition (a country, a platform, a region) is
//! a ranking of its own inside each period's ranking: a write names it, the member stays
//! in it for the period, and every read can be asked of it alone. A team (a clan, a
//! guild) is ranked beside the members by the sum of its members' scores. The rankings
//! themselves are `ranking/partitions.rs` and `ranking/teams.rs`; the write's fields are
//! `op/write.rs`.

use serde::{Deserialize, Serialize};

use crate::error::BoardError;
use crate::scoring::Order;

/// Most partitions a board's config may allow in a period (docs/SPEC.md §17): each is an
/// index of its own, and a partition's id is held in 2 bytes beside each member.
pub const MAX_PARTITIONS: u32 = 10_000;
/// Longest partition or team key, bytes.
pub const MAX_GROUP_KEY_BYTES: usize = 32;
/// [`validate_group_key`] as a regular expression (for the OpenAPI document).
pub const GROUP_KEY_PATTERN: &str = "^[A-Za-z0-9_-]{1,32}$";

/// A board's partitions: `{"max": M}`, the most a period may hold (1 to
/// [`MAX_PARTITIONS`]). A write that would open one more is refused
/// (`too_many_partitions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionRules {
    /// The most partitions a period holds.
    pub max: u32,
}

impl PartitionRules {
    /// Checks the bound: 1 to [`MAX_PARTITIONS`].
    pub fn validate(&self) -> Result<(), BoardError> {
        if (1..=MAX_PARTITIONS).contains(&self.max) {
            Ok(())
        } else {
            Err(BoardError::InvalidConfig(format!(
                "partitions.max {} is outside 1..={MAX_PARTITIONS}",
                self.max
            )))
        }
    }
}

/// Most members a team's config may allow (docs/SPEC.md §17).
pub const MAX_TEAM_SIZE: u32 = 10_000;

/// A board's teams: `{"max_size": S}`, the most members a team holds in a period (1 to
/// [`MAX_TEAM_SIZE`]). A write that would add one more is refused (`team_full`). Only on
/// a one-column board ordered `desc` ([`TeamRules::validate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamRules {
    /// The most members a team holds.
    pub max_size: u32,
}

impl TeamRules {
    /// Checks the bound (1 to [`MAX_TEAM_SIZE`], 400 outside) and the board it is on: a
    /// team's score is a sum, which only one column ordered `desc` gives a meaning (422:
    /// a rule between fields).
    pub fn validate(&self, columns: usize, order: Order) -> Result<(), BoardError> {
        if !(1..=MAX_TEAM_SIZE).contains(&self.max_size) {
            return Err(BoardError::InvalidConfig(format!(
                "teams.max_size {} is outside 1..={MAX_TEAM_SIZE}",
                self.max_size
            )));
        }
        if columns > 1 || order != Order::Desc {
            return Err(BoardError::ConfigRule(
                "teams rank by the sum of their members' scores: only a one-column board \
                 ordered \"desc\" may have them"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// Refuses a read of partitions (`partition=`, the list, an event stream's filter) on a
/// board whose config has none (docs/SPEC.md §17): 422 `invalid_parameter`.
pub fn require_partitions(config: &crate::BoardConfig) -> Result<(), BoardError> {
    if config.partitions.is_some() {
        Ok(())
    } else {
        Err(BoardError::InvalidParameter(
            "partition: the board has no partitions".into(),
        ))
    }
}

/// Refuses a read of teams on a board whose config has none (docs/SPEC.md §17): 422
/// `invalid_parameter`.
pub fn require_teams(config: &crate::BoardConfig) -> Result<(), BoardError> {
    if config.teams.is_some() {
        Ok(())
    } else {
        Err(BoardError::InvalidParameter(
            "teams: the board has no teams".into(),
        ))
    }
}

/// Checks a partition or team key: 1 to 32 of `A-Z a-z 0-9 _ -`.
pub fn validate_group_key(key: &str) -> Result<(), BoardError> {
    let ok = !key.is_empty()
        && key.len() <= MAX_GROUP_KEY_BYTES
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(BoardError::InvalidGroupKey(key.to_owned()))
    }
}

/// A partition's or a team's key held inline — at most [`MAX_GROUP_KEY_BYTES`], checked
/// by [`validate_group_key`] when made, as [`crate::names::GroupKey`] is — so comparing
/// it reads no other memory (a team's record holds its key: a write naming its member's
/// team compares the two without a lookup and without a pointer to follow).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct InlineGroupKey {
    len: u8,
    bytes: [u8; MAX_GROUP_KEY_BYTES],
}

impl InlineGroupKey {
    /// `key`, if it follows the rule ([`validate_group_key`]).
    pub fn new(key: &str) -> Result<Self, BoardError> {
        validate_group_key(key)?;
        let mut bytes = [0; MAX_GROUP_KEY_BYTES];
        bytes[..key.len()].copy_from_slice(key.as_bytes());
        Ok(Self {
            len: key.len() as u8,
            bytes,
        })
    }

    /// The key's bytes: the first `len` of the inline array.
    #[inline]
    fn key_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        // Made from a `&str` of ASCII only (`new`), so always UTF-8.
        std::str::from_utf8(self.key_bytes()).unwrap_or_default()
    }

    /// Whether it is `key`: its bytes compared, without [`Self::as_str`]'s UTF-8 check
    /// (a write naming its member's team asks this, docs/bench-history.md §49).
    #[inline]
    pub fn is(&self, key: &str) -> bool {
        self.key_bytes() == key.as_bytes()
    }
}

impl std::ops::Deref for InlineGroupKey {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for InlineGroupKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn a_key_follows_the_pattern_and_a_bound_its_range() {
        for good in ["FR", "steam", "eu-west_1", &"k".repeat(32)] {
            assert!(validate_group_key(good).is_ok(), "{good}");
            let key = InlineGroupKey::new(good).expect(good);
            assert_eq!(&*key, good);
            assert!(key.is(good));
            assert_eq!(format!("{key:?}"), format!("{good:?}"));
        }
        assert!(InlineGroupKey::new(&"k".repeat(33)).is_err());
        let ab = InlineGroupKey::new("ab").expect("ab");
        for other in ["a", "abc", "AB", "ba", ""] {
            assert!(!ab.is(other), "{other:?}");
        }
        assert_ne!(
            InlineGroupKey::new("ab").ok(),
            InlineGroupKey::new("abc").ok()
        );
        for bad in ["", "a b", "é", "a.b", &"k".repeat(33)] {
            let e = validate_group_key(bad).expect_err(bad);
            assert_eq!(e.code(), ErrorCode::InvalidParameter, "{bad:?}");
            assert!(!e.is_rule(), "a pattern the document states: 400");
        }
        for (max, ok) in [(0, false), (1, true), (10_000, true), (10_001, false)] {
            assert_eq!(PartitionRules { max }.validate().is_ok(), ok, "{max}");
            let teams = TeamRules { max_size: max }.validate(1, Order::Desc);
            assert_eq!(teams.is_ok(), ok, "{max}");
        }
        let rule = |columns, order| TeamRules { max_size: 5 }.validate(columns, order);
        for e in [rule(2, Order::Desc), rule(1, Order::Asc)] {
            let e = e.expect_err("only one column, desc");
            assert!(e.is_rule(), "a rule between fields: 422");
        }
    }
}
