//! A write's log record in bytes (docs/format.md, "Payload"): the record is core's
//! [`LoggedWrite`] (the write's module, `op/write.rs`); its kinds, their layouts and the
//! way back are here, side by side. A write with `score` is logged as kinds 3, 8 and 10,
//! as before columns; a write with `scores` as kind 14. Kinds are never reused or changed:
//! a field a write gains is a new kind, so every log ever written still decodes.

use photofinish_core::budget::OverBudget;
use photofinish_core::columns::{ScoreInput, MAX_COLUMNS};
use photofinish_core::op::LoggedWrite;

use crate::codec::{op_code, Dec, DecodeError, Enc};

/// A write with one `score`: board, member, operator, value, instant, metadata.
pub(super) const WRITE: u8 = 3;
/// Kind 3's fields, then the memory budget's verdict (only while it is over: otherwise
/// kind 3).
pub(super) const WRITE_OVER_BUDGET: u8 = 8;
/// A write naming its period: kind 3's fields, the period's start, then a flag byte and,
/// when it is 1, the memory budget's verdict as kind 8 carries it.
pub(super) const WRITE_IN_PERIOD: u8 = 10;
/// A write with `scores` (docs/SPEC.md §13): board, member, operator, the form (1: by
/// name, 2: in column order), a count and each value (after its name, by name),
/// instant, metadata, then a flag byte (1: the period's start follows; 2: the budget's
/// verdict follows) and those.
pub(super) const WRITE_COLUMNS: u8 = 14;
/// A write naming its partition or team (docs/SPEC.md §17): kind 14's layout (its scores
/// also as form 3: one `score`), its flag byte's bit 2 saying the partition's key follows
/// the period's start and bit 3 that the team's key follows that (both before the
/// budget's verdict); any other bit is damage.
pub(super) const WRITE_GROUPED: u8 = 26;
/// [`WRITE_COLUMNS`]' forms, and [`WRITE_GROUPED`]'s.
const BY_NAME: u8 = 1;
const IN_ORDER: u8 = 2;
const ONE_SCORE: u8 = 3;
/// [`WRITE_COLUMNS`]' and [`WRITE_GROUPED`]'s flags.
const HAS_PERIOD: u8 = 1;
const HAS_BUDGET: u8 = 2;
const HAS_PARTITION: u8 = 4;
const HAS_TEAM: u8 = 8;

/// Whether `kind` is a write's.
pub(super) fn is_write(kind: u8) -> bool {
    matches!(
        kind,
        WRITE | WRITE_OVER_BUDGET | WRITE_IN_PERIOD | WRITE_COLUMNS | WRITE_GROUPED
    )
}

/// Writes `w`'s kind byte and fields.
pub(super) fn encode(w: &LoggedWrite, e: &mut Enc) {
    match w.scores {
        ScoreInput::Score(value) if w.partition.is_none() && w.team.is_none() => {
            e.u8(match (w.period_us, w.over_budget) {
                (Some(_), _) => WRITE_IN_PERIOD,
                (None, Some(_)) => WRITE_OVER_BUDGET,
                (None, None) => WRITE,
            });
            e.str(&w.board);
            e.str(&w.member);
            e.u8(op_code(w.op));
            e.i64(value);
            e.i64(w.at_us);
            e.opt_str(w.metadata.as_deref());
            if let Some(start) = w.period_us {
                e.i64(start);
                e.u8(u8::from(w.over_budget.is_some()));
            }
        }
        _ => encode_flagged(w, e),
    }
    enc_over_budget(e, &w.over_budget);
}

/// [`WRITE_COLUMNS`]' layout, or [`WRITE_GROUPED`]'s when the write names a partition or
/// a team: the kind byte and the fields before the budget's verdict.
fn encode_flagged(w: &LoggedWrite, e: &mut Enc) {
    e.u8(if w.partition.is_some() || w.team.is_some() {
        WRITE_GROUPED
    } else {
        WRITE_COLUMNS
    });
    e.str(&w.board);
    e.str(&w.member);
    e.u8(op_code(w.op));
    enc_scores(e, &w.scores);
    e.i64(w.at_us);
    e.opt_str(w.metadata.as_deref());
    let flag = |on: bool, bit: u8| if on { bit } else { 0 };
    e.u8(flag(w.period_us.is_some(), HAS_PERIOD)
        | flag(w.over_budget.is_some(), HAS_BUDGET)
        | flag(w.partition.is_some(), HAS_PARTITION)
        | flag(w.team.is_some(), HAS_TEAM));
    if let Some(start) = w.period_us {
        e.i64(start);
    }
    if let Some(p) = &w.partition {
        e.str(p);
    }
    if let Some(t) = &w.team {
        e.str(t);
    }
}

