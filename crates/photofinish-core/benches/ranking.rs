//! Single-threaded ranking benchmarks at 1M and 10M members (issue 2), plus build time and
//! allocator-counted bytes per member. Sizes come from `PF_BENCH_SIZES` (comma-separated,
//! default `1000000,10000000`). Member ids are 16 bytes; scores are drawn from 0..1,000,000
//! so that many members share a score, as on real boards.
//!
//! Run: `cargo bench -p photofinish-core --bench ranking`

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use photofinish_core::{Op, Order, RankStyle, Ranking, Write};

/// Counts live heap bytes, so memory per member is measured, not estimated from RSS.
struct Counting;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

// Forwarding to the system allocator is safe; `GlobalAlloc` is an unsafe trait by definition.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// splitmix64: a fast, well-mixed generator with no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A 16-byte member id.
fn member(i: u64) -> String {
    format!("player{i:010}")
}

fn build(n: u64) -> (Ranking, Duration, f64) {
    let before = LIVE_BYTES.load(Ordering::Relaxed);
    let mut rng = Rng(42);
    let start = Instant::now();
    let mut r = Ranking::new(photofinish_core::Shape::single(Order::Desc, Op::Incr));
    for i in 0..n {
        let name = member(i);
        let w = Write {
            member: &name,
            op: Some(Op::Set),
            values: photofinish_core::Operands::one(rng.below(1_000_000) as i64),
            at_us: i as i64,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
        };
        black_box(r.submit(&w).ok());
    }
    let took = start.elapsed();
    let bytes = (LIVE_BYTES.load(Ordering::Relaxed) - before) as f64 / n as f64;
    (r, took, bytes)
}

fn sizes() -> Vec<u64> {
    std::env::var("PF_BENCH_SIZES")
        .unwrap_or_else(|_| "1000000,10000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn bench(c: &mut Criterion) {
    for n in sizes() {
        let (mut r, took, bytes) = build(n);
        println!(
            "build n={n}: {:.2} s ({:.0} inserts/s), {bytes:.1} bytes/member (allocator-counted)",
            took.as_secs_f64(),
            n as f64 / took.as_secs_f64()
        );
        let names: Vec<String> = (0..4096).map(|i| member((i * 2_654_435_761) % n)).collect();
        let mut g = c.benchmark_group(format!("n={n}"));
        g.sample_size(20)
            .measurement_time(Duration::from_secs(4))
            .warm_up_time(Duration::from_secs(1));
        let mut rng = Rng(7);
        let mut clock = n as i64;
        g.bench_function("update incr random member", |b| {
            b.iter(|| {
                let name = member(rng.below(n));
                clock += 1;
                let w = Write {
                    member: &name,
                    op: Some(Op::Incr),
                    values: photofinish_core::Operands::one(1 + rng.below(100) as i64),
                    at_us: clock,
                    metadata: None,
                    partition: None,
                    team: None,
                    hidden: false,
                };
                black_box(r.submit(&w).ok())
            })
        });
        for (label, style) in [
            ("ordinal", RankStyle::Ordinal),
            ("competition", RankStyle::Competition),
            ("dense", RankStyle::Dense),
        ] {
            let mut i = 0;
            g.bench_function(format!("rank {label}"), |b| {
                b.iter(|| {
                    i = (i + 1) % names.len();
                    black_box(r.member(&names[i], style))
                })
            });
        }
        g.bench_function("top-10 page", |b| {
            b.iter(|| black_box(r.page(0, 10, RankStyle::Competition)))
        });
        g.bench_function("page of 10 at offset n/2", |b| {
            b.iter(|| black_box(r.page(n / 2, 10, RankStyle::Competition)))
        });
        let mut i = 0;
        g.bench_function("around 5,5", |b| {
            b.iter(|| {
                i = (i + 1) % names.len();
                black_box(r.around(&names[i], 5, 5, RankStyle::Competition))
            })
        });
        g.finish();
    }
}

mod group {
    //! criterion's macros generate undocumented functions; they live in this module.
    #![allow(missing_docs)]
    use super::*;
    criterion_group!(benches, bench);
}
criterion_main!(group::benches);
