//! The Lua scripts (in `src/lua/`), each with the shared helpers prepended. `redis::Script`
//! sends them by SHA1 (EVALSHA) and loads them on NOSCRIPT, e.g. after a Redis restart.

use std::sync::LazyLock;

use redis::Script;

const COMMON: &str = include_str!("lua/common.lua");

fn with_common(body: &str) -> Script {
    Script::new(&format!("{COMMON}\n{body}"))
}

/// One write: retention check, operator, sequence, ZSET and indexes, period bookkeeping.
pub static WRITE: LazyLock<Script> = LazyLock::new(|| with_common(include_str!("lua/write.lua")));
/// Member, page and around reads.
pub static READ: LazyLock<Script> = LazyLock::new(|| with_common(include_str!("lua/read.lua")));
/// Removing a member from a period.
pub static REMOVE: LazyLock<Script> = LazyLock::new(|| with_common(include_str!("lua/remove.lua")));
/// Board create, drop, period listing and member counts.
pub static BOARD: LazyLock<Script> = LazyLock::new(|| with_common(include_str!("lua/board.lua")));
