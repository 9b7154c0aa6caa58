//! What the state keeps for moderation and audit (docs/SPEC.md §15): the audit log — its
//! entries made from each applied `Audited` command, read newest first within the
//! retention — and, on the embedded store, the members hidden across every board.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use photofinish_core::audit::{AuditEntry, AuditQuery, MAX_AUDIT_ENTRIES};
use photofinish_core::board::HideScope;
use photofinish_core::config::MAX_HIDDEN_MEMBERS;
use photofinish_core::idempotency::Answer;
use photofinish_core::op::{BoardOp, Hide, OpAnswer};
use photofinish_core::BoardError;

use super::{write_lock, Applied, State};
use crate::command::Command;

/// `v` as a JSON value (what an audit entry's detail holds).
fn json_of<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or_default()
}

/// Who made an audited change, when, and on which board: what each of its entries shares.
#[derive(Clone, Copy)]
struct Stamp<'a> {
    actor: &'a str,
    at_us: i64,
    board: &'a str,
}

impl Stamp<'_> {
    /// The entry of `action` (on `member`, when it names one) with its `detail`.
    fn of(self, action: &str, member: Option<&str>, detail: serde_json::Value) -> AuditEntry {
        AuditEntry {
            at_us: self.at_us,
            actor: self.actor.to_owned(),
            action: action.to_owned(),
            board: self.board.to_owned(),
            member: member.map(str::to_owned),
            detail: detail.to_string(),
        }
    }

    /// The entry an operation of its own module makes with `answer`, if it makes one
    /// ([`BoardOp::audit`]).
    fn op(self, op: &dyn BoardOp, answer: &OpAnswer) -> Option<AuditEntry> {
        let note = op.audit(answer)?;
        Some(self.of(note.action, note.member.as_deref(), note.detail))
    }
}

impl State {
    /// The audit log, oldest first.
    pub fn audit_log(&self) -> std::sync::MutexGuard<'_, VecDeque<AuditEntry>> {
        self.audit.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many entries of the audit log name each member.
    pub(super) fn audit_named(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.audit_named.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts `e` in or out of the entries naming its member.
    fn count_named(named: &mut HashMap<String, u32>, e: &AuditEntry, added: bool) {
        let Some(member) = &e.member else { return };
        if added {
            *named.entry(member.clone()).or_default() += 1;
        } else if let Some(n) = named.get_mut(member) {
            *n -= 1;
            if *n == 0 {
                named.remove(member);
            }
        }
    }

    /// Renames `member` to its HMAC `hmac` in every audit entry naming it (docs/SPEC.md
    /// §16: an erased member is named by its HMAC alone): the entry's `member` is null and
    /// its detail carries `"member_hmac"`. Costs nothing when no entry names it.
    pub(super) fn forget_in_audit(&self, member: &str, hmac: &str) {
        let mut log = self.audit_log();
        if self.audit_named().remove(member).is_none() {
            return;
        }
        for e in log
            .iter_mut()
            .filter(|e| e.member.as_deref() == Some(member))
        {
            e.member = None;
            let mut detail: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&e.detail).unwrap_or_default();
            detail.insert("member_hmac".into(), hmac.into());
            e.detail = serde_json::Value::Object(detail).to_string();
        }
    }

    /// How long audit entries are kept, µs.
    pub fn audit_retention_us(&self) -> i64 {
        self.audit_retention_us.load(Ordering::Relaxed)
    }

    /// Keeps audit entries for `us` (`--audit-retention`).
    pub fn set_audit_retention_us(&self, us: i64) {
        self.audit_retention_us.store(us.max(0), Ordering::Relaxed);
    }

    /// The oldest instant an audit entry is kept from at `now_us`.
    pub fn audit_floor(&self, now_us: i64) -> i64 {
        now_us.saturating_sub(self.audit_retention_us())
    }

    /// The entries `q` wants, newest first, of those kept at `now_us` (older ones are
    /// dropped on the way).
    pub fn audit(&self, q: &AuditQuery, now_us: i64) -> Vec<AuditEntry> {
        let floor = self.audit_floor(now_us);
        let all: Vec<AuditEntry> = {
            let mut log = self.audit_log();
            while log.front().is_some_and(|o| o.at_us < floor) {
                if let Some(old) = log.pop_front() {
                    Self::count_named(&mut self.audit_named(), &old, false);
                }
            }
            log.iter().cloned().collect()
        };
        photofinish_core::audit::newest(all, q, floor)
    }

    /// Adds `e` at the end of the audit log (each audited change, and snapshot loading):
    /// past [`MAX_AUDIT_ENTRIES`] the oldest goes.
    pub fn push_audit(&self, e: AuditEntry) {
        let mut log = self.audit_log();
        let mut named = self.audit_named();
        if log.len() >= MAX_AUDIT_ENTRIES {
            if let Some(old) = log.pop_front() {
                Self::count_named(&mut named, &old, false);
            }
        }
        Self::count_named(&mut named, &e, true);
        log.push_back(e);
    }

