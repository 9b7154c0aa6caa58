//! What a write's log record costs to write and read back, as its own binary kind (how a
//! write is logged) and as JSON (how an operation of its own module, a `BoardOp`, is
//! logged: `record()` to a JSON value, its text, and back). Measured before deciding
//! whether a write moves onto `BoardOp` (ARCHITECTURE.md, "Adding an operation").
//!
//! Run: `cargo bench -p photofinish-store --bench record`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use photofinish_core::columns::ScoreInput;
use photofinish_core::op::LoggedWrite;
use photofinish_core::Op;
use photofinish_store::codec::Enc;
use photofinish_store::Command;
use serde::{Deserialize, Serialize};

/// A write's fields as a JSON record would hold them.
#[derive(Serialize, Deserialize)]
struct WriteRecord {
    member: String,
    op: Option<String>,
    score: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    period_us: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<String>,
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("a write's log record, written and read back");
    g.sample_size(30)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    let cmd = Command::Write(LoggedWrite {
        board: "weekly".into(),
        member: "player0000123456".into(),
        op: Some(Op::Incr),
        scores: ScoreInput::Score(1_234_567),
        at_us: 1_795_348_800_000_000,
        period_us: None,
        metadata: None,
        over_budget: None,
        partition: None,
        team: None,
    });
    g.bench_function("binary (kind 3)", |b| {
        b.iter(|| {
            let mut e = Enc::default();
            black_box(&cmd).encode(&mut e);
            black_box(Command::decode(&e.0).expect("decodes"))
        })
    });
    let rec = WriteRecord {
        member: "player0000123456".into(),
        op: Some("incr".into()),
        score: 1_234_567,
        period_us: None,
        metadata: None,
    };
    g.bench_function("JSON (as kind 24 holds an operation)", |b| {
        b.iter(|| {
            let mut e = Enc::default();
            e.str("weekly");
            e.i64(1_795_348_800_000_000);
            e.str("write");
            let value = serde_json::to_value(black_box(&rec)).expect("a value");
            e.json(&value);
            let mut d = photofinish_store::codec::Dec::new(&e.0);
            let (_board, _at, _name) = (d.str(), d.i64(), d.str());
            let back: serde_json::Value = d.json().expect("JSON");
            black_box(serde_json::from_value::<WriteRecord>(back).expect("a record"))
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
