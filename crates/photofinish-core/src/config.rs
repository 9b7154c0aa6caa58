//! Board configuration and the validation of names (docs/SPEC.md §2).
//!
//! Everything a client can name is checked here, once, with a message that shows the
//! offending value: board names, member names and each config field. Limits are named
//! constants with the reason beside them.

use serde::{Deserialize, Serialize};

use crate::calendar::Calendar;
pub use crate::calendar::{Reset, WeekStart};
use crate::cohort::validate_cohort_size;
use crate::columns::{column_index, column_names, validate_columns, Column, Shape};
use crate::entry::EntryRules;
use crate::error::BoardError;
use crate::groups::{PartitionRules, TeamRules};
use crate::league::League;
use crate::rewards::{validate_rewards, RewardRow, DEFAULT_REWARD_TTL_S};
use crate::scoring::Bounds;
pub use crate::scoring::{Op, Order};

/// Longest board name, in bytes: board names appear in paths, keys and file names.
pub const MAX_BOARD_NAME_BYTES: usize = 64;
/// Longest member name, in bytes (docs/SPEC.md §2); names longer than 16 bytes cost a side table.
pub const MAX_MEMBER_NAME_BYTES: usize = 128;
/// [`validate_board_name`] as a regular expression (for the OpenAPI document).
pub const BOARD_NAME_PATTERN: &str = "^[A-Za-z0-9_.-]{1,64}$";
/// [`validate_member_name`] as a regular expression, counting characters where the rule
/// counts bytes (a JSON Schema cannot count bytes): 1 to 128 of anything but the control
/// characters (Unicode Cc: U+0000–U+001F, U+007F–U+009F).
pub const MEMBER_NAME_PATTERN: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F]{1,128}$";
/// Most periods a board may retain: each retained period is a full ranking in memory.
pub const MAX_RETENTION_PERIODS: u32 = 1000;
/// Largest serialized metadata per entry (docs/SPEC.md §2): it is stored with every entry.
pub const MAX_METADATA_BYTES: usize = 1024;
/// Most members one board hides (docs/SPEC.md §15): a read costs O(log n + hidden).
pub const MAX_HIDDEN_MEMBERS: usize = 10_000;
/// Periods kept when the config does not say (docs/SPEC.md §2).
pub const DEFAULT_RETENTION_PERIODS: u32 = 8;
/// Longest grace after a period ends, seconds (docs/SPEC.md §10).
pub const MAX_GRACE_S: u32 = 86_400;
/// Most entries a period-close webhook carries.
pub const MAX_WEBHOOK_TOP: u32 = 1_000;
/// Entries a period-close webhook carries when the board does not say.
pub const DEFAULT_WEBHOOK_TOP: u32 = 100;
/// Longest webhook URL, bytes.
pub const MAX_WEBHOOK_URL_BYTES: usize = 2_048;

/// A board's configuration. Two boards with equal configs behave identically.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BoardConfig {
    /// Which scores are better.
    pub order: Order,
    /// The operator of writes that do not name one.
    pub update: Op,
    /// The reset schedule.
    pub reset: Reset,
    /// IANA time zone the periods are computed in.
    pub timezone: String,
    /// First day of the week for weekly boards.
    pub week_start: WeekStart,
    /// How many periods are kept, the current one included.
    pub retention: u32,
    /// The columns it ranks by (docs/SPEC.md §13), fixed for its life; empty: one column
    /// named `score` in `order` (left out of the JSON then, so such a config reads and
    /// prints as before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<Column>,
    /// Members per cohort (docs/SPEC.md §14), fixed for its life; `None`: no cohorts
    /// (left out of the JSON then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_size: Option<u32>,
    /// The league (docs/SPEC.md §14), fixed for its life; `None`: no tiers (left out of
    /// the JSON then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<League>,
    /// Its partitions (docs/SPEC.md §17), fixed for its life; `None`: none (left out of
    /// the JSON then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PartitionRules>,
    /// Its teams (docs/SPEC.md §17), fixed for its life; `None`: none (left out of the
    /// JSON then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<TeamRules>,
    /// Settings that change neither the order nor the periods (who may read and write):
    /// they may change over the board's life. Flattened into the config's JSON, each left
    /// out while it has its default, so a config without them reads and prints as before.
    #[serde(flatten)]
    pub settings: BoardSettings,
}

