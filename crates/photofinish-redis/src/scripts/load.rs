//! The keys and arguments of `load.lua`, named, in the order the script reads them.

use photofinish_core::Period;

use super::flag;
use crate::layout::{self, BoardKeys};

/// One entry to load: its name, exact score and tie-break parts.
#[derive(Debug, Clone)]
pub struct LoadEntry {
    /// The member.
    pub name: String,
    /// The exact score.
    pub score: i64,
    /// When it reached the score, µs.
    pub reached_at_us: i64,
    /// Its sequence (ignored when the call numbers the entries, [`LoadCall::seq_key`]).
    pub seq: i64,
    /// Its metadata, a JSON object.
    pub metadata: Option<String>,
}

/// One call of the load script: entries into one period. See `load.lua`.
#[derive(Debug)]
pub struct LoadCall<'a> {
    /// The board's keys.
    pub keys: &'a BoardKeys,
    /// The prefix of the period's keys (`P`): the period's own, or an import's staging.
    pub prefix: &'a str,
    /// The hash that holds the period's record: the board's periods, or an import's.
    pub periods_key: &'a str,
    /// The board's sequence key, when the entries take the board's next sequence numbers
    /// in order (an import); `None` to use each entry's own (the upgrade).
    pub seq_key: Option<&'a str>,
    /// The period.
    pub period: &'a Period,
    /// Its retention floor's id (for the period record).
    pub floor_id: &'a str,
    /// Whether higher scores are better.
    pub desc: bool,
    /// How long the period's keys live, ms from now on Redis' clock; `None` for ever.
    pub expiry_ms: Option<i64>,
    /// The entries.
    pub entries: &'a [LoadEntry],
}

impl LoadCall<'_> {
    /// KEYS: periods [seq]; ARGV: P PERIOD_ID RECORD DESC EXPIRY_MS, then per entry NAME H
    /// H32 HI LO R RC SEQ META.
    pub fn invocation(&self) -> super::Call {
        let mut inv = super::LOAD.prepare_invoke();
        inv.key(self.periods_key);
        if let Some(seq) = self.seq_key {
            inv.key(seq);
        }
        inv.arg(self.prefix)
            .arg(&self.period.id)
            .arg(layout::period_record(self.period, self.floor_id))
            .arg(flag(self.desc))
            .arg(self.expiry_ms.unwrap_or(0));
        for e in self.entries {
            let (field, h32) = self.keys.name_hash(&e.name);
            let (hi, lo) = layout::score_halves(e.score);
            let r = layout::reached_bytes(e.reached_at_us);
            inv.arg(&e.name)
                .arg(&field[..])
                .arg(h32)
                .arg(hi)
                .arg(lo)
                .arg(&r[..])
                .arg(&layout::complement(r)[..])
                .arg(e.seq)
                .arg(e.metadata.as_deref().unwrap_or(""));
        }
        inv
    }
}
