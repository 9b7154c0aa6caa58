//! Kill -9 at random moments under concurrent writes, over 12 cycles: with fsync=always every
//! acknowledged write survives, and nothing that was never sent appears.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::support::*;

const WRITERS: usize = 8;
const CYCLES: usize = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().expect("tmp");
    let http = reqwest::Client::new();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut rng = Rng(seed);
    eprintln!("crash test seed {seed}");
    // Per writer: increments acknowledged (lower bound) and sent (upper bound).
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let sent: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let mut total_acked = 0;
    for cycle in 0..=CYCLES {
        let proc = tokio::task::block_in_place(|| Proc::start(BIN, dir.path(), "always"));
        let base = proc.base.clone();
        let put = http
            .put(format!("{base}/v1/boards/crash"))
            .json(&json!({}))
            .send()
            .await
            .expect("put");
        assert!(put.status().is_success());
        // Check the recovered state against what the writers know, then settle the bounds.
        let got = scores(&http, &base, "crash").await;
        for (member, score) in &got {
            let i: usize = member
                .strip_prefix('w')
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("impossible member {member}"));
            let (lo, hi) = (
                acked[i].load(Ordering::SeqCst),
                sent[i].load(Ordering::SeqCst),
            );
            assert!(
                (lo as i64..=hi as i64).contains(score),
                "cycle {cycle}: {member} has {score}, acked {lo}, sent {hi}"
            );
            acked[i].store(*score as u64, Ordering::SeqCst);
            sent[i].store(*score as u64, Ordering::SeqCst);
        }
        for i in 0..WRITERS {
            if !got.iter().any(|(m, _)| *m == format!("w{i}")) {
                assert_eq!(
                    acked[i].load(Ordering::SeqCst),
                    0,
                    "cycle {cycle}: w{i} lost"
                );
                sent[i].store(0, Ordering::SeqCst);
            }
        }
        if cycle == CYCLES {
            total_acked = acked.iter().map(|a| a.load(Ordering::SeqCst)).sum();
            drop(proc);
            break;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for i in 0..WRITERS {
            let (http, base, stop, acked, sent) = (
                http.clone(),
                base.clone(),
                stop.clone(),
                acked.clone(),
                sent.clone(),
            );
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    sent[i].fetch_add(1, Ordering::SeqCst);
                    let r = http
                        .post(format!("{base}/v1/boards/crash/scores"))
                        .json(&json!({"member": format!("w{i}"), "score": 1}))
                        .send()
                        .await;
                    match r {
                        Ok(resp) if resp.status() == 200 => {
                            acked[i].fetch_add(1, Ordering::SeqCst);
                        }
                        _ => break,
                    }
                }
            }));
        }
        tokio::time::sleep(Duration::from_millis(100 + rng.below(400))).await;
        tokio::task::block_in_place(|| proc.kill9());
        stop.store(true, Ordering::SeqCst);
        for t in tasks {
            t.await.expect("writer");
        }
    }
    eprintln!("{CYCLES} kills, {total_acked} acknowledged increments verified");
    assert!(
        total_acked > 0,
        "no write was acknowledged: the test proved nothing"
    );
}
