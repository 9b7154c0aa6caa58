//! `photofinish-bench engine-ops`: the ranking engine alone, one thread, no I/O (issue 21).
//!
//! A board of `members` 16-byte ids (`player0000000000`…) with scores drawn uniformly from
//! 0..1,000,000 — so at 10M about ten members share each score — is built in bulk (the
//! path snapshot loading and imports take), then each operation is timed over `ops`
//! members drawn at random, so every operation meets the cache misses a real board's
//! traffic does rather than a warm working set. The names of the drawn members are made
//! before the clock starts and read in order, so the loop times the engine, not the
//! formatting. Bytes per member are the allocator's live bytes after the build, divided by
//! the members (the counting allocator of [`crate::alloc`]). Last, the board is rebuilt from
//! its entries in rank order — the in-memory part of a restart from a snapshot.
//!
//! `--columns N` (docs/SPEC.md §13) makes it a board of N columns: the first as above, the
//! others drawn from 0..1,000 (so the first column's ties are decided by the others), the
//! directions desc, desc, asc, desc, desc; an update then adds to every column.

use std::hint::black_box;
use std::time::Instant;

use anyhow::{Context, Result};
use photofinish_core::ranking::{RankingBuilder, SavedEntry};
use photofinish_core::{Column, Op, Operands, Order, RankStyle, Ranking, Scores, Shape, Write};
use serde_json::json;

use crate::alloc;
use crate::workload::{member as name, Rng};

/// Width of every member id.
const NAME_BYTES: usize = 16;

/// What one run measured: mean nanoseconds per operation, build seconds, bytes per member.
#[derive(Debug, Clone, Copy)]
pub struct EngineOps {
    /// Members on the board.
    pub members: u64,
    /// Columns it ranks by.
    pub columns: usize,
    /// `incr` of a random member by 1..=100, answer with its new ordinal rank.
    pub update_ns: f64,
    /// Ordinal rank of a random member.
    pub rank_ordinal_ns: f64,
    /// Competition rank of a random member.
    pub rank_competition_ns: f64,
    /// Dense rank of a random member.
    pub rank_dense_ns: f64,
    /// The top-10 page with competition ranks.
    pub top10_ns: f64,
    /// around(5, 5) of a random member, competition ranks.
    pub around_ns: f64,
    /// Ordinal ranks of 16 random members asked for in one call (`members_of`, the
    /// batch a `members` query or a pipeline brings), per member.
    pub batch16_ns: f64,
    /// Seconds to build the board in bulk from unsorted entries.
    pub build_s: f64,
    /// Seconds to rebuild it from its entries in rank order: what a restart does in memory
    /// once a snapshot is read (records, member table, index bottom-up; no sort).
    pub reload_s: f64,
    /// Seconds to copy it whole in memory: what a snapshot stalls the writes for (the
    /// store copies the live state between two commits, then writes the copy out).
    pub copy_s: f64,
    /// Live heap bytes per member after the build, as the allocator counts them.
    pub bytes_per_member: f64,
}

impl EngineOps {
    /// The table a person reads.
    pub fn table(&self) -> String {
        let rows = [
            (
                "update (incr of a random member, with its rank)",
                self.update_ns,
            ),
            ("rank, ordinal", self.rank_ordinal_ns),
            ("rank, competition", self.rank_competition_ns),
            ("rank, dense", self.rank_dense_ns),
            ("top-10 page", self.top10_ns),
            ("around(5, 5)", self.around_ns),
            (
                "rank, ordinal, 16 members a call (per member)",
                self.batch16_ns,
            ),
        ];
        let mut out = format!(
            "engine-ops: {} members, {} column{}, one thread\n",
            self.members,
            self.columns,
            if self.columns == 1 { "" } else { "s" }
        );
        for (label, ns) in rows {
            out += &format!(
                "{label:<50} {:>9.1} ns  {:>11.0} ops/s\n",
                ns,
                1e9 / ns.max(f64::MIN_POSITIVE)
            );
        }
        out += &format!("{:<50} {:>9.2} s\n", "build in bulk", self.build_s);
        out += &format!(
            "{:<50} {:>9.2} s\n",
            "rebuild from rank order (a restart, in memory)", self.reload_s
        );
        out += &format!(
            "{:<50} {:>9.3} s\n",
            "copy in memory (a snapshot's pause)", self.copy_s
        );
        out += &format!(
            "{:<50} {:>9.1} B (allocator-counted)\n",
            "bytes per member", self.bytes_per_member
        );
        out
    }

