//! The questions of docs/SPEC.md §10 on a ranking of 1,000,000 members (scores 0..10,000,
//! so most members share a score with others): a friends set of 100 members
//! (`members_of`), the rank of a score in each style (`rank_of_score`), and thresholds for
//! 10 tiers (`ThresholdQuery::ordinal_ranks` plus one `at` each).
//!
//! Run: `cargo bench -p photofinish-core --bench queries`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use photofinish_core::query::{Percent, ThresholdQuery};
use photofinish_core::{Op, Order, RankStyle, Ranking, Write};

const MEMBERS: u64 = 1_000_000;

fn bench(c: &mut Criterion) {
    let mut r = Ranking::new(photofinish_core::Shape::single(Order::Desc, Op::Incr));
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..MEMBERS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let name = format!("player{i:07}");
        let w = Write {
            member: &name,
            op: Some(Op::Set),
            values: photofinish_core::Operands::one((x % 10_000) as i64),
            at_us: i as i64,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
        };
        r.submit(&w).expect("write");
    }
    let friends: Vec<String> = (0..100)
        .map(|i| format!("player{:07}", (i * 9_973) % MEMBERS))
        .collect();
    let tiers = ThresholdQuery {
        ranks: vec![1, 10, 100, 1_000, 10_000],
        percents: ["0.1", "1", "5", "10", "50"]
            .iter()
            .map(|p| Percent::parse(p).expect("a percentage"))
            .collect(),
    };
    let mut g = c.benchmark_group("queries at 1M members");
    g.sample_size(30)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for style in [RankStyle::Ordinal, RankStyle::Competition, RankStyle::Dense] {
        g.bench_function(format!("friends query of 100, {}", style.as_str()), |b| {
            b.iter(|| black_box(r.members_of(&friends, style)))
        });
    }
    let mut score = 0i64;
    for style in [RankStyle::Ordinal, RankStyle::Competition, RankStyle::Dense] {
        g.bench_function(format!("rank of a score, {}", style.as_str()), |b| {
            b.iter(|| {
                score = (score + 7_919) % 10_000;
                black_box(r.rank_of_scores(&photofinish_core::Scores::one(score), style))
            })
        });
    }
    g.bench_function("thresholds for 10 tiers", |b| {
        b.iter(|| {
            let at: Vec<_> = tiers
                .ordinal_ranks(r.len())
                .into_iter()
                .map(|rank| r.at(rank - 1))
                .collect();
            black_box(tiers.answer(r.len(), at))
        })
    });
    g.finish();
}

mod group {
    //! criterion's macros generate undocumented functions; they live in this module.
    #![allow(missing_docs)]
    use super::*;
    criterion_group!(benches, bench);
}
criterion_main!(group::benches);