/// What [`encode`] wrote after the kind byte `kind` (one [`is_write`] accepts).
pub(super) fn decode(kind: u8, d: &mut Dec<'_>) -> Result<LoggedWrite, DecodeError> {
    let (board, member, op) = (d.str()?, d.str()?, d.op()?);
    let flagged = matches!(kind, WRITE_COLUMNS | WRITE_GROUPED);
    let scores = if flagged {
        dec_scores(d)?
    } else {
        ScoreInput::Score(d.i64()?)
    };
    let (at_us, metadata) = (d.i64()?, d.opt_str()?);
    let (mut period_us, mut partition, mut team) = (None, None, None);
    let over = match kind {
        WRITE_COLUMNS | WRITE_GROUPED => {
            let flags = d.u8()?;
            // Kind 14 has always read bits 0 and 1 alone; kind 26 knows its bits.
            let known = HAS_PERIOD | HAS_BUDGET | HAS_PARTITION | HAS_TEAM;
            if kind == WRITE_GROUPED && flags & !known != 0 {
                return Err(DecodeError(format!("unknown write flags {flags:#04x}")));
            }
            if flags & HAS_PERIOD != 0 {
                period_us = Some(d.i64()?);
            }
            if kind == WRITE_GROUPED && flags & HAS_PARTITION != 0 {
                partition = Some(d.str()?);
            }
            if kind == WRITE_GROUPED && flags & HAS_TEAM != 0 {
                team = Some(d.str()?);
            }
            flags & HAS_BUDGET != 0
        }
        WRITE_IN_PERIOD => {
            period_us = Some(d.i64()?);
            d.u8()? != 0
        }
        _ => kind == WRITE_OVER_BUDGET,
    };
    Ok(LoggedWrite {
        board,
        member,
        op,
        scores,
        at_us,
        period_us,
        metadata,
        over_budget: dec_over_budget(d, over)?,
        partition,
        team,
    })
}

/// A write's memory-budget verdict, when it has one: `estimate` u64, `limit` u64 (whether
/// it follows is the kind's or a flag's to say). A join's record of kind 15 carries it
/// alike.
pub(super) fn enc_over_budget(e: &mut Enc, over: &Option<OverBudget>) {
    if let Some(over) = over {
        e.u64(over.estimate);
        e.u64(over.limit);
    }
}

/// The verdict [`enc_over_budget`] wrote, when `present`.
pub(super) fn dec_over_budget(
    d: &mut Dec<'_>,
    present: bool,
) -> Result<Option<OverBudget>, DecodeError> {
    if !present {
        return Ok(None);
    }
    Ok(Some(OverBudget {
        estimate: d.u64()?,
        limit: d.u64()?,
    }))
}

/// A write's `scores` in [`WRITE_COLUMNS`]' layout.
fn enc_scores(e: &mut Enc, scores: &ScoreInput) {
    match scores {
        ScoreInput::Named(pairs) => {
            e.u8(BY_NAME);
            e.u8(pairs.len() as u8);
            for (name, v) in pairs {
                e.str(name);
                e.i64(*v);
            }
        }
        ScoreInput::Positional(values) => {
            e.u8(IN_ORDER);
            e.u8(values.len() as u8);
            for v in values {
                e.i64(*v);
            }
        }
        // Kind 14 never holds one `score` (kind 3 does); kind 26 does, as form 3.
        ScoreInput::Score(v) => {
            e.u8(ONE_SCORE);
            e.u8(1);
            e.i64(*v);
        }
    }
}

