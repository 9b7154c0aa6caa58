//! The keys and arguments of `write.lua`, named, in the order the script unpacks them;
//! `writes.lua` takes the same keys and several writes' arguments one after the other.

use photofinish_core::{Op, Period, ScoreRules};

use super::flag;
use crate::layout::{self, BoardKeys};

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
    /// How long the period's keys live, ms from now on Redis' clock; `None` for ever.
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

/// The most writes one call of `writes.lua` carries. A batch is a pipeline of such calls:
/// one call per write cost a function call and the board's own reads (config, period
/// record, sequence, clock, announced period) each time (docs/BENCHMARKS.md §10), while
/// one call for a whole batch of 1,000 would hold Redis, which runs one call at a time, for
/// about 25 ms; 64 writes hold it 1.4–1.8 ms (measured at 1M members, §10).
pub const WRITES_PER_CALL: usize = 64;

impl WriteCall<'_> {
    /// How many arguments [`WriteCall::args`] gives (`WRITE_ARGS` in `write_fn.lua`).
    pub const ARGS: usize = 24;

    /// KEYS: cfg seq periods clock events announced (the period's own keys are named from
    /// its prefix, on the same slot).
    pub fn keys(&self) -> Vec<String> {
        let k = self.keys;
        vec![
            k.config(),
            k.seq(),
            k.periods(),
            k.clock(),
            k.events(),
            k.announced(),
        ]
    }

    /// ARGV: CONFIG PERIOD_ID PERIOD_RECORD MEMBER OP VALUE_HI VALUE_LO STAMPED R RC CLAMP
    /// DESC METADATA PERIODS_PREFIX P EXPIRY_MS MIN_RULE MAX_RULE MAX_MEMBERS OVER_BUDGET
    /// EMIT PREVIOUS H H32 (a rule left out is `""`; the score rules as score keys).
    pub fn args(&self) -> Vec<Vec<u8>> {
        let r = layout::reached_bytes(self.reached_at_us);
        let (hi, lo) = layout::score_halves(self.value);
        let (field, h32) = self.keys.name_hash(self.member);
        let key_rule =
            |v: Option<i64>| v.map(|v| layout::score_key(v).to_vec()).unwrap_or_default();
        let args: Vec<Vec<u8>> = vec![
            self.config_text.into(),
            self.period.id.clone().into_bytes(),
            layout::period_record(self.period, self.floor_id).into_bytes(),
            self.member.into(),
            self.op.as_str().into(),
            hi.to_string().into_bytes(),
            lo.to_string().into_bytes(),
            flag(self.stamped).into(),
            r.to_vec(),
            layout::complement(r).to_vec(),
            // A stamped time may be moved up to the board's last one, never out of the period.
            layout::reached_bytes(self.period.end_us.saturating_sub(1)).to_vec(),
            flag(self.desc).into(),
            self.metadata.unwrap_or_default().into(),
            self.keys.period_prefix().into_bytes(),
            self.keys.period(&self.period.id).into_bytes(),
            self.expiry_ms.unwrap_or(0).to_string().into_bytes(),
            key_rule(self.rules.min_score),
            key_rule(self.rules.max_score),
            self.rules
                .max_members
                .map(|m| m.to_string())
                .unwrap_or_default()
                .into_bytes(),
            flag(self.over_budget).into(),
            flag(self.emit).into(),
            self.previous_id.into(),
            field.to_vec(),
            h32.to_string().into_bytes(),
        ];
        debug_assert_eq!(args.len(), Self::ARGS);
        args
    }
}
