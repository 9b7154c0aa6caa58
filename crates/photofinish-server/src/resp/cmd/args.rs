//! What every RESP command parses its arguments with: text, the board name, scores in
//! column order, `KEYWORD value` options — each refusal a stable code (docs/SPEC.md §9).

use photofinish_core::columns::{ColumnNames, ScoreInput, MAX_COLUMNS};
use photofinish_core::{BoardName, ErrorCode, Scores};

use crate::error::ApiError;
use crate::resp::error::CmdError;
use crate::resp::frame::Args;
use crate::resp::reply::Out;

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

/// A command word (a subcommand, a section name) in upper case, for matching.
pub fn upper(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_ascii_uppercase()
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
