//! The RESP commands (docs/SPEC.md §9): the table of every command a client may send —
//! name, arity as Redis writes it, flags, where its key is — and the helpers every command
//! parses its arguments with. One file per family, as mini-redis keeps one per command:
//! [`write`] (`LB.INCR/SET/BEST/SUBMIT`), [`read`]
//! (`LB.SCORE/RANK/RANGE/AROUND/CARD/INFO/COHORT`),
//! [`board`] (`LB.CREATE/DROP/REM/JOIN`), [`query`] (`LB.QUERY/RANKOF/THRESHOLDS/MEMBER`),
//! [`connection`] (`AUTH`, `HELLO`, `PING`, …).
//!
//! A command only parses and maps: what it does is a [`crate::gate::Gate`] call, so every
//! access rule, limit and idempotency rule is the one HTTP runs.

pub mod board;
pub mod connection;
pub mod query;
pub mod read;
pub mod write;

use photofinish_core::columns::{ColumnNames, ScoreInput, MAX_COLUMNS};
use photofinish_core::{BoardName, ErrorCode, Scores};

use crate::error::ApiError;
pub use crate::resp::error::{wrong_arity, CmdError};
use crate::resp::frame::Args;
use crate::resp::reply::Out;

/// Which family a command belongs to: the file that runs it, so the table alone routes a
/// command (a new one is a row here and its arm in its family's `run`). Every family but
/// [`Family::Connection`] counts against the caller's rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// A score write ([`write`]): pipelined writes are gathered into one batch.
    Write,
    /// A read of one board ([`read`]).
    Read,
    /// Making, dropping or joining a board, removing a member ([`board`]).
    Board,
    /// A query over one board or across boards ([`query`]).
    Query,
    /// A connection command (`AUTH`, `PING`, …): free.
    Connection,
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

macro_rules! spec {
    ($name:literal, $arity:literal, [$($flag:literal),*], $key:literal, $family:ident) => {
        Spec { name: $name, arity: $arity, flags: &[$($flag),*], key: $key, family: Family::$family }
    };
}

/// Every command.
pub const COMMANDS: &[Spec] = &[
    spec!("lb.create", -2, ["write", "denyoom"], 1, Board),
    spec!("lb.incr", -4, ["write", "denyoom", "fast"], 1, Write),
    spec!("lb.set", -4, ["write", "denyoom", "fast"], 1, Write),
    spec!("lb.best", -4, ["write", "denyoom", "fast"], 1, Write),
    spec!("lb.submit", -4, ["write", "denyoom", "fast"], 1, Write),
    spec!("lb.score", -3, ["readonly", "fast"], 1, Read),
    spec!("lb.rank", -3, ["readonly", "fast"], 1, Read),
    spec!("lb.range", -4, ["readonly"], 1, Read),
    spec!("lb.around", -5, ["readonly"], 1, Read),
    spec!("lb.rem", -3, ["write", "fast"], 1, Board),
    spec!("lb.card", -2, ["readonly", "fast"], 1, Read),
    spec!("lb.drop", 2, ["write"], 1, Board),
    spec!("lb.join", 3, ["write", "denyoom", "fast"], 1, Board),
    spec!("lb.hide", 3, ["write", "fast"], 1, Board),
    spec!("lb.unhide", 3, ["write", "fast"], 1, Board),
    spec!("lb.info", 2, ["readonly", "fast"], 1, Read),
    spec!("lb.cohort", -3, ["readonly"], 1, Read),
    spec!("lb.tier", 3, ["readonly", "fast"], 1, Read),
    spec!("lb.query", -3, ["readonly"], 1, Query),
    spec!("lb.rankof", -3, ["readonly", "fast"], 1, Query),
    spec!("lb.thresholds", -2, ["readonly"], 1, Query),
    spec!("lb.member", -2, ["readonly"], 0, Query),
    spec!(
        "auth",
        -2,
        ["noscript", "loading", "stale", "fast", "no_auth"],
        0,
        Connection
    ),
    spec!(
        "hello",
        -1,
        ["noscript", "loading", "stale", "fast", "no_auth"],
        0,
        Connection
    ),
    spec!("ping", -1, ["fast"], 0, Connection),
    spec!("echo", 2, ["fast"], 0, Connection),
    spec!("select", 2, ["loading", "stale", "fast"], 0, Connection),
    spec!(
        "quit",
        -1,
        ["noscript", "loading", "stale", "fast", "no_auth"],
        0,
        Connection
    ),
    spec!(
        "reset",
        1,
        ["noscript", "loading", "stale", "fast", "no_auth"],
        0,
        Connection
    ),
    spec!("client", -2, ["loading", "stale"], 0, Connection),
    spec!("command", -1, ["loading", "stale"], 0, Connection),
    spec!("info", -1, ["loading", "stale"], 0, Connection),
];

