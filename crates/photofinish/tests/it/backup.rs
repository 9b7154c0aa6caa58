//! `photofinish backup` and `photofinish restore` on the real binary (docs/SPEC.md §11,
//! docs/backup.md): a backup taken while writes go on restores to one log position — a
//! chain of writes across two boards comes back as a prefix, never with a later write
//! without an earlier one; a backup taken at rest restores to a server whose answers are
//! the live server's, in every rank style, with metadata and reached_at; a damaged backup
//! and a non-empty directory are refused and leave nothing behind.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::support::*;

fn members(page: &Value) -> Vec<String> {
    page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["member"].as_str().expect("member").to_owned())
        .collect()
}

/// The `c<k>` members of a page, as numbers, sorted.
fn chain(page: &Value) -> Vec<u64> {
    let mut ks: Vec<u64> = members(page)
        .iter()
        .filter_map(|m| m.strip_prefix('c')?.parse().ok())
        .collect();
    ks.sort_unstable();
    ks
}

/// `photofinish backup --out file` against `base`, which must succeed; its stdout.
async fn backup(base: &str, file: &Path) -> String {
    let (base, file) = (base.to_owned(), file.to_owned());
    let (ok, stdout, stderr) = tokio::task::spawn_blocking(move || {
        cli(&["backup", "--out", file.to_str().expect("path")], &base)
    })
    .await
    .expect("cli");
    assert!(ok, "{stdout}{stderr}");
    stdout
}

fn restore(file: &Path, dir: &Path) -> (bool, String, String) {
    cli(
        &[
            "restore",
            file.to_str().expect("path"),
            "--data-dir",
            dir.to_str().expect("path"),
        ],
        "http://127.0.0.1:9",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backups_restore_to_one_log_position() {
    let work = tempfile::tempdir().expect("tmp");
    let live_dir = work.path().join("live");
    let http = reqwest::Client::new();
    let live = tokio::task::block_in_place(|| Proc::start(BIN, &live_dir, "always"));
    let base = live.base.clone();
    for (board, cfg) in [
        ("a", json!({"update": "set"})),
        ("b", json!({"order": "asc", "update": "best"})),
    ] {
        let r = http
            .put(format!("{base}/v1/boards/{board}"))
            .json(&cfg)
            .send()
            .await
            .expect("put");
        assert_eq!(r.status(), 201);
    }
    // Ties, metadata, big scores.
    for (board, member, score, meta) in [
        ("a", "ann", 5, json!({"skin": "red"})),
        ("a", "bob", 5, json!(null)),
        ("a", "cy", i64::MAX, json!({"n": 1})),
        ("b", "ann", -3, json!(null)),
        ("b", "dee", i64::MIN, json!({"x": [1, 2]})),
    ] {
        let mut body = json!({"member": member, "score": score});
        if !meta.is_null() {
            body["metadata"] = meta;
        }
        let r = http
            .post(format!("{base}/v1/boards/{board}/scores"))
            .json(&body)
            .send()
            .await
            .expect("post");
        assert_eq!(r.status(), 200);
    }

    // A chain of writes: c<k> on a, then c<k> on b, each after the one before answered.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (http, base, stop) = (http.clone(), base.clone(), stop.clone());
        tokio::spawn(async move {
            let mut k = 0u64;
            while !stop.load(Ordering::SeqCst) {
                for board in ["a", "b"] {
                    let r = http
                        .post(format!("{base}/v1/boards/{board}/scores"))
                        .json(&json!({"member": format!("c{k}"), "score": k}))
                        .send()
                        .await
                        .expect("post");
                    assert_eq!(r.status(), 200);
                }
                k += 1;
            }
            k
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let during = work.path().join("during.backup");
    let stdout = backup(&base, &during).await;
    assert!(stdout.contains("at log position"), "{stdout}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    let written = writer.await.expect("writer");
    assert!(written > 0);

    let restored_dir = work.path().join("restored");
    let (ok, stdout, stderr) = restore(&during, &restored_dir);
    assert!(ok, "{stdout}{stderr}");
    let restored = tokio::task::block_in_place(|| Proc::start(BIN, &restored_dir, "always"));
    let on_a = chain(&entries(&http, &restored.base, "a", "ordinal").await);
    let on_b = chain(&entries(&http, &restored.base, "b", "ordinal").await);
    // One log position: each chain is a prefix, and b never ran ahead of a.
    assert_eq!(on_a, (0..on_a.len() as u64).collect::<Vec<_>>());
    assert_eq!(on_b, (0..on_b.len() as u64).collect::<Vec<_>>());
    assert!(on_b.len() <= on_a.len() && on_a.len() <= on_b.len() + 1);
    assert!(on_a.len() as u64 <= written, "nothing that was not written");
    drop(restored);

    // At rest: the restored server answers exactly as the live one.
    let quiet = work.path().join("quiet.backup");
    backup(&base, &quiet).await;
    let copy_dir = work.path().join("copy");
    assert!(restore(&quiet, &copy_dir).0);
    let copy = tokio::task::block_in_place(|| Proc::start(BIN, &copy_dir, "always"));
    for board in ["a", "b"] {
        for ranking in ["ordinal", "competition", "dense"] {
            assert_eq!(
                entries(&http, &copy.base, board, ranking).await,
                entries(&http, &base, board, ranking).await,
                "{board} {ranking}"
            );
        }
        let config = |base: String| {
            let http = http.clone();
            async move {
                let v: Value = http
                    .get(format!("{base}/v1/boards/{board}"))
                    .send()
                    .await
                    .expect("get")
                    .json()
                    .await
                    .expect("json");
                v
            }
        };
        assert_eq!(config(copy.base.clone()).await, config(base.clone()).await);
    }
    drop(copy);

    // Refusals: a non-empty directory, a damaged file; neither writes anything.
    let (ok, _, stderr) = restore(&quiet, &copy_dir);
    assert!(!ok);
    assert!(stderr.contains("not empty"), "{stderr}");
    let mut bytes = std::fs::read(&quiet).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    let damaged = work.path().join("damaged.backup");
    std::fs::write(&damaged, &bytes).expect("write");
    let fresh = work.path().join("fresh");
    let (ok, _, stderr) = restore(&damaged, &fresh);
    assert!(!ok);
    assert!(stderr.contains("checksum"), "{stderr}");
    assert!(!fresh.exists(), "nothing made from a damaged backup");
    drop(live);
}
