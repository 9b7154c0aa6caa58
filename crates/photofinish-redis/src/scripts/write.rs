//! The keys and arguments of `write.lua`, named, in the order the script unpacks them.

use photofinish_core::{Op, Period, ScoreRules};
use redis::ScriptInvocation;

use super::flag;
use crate::layout::{self, BoardKeys, PERIOD_PARTS};

/// One call of the write script. See `write.lua`.
#[derive(Debug)]
pub struct WriteCall<'a> {
    /// The board's keys.
    pub keys: &'a BoardKeys,
    /// The config text the period was resolved with (the script checks it).
    pub config_text: &'a str,
    /// The period the write lands in.
    pub period: &'a Period,
    /// Id of the oldest period retention keeps while `period` is the newest.
    pub floor_id: &'a str,
    /// The member.
    pub member: &'a str,
    /// The operator.
    pub op: Op,
    /// The operand.
    pub value: i64,
    /// Whether the instant was stamped by the server (then it never goes back on a board).
    pub stamped: bool,
    /// The write's instant, µs.
    pub reached_at_us: i64,
    /// Whether higher scores are better.
    pub desc: bool,
    /// New metadata, `None` to keep.
    pub metadata: Option<&'a str>,
    /// The largest |score| held.
    pub max_score: i64,
    /// When the period's keys expire, ms since the epoch; `None` for never.
    pub expiry_ms: Option<i64>,
    /// The board's score rules.
    pub rules: &'a ScoreRules,
    /// The memory budget is over: the write may not add a member.
    pub over_budget: bool,
    /// The period is the current one: a change sends a score event (docs/SPEC.md §8).
    pub emit: bool,
    /// The id of the period before `period` (for the reset event a write may send first).
    pub previous_id: &'a str,
}

impl WriteCall<'_> {
    /// KEYS: cfg seq periods clock, then the period's z m meta d, then events announced.
    pub fn keys(&self) -> Vec<String> {
        let k = self.keys;
        let mut keys = vec![k.config(), k.seq(), k.periods(), k.clock()];
        keys.extend(PERIOD_PARTS.iter().map(|p| k.period(&self.period.id, p)));
        keys.push(k.events());
        keys.push(k.announced());
        keys
    }

    /// ARGV: CONFIG PERIOD_ID PERIOD_RECORD MEMBER OP VALUE STAMPED REACHED CLAMP DESC
    /// METADATA PERIOD_PREFIX MAX_SCORE REACHED_C EXPIRY_MS MIN_RULE MAX_RULE MAX_INCREMENT
    /// MAX_MEMBERS OVER_BUDGET EMIT PREVIOUS (a rule left out is `""`).
    pub fn args(&self) -> Vec<String> {
        let reached = layout::reached_digits(self.reached_at_us);
        vec![
            self.config_text.to_owned(),
            self.period.id.clone(),
            layout::period_record(self.period, self.floor_id),
            self.member.to_owned(),
            self.op.as_str().to_owned(),
            self.value.to_string(),
            flag(self.stamped).to_owned(),
            reached.clone(),
            // A stamped time may be moved up to the board's last one, never out of the period.
            layout::reached_digits(self.period.end_us.saturating_sub(1)),
            flag(self.desc).to_owned(),
            self.metadata.unwrap_or_default().to_owned(),
            self.keys.period_prefix(),
            self.max_score.to_string(),
            layout::complement(&reached),
            self.expiry_ms.unwrap_or(0).to_string(),
            rule(self.rules.min_score),
            rule(self.rules.max_score),
            rule(self.rules.max_increment),
            rule(self.rules.max_members),
            flag(self.over_budget).to_owned(),
            flag(self.emit).to_owned(),
            self.previous_id.to_owned(),
        ]
    }
}

fn rule(v: Option<impl ToString>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The invocation of the write script with `keys` and `args`.
pub fn invocation(keys: &[String], args: &[String]) -> ScriptInvocation<'static> {
    let mut inv = super::WRITE.prepare_invoke();
    for k in keys {
        inv.key(k);
    }
    for a in args {
        inv.arg(a);
    }
    inv
}
