//! A board's shape: what a ranking needs of its columns (how many, each one's direction
//! and update rule, whether the board keeps the best tuple) and [`Shape::combine`], the
//! one place a write meets a member's tuple. It is apart from the columns' config and
//! values because it is the rule every write runs, on every board, while the rest of
//! `columns.rs` describes and checks what a board and a write say.

use super::{Column, Operands, Scores, Update, DEFAULT_COLUMN, MAX_COLUMNS};
use crate::error::{BoardError, ScoreLimit};
use crate::key::Cols;
use crate::scoring::{Op, Order};

/// What a ranking needs of its board's columns: how many, each one's direction and
/// update rule, and whether the board keeps the best tuple. Small and `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    len: u8,
    orders: [Order; MAX_COLUMNS],
    pub(super) updates: [Update; MAX_COLUMNS],
    /// The board's update is `best`: a write without an operator keeps the better tuple.
    best: bool,
}

impl Shape {
    /// One column in `order`, combined by `update` (a board without `columns`).
    pub fn single(order: Order, update: Op) -> Self {
        Self::new(order, update, &[])
    }

    /// The shape of a board of `order` and `update` with these `columns` (none: one
    /// column). The columns are assumed valid ([`validate_columns`](super::validate_columns)).
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
}
