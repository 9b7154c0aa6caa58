//! Restart gives back exactly the acknowledged state, with and without snapshots.

use std::sync::Arc;
use std::time::{Duration, Instant};

use photofinish_core::BoardError;
use photofinish_store::io::RealStorage;
use photofinish_store::{Applied, Command};

use crate::support::*;

#[test]
fn restart_replays_the_log() {
    let dir = tempfile::tempdir().expect("tmp");
    let before = {
        let store = open(dir.path());
        create(&store, "b");
        for i in 0..200 {
            submit(&store, incr("b", &format!("m{}", i % 37), i))
                .expect("durable")
                .expect("applied");
        }
        let del = Command::DeleteMember {
            board: "b".into(),
            period: "current".into(),
            member: "m3".into(),
            now_us: 0,
        };
        assert_eq!(
            submit(&store, del).expect("durable"),
            Ok(Applied::MemberRemoved)
        );
        listing(&store, "b")
    };
    assert_eq!(before.len(), 36);
    let store = open(dir.path());
    assert_eq!(listing(&store, "b"), before);
    // The sequence goes on where it stopped: a new write ranks after equal older ones.
    submit(&store, incr("b", "new", 0))
        .expect("durable")
        .expect("applied");
    assert_eq!(listing(&store, "b").len(), 37);
}

#[test]
fn failed_commands_replay_as_failures() {
    let dir = tempfile::tempdir().expect("tmp");
    {
        let store = open(dir.path());
        create(&store, "b");
        submit(&store, incr("b", "a", i64::MAX))
            .expect("durable")
            .expect("applied");
        let overflow = submit(&store, incr("b", "a", 1)).expect("durable");
        assert!(matches!(overflow, Err(BoardError::ScoreOverflow { .. })));
        let missing = submit(&store, incr("nope", "a", 1)).expect("durable");
        assert!(matches!(missing, Err(BoardError::BoardNotFound(_))));
    }
    let store = open(dir.path());
    assert_eq!(score(&store, "b", "a"), Some(i64::MAX));
}

#[test]
fn snapshots_compact_the_log_and_restore_the_same_state() {
    let dir = tempfile::tempdir().expect("tmp");
    let before = {
        let store = open_with(Arc::new(RealStorage), dir.path(), 2048).expect("open");
        create(&store, "b");
        for i in 0..3000 {
            submit(&store, incr("b", &format!("member-{}", i % 500), i % 7))
                .expect("durable")
                .expect("applied");
        }
        // The snapshotter works in the background: wait for it to leave one snapshot.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let names: Vec<String> = std::fs::read_dir(dir.path())
                .expect("dir")
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            let snaps = names.iter().filter(|n| n.ends_with(".snap")).count();
            let logs = names.iter().filter(|n| n.ends_with(".log")).count();
            if snaps == 1 && logs <= 2 {
                break;
            }
            assert!(Instant::now() < deadline, "no compaction: {names:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        listing(&store, "b")
    };
    assert_eq!(before.len(), 500);
    let store = open(dir.path());
    assert_eq!(listing(&store, "b"), before);
}

#[test]
fn board_config_conflicts_and_deletes_survive_restart() {
    let dir = tempfile::tempdir().expect("tmp");
    {
        let store = open(dir.path());
        create(&store, "keep");
        create(&store, "gone");
        submit(&store, incr("gone", "x", 1))
            .expect("durable")
            .expect("applied");
        assert_eq!(
            submit(
                &store,
                Command::DeleteBoard {
                    board: "gone".into()
                }
            )
            .expect("durable"),
            Ok(Applied::BoardDeleted)
        );
        let cfg = photofinish_core::BoardConfig {
            order: photofinish_core::Order::Asc,
            ..Default::default()
        };
        let conflict = submit(
            &store,
            Command::CreateBoard {
                board: "keep".into(),
                config: cfg,
                max_boards: None,
            },
        )
        .expect("durable");
        assert!(matches!(conflict, Err(BoardError::ConfigConflict { .. })));
    }
    let store = open(dir.path());
    assert!(store.state().board("gone").is_none());
    let keep = store.state().board("keep").expect("keep");
    assert_eq!(
        keep.read().expect("lock").config().order,
        photofinish_core::Order::Desc
    );
}

#[test]
fn a_graceful_stop_leaves_a_snapshot_and_the_next_start_replays_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let before = {
        let store = open(dir.path());
        create(&store, "b");
        for i in 0..100 {
            submit(&store, incr("b", &format!("m{i}"), i))
                .expect("durable")
                .expect("applied");
        }
        listing(&store, "b")
    };
    let names = files(dir.path());
    assert_eq!(
        names,
        ["snap-00000000000000000101.snap"],
        "the snapshot covers every record"
    );
    let store = open(dir.path());
    assert_eq!(listing(&store, "b"), before);
    submit(&store, incr("b", "after", 1))
        .expect("durable")
        .expect("applied");
    drop(store);
    // A second stop writes a newer snapshot and removes the old one and the segment.
    assert_eq!(files(dir.path()), ["snap-00000000000000000102.snap"]);
    let store = open(dir.path());
    assert_eq!(listing(&store, "b").len(), 101);
}

