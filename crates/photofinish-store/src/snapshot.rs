//! Snapshots: the whole state at one LSN, in one file with a trailing CRC.
//!
//! Entries are written in rank order, so loading builds each ranking in bulk from sorted
//! input (`Ranking::from_sorted`: records, then the member table in runs of its slot
//! order, then the index bottom-up with full leaves), never by single inserts. See
//! docs/format.md for the byte layout.

use crate::state::read_lock;
use std::io::{self, Write};

use photofinish_core::board::HideScope;
use photofinish_core::entry::Seats;
use photofinish_core::league::{Closing, Move};
use photofinish_core::ranking::SavedEntry;
use photofinish_core::{Board, Period, Ranking, Scores, Shape};

use crate::codec::{Dec, DecodeError, Enc, WRITE_CHUNK_BYTES};
use crate::state::State;

/// First 8 bytes of every snapshot this version writes: name and format version 9.
pub const MAGIC: &[u8; 8] = b"PFSNAP09";
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
    let mut w = CrcWriter::new(out);
    let boards = state.boards();
    let mut e = Enc::default();
    e.0.extend_from_slice(MAGIC);
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
            write_ranking(&mut w, e, ranking)?;
        }
    }
    // The remembered idempotency keys (format 3).
    state.idempotency().write_to(&mut w)?;
    // The webhook cursors (format 4).
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
    w.write_all(&e.0)?;
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
    let crc = w.crc.to_le_bytes();
    w.inner.write_all(&crc)?;
    Ok(w.len + crc.len() as u64)
}

/// Every board's grants (docs/SPEC.md §16, docs/format.md): a count, then each board
/// that has any with its grants as JSON.
fn write_rewards(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    let mut boards = Vec::new();
    for (name, handle) in state.boards() {
        let b = read_lock(&handle);
        if !b.rewards().is_empty() {
            boards.push((name, b.rewards().clone()));
        }
    }
    let mut e = Enc::default();
    e.u32(boards.len() as u32);
    for (name, rewards) in &boards {
        e.str(name);
        e.json(rewards);
    }
    w.write_all(&e.0)
}

fn read_rewards(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let board = d.str()?;
        let rewards = d.json()?;
        let handle = state
            .board(&board)
            .ok_or_else(|| DecodeError(format!("grants of unknown board {board:?}")))?;
        crate::state::write_lock(&handle).restore_rewards(rewards);
    }
    Ok(())
}

/// Every board's seats (docs/format.md): a count of (board, period) pairs, then each
/// with its members waiting (joined, not played), its attempts, and its cohorts' members
/// per tier in arrival order.
fn write_seats(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    let mut e = Enc::default();
    let boards = state.boards();
    let mut pairs = 0u32;
    let mut body = Enc::default();
    for (name, handle) in &boards {
        let board = read_lock(handle);
        for (start_us, seats) in board.all_seats() {
            pairs += 1;
            body.str(name);
            body.i64(start_us);
            body.u32(seats.waiting.len() as u32);
            for m in &seats.waiting {
                body.str(m);
            }
            body.u32(seats.attempts.len() as u32);
            for (m, n) in &seats.attempts {
                body.str(m);
                body.u32(*n);
            }
            let tiers = seats.cohorts.arrivals();
            body.u32(tiers.len() as u32);
            for (tier, members) in tiers {
                body.u32(u32::from(tier));
                body.u32(members.len() as u32);
                for m in members {
                    body.str(m);
                }
            }
            let waiting = seats.cohorts.waiting();
            body.u32(waiting.len() as u32);
            for m in waiting {
                body.str(m);
            }
            match seats.close.as_deref() {
                None => body.u8(0),
                Some(c) => {
                    body.u8(1);
                    body.u32(c.cohorts_done);
                    body.u8(u8::from(c.done));
                    body.u32(c.moves.len() as u32);
                    for m in &c.moves {
                        body.str(&m.member);
                        body.u32(u32::from(m.from));
                        body.u32(u32::from(m.to));
                        body.u32(m.cohort);
                        body.u32(m.rank);
                    }
                }
            }
        }
    }
    e.u32(pairs);
    w.write_all(&e.0)?;
    w.write_all(&body.0)
}

