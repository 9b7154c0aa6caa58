//! `board-ops`: what cohorts cost a board (docs/SPEC.md §14). Two boards of `members`
//! 16-byte ids, each written member by member through `Board::submit` (the path every
//! applied write takes): one plain, one with `cohort_size`. Then, over the same random
//! members, the mean time of an update (an `incr`, with its rank) on each, and on the
//! cohort board of a member's cohort answer (`ReadCohort`: its cohort's standings) and
//! of its member answer (`ReadMember`, which carries its cohort rank). Then, on the plain
//! board with 0, 100 and 10,000 members hidden (docs/SPEC.md §15), a member answer, a page
//! of 10 from the middle and an update.

use std::hint::black_box;
use std::time::Instant;

use anyhow::{anyhow, Result};
use photofinish_core::access::Viewer;
use photofinish_core::board::BoardWrite;
use photofinish_core::op::{BoardRead, ReadCohort, ReadMember, ReadPage};
use photofinish_core::view::ReadOptions;
use photofinish_core::{Board, BoardConfig, BoardName, Op, Operands};
use serde_json::json;

use crate::engine_ops::{below, time_each, Sample};
use crate::workload::{member as name, Rng};

/// 2026-11-23T00:00:00Z, µs: every write lands in one period.
const START_US: i64 = 1_795_392_000_000_000;

/// What one run measured.
pub struct BoardOps {
    pub members: u64,
    pub cohort_size: u32,
    pub load_plain_s: f64,
    pub load_cohort_s: f64,
    /// First writes, cohort board over plain: the median of [`FIRST_WRITE_ROUNDS`] paired
    /// rounds, each a fresh load of both (the plain one first, then the cohort one).
    pub first_write_ratio: f64,
    pub update_plain_ns: f64,
    pub update_cohort_ns: f64,
    pub cohort_read_ns: f64,
    pub member_read_ns: f64,
    /// A league board of as many members (daily, 4 tiers): its period's whole close.
    pub close_s: f64,
    /// Its longest close step (what one `Close` command holds the writer for).
    pub close_max_step_ms: f64,
    /// Its close steps.
    pub close_steps: u32,
    /// The plain board with members hidden: a read's and an update's cost by count.
    pub hidden: Vec<HiddenCost>,
}

/// What hidden members cost the plain board's operations (docs/SPEC.md §15).
pub struct HiddenCost {
    pub hidden: usize,
    pub member_read_ns: f64,
    pub page_read_ns: f64,
    pub update_ns: f64,
}

/// The hidden counts measured: none, a few, the limit.
const HIDDEN_COUNTS: [usize; 3] = [0, 100, photofinish_core::config::MAX_HIDDEN_MEMBERS];

impl BoardOps {
    /// The human table.
    pub fn table(&self) -> String {
        let ratio = self.update_cohort_ns / self.update_plain_ns;
        let mut out = format!(
            "board-ops: {} members, cohorts of {}, one thread\n",
            self.members, self.cohort_size
        );
        let mut row = |what: &str, v: String| out += &format!("{what:<50} {v:>14}\n");
        row(
            "load, plain (one write each)",
            format!("{:.2} s", self.load_plain_s),
        );
        row(
            "load, cohorts (one write each)",
            format!("{:.2} s", self.load_cohort_s),
        );
        row(
            &format!("first writes, cohorts / plain (median of {FIRST_WRITE_ROUNDS} pairs)"),
            format!("{:.3}x", self.first_write_ratio),
        );
        row("update, plain", format!("{:.1} ns", self.update_plain_ns));
        row(
            "update, cohorts",
            format!("{:.1} ns ({ratio:.3}x)", self.update_cohort_ns),
        );
        row(
            "a member's cohort (standings)",
            format!("{:.1} ns", self.cohort_read_ns),
        );
        row(
            "a member (with its cohort rank)",
            format!("{:.1} ns", self.member_read_ns),
        );
        row(
            &format!("league close, whole period ({} steps)", self.close_steps),
            format!("{:.3} s", self.close_s),
        );
        row(
            "league close, longest step",
            format!("{:.1} ms", self.close_max_step_ms),
        );
        for h in &self.hidden {
            row(
                &format!("{} hidden: member / page of 10 / update", h.hidden),
                format!(
                    "{:.0} / {:.0} / {:.0} ns",
                    h.member_read_ns, h.page_read_ns, h.update_ns
                ),
            );
        }
        out
    }

