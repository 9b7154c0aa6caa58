//! `photofinish-bench partition-ops`: what partitions and teams cost a ranking
//! (docs/SPEC.md §17), one thread, no I/O. Three copies of one board of `members` 16-byte
//! ids (scores uniform in 0..1,000,000, as engine-ops builds it): plain; with every
//! member in one of `partitions` partitions (member i in partition i mod P); and with
//! that and every member in a team of [`TEAM_SIZE`] (member i in team i / 50, a clan) —
//! put there as a snapshot's load does. Then, in rounds rotating the copies so drift hits
//! each alike: an `incr` of a random member (naming its own partition, and team, which
//! the write checks and whose indexes it keeps), and reads: a member's rank in its
//! partition, a partition's top-10 page, a page at a random offset, around(5, 5); the
//! teams' top-10 page, a page of teams at a random offset, one team's rank. The bytes
//! each adds are the allocator's live bytes before and after they are loaded, per member.

use std::hint::black_box;

use anyhow::Result;
use photofinish_core::ranking::SavedTeam;
use photofinish_core::{Op, Operands, RankStyle, Ranking, Write};
use serde_json::json;

use crate::alloc;
use crate::engine_ops::{below, build, time_each, Sample};
use crate::workload::Rng;

/// What one run measured (ns per operation unless named otherwise).
#[derive(Debug, Clone)]
pub struct PartitionOps {
    /// Members on the board.
    pub members: u64,
    /// Partitions they are in.
    pub partitions: u32,
    /// `incr` on the plain board, per round.
    pub plain_update_ns: Vec<f64>,
    /// `incr` naming the member's partition on the partitioned board, per round.
    pub partition_update_ns: Vec<f64>,
    /// `incr` naming the member's partition and team on the board of both, per round.
    pub team_update_ns: Vec<f64>,
    /// A member's ordinal rank in its partition (`partition_of_member`, then its rank).
    pub partition_rank_ns: f64,
    /// Its rank on the whole board, for comparison.
    pub rank_ns: f64,
    /// A partition's top-10 page, competition ranks.
    pub partition_top10_ns: f64,
    /// A page of 10 at a random offset of a partition, ordinal ranks.
    pub partition_page_ns: f64,
    /// around(5, 5) of a random member in its partition.
    pub partition_around_ns: f64,
    /// Live heap bytes the partitions add, per member.
    pub extra_bytes_per_member: f64,
    /// The teams' top-10 page, competition ranks.
    pub team_top10_ns: f64,
    /// A page of 10 teams at a random offset, ordinal ranks.
    pub team_page_ns: f64,
    /// One team's rank and score, by its key.
    pub team_rank_ns: f64,
    /// Live heap bytes the teams add, per member.
    pub team_bytes_per_member: f64,
}

/// Members a team of the bench holds: a clan.
pub const TEAM_SIZE: u64 = 50;

fn team_key(t: u64) -> String {
    format!("t{t:06}")
}

