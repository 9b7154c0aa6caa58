//! Little-endian fixed-width encoding shared by log records and snapshots, and the
//! varints (LEB128, signed ones zigzagged) a snapshot's ranking entries are written in
//! from format 13.
//!
//! Hand-written instead of a serialization crate so that `docs/format.md` can give every
//! byte, and so that a decoder never trusts a length it has not checked against what is
//! left of the buffer.

use integer_encoding::VarInt;
use photofinish_core::columns::Column;
use photofinish_core::groups::{PartitionRules, TeamRules};
use photofinish_core::league::League;
use photofinish_core::{BoardConfig, BoardSettings, Op, Order, Reset, WeekStart};

/// The JSON part of `config2`: the settings, and the columns of a board that has them
/// (left out otherwise, so a config without columns encodes as it always did).
#[derive(serde::Serialize, serde::Deserialize)]
struct Extensible<'a> {
    #[serde(flatten)]
    settings: std::borrow::Cow<'a, BoardSettings>,
    #[serde(default, skip_serializing_if = "<[Column]>::is_empty")]
    columns: std::borrow::Cow<'a, [Column]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cohort_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    league: Option<std::borrow::Cow<'a, League>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    partitions: Option<PartitionRules>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    teams: Option<TeamRules>,
}

/// A decoding failure: the bytes do not form what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

/// Bytes of entries gathered before they are written out, when a large encoding (a
/// snapshot's rankings, the remembered keys) is streamed: memory stays at about this
/// whatever the size.
pub(crate) const WRITE_CHUNK_BYTES: usize = 1 << 20;

/// An append-only byte buffer.
#[derive(Debug, Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    /// Appends one byte.
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    /// Appends a u32.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// Appends a u64.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// Appends an i64.
    pub fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// Appends a string: u32 byte length, then the bytes.
    pub fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
    /// Appends a u64 as a varint (1 to 10 bytes).
    pub fn var_u64(&mut self, v: u64) {
        self.var(v);
    }
    /// Appends an i64 as a zigzagged varint: small magnitudes of either sign are short.
    pub fn var_i64(&mut self, v: i64) {
        self.var(v);
    }
    fn var(&mut self, v: impl VarInt) {
        let mut buf = [0u8; 10];
        let n = v.encode_var(&mut buf);
        self.0.extend_from_slice(&buf[..n]);
    }
    /// Appends a string: its byte length as a varint, then the bytes.
    pub fn var_str(&mut self, s: &str) {
        self.var_u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    /// Appends an optional string: varint 0 (none), or its byte length + 1, then the bytes.
    pub fn var_opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.var_u64(0),
            Some(s) => {
                self.var_u64(s.len() as u64 + 1);
                self.0.extend_from_slice(s.as_bytes());
            }
        }
    }
    /// Appends hidden members' names: a count u32, then each name.
    pub fn hidden_names(&mut self, names: &[String]) {
        self.u32(names.len() as u32);
        for m in names {
            self.str(m);
        }
    }
    /// Appends an optional string: one byte 0 (none) or 1 followed by the string.
    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }
    /// Appends a value as a JSON `str` (the extensible parts: board settings, patches).
    pub fn json<T: serde::Serialize>(&mut self, v: &T) {
        self.str(&serde_json::to_string(v).unwrap_or_default());
    }
    /// Appends a board config with its settings (see docs/format.md, `config2`).
    pub fn config2(&mut self, c: &BoardConfig) {
        self.config(c);
        self.json(&Extensible {
            settings: std::borrow::Cow::Borrowed(&c.settings),
            columns: std::borrow::Cow::Borrowed(&c.columns),
            cohort_size: c.cohort_size,
            league: c.league.as_ref().map(std::borrow::Cow::Borrowed),
            partitions: c.partitions,
            teams: c.teams,
        });
    }
    /// Appends a board config (see docs/format.md).
    pub fn config(&mut self, c: &BoardConfig) {
        self.u8(match c.order {
            Order::Desc => 0,
            Order::Asc => 1,
        });
        self.u8(op_code(Some(c.update)));
        self.u8(match c.reset {
            Reset::Never => 0,
            Reset::Daily => 1,
            Reset::Weekly => 2,
            Reset::Monthly => 3,
        });
        self.u8(match c.week_start {
            WeekStart::Monday => 0,
            WeekStart::Sunday => 1,
        });
        self.u32(c.retention);
        self.str(&c.timezone);
    }
}