    /// The audit entry of admin change `cmd`, applied by `actor` at `at_us` with
    /// `applied`; `None` when it changed nothing (a create of a board that existed alike,
    /// a hide of a hidden member, a replayed keyed request).
    pub(super) fn audit_entry(
        &self,
        actor: &str,
        at_us: i64,
        cmd: &Command,
        applied: &Applied,
    ) -> Option<AuditEntry> {
        let entry = Stamp {
            actor,
            at_us,
            board: cmd.board(),
        };
        match (cmd, applied) {
            (Command::CreateBoard(c), Applied::BoardCreated(true)) => {
                Some(entry.of("board.create", None, json_of(&c.config)))
            }
            (Command::DeleteBoard(_), Applied::BoardDeleted) => {
                Some(entry.of("board.delete", None, serde_json::json!({})))
            }
            (Command::Import { hidden, .. }, Applied::Imported(period, entries)) => Some(entry.of(
                "board.import",
                None,
                serde_json::json!({"period": period.id, "entries": entries, "hidden": hidden.len()}),
            )),
            (Command::Keyed { cmds, .. }, Applied::Keyed(answer)) => match (&cmds[..], answer) {
                ([c], Answer::Created { created: true, .. }) => {
                    self.audit_entry(actor, at_us, c, &Applied::BoardCreated(true))
                }
                ([Command::Op { op, .. }], Answer::Op { value, .. }) => entry.op(op.op(), value),
                _ => None,
            },
            (Command::Op { op, .. }, Applied::Op(Answer::Op { value, .. })) => {
                entry.op(op.op(), value)
            }
            (Command::HideEverywhere { member, hidden }, Applied::Hidden(true)) => {
                // The entry of a hide as on each board, of every board.
                let hide = Hide::everywhere(member, *hidden);
                let e = entry.op(&hide, &OpAnswer::typed(true))?;
                Some(AuditEntry {
                    board: "*".to_owned(),
                    ..e
                })
            }
            _ => None,
        }
    }

    /// The members hidden across every board (docs/SPEC.md §15) by this state's own log
    /// (the embedded store's; a scale-out node keeps them in Redis), by name.
    pub fn hidden_everywhere(&self) -> Vec<String> {
        self.everywhere().iter().cloned().collect()
    }

    pub(super) fn everywhere(&self) -> MutexGuard<'_, std::collections::BTreeSet<String>> {
        self.everywhere.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets the remembered answers naming `member` (named `hmac` in the trail), as an
    /// erase does (docs/SPEC.md §16), unless the erase record applied just before was the
    /// same member's: an erase on 10,000 boards of one table looks through it once.
    pub(super) fn forget_answers(&self, member: &str, hmac: &str) {
        let mut last = self
            .answers_forgotten
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if last.as_deref() != Some(hmac) {
            self.idempotency().forget_naming(member);
            *last = Some(hmac.to_owned());
        }
    }

    /// The erasure ledger (docs/SPEC.md §16): each member erased everywhere, by its
    /// HMAC, and when (µs), in HMAC order.
    pub fn erasure_ledger(&self) -> Vec<(String, i64)> {
        self.ledger()
            .iter()
            .map(|(h, at)| (h.clone(), *at))
            .collect()
    }

    /// Puts an erase in the ledger (snapshot loading).
    pub fn restore_erased(&self, hmac: String, at_us: i64) {
        self.ledger().insert(hmac, at_us);
    }

    pub(super) fn ledger(&self) -> MutexGuard<'_, std::collections::BTreeMap<String, i64>> {
        self.erased.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts `member` among those hidden across every board (snapshot loading).
    pub fn restore_hidden_everywhere(&self, member: String) {
        self.everywhere().insert(member);
    }

    /// A member hidden across every board, present and future, or that undone: in the
    /// state's set and on each board, all or none (the set at its limit refuses it; a
    /// board's own limit counts its own hides, [`photofinish_core::Board::hide_as`]).
    /// At `at_us` (its audited record's instant) the member's teams change.
    pub(super) fn hide_everywhere(
        &self,
        member: &str,
        hidden: bool,
        at_us: Option<i64>,
    ) -> Result<Applied, BoardError> {
        // The boards first: a create takes the boards' lock, then this set's.
        let boards = self.boards();
        let mut set = self.everywhere();
        if hidden == set.contains(member) {
            return Ok(Applied::Hidden(false));
        }
        if hidden {
            if set.len() >= MAX_HIDDEN_MEMBERS {
                return Err(BoardError::TooManyHidden(MAX_HIDDEN_MEMBERS));
            }
            set.insert(member.to_owned());
        } else {
            set.remove(member);
        }
        for (_, handle) in boards {
            let mut b = write_lock(&handle);
            if hidden {
                b.hide_as(member, HideScope::Everywhere, at_us)?;
            } else {
                b.unhide_as(member, HideScope::Everywhere, at_us);
            }
        }
        Ok(Applied::Hidden(true))
    }
}