    /// The one-line JSON form.
    pub fn json(&self) -> serde_json::Value {
        json!({
            "members": self.members,
            "cohort_size": self.cohort_size,
            "load_plain_s": self.load_plain_s,
            "load_cohort_s": self.load_cohort_s,
            "first_write_ratio": self.first_write_ratio,
            "update_plain_ns": self.update_plain_ns,
            "update_cohort_ns": self.update_cohort_ns,
            "cohort_read_ns": self.cohort_read_ns,
            "member_read_ns": self.member_read_ns,
            "close_s": self.close_s,
            "close_max_step_ms": self.close_max_step_ms,
            "close_steps": self.close_steps,
            "hidden": self.hidden.iter().map(|h| json!({
                "hidden": h.hidden,
                "member_read_ns": h.member_read_ns,
                "page_read_ns": h.page_read_ns,
                "update_ns": h.update_ns,
            })).collect::<Vec<_>>(),
        })
    }
}

pub(crate) fn write<'a>(member: &'a str, value: i64, at_us: i64) -> BoardWrite<'a> {
    BoardWrite {
        member,
        op: Some(Op::Incr),
        values: Operands::one(value),
        at_us,
        period_us: None,
        metadata: None,
        over_budget: None,
        partition: None,
        team: None,
    }
}

/// A board of `members`, each written once with a score from 0..1,000,000; seconds taken.
pub(crate) fn load(config: BoardConfig, members: u64) -> Result<(Board, f64)> {
    let mut b = Board::checked(config).map_err(|e| anyhow!("{e}"))?;
    let mut rng = Rng::new(42);
    let start = Instant::now();
    for i in 0..members {
        let m = name(i);
        let v = below(&mut rng, 1_000_000) as i64;
        b.submit(&write(&m, v, START_US + i as i64))
            .map_err(|e| anyhow!("{e}"))?;
    }
    Ok((b, start.elapsed().as_secs_f64()))
}

/// Paired rounds of [`first_write_ratio`]: the machine's noise is ±20% between runs.
const FIRST_WRITE_ROUNDS: usize = 5;

/// The median over paired rounds of (cohort board's load / plain board's load), each a
/// fresh board of `members` first writes, the two loaded back to back.
fn first_write_ratio(members: u64, cohort_size: u32) -> Result<f64> {
    let mut ratios = Vec::with_capacity(FIRST_WRITE_ROUNDS);
    for _ in 0..FIRST_WRITE_ROUNDS {
        let (plain, plain_s) = load(BoardConfig::default(), members)?;
        drop(plain);
        let cohorts = BoardConfig {
            cohort_size: Some(cohort_size),
            ..BoardConfig::default()
        };
        let (cohort, cohort_s) = load(cohorts, members)?;
        drop(cohort);
        ratios.push(cohort_s / plain_s);
    }
    ratios.sort_by(f64::total_cmp);
    Ok(ratios[FIRST_WRITE_ROUNDS / 2])
}

/// A daily league board of `members` in cohorts of `cohort_size` (4 tiers, a tenth of
/// each cohort up and a tenth down), its period closed step by step as the closer does:
/// (whole close in seconds, longest step in ms, steps).
fn league_close(members: u64, cohort_size: u32) -> Result<(f64, f64, u32)> {
    let movers = (cohort_size / 10).max(1).min(cohort_size / 2);
    let config = BoardConfig {
        reset: photofinish_core::Reset::Daily,
        cohort_size: Some(cohort_size),
        league: Some(photofinish_core::league::League {
            tiers: ["bronze", "silver", "gold", "diamond"]
                .map(String::from)
                .to_vec(),
            promote: movers,
            demote: movers,
        }),
        ..BoardConfig::default()
    };
    let (mut b, _) = load(config, members)?;
    let after = START_US + 2 * 86_400_000_000;
    let (mut steps, mut longest) = (0u32, 0f64);
    let start = Instant::now();
    loop {
        let t = Instant::now();
        let Some(step) = b.close_step(after, photofinish_core::league::CLOSE_STEP_MEMBERS as usize)
        else {
            anyhow::bail!("the league's period owed no close");
        };
        longest = longest.max(t.elapsed().as_secs_f64() * 1e3);
        steps += 1;
        if step.done {
            break;
        }
    }
    Ok((start.elapsed().as_secs_f64(), longest, steps))
}

