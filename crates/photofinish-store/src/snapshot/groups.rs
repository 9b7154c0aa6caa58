//! The snapshot's sections of partitions and teams (docs/SPEC.md §17, docs/format.md,
//! formats 11 and 12): each member's partition, and each team with its members and the
//! instant and order of its sum's last change — what the rankings' entries do not say.
//! A team's sum is not written: it is counted again from its members once the hidden
//! members are marked ([`photofinish_core::Ranking::load_teams`]).

use std::io::{self, Write};

use photofinish_core::ranking::SavedTeam;

use super::CrcWriter;
use crate::codec::{Dec, DecodeError, Enc, WRITE_CHUNK_BYTES};
use crate::state::{read_lock, write_lock, State};

/// Every partitioned period's members in partitions (docs/SPEC.md §17, docs/format.md,
/// format 11): a count of (board, period) pairs, then each with a count and each member
/// with its partition's key. Memory stays at about [`WRITE_CHUNK_BYTES`].
pub(super) fn write_partitions(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    let boards: Vec<_> = state
        .boards()
        .into_iter()
        .filter(|(_, h)| read_lock(h).is_partitioned())
        .collect();
    let mut pairs = 0u32;
    for (_, h) in &boards {
        pairs += read_lock(h).periods().count() as u32;
    }
    let mut e = Enc::default();
    e.u32(pairs);
    for (name, h) in &boards {
        let b = read_lock(h);
        for (period, ranking) in b.periods() {
            e.str(name);
            e.str(&period.id);
            e.u64(ranking.partitioned_len());
            let mut failed = None;
            ranking.for_each_partitioned(|member, partition| {
                e.str(member);
                e.str(partition);
                if e.0.len() >= WRITE_CHUNK_BYTES && failed.is_none() {
                    failed = w.write_all(&e.0).err();
                    e.0.clear();
                }
            });
            if let Some(err) = failed {
                return Err(err);
            }
        }
    }
    w.write_all(&e.0)
}

/// Reads what [`write_partitions`] wrote into `state`'s rankings.
pub(super) fn read_partitions(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let (board, id) = (d.str()?, d.str()?);
        let handle = state
            .board(&board)
            .ok_or_else(|| DecodeError(format!("partitions of unknown board {board:?}")))?;
        let mut b = write_lock(&handle);
        let bad = |e: String| DecodeError(format!("board {board} period {id}: {e}"));
        let period = b.calendar().parse(&id).map_err(|e| bad(e.to_string()))?;
        let count = d.u64()?;
        let mut pairs = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(d.left() / 4));
        for _ in 0..count {
            pairs.push((d.str_ref()?, d.str_ref()?));
        }
        let ranking = b
            .ranking_mut(&period)
            .ok_or_else(|| bad("partitions of a period without a ranking".into()))?;
        ranking
            .load_partitions(pairs)
            .map_err(|e| bad(e.to_string()))?;
    }
    Ok(())
}

/// Every period's teams on the boards that have them (format 12): a count of (board,
/// period) pairs, then each with the order its next team change gets, a count of teams
/// and each team's key, instant, order, and a count and names of its members.
pub(super) fn write_teams(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    let boards: Vec<_> = state
        .boards()
        .into_iter()
        .filter(|(_, h)| read_lock(h).has_teams())
        .collect();
    let mut pairs = 0u32;
    for (_, h) in &boards {
        pairs += read_lock(h).periods().count() as u32;
    }
    let mut e = Enc::default();
    e.u32(pairs);
    for (name, h) in &boards {
        let b = read_lock(h);
        for (period, ranking) in b.periods() {
            e.str(name);
            e.str(&period.id);
            e.u64(ranking.teams_next_seq());
            let teams = ranking.saved_teams();
            e.u32(teams.len() as u32);
            for t in &teams {
                e.str(&t.name);
                e.i64(t.reached_at_us);
                e.u64(t.seq);
                e.u32(t.members.len() as u32);
                for m in &t.members {
                    e.str(m);
                }
                if e.0.len() >= WRITE_CHUNK_BYTES {
                    w.write_all(&e.0)?;
                    e.0.clear();
                }
            }
        }
    }
    w.write_all(&e.0)
}

/// Reads what [`write_teams`] wrote into `state`'s rankings, whose hidden members are
/// marked by then.
pub(super) fn read_teams(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let (board, id) = (d.str()?, d.str()?);
        let handle = state
            .board(&board)
            .ok_or_else(|| DecodeError(format!("teams of unknown board {board:?}")))?;
        let mut b = write_lock(&handle);
        let bad = |e: String| DecodeError(format!("board {board} period {id}: {e}"));
        let period = b.calendar().parse(&id).map_err(|e| bad(e.to_string()))?;
        let next_seq = d.u64()?;
        let count = d.u32()?;
        let mut teams = Vec::with_capacity((count as usize).min(d.left() / 24));
        for _ in 0..count {
            let (name, reached_at_us, seq) = (d.str()?, d.i64()?, d.u64()?);
            let n = d.u32()?;
            let mut members = Vec::with_capacity((n as usize).min(d.left() / 4));
            for _ in 0..n {
                members.push(d.str()?);
            }
            teams.push(SavedTeam {
                name,
                reached_at_us,
                seq,
                members,
            });
        }
        let ranking = b
            .ranking_mut(&period)
            .ok_or_else(|| bad("teams of a period without a ranking".into()))?;
        ranking
            .load_teams(teams, next_seq)
            .map_err(|e| bad(e.to_string()))?;
    }
    Ok(())
}
