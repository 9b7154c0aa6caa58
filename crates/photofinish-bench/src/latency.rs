//! `photofinish-bench memory-latency`: what one cache miss costs on this machine, the unit
//! the engine's times are made of (issue 21, docs/bench-history.md §13).
//!
//! A buffer of `mib` MiB holds one value per 64-byte line; the values form one random cycle
//! through every line (Sattolo's shuffle), so each load's address is the value the last
//! load returned — a dependent chain the CPU cannot run ahead of, as a lookup that reads a
//! slot, then the record the slot names, then the leaf the record's key leads to. Timed
//! twice: one chain (the latency of a dependent miss), and four chains interleaved (what
//! independent misses cost each when they overlap — what prefetching a batch buys). The
//! buffer is ordinary heap memory, so it has the pages the engine's memory has.

use std::hint::black_box;
use std::time::Instant;

use crate::workload::Rng;

/// Bytes per cache line.
const LINE_BYTES: usize = 64;
/// u64 values per cache line: one value of each line is used.
const PER_LINE: usize = LINE_BYTES / 8;
/// Independent chains of the overlapped timing.
const CHAINS: usize = 4;

/// One buffer size's timings.
#[derive(Debug, Clone, Copy)]
pub struct Latency {
    /// Buffer size.
    pub mib: usize,
    /// Nanoseconds per load of one dependent chain.
    pub dependent_ns: f64,
    /// Nanoseconds per load, four chains interleaved.
    pub overlapped_ns: f64,
}

/// Times `loads` loads over a buffer of `mib` MiB (at least two lines: a cycle needs them).
pub fn run(mib: usize, loads: usize) -> Latency {
    let lines = (mib << 20).div_ceil(LINE_BYTES).max(2);
    // Sattolo's shuffle: a random permutation that is one cycle through every line.
    let mut order: Vec<u32> = (0..lines as u32).collect();
    let mut rng = Rng::new(11);
    for i in (1..lines).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        order.swap(i, j);
    }
    let mut next = vec![0u64; lines * PER_LINE];
    for i in 0..lines {
        let (from, to) = (order[i] as usize, order[(i + 1) % lines] as usize);
        next[from * PER_LINE] = (to * PER_LINE) as u64;
    }
    drop(order);
    let step = |p: u64| next[p as usize];

    let mut p = 0u64;
    let start = Instant::now();
    for _ in 0..loads {
        p = step(p);
    }
    let dependent_ns = start.elapsed().as_nanos() as f64 / loads.max(1) as f64;
    black_box(p);

    // Chains started at different points of the cycle: their loads do not wait on each other.
    let mut q = [0u64; CHAINS];
    for c in 1..CHAINS {
        q[c] = (0..lines / CHAINS).fold(q[c - 1], |p, _| step(p));
    }
    let rounds = loads / CHAINS;
    let start = Instant::now();
    for _ in 0..rounds {
        for p in &mut q {
            *p = step(*p);
        }
    }
    let overlapped_ns = start.elapsed().as_nanos() as f64 / (rounds * CHAINS).max(1) as f64;
    black_box(q);
    Latency {
        mib,
        dependent_ns,
        overlapped_ns,
    }
}

/// The table a person reads, one row per size.
pub fn table(rows: &[Latency]) -> String {
    let mut out = format!(
        "{:>10}  {:>22}  {:>26}\n",
        "buffer", "dependent load", "4 chains, per load"
    );
    for r in rows {
        out += &format!(
            "{:>6} MiB  {:>19.1} ns  {:>23.1} ns\n",
            r.mib, r.dependent_ns, r.overlapped_ns
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run over a small buffer returns positive, finite times and a row for its size.
    #[test]
    fn a_small_buffer_answers_positive_times() {
        let _serial = crate::alloc::serial();
        let l = run(1, 200_000);
        assert!(l.dependent_ns > 0.0 && l.overlapped_ns > 0.0, "{l:?}");
        assert!(
            l.dependent_ns.is_finite() && l.overlapped_ns.is_finite(),
            "{l:?}"
        );
        assert!(table(&[l]).contains("1 MiB"));
    }
}
