//! `rewards-ops`: what rewards cost a board (docs/SPEC.md §16). A daily board of `members`
//! written member by member through `Board::submit`, twice: without reward rows, and with
//! one row paying ranks 1 to `grants`. The period ends; each board's close steps
//! (`Board::close_step`, what the closer's `Close` commands apply, each looking at up to
//! `CLOSE_STEP_MEMBERS` members) are timed: the difference in their sum is what the
//! grants add to the close, and the longest step is how long the close holds the writer
//! at once (every other board's writes wait for it on the embedded store). Beside
//! it, on the same board: the mean time of an update of a random member (an `incr`, with
//! its rank) in the full period before it ends, and of a claim (`Board::claim`, each grant
//! once, in a random order) after.

use std::hint::black_box;
use std::time::Instant;

use anyhow::{anyhow, ensure, Result};
use photofinish_core::league::CLOSE_STEP_MEMBERS;
use photofinish_core::rewards::RewardRow;
use photofinish_core::{Board, BoardConfig, Reset};
use serde_json::{json, Value};

use crate::board_ops::write;
use crate::engine_ops::below;
use crate::workload::{member as name, Rng};

/// 2026-11-23T00:00:00Z, µs: every load write lands in period 2026-11-23.
const START_US: i64 = 1_795_392_000_000_000;
const DAY_US: i64 = 86_400_000_000;
/// Claims and updates timed.
const SAMPLES: u64 = 100_000;

/// What one run measured.
pub struct RewardsOps {
    pub members: u64,
    pub grants: u64,
    /// The close step of the board without rows, ms (nothing to grant: it owes none).
    pub close_plain_ms: f64,
    /// The close steps that made the grants, ms in all.
    pub close_granting_ms: f64,
    /// The longest of them, ms.
    pub longest_step_ms: f64,
    /// How many.
    pub steps: u32,
    pub claim_ns: f64,
    pub update_ns: f64,
}

impl RewardsOps {
    /// The human table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "rewards-ops: a daily board of {} members, one row paying ranks 1 to {}, in process\n",
            self.members, self.grants
        );
        let mut row = |what: &str, v: String| out += &format!("{what:<52} {v:>14}\n");
        row(
            "close step, no reward rows",
            format!("{:.1} ms", self.close_plain_ms),
        );
        row(
            &format!("close steps making the grants ({})", self.steps),
            format!("{:.1} ms", self.close_granting_ms),
        );
        row(
            "the longest of them",
            format!("{:.1} ms", self.longest_step_ms),
        );
        row(
            "added to the close by the grants",
            format!("{:.1} ms", self.close_granting_ms - self.close_plain_ms),
        );
        row("a claim (Board::claim)", format!("{:.0} ns", self.claim_ns));
        row(
            "an update on the same board (incr)",
            format!("{:.0} ns", self.update_ns),
        );
        out
    }

    /// The one-line JSON form.
    pub fn json(&self) -> Value {
        json!({
            "members": self.members,
            "grants": self.grants,
            "close_plain_ms": self.close_plain_ms,
            "close_granting_ms": self.close_granting_ms,
            "longest_step_ms": self.longest_step_ms,
            "steps": self.steps,
            "claim_ns": self.claim_ns,
            "update_ns": self.update_ns,
        })
    }
}

/// A daily board paying ranks 1 to `grants` (none when 0) of `members`, each written once.
fn load(members: u64, grants: u64) -> Result<Board> {
    let mut config = BoardConfig {
        reset: Reset::Daily,
        ..BoardConfig::default()
    };
    if grants > 0 {
        config.settings.rewards = vec![RewardRow {
            from: Some(1),
            to: Some(grants),
            top_hundredths: None,
            reward: "coin".into(),
            amount: 10,
            tier: None,
        }];
    }
    Ok(crate::board_ops::load(config, members)?.0)
}

/// The board's close steps after its period ended: ms in all, the longest, how many.
fn close(b: &mut Board, at_us: i64) -> (f64, f64, u32) {
    let (mut all, mut longest, mut steps) = (0.0, 0.0f64, 0);
    loop {
        let t = Instant::now();
        let step = black_box(b.close_step(at_us, CLOSE_STEP_MEMBERS as usize));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if step.is_none() {
            return (all, longest, steps);
        }
        (all, longest, steps) = (all + ms, longest.max(ms), steps + 1);
    }
}

/// Runs the scenario. See the module docs.
pub fn run(members: u64, grants: u64) -> Result<RewardsOps> {
    ensure!(
        grants > 0 && grants <= members,
        "--grants must be 1 to --members"
    );
    let after = START_US + DAY_US + 1;
    let mut plain = load(members, 0)?;
    let (close_plain_ms, _, _) = close(&mut plain, after);
    drop(plain);
    let mut b = load(members, grants)?;
    // Updates of random members of the full period, before it ends.
    let mut rng = Rng::new(7);
    let samples = SAMPLES.min(grants) as usize;
    let updates: Vec<String> = (0..samples)
        .map(|_| name(below(&mut rng, members)))
        .collect();
    let t = Instant::now();
    for (i, m) in updates.iter().enumerate() {
        let at = START_US + members as i64 + i as i64;
        black_box(b.submit(&write(m, 1, at)).map_err(|e| anyhow!("{e}"))?);
    }
    let update_ns = t.elapsed().as_nanos() as f64 / samples as f64;
    let (close_granting_ms, longest_step_ms, steps) = close(&mut b, after);
    let period = "2026-11-23";
    let made = b
        .rewards()
        .period(period)
        .map(|(_, g)| g.grants.len() as u64);
    ensure!(
        made == Some(grants),
        "the close made {made:?} grants, not {grants}"
    );
    // Each grant claimed once, in a random order; the same number of updates.
    let owners: Vec<String> = b.rewards().period(period).map_or_else(Vec::new, |(_, g)| {
        g.grants.iter().map(|g| g.member.clone()).collect()
    });
    let mut order: Vec<u64> = (1..=grants).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, below(&mut rng, i as u64 + 1) as usize);
    }
    let t = Instant::now();
    for &n in &order[..samples] {
        let owner = &owners[(n - 1) as usize];
        let claimed = b.claim("b", (period, n), owner, "bench", after + 1);
        ensure!(claimed.is_ok(), "claim {n}: {claimed:?}");
    }
    let claim_ns = t.elapsed().as_nanos() as f64 / samples as f64;
    Ok(RewardsOps {
        members,
        grants,
        close_plain_ms,
        close_granting_ms,
        longest_step_ms,
        steps,
        claim_ns,
        update_ns,
    })
}