fn key(p: u64) -> String {
    format!("p{p:04}")
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl PartitionOps {
    /// The figures as a table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "partition-ops: {} members in {} partitions and teams of {TEAM_SIZE}, {} rounds\n",
            self.members,
            self.partitions,
            self.plain_update_ns.len(),
        );
        out += &self.update_lines();
        for (name, ns) in [
            ("rank on the whole board", self.rank_ns),
            ("rank in its partition", self.partition_rank_ns),
            ("partition top-10 page", self.partition_top10_ns),
            (
                "partition page of 10 at a random offset",
                self.partition_page_ns,
            ),
            ("around(5, 5) in its partition", self.partition_around_ns),
            ("teams' top-10 page", self.team_top10_ns),
            ("page of 10 teams at a random offset", self.team_page_ns),
            ("a team's rank and score", self.team_rank_ns),
        ] {
            out += &format!("{name:<44}{ns:>10.0} ns\n");
        }
        for (name, bytes) in [
            (
                "extra bytes per member, partitions",
                self.extra_bytes_per_member,
            ),
            ("extra bytes per member, teams", self.team_bytes_per_member),
        ] {
            out += &format!("{name:<44}{bytes:>10.2}\n");
        }
        out
    }

    /// The updates' rows: each board's median and rounds, and the ratios to the plain one.
    fn update_lines(&self) -> String {
        let mut out = String::new();
        for (name, of) in [
            ("update, plain board (median)", &self.plain_update_ns),
            (
                "update naming its partition (median)",
                &self.partition_update_ns,
            ),
            (
                "update naming partition and team (median)",
                &self.team_update_ns,
            ),
        ] {
            out += &format!(
                "{name:<44}{:>10.0} ns (rounds {:?})\n",
                median(of),
                rounded(of)
            );
        }
        for (name, of) in [
            (
                "ratio, partition / plain (median)",
                &self.partition_update_ns,
            ),
            (
                "ratio, partition and team / plain (median)",
                &self.team_update_ns,
            ),
        ] {
            let ratios: Vec<f64> = of
                .iter()
                .zip(&self.plain_update_ns)
                .map(|(b, a)| (b / a * 1000.0).round() / 1000.0)
                .collect();
            out += &format!("{name:<44}{:>10.3} (rounds {ratios:?})\n", median(&ratios));
        }
        out
    }

    /// The figures as one JSON object.
    pub fn json(&self) -> serde_json::Value {
        json!({
            "bench": "partition-ops",
            "members": self.members,
            "partitions": self.partitions,
            "team_size": TEAM_SIZE,
            "plain_update_ns": self.plain_update_ns,
            "partition_update_ns": self.partition_update_ns,
            "team_update_ns": self.team_update_ns,
            "rank_ns": self.rank_ns,
            "partition_rank_ns": self.partition_rank_ns,
            "partition_top10_ns": self.partition_top10_ns,
            "partition_page_ns": self.partition_page_ns,
            "partition_around_ns": self.partition_around_ns,
            "team_top10_ns": self.team_top10_ns,
            "team_page_ns": self.team_page_ns,
            "team_rank_ns": self.team_rank_ns,
            "extra_bytes_per_member": self.extra_bytes_per_member,
            "team_bytes_per_member": self.team_bytes_per_member,
        })
    }
}

fn rounded(v: &[f64]) -> Vec<i64> {
    v.iter().map(|x| x.round() as i64).collect()
}

/// What a board's writes name: partitions (member i in i mod `partitions`, none when 0),
/// and teams (member i in i / [`TEAM_SIZE`]) when `teams`.
#[derive(Clone, Copy)]
struct Groups {
    partitions: u64,
    teams: bool,
}

/// `ops` increments of random members of `r`, each naming what `g` says; mean ns each.
fn updates(
    r: &mut Ranking,
    rng: &mut Rng,
    members: u64,
    ops: usize,
    g: Groups,
    clock: &mut i64,
) -> Result<f64> {
    let sample = Sample::draw(rng, members, ops);
    let keys: Vec<String> = (0..g.partitions).map(key).collect();
    let teams: Vec<String> = if g.teams {
        (0..members.div_ceil(TEAM_SIZE)).map(team_key).collect()
    } else {
        Vec::new()
    };
    let mut refused = 0u64;
    let ns = time_each(&sample, |member| {
        *clock += 1;
        // The member's index is in its id's last digits (`player0000001234`).
        let i: u64 = member[6..].parse().unwrap_or(0);
        let w = Write {
            member,
            op: Some(Op::Incr),
            values: Operands::one(1 + below(rng, 100) as i64),
            at_us: *clock,
            metadata: None,
            partition: (g.partitions > 0).then(|| keys[(i % g.partitions) as usize].as_str()),
            team: teams.get((i / TEAM_SIZE) as usize).map(String::as_str),
            hidden: false,
        };
        if black_box(r.submit(&w)).is_err() {
            refused += 1;
        }
    });
    anyhow::ensure!(refused == 0, "{refused} updates were refused");
    Ok(ns)
}

