//! The keys and arguments of `read.lua` and `remove.lua` (both act on one board-period and
//! take the same keys), named, in the order the scripts unpack them.

use photofinish_core::query::ThresholdQuery;
use photofinish_core::{Period, RankStyle};

use super::flag;
use crate::layout::{self, BoardKeys};

/// The board-period a read or remove acts on, and how the server resolved it.
#[derive(Debug)]
pub struct PeriodTarget<'a> {
    /// The board's keys.
    pub keys: &'a BoardKeys,
    /// The config text the period was resolved with (the script checks it).
    pub config_text: &'a str,
    /// The period.
    pub period: &'a Period,
    /// Whether it is the current period (which reads as empty before its first write;
    /// any other period without a ranking is not found).
    pub is_current: bool,
}

impl PeriodTarget<'_> {
    /// The KEYS and ARGV of a remove of `member` ([`remove`]; the keyed script runs the
    /// same function with them).
    pub fn remove_parts(&self, member: &str) -> (Vec<String>, Vec<Vec<u8>>) {
        let keys = vec![self.keys.config(), self.keys.periods(), self.keys.events()];
        let mut args = vec![
            self.config_text.into(),
            self.period.id.clone().into_bytes(),
            flag(self.is_current).into(),
            self.keys.period(&self.period.id).into_bytes(),
        ];
        args.extend(member_args(self.keys, member));
        (keys, args)
    }

    /// KEYS: cfg periods; ARGV: CONFIG PERIOD_ID IS_CURRENT P.
    pub fn invocation(&self, function: &'static super::Function) -> super::Call {
        let mut inv = function.prepare_invoke();
        inv.key(self.keys.config()).key(self.keys.periods());
        inv.arg(self.config_text)
            .arg(&self.period.id)
            .arg(flag(self.is_current))
            .arg(self.keys.period(&self.period.id));
        inv
    }
}

/// A member name and its hash as the scripts take them: MEMBER H H32.
fn member_args(keys: &BoardKeys, member: &str) -> [Vec<u8>; 3] {
    let (field, h32) = keys.name_hash(member);
    [member.into(), field.to_vec(), h32.to_string().into_bytes()]
}

/// The largest offset passed to Lua: its numbers are doubles, exact to 2^53; any larger
/// offset is past the end of every ranking anyway.
pub const MAX_EXACT_OFFSET: u64 = 1 << 53;

/// What a read returns rows of.
#[derive(Debug, Clone, Copy)]
pub enum ReadMode<'a> {
    /// One member's row.
    Member(&'a str),
    /// `limit` rows from 0-based `offset`.
    Page {
        /// First row.
        offset: u64,
        /// Rows.
        limit: u64,
    },
    /// Each of these members' rows, if the period holds them.
    Query(&'a [String]),
    /// The rank a score would get.
    RankOf(i64),
    /// The entries at the ordinal ranks a thresholds question names.
    Tiers(&'a ThresholdQuery),
    /// The rows around a member.
    Around {
        /// The member.
        member: &'a str,
        /// Rows above.
        before: u64,
        /// Rows below.
        after: u64,
    },
}

impl ReadMode<'_> {
    /// The member the read is about, if any.
    pub fn member(&self) -> Option<&str> {
        match self {
            ReadMode::Member(m) | ReadMode::Around { member: m, .. } => Some(m),
            _ => None,
        }
    }
}

/// One call of the read script: the target's arguments, then DESC STYLE MODE and the
/// mode's own arguments (a member as MEMBER H H32).
pub fn read(
    target: &PeriodTarget<'_>,
    desc: bool,
    style: RankStyle,
    mode: ReadMode<'_>,
) -> super::Call {
    let mut inv = target.invocation(&super::READ);
    inv.arg(flag(desc)).arg(style.as_str());
    match mode {
        ReadMode::Member(m) => {
            inv.arg("member").arg(&member_args(target.keys, m)[..]);
        }
        ReadMode::Page { offset, limit } => {
            inv.arg("page").arg(offset.min(MAX_EXACT_OFFSET)).arg(limit);
        }
        ReadMode::Query(members) => {
            inv.arg("query").arg(members.len());
            for m in members {
                inv.arg(&member_args(target.keys, m)[..]);
            }
        }
        ReadMode::RankOf(score) => {
            let (hi, lo) = layout::score_halves(score);
            inv.arg("rankof").arg(hi).arg(lo);
        }
        ReadMode::Tiers(q) => {
            inv.arg("tiers").arg(q.ranks.len());
            for &rank in &q.ranks {
                inv.arg(rank.min(MAX_EXACT_OFFSET));
            }
            inv.arg(q.percents.len());
            for p in &q.percents {
                inv.arg(p.units());
            }
        }
        ReadMode::Around {
            member,
            before,
            after,
        } => {
            inv.arg("around")
                .arg(&member_args(target.keys, member)[..])
                .arg(before)
                .arg(after);
        }
    };
    inv
}

/// One call of the remove script: [`PeriodTarget::remove_parts`].
pub fn remove(target: &PeriodTarget<'_>, member: &str) -> super::Call {
    let (keys, args) = target.remove_parts(member);
    super::invocation(&super::REMOVE, &keys, &args)
}
