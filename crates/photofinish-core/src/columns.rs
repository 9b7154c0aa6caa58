//! Several columns (docs/SPEC.md §13): a board may rank by up to [`MAX_COLUMNS`] scores,
//! each in its own direction, then by who reached the tuple first.
//!
//! - [`Column`] is one column's config (`columns` in a board's config; absent, a board
//!   has one column named `score` in the board's order, and everything is as before).
//! - [`Shape`] (`shape.rs`) is what a ranking needs of them: how many, each one's
//!   direction and update rule, whether the board keeps the best tuple. [`Shape::combine`]
//!   is the one place where a write meets a member's current tuple — for every board, one
//!   column or five.
//! - [`Scores`] is a member's tuple in column order, as clients see it; [`Operands`] the
//!   columns one write names, with their values; [`ScoreInput`] what a door received,
//!   resolved against the board's columns in one place ([`ScoreInput::resolve`]).
//! - [`ColumnNames`] travel with answers, so a door can name each score.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::BoardError;
pub use crate::key::MAX_COLUMNS;
use crate::scoring::{Bounds, Op, Order};

mod shape;

pub use shape::Shape;

/// Longest column name, bytes (`[a-z][a-z0-9_]{0,31}`).
pub const MAX_COLUMN_NAME_BYTES: usize = 32;
/// The column-name rule as a regular expression (for the OpenAPI document).
pub const COLUMN_NAME_PATTERN: &str = "^[a-z][a-z0-9_]{0,31}$";
/// The one column of a board without `columns`.
pub const DEFAULT_COLUMN: &str = "score";

/// How a write that names no operator changes one column of a member already ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Update {
    /// Adds the written value (checked: overflow is refused).
    Incr,
    /// Replaces the value.
    Set,
    /// Keeps the smaller of the two.
    Min,
    /// Keeps the larger of the two.
    Max,
}

impl Update {
    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Update::Incr => "incr",
            Update::Set => "set",
            Update::Min => "min",
            Update::Max => "max",
        }
    }

    /// Parses the lowercase wire name.
    pub fn parse(s: &str) -> Option<Self> {
        [Update::Incr, Update::Set, Update::Min, Update::Max]
            .into_iter()
            .find(|u| u.as_str() == s)
    }
}

/// One column of a board's config (docs/SPEC.md §13). Fixed for the board's life.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// `[a-z][a-z0-9_]{0,31}`, unique within the board.
    pub name: String,
    /// Its direction; the board's `order` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
    /// How a write without an operator changes it; `incr` on an `incr` board, `set` on a
    /// `set` board when absent; not allowed on a `best` board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<Update>,
    /// Lowest value a write may leave (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    /// Highest value a write may leave (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    /// Largest absolute value of one increment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_increment: Option<u64>,
}

impl Column {
    /// A column with only a name: the board's order and update rule, no bounds.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            order: None,
            update: None,
            min: None,
            max: None,
            max_increment: None,
        }
    }

    /// Whether any bound is set.
    pub fn has_rules(&self) -> bool {
        self.min.is_some() || self.max.is_some() || self.max_increment.is_some()
    }

    /// Checks a write's effect on this column: the operand of an increment against
    /// `max_increment`, and a changed value against `min`/`max`.
    fn check(&self, incr: Option<i64>, old: Option<i64>, new: i64) -> Result<(), BoardError> {
        let bounds = Bounds {
            min: self.min,
            max: self.max,
            max_increment: self.max_increment,
            names: ("value", "min", "max"),
        };
        bounds
            .increment(incr)
            .and_then(|()| bounds.value(old, new))
            .map_err(|why| BoardError::ScoreRejected(format!("column {:?}: {why}", self.name)))
    }
}

/// The column names of a board of `columns` (its config's), in order: `score` alone on a
/// board without `columns`.
pub fn column_names(columns: &[Column]) -> impl Iterator<Item = &str> + '_ {
    let implied = columns.is_empty().then_some(DEFAULT_COLUMN);
    implied
        .into_iter()
        .chain(columns.iter().map(|c| c.name.as_str()))
}

/// The index of the column named `name` on a board of `columns`.
pub fn column_index(columns: &[Column], name: &str) -> Option<usize> {
    column_names(columns).position(|n| n == name)
}

