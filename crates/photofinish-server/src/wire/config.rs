//! A board's config from its body (docs/SPEC.md §3, §13, §14, §16): the create body's
//! fields, each checked with a message naming it — operators, columns, score bounds,
//! instants, reward rows — then the config's own rules ([`CheckedConfig`]). A patch's
//! fields are read by the same functions. HTTP reads the body as JSON, RESP builds the
//! same body from `LB.CREATE`'s options.

use photofinish_core::columns::{Column, Update};
use photofinish_core::entry::EntryRules;
use photofinish_core::groups::{PartitionRules, TeamRules};
use photofinish_core::league::League;
use photofinish_core::rewards::{RewardRow, MAX_REWARD_ROWS};
use photofinish_core::{
    BoardConfig, BoardSettings, CheckedConfig, ErrorCode, Op, Order, Reset, ScoreRules, WeekStart,
};
use serde_json::Value;

use super::parse::{instant_text, integral_text, score};
use super::types::{BoardConfigBody, ColumnBody, RewardRowView};
use crate::error::ApiError;

/// A field of one of `allowed`'s names, parsed by `parse`; `default` when absent.
fn field<T>(
    value: Option<String>,
    name: &str,
    parse: fn(&str) -> Option<T>,
    default: T,
    allowed: &str,
) -> Result<T, ApiError> {
    optional_field(value.as_deref(), name, parse, allowed).map(|v| v.unwrap_or(default))
}

/// [`field`] without a default: absent stays `None`.
fn optional_field<T>(
    value: Option<&str>,
    name: &str,
    parse: fn(&str) -> Option<T>,
    allowed: &str,
) -> Result<Option<T>, ApiError> {
    value
        .map(|s| {
            parse(s).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::InvalidConfig,
                    format!("{name} must be one of {allowed}, got {s:?}"),
                )
            })
        })
        .transpose()
}

/// A score bound of the config (`min_score`, `max_score`): a score as writes take it.
pub fn bound(v: Option<&Value>, name: &str) -> Result<Option<i64>, ApiError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => score(v)
            .map(Some)
            .map_err(|e| ApiError::new(ErrorCode::InvalidConfig, format!("{name}: {}", e.message))),
    }
}

/// A config's instant (`opens_at`, `closes_at`): RFC 3339 from 1970 to 9999, else
/// `invalid_config`.
pub fn instant(v: Option<&str>, name: &str) -> Result<Option<i64>, ApiError> {
    v.map(|s| instant_text(s, name, ErrorCode::InvalidConfig))
        .transpose()
}

/// A body's columns (none: one column named `score`), each checked.
fn columns(body: Option<Vec<ColumnBody>>) -> Result<Vec<Column>, ApiError> {
    match body {
        Some(columns) if columns.is_empty() => Err(ApiError::new(
            ErrorCode::InvalidConfig,
            "columns lists 1 to 5 columns; leave it out for one column named score",
        )),
        columns => columns
            .unwrap_or_default()
            .into_iter()
            .map(column)
            .collect(),
    }
}

/// The config a body asks for, defaults filled in and every field checked: the one check
/// of a new board's config ([`CheckedConfig`]).
pub fn config(body: BoardConfigBody) -> Result<CheckedConfig, ApiError> {
    let d = BoardConfig::default();
    let c = BoardConfig {
        order: field(body.order, "order", Order::parse, d.order, "desc, asc")?,
        update: field(
            body.update,
            "update",
            Op::parse,
            d.update,
            "incr, best, set",
        )?,
        reset: field(
            body.reset,
            "reset",
            Reset::parse,
            d.reset,
            "never, daily, weekly, monthly",
        )?,
        week_start: field(
            body.week_start,
            "week_start",
            WeekStart::parse,
            d.week_start,
            "monday, sunday",
        )?,
        timezone: body.timezone.unwrap_or(d.timezone),
        retention: body.retention.unwrap_or(d.retention),
        columns: columns(body.columns)?,
        cohort_size: body.cohort_size,
        league: body.league.map(|l| League {
            tiers: l.tiers,
            promote: l.promote,
            demote: l.demote,
        }),
        partitions: body.partitions.map(|p| PartitionRules { max: p.max }),
        teams: body.teams.map(|t| TeamRules {
            max_size: t.max_size,
        }),
        settings: BoardSettings {
            public_read: body.public_read.unwrap_or(false),
            player_writes: body.player_writes.unwrap_or(false),
            rules: ScoreRules {
                min_score: bound(body.min_score.as_ref(), "min_score")?,
                max_score: bound(body.max_score.as_ref(), "max_score")?,
                max_increment: body.max_increment,
                max_members: body.max_members,
            },
            grace: body.grace.unwrap_or(0),
            webhook: body.webhook,
            webhook_top: body.webhook_top,
            entry: EntryRules {
                opens_at: instant(body.opens_at.as_deref(), "opens_at")?,
                closes_at: instant(body.closes_at.as_deref(), "closes_at")?,
                max_attempts: body.max_attempts,
                join_required: body.join_required.unwrap_or(false),
            },
            rewards: reward_rows(body.rewards.unwrap_or_default())?,
            reward_ttl: body.reward_ttl,
        },
    };
    Ok(c.checked()?)
}

