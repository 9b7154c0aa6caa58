//! Request framing: what a client may send a RESP server, read from the connection's
//! buffer — a multibulk (`*<n>\r\n` then `n` bulk strings `$<len>\r\n<bytes>\r\n`) or an
//! inline command (one line of words, with Redis's quoting), as Redis reads them
//! (`processMultibulkBuffer`, `processInlineBuffer`).
//!
//! This is a parser of our own, not `redis-protocol`'s decoder, for three reasons found
//! by measuring (docs/resp.md): a request is only ever an array of bulk strings, and a
//! general decoder accepts any frame, nested arrays included — `redis-protocol` 6 recurses
//! once per level and overflows the stack (aborting the whole server) on 200,000 nested
//! `*1\r\n` headers, 800 KB of input; it has no length limits, so a header promising a
//! gigabyte is buffered for; and it re-parses an incomplete frame from its first byte on
//! every read. Here every length is checked against a named limit when its header is read,
//! before anything is buffered for it, and arguments are copied into one arena per round,
//! so parsing a pipeline allocates nothing once the connection is warm.
//!
//! [`parse`] takes every complete command at the front of the buffer (up to a count) and
//! says how many bytes they used; an incomplete one is left for the next read.

use std::ops::Range;

use crate::limits::{
    RESP_MAX_ARGS, RESP_MAX_BULK_BYTES, RESP_MAX_COMMAND_BYTES, RESP_MAX_INLINE_BYTES,
};

/// Longest `*<n>` or `$<len>` header line, digits and sign (Redis: 32 bytes would do).
const MAX_HEADER_LINE: usize = 32;

/// Commands read in one round: their arguments' bytes in one arena.
#[derive(Debug, Default)]
pub struct Batch {
    bytes: Vec<u8>,
    args: Vec<Range<usize>>,
    commands: Vec<Range<usize>>,
}

/// One command's arguments (the name first).
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    batch: &'a Batch,
    args: &'a [Range<usize>],
}

impl<'a> Args<'a> {
    /// Number of arguments, the name included.
    pub fn len(&self) -> usize {
        self.args.len()
    }

    /// Argument `i`, or empty past the end.
    pub fn get(&self, i: usize) -> &'a [u8] {
        self.args
            .get(i)
            .map_or(&[][..], |r| &self.batch.bytes[r.clone()])
    }

    /// Every argument.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let (batch, args) = (self.batch, self.args);
        args.iter().map(move |r| &batch.bytes[r.clone()])
    }
}

impl Batch {
    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.args.clear();
        self.commands.clear();
    }

    /// Number of commands.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether there are no commands.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Command `i`.
    pub fn command(&self, i: usize) -> Args<'_> {
        Args {
            batch: self,
            args: &self.args[self.commands[i].clone()],
        }
    }

    fn push_arg(&mut self, bytes: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.args.push(start..self.bytes.len());
    }

    fn finish_command(&mut self, first_arg: usize) {
        if self.args.len() > first_arg {
            self.commands.push(first_arg..self.args.len());
        }
    }

    fn drop_command(&mut self, first_arg: usize) {
        if let Some(r) = self.args.get(first_arg) {
            self.bytes.truncate(r.start);
        }
        self.args.truncate(first_arg);
    }
}

/// Input no request can be: the connection answers `-ERR Protocol error: <this>` and closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

/// What one command at the front of the input is.
enum One {
    /// A complete command of this many bytes (pushed to the batch, unless empty).
    Done(usize),
    /// Not all here yet.
    Incomplete,
}

/// Parses complete commands from the front of `buf` into `batch`, at most `max_commands`
/// in all; returns the bytes they used. A protocol error keeps the commands before it in
/// `batch` (they are answered first) and reports it with their length.
pub fn parse(buf: &[u8], batch: &mut Batch, max_commands: usize) -> (usize, Option<ProtocolError>) {
    let mut used = 0;
    while batch.len() < max_commands && used < buf.len() {
        let first_arg = batch.args.len();
        let rest = &buf[used..];
        let one = if rest[0] == b'*' {
            multibulk(rest, batch)
        } else {
            inline(rest, batch)
        };
        match one {
            Ok(One::Done(n)) => {
                batch.finish_command(first_arg);
                used += n;
            }
            Ok(One::Incomplete) => {
                batch.drop_command(first_arg);
                if rest.len() > RESP_MAX_COMMAND_BYTES {
                    let e = format!("command over the {RESP_MAX_COMMAND_BYTES}-byte limit");
                    return (used, Some(ProtocolError(e)));
                }
                break;
            }
            Err(e) => {
                batch.drop_command(first_arg);
                return (used, Some(e));
            }
        }
    }
    (used, None)
}

