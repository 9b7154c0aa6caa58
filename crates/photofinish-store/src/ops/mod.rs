//! The board operations of the [`Leaderboard`](photofinish_core::Leaderboard) service,
//! written once over an [`Engine`]: where a board's state is read, and how commands are
//! logged and applied. The embedded store (one local log for every board) and a Redis
//! node (a log per board in Redis, docs/redis-layout.md) are the two engines; what each
//! operation checks, which [`Command`] it becomes and how the applied answer reads back
//! live here alone, so both backends answer alike by construction.
//!
//! Checks that need the clock run here, before a command is logged, never in
//! [`State::apply`](crate::State::apply): a write with an explicit `at` older than the
//! board's window is refused here, so replaying the log never depends on when it runs.

use std::future::Future;

use async_trait::async_trait;
use futures_util::future::{Either, FutureExt};
use photofinish_core::idempotency::{Answer, IdempotencyKey, Replayable};
use photofinish_core::op::board_state;
use photofinish_core::op::{BoardOp, Change, LoggedOp};
use photofinish_core::op::{LoggedWrite, Unchecked, WriteOutcome, WriteRequest};
use photofinish_core::view::Totals;
use photofinish_core::{Board, BoardConfig, BoardError, CheckedConfig};

use crate::command::{Command, CreateBoard, DeleteBoard, KeyRecord, STAMP_AT_COMMIT};
use crate::idempotency::{short_fingerprint, KeyReused};
use crate::state::{read_lock, Applied, BoardHandle};

mod delegate;
mod erasure;
mod import;
mod reads;
mod scheduled;

pub use erasure::{names_where, recall_erase, record_erased};
pub use import::{import_rows, put_import, Built, ImportedRows};
pub use reads::*;
use scheduled::start_hook;
pub use scheduled::{close_step, hook_advance, owes_close};

/// What an engine provides the operations. See the module docs.
#[async_trait]
pub trait Engine: Send + Sync {
    /// The clock every check before logging uses.
    fn now_us(&self) -> i64;

    /// The board limit a create is logged with.
    fn max_boards(&self) -> Option<u64>;

    /// The members hidden across every board that a create is logged with (docs/SPEC.md
    /// §15): where that set is kept outside the board's log (Redis). The embedded store's
    /// state applies its own set to every create: none here.
    async fn hidden_everywhere(&self) -> Result<Vec<String>, BoardError> {
        Ok(Vec::new())
    }

    /// The log what spans boards is decided in (docs/SPEC.md §12): the embedded store's
    /// one log (`""`), a namespace's lifecycle log.
    fn spanning_log(&self) -> &'static str;

    /// The erasure ledger (docs/SPEC.md §16) as that log's state holds it: each member
    /// erased everywhere, by its HMAC, and when.
    async fn erasure_ledger(&self) -> Result<Vec<(String, i64)>, BoardError>;

    /// The names of every board, in name order (cheap: no board is read).
    async fn board_names(&self) -> Result<Vec<String>, BoardError>;

    /// Board `board`, reflecting every command acknowledged before the call
    /// (`board_not_found` if there is none).
    async fn board(&self, board: &str) -> Result<BoardHandle, BoardError>;

    /// Board `board` for the checks made before a command is logged: it may be as this
    /// node last saw it (the apply checks again what matters), but never misses a board
    /// that exists. By default [`Self::board`].
    async fn board_to_write(&self, board: &str) -> Result<BoardHandle, BoardError> {
        self.board(board).await
    }

    /// Logs `cmds` (each with whether its time is the log's stamp) on `board`'s log, in
    /// order, and answers each as applied. An error fails them all, and none was applied.
    async fn execute(
        &self,
        board: &str,
        cmds: Vec<(Command, bool)>,
    ) -> Result<Vec<Result<Applied, BoardError>>, BoardError>;