/// What [`enc_scores`] wrote.
fn dec_scores(d: &mut Dec<'_>) -> Result<ScoreInput, DecodeError> {
    let (form, n) = (d.u8()?, d.u8()?);
    if n as usize > MAX_COLUMNS {
        return Err(DecodeError(format!("{n} scores in a write")));
    }
    Ok(match form {
        BY_NAME => ScoreInput::Named(
            (0..n)
                .map(|_| Ok((d.str()?, d.i64()?)))
                .collect::<Result<_, DecodeError>>()?,
        ),
        IN_ORDER => ScoreInput::Positional(
            (0..n)
                .map(|_| d.i64())
                .collect::<Result<_, DecodeError>>()?,
        ),
        ONE_SCORE if n == 1 => ScoreInput::Score(d.i64()?),
        f => return Err(DecodeError(format!("unknown scores form {f}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Command;
    use photofinish_core::Op;

    fn write(scores: ScoreInput, period_us: Option<i64>, over: Option<OverBudget>) -> Command {
        Command::Write(LoggedWrite {
            board: "b".into(),
            member: "ann".into(),
            op: Some(Op::Set),
            scores,
            at_us: 1_795_392_005_000_000,
            period_us,
            metadata: Some("{}".into()),
            over_budget: over,
            partition: None,
            team: None,
        })
    }

    /// Every kind round-trips, with and without a named period and the budget's verdict,
    /// and a plain write with `score` still encodes as kind 3.
    #[test]
    fn every_kind_round_trips() {
        let over = Some(OverBudget {
            estimate: 9,
            limit: 8,
        });
        let forms = [
            ScoreInput::Score(-7),
            ScoreInput::Named(vec![("kills".into(), i64::MIN), ("time".into(), 3)]),
            ScoreInput::Positional(vec![i64::MAX, 0]),
        ];
        for scores in forms {
            for (period_us, over) in [
                (Some(1_795_305_600_000_000), None),
                (Some(0), over),
                (None, over),
                (None, None),
            ] {
                let cmd = write(scores.clone(), period_us, over);
                let mut e = Enc::default();
                cmd.encode(&mut e);
                assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            }
        }
        let mut e = Enc::default();
        write(ScoreInput::Score(1), None, None).encode(&mut e);
        assert_eq!(e.0[0], WRITE);
    }

    /// A write naming a partition, a team or both is kind 26 in every form, with a named
    /// period and the budget's verdict or without, and reads back as it was; hand-written
    /// bytes of the layout decode, and a flag this version does not know is refused as
    /// damage.
    #[test]
    fn a_write_naming_its_partition_or_team_is_kind_26() {
        let over = Some(OverBudget {
            estimate: 9,
            limit: 8,
        });
        for scores in [
            ScoreInput::Score(i64::MIN),
            ScoreInput::Positional(vec![1, 2]),
        ] {
            for ((period_us, over), (partition, team)) in
                [(Some(0), over), (None, None)].into_iter().flat_map(|p| {
                    [
                        (Some("eu-west_1"), None),
                        (None, Some("wolves")),
                        (Some("FR"), Some("w")),
                    ]
                    .map(|g| (p, g))
                })
            {
                let Command::Write(mut w) = write(scores.clone(), period_us, over) else {
                    unreachable!()
                };
                w.partition = partition.map(str::to_owned);
                w.team = team.map(str::to_owned);
                let cmd = Command::Write(w);
                let mut e = Enc::default();
                cmd.encode(&mut e);
                assert_eq!(e.0[0], WRITE_GROUPED);
                assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            }
        }
        let bytes = |flags: u8| {
            let mut b = Enc::default();
            b.u8(WRITE_GROUPED);
            b.str("b");
            b.str("ann");
            b.u8(op_code(None));
            b.u8(ONE_SCORE);
            b.u8(1);
            b.i64(7);
            b.i64(5);
            b.opt_str(None);
            b.u8(flags);
            b.str("FR");
            if flags & HAS_TEAM != 0 {
                b.str("wolves");
            }
            b
        };
        let want = LoggedWrite {
            board: "b".into(),
            member: "ann".into(),
            op: None,
            scores: ScoreInput::Score(7),
            at_us: 5,
            period_us: None,
            metadata: None,
            over_budget: None,
            partition: Some("FR".into()),
            team: None,
        };
        let decoded = Command::decode(&bytes(HAS_PARTITION).0).expect("kind 26 decodes");
        assert_eq!(decoded, Command::Write(want.clone()));
        let both = bytes(HAS_PARTITION | HAS_TEAM).0;
        let decoded = Command::decode(&both).expect("kind 26 with a team decodes");
        let want = LoggedWrite {
            team: Some("wolves".into()),
            ..want
        };
        assert_eq!(decoded, Command::Write(want));
        assert!(Command::decode(&bytes(HAS_PARTITION | 0x40).0).is_err());
        let cut = bytes(HAS_PARTITION).0;
        assert!(Command::decode(&cut[..cut.len() - 1]).is_err());
    }

    /// A partitioned board's members keep their partitions through a snapshot (format
    /// 11): each partition's standings read back the same.
    #[test]
    fn partitions_and_teams_survive_a_snapshot() {
        use crate::command::CreateBoard;
        use crate::state::{read_lock, State};
        use photofinish_core::groups::{PartitionRules, TeamRules};
        use photofinish_core::{BoardConfig, PeriodRef, RankStyle};
        let state = State::default();
        let config = BoardConfig {
            partitions: Some(PartitionRules { max: 3 }),
            teams: Some(TeamRules { max_size: 3 }),
            ..BoardConfig::default()
        };
        let create = CreateBoard {
            board: "b".into(),
            config: config.checked().expect("valid"),
            max_boards: None,
            hidden: Vec::new(),
        };
        state.apply(&Command::from(create)).expect("create");
        for (i, (m, p, t)) in [
            ("a", Some("FR"), Some("wolves")),
            ("b", Some("DE"), Some("bears")),
            ("c", None, Some("wolves")),
            ("d", Some("FR"), None),
            ("e", None, Some("bears")),
        ]
        .into_iter()
        .enumerate()
        {
            let score = [10, 20, 10, 5, 0][i];
            let Command::Write(mut w) = write(ScoreInput::Score(score), None, None) else {
                unreachable!()
            };
            w.member = m.into();
            w.at_us += i as i64;
            w.partition = p.map(str::to_owned);
            w.team = t.map(str::to_owned);
            state.apply(&Command::Write(w)).expect("write");
        }
        // A member hidden on the board: its score is out of its team's sum, before the
        // snapshot and after.
        let hide = photofinish_core::op::Hide::logged("c".into(), true, false);
        let op = Command::Op {
            board: "b".into(),
            at_us: 1_795_392_005_000_100,
            op: photofinish_core::op::LoggedOp::new(Box::new(hide)),
        };
        state.apply(&op).expect("hide");
        let standings = |state: &State| {
            let handle = state.board("b").expect("board");
            let b = read_lock(&handle);
            let (_, r) = b.read(&PeriodRef::Current, 0).expect("period");
            let r = r.expect("ranking");
            let parts =
                ["FR", "DE", "JP"].map(|p| r.view_in(None, Some(p)).page(0, 10, RankStyle::Dense));
            let teams = [None, Some("c")].map(|own| {
                let view = r.view(own);
                let t = view.teams().expect("teams");
                t.page(0, 10, RankStyle::Ordinal)
            });
            (parts, teams)
        };
        let mut bytes = Vec::new();
        crate::snapshot::write(&state, 1, 5, &mut bytes).expect("snapshot");
        let loaded = crate::snapshot::read(&bytes).expect("read");
        let want = standings(&state);
        assert_eq!(want.0[0].len(), 2);
        let sums: Vec<(&str, i64)> = want.1[0]
            .iter()
            .map(|t| (t.team.as_str(), t.score))
            .collect();
        assert_eq!(sums, [("bears", 20), ("wolves", 10)], "c's 10 is hidden");
        assert_eq!(
            want.1[1][0].score, 20,
            "c sees its own score in wolves' sum"
        );
        assert_eq!(standings(&loaded.state), want);
    }

    /// The bytes of a kind-3 and a kind-14 record as the format has always written them
    /// decode to the same write: the layout is the format's, not this module's to change.
    #[test]
    fn records_in_the_existing_format_still_decode() {
        let mut old = Enc::default();
        old.u8(WRITE);
        old.str("b");
        old.str("ann");
        old.u8(op_code(Some(Op::Set)));
        old.i64(-7);
        old.i64(5);
        old.opt_str(None);
        let decoded = Command::decode(&old.0).expect("kind 3 decodes");
        let mut want = LoggedWrite {
            board: "b".into(),
            member: "ann".into(),
            op: Some(Op::Set),
            scores: ScoreInput::Score(-7),
            at_us: 5,
            period_us: None,
            metadata: None,
            over_budget: None,
            partition: None,
            team: None,
        };
        assert_eq!(decoded, Command::Write(want.clone()));

        let mut old = Enc::default();
        old.u8(WRITE_COLUMNS);
        old.str("b");
        old.str("ann");
        old.u8(op_code(Some(Op::Set)));
        old.u8(BY_NAME);
        old.u8(1);
        old.str("kills");
        old.i64(4);
        old.i64(5);
        old.opt_str(Some("{}"));
        old.u8(1);
        old.i64(100);
        want.scores = ScoreInput::Named(vec![("kills".into(), 4)]);
        want.metadata = Some("{}".into());
        want.period_us = Some(100);
        let decoded = Command::decode(&old.0).expect("kind 14 decodes");
        assert_eq!(decoded, Command::Write(want));
    }

    /// A record cut short, or with an unknown scores form or too many scores, is damage.
    #[test]
    fn damaged_records_do_not_decode() {
        let mut e = Enc::default();
        write(ScoreInput::Positional(vec![1, 2]), Some(9), None).encode(&mut e);
        for cut in 1..e.0.len() {
            assert!(Command::decode(&e.0[..cut]).is_err(), "cut at {cut}");
        }
        let form_at = 1 + (4 + 1) + (4 + 3) + 1;
        let mut bad = e.0.clone();
        bad[form_at] = 9;
        assert!(Command::decode(&bad).is_err());
        let mut bad = e.0.clone();
        bad[form_at + 1] = (MAX_COLUMNS + 1) as u8;
        assert!(Command::decode(&bad).is_err());
    }
}