/// The settings of a board that may change over its life (`PATCH /v1/boards/{board}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct BoardSettings {
    /// Reads need no credential (docs/SPEC.md §6).
    #[serde(default, skip_serializing_if = "is_false")]
    pub public_read: bool,
    /// Players (JWT) may write their own member (docs/SPEC.md §6).
    #[serde(default, skip_serializing_if = "is_false")]
    pub player_writes: bool,
    /// What a write may do to a score, and how many members a period takes.
    #[serde(flatten)]
    pub rules: ScoreRules,
    /// A tournament's entry rules: its window, attempts and joins (docs/SPEC.md §14).
    #[serde(flatten)]
    pub entry: EntryRules,
    /// Seconds after a period ends during which a write naming it still lands in it
    /// (docs/SPEC.md §10); 0 (the default) for none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grace: u32,
    /// Where the server posts each period's final standings once it closes (an http or
    /// https URL, set by admins only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// How many entries that post carries, 1 to [`MAX_WEBHOOK_TOP`];
    /// [`DEFAULT_WEBHOOK_TOP`] when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_top: Option<u32>,
    /// What each period's close pays (docs/SPEC.md §16): up to
    /// [`MAX_REWARD_ROWS`](crate::rewards::MAX_REWARD_ROWS) rows; a member gets the
    /// first it matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewards: Vec<RewardRow>,
    /// How long a grant may be claimed, seconds;
    /// [`DEFAULT_REWARD_TTL_S`](crate::rewards::DEFAULT_REWARD_TTL_S) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward_ttl: Option<u32>,
}

impl BoardSettings {
    /// The grace after a period ends, µs.
    pub fn grace_us(&self) -> i64 {
        i64::from(self.grace) * 1_000_000
    }

    /// How long a grant may be claimed, µs.
    pub fn reward_ttl_us(&self) -> i64 {
        i64::from(self.reward_ttl.unwrap_or(DEFAULT_REWARD_TTL_S)) * 1_000_000
    }

    /// How many entries the period-close webhook carries.
    pub fn webhook_top(&self) -> u32 {
        self.webhook_top.unwrap_or(DEFAULT_WEBHOOK_TOP)
    }

    /// The settings' own rules: grace, the webhook's URL and size, the score rules.
    pub fn validate(&self) -> Result<(), BoardError> {
        if self.grace > MAX_GRACE_S {
            return Err(BoardError::InvalidConfig(format!(
                "grace {} is over the limit of {MAX_GRACE_S} seconds",
                self.grace
            )));
        }
        if let Some(top) = self.webhook_top {
            if top == 0 || top > MAX_WEBHOOK_TOP {
                return Err(BoardError::InvalidConfig(format!(
                    "webhook_top {top} is outside 1..={MAX_WEBHOOK_TOP}"
                )));
            }
        }
        if let Some(url) = &self.webhook {
            validate_webhook_url(url)?;
        }
        self.entry.validate()?;
        self.rules.validate()
    }
}

/// The webhook URLs [`validate_webhook_url`] takes (with the length limit), as a regular
/// expression for the OpenAPI document.
pub const WEBHOOK_URL_PATTERN: &str = "^https?://[!-\"$-.0->@-~]+([/?#][!-~]*)?$";

/// A webhook URL: `http://` or `https://`, a non-empty host, printable ASCII without
/// spaces (punycode for other host names), at most [`MAX_WEBHOOK_URL_BYTES`]. (Loopback
/// is allowed: admins set webhooks.)
pub fn validate_webhook_url(url: &str) -> Result<(), BoardError> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    let host = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or_default());
    let clean = url.bytes().all(|b| b.is_ascii_graphic());
    match host {
        Some(h) if !h.is_empty() && clean && url.len() <= MAX_WEBHOOK_URL_BYTES => Ok(()),
        _ => Err(BoardError::InvalidConfig(format!(
            "webhook {url:?} is not an http:// or https:// URL with a host (at most \
             {MAX_WEBHOOK_URL_BYTES} bytes)"
        ))),
    }
}