    /// Logs each of `cmds` on its board's log (`(board, command)`, none stamped) and
    /// answers each as applied, in order: a change of every board at once
    /// ([`change_everywhere`]). The embedded store logs them in a few group commits of its
    /// one log; a Redis node appends to several boards' logs at once. An error of one
    /// board's log is that board's answer.
    async fn execute_spread(
        &self,
        cmds: Vec<(String, Command)>,
    ) -> Result<Vec<Result<Applied, BoardError>>, BoardError>;

    /// What the idempotency table remembers of key `id` on `board` (asked when a keyed
    /// command was refused before it was applied: a remembered answer stands).
    async fn recall(
        &self,
        board: &str,
        id: u128,
        fingerprint: [u8; 16],
    ) -> Option<Result<Answer, KeyReused>>;
}

/// `Leaderboard::totals`: the boards and the members in their periods, over every board
/// the engine lists (one listed but gone by the time it is read is left out).
pub async fn totals<E: Engine + ?Sized>(e: &E) -> Result<Totals, BoardError> {
    let mut totals = Totals {
        boards: 0,
        members: 0,
    };
    for name in e.board_names().await? {
        match e.board(&name).await {
            Ok(handle) => {
                totals.boards += 1;
                totals.members += read_lock(&handle).total_members();
            }
            Err(BoardError::BoardNotFound(_)) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(totals)
}

/// Logs and applies one command; its answer.
///
/// Not an `async fn`: the command moves into the engine's future before the first await,
/// so the future a write awaits holds a pointer, not the command (every byte of a
/// write's future is moved to the heap once per write: docs/bench-history.md §35).
pub fn execute_one<'a, E: Engine + ?Sized>(
    e: &'a E,
    board: &'a str,
    cmd: Command,
    stamp: bool,
) -> impl Future<Output = Result<Applied, BoardError>> + Send + 'a {
    let answers = e.execute(board, vec![(cmd, stamp)]);
    async move {
        answers
            .await?
            .pop()
            .unwrap_or_else(|| Err(BoardError::Unavailable("the log answered nothing".into())))
    }
}

/// `Leaderboard::hide_everywhere` on an engine with one log for every board (the
/// embedded store): one audited record for the state-wide set and every board; whether it
/// changed anything.
pub async fn hide_everywhere_in_one_log<E: Engine + ?Sized>(
    e: &E,
    member: &str,
    hidden: bool,
    actor: &str,
) -> Result<bool, BoardError> {
    let cmd = Command::HideEverywhere {
        member: member.to_owned(),
        hidden,
    };
    hide_changed(execute_one(e, "", audited(actor, cmd), false).await?)
}

