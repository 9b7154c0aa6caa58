//! The keys and arguments of `read.lua` and `remove.lua` (both act on one board-period and
//! take the same keys), named, in the order the scripts unpack them.

use photofinish_core::{Period, RankStyle};
use redis::{Script, ScriptInvocation};

use super::flag;
use crate::layout::{BoardKeys, PERIOD_PARTS};

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
    /// The KEYS and ARGV of a remove ([`remove`]), then `extra` arguments (the keyed
    /// script runs the same function with them).
    pub fn parts(&self, extra: &[&str]) -> (Vec<String>, Vec<String>) {
        let mut keys = vec![self.keys.config(), self.keys.periods()];
        keys.extend(
            PERIOD_PARTS
                .iter()
                .map(|p| self.keys.period(&self.period.id, p)),
        );
        keys.push(self.keys.events());
        let mut args = vec![
            self.config_text.to_owned(),
            self.period.id.clone(),
            flag(self.is_current).to_owned(),
        ];
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        (keys, args)
    }

    /// KEYS: cfg periods, then the period's z m meta d; ARGV: CONFIG PERIOD_ID IS_CURRENT.
    pub fn invocation(&self, script: &'static Script) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.config()).key(self.keys.periods());
        for part in PERIOD_PARTS {
            inv.key(self.keys.period(&self.period.id, part));
        }
        inv.arg(self.config_text)
            .arg(&self.period.id)
            .arg(flag(self.is_current));
        inv
    }
}

/// The largest offset passed to Lua: its numbers are doubles, exact to 2^53; any larger
/// offset is past the end of every ranking anyway.
const MAX_EXACT_OFFSET: u64 = 1 << 53;

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
            ReadMode::Page { .. } => None,
        }
    }
}

/// One call of the read script: the target's arguments, then DESC STYLE MODE and the
/// mode's own arguments.
pub fn read(
    target: &PeriodTarget<'_>,
    desc: bool,
    style: RankStyle,
    mode: ReadMode<'_>,
) -> ScriptInvocation<'static> {
    let mut inv = target.invocation(&super::READ);
    inv.arg(flag(desc)).arg(style.as_str());
    match mode {
        ReadMode::Member(m) => inv.arg("member").arg(m),
        ReadMode::Page { offset, limit } => {
            inv.arg("page").arg(offset.min(MAX_EXACT_OFFSET)).arg(limit)
        }
        ReadMode::Around {
            member,
            before,
            after,
        } => inv.arg("around").arg(member).arg(before).arg(after),
    };
    inv
}

/// One call of the remove script: the target's keys and the board's event stream; the
/// target's arguments, then MEMBER.
pub fn remove(target: &PeriodTarget<'_>, member: &str) -> ScriptInvocation<'static> {
    let mut inv = target.invocation(&super::REMOVE);
    inv.key(target.keys.events()).arg(member);
    inv
}
