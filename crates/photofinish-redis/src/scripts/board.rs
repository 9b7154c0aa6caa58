//! The keys and arguments of `board.lua`, named, in the order the script unpacks them.

use crate::layout::BoardKeys;

/// A board-level operation of `board.lua`.
#[derive(Debug, Clone, Copy)]
pub enum BoardCall<'a> {
    /// Create the board with this config text (or confirm, or conflict).
    Create {
        /// The config text.
        config_text: &'a str,
    },
    /// Drop the board and every period.
    Drop,
    /// Replace the config text, if it is still `expected_text`.
    Patch {
        /// The config text the change was computed from.
        expected_text: &'a str,
        /// The new config text.
        config_text: &'a str,
    },
    /// List the periods with their member counts.
    Periods {
        /// The config text the caller holds (the script checks it).
        config_text: &'a str,
    },
    /// After a retention change: give each listed period its record and its keys'
    /// time to live (ms from now on Redis' clock, `None` for ever) under the new retention.
    Retain {
        /// The (new) config text the caller holds (the script checks it).
        config_text: &'a str,
        /// Per period: id, record, time to live.
        periods: &'a [(String, String, Option<i64>)],
    },
    /// This node has readers of the board's events: writes append them for a while more
    /// (a `gap` entry first when they did not).
    Readers,
    /// Send the reset event of the board's current period, unless one was sent.
    Announce {
        /// The config text the caller holds (the script checks it).
        config_text: &'a str,
        /// The current period's id.
        period_id: &'a str,
        /// The id of the period before it.
        previous_id: &'a str,
    },
    /// Move the webhook cursor forward and end the claim on the board's post.
    HookAdvance {
        /// The config text the caller holds (the script checks it).
        config_text: &'a str,
        /// The new cursor, µs.
        cursor_us: i64,
    },
    /// Claim (or with `renew` extend a claim on) the board's webhook post.
    HookClaim {
        /// The config text the caller holds (the script checks it).
        config_text: &'a str,
        /// The claiming node's token.
        token: &'a str,
        /// The end of the period to post: refused once the cursor is there.
        until_us: i64,
        /// How long the claim holds, ms.
        hold_ms: u64,
        /// Only extend a claim `token` holds.
        renew: bool,
    },
    /// Rename an import's staged period into place, if the period holds no entries.
    Import {
        /// The config text the caller holds (the script checks it).
        config_text: &'a str,
        /// The period id.
        period_id: &'a str,
        /// The staged keys' prefix (`BoardKeys::import_stage`).
        stage: &'a str,
        /// The staged record's hash (`BoardKeys::import_record`).
        stage_record: &'a str,
        /// How long the period's keys live, ms from now on Redis' clock; `None` for ever.
        expiry_ms: Option<i64>,
    },
    /// Remove an import's staged keys.
    ImportAbort {
        /// The period id.
        period_id: &'a str,
        /// The staged keys' prefix.
        stage: &'a str,
        /// The staged record's hash.
        stage_record: &'a str,
    },
    /// Count the members of one period.
    Count {
        /// The config text the caller holds (the script checks it).
        config_text: &'a str,
        /// The period id.
        period_id: &'a str,
    },
}

impl BoardCall<'_> {
    /// KEYS: cfg periods seq clock events announced hook hookclaim; ARGV: OP, then the
    /// operation's own.
    pub fn invocation(&self, keys: &BoardKeys) -> super::Call {
        let mut inv = super::BOARD.prepare_invoke();
        inv.key(keys.config())
            .key(keys.periods())
            .key(keys.seq())
            .key(keys.clock())
            .key(keys.events())
            .key(keys.announced())
            .key(keys.hook())
            .key(keys.hook_claim());
        match self {
            BoardCall::Create { config_text } => inv.arg("create").arg(*config_text),
            BoardCall::Drop => inv.arg("drop").arg(keys.period_prefix()),
            BoardCall::Readers => inv.arg("readers"),
            BoardCall::Announce {
                config_text,
                period_id,
                previous_id,
            } => inv
                .arg("announce")
                .arg(*config_text)
                .arg(*period_id)
                .arg(*previous_id),
            BoardCall::Patch {
                expected_text,
                config_text,
            } => inv.arg("patch").arg(*expected_text).arg(*config_text),
            BoardCall::Periods { config_text } => inv
                .arg("periods")
                .arg(*config_text)
                .arg(keys.period_prefix()),
            BoardCall::Retain {
                config_text,
                periods,
            } => {
                inv.arg("retain")
                    .arg(*config_text)
                    .arg(keys.period_prefix());
                for (id, record, expiry) in periods.iter() {
                    inv.arg(id).arg(record).arg(expiry.unwrap_or(0));
                }
                &mut inv
            }
            BoardCall::HookAdvance {
                config_text,
                cursor_us,
            } => inv.arg("hook_advance").arg(*config_text).arg(*cursor_us),
            BoardCall::HookClaim {
                config_text,
                token,
                until_us,
                hold_ms,
                renew,
            } => inv
                .arg("hook_claim")
                .arg(*config_text)
                .arg(*token)
                .arg(*until_us)
                .arg(*hold_ms)
                .arg(super::flag(*renew)),
            BoardCall::Import {
                config_text,
                period_id,
                stage,
                stage_record,
                expiry_ms,
            } => inv
                .arg("import")
                .arg(*config_text)
                .arg(keys.period_prefix())
                .arg(*period_id)
                .arg(*stage)
                .arg(*stage_record)
                .arg(expiry_ms.unwrap_or(0)),
            BoardCall::ImportAbort {
                period_id,
                stage,
                stage_record,
            } => inv
                .arg("import_abort")
                .arg(*stage)
                .arg(*stage_record)
                .arg(*period_id),
            BoardCall::Count {
                config_text,
                period_id,
            } => inv
                .arg("count")
                .arg(*config_text)
                .arg(keys.period_prefix())
                .arg(*period_id),
        };
        inv
    }
}