/// `Leaderboard::change_everywhere`: `op` on every board the engine lists, each in its
/// own log (so every node applies it alike, as a hide everywhere is), audited as
/// `actor`'s if the operation is an admin change; each board's name and answer. A board
/// listed but gone by the time its command is applied is passed over.
pub async fn change_everywhere<E: Engine + ?Sized>(
    e: &E,
    op: LoggedOp,
    actor: &str,
) -> Result<Vec<(String, photofinish_core::op::OpAnswer)>, BoardError> {
    let audits = op.op().audited();
    let cmds: Vec<(String, Command)> = e
        .board_names()
        .await?
        .into_iter()
        .map(|board| {
            let cmd = Command::Op {
                board: board.clone(),
                at_us: 0,
                op: op.clone(),
            };
            let cmd = if audits { audited(actor, cmd) } else { cmd };
            (board, cmd)
        })
        .collect();
    let names: Vec<String> = cmds.iter().map(|(board, _)| board.clone()).collect();
    let mut out = Vec::with_capacity(names.len());
    for (board, answer) in names.into_iter().zip(e.execute_spread(cmds).await?) {
        match answer {
            Ok(Applied::Op(Answer::Op { value, .. })) => out.push((board, value)),
            Ok(other) => return Err(unexpected(op.op().name(), &other)),
            Err(BoardError::BoardNotFound(_)) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(out)
}

/// The error for an answer the log should not have given to `what` (a command of the
/// wrong kind: a bug, never a user's doing).
pub(crate) fn unexpected(what: &str, other: &Applied) -> BoardError {
    BoardError::Unavailable(format!("the log answered {what} with {other:?}"))
}

/// A hide's answer, on one board or on every board: whether it changed anything.
pub fn hide_changed(applied: Applied) -> Result<bool, BoardError> {
    match applied {
        Applied::Hidden(changed) => Ok(changed),
        other => Err(unexpected("a hide", &other)),
    }
}

/// Logs and applies admin change `cmd` on `board`, audited as `actor`'s.
pub async fn execute_audited<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    cmd: Command,
    actor: &str,
) -> Result<Applied, BoardError> {
    execute_one(e, board, audited(actor, cmd), false).await
}

/// Admin change `cmd` with who made it (docs/SPEC.md §15): one log record that applies
/// it and, if it changed something, adds its audit entry.
pub(crate) fn audited(actor: &str, cmd: Command) -> Command {
    Command::Audited {
        actor: actor.to_owned(),
        at_us: 0,
        cmd: Box::new(cmd),
    }
}

/// Runs `f` on `board` under its read lock.
async fn with_board<E: Engine + ?Sized, T>(
    e: &E,
    board: &str,
    f: impl FnOnce(&Board) -> Result<T, BoardError>,
) -> Result<T, BoardError> {
    let handle = e.board(board).await?;
    let b = read_lock(&handle);
    f(&b)
}

/// Runs `f` on `board` as [`Engine::board_to_write`] has it, under its read lock.
async fn before_write<E: Engine + ?Sized, T>(
    e: &E,
    board: &str,
    f: impl FnOnce(&Board) -> Result<T, BoardError>,
) -> Result<T, BoardError> {
    let handle = e.board_to_write(board).await?;
    let b = read_lock(&handle);
    f(&b)
}

/// The commands of `change` on `board` under a key, and whether they are a batch; a
/// change that takes no key (docs/SPEC.md §7) is refused.
async fn keyed_commands<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    change: Change,
) -> Result<(bool, Vec<Command>), BoardError> {
    let now = e.now_us();
    // The command of a write inside a keyed operation: its instant stamped at commit.
    let keyed_write = |b: &Board, w: WriteRequest| {
        LoggedWrite::keyed(b, board, w, now, STAMP_AT_COMMIT).map(Command::Write)
    };
    Ok(match change {
        Change::Op(op) if op.takes_key() => (false, vec![op_command(e, board, op).await?]),
        Change::Delete | Change::Op(_) => return Err(change.key_refused()),
        // A write naming no period needs nothing of the board before it is logged (a
        // missing board is the apply's refusal, under the key); its instant is the key's.
        Change::Write(w) if w.period.is_none() => (
            false,
            vec![Command::Write(LoggedWrite::new(
                board,
                w,
                STAMP_AT_COMMIT,
                None,
            ))],
        ),
        Change::Write(w) => (
            false,
            vec![before_write(e, board, |b| keyed_write(b, w)).await?],
        ),
        Change::Batch(writes) => (
            true,
            before_write(e, board, |b| {
                writes.into_iter().map(|w| keyed_write(b, w)).collect()
            })
            .await?,
        ),
        Change::Create(config) => (
            false,
            vec![Command::from(CreateBoard {
                board: board.to_owned(),
                config,
                max_boards: e.max_boards(),
                hidden: e.hidden_everywhere().await?,
            })],
        ),
    })
}

fn written(applied: Applied) -> Result<WriteOutcome, BoardError> {
    match applied {
        Applied::Written(w) => Ok(w),
        other => Err(unexpected("a write", &other)),
    }
}

/// `Leaderboard::change`: under `key`, as [`keyed`]; else applied as it is.
///
/// Not an `async fn`, and every change but a write without a key — nearly every
/// request — is boxed: the future a plain write awaits then holds only what the write
/// needs across its one wait (tens of bytes), where one future for every kind of change
/// held all their commands, keys and configs (3.2 KB), which every write moved to the
/// heap (docs/bench-history.md §35).
pub fn change<'a, E: Engine + ?Sized>(
    e: &'a E,
    board: &'a str,
    change: Change,
    key: Option<&'a IdempotencyKey>,
    actor: &'a str,
) -> impl Future<Output = Result<Replayable, BoardError>> + Send + 'a {
    match (change, key) {
        (Change::Write(w), None) => Either::Left(write(e, board, w).map(|outcome| {
            Ok(Replayable {
                answer: Answer::Written(outcome?),
                replayed: false,
            })
        })),
        (change, key) => Either::Right(Box::pin(any_change(e, board, change, key, actor))),
    }
}

