//! Snapshots: the whole state at one LSN, in one file with a trailing CRC.
//!
//! Entries are written in rank order, so loading builds each ranking in bulk from sorted
//! input (`Ranking::from_sorted`: records, then the member table in runs of its slot
//! order, then the index bottom-up with full leaves), never by single inserts. See
//! docs/format.md for the byte layout. From format 13 an entry's numbers are varints, each
//! score and `reached_at_us` as its difference from the entry before (neighbours in rank
//! order are close), so a snapshot is about two thirds of format 12's size; format 12 is
//! still written where a reader may not know 13 yet ([`Format`]).

use crate::state::read_lock;
use std::io::{self, Write};

use photofinish_core::ranking::SavedEntry;
use photofinish_core::{Board, Period, Ranking, Scores, Shape};

use crate::codec::{Dec, DecodeError, Enc, WRITE_CHUNK_BYTES};
use crate::state::State;

pub(crate) mod groups;
mod parts;

use groups::{read_partitions, read_teams, write_partitions, write_teams};
use parts::{
    read_audit, read_hidden, read_ledger, read_rewards, read_seats, read_tiers, write_audit,
    write_hidden, write_ledger, write_rewards, write_seats, write_tiers,
};

/// First 8 bytes of every snapshot this version writes by default: name and format
/// version 13.
pub const MAGIC: &[u8; 8] = b"PFSNAP13";
/// Format 12: entries in fixed-width fields (still written on request, [`Format::V12`]).
const MAGIC_V12: &[u8; 8] = b"PFSNAP12";
/// Format 11: no teams (read only).
const MAGIC_V11: &[u8; 8] = b"PFSNAP11";
/// Format 10: no partitions (read only).
const MAGIC_V10: &[u8; 8] = b"PFSNAP10";
/// Format 9: no erasure ledger (read only).
const MAGIC_V9: &[u8; 8] = b"PFSNAP09";
/// Format 8: no grants (read only).
const MAGIC_V8: &[u8; 8] = b"PFSNAP08";
/// Format 7: no board registry (read only).
const MAGIC_V7: &[u8; 8] = b"PFSNAP07";
/// Format 6: no hidden members (read only).
const MAGIC_V6: &[u8; 8] = b"PFSNAP06";
/// The fifth format: no leagues (docs/SPEC.md §14). Still read.
const MAGIC_V5: &[u8; 8] = b"PFSNAP05";
/// The fourth format: no seats (docs/SPEC.md §14). Still read.
const MAGIC_V4: &[u8; 8] = b"PFSNAP04";
/// The third format: no webhook cursors. Still read.
const MAGIC_V3: &[u8; 8] = b"PFSNAP03";
/// The second format: no idempotency keys. Still read.
const MAGIC_V2: &[u8; 8] = b"PFSNAP02";
/// The first format: board configs without settings, no idempotency keys. Still read.
const MAGIC_V1: &[u8; 8] = b"PFSNAP01";

/// The snapshot formats this version writes: the newest by default, the one before where a
/// reader of the previous release must read it (a Redis namespace not yet moved on by
/// `photofinish upgrade`, docs/redis-layout.md "Versions").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `PFSNAP12`: a ranking's entries in fixed-width fields.
    V12,
    /// `PFSNAP13`: a ranking's entries in varints, differences from the entry before.
    V13,
}

impl Format {
    /// The format [`write`] writes.
    pub const NEWEST: Format = Format::V13;

    fn magic(self) -> &'static [u8; 8] {
        match self {
            Format::V12 => MAGIC_V12,
            Format::V13 => MAGIC,
        }
    }

    /// Its number, as [`read`] counts formats.
    fn version(self) -> usize {
        match self {
            Format::V12 => 12,
            Format::V13 => 13,
        }
    }
}

/// How format `version`'s rankings' entries are encoded: compact from format 13.
fn entries_of(version: usize) -> Entries {
    if version >= 13 {
        Entries::Compact
    } else {
        Entries::Fixed
    }
}

/// How a ranking's entries are encoded: an import file's and format 12's fixed-width
/// fields, or format 13's varints ([`write_ranking`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entries {
    /// Fixed-width fields.
    Fixed,
    /// Varints, each score and `reached_at_us` the difference from the entry before.
    Compact,
}