/// Checks a board's `columns` against the rest of its config: 1 to [`MAX_COLUMNS`], names
/// by the rule and unique, no `update` on a `best` board, `min <= max`, and no board-level
/// bound on a board of 2+ columns.
pub fn validate_columns(
    columns: &[Column],
    update: Op,
    board_bounds: bool,
) -> Result<(), BoardError> {
    let bad = |m: String| Err(BoardError::InvalidConfig(m));
    let rule = |m: String| Err(BoardError::ConfigRule(m));
    if columns.is_empty() {
        return Ok(());
    }
    if columns.len() > MAX_COLUMNS {
        return bad(format!(
            "columns has {} entries, over the limit of {MAX_COLUMNS}",
            columns.len()
        ));
    }
    if columns.len() > 1 && board_bounds {
        return rule(
            "min_score, max_score and max_increment apply to one score: on a board of \
             several columns, set each column's min, max and max_increment"
                .into(),
        );
    }
    for (i, c) in columns.iter().enumerate() {
        if !valid_column_name(&c.name) {
            return bad(format!(
                "column name {:?} does not match {COLUMN_NAME_PATTERN}",
                c.name
            ));
        }
        if columns[..i].iter().any(|o| o.name == c.name) {
            return rule(format!("column name {:?} appears twice", c.name));
        }
        if update == Op::Best && c.update.is_some() {
            return rule(format!(
                "column {:?} has an update rule, but a best board compares whole tuples",
                c.name
            ));
        }
        if let (Some(lo), Some(hi)) = (c.min, c.max) {
            if lo > hi {
                return rule(format!(
                    "column {:?}: min {lo} is greater than max {hi}",
                    c.name
                ));
            }
        }
    }
    Ok(())
}

/// Whether `name` matches [`COLUMN_NAME_PATTERN`].
pub fn valid_column_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_COLUMN_NAME_BYTES
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

/// Checks a write against the columns' own bounds (a board of 2+ columns, or one with a
/// bounded column): `op` is the write's operator (`None`: each column's rule).
pub fn check_columns(
    columns: &[Column],
    shape: &Shape,
    op: Option<Op>,
    written: &Operands,
    old: Option<&Scores>,
    new: &Scores,
) -> Result<(), BoardError> {
    let op = shape.effective(op);
    for (i, c) in columns.iter().enumerate().filter(|(_, c)| c.has_rules()) {
        let incr = match (op, written.get(i)) {
            (Some(Op::Incr), v) => v,
            (None, v) if shape.updates[i] == Update::Incr => v,
            _ => None,
        };
        c.check(incr, old.map(|o| o.get(i)), new.get(i))?;
    }
    Ok(())
}

/// A member's scores in column order (denormalized: as clients write and read them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scores {
    len: u8,
    values: [i64; MAX_COLUMNS],
}

impl Scores {
    /// The scores of a one-column board.
    pub fn one(score: i64) -> Self {
        let mut values = [0; MAX_COLUMNS];
        values[0] = score;
        Self { len: 1, values }
    }

    /// Scores from a slice of 1 to [`MAX_COLUMNS`] values (`None` otherwise).
    pub fn new(values: &[i64]) -> Option<Self> {
        if values.is_empty() || values.len() > MAX_COLUMNS {
            return None;
        }
        let mut s = Self {
            len: values.len() as u8,
            values: [0; MAX_COLUMNS],
        };
        s.values[..values.len()].copy_from_slice(values);
        Some(s)
    }

    /// The first column: what `score` reports.
    #[inline]
    pub fn first(&self) -> i64 {
        self.values[0]
    }

    /// Column `i`'s value (0 past the end).
    #[inline]
    pub fn get(&self, i: usize) -> i64 {
        self.values.get(i).copied().unwrap_or(0)
    }

    /// The values, in column order.
    pub fn as_slice(&self) -> &[i64] {
        &self.values[..self.len as usize]
    }

    /// How many columns.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Never true: a tuple has at least one column (for clippy's `len` rule).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The columns one write names, each with its value (docs/SPEC.md §13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Operands {
    /// Bit `i`: column `i` is written.
    mask: u8,
    values: [i64; MAX_COLUMNS],
}

impl Operands {
    /// A write of the first column alone (every one-column write).
    pub fn one(value: i64) -> Self {
        let mut o = Self::default();
        o.set(0, value);
        o
    }

    /// Every column of `scores`, written.
    pub fn all(scores: &Scores) -> Self {
        let mut o = Self::default();
        for (i, &v) in scores.as_slice().iter().enumerate() {
            o.set(i, v);
        }
        o
    }

    /// Writes column `i` (below [`MAX_COLUMNS`]).
    pub fn set(&mut self, i: usize, value: i64) {
        if i < MAX_COLUMNS {
            self.mask |= 1 << i;
            self.values[i] = value;
        }
    }

    /// Column `i`'s value, if written.
    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        (i < MAX_COLUMNS && self.mask & (1 << i) != 0).then(|| self.values[i])
    }

    /// The bit mask of written columns (the log's encoding).
    pub fn mask(&self) -> u8 {
        self.mask
    }

    /// Whether every one of the first `n` columns is written.
    pub fn covers(&self, n: usize) -> bool {
        let all = (1u16 << n) - 1;
        u16::from(self.mask) & all == all
    }

    /// Whether any column at or past `n` is written.
    pub fn beyond(&self, n: usize) -> bool {
        u16::from(self.mask) >> n != 0
    }

    /// The tuple of the first `n` columns, when every one is written.
    pub fn full(&self, n: usize) -> Option<Scores> {
        if n == 0 || n > MAX_COLUMNS || !self.covers(n) || self.beyond(n) {
            return None;
        }
        Scores::new(&self.values[..n])
    }

    /// The written columns and their values, in column order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        (0..MAX_COLUMNS).filter_map(|i| self.get(i).map(|v| (i, v)))
    }
}

