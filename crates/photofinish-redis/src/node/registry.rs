//! The board registry (`ns:boards`, docs/redis-layout.md): a name is listed, and counted
//! against `--max-boards` in the same script, before its create is appended; listed again
//! after it and unlisted after its delete — a superset of the boards, which readers filter.

use photofinish_core::board::HideScope;
use photofinish_core::config::MAX_HIDDEN_MEMBERS;
use photofinish_core::{BoardConfig, BoardError};
use photofinish_store::command::Command;
use photofinish_store::ops::Engine;

use super::LogStore;
use crate::conn::unavailable;

static RESERVE: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(include_str!("../log/reserve.lua")));

impl LogStore {
    /// Lists `board` in the registry before its create is appended, refusing it when that
    /// would pass the board limit — one script, so creates on several nodes at once cannot
    /// pass the limit together. The registry is a superset of the boards: a name whose
    /// create failed stays listed, and every reader passes over a name with no board.
    pub(super) async fn reserve(
        &self,
        board: &str,
        config: &BoardConfig,
    ) -> Result<(), BoardError> {
        config.validate()?;
        let mut inv = RESERVE.key(self.registry());
        inv.arg(board).arg(
            self.max_boards
                .map_or(-1, |m| i64::try_from(m).unwrap_or(i64::MAX)),
        );
        let listed: i64 = self.conn.invoke(&inv).await.map_err(unavailable)?;
        match (listed, self.max_boards) {
            (0, Some(limit)) => Err(BoardError::TooManyBoards(limit)),
            _ => Ok(()),
        }
    }

    /// Lists `board` (after its create is applied: a delete on another node meanwhile may
    /// have unlisted the name its create reserved).
    pub(super) async fn list(&self, board: &str) -> Result<(), BoardError> {
        self.conn
            .query::<i64>(redis::cmd("SADD").arg(self.registry()).arg(board))
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// Unlists `board` after its delete is applied, and lists it again if a create on
    /// another node came after the delete (whose own listing may have come before this).
    pub(super) async fn unlist(&self, board: &str) -> Result<(), BoardError> {
        self.conn
            .query::<i64>(redis::cmd("SREM").arg(self.registry()).arg(board))
            .await
            .map_err(unavailable)?;
        if Engine::board(self, board).await.is_ok() {
            self.list(board).await?;
        }
        Ok(())
    }

    fn hidden_key(&self) -> String {
        format!("{}:hidden", self.namespace)
    }

    /// The members hidden across every board (docs/SPEC.md §15), by name.
    pub(super) async fn hidden_set(&self) -> Result<Vec<String>, BoardError> {
        let mut names: Vec<String> = self
            .conn
            .query(redis::cmd("SMEMBERS").arg(self.hidden_key()))
            .await
            .map_err(unavailable)?;
        names.sort_unstable();
        Ok(names)
    }

    /// Adds `member` to the members hidden across every board (`hidden`) or takes it
    /// out; whether that changed the set. At most [`MAX_HIDDEN_MEMBERS`] in it.
    pub(super) async fn set_hidden(&self, member: &str, hidden: bool) -> Result<bool, BoardError> {
        if hidden {
            let n: u64 = self
                .conn
                .query(redis::cmd("SCARD").arg(self.hidden_key()))
                .await
                .map_err(unavailable)?;
            if n >= MAX_HIDDEN_MEMBERS as u64 {
                let already: bool = self
                    .conn
                    .query(redis::cmd("SISMEMBER").arg(self.hidden_key()).arg(member))
                    .await
                    .map_err(unavailable)?;
                if !already {
                    return Err(BoardError::TooManyHidden(MAX_HIDDEN_MEMBERS));
                }
            }
        }
        let verb = if hidden { "SADD" } else { "SREM" };
        let n: i64 = self
            .conn
            .query(redis::cmd(verb).arg(self.hidden_key()).arg(member))
            .await
            .map_err(unavailable)?;
        Ok(n > 0)
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
        let cmd = Command::Hide {
            board: board.to_owned(),
            member: member.to_owned(),
            hidden,
            everywhere: true,
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

    pub(super) async fn registered(&self) -> Result<Vec<String>, BoardError> {
        let mut names: Vec<String> = self
            .conn
            .query(redis::cmd("SMEMBERS").arg(self.registry()))
            .await
            .map_err(unavailable)?;
        names.sort();
        Ok(names)
    }
}
