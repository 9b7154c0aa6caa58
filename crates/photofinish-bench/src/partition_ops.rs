//! `photofinish-bench partition-ops`: what partitions cost a ranking (docs/SPEC.md §17),
//! one thread, no I/O. Two copies of one board of `members` 16-byte ids (scores uniform
//! in 0..1,000,000, as engine-ops builds it): plain, and with every member in one of
//! `partitions` partitions (member i in partition i mod P, put there as a snapshot's load
//! does). Then, in rounds alternating the two copies so drift hits both alike: an `incr`
//! of a random member (on the partitioned copy naming its own partition, which the write
//! checks and whose index it keeps), and reads of a partition: a member's rank in it,
//! its top-10 page, a page at a random offset, around(5, 5). The bytes partitions add
//! are the allocator's live bytes before and after they are loaded, per member.

use std::hint::black_box;

use anyhow::Result;
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
        let ratios: Vec<f64> = self
            .partition_update_ns
            .iter()
            .zip(&self.plain_update_ns)
            .map(|(b, a)| b / a)
            .collect();
        format!(
            "partition-ops: {} members in {} partitions, {} rounds\n\
             {:<44}{:>10.0} ns (rounds {:?})\n\
             {:<44}{:>10.0} ns (rounds {:?})\n\
             {:<44}{:>10.3} (rounds {:?})\n\
             {:<44}{:>10.0} ns\n{:<44}{:>10.0} ns\n{:<44}{:>10.0} ns\n\
             {:<44}{:>10.0} ns\n{:<44}{:>10.0} ns\n{:<44}{:>10.2}\n",
            self.members,
            self.partitions,
            ratios.len(),
            "update, plain board (median)",
            median(&self.plain_update_ns),
            rounded(&self.plain_update_ns),
            "update naming its partition (median)",
            median(&self.partition_update_ns),
            rounded(&self.partition_update_ns),
            "ratio, partition / plain (median)",
            median(&ratios),
            ratios
                .iter()
                .map(|r| (r * 1000.0).round() / 1000.0)
                .collect::<Vec<_>>(),
            "rank on the whole board",
            self.rank_ns,
            "rank in its partition",
            self.partition_rank_ns,
            "partition top-10 page",
            self.partition_top10_ns,
            "partition page of 10 at a random offset",
            self.partition_page_ns,
            "around(5, 5) in its partition",
            self.partition_around_ns,
            "extra bytes per member",
            self.extra_bytes_per_member,
        )
    }

    /// The figures as one JSON object.
    pub fn json(&self) -> serde_json::Value {
        json!({
            "bench": "partition-ops",
            "members": self.members,
            "partitions": self.partitions,
            "plain_update_ns": self.plain_update_ns,
            "partition_update_ns": self.partition_update_ns,
            "rank_ns": self.rank_ns,
            "partition_rank_ns": self.partition_rank_ns,
            "partition_top10_ns": self.partition_top10_ns,
            "partition_page_ns": self.partition_page_ns,
            "partition_around_ns": self.partition_around_ns,
            "extra_bytes_per_member": self.extra_bytes_per_member,
        })
    }
}

fn rounded(v: &[f64]) -> Vec<i64> {
    v.iter().map(|x| x.round() as i64).collect()
}

/// `ops` increments of random members of `r`, each naming its partition when
/// `partitions` > 0; mean ns each.
fn updates(
    r: &mut Ranking,
    rng: &mut Rng,
    members: u64,
    ops: usize,
    partitions: u64,
    clock: &mut i64,
) -> Result<f64> {
    let sample = Sample::draw(rng, members, ops);
    let keys: Vec<String> = (0..partitions).map(key).collect();
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
            partition: (partitions > 0).then(|| keys[(i % partitions) as usize].as_str()),
            team: None,
            hidden: false,
        };
        if black_box(r.submit(&w)).is_err() {
            refused += 1;
        }
    });
    anyhow::ensure!(refused == 0, "{refused} updates were refused");
    Ok(ns)
}

/// The plain board and the partitioned one (member i in partition i mod `p`), and the
/// live bytes the partitions added, per member.
fn boards(members: u64, p: u64, partitions: u32) -> Result<(Ranking, Ranking, f64)> {
    let plain = build(members, 1)?;
    let mut parted = build(members, 1)?.with_partitions(Some(partitions));
    let names: Vec<(String, String)> = (0..members)
        .map(|i| (crate::workload::member(i), key(i % p)))
        .collect();
    let before = alloc::live_bytes();
    parted.load_partitions(names.iter().map(|(m, k)| (m.as_str(), k.as_str())))?;
    let extra = alloc::live_bytes().saturating_sub(before) as f64 / members as f64;
    Ok((plain, parted, extra))
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

/// Builds both boards and times each operation (see the module docs).
pub fn run(members: u64, ops: usize, partitions: u32, rounds: usize) -> Result<PartitionOps> {
    anyhow::ensure!(
        members > 0 && ops > 0 && rounds > 0,
        "members, ops and rounds must be at least 1"
    );
    anyhow::ensure!(
        (1..=photofinish_core::groups::MAX_PARTITIONS).contains(&partitions),
        "--partitions must be 1 to {}",
        photofinish_core::groups::MAX_PARTITIONS
    );
    let p = u64::from(partitions);
    let (mut plain, mut parted, extra) = boards(members, p, partitions)?;
    let mut rng = Rng::new(7);
    let mut clock = members as i64;
    let (mut plain_ns, mut parted_ns) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate which goes first, so an order effect falls on both.
        if round % 2 == 0 {
            plain_ns.push(updates(&mut plain, &mut rng, members, ops, 0, &mut clock)?);
            parted_ns.push(updates(&mut parted, &mut rng, members, ops, p, &mut clock)?);
        } else {
            parted_ns.push(updates(&mut parted, &mut rng, members, ops, p, &mut clock)?);
            plain_ns.push(updates(&mut plain, &mut rng, members, ops, 0, &mut clock)?);
        }
    }
    let [rank_ns, partition_rank_ns, partition_top10_ns, partition_page_ns, partition_around_ns] =
        reads(&parted, &mut rng, members, p, (ops / 10).max(1));
    Ok(PartitionOps {
        members,
        partitions,
        plain_update_ns: plain_ns,
        partition_update_ns: parted_ns,
        partition_rank_ns,
        rank_ns,
        partition_top10_ns,
        partition_page_ns,
        partition_around_ns,
        extra_bytes_per_member: extra,
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
        assert!(m.table().contains("ratio, partition / plain"));
    }
}
