//! Its own test binary: the counting allocator sees every thread of the process, so no
//! other test may run beside it.
//!
//! Purged periods give their memory back: live heap bytes, counted by a wrapping global
//! allocator, return to where they were once retention drops a full period.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use photofinish_core::board::BoardWrite;
use photofinish_core::{Board, BoardConfig, Reset};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// Forwarding to the system allocator; `GlobalAlloc` is an unsafe trait by definition.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const DAY: i64 = 86_400_000_000;
/// 2026-11-22T12:00:00Z
const NOON: i64 = 1_795_348_800_000_000;

#[test]
fn purged_periods_release_their_memory() {
    let mut board = Board::checked(BoardConfig {
        reset: Reset::Daily,
        retention: 1,
        ..BoardConfig::default()
    })
    .expect("board");
    let names: Vec<String> = (0..20_000).map(|i| format!("member-{i:08}")).collect();
    fn w(member: &str, at_us: i64) -> BoardWrite<'_> {
        BoardWrite {
            member,
            op: None,
            values: photofinish_core::Operands::one(1),
            at_us,
            period_us: None,
            metadata: Some(r#"{"k":1}"#),
            over_budget: None,
            partition: None,
            team: None,
        }
    }
    board.submit(&w("seed", NOON)).expect("w");
    let baseline = LIVE.load(Ordering::SeqCst);
    for n in &names {
        board.submit(&w(n, NOON)).expect("w");
    }
    let full = LIVE.load(Ordering::SeqCst);
    assert!(
        full - baseline > 1_000_000,
        "20k members should take over a megabyte, took {}",
        full - baseline
    );
    // The next day's first write purges the whole previous day (retention 1).
    board.submit(&w("seed", NOON + DAY)).expect("w");
    let after = LIVE.load(Ordering::SeqCst);
    assert_eq!(board.periods().count(), 1);
    assert!(
        after - baseline < 64 * 1024,
        "purge kept {} bytes of {}",
        after - baseline,
        full - baseline
    );
}