/// A board's score rules (docs/SPEC.md §7), each absent by default. Checked by
/// [`ScoreRules::check`] on every backend; a write that breaks one changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ScoreRules {
    /// Lowest score a write may leave (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_score: Option<i64>,
    /// Highest score a write may leave (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_score: Option<i64>,
    /// Largest absolute value of an `incr`'s operand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_increment: Option<u64>,
    /// Most members one period holds; a write adding one beyond it is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_members: Option<u64>,
}

impl ScoreRules {
    /// Whether no rule is set (the common case: nothing to check).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The rules' own consistency.
    pub fn validate(&self) -> Result<(), BoardError> {
        if let (Some(lo), Some(hi)) = (self.min_score, self.max_score) {
            if lo > hi {
                return Err(BoardError::ConfigRule(format!(
                    "min_score {lo} is greater than max_score {hi}"
                )));
            }
        }
        if self.max_members == Some(0) {
            return Err(BoardError::InvalidConfig(
                "max_members 0 would refuse every write; leave it out for no limit".into(),
            ));
        }
        Ok(())
    }

    /// The bounds these rules put on the board's score.
    fn bounds(&self) -> Bounds<'static> {
        Bounds {
            min: self.min_score,
            max: self.max_score,
            max_increment: self.max_increment,
            names: ("score", "min_score", "max_score"),
        }
    }

    /// The part of [`Self::check`] that needs no stored score: `max_increment` on an `incr`.
    pub fn check_operand(&self, op: Op, value: i64) -> Result<(), BoardError> {
        let incr = (op == Op::Incr).then_some(value);
        self.bounds()
            .increment(incr)
            .map_err(BoardError::ScoreRejected)
    }

    /// Checks a write: `op` with operand `value` took the score from `old` (`None`: a new
    /// member) to `new`. `members` is how many the period holds; `admit_new` is false while
    /// the server's memory estimate is over its limit. A `best` (or any write) that leaves
    /// the score as it was passes the score bounds.
    pub fn check(
        &self,
        op: Op,
        value: i64,
        old: Option<i64>,
        new: i64,
        members: u64,
    ) -> Result<(), BoardError> {
        self.check_operand(op, value)?;
        self.bounds()
            .value(old, new)
            .map_err(BoardError::ScoreRejected)?;
        if old.is_none() {
            if let Some(max) = self.max_members.filter(|m| members >= *m) {
                return Err(BoardError::BoardFull(max));
            }
        }
        Ok(())
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A board config that passed [`BoardConfig::validate`]: made once, where a config enters
/// (a door's body, a log record or snapshot being read, an upgrade), and taken as it is
/// from there on — by the create operation, its log record and the board it builds. So no
/// step after the door checks it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct CheckedConfig(BoardConfig);

impl CheckedConfig {
    /// `config` if it passes its rules.
    pub fn new(config: BoardConfig) -> Result<Self, BoardError> {
        config.validate()?;
        Ok(Self(config))
    }

    /// The config itself.
    pub fn into_inner(self) -> BoardConfig {
        self.0
    }
}

impl std::ops::Deref for CheckedConfig {
    type Target = BoardConfig;

    fn deref(&self) -> &BoardConfig {
        &self.0
    }
}

impl Default for BoardConfig {
    fn default() -> Self {
        Self {
            order: Order::Desc,
            update: Op::Incr,
            reset: Reset::Never,
            timezone: "UTC".to_owned(),
            week_start: WeekStart::Monday,
            retention: DEFAULT_RETENTION_PERIODS,
            columns: Vec::new(),
            cohort_size: None,
            league: None,
            partitions: None,
            teams: None,
            settings: BoardSettings::default(),
        }
    }
}

impl BoardConfig {
    /// The config as a [`CheckedConfig`], if it passes its rules.
    pub fn checked(self) -> Result<CheckedConfig, BoardError> {
        CheckedConfig::new(self)
    }

    /// Checks every field; the time zone must be a known IANA name.
    pub fn validate(&self) -> Result<(), BoardError> {
        jiff::tz::TimeZone::get(&self.timezone).map_err(|_| {
            BoardError::InvalidConfig(format!("unknown time zone {:?}", self.timezone))
        })?;
        if self.retention == 0 || self.retention > MAX_RETENTION_PERIODS {
            return Err(BoardError::InvalidConfig(format!(
                "retention {} is outside 1..={MAX_RETENTION_PERIODS}",
                self.retention
            )));
        }
        if self.settings.webhook.is_some() {
            if self.reset == Reset::Never {
                return Err(BoardError::ConfigRule(
                    "a webhook posts each period's results when it closes: a board with \
                     reset \"never\" has one period that never closes"
                        .into(),
                ));
            }
            if self.retention < 2 {
                return Err(BoardError::ConfigRule(
                    "a board with a webhook keeps at least 2 periods (retention >= 2), so the \
                     period that closed can still be read while it is posted"
                        .into(),
                ));
            }
        }
        let rules = &self.settings.rules;
        let board_bounds =
            rules.min_score.is_some() || rules.max_score.is_some() || rules.max_increment.is_some();
        validate_columns(&self.columns, self.update, board_bounds)?;
        validate_cohort_size(self.cohort_size)?;
        if let Some(p) = &self.partitions {
            p.validate()?;
        }
        if let Some(t) = &self.teams {
            let shape = self.shape();
            t.validate(shape.len(), shape.order(0))?;
        }
        if let Some(league) = &self.league {
            league.validate(self.cohort_size, self.reset != Reset::Never)?;
        }
        validate_rewards(
            &self.settings.rewards,
            self.settings.reward_ttl,
            self.league.as_ref(),
        )?;
        self.settings.validate()
    }

    /// What its rankings need of its columns ([`Shape`]).
    pub fn shape(&self) -> Shape {
        Shape::new(self.order, self.update, &self.columns)
    }

    /// Whether it ranks by more than one column: its answers then carry `scores`.
    pub fn is_multi_column(&self) -> bool {
        self.columns.len() > 1
    }

    /// Its column names in order (`score` alone without `columns`).
    pub fn column_names(&self) -> impl Iterator<Item = &str> + '_ {
        column_names(&self.columns)
    }

    /// The index of the column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        column_index(&self.columns, name)
    }

    /// Its period calendar (fails on an unknown time zone).
    pub fn calendar(&self) -> Result<Calendar, BoardError> {
        Calendar::new(self.reset, self.week_start, &self.timezone)
    }
}