/// [`change`] of any kind.
async fn any_change<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    change: Change,
    key: Option<&IdempotencyKey>,
    actor: &str,
) -> Result<Replayable, BoardError> {
    if let Some(key) = key {
        let done = keyed(e, board, key, change, actor).await?;
        if let (
            Answer::Created {
                created: true,
                state,
            },
            false,
        ) = (&done.answer, done.replayed)
        {
            start_hook(e, board, &state.config).await;
        }
        return Ok(done);
    }
    let answer = match change {
        Change::Create(config) => {
            let created = create_board(e, board, config, actor).await?;
            let now = e.now_us();
            let state = with_board(e, board, |b| board_state(board, b, now)).await?;
            if created {
                start_hook(e, board, &state.config).await;
            }
            Answer::Created {
                created,
                state: Box::new(state),
            }
        }
        Change::Delete => {
            delete_board(e, board, actor).await?;
            Answer::Deleted
        }
        Change::Write(w) => Answer::Written(write(e, board, w).await?),
        Change::Batch(writes) => Answer::Batch(write_batch(e, board, writes).await?),
        Change::Op(op) => apply_op(e, board, op, actor).await?,
    };
    Ok(Replayable {
        answer,
        replayed: false,
    })
}

/// An operation written as one module ([`photofinish_core::op::BoardOp`]): checked
/// against the board as this node has it, then logged — with who made it, when it is an
/// admin change — with the instant the log gives it, applied, answered.
async fn apply_op<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    op: Box<dyn BoardOp>,
    actor: &str,
) -> Result<Answer, BoardError> {
    let (name, audits) = (op.name(), op.audited());
    let cmd = op_command(e, board, op).await?;
    let cmd = if audits { audited(actor, cmd) } else { cmd };
    match execute_one(e, board, cmd, true).await? {
        Applied::Op(answer) => Ok(answer),
        other => Err(unexpected(name, &other)),
    }
}

/// The command of operation `op` on `board`, after its check against the board as this
/// node has it (a refusal logs nothing); its instant is the log's to give.
async fn op_command<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    op: Box<dyn BoardOp>,
) -> Result<Command, BoardError> {
    let now = e.now_us();
    before_write(e, board, |b| op.check(b, now)).await?;
    Ok(Command::Op {
        board: board.to_owned(),
        at_us: 0,
        op: LoggedOp::new(op),
    })
}

/// A board created.
async fn create_board<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    config: CheckedConfig,
    actor: &str,
) -> Result<bool, BoardError> {
    let cmd = Command::from(CreateBoard {
        board: board.to_owned(),
        config,
        max_boards: e.max_boards(),
        hidden: e.hidden_everywhere().await?,
    });
    Ok(execute_one(e, board, audited(actor, cmd), false).await? == Applied::BoardCreated(true))
}

/// `Leaderboard::check_board`.
pub async fn check_board<E: Engine + ?Sized>(e: &E, board: &str) -> Result<(), BoardError> {
    e.board(board).await.map(drop)
}

/// `Leaderboard::config`.
pub async fn config<E: Engine + ?Sized>(e: &E, board: &str) -> Result<BoardConfig, BoardError> {
    with_board(e, board, |b| Ok(b.config().clone())).await
}

/// A board deleted.
async fn delete_board<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    actor: &str,
) -> Result<(), BoardError> {
    e.board(board).await?;
    let cmd = Command::DeleteBoard(DeleteBoard {
        board: board.to_owned(),
    });
    execute_one(e, board, audited(actor, cmd), false)
        .await
        .map(drop)
}

