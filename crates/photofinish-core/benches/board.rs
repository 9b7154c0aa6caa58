//! Per-write cost of a board on top of its ranking: resolving the period and checking
//! retention, for a board that never resets, a daily board and a weekly board keeping 100
//! periods. 100,000 members, every write in the current period.
//!
//! Run: `cargo bench -p photofinish-core --bench board`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use photofinish_core::board::BoardWrite;
use photofinish_core::{Board, BoardConfig, Reset};

/// 2026-11-22T12:00:00Z
const NOON: i64 = 1_795_348_800_000_000;

fn bench(c: &mut Criterion) {
    let names: Vec<String> = (0..100_000).map(|i| format!("player{i:010}")).collect();
    let mut g = c.benchmark_group("board write");
    g.sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for (label, reset, retention) in [
        ("never", Reset::Never, 8),
        ("daily, retention 8", Reset::Daily, 8),
        ("weekly, retention 100", Reset::Weekly, 100),
    ] {
        let config = BoardConfig {
            reset,
            retention,
            timezone: "Europe/Berlin".into(),
            ..BoardConfig::default()
        };
        let mut board = Board::checked(config).expect("board");
        let mut i = 0usize;
        g.bench_function(label, |b| {
            b.iter(|| {
                i += 1;
                let w = BoardWrite {
                    member: &names[i % names.len()],
                    op: None,
                    values: photofinish_core::Operands::one(1),
                    at_us: NOON + i as i64,
                    period_us: None,
                    metadata: None,
                    over_budget: None,
                    partition: None,
                    team: None,
                };
                black_box(board.submit(&w).ok())
            })
        });
    }
    g.finish();
}

mod group {
    //! criterion's macros generate undocumented functions; they live in this module.
    #![allow(missing_docs)]
    use super::*;
    criterion_group!(benches, bench);
}
criterion_main!(group::benches);