/// Every league board's tiers above the first (docs/format.md): a count of boards, each
/// with its name and (member, tier) pairs.
fn write_tiers(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    let mut e = Enc::default();
    let mut boards = 0u32;
    let mut body = Enc::default();
    for (name, handle) in &state.boards() {
        let board = read_lock(handle);
        if board.league().is_none() {
            continue;
        }
        boards += 1;
        body.str(name);
        let tiers: Vec<(&str, u16)> = board.tiers().collect();
        body.u32(tiers.len() as u32);
        for (m, t) in tiers {
            body.str(m);
            body.u32(u32::from(t));
        }
    }
    e.u32(boards);
    w.write_all(&e.0)?;
    w.write_all(&body.0)
}

/// Reads what [`write_tiers`] wrote into the boards of `state`.
fn read_tiers(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let name = d.str()?;
        let handle = state
            .board(&name)
            .ok_or_else(|| DecodeError(format!("tiers of no board {name:?}")))?;
        let mut board = crate::state::write_lock(&handle);
        for _ in 0..d.u32()? {
            let member = d.str()?;
            board.restore_tier(member.into(), tier(d, &name)?);
        }
    }
    Ok(())
}

/// Every board's hidden members (docs/format.md): a count of boards that hide any, each
/// with its name and the names it hides with how (scope bits); then the members hidden
/// across every board (the state's).
fn write_hidden(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    let mut boards = 0u32;
    let mut body = Enc::default();
    for (name, handle) in &state.boards() {
        let board = read_lock(handle);
        let hidden = board.hidden_scopes();
        if hidden.is_empty() {
            continue;
        }
        boards += 1;
        body.str(name);
        body.u32(hidden.len() as u32);
        for (m, bits) in hidden {
            body.str(m);
            body.u8(bits);
        }
    }
    let everywhere = state.hidden_everywhere();
    body.u32(everywhere.len() as u32);
    for m in &everywhere {
        body.str(m);
    }
    let mut e = Enc::default();
    e.u32(boards);
    w.write_all(&e.0)?;
    w.write_all(&body.0)
}

/// The audit log (docs/format.md), oldest first: a count, then each entry — those the
/// retention keeps at `now_us`.
fn write_audit(w: &mut CrcWriter<'_>, state: &State, now_us: i64) -> io::Result<()> {
    let floor = state.audit_floor(now_us);
    let log = state.audit_log();
    let kept: Vec<_> = log.iter().filter(|a| a.at_us >= floor).collect();
    let mut e = Enc::default();
    e.u32(kept.len() as u32);
    for a in kept {
        e.i64(a.at_us);
        e.str(&a.actor);
        e.str(&a.action);
        e.str(&a.board);
        e.opt_str(a.member.as_deref());
        e.str(&a.detail);
    }
    w.write_all(&e.0)
}

/// Reads what [`write_audit`] wrote into `state`.
fn read_audit(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        state.push_audit(photofinish_core::audit::AuditEntry {
            at_us: d.i64()?,
            actor: d.str()?,
            action: d.str()?,
            board: d.str()?,
            member: d.opt_str()?,
            detail: d.str()?,
        });
    }
    Ok(())
}

/// Reads what [`write_hidden`] wrote into the boards of `state`.
fn read_hidden(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let name = d.str()?;
        let handle = state
            .board(&name)
            .ok_or_else(|| DecodeError(format!("hidden members of no board {name:?}")))?;
        let mut board = crate::state::write_lock(&handle);
        for _ in 0..d.u32()? {
            let member = d.str()?;
            let bits = d.u8()?;
            for scope in [HideScope::Board, HideScope::Everywhere] {
                if bits & scope.bit() != 0 {
                    board
                        .hide_as(&member, scope)
                        .map_err(|e| DecodeError(format!("board {name:?}: {e}")))?;
                }
            }
        }
    }
    for _ in 0..d.u32()? {
        state.restore_hidden_everywhere(d.str()?);
    }
    Ok(())
}