/// One write. A write with nothing to check against its board before it is logged
/// ([`LoggedWrite::unchecked`]) goes to the log at once, its instant the log's to stamp;
/// the others are checked first (boxed, as [`change`] says why).
fn write<'a, E: Engine + ?Sized>(
    e: &'a E,
    board: &'a str,
    w: WriteRequest,
) -> impl Future<Output = Result<WriteOutcome, BoardError>> + Send + 'a {
    match LoggedWrite::unchecked(board, w) {
        Unchecked::Ready(record) => Either::Left(
            execute_one(e, board, Command::Write(record), true).map(|applied| written(applied?)),
        ),
        Unchecked::NeedsBoard(w) => Either::Right(Box::pin(checked_write(e, board, w))),
    }
}

/// A write checked against its board as this node has it before it is logged.
async fn checked_write<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    w: WriteRequest,
) -> Result<WriteOutcome, BoardError> {
    let now = e.now_us();
    let (w, stamp) = before_write(e, board, |b| LoggedWrite::checked(b, board, w, now)).await?;
    written(execute_one(e, board, Command::Write(w), stamp).await?)
}

/// A batch: every entry logged in order, in one group where the engine can; an entry
/// refused before logging (its clock check) fails alone.
async fn write_batch<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    writes: Vec<WriteRequest>,
) -> Result<Vec<Result<WriteOutcome, BoardError>>, BoardError> {
    let now = e.now_us();
    // Each entry's command goes to the log; an entry refused before logging keeps its
    // place as its refusal (`Err`), the others as `Ok(())`, in order.
    let (cmds, places) = before_write(e, board, |b| {
        let mut cmds = Vec::with_capacity(writes.len());
        let places: Vec<Result<(), BoardError>> = writes
            .into_iter()
            .map(|w| {
                LoggedWrite::checked(b, board, w, now)
                    .map(|(w, stamp)| cmds.push((Command::Write(w), stamp)))
            })
            .collect();
        Ok((cmds, places))
    })
    .await?;
    let mut applied = e.execute(board, cmds).await?.into_iter();
    Ok(places
        .into_iter()
        .map(|p| match p {
            Ok(()) => applied
                .next()
                .unwrap_or_else(|| Err(BoardError::Unavailable("the log answered too few".into())))
                .and_then(written),
            Err(err) => Err(err),
        })
        .collect())
}

/// A change under an idempotency key.
async fn keyed<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    key: &IdempotencyKey,
    change: Change,
    actor: &str,
) -> Result<Replayable, BoardError> {
    let id = key.digest;
    let audits = change.is_audited();
    let fingerprint = short_fingerprint(&key.fingerprint);
    // A key already remembered is answered where its command is applied (one lookup in
    // the table, in log order), so a retry is logged like any keyed command. When the
    // command is refused instead — its board deleted since, the log unwritable — the
    // table is asked here: a remembered answer stands over today's refusal.
    let applied = match keyed_commands(e, board, change).await {
        Ok((batch, cmds)) => {
            let key = KeyRecord {
                id,
                fingerprint,
                ttl_us: key.ttl_us,
                now_us: 0,
            };
            let cmd = Command::Keyed { key, batch, cmds };
            let cmd = if audits { audited(actor, cmd) } else { cmd };
            execute_one(e, board, cmd, false).await
        }
        Err(err) => Err(err),
    };
    let reused = || BoardError::IdempotencyKeyReused(key.key.clone());
    match applied {
        Ok(Applied::Keyed(answer)) => Ok(Replayable {
            answer,
            replayed: false,
        }),
        Ok(Applied::Replayed(answer)) => Ok(Replayable {
            answer,
            replayed: true,
        }),
        Ok(other) => Err(unexpected("a keyed command", &other)),
        Err(BoardError::IdempotencyKeyReused(_)) => Err(reused()),
        Err(err) => match e.recall(board, id, fingerprint).await {
            Some(Ok(answer)) => Ok(Replayable {
                answer,
                replayed: true,
            }),
            Some(Err(KeyReused)) => Err(reused()),
            None => Err(err),
        },
    }
}

#[cfg(test)]
mod tests;
