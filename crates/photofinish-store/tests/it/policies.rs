//! `everysec` and `never` commit without the writer thread (inline, or through a committer
//! woken by `on_queued`): under many threads nothing is lost, the log replays to exactly
//! the served state, disk faults refuse writes without changing anything, and a shut-down
//! store refuses writes.

use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::Duration;

use photofinish_core::clock::ManualClock;
use photofinish_store::io::{Fault, FaultyStorage, RealStorage, Storage};
use photofinish_store::{FsyncPolicy, Store, StoreOptions, SubmitError};

use crate::support::*;

/// How a test store's queued commands get committed.
#[derive(Debug, Clone, Copy)]
enum Committer {
    /// By the submitting thread (no `on_queued` hook).
    Inline,
    /// By a separate thread that `on_queued` wakes, like the server's task.
    Woken,
}

/// A store with `policy` and `committer` on `storage`, and the committer thread if any
/// (it ends once the store is dropped). `snapshot` = snapshot at shutdown.
fn open_policy(
    storage: Arc<dyn Storage>,
    dir: &std::path::Path,
    (policy, committer): (FsyncPolicy, Committer),
    snapshot: bool,
) -> Arc<Store> {
    let mut opts = StoreOptions::new(dir);
    opts.fsync = policy;
    opts.snapshot_on_shutdown = snapshot;
    let (tx, rx) = mpsc::channel::<()>();
    if let Committer::Woken = committer {
        let tx = Mutex::new(tx);
        opts.on_queued = Some(Arc::new(move || {
            let _ = tx.lock().expect("tx").send(());
        }));
    }
    let store = Arc::new(Store::open(storage, opts, Box::new(ManualClock::new(T0))).expect("open"));
    if let Committer::Woken = committer {
        let weak: Weak<Store> = Arc::downgrade(&store);
        std::thread::spawn(move || loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(()) => match weak.upgrade() {
                    Some(s) => s.commit_queued(),
                    None => return,
                },
                Err(mpsc::RecvTimeoutError::Timeout) if weak.strong_count() > 0 => {}
                Err(_) => return,
            }
        });
    }
    store
}

const SETUPS: [(FsyncPolicy, Committer); 4] = [
    (FsyncPolicy::EverySec, Committer::Inline),
    (FsyncPolicy::EverySec, Committer::Woken),
    (FsyncPolicy::Never, Committer::Inline),
    (FsyncPolicy::Never, Committer::Woken),
];

#[test]
fn concurrent_writers_lose_nothing_and_the_log_replays_to_the_served_state() {
    for (policy, committer) in SETUPS {
        let dir = tempfile::tempdir().expect("tmp");
        let served = {
            let store = open_policy(Arc::new(RealStorage), dir.path(), (policy, committer), true);
            create(&store, "b");
            std::thread::scope(|scope| {
                for t in 0..8 {
                    let store = &store;
                    scope.spawn(move || {
                        for i in 0..500 {
                            submit(store, incr("b", "hot", 1))
                                .expect("durable")
                                .expect("applied");
                            let own = format!("m{t}-{}", i % 40);
                            submit(store, incr("b", &own, i))
                                .expect("durable")
                                .expect("applied");
                        }
                    });
                }
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
        // Clean shutdown wrote a snapshot; replaying the log alone must agree too.
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
            std::thread::scope(|scope| {
                for t in 0..4 {
                    let store = &store;
                    scope.spawn(move || {
                        for i in 0..300 {
                            let m = format!("m{}", (i * 7 + t) % 25);
                            submit(store, incr("b", &m, 1 + i % 3))
                                .expect("durable")
                                .expect("applied");
                        }
                    });
                }
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
fn disk_faults_refuse_writes_and_change_nothing() {
    for (policy, committer) in SETUPS {
        let dir = tempfile::tempdir().expect("tmp");
        let storage = FaultyStorage::default();
        let faults = storage.faults.clone();
        let store = open_policy(Arc::new(storage), dir.path(), (policy, committer), true);
        create(&store, "b");
        submit(&store, incr("b", "a", 5))
            .expect("durable")
            .expect("applied");
        for fault in [Fault::DiskFull, Fault::IoError] {
            faults.set(fault);
            let refused = submit(&store, incr("b", "a", 100));
            assert!(
                matches!(refused, Err(SubmitError::Unavailable(_))),
                "{policy:?} {committer:?} {fault:?}: {refused:?}"
            );
            assert!(store.write_error().is_some());
            assert_eq!(score(&store, "b", "a"), Some(5), "{fault:?}: state changed");
            faults.set(Fault::None);
            submit(&store, incr("b", "a", 0))
                .expect("healed")
                .expect("applied");
            assert!(store.write_error().is_none());
        }
        drop(store);
        let store = open_with(Arc::new(RealStorage), dir.path(), 1 << 30).expect("reopen");
        assert_eq!(score(&store, "b", "a"), Some(5), "{policy:?} {committer:?}");
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
            matches!(refused, Err(SubmitError::ShuttingDown)),
            "{policy:?} {committer:?}: {refused:?}"
        );
        assert_eq!(score(&store, "b", "a"), None);
    }
}
