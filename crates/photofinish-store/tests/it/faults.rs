//! ENOSPC and EIO through the fault-injecting storage: the write is refused, nothing
//! changes, reads go on, and writes resume — and survive restart — once the fault clears.
//! Under every fsync policy and way of committing.

use std::sync::Arc;

use photofinish_core::BoardError;
use photofinish_store::io::{Fault, FaultyStorage, RealStorage};
use photofinish_store::FsyncPolicy;

use crate::support::*;

#[test]
fn disk_full_and_io_errors_refuse_writes_without_changing_state() {
    let always = (FsyncPolicy::Always, Committer::Inline);
    for setup in std::iter::once(always).chain(SETUPS) {
        faults_refuse_writes_without_changing_state(setup);
    }
}

fn faults_refuse_writes_without_changing_state(setup: (FsyncPolicy, Committer)) {
    let dir = tempfile::tempdir().expect("tmp");
    let storage = FaultyStorage::default();
    let faults = storage.faults.clone();
    {
        let store = open_policy(Arc::new(storage), dir.path(), setup, true);
        create(&store, "b");
        submit(&store, incr("b", "a", 5))
            .expect("durable")
            .expect("applied");
        for (expected, fault) in (5..).zip([Fault::DiskFull, Fault::IoError]) {
            faults.set(fault);
            let refused = submit(&store, incr("b", "a", 100));
            assert!(
                matches!(refused, Err(BoardError::Unavailable(_))),
                "{setup:?} {fault:?}: {refused:?}"
            );
            assert!(store.write_error().is_some());
            assert_eq!(
                score(&store, "b", "a"),
                Some(expected),
                "{setup:?} {fault:?}: state changed"
            );
            assert!(matches!(
                submit(&store, incr("b", "new", 1)),
                Err(BoardError::Unavailable(_))
            ));
            assert_eq!(score(&store, "b", "new"), None);
            faults.set(Fault::None);
            submit(&store, incr("b", "a", 1))
                .expect("healed")
                .expect("applied");
            assert!(store.write_error().is_none());
        }
        assert_eq!(score(&store, "b", "a"), Some(7));
    }
    let store = open_with(Arc::new(RealStorage), dir.path(), 1 << 30).expect("reopen");
    assert_eq!(score(&store, "b", "a"), Some(7), "{setup:?}");
    assert_eq!(score(&store, "b", "new"), None);
}
