//! The log's byte layout of a [`Command`] (docs/format.md, "Payload"): one kind byte,
//! then the kind's fields. Kinds are never reused or changed: a new field is a new kind,
//! so every log ever written still decodes.

use crate::codec::Enc;

use super::Command;

/// Kinds 3, 8, 10 and 14 are a write's ([`super::write`]).
/// A member removed from a period: board, period, member, instant. No longer written: a
/// removal is an operation of its own module, kind 24; this one is read as that.
pub(super) const DELETE_MEMBER: u8 = 4;
/// A board's settings changed: board, the patch as JSON. No longer written: a patch is
/// an operation of its own module, kind 24; this one is read as that.
pub(super) const PATCH_BOARD: u8 = 6;
/// Commands under an idempotency key.
pub(super) const KEYED: u8 = 9;
/// The webhook's cursor moved: board, cursor.
pub(super) const HOOK_ADVANCE: u8 = 11;
/// An import filled a period: board, period instant, import file name, entries.
pub(super) const IMPORT: u8 = 12;
/// An instant marked in a board's log (the scale-out layout's): board, instant.
pub(super) const TICK: u8 = 13;
/// A member joins a period (docs/SPEC.md §14): board, member, instant, then a flag byte
/// (1: the budget's verdict follows, as kind 8 carries it) and that. No longer written: a
/// join is an operation of its own module, kind 24; this one is read as that.
pub(super) const JOIN: u8 = 15;
/// One step of a league's close (docs/SPEC.md §14): board, instant, budget (members).
pub(super) const CLOSE: u8 = 16;
/// A member hidden or shown again (docs/SPEC.md §15): board, member, then flags: bit 0
/// hide (else unhide), bit 1 as a hide across every board. No longer written: a hide is
/// an operation of its own module, kind 24; this one is read as that.
pub(super) const HIDE: u8 = 17;
/// An import that hides members (docs/SPEC.md §15): the fields of kind 12, then a count
/// and each member's name. An import that hides none is kind 12.
pub(super) const IMPORT_HIDING: u8 = 18;
/// A member hidden or shown across every board, on the embedded store (docs/SPEC.md
/// §15): `member` str, then 1 (hide) or 0.
pub(super) const HIDE_EVERYWHERE: u8 = 20;
/// Kinds 1, 5, 7 and 21 are a create's ([`super::create`]), kind 2 a delete's
/// ([`super::delete`]).
/// An operation written as one module (core's `op::BoardOp`): `board` str, `at_us` i64
/// (stamped when sequenced), the operation's name str, then its record as JSON (str).
pub(super) const OP: u8 = 24;
/// An admin change and who made it (docs/SPEC.md §15): `actor` str, `at_us` i64 (stamped
/// when sequenced), then the change as a command of its own, kind byte first.
pub(super) const AUDITED: u8 = 19;
/// Whether an encoded command ([`Command::encode`]) is an import's (its ranking must be
/// staged before it is applied), read from its first byte without decoding it.
pub fn is_import(encoded: &[u8]) -> bool {
    match encoded.first() {
        Some(&(IMPORT | IMPORT_HIDING)) => true,
        // An audited import (admin changes are rare: decoding it whole costs nothing).
        Some(&AUDITED) => {
            Command::decode(encoded).is_ok_and(|c| matches!(c.inner(), Command::Import { .. }))
        }
        _ => false,
    }
}

impl Command {
    /// Appends the encoded command (docs/format.md, "Payload").
    pub fn encode(&self, e: &mut Enc) {
        match self {
            Command::Register(r) => r.encode(e),
            Command::Unregister(u) => u.encode(e),
            Command::Erased(r) => r.encode(e),
            Command::CreateBoard(c) => c.encode(e),
            Command::DeleteBoard(d) => d.encode(e),
            Command::Write(_) | Command::Op { .. } | Command::Keyed { .. } => {
                self.encode_member_change(e)
            }
            Command::Audited { .. } | Command::HideEverywhere { .. } | Command::Import { .. } => {
                self.encode_admin(e)
            }
            _ => self.encode_board(e),
        }
    }