/// The command named `name` (any case).
pub fn lookup(name: &[u8]) -> Option<&'static Spec> {
    COMMANDS
        .iter()
        .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
}

impl Spec {
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

/// The scores from argument `from` to the first of the `allowed` option words: one value
/// per column in column order (docs/SPEC.md §13), at least one, at most
/// [`MAX_COLUMNS`]; one alone is a one-column board's score. Returns them and where the
/// options start.
pub fn score_values(
    args: &Args<'_>,
    from: usize,
    allowed: &[&'static str],
) -> Result<(ScoreInput, usize), CmdError> {
    let is_option = |i: usize| {
        allowed
            .iter()
            .any(|k| k.as_bytes().eq_ignore_ascii_case(args.get(i)))
    };
    let mut values = Vec::new();
    let mut next = from;
    while next == from || (next < args.len() && !is_option(next)) {
        if values.len() == MAX_COLUMNS {
            return Err(CmdError::Api(ApiError::new(
                ErrorCode::InvalidScore,
                format!(
                    "more than {MAX_COLUMNS} values: a board has at most {MAX_COLUMNS} columns"
                ),
            )));
        }
        let raw = text(args, next, "the score", ErrorCode::ScoreNotInteger)?;
        values.push(crate::wire::parse::score_text(raw)?);
        next += 1;
    }
    let scores = match values[..] {
        [one] => ScoreInput::Score(one),
        _ => ScoreInput::Positional(values),
    };
    Ok((scores, next))
}

/// Writes a member's score: the integer on a one-column board, the array of every
/// column's value on a board of several (docs/SPEC.md §13).
pub fn scores(out: &mut Out, columns: &ColumnNames, scores: &Scores) {
    if columns.get().is_some() {
        out.array(scores.len());
        for &v in scores.as_slice() {
            out.int(v);
        }
    } else {
        out.int(scores.first());
    }
}

/// An `invalid_parameter` error.
pub fn invalid(message: impl Into<String>) -> CmdError {
    CmdError::Api(ApiError::new(ErrorCode::InvalidParameter, message))
}

/// Argument `i` as UTF-8 text; `code` names what it is when it is not.
pub fn text<'a>(
    args: &Args<'a>,
    i: usize,
    what: &str,
    code: ErrorCode,
) -> Result<&'a str, CmdError> {
    std::str::from_utf8(args.get(i))
        .map_err(|_| CmdError::Api(ApiError::new(code, format!("{what} is not valid UTF-8"))))
}

/// The board name, argument 1, checked.
pub fn board(args: &Args<'_>) -> Result<BoardName, CmdError> {
    let b = text(args, 1, "the board name", ErrorCode::InvalidBoardName)?;
    Ok(BoardName::parse(b)?)
}

/// The `KEYWORD value` pairs from argument `from` on, each keyword one of `allowed`
/// (any case) and given once.
pub fn options<'a>(
    args: &Args<'a>,
    from: usize,
    allowed: &[&'static str],
    command: &str,
) -> Result<Vec<(&'static str, &'a str)>, CmdError> {
    options_in(args, from..args.len(), allowed, command, Vec::new())
}

/// [`options`] over the arguments in `range`, after those already in `out`.
pub fn options_in<'a>(
    args: &Args<'a>,
    range: std::ops::Range<usize>,
    allowed: &[&'static str],
    command: &str,
    mut out: Vec<(&'static str, &'a str)>,
) -> Result<Vec<(&'static str, &'a str)>, CmdError> {
    let mut i = range.start;
    while i < range.end {
        let word = args.get(i);
        let Some(key) = allowed
            .iter()
            .find(|k| k.as_bytes().eq_ignore_ascii_case(word))
        else {
            return Err(invalid(format!(
                "unknown option {:?} for '{command}'; it takes {}",
                String::from_utf8_lossy(word),
                allowed.join(", ")
            )));
        };
        if i + 1 >= range.end {
            return Err(invalid(format!(
                "option {key} of '{command}' needs a value"
            )));
        }
        if out.iter().any(|(k, _)| k == key) {
            return Err(invalid(format!("option {key} of '{command}' given twice")));
        }
        let what = format!("the value of {key}");
        out.push((key, text(args, i + 1, &what, ErrorCode::InvalidParameter)?));
        i += 2;
    }
    Ok(out)
}

/// The value of option `key` among `opts`.
pub fn option<'a>(opts: &[(&'static str, &'a str)], key: &str) -> Option<&'a str> {
    opts.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}
