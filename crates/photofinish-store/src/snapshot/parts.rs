//! The snapshot's sections after the boards and their rankings (docs/format.md): each
//! board's seats (joins, attempts, cohorts and a league close's progress), a league's
//! tiers, the hidden members, the audit log and the grants — each a count, then its
//! records, written and read here in pairs.

use std::io::{self, Write};

use photofinish_core::board::HideScope;
use photofinish_core::entry::Seats;
use photofinish_core::league::{Closing, Move};

use super::CrcWriter;
use crate::codec::{Dec, DecodeError, Enc};
use crate::state::{read_lock, write_lock, State};

/// Every board's grants (docs/SPEC.md §16, docs/format.md): a count, then each board
/// that has any with its grants as JSON.
pub(super) fn write_rewards(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
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

/// The erasure ledger (docs/format.md, format 10): a count, then each HMAC and instant.
pub(super) fn write_ledger(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    let ledger = state.erasure_ledger();
    let mut e = Enc::default();
    e.u32(ledger.len() as u32);
    for (hmac, at_us) in &ledger {
        e.str(hmac);
        e.i64(*at_us);
    }
    w.write_all(&e.0)
}

/// Reads what [`write_ledger`] wrote into `state`.
pub(super) fn read_ledger(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let hmac = d.str()?;
        state.restore_erased(hmac, d.i64()?);
    }
    Ok(())
}

pub(super) fn read_rewards(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let board = d.str()?;
        let rewards = d.json()?;
        let handle = state
            .board(&board)
            .ok_or_else(|| DecodeError(format!("grants of unknown board {board:?}")))?;
        write_lock(&handle).restore_rewards(rewards);
    }
    Ok(())
}

/// Every board's seats (docs/format.md): a count of (board, period) pairs, then each
/// with its members waiting (joined, not played), its attempts, and its cohorts' members
/// per tier in arrival order.
pub(super) fn write_seats(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
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
pub(super) fn write_tiers(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
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
pub(super) fn read_tiers(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let name = d.str()?;
        let handle = state
            .board(&name)
            .ok_or_else(|| DecodeError(format!("tiers of no board {name:?}")))?;
        let mut board = write_lock(&handle);
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
pub(super) fn write_hidden(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
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
pub(super) fn write_audit(w: &mut CrcWriter<'_>, state: &State, now_us: i64) -> io::Result<()> {
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
pub(super) fn read_audit(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
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
pub(super) fn read_hidden(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let name = d.str()?;
        let handle = state
            .board(&name)
            .ok_or_else(|| DecodeError(format!("hidden members of no board {name:?}")))?;
        let mut board = write_lock(&handle);
        for _ in 0..d.u32()? {
            let member = d.str()?;
            let bits = d.u8()?;
            for scope in [HideScope::Board, HideScope::Everywhere] {
                if bits & scope.bit() != 0 {
                    board
                        .hide_as(&member, scope, None)
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
pub(super) fn read_seats(d: &mut Dec<'_>, state: &State, league: bool) -> Result<(), DecodeError> {
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
        write_lock(&handle).insert_seats(start_us, seats);
    }
    Ok(())
}
