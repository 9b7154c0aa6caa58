//! Replies, encoded straight into the connection's output buffer in the protocol the
//! client chose with `HELLO` (RESP2 until then): where RESP3 has a type of its own (null,
//! boolean, map) RESP2 gets its usual stand-in (`$-1`, `:1`/`:0`, a flat array).
//!
//! Errors are one line: `-ERR <code> <message>` for the service's errors (the stable codes
//! of docs/SPEC.md §3), `-NOAUTH …`/`-WRONGPASS …` for credentials; a line break inside a
//! message is sent as a space so the frame stays one line.

use photofinish_core::ErrorCode;

use crate::error::ApiError;

/// The protocol a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// RESP2, every connection's start.
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}

/// A connection's output: replies in order, written with one syscall per round.
#[derive(Debug)]
pub struct Out {
    /// The encoded replies.
    pub buf: Vec<u8>,
    /// The protocol they are encoded in.
    pub proto: Proto,
}

impl Out {
    /// An empty RESP2 output.
    pub fn new() -> Self {
        Self {
            buf: Vec::with_capacity(16 * 1024),
            proto: Proto::Resp2,
        }
    }

    fn line(&mut self, kind: u8, text: &[u8]) {
        self.buf.push(kind);
        for &b in text {
            self.buf
                .push(if b == b'\r' || b == b'\n' { b' ' } else { b });
        }
        self.buf.extend_from_slice(b"\r\n");
    }

    fn header(&mut self, kind: u8, n: impl itoa::Integer) {
        self.buf.push(kind);
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        self.buf.extend_from_slice(b"\r\n");
    }

    /// `+OK`.
    pub fn ok(&mut self) {
        self.buf.extend_from_slice(b"+OK\r\n");
    }

    /// A simple string.
    pub fn simple(&mut self, s: &str) {
        self.line(b'+', s.as_bytes());
    }

    /// An error line as it is: `-<text>`.
    pub fn error(&mut self, text: &str) {
        self.line(b'-', text.as_bytes());
    }

    /// `-ERR <code> <message>`.
    pub fn coded(&mut self, code: ErrorCode, message: &str) {
        self.error(&format!("ERR {} {message}", code.as_str()));
    }

    /// An error with a stable code: `-NOAUTH unauthorized …` when a caller was refused
    /// for want of a credential, else `-ERR <code> <message>` (with the wait of a rate
    /// limit).
    pub fn api_error(&mut self, e: &ApiError) {
        match (e.code, e.retry_after_s) {
            (ErrorCode::Unauthorized, _) => {
                self.error(&format!("NOAUTH unauthorized {}", e.message))
            }
            (code, Some(s)) => self.coded(code, &format!("{}; retry after {s} s", e.message)),
            (code, None) => self.coded(code, &e.message),
        }
    }

    /// An integer.
    pub fn int(&mut self, n: i64) {
        self.header(b':', n);
    }

    /// An unsigned count as an integer (saturating past `i64::MAX`).
    pub fn count(&mut self, n: u64) {
        self.int(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// A bulk string.
    pub fn bulk(&mut self, b: &[u8]) {
        self.header(b'$', b.len());
        self.buf.extend_from_slice(b);
        self.buf.extend_from_slice(b"\r\n");
    }

    /// Text for people (`INFO`): a verbatim string of format `txt` in RESP3, a bulk
    /// string in RESP2.
    pub fn verbatim(&mut self, text: &[u8]) {
        match self.proto {
            Proto::Resp3 => {
                self.header(b'=', text.len() + 4);
                self.buf.extend_from_slice(b"txt:");
                self.buf.extend_from_slice(text);
                self.buf.extend_from_slice(b"\r\n");
            }
            Proto::Resp2 => self.bulk(text),
        }
    }

    /// Null: `_` in RESP3, the null bulk string in RESP2.
    pub fn nil(&mut self) {
        match self.proto {
            Proto::Resp3 => self.buf.extend_from_slice(b"_\r\n"),
            Proto::Resp2 => self.buf.extend_from_slice(b"$-1\r\n"),
        }
    }

    /// A boolean: `#t`/`#f` in RESP3, `:1`/`:0` in RESP2.
    pub fn bool(&mut self, b: bool) {
        match (self.proto, b) {
            (Proto::Resp3, true) => self.buf.extend_from_slice(b"#t\r\n"),
            (Proto::Resp3, false) => self.buf.extend_from_slice(b"#f\r\n"),
            (Proto::Resp2, b) => self.int(i64::from(b)),
        }
    }

    /// The header of an array of `n` elements.
    pub fn array(&mut self, n: usize) {
        self.header(b'*', n);
    }

    /// The header of a map of `n` pairs: `%n` in RESP3, an array of `2n` in RESP2.
    pub fn map(&mut self, n: usize) {
        match self.proto {
            Proto::Resp3 => self.header(b'%', n),
            Proto::Resp2 => self.header(b'*', 2 * n),
        }
    }

    /// A JSON value as the closest reply: string → bulk, integer → integer, boolean →
    /// boolean, null → nil, anything else → its JSON text as a bulk.
    pub fn json(&mut self, v: &serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::Null => self.nil(),
            Value::Bool(b) => self.bool(*b),
            Value::String(s) => self.bulk(s.as_bytes()),
            Value::Number(n) => match n.as_i64() {
                Some(i) => self.int(i),
                None => self.bulk(n.to_string().as_bytes()),
            },
            other => self.bulk(other.to_string().as_bytes()),
        }
    }
}

impl Out {
    /// A JSON value, nested all the way: objects → maps, arrays → arrays, numbers that
    /// are not integers → their text as a bulk; the rest as [`Self::json`].
    pub fn nested(&mut self, v: &serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::Array(items) => {
                self.array(items.len());
                for i in items {
                    self.nested(i);
                }
            }
            Value::Object(fields) => {
                self.map(fields.len());
                for (k, v) in fields {
                    self.bulk(k.as_bytes());
                    self.nested(v);
                }
            }
            Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
                self.double(n.as_f64().unwrap_or_default());
            }
            other => self.json(other),
        }
    }

    /// A floating-point number: a RESP3 double, a bulk of its text in RESP2.
    pub fn double(&mut self, d: f64) {
        let text = d.to_string();
        match self.proto {
            Proto::Resp3 => {
                self.buf.push(b',');
                self.buf.extend_from_slice(text.as_bytes());
                self.buf.extend_from_slice(b"\r\n");
            }
            Proto::Resp2 => self.bulk(text.as_bytes()),
        }
    }
}

impl Default for Out {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_protocols() {
        let mut o = Out::new();
        o.nil();
        o.bool(true);
        o.map(1);
        o.error("ERR a\r\nb");
        assert_eq!(o.buf, b"$-1\r\n:1\r\n*2\r\n-ERR a  b\r\n");
        let mut o = Out {
            proto: Proto::Resp3,
            ..Out::new()
        };
        o.nil();
        o.bool(false);
        o.map(1);
        o.int(-7);
        o.bulk(b"x");
        assert_eq!(o.buf, b"_\r\n#f\r\n%1\r\n:-7\r\n$1\r\nx\r\n");
    }
}