/// Times `ops` updates on `b` over `sample`; the clock goes on from `clock`.
fn updates(b: &mut Board, sample: &Sample, rng: &mut Rng, clock: &mut i64) -> f64 {
    time_each(sample, |m| {
        *clock += 1;
        let by = 1 + below(rng, 100) as i64;
        black_box(b.submit(&write(m, by, *clock)).ok());
    })
}

/// On `b` (`members` members), for each of [`HIDDEN_COUNTS`]: that many random members
/// hidden, then a member answer, a page of 10 from the middle and an update, each over
/// `reads`.
fn hidden_costs(
    b: &mut Board,
    members: u64,
    reads: &Sample,
    rng: &mut Rng,
    clock: &mut i64,
) -> Result<Vec<HiddenCost>> {
    let board = BoardName::parse("bench").map_err(|e| anyhow!("{e}"))?;
    let mut out = Vec::new();
    for &hidden in &HIDDEN_COUNTS {
        while b.hidden_count() < hidden.min(members as usize) {
            b.hide(&name(below(rng, members)), *clock)
                .map_err(|e| anyhow!("{e}"))?;
        }
        let now = *clock + 1;
        let member_read_ns = time_each(reads, |m| {
            let op = ReadMember {
                board: board.clone(),
                member: m.to_owned(),
                options: ReadOptions::default(),
            };
            black_box(op.read(b, now, &Viewer::Everyone).ok());
        });
        let page_read_ns = time_each(reads, |_| {
            let op = ReadPage {
                board: board.clone(),
                offset: members / 2,
                limit: 10,
                options: ReadOptions::default(),
            };
            black_box(op.read(b, now, &Viewer::Everyone).ok());
        });
        let update_ns = updates(b, reads, rng, clock);
        out.push(HiddenCost {
            hidden,
            member_read_ns,
            page_read_ns,
            update_ns,
        });
    }
    Ok(out)
}

/// Builds both boards and times each operation over `ops` random members.
pub fn run(members: u64, ops: usize, cohort_size: u32) -> Result<BoardOps> {
    anyhow::ensure!(
        members > 0 && ops > 0,
        "--members and --ops must be at least 1"
    );
    let (mut plain, load_plain_s) = load(BoardConfig::default(), members)?;
    let cohorts = BoardConfig {
        cohort_size: Some(cohort_size),
        ..BoardConfig::default()
    };
    let (mut cohort, load_cohort_s) = load(cohorts, members)?;
    let mut rng = Rng::new(7);
    let sample = Sample::draw(&mut rng, members, ops);
    // Two rounds, the boards taking turns, so that neither runs only on a warm machine.
    let start = START_US + members as i64;
    let (mut c1, mut c2) = (start, start);
    let (mut update_plain_ns, mut update_cohort_ns) = (0.0, 0.0);
    for _ in 0..2 {
        update_plain_ns += updates(&mut plain, &sample, &mut rng, &mut c1) / 2.0;
        update_cohort_ns += updates(&mut cohort, &sample, &mut rng, &mut c2) / 2.0;
    }
    let clock = c1.max(c2) + 1;
    let board = BoardName::parse("bench").map_err(|e| anyhow!("{e}"))?;
    let reads = Sample::draw(&mut rng, members, ops / 10 + 1);
    let cohort_read_ns = time_each(&reads, |m| {
        let op = ReadCohort {
            board: board.clone(),
            member: m.to_owned(),
            options: ReadOptions::default(),
        };
        black_box(op.read(&cohort, clock, &Viewer::Everyone).ok());
    });
    let member_read_ns = time_each(&reads, |m| {
        let op = ReadMember {
            board: board.clone(),
            member: m.to_owned(),
            options: ReadOptions::default(),
        };
        black_box(op.read(&cohort, clock, &Viewer::Everyone).ok());
    });
    let mut c3 = clock;
    let hidden = hidden_costs(&mut plain, members, &reads, &mut rng, &mut c3)?;
    let (close_s, close_max_step_ms, close_steps) = league_close(members, cohort_size)?;
    Ok(BoardOps {
        hidden,
        close_s,
        close_max_step_ms,
        close_steps,
        members,
        cohort_size,
        load_plain_s,
        load_cohort_s,
        first_write_ratio: first_write_ratio(members, cohort_size)?,
        update_plain_ns,
        update_cohort_ns,
        cohort_read_ns,
        member_read_ns,
    })
}
