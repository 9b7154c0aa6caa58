//! One RESP command's row in the table (docs/SPEC.md §9): its name, arity as Redis writes
//! it, flags, where its key is, and its [`Family`] — the file that lists and runs it. Each
//! family's file holds its own rows (`COMMANDS`); [`super::table`] joins them.

/// Which family a command belongs to: the file that runs it and lists it, so a command's
/// row routes it (a new one is a row in its family's `COMMANDS` and its arm in that
/// family's `run`). Every family but [`Family::Connection`] and [`Family::Table`] counts
/// against the caller's rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// A score write ([`super::write`]): pipelined writes are gathered into one batch.
    Write,
    /// A read of one board ([`super::read`]).
    Read,
    /// Making, dropping or joining a board, removing a member ([`super::board`]).
    Board,
    /// A query over one board or across boards ([`super::query`]).
    Query,
    /// A member's own data across boards: its rewards ([`super::member`]).
    Member,
    /// A read of a board's teams ([`super::teams`]).
    Teams,
    /// A connection command (`AUTH`, `PING`, …): free.
    Connection,
    /// `COMMAND`, which lists the table ([`super::table`]): free.
    Table,
}

/// One command of the table.
#[derive(Debug)]
pub struct Spec {
    /// Lower-case name, as `COMMAND` lists it.
    pub name: &'static str,
    /// Redis's arity: `n` exactly `n` arguments (the name included), `-n` at least `n`.
    pub arity: i64,
    /// `COMMAND` flags.
    pub flags: &'static [&'static str],
    /// Position of the key (the board), 0 for none.
    pub key: i64,
    /// Family.
    pub family: Family,
}

impl Spec {
    /// A row.
    pub const fn new(
        name: &'static str,
        arity: i64,
        flags: &'static [&'static str],
        key: i64,
        family: Family,
    ) -> Self {
        Self {
            name,
            arity,
            flags,
            key,
            family,
        }
    }

    /// Whether `n` arguments (the name included) fit the arity.
    pub fn arity_fits(&self, n: usize) -> bool {
        let n = n as i64;
        if self.arity >= 0 {
            n == self.arity
        } else {
            n >= -self.arity
        }
    }
}
