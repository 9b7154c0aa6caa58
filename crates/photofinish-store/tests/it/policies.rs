//! `everysec` and `never` commit without the writer thread (inline, or through a committer
//! woken by `on_queued`): under many threads nothing is lost, the log replays to exactly
//! the served state, and a shut-down store refuses writes. (Disk faults under every policy:
//! `faults.rs`.)

use std::sync::Arc;

use photofinish_core::BoardError;
use photofinish_store::io::RealStorage;
use photofinish_store::{Command, Store};

use crate::support::*;

/// `threads` threads, each submitting `cmds(thread)` in order; every command must apply.
fn submit_from_threads(store: &Store, threads: usize, cmds: impl Fn(usize) -> Vec<Command> + Sync) {
    std::thread::scope(|scope| {
        for t in 0..threads {
            let cmds = &cmds;
            scope.spawn(move || {
                for cmd in cmds(t) {
                    submit(store, cmd).expect("durable").expect("applied");
                }
            });
        }
    });
}

#[test]
fn concurrent_writers_lose_nothing_and_a_restart_serves_the_same() {
    for (policy, committer) in SETUPS {
        let dir = tempfile::tempdir().expect("tmp");
        let served = {
            let store = open_policy(Arc::new(RealStorage), dir.path(), (policy, committer), true);
            create(&store, "b");
            submit_from_threads(&store, 8, |t| {
                (0..500)
                    .flat_map(|i| {
                        [
                            incr("b", "hot", 1),
                            incr("b", &format!("m{t}-{}", i % 40), i),
                        ]
                    })
                    .collect()
            });
            assert_eq!(
                score(&store, "b", "hot"),
                Some(4000),
                "{policy:?} {committer:?}"
            );
            let served = listing(&store, "b");
            assert_eq!(served.len(), 1 + 8 * 40);
            served
        };
        // Clean shutdown wrote a snapshot: loading it gives the same.
        let store = open(dir.path());
        assert_eq!(
            listing(&store, "b"),
            served,
            "{policy:?} {committer:?}: snapshot"
        );
    }
}

#[test]
fn the_log_alone_replays_to_the_served_state() {
    for (policy, committer) in SETUPS {
        let dir = tempfile::tempdir().expect("tmp");
        let served = {
            let store = open_policy(
                Arc::new(RealStorage),
                dir.path(),
                (policy, committer),
                false,
            );
            create(&store, "b");
            submit_from_threads(&store, 4, |t| {
                (0..300)
                    .map(|i| incr("b", &format!("m{}", (i * 7 + t as i64) % 25), 1 + i % 3))
                    .collect()
            });
            listing(&store, "b")
        };
        assert!(files(dir.path()).iter().all(|f| !f.ends_with(".snap")));
        let store = open_log_only(dir.path());
        assert_eq!(listing(&store, "b"), served, "{policy:?} {committer:?}");
        let total: i64 = served.iter().map(|(_, s, _)| s).sum();
        assert_eq!(total, 4 * (0..300).map(|i| 1 + i % 3).sum::<i64>());
    }
}

#[test]
fn a_shut_down_store_refuses_writes() {
    for (policy, committer) in SETUPS {
        let dir = tempfile::tempdir().expect("tmp");
        let store = open_policy(Arc::new(RealStorage), dir.path(), (policy, committer), true);
        create(&store, "b");
        store.shutdown();
        let refused = submit(&store, incr("b", "a", 1));
        assert!(
            matches!(refused, Err(BoardError::ShuttingDown)),
            "{policy:?} {committer:?}: {refused:?}"
        );
        assert_eq!(score(&store, "b", "a"), None);
    }
}
