//! Restart gives back exactly the acknowledged state, with and without snapshots.

use std::sync::Arc;
use std::time::{Duration, Instant};

use photofinish_core::op::{Hide, Join, LoggedOp, LoggedWrite, Remove};
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
        let del = Command::Op {
            board: "b".into(),
            at_us: 0,
            op: LoggedOp::new(Box::new(Remove::new(
                "m3".into(),
                &photofinish_core::PeriodRef::Current,
            ))),
        };
        match submit(&store, del).expect("durable") {
            Ok(Applied::Op(answer)) => {
                Remove::answer(answer).expect("a removal's answer");
            }
            other => panic!("a removal answered {other:?}"),
        }
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

/// A keyed increment (docs/SPEC.md §7) of `member` by `value`, key `id`.
fn keyed_incr(id: u128, member: &str, value: i64) -> Command {
    let mut write = incr("b", member, value);
    if let Command::Write(LoggedWrite { at_us, .. }) = &mut write {
        *at_us = photofinish_store::command::STAMP_AT_COMMIT;
    }
    Command::Keyed {
        key: photofinish_store::command::KeyRecord {
            id,
            fingerprint: id.to_le_bytes(),
            ttl_us: 86_400_000_000,
            now_us: 0,
        },
        batch: false,
        cmds: vec![write],
    }
}

