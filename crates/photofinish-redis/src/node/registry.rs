//! What spans boards, decided once (docs/SPEC.md §12, docs/redis-layout.md "What spans
//! boards"): a namespace's lifecycle log, a log like a board's (`ns:{@lifecycle}:…`, a
//! name no board can have) whose entries every node applies in one order with the
//! store's state machine. It lists the boards — a name registered, counted against
//! `--max-boards`, before its create is appended; unregistered after its delete — and
//! holds the members hidden across every board and the erasure ledger. Each such fact is one entry, decided
//! where it is applied: a limit is exact whatever the number of nodes, and a refusal
//! appends nothing that changes state. What follows from a fact (a hide in each board's
//! log) is written after it. The registry is a superset of the boards: a name whose
//! create failed stays listed, and every reader passes over a name with no board.
//!
//! A namespace written by a release that kept these in Redis sets (`ns:boards`,
//! `ns:hidden`) has them taken into its lifecycle log when a node first connects.

use std::sync::Arc;

use photofinish_core::board::HideScope;
use photofinish_core::op::{Hide, LoggedOp};
use photofinish_core::BoardError;
use photofinish_store::command::registry::{Register, Unregister};
use photofinish_store::command::Command;
use photofinish_store::ops::{execute_one, hide_changed, Engine};
use photofinish_store::Applied;

use super::LogStore;
use crate::conn::unavailable;
use crate::replica::Replica;

/// The lifecycle log's name among the node's logs: `@` is in no board name.
pub(crate) const LIFECYCLE: &str = "@lifecycle";

impl LogStore {
    /// The lifecycle log's replica, caught up as a read is.
    async fn lifecycle(&self) -> Result<Arc<Replica>, BoardError> {
        self.fresh(LIFECYCLE).await
    }

    /// Appends `cmd` to the lifecycle log and answers it as applied.
    async fn decide(&self, cmd: Command) -> Result<Applied, BoardError> {
        execute_one(self, LIFECYCLE, cmd, false).await
    }

    /// Registers `board` before its create is appended, refusing it (`too_many_boards`,
    /// nothing appended that changes state) when that would pass the board limit.
    pub(super) async fn reserve(&self, board: &str) -> Result<(), BoardError> {
        self.decide(Command::Register(Register {
            board: board.to_owned(),
            max_boards: self.max_boards,
        }))
        .await
        .map(drop)
    }

    /// Registers `board` (after its create is applied) if the registry does not list it:
    /// a delete on another node meanwhile may have unregistered the name its create took.
    pub(super) async fn list(&self, board: &str) -> Result<(), BoardError> {
        if self.lifecycle().await?.state().is_registered(board) {
            return Ok(());
        }
        self.decide(Command::Register(Register {
            board: board.to_owned(),
            max_boards: None,
        }))
        .await
        .map(drop)
    }

    /// Unregisters `board` after its delete is applied, and registers it again if a
    /// create on another node came after the delete.
    pub(super) async fn unlist(&self, board: &str) -> Result<(), BoardError> {
        self.decide(Command::Unregister(Unregister {
            board: board.to_owned(),
        }))
        .await?;
        if Engine::board(self, board).await.is_ok() {
            self.list(board).await?;
        }
        Ok(())
    }

    /// The members hidden across every board (docs/SPEC.md §15), by name.
    pub(super) async fn hidden_set(&self) -> Result<Vec<String>, BoardError> {
        Ok(self.lifecycle().await?.state().hidden_everywhere())
    }

    /// Hides `member` across every board (`hidden`) or undoes that, as one lifecycle
    /// entry; whether that changed the set. At most
    /// [`photofinish_core::config::MAX_HIDDEN_MEMBERS`] in it: past that,
    /// `too_many_hidden`, decided where the entry is applied, and nothing changes.
    pub(super) async fn set_hidden(&self, member: &str, hidden: bool) -> Result<bool, BoardError> {
        let cmd = Command::HideEverywhere {
            member: member.to_owned(),
            hidden,
        };
        hide_changed(self.decide(cmd).await?)
    }

    /// The erasure ledger (docs/SPEC.md §16), as the lifecycle log holds it.
    pub(super) async fn ledger(&self) -> Result<Vec<(String, i64)>, BoardError> {
        Ok(self.lifecycle().await?.state().erasure_ledger())
    }

    /// The boards the registry lists, by name.
    pub(super) async fn registered(&self) -> Result<Vec<String>, BoardError> {
        Ok(self.lifecycle().await?.state().registered())
    }

