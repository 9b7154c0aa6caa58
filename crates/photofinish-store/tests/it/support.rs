//! Helpers: open a store on a directory, submit synchronously, read a member.

use std::path::Path;
use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::Duration;

use photofinish_core::clock::ManualClock;
use photofinish_core::op::LoggedWrite;
use photofinish_core::{BoardConfig, BoardError, PeriodRef, RankStyle};
use photofinish_store::io::Storage;
use photofinish_store::{Applied, Command, FsyncPolicy, Store, StoreError, StoreOptions};

/// 2026-11-22T00:00:00Z
pub const T0: i64 = 1_795_305_600_000_000;

/// Waits (up to 10 s) until no store holds `dir`'s lock. A test's last store may still be
/// closing on another thread: `open_policy`'s committer can hold the last reference for
/// a moment, and the shutdown then runs there.
pub fn wait_unlocked(dir: &Path) {
    let path = dir.join(photofinish_store::LOCK_FILE);
    let Ok(file) = std::fs::OpenOptions::new().write(true).open(&path) else {
        return; // never opened
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while file.try_lock().is_err() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Opens a store once the directory is free ([`wait_unlocked`]).
pub fn open_with(
    storage: Arc<dyn Storage>,
    dir: &Path,
    segment_bytes: u64,
) -> Result<Store, StoreError> {
    wait_unlocked(dir);
    try_open_with(storage, dir, segment_bytes)
}

/// Opens a store, refused at once if the directory is locked.
pub fn try_open_with(
    storage: Arc<dyn Storage>,
    dir: &Path,
    segment_bytes: u64,
) -> Result<Store, StoreError> {
    let mut opts = StoreOptions::new(dir);
    opts.segment_bytes = segment_bytes;
    Store::open(storage, opts, Box::new(ManualClock::new(T0)))
}

pub fn open(dir: &Path) -> Store {
    open_with(Arc::new(photofinish_store::io::RealStorage), dir, 1 << 30).expect("open")
}

/// Submits `cmd` and waits: the outer error is the log's (not durable: unavailable,
/// overloaded, shutting down), the inner one the semantics' (logged, changed nothing).
pub fn submit(store: &Store, cmd: Command) -> Result<Result<Applied, BoardError>, BoardError> {
    let (tx, rx) = mpsc::channel();
    store.submit(cmd, true, Box::new(move |r| drop(tx.send(r))))?;
    match rx.recv().expect("reply") {
        Err(
            e @ (BoardError::Unavailable(_) | BoardError::Overloaded | BoardError::ShuttingDown),
        ) => Err(e),
        applied => Ok(applied),
    }
}

pub fn create(store: &Store, board: &str) {
    let cmd = Command::from(photofinish_store::command::CreateBoard {
        board: board.into(),
        config: BoardConfig::default().checked().expect("valid config"),
        max_boards: None,
        hidden: Vec::new(),
    });
    submit(store, cmd).expect("durable").expect("created");
}

pub fn incr(board: &str, member: &str, value: i64) -> Command {
    incr_at(board, member, value, 0)
}

/// [`incr`] at instant `at_us` (kept when submitted unstamped).
pub fn incr_at(board: &str, member: &str, value: i64, at_us: i64) -> Command {
    Command::Write(LoggedWrite {
        board: board.into(),
        member: member.into(),
        op: None,
        scores: photofinish_core::columns::ScoreInput::Score(value),
        at_us,
        period_us: None,
        metadata: None,
        over_budget: None,
        partition: None,
        team: None,
    })
}

/// The member's score on the board's current period, if present.
pub fn score(store: &Store, board: &str, member: &str) -> Option<i64> {
    let handle = store.state().board(board)?;
    let b = handle.read().expect("lock");
    let p = b.resolve(&PeriodRef::Current, T0).expect("period");
    b.ranking(&p)?
        .member(member, RankStyle::Ordinal)
        .map(|e| e.score())
}

/// Every (member, score, reached_at) of a board's current period, in rank order.
pub fn listing(store: &Store, board: &str) -> Vec<(String, i64, i64)> {
    let Some(handle) = store.state().board(board) else {
        return Vec::new();
    };
    let b = handle.read().expect("lock");
    let p = b.resolve(&PeriodRef::Current, T0).expect("period");
    b.ranking(&p).map_or_else(Vec::new, |r| {
        r.page(0, usize::MAX, RankStyle::Ordinal)
            .into_iter()
            .map(|e| (e.score(), e.member, e.reached_at_us))
            .map(|(s, m, at)| (m, s, at))
            .collect()
    })
}

/// The single log segment in `dir`.
pub fn only_segment(dir: &Path) -> std::path::PathBuf {
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs.remove(0)
}

/// A store that leaves everything in the log at shutdown (no shutdown snapshot), for tests
/// that cut and damage log files.
pub fn open_log_only(dir: &Path) -> Store {
    wait_unlocked(dir);
    let opts = StoreOptions {
        snapshot_on_shutdown: false,
        ..StoreOptions::new(dir)
    };
    Store::open(
        Arc::new(photofinish_store::io::RealStorage),
        opts,
        Box::new(ManualClock::new(T0)),
    )
    .expect("open")
}

/// Names of the data files in `dir` (the store's lock file aside), sorted.
pub fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != photofinish_store::LOCK_FILE)
        .collect();
    v.sort();
    v
}

/// How a test store's queued commands get committed.
#[derive(Debug, Clone, Copy)]
pub enum Committer {
    /// By the submitting thread (no `on_queued` hook).
    Inline,
    /// By a separate thread that `on_queued` wakes, like the server's task.
    Woken,
}

/// A store with `policy` and `committer` on `storage`, and the committer thread if any
/// (it ends once the store is dropped). `snapshot` = snapshot at shutdown.
pub fn open_policy(
    storage: Arc<dyn Storage>,
    dir: &Path,
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

/// The policies that commit without the writer thread, with each kind of committer.
pub const SETUPS: [(FsyncPolicy, Committer); 4] = [
    (FsyncPolicy::EverySec, Committer::Inline),
    (FsyncPolicy::EverySec, Committer::Woken),
    (FsyncPolicy::Never, Committer::Inline),
    (FsyncPolicy::Never, Committer::Woken),
];