/// A write's scores as a door received them (docs/SPEC.md §13), resolved against the
/// board's columns when the write is applied: the board is known only then.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ScoreInput {
    /// `score`: the one column of a one-column board.
    Score(i64),
    /// `scores` by column name (HTTP), each name once.
    Named(Vec<(String, i64)>),
    /// One value per column, in column order (RESP).
    Positional(Vec<i64>),
}

impl ScoreInput {
    /// The columns this input writes on a board of `columns` (its config's): `score` only
    /// on a one-column board, known names only, every column when positional — else
    /// `invalid_score` naming what is wrong (a rule of the board: 422 over HTTP).
    pub fn resolve(&self, columns: &[Column]) -> Result<Operands, BoardError> {
        let n = columns.len().max(1);
        let bad = |m: String| Err(BoardError::InvalidScore(m));
        match self {
            ScoreInput::Score(v) if n == 1 => Ok(Operands::one(*v)),
            ScoreInput::Score(_) => bad(format!(
                "this board ranks by {n} columns ({}): give each one's value (\"scores\" by \
                 name over HTTP, one value per column over RESP)",
                column_names(columns).collect::<Vec<_>>().join(", ")
            )),
            ScoreInput::Named(pairs) => {
                let mut o = Operands::default();
                for (name, v) in pairs {
                    let Some(i) = column_index(columns, name) else {
                        return bad(format!(
                            "{name:?} is not a column of this board (its columns: {})",
                            column_names(columns).collect::<Vec<_>>().join(", ")
                        ));
                    };
                    if o.get(i).is_some() {
                        return bad(format!("column {name:?} is written twice"));
                    }
                    o.set(i, *v);
                }
                if o.mask() == 0 {
                    return bad("\"scores\" names no column".into());
                }
                Ok(o)
            }
            ScoreInput::Positional(values) if values.len() == n => {
                let mut o = Operands::default();
                for (i, &v) in values.iter().enumerate() {
                    o.set(i, v);
                }
                Ok(o)
            }
            ScoreInput::Positional(values) => bad(format!(
                "{} values for a board of {n} columns: give one per column, in column order",
                values.len()
            )),
        }
    }
}

/// The column names of a board of several, which answers carry so that a door can name
/// each score; none on a one-column board, whose answers carry `score` alone (as before
/// columns). Cheap to clone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ColumnNames(Option<Arc<[String]>>);

impl ColumnNames {
    /// The names of a board's `columns` (its config's) when it has several.
    pub fn of(columns: &[Column]) -> Self {
        Self((columns.len() > 1).then(|| column_names(columns).map(str::to_owned).collect()))
    }

    /// Names as an answer recorded them: two or more make a board of several columns.
    pub fn from_names(names: Vec<String>) -> Self {
        Self((names.len() > 1).then(|| names.into()))
    }

    /// The names, on a board of several columns.
    pub fn get(&self) -> Option<&[String]> {
        self.0.as_deref()
    }

    /// Each name with its score, on a board of several columns.
    pub fn label<'a>(&'a self, scores: &'a Scores) -> Option<impl Iterator<Item = (&'a str, i64)>> {
        let names = self.get()?;
        Some(
            names
                .iter()
                .map(String::as_str)
                .zip(scores.as_slice().iter().copied()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_rules() {
        let code = |r: Result<(), BoardError>| r.err().map(|e| e.code().as_str());
        let two = vec![Column::named("a"), Column::named("b")];
        assert_eq!(code(validate_columns(&two, Op::Incr, false)), None);
        assert_eq!(
            code(validate_columns(&two, Op::Incr, true)),
            Some("invalid_config")
        );
        let dup = vec![Column::named("a"), Column::named("a")];
        assert!(validate_columns(&dup, Op::Incr, false).is_err());
        let bad = vec![Column::named("Kills")];
        assert!(validate_columns(&bad, Op::Incr, false).is_err());
        let six: Vec<Column> = (0..6).map(|i| Column::named(&format!("c{i}"))).collect();
        assert!(validate_columns(&six, Op::Incr, false).is_err());
        let ruled = vec![Column {
            update: Some(Update::Max),
            ..Column::named("a")
        }];
        assert!(validate_columns(&ruled, Op::Best, false).is_err());
        assert!(valid_column_name("a_1") && !valid_column_name(&"a".repeat(33)));
    }
}