/// A board's reward rows as its body gives them (docs/SPEC.md §16): each row's own
/// rules are checked with the config; here only the share's spelling, a number over 0
/// and at most 100 (else 400, as the document states) with at most two decimals (else
/// 422: the document cannot say so exactly).
pub fn reward_rows(rows: Vec<RewardRowView>) -> Result<Vec<RewardRow>, ApiError> {
    if rows.len() > MAX_REWARD_ROWS {
        return Err(ApiError::new(
            ErrorCode::InvalidConfig,
            format!(
                "rewards lists {} rows, over the limit of {MAX_REWARD_ROWS}",
                rows.len()
            ),
        ));
    }
    rows.into_iter()
        .map(|r| {
            let top_hundredths = r.top_percent.map(percent_hundredths).transpose()?;
            Ok(RewardRow {
                from: r.from,
                to: r.to,
                top_hundredths,
                reward: r.reward,
                amount: r.amount.unwrap_or(1),
                tier: r.tier,
            })
        })
        .collect()
}

/// A `top_percent` in hundredths of a percent.
fn percent_hundredths(p: f64) -> Result<u32, ApiError> {
    if !(p > 0.0 && p <= 100.0) {
        return Err(ApiError::new(
            ErrorCode::InvalidConfig,
            format!("top_percent {p} is not over 0 and at most 100"),
        ));
    }
    let h = (p * 100.0).round();
    // A share over 0 that rounds to none has more than two decimals too.
    if (p * 100.0 - h).abs() > 1e-6 || h < 1.0 {
        return Err(ApiError::rule(
            ErrorCode::InvalidConfig,
            format!("top_percent {p} has more than two decimals"),
        ));
    }
    Ok(h as u32)
}

/// A whole number from 0 to `u64::MAX` given as JSON (`7`, and `7.0`, which JSON Schema
/// also calls an integer); `null` or absent is none.
fn whole_number(v: Option<&Value>, name: &str) -> Result<Option<u64>, ApiError> {
    let bad = || {
        ApiError::new(
            ErrorCode::InvalidConfig,
            format!("{name} must be a whole number from 0 to {}", u64::MAX),
        )
    };
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => integral_text(&n.to_string())
            .and_then(|t| t.parse().ok())
            .map(Some)
            .ok_or_else(bad),
        Some(_) => Err(bad()),
    }
}

/// One column of a config body, each field checked (the columns' rules together are the
/// config's, [`BoardConfig::validate`]).
fn column(body: ColumnBody) -> Result<Column, ApiError> {
    let at = |field: &str| format!("column {:?} {field}", body.name);
    Ok(Column {
        order: optional_field(
            body.order.as_deref(),
            &at("order"),
            Order::parse,
            "desc, asc",
        )?,
        update: optional_field(
            body.update.as_deref(),
            &at("update"),
            Update::parse,
            "incr, set, min, max",
        )?,
        min: bound(body.min.as_ref(), &at("min"))?,
        max: bound(body.max.as_ref(), &at("max"))?,
        max_increment: whole_number(body.max_increment.as_ref(), &at("max_increment"))?,
        name: body.name,
    })
}