/// The snapshotter yields to request handling: its thread runs at nice 10.
#[cfg(target_os = "linux")]
#[test]
fn the_snapshotter_runs_at_lower_priority() {
    let dir = tempfile::tempdir().expect("tmp");
    let _store = open(dir.path());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let nice = std::fs::read_dir("/proc/self/task")
            .expect("tasks")
            .filter_map(|t| t.ok())
            .find_map(|t| {
                let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
                if comm.trim() != "pf-snapshot" {
                    return None;
                }
                let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
                // Fields after the parenthesised name; nice is field 19 of stat, the 17th here.
                stat.rsplit(')')
                    .next()?
                    .split_whitespace()
                    .nth(16)?
                    .parse::<i32>()
                    .ok()
            });
        if nice == Some(10) {
            break;
        }
        assert!(Instant::now() < deadline, "snapshotter nice is {nice:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Retention is a function of the log: replaying it (no snapshot) purges the same periods.
#[test]
fn retention_purges_replay_identically_from_the_log() {
    use photofinish_core::{BoardConfig, PeriodRef, Reset};
    let dir = tempfile::tempdir().expect("tmp");
    const DAY: i64 = 86_400_000_000;
    let periods = |store: &photofinish_store::Store| -> Vec<String> {
        let b = store.state().board("d").expect("board");
        let b = photofinish_store::state::read_lock(&b);
        b.periods().map(|(p, _)| p.id.clone()).collect()
    };
    {
        let store = open_log_only(dir.path());
        let config = BoardConfig {
            reset: Reset::Daily,
            retention: 2,
            ..BoardConfig::default()
        };
        submit(
            &store,
            Command::CreateBoard {
                board: "d".into(),
                config,
                max_boards: None,
            },
        )
        .expect("durable")
        .expect("created");
        for day in 0..4 {
            let cmd = Command::Write {
                board: "d".into(),
                member: "m".into(),
                op: None,
                value: 1,
                at_us: T0 + day * DAY,
                period_us: None,
                metadata: None,
                over_budget: None,
            };
            let (tx, rx) = std::sync::mpsc::channel();
            store
                .submit(cmd, false, Box::new(move |r| drop(tx.send(r))))
                .expect("queued");
            rx.recv().expect("reply").expect("applied");
        }
        assert_eq!(periods(&store), ["2026-11-25", "2026-11-24"]);
    }
    assert!(
        files(dir.path()).iter().all(|f| f.ends_with(".log")),
        "no snapshot: recovery must replay"
    );
    let store = open_log_only(dir.path());
    assert_eq!(periods(&store), ["2026-11-25", "2026-11-24"]);
    let b = store.state().board("d").expect("board");
    let b = photofinish_store::state::read_lock(&b);
    assert!(b
        .resolve(&PeriodRef::Id("2026-11-22".into()), T0)
        .is_ok_and(|p| b.ranking(&p).is_none()));
}