    /// Takes a namespace's registry and hidden set as an earlier release kept them
    /// (`ns:boards`, `ns:hidden`) into its lifecycle log, once, when the log is empty;
    /// then deletes the sets. Two nodes doing it at once append the same facts twice,
    /// which changes nothing the second time.
    pub(super) async fn adopt_earlier_sets(&self) -> Result<(), BoardError> {
        let (boards_key, hidden_key) = (
            format!("{}:boards", self.namespace),
            format!("{}:hidden", self.namespace),
        );
        let earlier: i64 = self
            .conn
            .query(redis::cmd("EXISTS").arg(&boards_key).arg(&hidden_key))
            .await
            .map_err(unavailable)?;
        if earlier == 0 || self.lifecycle().await?.taken().await > 0 {
            return Ok(());
        }
        let members = |key: String| async move {
            self.conn
                .query::<Vec<String>>(redis::cmd("SMEMBERS").arg(key))
                .await
                .map_err(unavailable)
        };
        let (boards, hidden) = (
            members(boards_key.clone()).await?,
            members(hidden_key.clone()).await?,
        );
        if boards.is_empty() && hidden.is_empty() {
            return Ok(());
        }
        let mut facts: Vec<(Command, bool)> = boards
            .into_iter()
            .map(|board| {
                let r = Register {
                    board,
                    max_boards: None,
                };
                (Command::Register(r), false)
            })
            .collect();
        facts.extend(hidden.into_iter().map(|member| {
            let hide = Command::HideEverywhere {
                member,
                hidden: true,
            };
            (hide, false)
        }));
        let adopted = facts.len();
        for answer in Engine::execute(self, LIFECYCLE, facts).await? {
            answer?;
        }
        self.conn
            .query::<i64>(redis::cmd("DEL").arg(boards_key).arg(hidden_key))
            .await
            .map_err(unavailable)?;
        tracing::info!(
            namespace = %self.namespace,
            facts = adopted,
            "took the earlier board registry and hidden set into the lifecycle log"
        );
        Ok(())
    }

    /// Logs, on `board`, `member` hidden (or shown) as across every board, if the board
    /// exists and is not so already; its audit entry names `actor`.
    pub(super) async fn hide_on(
        &self,
        board: &str,
        member: &str,
        hidden: bool,
        actor: &str,
    ) -> Result<(), BoardError> {
        let cmd = Command::Op {
            board: board.to_owned(),
            at_us: 0,
            op: LoggedOp::new(Box::new(Hide::everywhere(member, hidden))),
        };
        match photofinish_store::ops::execute_audited(self, board, cmd, actor).await {
            Ok(_) => self.list_audited(board).await,
            // A board listed but gone (or never made): nothing to hide.
            Err(BoardError::BoardNotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// After `board`'s create: the members hidden across every board now, that its
    /// create did not carry, hidden on it (and any no longer so, shown).
    pub(super) async fn reconcile_hidden(
        &self,
        board: &str,
        actor: &str,
    ) -> Result<(), BoardError> {
        let now: std::collections::BTreeSet<String> =
            self.hidden_set().await?.into_iter().collect();
        let has: std::collections::BTreeSet<String> = {
            let handle = Engine::board(self, board).await?;
            let b = photofinish_store::state::read_lock(&handle);
            b.hidden_scopes()
                .into_iter()
                .filter(|(_, bits)| bits & HideScope::Everywhere.bit() != 0)
                .map(|(m, _)| m.to_owned())
                .collect()
        };
        for m in now.difference(&has) {
            self.hide_on(board, m, true, actor).await?;
        }
        for m in has.difference(&now) {
            self.hide_on(board, m, false, actor).await?;
        }
        Ok(())
    }

    fn audited_key(&self) -> String {
        format!("{}:audited", self.namespace)
    }

    /// Lists `board` among those whose logs hold audit entries (docs/SPEC.md §15), after
    /// an admin change's entry: the audit log reads their trails, a deleted board's too.
    pub(super) async fn list_audited(&self, board: &str) -> Result<(), BoardError> {
        self.conn
            .query::<i64>(redis::cmd("SADD").arg(self.audited_key()).arg(board))
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// The boards whose logs may hold audit entries, by name.
    pub(super) async fn audited(&self) -> Result<Vec<String>, BoardError> {
        let mut names: Vec<String> = self
            .conn
            .query(redis::cmd("SMEMBERS").arg(self.audited_key()))
            .await
            .map_err(unavailable)?;
        names.sort_unstable();
        Ok(names)
    }
}
