//! The Lua scripts, each beside the Rust struct that names its keys and arguments in the
//! order the script unpacks them (`write.rs` + `write.lua`, …), with the shared helpers of
//! `common.lua` prepended. `redis::Script` sends them by SHA1 (EVALSHA) and loads them on
//! NOSCRIPT, e.g. after a Redis restart.

use std::sync::LazyLock;

use redis::Script;

pub mod board;
pub mod keyed;
pub mod load;
pub mod read;
pub mod write;

const COMMON: &str = include_str!("common.lua");

fn with_common(body: &str) -> Script {
    Script::new(&format!("{COMMON}\n{body}"))
}

const WRITE_FN: &str = include_str!("write_fn.lua");
const REMOVE_FN: &str = include_str!("remove_fn.lua");

/// One write: retention check, operator, sequence, ZSET and indexes, period bookkeeping.
pub static WRITE: LazyLock<Script> =
    LazyLock::new(|| with_common(&format!("{WRITE_FN}\n{}", include_str!("write.lua"))));
/// Member, page and around reads.
pub static READ: LazyLock<Script> = LazyLock::new(|| with_common(include_str!("read.lua")));
/// Removing a member from a period.
pub static REMOVE: LazyLock<Script> =
    LazyLock::new(|| with_common(&format!("{REMOVE_FN}\n{}", include_str!("remove.lua"))));
/// A write, batch, remove or create under an idempotency key, with the key's record.
pub static KEYED: LazyLock<Script> = LazyLock::new(|| {
    with_common(&format!(
        "{WRITE_FN}\n{REMOVE_FN}\n{}",
        include_str!("keyed.lua")
    ))
});
/// Loading entries with their own tie-breaks (format upgrades).
pub static LOAD: LazyLock<Script> = LazyLock::new(|| with_common(include_str!("load.lua")));
/// Board create, drop, period listing and member counts.
pub static BOARD: LazyLock<Script> = LazyLock::new(|| with_common(include_str!("board.lua")));

/// The status words every script answers first (the `S_*` constants of `common.lua`).
pub mod status {
    /// Done.
    pub const OK: &[u8] = b"ok";
    /// The board's config key is gone.
    pub const NO_BOARD: &[u8] = b"no_board";
    /// The board's config is not the one the call was prepared with.
    pub const CONFIG_CHANGED: &[u8] = b"config_changed";
    /// A period other than the current one holds no ranking.
    pub const PERIOD_NOT_FOUND: &[u8] = b"period_not_found";
    /// The member is not in the period.
    pub const MEMBER_NOT_FOUND: &[u8] = b"member_not_found";
    /// A write into a period older than the board retains.
    pub const PERIOD_NOT_RETAINED: &[u8] = b"period_not_retained";
    /// An `incr` whose result leaves the range held.
    pub const SCORE_OVERFLOW: &[u8] = b"score_overflow";
    /// The board's sequence is exhausted.
    pub const RANKING_FULL: &[u8] = b"ranking_full";
    /// `create`: the board is new.
    pub const CREATED: &[u8] = b"created";
    /// `create`: the board exists with the same config.
    pub const SAME: &[u8] = b"same";
    /// `create`: the board exists with another config.
    pub const CONFLICT: &[u8] = b"conflict";
    /// `write`: a score rule refuses it; then the old score (`""` for none), the new one
    /// and the period's member count.
    pub const RULE_BROKEN: &[u8] = b"rule_broken";
    /// `write`: it would add a member while the memory budget is over.
    pub const OVER_BUDGET: &[u8] = b"over_budget";
    /// `keyed`: applied; the answer follows.
    pub const APPLIED: &[u8] = b"applied";
    /// `keyed`: the key was used with the same request; the remembered answer follows.
    pub const REPLAYED: &[u8] = b"replayed";
    /// `keyed`: the key was used with another request.
    pub const KEY_REUSED: &[u8] = b"key_reused";
    /// `keyed`: an entry the server refused before the call; its code and message follow.
    pub const REFUSED: &[u8] = b"refused";
    /// `hook_claim`: another node holds the board's webhook post.
    pub const HELD: &[u8] = b"held";
    /// `import`: the target period holds entries; then how many.
    pub const NOT_EMPTY: &[u8] = b"not_empty";
    /// `import`: the staged entries are gone (they expired).
    pub const NO_STAGE: &[u8] = b"no_stage";
}

/// An invocation of `script` with `keys` and `args`, in order (a call prepared as vectors:
/// `WriteCall`, `PeriodTarget::remove_parts`).
pub fn invocation(
    script: &'static Script,
    keys: &[String],
    args: &[Vec<u8>],
) -> redis::ScriptInvocation<'static> {
    let mut inv = script.prepare_invoke();
    for k in keys {
        inv.key(k);
    }
    for a in args {
        inv.arg(a);
    }
    inv
}

/// A flag argument as the scripts read it (`TRUE` in `common.lua`).
pub fn flag(b: bool) -> &'static str {
    if b {
        "1"
    } else {
        "0"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every status word Rust matches on is one `common.lua` defines, spelled the same.
    #[test]
    fn status_words_match_common_lua() {
        for (name, word) in [
            ("S_OK", status::OK),
            ("S_NO_BOARD", status::NO_BOARD),
            ("S_CONFIG_CHANGED", status::CONFIG_CHANGED),
            ("S_PERIOD_NOT_FOUND", status::PERIOD_NOT_FOUND),
            ("S_MEMBER_NOT_FOUND", status::MEMBER_NOT_FOUND),
            ("S_PERIOD_NOT_RETAINED", status::PERIOD_NOT_RETAINED),
            ("S_SCORE_OVERFLOW", status::SCORE_OVERFLOW),
            ("S_RANKING_FULL", status::RANKING_FULL),
            ("S_CREATED", status::CREATED),
            ("S_SAME", status::SAME),
            ("S_CONFLICT", status::CONFLICT),
            ("S_RULE_BROKEN", status::RULE_BROKEN),
            ("S_OVER_BUDGET", status::OVER_BUDGET),
            ("S_APPLIED", status::APPLIED),
            ("S_REPLAYED", status::REPLAYED),
            ("S_KEY_REUSED", status::KEY_REUSED),
            ("S_REFUSED", status::REFUSED),
            ("S_HELD", status::HELD),
        ] {
            let line = format!("local {name} = '{}'", String::from_utf8_lossy(word));
            assert!(COMMON.contains(&line), "common.lua lacks {line:?}");
        }
    }

    /// The numeric constants `common.lua` shares with `layout.rs`.
    #[test]
    fn numeric_constants_match_layout() {
        use crate::layout::{KEY_LEN, MAX_SEQ, TIEBREAK_LEN};
        assert!(COMMON.contains(&format!("local MAX_SEQ = {MAX_SEQ}\n")));
        assert!(COMMON.contains(&format!("local TIEBREAK_LEN = {TIEBREAK_LEN}\n")));
        assert!(COMMON.contains(&format!("local KEY_LEN = {KEY_LEN}\n")));
        let full = photofinish_core::query::FULL_PERCENT_UNITS;
        assert!(COMMON.contains(&format!("local FULL_PERCENT_UNITS = {full}\n")));
    }
}