    /// The one-line JSON form, with the field names issue 21 lists.
    pub fn json(&self) -> serde_json::Value {
        json!({
            "members": self.members,
            "columns": self.columns,
            "update_ns": self.update_ns,
            "rank_ordinal_ns": self.rank_ordinal_ns,
            "rank_competition_ns": self.rank_competition_ns,
            "rank_dense_ns": self.rank_dense_ns,
            "top10_ns": self.top10_ns,
            "around_ns": self.around_ns,
            "batch16_ns": self.batch16_ns,
            "build_s": self.build_s,
            "reload_s": self.reload_s,
            "copy_s": self.copy_s,
            "bytes_per_member": self.bytes_per_member,
        })
    }
}

/// Uniform in `0..n` (`n` ≥ 1), from the harness's generator.
pub(crate) fn below(rng: &mut Rng, n: u64) -> u64 {
    rng.next_u64() % n
}

/// `count` random members' ids, back to back in one string (16 bytes each).
pub(crate) struct Sample(String);

impl Sample {
    pub(crate) fn draw(rng: &mut Rng, members: u64, count: usize) -> Self {
        let mut s = String::with_capacity(count * NAME_BYTES);
        for _ in 0..count {
            s.push_str(&name(below(rng, members)));
        }
        Self(s)
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.0.len() / NAME_BYTES).map(|i| &self.0[i * NAME_BYTES..(i + 1) * NAME_BYTES])
    }
}

/// Mean nanoseconds per call of `f` over the sample.
pub(crate) fn time_each(sample: &Sample, mut f: impl FnMut(&str)) -> f64 {
    let start = Instant::now();
    let mut n = 0u64;
    for member in sample.iter() {
        f(member);
        n += 1;
    }
    start.elapsed().as_nanos() as f64 / n.max(1) as f64
}

/// The shape of a board of `columns` columns (see the module docs).
fn shape(columns: usize) -> Shape {
    if columns == 1 {
        return Shape::single(Order::Desc, Op::Incr);
    }
    let cols: Vec<Column> = (0..columns)
        .map(|i| Column {
            order: Some(if i % 3 == 2 { Order::Asc } else { Order::Desc }),
            ..Column::named(&format!("c{i}"))
        })
        .collect();
    Shape::new(Order::Desc, Op::Incr, &cols)
}

/// A member's scores: the first column from 0..`first`, the others from 0..1,000.
fn draw(rng: &mut Rng, columns: usize, first: u64) -> Scores {
    let mut v = [0i64; photofinish_core::columns::MAX_COLUMNS];
    v[0] = below(rng, first) as i64;
    for x in v.iter_mut().take(columns).skip(1) {
        *x = below(rng, 1_000) as i64;
    }
    Scores::new(&v[..columns]).unwrap_or(Scores::one(v[0]))
}

/// Builds the board: `members` entries pushed in member order (not rank order), then the
/// builder sorts, fills the member table and builds the index bottom-up.
pub(crate) fn build(members: u64, columns: usize) -> Result<Ranking> {
    let mut rng = Rng::new(42);
    let capacity = usize::try_from(members).unwrap_or(usize::MAX);
    let mut b = RankingBuilder::new(shape(columns), capacity);
    for i in 0..members {
        let member = name(i);
        b.push(SavedEntry {
            member: &member,
            scores: draw(&mut rng, columns, 1_000_000),
            reached_at_us: i as i64,
            seq: i + 1,
            metadata: None,
        })?;
    }
    Ok(b.finish()?)
}

