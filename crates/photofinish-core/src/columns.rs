//! Several columns (docs/SPEC.md §13): a board may rank by up to [`MAX_COLUMNS`] scores,
//! each in its own direction, then by who reached the tuple first.
//!
//! - [`Column`] is one column's config (`columns` in a board's config; absent, a board
//!   has one column named `score` in the board's order, and everything is as before).
//! - [`Shape`] is what a ranking needs of them: how many, each one's direction and
//!   update rule, whether the board keeps the best tuple. [`Shape::combine`] is the one
//!   place where a write meets a member's current tuple — for every board, one column or
//!   five.
//! - [`Scores`] is a member's tuple in column order, as clients see it; [`Operands`] the
//!   columns one write names, with their values; [`ScoreInput`] what a door received,
//!   resolved against the board's columns in one place ([`ScoreInput::resolve`]).
//! - [`ColumnNames`] travel with answers, so a door can name each score.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::{BoardConfig, Bounds, Op, Order};
use crate::error::{BoardError, ScoreLimit};
use crate::key::Cols;
pub use crate::key::MAX_COLUMNS;

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

/// Checks a board's `columns` against the rest of its config: 1 to [`MAX_COLUMNS`], names
/// by the rule and unique, no `update` on a `best` board, `min <= max`, and no board-level
/// bound on a board of 2+ columns.
pub fn validate_columns(
    columns: &[Column],
    update: Op,
    board_bounds: bool,
) -> Result<(), BoardError> {
    let bad = |m: String| Err(BoardError::InvalidConfig(m));
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
        return bad(
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
            return bad(format!("column name {:?} appears twice", c.name));
        }
        if update == Op::Best && c.update.is_some() {
            return bad(format!(
                "column {:?} has an update rule, but a best board compares whole tuples",
                c.name
            ));
        }
        if let (Some(lo), Some(hi)) = (c.min, c.max) {
            if lo > hi {
                return bad(format!(
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
    /// The columns this input writes on a board of `config`: `score` only on a
    /// one-column board, known names only, every column when positional — else a 400
    /// `invalid_score` naming what is wrong.
    pub fn resolve(&self, config: &BoardConfig) -> Result<Operands, BoardError> {
        let n = config.columns.len().max(1);
        let bad = |m: String| Err(BoardError::InvalidScore(m));
        match self {
            ScoreInput::Score(v) if n == 1 => Ok(Operands::one(*v)),
            ScoreInput::Score(_) => bad(format!(
                "this board ranks by {n} columns ({}): give each one's value (\"scores\" by \
                 name over HTTP, one value per column over RESP)",
                config.column_names().collect::<Vec<_>>().join(", ")
            )),
            ScoreInput::Named(pairs) => {
                let mut o = Operands::default();
                for (name, v) in pairs {
                    let Some(i) = config.column_index(name) else {
                        return bad(format!(
                            "{name:?} is not a column of this board (its columns: {})",
                            config.column_names().collect::<Vec<_>>().join(", ")
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
    /// The names of `config`'s columns when it has several.
    pub fn of(config: &BoardConfig) -> Self {
        Self(
            config
                .is_multi_column()
                .then(|| config.column_names().map(str::to_owned).collect()),
        )
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

/// What a ranking needs of its board's columns: how many, each one's direction and
/// update rule, and whether the board keeps the best tuple. Small and `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    len: u8,
    orders: [Order; MAX_COLUMNS],
    updates: [Update; MAX_COLUMNS],
    /// The board's update is `best`: a write without an operator keeps the better tuple.
    best: bool,
}

impl Shape {
    /// One column in `order`, combined by `update` (a board without `columns`).
    pub fn single(order: Order, update: Op) -> Self {
        Self::new(order, update, &[])
    }

    /// The shape of a board of `order` and `update` with these `columns` (none: one
    /// column). The columns are assumed valid ([`validate_columns`]).
    pub fn new(order: Order, update: Op, columns: &[Column]) -> Self {
        let default_update = match update {
            Op::Set => Update::Set,
            Op::Incr | Op::Best => Update::Incr,
        };
        let mut shape = Self {
            len: columns.len().clamp(1, MAX_COLUMNS) as u8,
            orders: [order; MAX_COLUMNS],
            updates: [default_update; MAX_COLUMNS],
            best: update == Op::Best,
        };
        for (i, c) in columns.iter().take(MAX_COLUMNS).enumerate() {
            shape.orders[i] = c.order.unwrap_or(order);
            shape.updates[i] = c.update.unwrap_or(default_update);
        }
        shape
    }

    /// A shape of these directions, one per column (1 to [`MAX_COLUMNS`]), combined by
    /// `incr`: what an import file records, which orders entries and no more. A board
    /// gives its ranking its own rules with [`crate::Ranking::adopt_shape`].
    pub fn of_orders(orders: &[Order]) -> Option<Self> {
        if orders.is_empty() || orders.len() > MAX_COLUMNS {
            return None;
        }
        let columns: Vec<Column> = orders
            .iter()
            .map(|&o| Column {
                order: Some(o),
                ..Column::named(DEFAULT_COLUMN)
            })
            .collect();
        let columns = if columns.len() == 1 {
            &[][..]
        } else {
            &columns[..]
        };
        Some(Self::new(orders[0], Op::Incr, columns))
    }

    /// Each column's direction, in column order.
    pub fn orders(&self) -> &[Order] {
        &self.orders[..self.len()]
    }

    /// Whether entries order the same under both: same columns, same directions.
    pub fn orders_like(&self, other: &Shape) -> bool {
        self.orders() == other.orders()
    }

    /// How many columns.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Never true (for clippy's `len` rule).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the board ranks by more than one column.
    #[inline]
    pub fn is_multi(&self) -> bool {
        self.len > 1
    }

    /// Column `i`'s direction.
    pub fn order(&self, i: usize) -> Order {
        self.orders[i]
    }

    /// The operator a write with `op` applies: its own, else `best` on a best board, else
    /// none (each column's rule).
    pub fn effective(&self, op: Option<Op>) -> Option<Op> {
        op.or(self.best.then_some(Op::Best))
    }

    /// The first column, normalized (smaller is better).
    #[inline]
    pub fn nscore(&self, scores: &Scores) -> i64 {
        self.orders[0].normalize(scores.first())
    }

    /// Columns 2.. normalized, unused ones 0: the key's tail.
    pub fn tail(&self, scores: &Scores) -> Cols {
        let mut t = [0; MAX_COLUMNS - 1];
        for (i, slot) in t.iter_mut().enumerate().take(self.len() - 1) {
            *slot = self.orders[i + 1].normalize(scores.get(i + 1));
        }
        t
    }

    /// The scores a normalized first column and tail stand for.
    pub fn scores(&self, nscore: i64, tail: &Cols) -> Scores {
        let mut s = Scores {
            len: self.len,
            values: [0; MAX_COLUMNS],
        };
        s.values[0] = self.orders[0].denormalize(nscore);
        for i in 1..self.len() {
            s.values[i] = self.orders[i].denormalize(tail[i - 1]);
        }
        s
    }

    /// Whether `a` ranks strictly before `b`: column by column, each in its direction.
    pub fn is_better(&self, a: &Scores, b: &Scores) -> bool {
        (self.nscore(a), self.tail(a)) < (self.nscore(b), self.tail(b))
    }

    /// Checks that a write names only this board's columns, and every one of them under
    /// `best`: a 400 `invalid_score` otherwise.
    pub fn check_operands(&self, op: Option<Op>, written: &Operands) -> Result<(), BoardError> {
        if written.beyond(self.len()) || written.mask() == 0 {
            return Err(BoardError::InvalidScore(format!(
                "a write names 1 to {} columns of this board",
                self.len()
            )));
        }
        if self.effective(op) == Some(Op::Best) && !written.covers(self.len()) {
            return Err(BoardError::InvalidScore(
                "best compares whole tuples: write every column".into(),
            ));
        }
        Ok(())
    }

    /// The tuple a write leaves (docs/SPEC.md §13): a member's first write sets the
    /// written columns and 0 elsewhere; after that `op` (or, without one, `best` on a best
    /// board, else each column's own rule) combines each written column, and `best`
    /// replaces the whole tuple only when strictly better. Overflow in any column refuses
    /// the write.
    pub fn combine(
        &self,
        op: Option<Op>,
        old: Option<&Scores>,
        written: &Operands,
    ) -> Result<Scores, BoardError> {
        self.check_operands(op, written)?;
        let op = self.effective(op);
        let Some(old) = old else {
            let mut s = Scores {
                len: self.len,
                values: [0; MAX_COLUMNS],
            };
            for (i, v) in written.iter() {
                s.values[i] = v;
            }
            return Ok(s);
        };
        let mut new = *old;
        if op == Some(Op::Best) {
            let mut candidate = new;
            for (i, v) in written.iter() {
                candidate.values[i] = v;
            }
            return Ok(if self.is_better(&candidate, old) {
                candidate
            } else {
                new
            });
        }
        for (i, v) in written.iter() {
            let o = old.values[i];
            let rule = match op {
                Some(Op::Set) => Update::Set,
                Some(_) => Update::Incr,
                None => self.updates[i],
            };
            new.values[i] = match rule {
                Update::Incr => o.checked_add(v).ok_or(BoardError::ScoreOverflow {
                    column: self.is_multi().then_some(i as u8 + 1),
                    old: o,
                    delta: v,
                    limit: ScoreLimit::I64,
                })?,
                Update::Set => v,
                Update::Min => o.min(v),
                Update::Max => o.max(v),
            };
        }
        Ok(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(spec: &[(&str, Order, Update)]) -> Vec<Column> {
        spec.iter()
            .map(|&(n, o, u)| Column {
                order: Some(o),
                update: Some(u),
                ..Column::named(n)
            })
            .collect()
    }

    fn w(values: &[(usize, i64)]) -> Operands {
        let mut o = Operands::default();
        for &(i, v) in values {
            o.set(i, v);
        }
        o
    }

    #[test]
    fn per_column_rules_and_first_write() {
        let c = cols(&[
            ("kills", Order::Desc, Update::Incr),
            ("deaths", Order::Asc, Update::Set),
            ("fastest", Order::Asc, Update::Min),
        ]);
        let s = Shape::new(Order::Desc, Op::Incr, &c);
        let first = s
            .combine(None, None, &w(&[(0, 3), (2, 90)]))
            .expect("first");
        assert_eq!(first.as_slice(), &[3, 0, 90]);
        let next = s
            .combine(None, Some(&first), &w(&[(0, 2), (1, 4), (2, 95)]))
            .expect("next");
        assert_eq!(next.as_slice(), &[5, 4, 90]);
        let set = s
            .combine(Some(Op::Set), Some(&next), &w(&[(2, 120)]))
            .expect("set");
        assert_eq!(set.as_slice(), &[5, 4, 120]);
        let incr = s
            .combine(Some(Op::Incr), Some(&set), &w(&[(1, 1)]))
            .expect("incr");
        assert_eq!(incr.as_slice(), &[5, 5, 120]);
    }

    #[test]
    fn best_compares_whole_tuples_in_each_direction() {
        let c = vec![
            Column {
                order: Some(Order::Desc),
                ..Column::named("stars")
            },
            Column {
                order: Some(Order::Asc),
                ..Column::named("moves")
            },
        ];
        let s = Shape::new(Order::Desc, Op::Best, &c);
        let a = Scores::new(&[3, 10]).expect("a");
        let more_moves = Operands::all(&Scores::new(&[3, 12]).expect("b"));
        assert_eq!(s.combine(None, Some(&a), &more_moves).expect("kept"), a);
        let fewer = Operands::all(&Scores::new(&[3, 9]).expect("c"));
        assert_eq!(
            s.combine(None, Some(&a), &fewer)
                .expect("better")
                .as_slice(),
            &[3, 9]
        );
        let partial = w(&[(0, 4)]);
        assert!(matches!(
            s.combine(None, Some(&a), &partial),
            Err(BoardError::InvalidScore(_))
        ));
    }

    #[test]
    fn overflow_names_the_column_and_refuses() {
        let c = cols(&[
            ("a", Order::Desc, Update::Incr),
            ("b", Order::Desc, Update::Incr),
        ]);
        let s = Shape::new(Order::Desc, Op::Incr, &c);
        let old = Scores::new(&[1, i64::MAX]).expect("old");
        let err = s
            .combine(None, Some(&old), &w(&[(0, 1), (1, 1)]))
            .expect_err("overflow");
        assert!(err.to_string().contains("column 2"), "{err}");
    }

    #[test]
    fn normalization_round_trips_at_the_extremes() {
        let c = cols(&[
            ("a", Order::Desc, Update::Set),
            ("b", Order::Asc, Update::Set),
            ("c", Order::Desc, Update::Set),
        ]);
        let s = Shape::new(Order::Desc, Op::Set, &c);
        for v in [
            [i64::MIN, i64::MAX, 0],
            [i64::MAX, i64::MIN, -1],
            [0, 0, i64::MIN],
        ] {
            let sc = Scores::new(&v).expect("scores");
            assert_eq!(s.scores(s.nscore(&sc), &s.tail(&sc)), sc);
        }
    }

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