    /// A board's own commands: its webhook cursor, a tick, a close.
    fn encode_board(&self, e: &mut Enc) {
        match self {
            Command::HookAdvance { board, cursor_us } => {
                e.u8(HOOK_ADVANCE);
                e.str(board);
                e.i64(*cursor_us);
            }
            Command::Tick { board, now_us } => {
                e.u8(TICK);
                e.str(board);
                e.i64(*now_us);
            }
            Command::Close {
                board,
                now_us,
                budget,
            } => {
                e.u8(CLOSE);
                e.str(board);
                e.i64(*now_us);
                e.u32(*budget);
            }
            other => unreachable!("encode sends {other:?} elsewhere"),
        }
    }

    /// An admin's changes: audited records, hides across every board, imports.
    fn encode_admin(&self, e: &mut Enc) {
        match self {
            Command::Audited { actor, at_us, cmd } => {
                e.u8(AUDITED);
                e.str(actor);
                e.i64(*at_us);
                cmd.encode(e);
            }
            Command::HideEverywhere { member, hidden } => {
                e.u8(HIDE_EVERYWHERE);
                e.str(member);
                e.u8(u8::from(*hidden));
            }
            Command::Import {
                board,
                period_us,
                file,
                entries,
                hidden,
            } => {
                e.u8(if hidden.is_empty() {
                    IMPORT
                } else {
                    IMPORT_HIDING
                });
                e.str(board);
                e.i64(*period_us);
                e.str(file);
                e.u64(*entries);
                if !hidden.is_empty() {
                    e.hidden_names(hidden);
                }
            }
            other => unreachable!("encode sends {other:?} elsewhere"),
        }
    }