/// The byte for an operator: 0 = the board default, 1 incr, 2 best, 3 set.
pub fn op_code(op: Option<Op>) -> u8 {
    match op {
        None => 0,
        Some(Op::Incr) => 1,
        Some(Op::Best) => 2,
        Some(Op::Set) => 3,
    }
}

/// A cursor over bytes being decoded.
#[derive(Debug)]
pub struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }
    /// Bytes consumed so far.
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Whether everything was consumed.
    pub fn is_done(&self) -> bool {
        self.pos == self.buf.len()
    }
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.buf.len() - self.pos < n {
            return Err(DecodeError(format!(
                "needed {n} bytes at offset {}, {} left",
                self.pos,
                self.buf.len() - self.pos
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    /// 16 bytes.
    pub fn array16(&mut self) -> Result<[u8; 16], DecodeError> {
        self.array::<16>()
    }
    /// A little-endian u128.
    pub fn u128(&mut self) -> Result<u128, DecodeError> {
        self.array16().map(u128::from_le_bytes)
    }
    /// One byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    /// A u32.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    /// A u64.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// An i64.
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    /// A string written by [`Enc::str`].
    pub fn str(&mut self) -> Result<String, DecodeError> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| {
            DecodeError(format!(
                "invalid UTF-8 in string at offset {}",
                self.pos - n
            ))
        })
    }
    /// Bytes not yet read (a bound on what a count read from them may reserve).
    pub fn left(&self) -> usize {
        self.buf.len() - self.pos
    }
    /// A string written by [`Enc::str`], borrowed from the buffer.
    pub fn str_ref(&mut self) -> Result<&'a str, DecodeError> {
        let n = self.u32()? as usize;
        self.utf8(n)
    }

    /// A varint written by [`Enc::var_u64`].
    pub fn var_u64(&mut self) -> Result<u64, DecodeError> {
        // Most of a snapshot's varints are one byte (a name's length, a small difference).
        if let Some(&b) = self.buf.get(self.pos).filter(|&&b| b < 0x80) {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        match u64::decode_var(&self.buf[self.pos..]) {
            Some((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            None => Err(DecodeError(format!("bad varint at offset {}", self.pos))),
        }
    }
    /// A zigzagged varint written by [`Enc::var_i64`].
    pub fn var_i64(&mut self) -> Result<i64, DecodeError> {
        let z = self.var_u64()?;
        Ok((z >> 1) as i64 ^ -((z & 1) as i64))
    }
    /// A string written by [`Enc::var_str`], borrowed from the buffer.
    pub fn var_str_ref(&mut self) -> Result<&'a str, DecodeError> {
        let n = self.var_len(0)?;
        self.utf8(n)
    }
    /// An optional string written by [`Enc::var_opt_str`], borrowed from the buffer.
    pub fn var_opt_str_ref(&mut self) -> Result<Option<&'a str>, DecodeError> {
        match self.var_len(1)? {
            0 => Ok(None),
            n => self.utf8(n - 1).map(Some),
        }
    }
    /// A varint length (at most `extra` more than the bytes left).
    fn var_len(&mut self, extra: usize) -> Result<usize, DecodeError> {
        let at = self.pos;
        let n = self.var_u64()?;
        match usize::try_from(n) {
            Ok(n) if n <= self.left() + extra => Ok(n),
            _ => Err(DecodeError(format!(
                "length {n} at offset {at} past the end"
            ))),
        }
    }
    /// The next `n` bytes as UTF-8, borrowed from the buffer.
    fn utf8(&mut self, n: usize) -> Result<&'a str, DecodeError> {
        let at = self.pos;
        std::str::from_utf8(self.take(n)?)
            .map_err(|_| DecodeError(format!("invalid UTF-8 in string at offset {at}")))
    }

    /// An optional string written by [`Enc::opt_str`], borrowed from the buffer.
    pub fn opt_str_ref(&mut self) -> Result<Option<&'a str>, DecodeError> {
        match self.u8()? {
            0 => Ok(None),
            1 => self.str_ref().map(Some),
            b => Err(DecodeError(format!("bad option tag {b}"))),
        }
    }

    /// Hidden members' names written by [`Enc::hidden_names`]: more than a board may hide
    /// ([`photofinish_core::config::MAX_HIDDEN_MEMBERS`]) is damage.
    pub fn hidden_names(&mut self) -> Result<Vec<String>, DecodeError> {
        let n = self.u32()? as usize;
        if n > photofinish_core::config::MAX_HIDDEN_MEMBERS {
            return Err(DecodeError(format!("{n} hidden members in a record")));
        }
        (0..n).map(|_| self.str()).collect()
    }

    /// An optional string written by [`Enc::opt_str`].
    pub fn opt_str(&mut self) -> Result<Option<String>, DecodeError> {
        match self.u8()? {
            0 => Ok(None),
            1 => self.str().map(Some),
            b => Err(DecodeError(format!("bad option tag {b}"))),
        }
    }
    /// An operator byte written by [`op_code`].
    pub fn op(&mut self) -> Result<Option<Op>, DecodeError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(Op::Incr)),
            2 => Ok(Some(Op::Best)),
            3 => Ok(Some(Op::Set)),
            b => Err(DecodeError(format!("bad operator {b}"))),
        }
    }
    /// Reads a JSON `str`.
    pub fn json<T: serde::de::DeserializeOwned>(&mut self) -> Result<T, DecodeError> {
        let text = self.str()?;
        serde_json::from_str(&text).map_err(|e| DecodeError(format!("bad JSON {text:?}: {e}")))
    }
    /// Reads a board config with its settings (`config2`).
    pub fn config2(&mut self) -> Result<BoardConfig, DecodeError> {
        let mut c = self.config()?;
        let extra: Extensible<'static> = self.json()?;
        c.settings = extra.settings.into_owned();
        c.columns = extra.columns.into_owned();
        c.cohort_size = extra.cohort_size;
        c.league = extra.league.map(std::borrow::Cow::into_owned);
        c.partitions = extra.partitions;
        c.teams = extra.teams;
        Ok(c)
    }
    /// Reads a board config without settings (`config`, the first format): they default.
    pub fn config(&mut self) -> Result<BoardConfig, DecodeError> {
        let bad = |what: &str, b: u8| DecodeError(format!("bad {what} {b}"));
        let order = match self.u8()? {
            0 => Order::Desc,
            1 => Order::Asc,
            b => return Err(bad("order", b)),
        };
        let update = self.op()?.ok_or_else(|| bad("default operator", 0))?;
        let reset = match self.u8()? {
            0 => Reset::Never,
            1 => Reset::Daily,
            2 => Reset::Weekly,
            3 => Reset::Monthly,
            b => return Err(bad("reset", b)),
        };
        let week_start = match self.u8()? {
            0 => WeekStart::Monday,
            1 => WeekStart::Sunday,
            b => return Err(bad("week start", b)),
        };
        let retention = self.u32()?;
        let timezone = self.str()?;
        Ok(BoardConfig {
            order,
            update,
            reset,
            timezone,
            week_start,
            retention,
            columns: Vec::new(),
            cohort_size: None,
            league: None,
            partitions: None,
            teams: None,
            settings: Default::default(),
        })
    }
}
