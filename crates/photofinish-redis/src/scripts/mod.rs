//! The Lua code, one Redis Functions library (`FUNCTION LOAD`, called with `FCALL`): the
//! shared helpers of `common.lua`, `write_fn.lua` and `remove_fn.lua` at its top, then one
//! function per script body (`write.lua`, `read.lua`, …), each beside the Rust struct that
//! names its keys and arguments in the order the body unpacks them (`write.rs` +
//! `write.lua`, …). The library's top runs once, when Redis loads it; a call runs only its
//! function's body (an `EVALSHA` ran the whole script, defining every helper again on each
//! call: docs/BENCHMARKS.md §10). The library and function names carry a hash of the code,
//! so nodes of two builds on one Redis each call their own; a Redis that lacks the library
//! (restarted without persistence, `FUNCTION FLUSH`, a new cluster node) gets it on the
//! first call that misses it ([`crate::conn::Conn::call`]).

use std::sync::LazyLock;

use redis::ToRedisArgs;

pub mod board;
pub mod keyed;
pub mod load;
pub mod read;
pub mod write;

const COMMON: &str = include_str!("common.lua");
const WRITE_FN: &str = include_str!("write_fn.lua");
const REMOVE_FN: &str = include_str!("remove_fn.lua");

/// The functions of the library: the name each has in Rust, its body, and whether it
/// writes (a read is flagged `no-writes`, so Redis lets it run at its memory limit).
const BODIES: [(&str, &str, bool); 7] = [
    ("write", include_str!("write.lua"), true),
    ("writes", include_str!("writes.lua"), true),
    ("read", include_str!("read.lua"), false),
    ("remove", include_str!("remove.lua"), true),
    ("keyed", include_str!("keyed.lua"), true),
    ("load", include_str!("load.lua"), true),
    ("board", include_str!("board.lua"), true),
];

/// The library: its code, as `FUNCTION LOAD` takes it, and the version its names carry.
#[derive(Debug)]
pub struct Library {
    /// The code, from its `#!lua name=photofinish_<version>` line on.
    code: String,
    version: String,
}

/// The one library every function lives in.
pub static LIBRARY: LazyLock<Library> = LazyLock::new(|| {
    let helpers = format!("{COMMON}\n{WRITE_FN}\n{REMOVE_FN}\n");
    let bodies: String = BODIES.iter().map(|(_, body, _)| *body).collect();
    // The version: the first 12 hex digits of the code's SHA-1 (as `SCRIPT LOAD` names it).
    let version = redis::Script::new(&format!("{helpers}{bodies}")).get_hash()[..12].to_owned();
    let mut code = format!("#!lua name=photofinish_{version}\n{helpers}");
    for (short, body, writes) in BODIES {
        let flags = if writes { "" } else { "'no-writes'" };
        code.push_str(&format!(
            "redis.register_function{{function_name = 'pf_{short}_{version}', flags = {{{flags}}},\n\
             callback = function(KEYS, ARGV)\n{body}\nend}}\n"
        ));
    }
    Library { code, version }
});

/// One function of [`LIBRARY`].
#[derive(Debug)]
pub struct Function {
    name: String,
}

impl Function {
    fn new(short: &str) -> Self {
        assert!(
            BODIES.iter().any(|(s, _, _)| *s == short),
            "no function {short}"
        );
        Self {
            name: format!("pf_{short}_{}", LIBRARY.version),
        }
    }

    /// The name `FCALL` takes.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A call of this function, keys and arguments to be added.
    pub fn prepare_invoke(&'static self) -> Call {
        Call {
            function: self,
            keys: Vec::new(),
            args: Vec::new(),
        }
    }
}

/// One write: retention check, operator, sequence, ZSET and indexes, period bookkeeping.
pub static WRITE: LazyLock<Function> = LazyLock::new(|| Function::new("write"));
/// Writes of one board in order, in one call (a batch's chunk of
/// [`write::WRITES_PER_CALL`]).
pub static WRITES: LazyLock<Function> = LazyLock::new(|| Function::new("writes"));
/// Member, page and around reads.
pub static READ: LazyLock<Function> = LazyLock::new(|| Function::new("read"));
/// Removing a member from a period.
pub static REMOVE: LazyLock<Function> = LazyLock::new(|| Function::new("remove"));
/// A write, batch, remove or create under an idempotency key, with the key's record.
pub static KEYED: LazyLock<Function> = LazyLock::new(|| Function::new("keyed"));
/// Loading entries with their own tie-breaks (format upgrades, imports).
pub static LOAD: LazyLock<Function> = LazyLock::new(|| Function::new("load"));
/// Board create, drop, period listing and member counts.
pub static BOARD: LazyLock<Function> = LazyLock::new(|| Function::new("board"));

/// A call of one function: its keys and arguments, in order, as `FCALL` sends them.
#[derive(Debug, Clone)]
pub struct Call {
    function: &'static Function,
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
}

impl Call {
    /// Adds a key (or several, for a value that is a list).
    pub fn key<T: ToRedisArgs>(&mut self, key: T) -> &mut Self {
        self.keys.extend(key.to_redis_args());
        self
    }

    /// Adds an argument (or several, for a value that is a list).
    pub fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        self.args.extend(arg.to_redis_args());
        self
    }

    /// `FCALL name numkeys keys… args…`.
    pub fn cmd(&self) -> redis::Cmd {
        let mut cmd = redis::cmd("FCALL");
        cmd.arg(self.function.name())
            .arg(self.keys.len())
            .arg(&self.keys)
            .arg(&self.args);
        cmd
    }
}

/// Whether Redis refused a call because it lacks the function (the library is not loaded
/// there).
pub fn is_missing(e: &redis::RedisError) -> bool {
    e.detail()
        .is_some_and(|d| d.starts_with("Function not found"))
}

/// `FUNCTION LOAD REPLACE` of [`LIBRARY`] (sent to every primary of a cluster).
pub fn load_cmd() -> redis::Cmd {
    let mut cmd = redis::cmd("FUNCTION");
    cmd.arg("LOAD").arg("REPLACE").arg(&LIBRARY.code);
    cmd
}

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

/// A call of `function` with `keys` and `args`, in order (a call prepared as vectors:
/// `WriteCall`, `PeriodTarget::remove_parts`).
pub fn invocation(function: &'static Function, keys: &[String], args: &[Vec<u8>]) -> Call {
    let mut call = function.prepare_invoke();
    for k in keys {
        call.key(k);
    }
    for a in args {
        call.arg(a);
    }
    call
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
        use crate::layout::{KEY_LEN, MAX_SEQ, READERS_TTL_MS, TIEBREAK_LEN};
        let args = write::WriteCall::ARGS;
        assert!(WRITE_FN.contains(&format!("local WRITE_ARGS = {args}\n")));
        assert!(COMMON.contains(&format!("local MAX_SEQ = {MAX_SEQ}\n")));
        assert!(COMMON.contains(&format!("local TIEBREAK_LEN = {TIEBREAK_LEN}\n")));
        assert!(COMMON.contains(&format!("local KEY_LEN = {KEY_LEN}\n")));
        assert!(COMMON.contains(&format!("local READERS_TTL_MS = {READERS_TTL_MS}\n")));
        let full = photofinish_core::query::FULL_PERCENT_UNITS;
        assert!(COMMON.contains(&format!("local FULL_PERCENT_UNITS = {full}\n")));
    }
}