/// Waits until the snapshotter has left a snapshot and is writing none.
fn wait_for_snapshot(dir: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let names = files(dir);
        let snaps = names.iter().filter(|n| n.ends_with(".snap")).count();
        let writing = names.iter().any(|n| n.ends_with(".tmp"));
        if snaps == 1 && !writing {
            return;
        }
        assert!(Instant::now() < deadline, "no snapshot: {names:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Snapshots are copies of the live state taken between commits while writers go on, from
/// four threads, plain and keyed: a start from the last one plus the log after it (no
/// shutdown snapshot) serves the same ranking and remembers the same keys' answers.
#[test]
fn snapshots_compact_the_log_and_restore_the_same_state() {
    let dir = tempfile::tempdir().expect("tmp");
    let opts = photofinish_store::StoreOptions {
        segment_bytes: 4096,
        snapshot_on_shutdown: false,
        ..photofinish_store::StoreOptions::new(dir.path())
    };
    let open_small = || {
        photofinish_store::Store::open(
            Arc::new(RealStorage),
            opts.clone(),
            Box::new(photofinish_core::clock::ManualClock::new(T0)),
        )
        .expect("open")
    };
    let (before, answers) = {
        let store = open_small();
        create(&store, "b");
        let answers: Vec<Vec<(u128, Applied)>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4u128)
                .map(|t| {
                    let store = &store;
                    s.spawn(move || {
                        let mut answers = Vec::new();
                        for i in 0..1500u128 {
                            let member = format!("member-{}", (i * 7 + t) % 500);
                            if i % 3 == 0 {
                                let id = t << 64 | i;
                                let cmd = keyed_incr(id, &member, (i % 5) as i64);
                                let applied = submit(store, cmd).expect("durable").expect("ok");
                                answers.push((id, applied));
                            } else {
                                submit(store, incr("b", &member, (i % 7) as i64))
                                    .expect("durable")
                                    .expect("applied");
                            }
                        }
                        answers
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("worker"))
                .collect()
        });
        wait_for_snapshot(dir.path());
        (listing(&store, "b"), answers.concat())
    };
    assert_eq!(before.len(), 500);
    assert_eq!(answers.len(), 2000);
    let names = files(dir.path());
    assert_eq!(
        names.iter().filter(|n| n.ends_with(".snap")).count(),
        1,
        "{names:?}"
    );
    let store = open_small();
    assert_eq!(listing(&store, "b"), before);
    // Every key is remembered with the answer it got, rank included: sending it again
    // replays that answer and changes nothing.
    for (id, applied) in answers {
        let Applied::Keyed(answer) = applied else {
            panic!("{applied:?}")
        };
        let score = match &answer {
            photofinish_core::idempotency::Answer::Written(w) => w.outcome.score(),
            other => panic!("{other:?}"),
        };
        let again = submit(&store, keyed_incr(id, "anyone", score))
            .expect("durable")
            .expect("replayed");
        // The fingerprint is the id's bytes, the same as the first time.
        assert_eq!(again, Applied::Replayed(answer));
    }
    assert_eq!(listing(&store, "b"), before);
}

/// Storage that notes, as each snapshot is about to be written, the size of the newest
/// snapshot on disk and the bytes of the segments the new one covers.
struct SnapshotWatch {
    /// (newest snapshot's bytes, covered segments' bytes), one per snapshot written.
    seen: std::sync::Mutex<Vec<(u64, u64)>>,
}

impl photofinish_store::io::Storage for SnapshotWatch {
    fn create_dir_all(&self, dir: &std::path::Path) -> std::io::Result<()> {
        RealStorage.create_dir_all(dir)
    }
    fn list(&self, dir: &std::path::Path) -> std::io::Result<Vec<String>> {
        RealStorage.list(dir)
    }
    fn read(&self, path: &std::path::Path) -> std::io::Result<photofinish_store::io::FileBytes> {
        RealStorage.read(path)
    }
    fn open_log(
        &self,
        path: &std::path::Path,
        len: u64,
    ) -> std::io::Result<Box<dyn photofinish_store::io::LogFile>> {
        RealStorage.open_log(path, len)
    }
    fn write_atomic(
        &self,
        path: &std::path::Path,
        fill: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if let Some(lsn) = photofinish_store::snapshot::parse_snapshot_name(&name) {
            let dir = path.parent().expect("dir");
            let size = |n: &String| std::fs::metadata(dir.join(n)).map_or(0, |m| m.len());
            let names = files(dir);
            let newest = names
                .iter()
                .filter(|n| n.ends_with(".snap"))
                .max()
                .map_or(0, size);
            let covered = names
                .iter()
                .filter(|n| photofinish_store::log::parse_segment_name(n).is_some_and(|f| f <= lsn))
                .map(size)
                .sum();
            self.seen.lock().expect("seen").push((newest, covered));
        }
        RealStorage.write_atomic(path, fill)
    }
    fn remove(&self, path: &std::path::Path) -> std::io::Result<()> {
        RealStorage.remove(path)
    }
}

/// A snapshot is due once the log since the last one holds as many bytes as it does: with
/// a snapshot forty times a segment's size, segments are not compacted one by one, and
/// every snapshot covers at least the newest one's size in log.
#[test]
fn a_snapshot_waits_for_as_much_log_as_the_last_one_holds() {
    let dir = tempfile::tempdir().expect("tmp");
    let watch = Arc::new(SnapshotWatch {
        seen: std::sync::Mutex::new(Vec::new()),
    });
    let opts = photofinish_store::StoreOptions {
        segment_bytes: 4096,
        snapshot_on_shutdown: false,
        ..photofinish_store::StoreOptions::new(dir.path())
    };
    let store = photofinish_store::Store::open(
        watch.clone(),
        opts,
        Box::new(photofinish_core::clock::ManualClock::new(T0)),
    )
    .expect("open");
    create(&store, "b");
    let (members, writes) = (5_000, 40_000);
    for i in 0..writes {
        submit(&store, incr("b", &format!("member-{:05}", i % members), 1))
            .expect("durable")
            .expect("applied");
    }
    wait_for_snapshot(dir.path());
    let before = listing(&store, "b");
    drop(store);
    let seen = watch.seen.lock().expect("seen").clone();
    let sealed_segments = writes * 40 / 4096; // ≥ 40 bytes a record
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.len() * 8 < sealed_segments,
        "{} snapshots for {sealed_segments}+ segments",
        seen.len()
    );
    for &(newest, covered) in &seen {
        assert!(covered >= newest, "{seen:?}");
    }
    // A start after a "crash" (no shutdown snapshot) serves the same.
    let store = open_log_only(dir.path());
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
                Command::DeleteBoard(photofinish_store::command::DeleteBoard {
                    board: "gone".into()
                })
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
            Command::from(photofinish_store::command::CreateBoard {
                board: "keep".into(),
                config: cfg.checked().expect("valid config"),
                max_boards: None,
                hidden: Vec::new(),
            }),
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
            Command::from(photofinish_store::command::CreateBoard {
                board: "d".into(),
                config: config.checked().expect("valid config"),
                max_boards: None,
                hidden: Vec::new(),
            }),
        )
        .expect("durable")
        .expect("created");
        for day in 0..4 {
            let cmd = Command::Write(LoggedWrite {
                board: "d".into(),
                member: "m".into(),
                op: None,
                scores: photofinish_core::columns::ScoreInput::Score(1),
                at_us: T0 + day * DAY,
                period_us: None,
                metadata: None,
                over_budget: None,
                partition: None,
                team: None,
            });
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

/// A snapshot of 4 MiB or more is read through a mapping (`RealStorage::read`), and a board
/// past `PARALLEL_BUILD_MIN` members loads through the two-thread bulk build whose records
/// come from prefaulted chunks: the same ranking comes back, ties in their order.
#[test]
fn a_large_snapshot_is_read_mapped_and_restores_the_same_ranking() {
    use photofinish_core::ranking::PARALLEL_BUILD_MIN;
    use photofinish_store::io::{FileBytes, Storage};
    let dir = tempfile::tempdir().expect("tmp");
    // Each entry takes more than its 16-byte name: 4 MiB / 16 of them pass the mapping size.
    let n = (PARALLEL_BUILD_MIN + 20_000).max((4 << 20) / 16);
    let before = {
        let store = open(dir.path());
        create(&store, "big");
        for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
            let (tx, rx) = std::sync::mpsc::channel();
            for &i in chunk {
                let tx = tx.clone();
                // 16-byte names; scores from 5,000 values, so most members tie.
                let cmd = incr("big", &format!("member{i:010}"), (i * 7919 % 5000) as i64);
                store
                    .submit(cmd, true, Box::new(move |r| drop(tx.send(r))))
                    .expect("queued");
            }
            drop(tx);
            assert!(rx.iter().all(|r| r.is_ok()), "every write applied");
        }
        listing(&store, "big")
    };
    assert_eq!(before.len(), n);
    let snap = files(dir.path())
        .into_iter()
        .find(|f| f.ends_with(".snap"))
        .expect("a shutdown snapshot");
    let bytes = RealStorage.read(&dir.path().join(&snap)).expect("read");
    assert!(
        bytes.len() >= 4 << 20,
        "{} bytes: under the mapping size",
        bytes.len()
    );
    assert!(matches!(bytes, FileBytes::Mapped(_)), "read mapped");
    drop(bytes);
    let store = open(dir.path());
    assert_eq!(listing(&store, "big"), before);
}

/// A data directory is one store's: a second open of it is refused, naming the lock,
/// before it reads or changes anything; once the first closes, it opens.
#[test]
fn a_second_store_on_one_directory_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = open(dir.path());
    create(&store, "b");
    submit(&store, incr("b", "m", 5))
        .expect("durable")
        .expect("applied");
    let before = files(dir.path());
    let second = try_open_with(Arc::new(RealStorage), dir.path(), 1 << 30);
    let err = second.err().expect("refused").to_string();
    assert!(err.contains("in use") && err.contains("LOCK"), "{err}");
    assert_eq!(files(dir.path()), before, "nothing changed");
    submit(&store, incr("b", "m", 1))
        .expect("the first store still writes")
        .expect("applied");
    drop(store);
    let store = open(dir.path());
    assert_eq!(listing(&store, "b")[0].1, 6);
}