    /// A member's changes: writes, operations of their own module, and commands under a key.
    fn encode_member_change(&self, e: &mut Enc) {
        match self {
            Command::Write(w) => super::write::encode(w, e),
            Command::Op { board, at_us, op } => {
                e.u8(OP);
                e.str(board);
                e.i64(*at_us);
                e.str(op.op().name());
                e.str(&op.op().record_text());
            }
            Command::Keyed { key, batch, cmds } => {
                e.u8(KEYED);
                e.0.extend_from_slice(&key.id.to_le_bytes());
                e.0.extend_from_slice(&key.fingerprint);
                e.i64(key.ttl_us);
                e.i64(key.now_us);
                e.u8(u8::from(*batch));
                e.u32(cmds.len() as u32);
                for c in cmds {
                    c.encode(e);
                }
            }
            other => unreachable!("encode sends {other:?} elsewhere"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::create::{CREATE_BOARD, CREATE_BOARD_HIDING, CREATE_BOARD_V1};
    use crate::command::write::enc_over_budget;
    use crate::command::{CreateBoard, DeleteBoard, KeyRecord, STAMP_AT_COMMIT};
    use photofinish_core::budget::OverBudget;
    use photofinish_core::op::{Hide, Join, LoggedOp, LoggedWrite, Patch, Remove};
    use photofinish_core::view::BoardPatch;
    use photofinish_core::BoardConfig;
    use photofinish_core::BoardSettings;

    /// Logs written before board settings existed (kind 1, config without settings)
    /// still replay: the settings take their defaults.
    #[test]
    fn a_first_format_create_board_still_decodes() {
        let config = BoardConfig {
            retention: 3,
            ..BoardConfig::default()
        };
        let mut e = Enc::default();
        e.u8(CREATE_BOARD_V1);
        e.str("b");
        e.config(&config);
        let cmd = Command::decode(&e.0).expect("decodes");
        assert_eq!(
            cmd,
            Command::from(CreateBoard {
                board: "b".into(),
                config: config.clone().checked().expect("valid"),
                max_boards: None,
                hidden: Vec::new(),
            })
        );
    }

    /// A create's config is checked as its record is read (it was checked before it was
    /// logged, so one that breaks its rules is damage, not a board to build unchecked).
    #[test]
    fn a_logged_config_that_breaks_its_rules_does_not_decode() {
        let broken = BoardConfig {
            retention: 0,
            ..BoardConfig::default()
        };
        assert!(broken.clone().checked().is_err());
        let mut e = Enc::default();
        e.u8(CREATE_BOARD);
        e.str("b");
        e.config2(&broken);
        let err = Command::decode(&e.0).expect_err("a broken config is damage");
        assert!(err.to_string().contains("retention"), "{err}");
    }

    #[test]
    fn imports_round_trip() {
        for (hidden, kind) in [
            (Vec::new(), IMPORT),
            (vec!["mallory".to_owned(), "eve".to_owned()], IMPORT_HIDING),
        ] {
            let cmd = Command::Import {
                board: "b".into(),
                period_us: 1_795_305_600_000_000,
                file: "import-1-2.rank".into(),
                entries: 10_000_000,
                hidden,
            };
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], kind);
            assert!(is_import(&e.0));
            assert_eq!(Command::decode(&e.0).expect("ok"), cmd);
        }
    }

    #[test]
    fn hook_advances_round_trip() {
        for cursor_us in [0, 1_795_392_000_000_000, i64::MAX] {
            let cmd = Command::HookAdvance {
                board: "daily".into(),
                cursor_us,
            };
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], HOOK_ADVANCE);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        }
    }

    /// A join is an operation of its own module, logged as kind 24 (its name and its
    /// record); one logged as kind 15 by an earlier version reads as the same command.
    #[test]
    fn joins_round_trip_and_an_earlier_kind_reads_alike() {
        for over_budget in [
            None,
            Some(OverBudget {
                estimate: 9,
                limit: 8,
            }),
        ] {
            let mut cmd = Command::Op {
                board: "cup".into(),
                at_us: 0,
                op: LoggedOp::new(Box::new(Join::logged("ann".into(), over_budget))),
            };
            assert!(cmd.takes_time(true));
            cmd.stamp(1_795_392_000_000_000, true);
            assert!(matches!(
                cmd,
                Command::Op {
                    at_us: 1_795_392_000_000_000,
                    ..
                }
            ));
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], OP);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            // Kind 15, as the version before wrote it.
            let mut old = Enc::default();
            old.u8(JOIN);
            old.str("cup");
            old.str("ann");
            old.i64(1_795_392_000_000_000);
            old.u8(u8::from(over_budget.is_some()));
            enc_over_budget(&mut old, &over_budget);
            assert_eq!(Command::decode(&old.0).expect("decodes"), cmd);
        }
        // An operation this version does not know is refused, not guessed at.
        let mut e = Enc::default();
        e.u8(OP);
        e.str("cup");
        e.i64(1);
        e.str("teleport");
        e.json(&serde_json::json!({"member": "ann"}));
        let err = Command::decode(&e.0).expect_err("unknown operation");
        assert!(err.to_string().contains("teleport"), "{err}");
    }

    #[test]
    fn audited_commands_round_trip() {
        let import = Command::Import {
            board: "b".into(),
            period_us: 0,
            file: "import-1.rank".into(),
            entries: 3,
            hidden: vec!["x".into()],
        };
        for inner in [
            import,
            Command::DeleteBoard(DeleteBoard { board: "b".into() }),
            removal("b", "m", 0),
        ] {
            let mut cmd = Command::Audited {
                actor: "moderator".into(),
                at_us: 0,
                cmd: Box::new(inner.clone()),
            };
            assert!(cmd.takes_time(false));
            cmd.stamp(1_795_392_000_000_000, false);
            let Command::Audited {
                at_us,
                cmd: stamped,
                ..
            } = &cmd
            else {
                unreachable!()
            };
            assert_eq!(*at_us, 1_795_392_000_000_000);
            if let Command::Op { at_us, .. } = **stamped {
                assert_eq!(
                    at_us, 1_795_392_000_000_000,
                    "the inner command is stamped too"
                );
            }
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], AUDITED);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            assert_eq!(cmd.board(), "b");
            assert_eq!(cmd.inner().board(), "b");
            assert_eq!(is_import(&e.0), matches!(inner, Command::Import { .. }));
        }
        // One inside another is a damaged record.
        let twice = Command::Audited {
            actor: "a".into(),
            at_us: 1,
            cmd: Box::new(Command::Audited {
                actor: "a".into(),
                at_us: 1,
                cmd: Box::new(Command::DeleteBoard(DeleteBoard { board: "b".into() })),
            }),
        };
        let mut e = Enc::default();
        twice.encode(&mut e);
        assert!(Command::decode(&e.0).is_err());
    }

    /// A member removed, as this version logs it: an operation of its own module.
    fn removal(board: &str, member: &str, at_us: i64) -> Command {
        Command::Op {
            board: board.into(),
            at_us,
            op: LoggedOp::new(Box::new(Remove::new(
                member.into(),
                &photofinish_core::PeriodRef::Current,
            ))),
        }
    }

    /// A hide and a removal are operations of their own module, logged as kind 24; one
    /// logged as kind 17 or 4 by an earlier version reads as the same command.
    #[test]
    fn hides_and_removals_round_trip_and_earlier_kinds_read_alike() {
        for (hidden, everywhere) in [(true, false), (false, false), (true, true), (false, true)] {
            let cmd = Command::Op {
                board: "cup".into(),
                at_us: 0,
                op: LoggedOp::new(Box::new(Hide::logged("mallory".into(), hidden, everywhere))),
            };
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], OP);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            let mut old = Enc::default();
            old.u8(HIDE);
            old.str("cup");
            old.str("mallory");
            old.u8(u8::from(hidden) | (u8::from(everywhere) << 1));
            assert_eq!(Command::decode(&old.0).expect("decodes"), cmd);
            let all = Command::HideEverywhere {
                member: "mallory".into(),
                hidden,
            };
            let mut e = Enc::default();
            all.encode(&mut e);
            assert_eq!(e.0[0], HIDE_EVERYWHERE);
            assert_eq!(Command::decode(&e.0).expect("decodes"), all);
        }
        let mut e = Enc::default();
        e.u8(HIDE);
        e.str("cup");
        e.str("mallory");
        e.u8(4);
        assert!(Command::decode(&e.0).is_err());
        let mut cmd = removal("cup", "ann", 0);
        assert!(cmd.takes_time(false));
        cmd.stamp(1_795_392_000_000_000, false);
        assert_eq!(cmd, removal("cup", "ann", 1_795_392_000_000_000));
        let mut e = Enc::default();
        cmd.encode(&mut e);
        assert_eq!(e.0[0], OP);
        assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        let mut old = Enc::default();
        old.u8(DELETE_MEMBER);
        old.str("cup");
        old.str("current");
        old.str("ann");
        old.i64(1_795_392_000_000_000);
        assert_eq!(Command::decode(&old.0).expect("decodes"), cmd);
        // A create that hides the members hidden everywhere, with and without a limit.
        for max_boards in [None, Some(7)] {
            let cmd = Command::from(CreateBoard {
                board: "new".into(),
                config: BoardConfig::default().checked().expect("valid"),
                max_boards,
                hidden: vec!["mallory".into(), "eve".into()],
            });
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(e.0[0], CREATE_BOARD_HIDING);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        }
    }

    #[test]
    fn settings_and_patches_round_trip() {
        let config = BoardConfig {
            settings: BoardSettings {
                public_read: true,
                player_writes: true,
                rules: photofinish_core::ScoreRules {
                    min_score: Some(-5),
                    max_score: Some(i64::MAX),
                    max_increment: Some(10),
                    max_members: Some(3),
                },
                grace: 60,
                webhook: Some("https://rewards.example/close".into()),
                webhook_top: Some(10),
                entry: photofinish_core::entry::EntryRules {
                    opens_at: Some(1_795_392_000_000_000),
                    closes_at: Some(1_795_996_800_000_000),
                    max_attempts: Some(3),
                    join_required: true,
                },
                rewards: vec![photofinish_core::rewards::RewardRow {
                    from: None,
                    to: None,
                    top_hundredths: Some(1_250),
                    reward: "gold".into(),
                    amount: 2,
                    tier: None,
                }],
                reward_ttl: Some(600),
            },
            // A webhook needs periods that close, and two of them kept.
            reset: photofinish_core::Reset::Daily,
            retention: 2,
            ..BoardConfig::default()
        };
        let patch = BoardPatch {
            retention: Some(9),
            public_read: Some(false),
            player_writes: None,
            min_score: Some(None),
            max_members: Some(Some(4)),
            grace: Some(30),
            webhook: Some(None),
            webhook_top: Some(Some(5)),
            closes_at: Some(None),
            max_attempts: Some(Some(1)),
            ..BoardPatch::default()
        };
        for cmd in [
            Command::from(CreateBoard {
                board: "b".into(),
                config: config.clone().checked().expect("valid"),
                max_boards: None,
                hidden: Vec::new(),
            }),
            Command::from(CreateBoard {
                board: "b".into(),
                config: config.checked().expect("valid"),
                max_boards: Some(10_000),
                hidden: Vec::new(),
            }),
            Command::Write(LoggedWrite {
                board: "b".into(),
                member: "m".into(),
                op: None,
                scores: photofinish_core::columns::ScoreInput::Score(1),
                at_us: 2,
                period_us: None,
                metadata: None,
                over_budget: Some(OverBudget {
                    estimate: 5,
                    limit: 4,
                }),
                partition: None,
                team: None,
            }),
            Command::Keyed {
                key: KeyRecord {
                    id: photofinish_core::idempotency::digest("key:ci\u{1}b\u{1}retry-1"),
                    fingerprint: [9; 16],
                    ttl_us: 86_400_000_000,
                    now_us: 77,
                },
                batch: true,
                cmds: vec![
                    Command::Write(LoggedWrite {
                        board: "b".into(),
                        member: "m".into(),
                        op: Some(photofinish_core::Op::Set),
                        scores: photofinish_core::columns::ScoreInput::Score(-1),
                        at_us: STAMP_AT_COMMIT,
                        period_us: None,
                        metadata: Some("{}".into()),
                        over_budget: None,
                        partition: None,
                        team: None,
                    }),
                    removal("b", "m", 0),
                ],
            },
        ] {
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        }
        // A patch is an operation of its own module, logged as kind 24; one logged as
        // kind 6 by an earlier version reads as the same operation, without starting a
        // webhook's cursor (its own record of that follows it in such a log).
        let cmd = Command::Op {
            board: "b".into(),
            at_us: 0,
            op: LoggedOp::new(Box::new(Patch::logged(patch.clone()))),
        };
        let mut e = Enc::default();
        cmd.encode(&mut e);
        assert_eq!(e.0[0], OP);
        assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
        let mut old = Enc::default();
        old.u8(PATCH_BOARD);
        old.str("b");
        old.json(&patch);
        assert_eq!(Command::decode(&old.0).expect("decodes"), cmd);
        let new = Command::Op {
            board: "b".into(),
            at_us: 0,
            op: LoggedOp::new(Box::new(Patch::new(patch))),
        };
        assert_ne!(new, cmd, "a patch logged now starts a webhook's cursor");
    }
}
