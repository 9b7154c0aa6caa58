//! The snapshot's sections of partitions and teams (docs/SPEC.md §17, docs/format.md,
//! formats 11 and 12): each member's partition, and each team with its members and the
//! instant and order of its sum's last change — what the rankings' entries do not say.
//! A team's sum is not written: it is counted again from its members once the hidden
//! members are marked ([`photofinish_core::Ranking::load_teams`]).

use std::io::{self, Write};

use photofinish_core::ranking::SavedTeam;
use photofinish_core::{Board, Ranking};

use super::CrcWriter;
use crate::codec::{Dec, DecodeError, Enc, WRITE_CHUNK_BYTES};
use crate::state::{read_lock, write_lock, State};

/// Every partitioned period's members in partitions (docs/SPEC.md §17, docs/format.md,
/// format 11): a count of (board, period) pairs, then each with a count and each member
/// with its partition's key. Memory stays at about [`WRITE_CHUNK_BYTES`].
pub(super) fn write_partitions(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    write_periods(w, state, Board::is_partitioned, write_ranking_partitions)
}

/// Reads what [`write_partitions`] wrote into `state`'s rankings.
pub(super) fn read_partitions(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    read_periods(d, state, "partitions", |d, ranking| {
        let pairs = read_ranking_partitions(d)?;
        Ok(ranking.load_partitions(pairs)?)
    })
}

/// Every period's teams on the boards that have them (format 12): a count of (board,
/// period) pairs, then each as [`write_ranking_teams`] writes it.
pub(super) fn write_teams(w: &mut CrcWriter<'_>, state: &State) -> io::Result<()> {
    write_periods(w, state, Board::has_teams, write_ranking_teams)
}

/// Reads what [`write_teams`] wrote into `state`'s rankings, whose hidden members are
/// marked by then.
pub(super) fn read_teams(d: &mut Dec<'_>, state: &State) -> Result<(), DecodeError> {
    read_periods(d, state, "teams", |d, ranking| {
        let (next_seq, teams) = read_ranking_teams(d)?;
        Ok(ranking.load_teams(teams, next_seq)?)
    })
}

/// A section of every period of the boards `keep` picks: a count of (board, period)
/// pairs, then each board's name, the period's id and what `section` writes of its
/// ranking.
fn write_periods(
    w: &mut CrcWriter<'_>,
    state: &State,
    keep: fn(&Board) -> bool,
    section: fn(&mut dyn Write, &mut Enc, &Ranking) -> io::Result<()>,
) -> io::Result<()> {
    let boards: Vec<_> = state
        .boards()
        .into_iter()
        .filter(|(_, h)| keep(&read_lock(h)))
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
            section(w, &mut e, ranking)?;
        }
    }
    w.write_all(&e.0)
}

/// Reads what [`write_periods`] wrote, `apply` reading each period's section into its
/// ranking; `what` names the section in errors.
fn read_periods(
    d: &mut Dec<'_>,
    state: &State,
    what: &str,
    mut apply: impl FnMut(&mut Dec<'_>, &mut Ranking) -> Result<(), Loaded>,
) -> Result<(), DecodeError> {
    for _ in 0..d.u32()? {
        let (board, id) = (d.str()?, d.str()?);
        let handle = state
            .board(&board)
            .ok_or_else(|| DecodeError(format!("{what} of unknown board {board:?}")))?;
        let mut b = write_lock(&handle);
        let bad = |e: String| DecodeError(format!("board {board} period {id}: {e}"));
        let period = b.calendar().parse(&id).map_err(|e| bad(e.to_string()))?;
        let ranking = b
            .ranking_mut(&period)
            .ok_or_else(|| bad(format!("{what} of a period without a ranking")))?;
        apply(d, ranking).map_err(|e| bad(e.0))?;
    }
    Ok(())
}

/// Why a section did not load: its bytes, or what the ranking refused.
struct Loaded(String);

impl From<DecodeError> for Loaded {
    fn from(e: DecodeError) -> Self {
        Loaded(e.0)
    }
}

impl From<photofinish_core::BoardError> for Loaded {
    fn from(e: photofinish_core::BoardError) -> Self {
        Loaded(e.to_string())
    }
}

/// One ranking's members in partitions, after what `e` holds: a count, then each member
/// with its partition's key, in no order; `e` is written to `w` whenever it passes
/// [`WRITE_CHUNK_BYTES`] (a snapshot's period, an import file's).
pub(crate) fn write_ranking_partitions(
    w: &mut dyn Write,
    e: &mut Enc,
    ranking: &Ranking,
) -> io::Result<()> {
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
    failed.map_or(Ok(()), Err)
}

/// What [`write_ranking_partitions`] wrote: each member and its partition.
pub(crate) fn read_ranking_partitions<'a>(
    d: &mut Dec<'a>,
) -> Result<Vec<(&'a str, &'a str)>, DecodeError> {
    let count = d.u64()?;
    let mut pairs = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(d.left() / 4));
    for _ in 0..count {
        pairs.push((d.str_ref()?, d.str_ref()?));
    }
    Ok(pairs)
}

/// One ranking's teams, after what `e` holds: the order its next team change gets, a
/// count, then each team's key, instant, order, and a count and names of its members.
pub(crate) fn write_ranking_teams(
    w: &mut dyn Write,
    e: &mut Enc,
    ranking: &Ranking,
) -> io::Result<()> {
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
    Ok(())
}

/// What [`write_ranking_teams`] wrote: the order the next change gets, and the teams.
pub(crate) fn read_ranking_teams(d: &mut Dec<'_>) -> Result<(u64, Vec<SavedTeam>), DecodeError> {
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
    Ok((next_seq, teams))
}