/// A tier number, as the snapshot keeps it (a u32).
fn tier(d: &mut Dec<'_>, board: &str) -> Result<u16, DecodeError> {
    u16::try_from(d.u32()?)
        .map_err(|_| DecodeError(format!("board {board:?}: a tier out of range")))
}

/// Reads what [`write_seats`] wrote into the boards of `state` (`league`: with the
/// league parts of format 6).
fn read_seats(d: &mut Dec<'_>, state: &State, league: bool) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let name = d.str()?;
        let start_us = d.i64()?;
        let mut seats = Seats::default();
        for _ in 0..d.u32()? {
            seats.waiting.insert(d.str()?.into());
        }
        for _ in 0..d.u32()? {
            let member = d.str()?;
            seats.attempts.insert(member.into(), d.u32()?);
        }
        for _ in 0..d.u32()? {
            let tier = tier(d, &name)?;
            for _ in 0..d.u32()? {
                seats.cohorts.restore(tier, &d.str()?);
            }
        }
        if league {
            for _ in 0..d.u32()? {
                seats.cohorts.restore_waiting(&d.str()?);
            }
            if d.u8()? == 1 {
                let mut c = Closing {
                    cohorts_done: d.u32()?,
                    done: d.u8()? == 1,
                    moves: Vec::new(),
                };
                for _ in 0..d.u32()? {
                    c.moves.push(Move {
                        member: d.str()?.into(),
                        from: tier(d, &name)?,
                        to: tier(d, &name)?,
                        cohort: d.u32()?,
                        rank: d.u32()?,
                    });
                }
                seats.close = Some(Box::new(c));
            }
        }
        let handle = state
            .board(&name)
            .ok_or_else(|| DecodeError(format!("seats of no board {name:?}")))?;
        crate::state::write_lock(&handle).insert_seats(start_us, seats);
    }
    Ok(())
}

/// Writes one ranking after what `e` holds: its next sequence number, its entry count, then
/// every entry in rank order (docs/format.md) — a snapshot's period, and an import file's
/// body. Memory stays at about [`WRITE_CHUNK_BYTES`] whatever the ranking's size.
pub(crate) fn write_ranking(w: &mut dyn Write, mut e: Enc, ranking: &Ranking) -> io::Result<()> {
    e.u64(ranking.next_seq());
    e.u64(ranking.len());
    let mut failed = None;
    ranking.for_each_entry(|member, scores, reached_at, seq, metadata| {
        e.str(member);
        for &score in scores.as_slice() {
            e.i64(score);
        }
        e.i64(reached_at);
        e.u64(seq);
        e.opt_str(metadata);
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
) -> Result<Ranking, DecodeError> {
    let columns = shape.len();
    let next_seq = d.u64()?;
    let count = d.u64()?;
    let mut bad: Option<DecodeError> = None;
    let entries = (0..count).map_while(|_| {
        let entry = (|| {
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
        })();
        match entry {
            Ok(e) => Some(Ok(e)),
            Err(e) => {
                bad = Some(e);
                None
            }
        }
    });
    let capacity = usize::try_from(count).unwrap_or(0).min(bytes_left / 32);
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
        MAGIC_V1, MAGIC_V2, MAGIC_V3, MAGIC_V4, MAGIC_V5, MAGIC_V6, MAGIC_V7, MAGIC_V8, MAGIC,
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
    read_boards(&mut d, &state, version == 1, buf.len())?;
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
    if !d.is_done() {
        return Err(DecodeError("trailing bytes in snapshot".into()));
    }
    Ok(Loaded {
        state,
        last_lsn,
        max_time_us,
    })
}

/// The boards and their periods' rankings (`v1`: configs in the first format; `len` bounds
/// the counts a ranking may claim).
fn read_boards(d: &mut Dec<'_>, state: &State, v1: bool, len: usize) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let name = d.str()?;
        let config = if v1 { d.config()? } else { d.config2()? };
        let mut board =
            Board::checked(config).map_err(|e| DecodeError(format!("board {name}: {e}")))?;
        for _ in 0..d.u32()? {
            let id = d.str()?;
            let period = board
                .calendar()
                .parse(&id)
                .map_err(|e| DecodeError(format!("board {name}: {e}")))?;
            let ranking = read_ranking(d, board.shape(), len)
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