/// A tournament's seats and attempts (docs/SPEC.md §14) come back from the log alone and
/// from a shutdown snapshot: a joined member still holds its seat, an exhausted member
/// stays exhausted.
#[test]
fn seats_and_attempts_survive_restarts_from_the_log_and_a_snapshot() {
    let dir = tempfile::tempdir().expect("tmp");
    let join = |member: &str| Command::Op {
        board: "t".into(),
        at_us: 0,
        op: LoggedOp::new(Box::new(Join::new(
            photofinish_core::MemberName::parse(member).expect("name"),
        ))),
    };
    let joined = |applied: Result<Applied, BoardError>| match applied {
        Ok(Applied::Op(answer)) => Join::answer(answer).expect("a join's answer").already,
        other => panic!("not a join: {other:?}"),
    };
    {
        let store = open_log_only(dir.path());
        let mut config = photofinish_core::BoardConfig::default();
        config.settings.entry.max_attempts = Some(2);
        config.settings.entry.join_required = true;
        let create = Command::from(photofinish_store::command::CreateBoard {
            board: "t".into(),
            config: config.checked().expect("valid config"),
            max_boards: None,
            hidden: Vec::new(),
        });
        submit(&store, create).expect("durable").expect("created");
        assert!(!joined(submit(&store, join("ann")).expect("durable")));
        assert!(!joined(submit(&store, join("bob")).expect("durable")));
        for _ in 0..2 {
            submit(&store, incr("t", "ann", 1))
                .expect("durable")
                .expect("applied");
        }
        let third = submit(&store, incr("t", "ann", 1)).expect("durable");
        assert!(matches!(
            third,
            Err(BoardError::AttemptsExhausted { max: 2, .. })
        ));
    }
    for round in 1..=2 {
        let store = if round == 1 {
            open_log_only(dir.path())
        } else {
            open(dir.path())
        };
        // Round 1 replays the log; round 2 (after round 1's store closed without a
        // snapshot) replays it again and leaves a snapshot at its shutdown; round 3, below,
        // loads that snapshot alone.
        assert_eq!(score(&store, "t", "ann"), Some(2), "round {round}");
        let again = submit(&store, incr("t", "ann", 1)).expect("durable");
        assert!(
            matches!(again, Err(BoardError::AttemptsExhausted { .. })),
            "round {round}"
        );
        assert!(
            joined(submit(&store, join("bob")).expect("durable")),
            "round {round}"
        );
        let cy = submit(&store, incr("t", "cy", 1)).expect("durable");
        assert!(
            matches!(cy, Err(BoardError::NotJoined { .. })),
            "round {round}"
        );
    }
    let store = open(dir.path());
    assert!(files(dir.path()).iter().any(|f| f.ends_with(".snap")));
    assert!(joined(submit(&store, join("bob")).expect("durable")));
    submit(&store, incr("t", "bob", 7))
        .expect("durable")
        .expect("bob holds a seat");
    let again = submit(&store, incr("t", "ann", 1)).expect("durable");
    assert!(matches!(again, Err(BoardError::AttemptsExhausted { .. })));
}