/// Builds a board of `members` and times every operation over `ops` random members.
pub fn run(members: u64, ops: usize, columns: usize) -> Result<EngineOps> {
    anyhow::ensure!(members > 0, "--members must be at least 1");
    anyhow::ensure!(ops > 0, "--ops must be at least 1");
    anyhow::ensure!(
        (1..=photofinish_core::columns::MAX_COLUMNS).contains(&columns),
        "--columns must be 1 to {}",
        photofinish_core::columns::MAX_COLUMNS
    );
    let before = alloc::live_bytes();
    let start = Instant::now();
    let mut r = build(members, columns).context("building the board")?;
    let build_s = start.elapsed().as_secs_f64();
    let bytes_per_member = alloc::live_bytes().saturating_sub(before) as f64 / members as f64;

    let mut rng = Rng::new(7);
    let update_ns = time_updates(&mut r, &mut rng, members, ops, columns)?;

    // A fresh sample per reading, so none of them runs on what the last one left in cache.
    let mut rank = |style| {
        let sample = Sample::draw(&mut rng, members, ops);
        time_each(&sample, |member| {
            black_box(r.member(member, style));
        })
    };
    let rank_ordinal_ns = rank(RankStyle::Ordinal);
    let rank_competition_ns = rank(RankStyle::Competition);
    let rank_dense_ns = rank(RankStyle::Dense);
    let top10_ns = time_each(&Sample::draw(&mut rng, members, ops), |_| {
        black_box(r.page(0, 10, RankStyle::Competition));
    });
    let around_ns = time_each(&Sample::draw(&mut rng, members, ops), |member| {
        black_box(r.around(member, 5, 5, RankStyle::Competition));
    });
    let batch16_ns = batch16(&r, &Sample::draw(&mut rng, members, ops));
    let reload_s = reload(&r)?;
    let copy_s = copy(&r)?;
    Ok(EngineOps {
        members,
        columns,
        update_ns,
        rank_ordinal_ns,
        rank_competition_ns,
        rank_dense_ns,
        top10_ns,
        around_ns,
        batch16_ns,
        build_s,
        reload_s,
        copy_s,
        bytes_per_member,
    })
}

/// The mean time of an update (an increment and its rank) of members drawn at random.
fn time_updates(
    r: &mut Ranking,
    rng: &mut Rng,
    members: u64,
    ops: usize,
    columns: usize,
) -> Result<f64> {
    let sample = Sample::draw(rng, members, ops);
    let mut clock = members as i64;
    let mut refused = 0u64;
    let update_ns = time_each(&sample, |member| {
        clock += 1;
        // 1..=100 to the first column (so every update moves the member), 0..1,000 to
        // the others.
        let by = draw(rng, columns, 100);
        let mut values = Operands::all(&by);
        values.set(0, 1 + by.first());
        let w = Write {
            member,
            op: Some(Op::Incr),
            values,
            at_us: clock,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
        };
        match black_box(r.submit(&w)) {
            Ok(_) => {}
            Err(_) => refused += 1,
        }
    });
    // A refused update costs less than a real one: a timing with any would flatter.
    anyhow::ensure!(refused == 0, "{refused} updates were refused");
    Ok(update_ns)
}

/// Mean nanoseconds per member of `members_of` over the sample, 16 members a call (the
/// last call takes what is left; the names are copied into the calls' lists before the
/// clock starts).
fn batch16(r: &Ranking, sample: &Sample) -> f64 {
    const PER_CALL: usize = 16;
    let names: Vec<String> = sample.iter().map(str::to_owned).collect();
    let start = Instant::now();
    for call in names.chunks(PER_CALL) {
        let (entries, missing) = r.members_of(call, RankStyle::Ordinal);
        black_box((entries, missing));
    }
    start.elapsed().as_nanos() as f64 / names.len().max(1) as f64
}