/// The line at the front of `buf` (without `\r\n`) and the bytes it used, `None` if its
/// end has not arrived; a line over `max` bytes is an error named `what`.
fn line<'a>(
    buf: &'a [u8],
    max: usize,
    what: &str,
) -> Result<Option<(&'a [u8], usize)>, ProtocolError> {
    let window = &buf[..buf.len().min(max + 2)];
    match window.windows(2).position(|w| w == b"\r\n") {
        Some(end) => Ok(Some((&buf[..end], end + 2))),
        None if buf.len() > max + 1 => Err(ProtocolError(format!("too big {what}"))),
        None => Ok(None),
    }
}

/// A header's number: an optional `-`, then decimal digits.
fn header_number(digits: &[u8], what: &str) -> Result<i64, ProtocolError> {
    std::str::from_utf8(digits)
        .ok()
        .filter(|s| !s.is_empty() && !s.starts_with('+'))
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| ProtocolError(format!("invalid {what} length")))
}

fn multibulk(buf: &[u8], batch: &mut Batch) -> Result<One, ProtocolError> {
    let Some((head, mut at)) = line(buf, MAX_HEADER_LINE, "mbulk count string")? else {
        return Ok(One::Incomplete);
    };
    let count = header_number(&head[1..], "multibulk")?;
    if count > RESP_MAX_ARGS as i64 {
        return Err(ProtocolError(format!(
            "invalid multibulk length: {count} arguments, over the limit of {RESP_MAX_ARGS}"
        )));
    }
    // `*0` and `*-1` are empty requests: skipped, as Redis does.
    for _ in 0..count.max(0) {
        let rest = &buf[at..];
        let Some(&kind) = rest.first() else {
            return Ok(One::Incomplete);
        };
        if kind != b'$' {
            return Err(ProtocolError(format!(
                "expected '$', got '{}'",
                char::from(kind).escape_default()
            )));
        }
        let Some((head, n)) = line(rest, MAX_HEADER_LINE, "bulk count string")? else {
            return Ok(One::Incomplete);
        };
        let len = header_number(&head[1..], "bulk")?;
        let len = usize::try_from(len)
            .ok()
            .filter(|l| *l <= RESP_MAX_BULK_BYTES)
            .ok_or_else(|| {
                ProtocolError(format!(
                    "invalid bulk length: {len} bytes, the limit is {RESP_MAX_BULK_BYTES}"
                ))
            })?;
        let data = &rest[n..];
        if data.len() < len + 2 {
            return Ok(One::Incomplete);
        }
        if &data[len..len + 2] != b"\r\n" {
            return Err(ProtocolError("bulk string not followed by CRLF".into()));
        }
        batch.push_arg(&data[..len]);
        at += n + len + 2;
    }
    Ok(One::Done(at))
}

fn inline(buf: &[u8], batch: &mut Batch) -> Result<One, ProtocolError> {
    let window = &buf[..buf.len().min(RESP_MAX_INLINE_BYTES + 1)];
    let Some(end) = window.iter().position(|b| *b == b'\n') else {
        if buf.len() > RESP_MAX_INLINE_BYTES {
            return Err(ProtocolError(format!(
                "too big inline request (over {RESP_MAX_INLINE_BYTES} bytes)"
            )));
        }
        return Ok(One::Incomplete);
    };
    let text = buf[..end].strip_suffix(b"\r").unwrap_or(&buf[..end]);
    let words =
        split_args(text).ok_or_else(|| ProtocolError("unbalanced quotes in request".into()))?;
    if words.len() > RESP_MAX_ARGS {
        return Err(ProtocolError(format!(
            "inline request has {} arguments, over the limit of {RESP_MAX_ARGS}",
            words.len()
        )));
    }
    for w in &words {
        batch.push_arg(w);
    }
    Ok(One::Done(end + 1))
}

