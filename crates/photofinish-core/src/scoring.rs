//! How a score is ordered and changed — [`Order`], [`Op`] — and the bounds a rule puts on
//! it ([`Bounds`]): the words a board's config and its columns share, kept apart from
//! both so that neither imports the other for them.

use serde::{Deserialize, Serialize};

/// Which scores are better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Higher is better (points). The default.
    #[default]
    Desc,
    /// Lower is better (race times).
    Asc,
}

/// How a write combines with the member's current score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// new = old + value; an absent member counts as 0; overflow is an error.
    #[default]
    Incr,
    /// new = value if better than old (or the member is absent).
    Best,
    /// new = value.
    Set,
}

name_table!(Order { Desc => "desc", Asc => "asc" });
name_table!(Op { Incr => "incr", Best => "best", Set => "set" });

/// The bounds a value may not pass (docs/SPEC.md §7, §13): `min`/`max` on a value a write
/// changes, `max_increment` on an increment's operand — the one rule for a board's score
/// ([`ScoreRules`]) and for each column of a board of several
/// ([`crate::columns::Column`]). A refusal is its message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds<'a> {
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub max_increment: Option<u64>,
    /// How a refusal names the value and the bounds: `("score", "min_score",
    /// "max_score")` for a board, `("value", "min", "max")` for a column.
    pub names: (&'a str, &'a str, &'a str),
}

impl Bounds<'_> {
    /// An increment's operand (`None`: the write does not increment).
    pub(crate) fn increment(&self, incr: Option<i64>) -> Result<(), String> {
        match (incr, self.max_increment) {
            (Some(value), Some(max)) if value.unsigned_abs() > max => Err(format!(
                "an increment of {value} is larger than max_increment {max}"
            )),
            _ => Ok(()),
        }
    }

    /// The value a write leaves, `new`, from `old` (`None`: a new member). A write that
    /// leaves it as it was passes.
    pub(crate) fn value(&self, old: Option<i64>, new: i64) -> Result<(), String> {
        let (what, min, max) = self.names;
        if old == Some(new) {
            return Ok(());
        }
        if let Some(lo) = self.min.filter(|lo| new < *lo) {
            return Err(format!("the {what} would be {new}, below {min} {lo}"));
        }
        if let Some(hi) = self.max.filter(|hi| new > *hi) {
            return Err(format!("the {what} would be {new}, above {max} {hi}"));
        }
        Ok(())
    }
}