/// Seconds to rebuild `r` from its entries in rank order, as a snapshot holds them (the
/// entries are copied out first, untimed; reading and decoding the file is not counted).
fn reload(r: &Ranking) -> Result<f64> {
    let mut names = String::new();
    let mut saved: Vec<(usize, usize, Scores, i64, u64)> = Vec::new();
    r.for_each_entry(|member, score, reached_at_us, seq, _| {
        saved.push((names.len(), member.len(), *score, reached_at_us, seq));
        names.push_str(member);
    });
    let start = Instant::now();
    let rebuilt = Ranking::from_sorted(
        *r.shape(),
        saved.len(),
        saved.iter().map(|&(at, len, score, reached_at_us, seq)| {
            Ok(SavedEntry {
                member: &names[at..at + len],
                scores: score,
                reached_at_us,
                seq,
                metadata: None,
            })
        }),
    )
    .context("rebuilding from rank order")?;
    let took = start.elapsed().as_secs_f64();
    anyhow::ensure!(rebuilt.len() == r.len(), "the rebuild lost members");
    Ok(took)
}

/// Seconds to copy `r` whole (`Clone`), fresh memory included.
fn copy(r: &Ranking) -> Result<f64> {
    let start = Instant::now();
    let copied = black_box(r.clone());
    let took = start.elapsed().as_secs_f64();
    anyhow::ensure!(copied.len() == r.len(), "the copy lost members");
    Ok(took)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small run measures every operation on a board that really holds its members:
    /// the bulk build ranks them, and the updates changed scores.
    #[test]
    fn a_small_run_measures_every_operation() {
        let _serial = crate::alloc::serial();
        let m = run(5_000, 2_000, 1).expect("run");
        assert_eq!(m.members, 5_000);
        for v in [
            m.update_ns,
            m.rank_ordinal_ns,
            m.rank_competition_ns,
            m.rank_dense_ns,
            m.top10_ns,
            m.around_ns,
            m.batch16_ns,
            m.reload_s,
            m.copy_s,
        ] {
            assert!(v.is_finite() && v > 0.0, "{m:?}");
        }
        // 16-byte names inline in 40-byte records, plus table and tree: well over 40 B
        // (the crate's other allocating tests wait: `alloc::serial`).
        assert!(m.bytes_per_member > 40.0, "{m:?}");
        let line = m.json().to_string();
        for field in [
            "update_ns",
            "rank_dense_ns",
            "build_s",
            "reload_s",
            "copy_s",
            "bytes_per_member",
        ] {
            assert!(line.contains(field), "{line}");
        }
    }

    #[test]
    fn the_build_ranks_every_member() {
        let _serial = crate::alloc::serial();
        let r = build(1_000, 1).expect("build");
        assert_eq!(r.len(), 1_000);
        r.check_invariants();
        let top = r.page(0, 1_000, RankStyle::Ordinal);
        assert!(top.windows(2).all(|w| w[0].score() >= w[1].score()));
        assert!(reload(&r).expect("reload") > 0.0);
    }

    /// A board of three columns: ranked by the tuple, each column in its direction, and a
    /// run over it measures as a one-column one does, with the tail's bytes counted.
    #[test]
    fn a_three_column_board_ranks_by_the_tuple() {
        let _serial = crate::alloc::serial();
        let r = build(2_000, 3).expect("build");
        r.check_invariants();
        let top = r.page(0, 2_000, RankStyle::Ordinal);
        let key = |e: &photofinish_core::Entry| {
            let s = e.scores.as_slice();
            (-i128::from(s[0]), -i128::from(s[1]), i128::from(s[2]))
        };
        assert!(top.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
        let m = run(2_000, 1_000, 3).expect("run");
        assert_eq!(m.columns, 3);
        assert!(m.update_ns > 0.0 && m.bytes_per_member > 56.0, "{m:?}");
    }
}