/// Splits an inline command line into words as Redis's `sdssplitargs` does: blanks
/// separate words; `"…"` takes `\n \r \t \b \a \\ \"` and `\xHH` escapes; `'…'` takes
/// `\'`; a closing quote must be followed by a blank or the end. `None` for unbalanced
/// quotes.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == line.len() {
            return Some(words);
        }
        let mut word = Vec::new();
        let mut quote: Option<u8> = None;
        loop {
            let Some(&c) = line.get(i) else {
                if quote.is_some() {
                    return None;
                }
                break;
            };
            match quote {
                None if c.is_ascii_whitespace() => break,
                None if c == b'"' || c == b'\'' => quote = Some(c),
                None => word.push(c),
                Some(q) if c == q => {
                    // A closing quote must end the word.
                    if line.get(i + 1).is_some_and(|n| !n.is_ascii_whitespace()) {
                        return None;
                    }
                    i += 1;
                    break;
                }
                Some(b'"') if c == b'\\' && i + 1 < line.len() => {
                    let hex = |b: u8| char::from(b).to_digit(16);
                    let next = line[i + 1];
                    if next == b'x' && i + 3 < line.len() {
                        if let (Some(h), Some(l)) = (hex(line[i + 2]), hex(line[i + 3])) {
                            word.push((h * 16 + l) as u8);
                            i += 4;
                            continue;
                        }
                    }
                    word.push(match next {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                    i += 1;
                }
                Some(b'\'') if c == b'\\' && line.get(i + 1) == Some(&b'\'') => {
                    word.push(b'\'');
                    i += 1;
                }
                Some(_) => word.push(c),
            }
            i += 1;
        }
        words.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(input: &[u8]) -> (Vec<Vec<String>>, usize, Option<ProtocolError>) {
        let mut b = Batch::default();
        let (used, err) = parse(input, &mut b, 1000);
        let cmds = (0..b.len())
            .map(|i| {
                b.command(i)
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .collect();
        (cmds, used, err)
    }

    #[test]
    fn multibulk_and_inline_commands_and_partial_input() {
        let (c, used, err) =
            commands(b"*2\r\n$4\r\nPING\r\n$2\r\nhi\r\nECHO \"a b\" 'c'\r\n*1\r\n$4\r\nPI");
        assert_eq!(c, vec![vec!["PING", "hi"], vec!["ECHO", "a b", "c"]]);
        assert_eq!(used, 38);
        assert!(err.is_none());
        // Empty requests are skipped; a bare \n ends an inline command too.
        let (c, used, _) = commands(b"*0\r\n\r\nPING\n");
        assert_eq!(c, vec![vec!["PING"]]);
        assert_eq!(used, 11);
        // Escapes in double quotes.
        let (c, _, _) = commands(b"SET k \"a\\x41\\n\"\r\n");
        assert_eq!(c, vec![vec!["SET", "k", "aA\n"]]);
    }

    #[test]
    fn every_length_has_a_limit_checked_at_its_header() {
        let huge = format!("*{}\r\n", RESP_MAX_ARGS + 1);
        assert!(commands(huge.as_bytes()).2.is_some());
        let big_bulk = format!("*1\r\n${}\r\n", RESP_MAX_BULK_BYTES + 1);
        assert!(commands(big_bulk.as_bytes()).2.is_some());
        // A bulk within its limit waits for its bytes.
        let ok = format!("*1\r\n${}\r\n", RESP_MAX_BULK_BYTES);
        assert_eq!(commands(ok.as_bytes()).1, 0);
        assert!(commands(ok.as_bytes()).2.is_none());
        // Nesting, other frame kinds, bad lengths, missing CRLF, long header lines.
        for bad in [
            &b"*1\r\n*1\r\n$1\r\na\r\n"[..],
            b"*1\r\n:1\r\n",
            b"*x\r\n",
            b"*1\r\n$-5\r\n",
            b"*1\r\n$1\r\nab\r\n",
            b"*111111111111111111111111111111111111111111\r\n",
            b"ECHO \"unbalanced\r\n",
            b"ECHO \"a\"b\r\n",
        ] {
            assert!(
                commands(bad).2.is_some(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let long_inline = vec![b'a'; RESP_MAX_INLINE_BYTES + 2];
        assert!(commands(&long_inline).2.is_some());
        // Commands before the error are kept.
        let (c, _, err) = commands(b"PING\r\n*1\r\n:1\r\n");
        assert_eq!(c, vec![vec!["PING"]]);
        assert!(err.is_some());
    }

    fn encode(cmds: &[Vec<Vec<u8>>]) -> Vec<u8> {
        let mut out = Vec::new();
        for args in cmds {
            out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
            for a in args {
                out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                out.extend_from_slice(a);
                out.extend_from_slice(b"\r\n");
            }
        }
        out
    }

    proptest::proptest! {
        /// Any pipeline, cut anywhere: the front yields exactly the commands complete in
        /// it, the rest yields the others, and nothing is lost or invented.
        #[test]
        fn pipelines_parse_back_whole_however_they_are_cut(
            cmds in proptest::collection::vec(
                proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40), 1..6),
                1..8,
            ),
            cut in 0usize..2000,
        ) {
            let bytes = encode(&cmds);
            let cut = cut.min(bytes.len());
            let mut b = Batch::default();
            let (used, err) = parse(&bytes[..cut], &mut b, 1000);
            proptest::prop_assert!(err.is_none());
            let mut got: Vec<Vec<Vec<u8>>> = (0..b.len())
                .map(|i| b.command(i).iter().map(<[u8]>::to_vec).collect())
                .collect();
            let mut rest = Batch::default();
            let (used_rest, err) = parse(&bytes[used..], &mut rest, 1000);
            proptest::prop_assert!(err.is_none());
            proptest::prop_assert_eq!(used + used_rest, bytes.len());
            got.extend((0..rest.len()).map(|i| rest.command(i).iter().map(<[u8]>::to_vec).collect()));
            proptest::prop_assert_eq!(got, cmds);
        }

        /// Arbitrary bytes never panic, and what is consumed is within the input.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let mut b = Batch::default();
            let (used, _) = parse(&bytes, &mut b, 1000);
            proptest::prop_assert!(used <= bytes.len());
        }
    }

    #[test]
    fn deep_nesting_is_refused_without_recursion() {
        let mut input = b"*1\r\n".repeat(200_000);
        input.extend_from_slice(b"$1\r\na\r\n");
        assert!(commands(&input).2.is_some());
    }
}