/// A league's close (docs/SPEC.md §14) is a command in the log: its moves, the tiers it
/// set and the cohorts of members who waited for it come back the same from the log and
/// from a snapshot, and a close logged again after a restart changes nothing.
#[test]
fn a_league_close_survives_restarts_from_the_log_and_a_snapshot() {
    const DAY: i64 = 86_400_000_000;
    let dir = tempfile::tempdir().expect("tmp");
    let yesterday = T0 - DAY;
    let submit_at = |store: &photofinish_store::Store, cmd: Command| {
        let (tx, rx) = std::sync::mpsc::channel();
        store
            .submit(cmd, false, Box::new(move |r| drop(tx.send(r))))
            .expect("queued");
        rx.recv().expect("reply").expect("applied")
    };
    let close = || Command::Close {
        board: "l".into(),
        now_us: 0,
        budget: photofinish_core::league::CLOSE_STEP_MEMBERS,
    };
    let state_of = |store: &photofinish_store::Store| {
        let handle = store.state().board("l").expect("board");
        let b = handle.read().expect("lock");
        let period = b.calendar().period_at(yesterday).expect("period");
        let moves: Vec<_> = b
            .closing(&period)
            .map(|c| {
                c.moves
                    .iter()
                    .map(|m| (m.member.to_string(), m.to))
                    .collect()
            })
            .unwrap_or_default();
        let today = b.calendar().period_at(T0).expect("today");
        let tiers: Vec<_> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|m| b.tier_of(m))
            .collect();
        (
            moves,
            tiers,
            b.place_of(&today, "w"),
            b.is_pending(&today, "w"),
        )
    };
    {
        let store = open_log_only(dir.path());
        let mut config = photofinish_core::BoardConfig {
            reset: photofinish_core::Reset::Daily,
            cohort_size: Some(2),
            ..Default::default()
        };
        config.league = Some(photofinish_core::league::League {
            tiers: vec!["low".into(), "mid".into(), "top".into()],
            promote: 1,
            demote: 1,
        });
        let create = Command::from(photofinish_store::command::CreateBoard {
            board: "l".into(),
            config: config.checked().expect("valid config"),
            max_boards: None,
            hidden: Vec::new(),
        });
        submit(&store, create).expect("durable").expect("created");
        for (i, m) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            submit_at(&store, incr_at("l", m, i as i64, yesterday + i as i64));
        }
        // Today's first arrival waits for yesterday's close.
        submit_at(&store, incr_at("l", "w", 1, T0));
        assert!(state_of(&store).3, "w waits");
        match submit(&store, close()).expect("durable") {
            Ok(Applied::Closed(Some(step))) => assert!(step.done),
            other => panic!("not a close: {other:?}"),
        }
        let closed = state_of(&store);
        // Cohorts a b | c d | e: the better of each goes up (b, d, e).
        assert_eq!(
            closed.0,
            [
                ("b".to_string(), 1),
                ("d".to_string(), 1),
                ("e".to_string(), 1)
            ]
        );
        assert_eq!(closed.1, [0, 1, 0, 1, 1]);
        assert!(closed.2.is_some() && !closed.3, "w took its cohort");
    }
    let want = state_of(&open_log_only(dir.path()));
    for round in 1..=2 {
        // Round 1 replays the log and leaves a snapshot; round 2 loads it.
        let store = open(dir.path());
        assert_eq!(state_of(&store), want, "round {round}");
        match submit(&store, close()).expect("durable") {
            Ok(Applied::Closed(None)) => {}
            other => panic!("a second close changed something: {other:?}"),
        }
        assert_eq!(state_of(&store), want, "round {round}");
    }
    assert!(files(dir.path()).iter().any(|f| f.ends_with(".snap")));
}