/// Checks a board name: `[A-Za-z0-9_.-]{1,64}`.
pub fn validate_board_name(name: &str) -> Result<(), BoardError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_BOARD_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(BoardError::InvalidBoardName(name.to_owned()))
    }
}

/// Checks a member name: 1 to 128 bytes of UTF-8 without control characters.
pub fn validate_member_name(name: &str) -> Result<(), BoardError> {
    // Printable ASCII bytes are never control characters: that check runs over bytes and
    // vectorizes; only a name with other bytes is decoded into chars (loading 10M names
    // from a snapshot spent 0.1 s here, docs/bench-history.md §13).
    let printable_ascii = |b: &u8| (0x20..0x7f).contains(b);
    let ok = !name.is_empty()
        && name.len() <= MAX_MEMBER_NAME_BYTES
        && (name.as_bytes().iter().all(printable_ascii) || !name.chars().any(char::is_control));
    if ok {
        Ok(())
    } else {
        Err(BoardError::InvalidMemberName(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_names() {
        for ok in ["a", "weekly.kills-2026_v1", &"x".repeat(64)] {
            assert!(validate_board_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a b", "a/b", "ä", &"x".repeat(65)] {
            assert!(validate_board_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn member_names() {
        for ok in ["a", "玩家一号", "with space", &"x".repeat(128)] {
            assert!(validate_member_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a\nb", "a\u{7f}", "a\u{85}b", &"x".repeat(129)] {
            assert!(validate_member_name(bad).is_err(), "{bad:?}");
        }
    }

    proptest::proptest! {
        /// The ASCII fast path agrees with the rule it shortcuts, for any string.
        #[test]
        fn member_names_follow_the_rule(name in "[\\x00-\\x7f\\u{80}-\\u{a0}é玩]{0,130}") {
            let rule = !name.is_empty()
                && name.len() <= MAX_MEMBER_NAME_BYTES
                && !name.chars().any(char::is_control);
            proptest::prop_assert_eq!(validate_member_name(&name).is_ok(), rule);
        }
    }

    #[test]
    fn config_validation() {
        assert!(BoardConfig::default().validate().is_ok());
        let tz = BoardConfig {
            timezone: "Mars/Olympus".into(),
            ..BoardConfig::default()
        };
        assert!(matches!(tz.validate(), Err(BoardError::InvalidConfig(m)) if m.contains("Mars")));
        let zero = BoardConfig {
            retention: 0,
            ..BoardConfig::default()
        };
        assert!(zero.validate().is_err());
    }

    #[test]
    fn settings_at_their_defaults_leave_the_json_as_it_was() {
        let plain = BoardConfig::default();
        let text = serde_json::to_string(&plain).expect("json");
        assert_eq!(
            text,
            r#"{"order":"desc","update":"incr","reset":"never","timezone":"UTC","week_start":"monday","retention":8}"#
        );
        let open = BoardConfig {
            settings: BoardSettings {
                public_read: true,
                ..BoardSettings::default()
            },
            ..BoardConfig::default()
        };
        let text = serde_json::to_string(&open).expect("json");
        assert!(
            text.ends_with(r#""retention":8,"public_read":true}"#),
            "{text}"
        );
        let back: BoardConfig = serde_json::from_str(&text).expect("parse");
        assert_eq!(back, open);
    }

    #[test]
    fn score_rules() {
        let rules = ScoreRules {
            min_score: Some(0),
            max_score: Some(100),
            max_increment: Some(10),
            max_members: Some(2),
        };
        assert!(rules.validate().is_ok());
        let code = |r: Result<(), BoardError>| r.err().map(|e| e.code().as_str());
        // incr: the operand's size, then the resulting score.
        assert_eq!(
            code(rules.check(Op::Incr, 11, Some(0), 11, 1)),
            Some("score_rejected")
        );
        assert_eq!(
            code(rules.check(Op::Incr, -10, Some(5), -5, 1)),
            Some("score_rejected")
        );
        assert_eq!(code(rules.check(Op::Incr, 10, Some(90), 100, 1)), None);
        // set: bounds inclusive; max_increment does not apply.
        assert_eq!(
            code(rules.check(Op::Set, 101, Some(5), 101, 1)),
            Some("score_rejected")
        );
        assert_eq!(code(rules.check(Op::Set, 100, Some(5), 100, 1)), None);
        // best that leaves the score as it is passes, even out of bounds.
        assert_eq!(code(rules.check(Op::Best, -50, Some(7), 7, 1)), None);
        // a new member beyond max_members; an existing one still updates.
        assert_eq!(
            code(rules.check(Op::Set, 1, None, 1, 2)),
            Some("board_full")
        );
        assert_eq!(code(rules.check(Op::Set, 1, Some(0), 1, 2)), None);
        let inverted = ScoreRules {
            min_score: Some(5),
            max_score: Some(4),
            ..ScoreRules::default()
        };
        // Two values compared: a rule no schema states (docs/SPEC.md §3).
        let refused = inverted.validate();
        assert!(matches!(refused, Err(BoardError::ConfigRule(_))));
        assert!(refused.is_err_and(|e| e.is_rule()));
    }

    #[test]
    fn wire_names_round_trip() {
        for r in [Reset::Never, Reset::Daily, Reset::Weekly, Reset::Monthly] {
            assert_eq!(Reset::parse(r.as_str()), Some(r));
        }
        assert_eq!(Op::parse("best"), Some(Op::Best));
        assert_eq!(Op::parse("BEST"), None);
    }
}
