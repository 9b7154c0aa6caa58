//! The shared operations' own unit tests: what a write's future and its command hold.

use super::*;

/// A plain write's future stays a few pointers: the future every write moves to the
/// heap once held every kind of change's state (3.2 KB, docs/bench-history.md §35).
#[test]
fn a_plain_writes_future_holds_no_change_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = crate::Store::open(
        std::sync::Arc::new(crate::io::RealStorage),
        crate::StoreOptions::new(dir.path()),
        Box::new(photofinish_core::clock::ManualClock::new(0)),
    )
    .expect("open");
    let w = WriteRequest {
        member: photofinish_core::MemberName::parse("m").expect("name"),
        op: None,
        scores: photofinish_core::columns::ScoreInput::Score(1),
        at_us: None,
        period: None,
        metadata: None,
        partition: None,
        team: None,
        over_budget: None,
    };
    let f = change(&store, "b", Change::Write(w), None, "actor");
    assert!(
        std::mem::size_of_val(&f) <= 128,
        "{} bytes",
        std::mem::size_of_val(&f)
    );
}

/// A command is no larger than a write's record and its tag: every command is moved
/// several times between a door and the log, and a board's create — whose config is
/// larger — is boxed (docs/bench-history.md §36).
#[test]
fn a_command_is_the_size_of_a_write() {
    let write = std::mem::size_of::<LoggedWrite>();
    let cmd = std::mem::size_of::<Command>();
    assert!(
        cmd <= write + 8,
        "a command is {cmd} bytes, a write {write}"
    );
}