#[test]
fn hidden_members_survive_restarts_from_the_log_and_a_snapshot() {
    let dir = tempfile::tempdir().expect("tmp");
    let hide = |member: &str, hidden: bool| Command::Audited {
        actor: "moderator".into(),
        at_us: 0,
        cmd: Box::new(Command::Op {
            board: "h".into(),
            at_us: 0,
            op: LoggedOp::new(Box::new(Hide::new(
                photofinish_core::MemberName::parse(member).expect("name"),
                hidden,
            ))),
        }),
    };
    let state_of = |store: &photofinish_store::Store| {
        let handle = store.state().board("h").expect("board");
        let b = handle.read().expect("lock");
        let hidden: Vec<String> = b.hidden().into_iter().map(str::to_owned).collect();
        let q = photofinish_core::audit::AuditQuery {
            board: None,
            member: None,
            since_us: None,
            limit: 100,
        };
        let audit: Vec<(String, String, String)> = store
            .state()
            .audit(&q, T0)
            .into_iter()
            .map(|e| (e.actor, e.action, e.board))
            .collect();
        let period = b
            .resolve(&photofinish_core::PeriodRef::Current, T0)
            .expect("p");
        let ranking = b.ranking(&period).expect("ranking");
        let shown = ranking
            .view(None)
            .page(0, 100, photofinish_core::RankStyle::Ordinal)
            .into_iter()
            .map(|e| (e.member, e.rank))
            .collect::<Vec<_>>();
        (hidden, shown, audit)
    };
    {
        let store = open_log_only(dir.path());
        let create = Command::from(photofinish_store::command::CreateBoard {
            board: "h".into(),
            config: photofinish_core::BoardConfig::default()
                .checked()
                .expect("valid config"),
            max_boards: None,
            hidden: Vec::new(),
        });
        submit(&store, create).expect("durable").expect("created");
        for (i, m) in ["a", "b", "c", "d"].iter().enumerate() {
            submit(&store, incr_at("h", m, 10 - i as i64, T0 + i as i64))
                .expect("durable")
                .expect("written");
        }
        for cmd in [
            hide("b", true),
            hide("z", true),
            hide("a", true),
            hide("a", false),
        ] {
            submit(&store, cmd).expect("durable").expect("applied");
        }
        let (hidden, shown, audit) = state_of(&store);
        assert_eq!(hidden, ["b", "z"]);
        // Newest first, each with who made it.
        let want: Vec<(String, String, String)> =
            ["member.unhide", "member.hide", "member.hide", "member.hide"]
                .iter()
                .map(|a| ("moderator".to_owned(), (*a).to_owned(), "h".to_owned()))
                .collect();
        assert_eq!(audit, want);
        let want = [("a", 1), ("c", 2), ("d", 3)].map(|(m, r)| (m.to_owned(), r));
        assert_eq!(shown, want);
    }
    let want = state_of(&open_log_only(dir.path()));
    for round in 1..=2 {
        // Round 1 replays the log and leaves a snapshot; round 2 loads it.
        let store = open(dir.path());
        assert_eq!(state_of(&store), want, "round {round}");
    }
    assert!(files(dir.path()).iter().any(|f| f.ends_with(".snap")));
}
