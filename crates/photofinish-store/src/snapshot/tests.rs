//! Format 13's compact entries against format 12's fixed-width ones: over random boards
//! (both orders, several columns, ties, i64 extremes, metadata) both formats read back
//! every entry exactly as the state holds it, and format 13 is the smaller.

use proptest::prelude::*;

use photofinish_core::columns::{Column, ScoreInput};
use photofinish_core::op::LoggedWrite;
use photofinish_core::{BoardConfig, Op, Order};

use super::{read, write_as, Format};
use crate::command::{Command, CreateBoard};
use crate::state::{read_lock, State};

/// One entry as the ranking lists it: name, scores, instant, seq, metadata.
type Entry = (String, Vec<i64>, i64, u64, Option<String>);

/// Every board's periods' entries, in rank order.
fn entries(state: &State) -> Vec<(String, Vec<Entry>)> {
    let mut all = Vec::new();
    for (name, handle) in state.boards() {
        let board = read_lock(&handle);
        for (period, ranking) in board.periods() {
            let mut list = Vec::new();
            ranking.for_each_entry(|m, scores, at, seq, meta| {
                let scores = scores.as_slice().to_vec();
                list.push((m.to_owned(), scores, at, seq, meta.map(str::to_owned)));
            });
            all.push((format!("{name}/{}", period.id), list));
        }
    }
    all.sort();
    all
}

/// A score drawn near zero, near either extreme, or anywhere.
fn score() -> impl Strategy<Value = i64> {
    prop_oneof![
        -3i64..3,
        Just(i64::MIN),
        Just(i64::MAX),
        (i64::MIN..i64::MIN + 3),
        (i64::MAX - 3..=i64::MAX),
        any::<i64>(),
    ]
}

/// A write: which board (0: one column desc, 1: one column asc, 2: three columns), the
/// member, its scores, the instant's step, metadata.
type Write = (usize, u8, [i64; 3], u32, Option<String>);

fn write() -> impl Strategy<Value = Write> {
    (
        0usize..3,
        0u8..40,
        [score(), score(), score()],
        prop_oneof![Just(0u32), 0u32..1_000_000],
        prop::option::of("[a-zé{}\":0-9]{0,12}"),
    )
}

fn state_of(writes: &[Write]) -> State {
    let state = State::default();
    let column = |name: &str, order: Order| -> Column {
        serde_json::from_value(serde_json::json!({"name": name, "order": order})).expect("column")
    };
    let configs = [
        BoardConfig {
            update: Op::Set,
            ..BoardConfig::default()
        },
        BoardConfig {
            order: Order::Asc,
            update: Op::Set,
            ..BoardConfig::default()
        },
        BoardConfig {
            update: Op::Set,
            columns: vec![
                column("kills", Order::Desc),
                column("time", Order::Asc),
                column("deaths", Order::Desc),
            ],
            ..BoardConfig::default()
        },
    ];
    for (i, config) in configs.into_iter().enumerate() {
        let create = CreateBoard {
            board: format!("b{i}"),
            config: config.checked().expect("valid"),
            max_boards: None,
            hidden: Vec::new(),
        };
        state.apply(&Command::from(create)).expect("create");
    }
    let mut at_us = 1_795_392_005_000_000;
    for (board, member, scores, step, metadata) in writes {
        at_us += i64::from(*step);
        let scores = match board {
            2 => ScoreInput::Named(
                ["kills", "time", "deaths"]
                    .iter()
                    .zip(scores)
                    .map(|(c, s)| ((*c).to_owned(), *s))
                    .collect(),
            ),
            _ => ScoreInput::Score(scores[0]),
        };
        let write = LoggedWrite {
            board: format!("b{board}"),
            member: format!("member-{member}"),
            op: None,
            scores,
            at_us,
            period_us: None,
            metadata: metadata.clone(),
            over_budget: None,
            partition: None,
            team: None,
        };
        // A write a rule refuses changes nothing; the others are what the test reads.
        let _ = state.apply(&Command::Write(write));
    }
    state
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn both_formats_read_back_every_entry(writes in prop::collection::vec(write(), 0..200)) {
        let state = state_of(&writes);
        let want = entries(&state);
        let mut v12 = Vec::new();
        let mut v13 = Vec::new();
        write_as(Format::V12, &state, 7, 9, &mut v12).expect("v12");
        write_as(Format::V13, &state, 7, 9, &mut v13).expect("v13");
        prop_assert_eq!(&v12[..8], b"PFSNAP12");
        prop_assert_eq!(&v13[..8], b"PFSNAP13");
        for bytes in [&v12, &v13] {
            let loaded = read(bytes).expect("read");
            prop_assert_eq!((loaded.last_lsn, loaded.max_time_us), (7, 9));
            prop_assert_eq!(&entries(&loaded.state), &want);
        }
        let count: usize = want.iter().map(|(_, list)| list.len()).sum();
        if count > 0 {
            prop_assert!(v13.len() < v12.len(), "{} bytes, format 12 {}", v13.len(), v12.len());
        }
    }

    /// A format-13 snapshot cut short or with a byte changed is refused, never read wrong
    /// and never a panic: the CRC catches a changed byte, the decoder a cut one.
    #[test]
    fn damaged_bytes_are_refused(writes in prop::collection::vec(write(), 1..40), at in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let state = state_of(&writes);
        let mut bytes = Vec::new();
        write_as(Format::V13, &state, 1, 1, &mut bytes).expect("v13");
        let i = at.index(bytes.len());
        let mut changed = bytes.clone();
        changed[i] ^= flip;
        prop_assert!(read(&changed).is_err());
        prop_assert!(read(&bytes[..i]).is_err());
    }
}

/// The decoder's varints refuse what no encoder writes (over ten bytes, a length past the
/// end), as errors.
#[test]
fn bad_varints_are_errors() {
    use crate::codec::Dec;
    let long = [0xffu8; 11];
    assert!(Dec::new(&long).var_u64().is_err());
    assert!(Dec::new(&[0x80]).var_u64().is_err(), "cut short");
    assert!(
        Dec::new(&[5, b'a']).var_str_ref().is_err(),
        "length past the end"
    );
    assert_eq!(Dec::new(&[0]).var_opt_str_ref().expect("none"), None);
    assert_eq!(
        Dec::new(&[2, b'a']).var_opt_str_ref().expect("some"),
        Some("a")
    );
}