/// Puts member i in partition i mod `p` as a snapshot's load does; the live bytes it
/// added, per member.
fn load_partitions(r: &mut Ranking, members: u64, p: u64) -> Result<f64> {
    let names: Vec<(String, String)> = (0..members)
        .map(|i| (crate::workload::member(i), key(i % p)))
        .collect();
    let before = alloc::live_bytes();
    r.load_partitions(names.iter().map(|(m, k)| (m.as_str(), k.as_str())))?;
    Ok(alloc::live_bytes().saturating_sub(before) as f64 / members as f64)
}

/// Puts member i in team i / [`TEAM_SIZE`] as a snapshot's load does; the live bytes it
/// added, per member.
fn load_teams(r: &mut Ranking, members: u64) -> Result<f64> {
    // Counted from before the saved teams are made: the load consumes them.
    let before = alloc::live_bytes();
    let teams: Vec<SavedTeam> = (0..members.div_ceil(TEAM_SIZE))
        .map(|t| SavedTeam {
            name: team_key(t),
            reached_at_us: 0,
            seq: t + 1,
            members: (t * TEAM_SIZE..((t + 1) * TEAM_SIZE).min(members))
                .map(crate::workload::member)
                .collect(),
        })
        .collect();
    r.load_teams(teams, members.div_ceil(TEAM_SIZE) + 1)?;
    Ok(alloc::live_bytes().saturating_sub(before) as f64 / members as f64)
}

/// Mean ns of each of a partition's reads over `reads` random members: (rank on the
/// whole board, rank in its partition, top 10, a page at a random offset, around).
fn reads(parted: &Ranking, rng: &mut Rng, members: u64, p: u64, reads: usize) -> [f64; 5] {
    let sample = Sample::draw(rng, members, reads);
    let whole = parted.whole();
    let in_own = |m: &str| parted.whole().in_partition(parted.partition_of(m));
    let in_each = (members / p).max(1);
    [
        time_each(&sample, |m| {
            black_box(whole.member_ranked(m, RankStyle::Ordinal));
        }),
        time_each(&sample, |m| {
            let part = whole.partition_of_member(m);
            black_box(part.and_then(|v| v.member_ranked(m, RankStyle::Ordinal)));
        }),
        time_each(&sample, |m| {
            black_box(in_own(m).page(0, 10, RankStyle::Competition));
        }),
        time_each(&sample, |m| {
            let at = below(rng, in_each);
            black_box(in_own(m).page(at, 10, RankStyle::Ordinal));
        }),
        time_each(&sample, |m| {
            black_box(in_own(m).around(m, 5, 5, RankStyle::Competition));
        }),
    ]
}

/// Mean ns of the teams' reads over `reads` random members: (top 10, a page at a random
/// offset, the member's team's rank).
fn team_reads(grouped: &Ranking, rng: &mut Rng, members: u64, reads: usize) -> Result<[f64; 3]> {
    let sample = Sample::draw(rng, members, reads);
    let whole = grouped.whole();
    let teams = whole.teams().ok_or_else(|| anyhow::anyhow!("no teams"))?;
    let n = teams.len().max(1);
    Ok([
        time_each(&sample, |_| {
            black_box(teams.page(0, 10, RankStyle::Competition));
        }),
        time_each(&sample, |_| {
            black_box(teams.page(below(rng, n), 10, RankStyle::Ordinal));
        }),
        time_each(&sample, |m| {
            let team = grouped.team_of(m).unwrap_or_default();
            black_box(teams.team(team, RankStyle::Competition));
        }),
    ])
}

