//! The harness's `--quick` smoke run, as CI runs it: every target really executes, none
//! fails an operation, and every row has throughput, latencies and memory. (Its wall time —
//! about 15 s in a debug build here — is reported in docs/BENCHMARKS.md, not asserted: timed
//! tests flake on shared machines.)

use std::process::Command;

#[test]
fn quick_mode_runs_every_target() {
    let out = Command::new(env!("CARGO_BIN_EXE_photofinish-bench"))
        .args(["--quick", "--json"])
        .output()
        .expect("run photofinish-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().expect("json line");
    let rows: serde_json::Value = serde_json::from_str(last).expect("json");
    let rows = rows.as_array().expect("array");
    let targets: Vec<&str> = rows.iter().filter_map(|r| r["target"].as_str()).collect();
    assert_eq!(
        targets,
        [
            "engine (in process)",
            "http, embedded, fsync everysec",
            "http, redis backend",
            "redis, seed 000 Lua"
        ]
    );
    for r in rows {
        assert!(r["ops"].as_u64().is_some_and(|n| n > 100), "{r}");
        assert_eq!(r["errors"], 0, "{r}");
        assert!(r["p50_us"].as_f64().is_some_and(|p| p > 0.0), "{r}");
        assert!(
            r["p999_us"].as_f64() >= r["p50_us"].as_f64(),
            "percentiles ordered: {r}"
        );
        assert!(
            r["bytes_per_member"].as_f64().is_some_and(|b| b > 0.0),
            "{r}"
        );
        assert!(r["vs_redis"].as_f64().is_some_and(|x| x > 0.0), "{r}");
        assert!(r["cpu_us_per_op"].as_f64().is_some_and(|c| c > 0.0), "{r}");
    }
    assert!(
        rows[2]["redis_cpu_us_per_op"]
            .as_f64()
            .is_some_and(|c| c > 0.0),
        "the Redis behind the HTTP target is accounted: {}",
        rows[2]
    );
    // The table is printed too, one row per target.
    let table: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('[')).collect();
    let head: Vec<&str> = table[0].split_whitespace().collect();
    assert_eq!(
        head,
        [
            "target",
            "ops/s",
            "p50",
            "p99",
            "p99.9",
            "errors",
            "memory/member",
            "cpu/op",
            "vs",
            "redis"
        ],
        "{stdout}"
    );
    assert_eq!(table.len(), 5, "{stdout}");
    for row in &table[1..] {
        assert!(row.ends_with('×'), "every row ends with its ratio: {row}");
    }
}