/// A writer that keeps the CRC32C and the count of everything written through it.
pub(crate) struct CrcWriter<'a> {
    inner: &'a mut dyn Write,
    crc: u32,
    len: u64,
}

impl<'a> CrcWriter<'a> {
    /// A writer onto `inner`, its CRC and count at 0.
    pub(crate) fn new(inner: &'a mut dyn Write) -> Self {
        Self {
            inner,
            crc: 0,
            len: 0,
        }
    }
    /// The CRC32C of everything written so far.
    pub(crate) fn crc(&self) -> u32 {
        self.crc
    }
    /// The writer underneath (to append the CRC itself).
    pub(crate) fn into_inner(self) -> &'a mut dyn Write {
        self.inner
    }
}

impl Write for CrcWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc = crc32c::crc32c_append(self.crc, &buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the snapshot of `state` as of `last_lsn`; `max_time_us` is the latest instant the
/// state has used, so a restarted clock never goes below it. Returns the bytes written.
pub fn write(
    state: &State,
    last_lsn: u64,
    max_time_us: i64,
    out: &mut dyn Write,
) -> io::Result<u64> {
    write_as(Format::NEWEST, state, last_lsn, max_time_us, out)
}

/// [`write`] in `format`.
pub fn write_as(
    format: Format,
    state: &State,
    last_lsn: u64,
    max_time_us: i64,
    out: &mut dyn Write,
) -> io::Result<u64> {
    let entries = entries_of(format.version());
    let mut w = CrcWriter::new(out);
    let boards = state.boards();
    let mut e = Enc::default();
    e.0.extend_from_slice(format.magic());
    e.u64(last_lsn);
    e.i64(max_time_us);
    e.u32(boards.len() as u32);
    w.write_all(&e.0)?;
    for (name, handle) in boards {
        let board = read_lock(&handle);
        let mut e = Enc::default();
        e.str(&name);
        e.config2(board.config());
        let periods: Vec<(&Period, &Ranking)> = board.periods().collect();
        e.u32(periods.len() as u32);
        w.write_all(&e.0)?;
        for (period, ranking) in periods {
            let mut e = Enc::default();
            e.str(&period.id);
            write_ranking(&mut w, e, ranking, entries)?;
        }
    }
    // The remembered idempotency keys (format 3), the webhook cursors (format 4).
    state.idempotency().write_to(&mut w)?;
    write_hook_cursors(&mut w, state)?;
    // The entry rules' seats (format 5; with their league parts, format 6), and the
    // leagues' tiers (format 6).
    write_seats(&mut w, state)?;
    write_tiers(&mut w, state)?;
    // The hidden members and the audit log (format 7).
    write_hidden(&mut w, state)?;
    write_audit(&mut w, state, max_time_us)?;
    // The board registry of a Redis namespace's lifecycle log (format 8): a count, then
    // each name.
    let listed = state.registered();
    let mut e = Enc::default();
    e.u32(listed.len() as u32);
    for name in &listed {
        e.str(name);
    }
    w.write_all(&e.0)?;
    // The grants (format 9).
    write_rewards(&mut w, state)?;
    // The erasure ledger (format 10).
    write_ledger(&mut w, state)?;
    // The members' partitions (format 11).
    write_partitions(&mut w, state)?;
    // The teams (format 12).
    write_teams(&mut w, state)?;
    let crc = w.crc.to_le_bytes();
    w.inner.write_all(&crc)?;
    Ok(w.len + crc.len() as u64)
}

/// Each board's webhook cursor (format 4): a count, then each board's name and cursor.
fn write_hook_cursors(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    let mut e = Enc::default();
    let cursors: Vec<(String, i64)> = state
        .boards()
        .into_iter()
        .filter_map(|(name, handle)| read_lock(&handle).hook_cursor().map(|c| (name, c)))
        .collect();
    e.u32(cursors.len() as u32);
    for (name, cursor) in cursors {
        e.str(&name);
        e.i64(cursor);
    }
    w.write_all(&e.0)
}

/// Writes one ranking after what `e` holds: its next sequence number, its entry count, then
/// every entry in rank order (docs/format.md) — a snapshot's period, and an import file's
/// body. Memory stays at about [`WRITE_CHUNK_BYTES`] whatever the ranking's size.
pub(crate) fn write_ranking(
    w: &mut dyn Write,
    mut e: Enc,
    ranking: &Ranking,
    entries: Entries,
) -> io::Result<()> {
    e.u64(ranking.next_seq());
    e.u64(ranking.len());
    let mut failed = None;
    // The entry before's scores and instant (wrapping differences are exact over all i64).
    let mut before = ([0i64; photofinish_core::columns::MAX_COLUMNS], 0i64);
    ranking.for_each_entry(|member, scores, reached_at, seq, metadata| {
        match entries {
            Entries::Fixed => {
                e.str(member);
                for &score in scores.as_slice() {
                    e.i64(score);
                }
                e.i64(reached_at);
                e.u64(seq);
                e.opt_str(metadata);
            }
            Entries::Compact => {
                e.var_str(member);
                for (&score, was) in scores.as_slice().iter().zip(&mut before.0) {
                    e.var_i64(score.wrapping_sub(*was));
                    *was = score;
                }
                e.var_i64(reached_at.wrapping_sub(before.1));
                before.1 = reached_at;
                e.var_u64(seq);
                e.var_opt_str(metadata);
            }
        }
        if e.0.len() >= WRITE_CHUNK_BYTES && failed.is_none() {
            failed = w.write_all(&e.0).err();
            e.0.clear();
        }
    });
    match failed {
        Some(err) => Err(err),
        None => w.write_all(&e.0),
    }
}

/// Reads one ranking [`write_ranking`] wrote for a board of `shape` (one score per
/// column), building it in bulk from its sorted entries. `bytes_left` bounds the capacity
/// reserved for a damaged count.
pub(crate) fn read_ranking(
    d: &mut Dec<'_>,
    shape: Shape,
    bytes_left: usize,
    encoded: Entries,
) -> Result<Ranking, DecodeError> {
    let columns = shape.len();
    let next_seq = d.u64()?;
    let count = d.u64()?;
    let mut bad: Option<DecodeError> = None;
    let mut before = ([0i64; photofinish_core::columns::MAX_COLUMNS], 0i64);
    let entries = (0..count).map_while(|_| {
        let entry = (|| match encoded {
            Entries::Fixed => {
                let member = d.str_ref()?;
                let mut values = [0; photofinish_core::columns::MAX_COLUMNS];
                for v in &mut values[..columns] {
                    *v = d.i64()?;
                }
                Ok(SavedEntry {
                    member,
                    scores: Scores::new(&values[..columns]).unwrap_or(Scores::one(values[0])),
                    reached_at_us: d.i64()?,
                    seq: d.u64()?,
                    metadata: d.opt_str_ref()?,
                })
            }
            Entries::Compact => {
                let member = d.var_str_ref()?;
                for v in &mut before.0[..columns] {
                    *v = v.wrapping_add(d.var_i64()?);
                }
                before.1 = before.1.wrapping_add(d.var_i64()?);
                let values = &before.0[..columns];
                Ok(SavedEntry {
                    member,
                    scores: Scores::new(values).unwrap_or(Scores::one(values[0])),
                    reached_at_us: before.1,
                    seq: d.var_u64()?,
                    metadata: d.var_opt_str_ref()?,
                })
            }
        })();
        match entry {
            Ok(e) => Some(Ok(e)),
            Err(e) => {
                bad = Some(e);
                None
            }
        }
    });
    // Reserve no more entries than the bytes left could hold: a fixed entry takes 29 bytes
    // or more, a compact one 4 (a name's length, a score, an instant, a seq).
    let least = match encoded {
        Entries::Fixed => 32,
        Entries::Compact => 4,
    };
    let capacity = usize::try_from(count).unwrap_or(0).min(bytes_left / least);
    let ranking = Ranking::from_sorted(shape, capacity, entries);
    if let Some(e) = bad {
        return Err(e);
    }
    let mut ranking = ranking.map_err(|e| DecodeError(e.to_string()))?;
    ranking.reserve_seq(next_seq);
    Ok(ranking)
}

/// A loaded snapshot.
#[derive(Debug)]
pub struct Loaded {
    /// The state.
    pub state: State,
    /// The LSN of the last command the state includes.
    pub last_lsn: u64,
    /// The latest instant the state used.
    pub max_time_us: i64,
}

/// Reads a snapshot file's bytes.
pub fn read(buf: &[u8]) -> Result<Loaded, DecodeError> {
    let version = [
        MAGIC_V1, MAGIC_V2, MAGIC_V3, MAGIC_V4, MAGIC_V5, MAGIC_V6, MAGIC_V7, MAGIC_V8, MAGIC_V9,
        MAGIC_V10, MAGIC_V11, MAGIC_V12, MAGIC,
    ]
    .iter()
    .position(|m| buf.get(..8) == Some(m.as_slice()))
    .map(|i| i + 1)
    .filter(|_| buf.len() >= MAGIC.len() + 4)
    .ok_or_else(|| DecodeError("not a Photofinish snapshot (bad magic)".into()))?;
    let (body, crc) = buf.split_at(buf.len() - 4);
    let want = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32c::crc32c(body) != want {
        return Err(DecodeError("snapshot checksum mismatch".into()));
    }
    let mut d = Dec::new(&body[8..]);
    let last_lsn = d.u64()?;
    let max_time_us = d.i64()?;
    let state = State::default();
    read_boards(&mut d, &state, version, buf.len())?;
    if version >= 3 {
        let mut table = state.idempotency();
        for _ in 0..d.u32()? {
            let (id, r) = crate::idempotency::decode(&mut d)?;
            table.insert(id, r);
        }
    }
    if version >= 4 {
        read_hook_cursors(&mut d, &state)?;
    }
    if version >= 5 {
        read_seats(&mut d, &state, version >= 6)?;
    }
    if version >= 6 {
        read_tiers(&mut d, &state)?;
    }
    if version >= 7 {
        read_hidden(&mut d, &state)?;
        read_audit(&mut d, &state)?;
    }
    if version >= 8 {
        let mut listed = state.registry();
        for _ in 0..d.u32()? {
            listed.insert(d.str()?);
        }
    }
    if version >= 9 {
        read_rewards(&mut d, &state)?;
    }
    if version >= 10 {
        read_ledger(&mut d, &state)?;
    }
    if version >= 11 {
        read_partitions(&mut d, &state)?;
    }
    if version >= 12 {
        read_teams(&mut d, &state)?;
    }
    if !d.is_done() {
        return Err(DecodeError("trailing bytes in snapshot".into()));
    }
    Ok(Loaded {
        state,
        last_lsn,
        max_time_us,
    })
}

/// The boards and their periods' rankings in format `version` (1: configs in the first
/// format; 13 on: compact entries); `len` bounds the counts a ranking may claim.
fn read_boards(
    d: &mut Dec<'_>,
    state: &State,
    version: usize,
    len: usize,
) -> Result<(), DecodeError> {
    let entries = entries_of(version);
    for _ in 0..d.u32()? {
        let name = d.str()?;
        let config = if version == 1 {
            d.config()?
        } else {
            d.config2()?
        };
        let mut board =
            Board::checked(config).map_err(|e| DecodeError(format!("board {name}: {e}")))?;
        for _ in 0..d.u32()? {
            let id = d.str()?;
            let period = board
                .calendar()
                .parse(&id)
                .map_err(|e| DecodeError(format!("board {name}: {e}")))?;
            let ranking = read_ranking(d, board.shape(), len, entries)
                .map_err(|e| DecodeError(format!("board {name} period {id}: {}", e.0)))?;
            board.insert_ranking(period, ranking);
        }
        state.insert_board(name, board);
    }
    Ok(())
}

/// Each board's webhook cursor (formats 4 on).
fn read_hook_cursors(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let name = d.str()?;
        let cursor = d.i64()?;
        let handle = state
            .board(&name)
            .ok_or_else(|| DecodeError(format!("a webhook cursor of no board {name:?}")))?;
        crate::state::write_lock(&handle).advance_hook(cursor);
    }
    Ok(())
}

/// File name of the snapshot that includes every command up to `last_lsn`.
pub fn snapshot_name(last_lsn: u64) -> String {
    format!("snap-{last_lsn:020}.snap")
}

/// The LSN named by a snapshot file name.
pub fn parse_snapshot_name(name: &str) -> Option<u64> {
    name.strip_prefix("snap-")?
        .strip_suffix(".snap")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests;