/// The three boards' update rounds, rotating which goes first: each board's mean ns per
/// round.
fn rounds(
    boards: &mut [(Ranking, Groups); 3],
    members: u64,
    ops: usize,
    rounds: usize,
) -> Result<[Vec<f64>; 3]> {
    let mut rng = Rng::new(7);
    let mut clock = members as i64;
    let mut out: [Vec<f64>; 3] = Default::default();
    for round in 0..rounds {
        for k in 0..3 {
            let b = (round + k) % 3;
            let (r, g) = &mut boards[b];
            out[b].push(updates(r, &mut rng, members, ops, *g, &mut clock)?);
        }
    }
    Ok(out)
}

/// Builds the boards and times each operation (see the module docs).
pub fn run(members: u64, ops: usize, partitions: u32, rounds_n: usize) -> Result<PartitionOps> {
    anyhow::ensure!(
        members > 0 && ops > 0 && rounds_n > 0,
        "members, ops and rounds must be at least 1"
    );
    anyhow::ensure!(
        (1..=photofinish_core::groups::MAX_PARTITIONS).contains(&partitions),
        "--partitions must be 1 to {}",
        photofinish_core::groups::MAX_PARTITIONS
    );
    let p = u64::from(partitions);
    let plain = build(members, 1)?;
    let mut parted = build(members, 1)?.with_partitions(Some(partitions));
    let extra = load_partitions(&mut parted, members, p)?;
    let mut grouped = build(members, 1)?
        .with_partitions(Some(partitions))
        .with_teams(Some(TEAM_SIZE as u32));
    load_partitions(&mut grouped, members, p)?;
    let team_bytes = load_teams(&mut grouped, members)?;
    let none = Groups {
        partitions: 0,
        teams: false,
    };
    let mut boards = [
        (plain, none),
        (
            parted,
            Groups {
                partitions: p,
                teams: false,
            },
        ),
        (
            grouped,
            Groups {
                partitions: p,
                teams: true,
            },
        ),
    ];
    let [plain_ns, parted_ns, team_ns] = rounds(&mut boards, members, ops, rounds_n)?;
    let mut rng = Rng::new(11);
    let n = (ops / 10).max(1);
    let [rank_ns, partition_rank_ns, partition_top10_ns, partition_page_ns, partition_around_ns] =
        reads(&boards[1].0, &mut rng, members, p, n);
    let [team_top10_ns, team_page_ns, team_rank_ns] =
        team_reads(&boards[2].0, &mut rng, members, n)?;
    Ok(PartitionOps {
        members,
        partitions,
        plain_update_ns: plain_ns,
        partition_update_ns: parted_ns,
        team_update_ns: team_ns,
        partition_rank_ns,
        rank_ns,
        partition_top10_ns,
        partition_page_ns,
        partition_around_ns,
        extra_bytes_per_member: extra,
        team_top10_ns,
        team_page_ns,
        team_rank_ns,
        team_bytes_per_member: team_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small run measures every figure, and its partitioned writes are all accepted.
    #[test]
    fn a_small_run_measures_every_operation() {
        // The byte count is the process's: the crate's other allocating tests wait.
        let _serial = crate::alloc::serial();
        let m = run(2_000, 500, 7, 2).expect("run");
        assert_eq!(
            (m.plain_update_ns.len(), m.partition_update_ns.len()),
            (2, 2)
        );
        assert!(m.partition_update_ns.iter().all(|&x| x > 0.0), "{m:?}");
        assert!(
            m.partition_top10_ns > 0.0 && m.partition_around_ns > 0.0,
            "{m:?}"
        );
        assert!(m.extra_bytes_per_member > 2.0, "{m:?}");
        assert_eq!(m.team_update_ns.len(), 2);
        assert!(m.team_update_ns.iter().all(|&x| x > 0.0), "{m:?}");
        assert!(m.team_top10_ns > 0.0 && m.team_rank_ns > 0.0, "{m:?}");
        assert!(m.team_bytes_per_member > 4.0, "{m:?}");
        assert!(m.table().contains("ratio, partition and team / plain"));
    }
}
