//! Imports on the embedded store (docs/SPEC.md §11): the ranking is written to an import
//! file that one log record names. A restart that replays the record reads the file; a
//! snapshot that covers it makes the file unneeded, and it is removed; an orphan (an
//! import that never logged its record) is removed at start; a refused import leaves no
//! file and no entry.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_executor::block_on;
use photofinish_core::transfer::{ImportRow, ImportSource};
use photofinish_core::{BoardError, BoardName, Leaderboard, PeriodRef};
use photofinish_store::io::RealStorage;
use photofinish_store::{Store, StoreOptions};

use crate::support::*;

struct Rows(VecDeque<Vec<ImportRow>>);

#[async_trait]
impl ImportSource for Rows {
    async fn next_chunk(&mut self) -> Result<Option<Vec<ImportRow>>, BoardError> {
        Ok(self.0.pop_front())
    }
}

fn rows(n: usize, chunk: usize) -> Rows {
    let all: Vec<ImportRow> = (0..n)
        .map(|i| ImportRow {
            member: format!("player-{i:06}"),
            scores: photofinish_core::transfer::ImportScores::Score((i % 13) as i64),
            reached_at_us: Some(T0 - (i % 5) as i64),
            metadata: (i % 100 == 0).then(|| format!("{{\"i\":{i}}}")),
            hidden: false,
            partition: None,
            team: None,
        })
        .collect();
    Rows(all.chunks(chunk).map(<[ImportRow]>::to_vec).collect())
}

fn import_files(dir: &std::path::Path) -> Vec<String> {
    files(dir)
        .into_iter()
        .filter(|f| f.starts_with("import-"))
        .collect()
}

fn open_small(dir: &std::path::Path, segment_bytes: u64) -> Store {
    let opts = StoreOptions {
        snapshot_on_shutdown: false,
        segment_bytes,
        ..StoreOptions::new(dir)
    };
    Store::open(
        Arc::new(RealStorage),
        opts,
        Box::new(photofinish_core::clock::ManualClock::new(T0)),
    )
    .expect("open")
}

#[test]
fn an_import_file_lives_until_a_snapshot_covers_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let before = {
        let store = open_small(dir.path(), 1 << 30);
        create(&store, "b");
        let done = block_on(store.import(
            &name("b"),
            &PeriodRef::Current,
            &mut rows(3000, 700),
            "test",
        ))
        .expect("import");
        assert_eq!(done.entries, 3000);
        assert_eq!(import_files(dir.path()).len(), 1);
        // Refused: the period is not empty now. No new file, nothing changed.
        let again =
            block_on(store.import(&name("b"), &PeriodRef::Current, &mut rows(5, 5), "test"));
        assert!(
            matches!(again, Err(BoardError::BoardNotEmpty { members: 3000, .. })),
            "{again:?}"
        );
        // Refused: a member twice.
        create(&store, "dup");
        let mut dup = rows(10, 10);
        dup.0[0][9].member = "player-000003".into();
        let twice = block_on(store.import(&name("dup"), &PeriodRef::Current, &mut dup, "test"));
        assert!(
            matches!(twice, Err(BoardError::InvalidEntries(_))),
            "{twice:?}"
        );
        assert!(listing(&store, "dup").is_empty());
        assert_eq!(import_files(dir.path()).len(), 1);
        listing(&store, "b")
    };
    assert_eq!(before.len(), 3000);
    // An import that died before its record leaves an orphan file.
    std::fs::write(dir.path().join("import-1-999.rank"), b"half written").expect("orphan");
    // No snapshot was taken: the restart replays the record and reads the file.
    {
        let store = open_small(dir.path(), 4096);
        assert_eq!(listing(&store, "b"), before);
        assert_eq!(import_files(dir.path()).len(), 1, "the orphan is removed");
        // Enough writes to seal segments: the snapshotter covers the record.
        create(&store, "c");
        for i in 0..3000 {
            submit(&store, incr("c", &format!("m{}", i % 300), 1))
                .expect("durable")
                .expect("applied");
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while !import_files(dir.path()).is_empty() {
            assert!(
                Instant::now() < deadline,
                "not compacted: {:?}",
                files(dir.path())
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(files(dir.path()).iter().any(|f| f.ends_with(".snap")));
        assert_eq!(listing(&store, "b"), before);
    }
    let store = open(dir.path());
    assert_eq!(listing(&store, "b"), before);
    // Equal scores rank by reached_at, then by file order.
    let first_12s: Vec<&str> = before
        .iter()
        .filter(|(_, s, _)| *s == 12)
        .take(3)
        .map(|(m, _, _)| m.as_str())
        .collect();
    assert_eq!(
        first_12s,
        ["player-000064", "player-000129", "player-000194"]
    );
}

/// A board name the test knows is valid.
fn name(board: &str) -> BoardName {
    BoardName::parse(board).expect("a board name")
}
