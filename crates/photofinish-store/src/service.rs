//! The embedded store as the [`Leaderboard`] service: writes become logged [`Command`]s
//! (queued with [`Store::submit`], answered once durable and applied); reads take one
//! board's read lock and ask the core's [`Board`] and rankings directly, never waiting for
//! the writer.
//!
//! Checks that need the clock run here, before a command is logged, never in
//! [`State::apply`](crate::State::apply): a write with an explicit `at` older than the
//! board's window is refused here, so replaying the log never depends on when it runs.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_channel::oneshot;
use photofinish_core::events::EventFeed;
use photofinish_core::hook::HookState;
use photofinish_core::idempotency::{IdempotencyKey, Keyed, Replayable};
use photofinish_core::query::{MemberSet, ScoreRank, ThresholdQuery, Thresholds};
use photofinish_core::ranking::{RankingBuilder, SavedEntry};
use photofinish_core::transfer::{ImportCheck, ImportSource, Imported};
use photofinish_core::view::{
    BoardPatch, BoardState, MemberRow, PeriodSummary, ReadOptions, Rows, Totals, WriteOutcome,
    WriteRequest,
};
use photofinish_core::{
    Around, Board, BoardConfig, BoardError, Leaderboard, Period, PeriodRef, Ranking,
};

use crate::command::{Command, KeyRecord, STAMP_AT_COMMIT};
use crate::idempotency::{short_fingerprint, KeyReused};
use crate::state::{board_state_at, read_lock, Applied};
use crate::writer::Store;

/// A queued command's answer, once it is durable and applied (or refused).
type Pending = oneshot::Receiver<Result<Applied, BoardError>>;

impl Store {
    /// Queues `cmd` (stamped with the clock at commit when `stamp`).
    fn enqueue(&self, cmd: Command, stamp: bool) -> Result<Pending, BoardError> {
        let (tx, rx) = oneshot::channel();
        self.submit(cmd, stamp, Box::new(move |r| drop(tx.send(r))))?;
        Ok(rx)
    }

    /// Waits for a queued command.
    async fn outcome(rx: Pending) -> Result<Applied, BoardError> {
        rx.await.map_err(|_| BoardError::ShuttingDown)?
    }

    async fn execute(&self, cmd: Command, stamp: bool) -> Result<Applied, BoardError> {
        Self::outcome(self.enqueue(cmd, stamp)?).await
    }

    /// Runs `f` on `board` under its read lock.
    fn with_board<T>(
        &self,
        board: &str,
        f: impl FnOnce(&Board) -> Result<T, BoardError>,
    ) -> Result<T, BoardError> {
        let handle = self.state().require(board)?;
        let b = read_lock(&handle);
        f(&b)
    }

    /// Runs `f` on the period `r` names and its ranking (if it has one), under the board's
    /// read lock; see [`Board::read`] for which periods a reader sees.
    fn with_period<T>(
        &self,
        board: &str,
        r: &PeriodRef,
        f: impl FnOnce(Period, Option<&Ranking>) -> Result<T, BoardError>,
    ) -> Result<T, BoardError> {
        self.with_board(board, |b| {
            let (period, ranking) = b.read(r, self.now_us())?;
            f(period, ranking)
        })
    }

    fn board_state(&self, name: &str, b: &Board) -> Result<BoardState, BoardError> {
        board_state_at(name, b, self.now_us())
    }

    /// The command of write `w` with instant `at_us` (the write's own, or a placeholder the
    /// commit stamps: 0 for a plain write, [`STAMP_AT_COMMIT`] inside a keyed one), into
    /// the period starting at `period_us` when it names one.
    fn write_cmd(board: &str, w: WriteRequest, at_us: i64, period_us: Option<i64>) -> Command {
        Command::Write {
            board: board.to_owned(),
            member: w.member,
            op: w.op,
            value: w.value,
            at_us: w.at_us.unwrap_or(at_us),
            period_us,
            metadata: w.metadata,
            over_budget: w.over_budget,
        }
    }

    /// The logged command of write `w`, after the clock's check: a write with an explicit
    /// `at` must name a period readers still see (the log's own retention rule only knows
    /// the newest period written).
    fn write_command(&self, board: &str, w: WriteRequest) -> Result<(Command, bool), BoardError> {
        if let Some(at) = w.at_us {
            self.with_board(board, |b| b.window().write_period(at, self.now_us()))?;
        }
        let period_us = self.named_period(board, &w)?;
        let stamp = w.at_us.is_none();
        Ok((Self::write_cmd(board, w, 0, period_us), stamp))
    }

    /// An instant in the period write `w` names, if it names one, checked by the board's
    /// window at now with its grace (a keyed write is checked again at its record's
    /// instant, so a replay decides alike).
    fn named_period(&self, board: &str, w: &WriteRequest) -> Result<Option<i64>, BoardError> {
        let Some(id) = &w.period else {
            return Ok(None);
        };
        self.with_board(board, |b| {
            let grace = b.config().settings.grace;
            b.window().named_write_period(id, self.now_us(), grace)
        })
        // An instant inside the period: its start (0 for `all`, which starts at i64::MIN).
        .map(|p| Some(p.start_us.max(0)))
    }

    /// The command of write `w` inside a keyed operation: its instant stamped at commit.
    fn keyed_write_cmd(&self, board: &str, w: WriteRequest) -> Result<Command, BoardError> {
        let period_us = self.named_period(board, &w)?;
        Ok(Self::write_cmd(board, w, STAMP_AT_COMMIT, period_us))
    }

    /// The commands of keyed operation `op` on `board`, and whether they are a batch.
    fn keyed_commands(&self, board: &str, op: Keyed) -> Result<(bool, Vec<Command>), BoardError> {
        Ok(match op {
            Keyed::Write(w) => (false, vec![self.keyed_write_cmd(board, w)?]),
            Keyed::Batch(writes) => {
                self.state().require(board)?;
                let cmds = writes.into_iter().map(|w| self.keyed_write_cmd(board, w));
                (true, cmds.collect::<Result<_, _>>()?)
            }
            Keyed::Remove { member, period } => (
                false,
                vec![Command::DeleteMember {
                    board: board.to_owned(),
                    period: period.as_str().to_owned(),
                    member,
                    now_us: 0,
                }],
            ),
            Keyed::Create(config) => {
                config.validate()?;
                (
                    false,
                    vec![Command::CreateBoard {
                        board: board.to_owned(),
                        config,
                        max_boards: self.max_boards(),
                    }],
                )
            }
        })
    }
}

fn written(applied: Applied) -> Result<WriteOutcome, BoardError> {
    match applied {
        Applied::Written(outcome, period) => Ok(WriteOutcome { outcome, period }),
        other => Err(BoardError::Unavailable(format!(
            "the log answered a write with {other:?}"
        ))),
    }
}

#[async_trait]
impl Leaderboard for Store {
    fn now_us(&self) -> i64 {
        Store::now_us(self)
    }

    async fn health(&self) -> Option<String> {
        self.write_error()
    }

    async fn memory_estimate(&self) -> Result<u64, BoardError> {
        Ok(self.state().estimated_bytes())
    }

    async fn totals(&self) -> Result<Totals, BoardError> {
        let boards = self.state().boards();
        let members = boards
            .iter()
            .map(|(_, b)| read_lock(b).total_members())
            .sum();
        Ok(Totals {
            boards: boards.len() as u64,
            members,
        })
    }

    async fn create_board(&self, board: &str, config: BoardConfig) -> Result<bool, BoardError> {
        config.validate()?;
        let cmd = Command::CreateBoard {
            board: board.to_owned(),
            config,
            max_boards: self.max_boards(),
        };
        Ok(self.execute(cmd, false).await? == Applied::BoardCreated(true))
    }

    async fn check_board(&self, board: &str) -> Result<(), BoardError> {
        self.state().require(board).map(|_| ())
    }

    async fn config(&self, board: &str) -> Result<BoardConfig, BoardError> {
        self.with_board(board, |b| Ok(b.config().clone()))
    }

    async fn update_board(
        &self,
        board: &str,
        patch: &BoardPatch,
    ) -> Result<BoardState, BoardError> {
        // Checked here too, so a patch that breaks a rule is refused before it is logged.
        self.with_board(board, |b| patch.apply(b.config()).map(drop))?;
        let cmd = Command::PatchBoard {
            board: board.to_owned(),
            patch: patch.clone(),
        };
        self.execute(cmd, false).await?;
        self.with_board(board, |b| self.board_state(board, b))
    }

    async fn board(&self, board: &str) -> Result<BoardState, BoardError> {
        self.with_board(board, |b| self.board_state(board, b))
    }

    async fn boards(&self) -> Result<Vec<BoardState>, BoardError> {
        self.state()
            .boards()
            .into_iter()
            .map(|(name, handle)| self.board_state(&name, &read_lock(&handle)))
            .collect()
    }

    async fn delete_board(&self, board: &str) -> Result<(), BoardError> {
        self.state().require(board)?;
        let cmd = Command::DeleteBoard {
            board: board.to_owned(),
        };
        self.execute(cmd, false).await.map(|_| ())
    }

    async fn periods(&self, board: &str) -> Result<Vec<PeriodSummary>, BoardError> {
        self.with_board(board, |b| {
            let floor_us = b.window().visible(self.now_us())?.floor_us;
            Ok(b.periods()
                .filter(|(p, _)| p.start_us >= floor_us)
                .map(|(p, r)| PeriodSummary {
                    period: p.clone(),
                    members: r.len(),
                })
                .collect())
        })
    }

    async fn write(&self, board: &str, w: WriteRequest) -> Result<WriteOutcome, BoardError> {
        let (cmd, stamp) = self.write_command(board, w)?;
        written(self.execute(cmd, stamp).await?)
    }

    async fn write_batch(
        &self,
        board: &str,
        writes: Vec<WriteRequest>,
    ) -> Result<Vec<Result<WriteOutcome, BoardError>>, BoardError> {
        self.state().require(board)?;
        // Queue every entry first, in order, then collect: the log applies them in queue
        // order, and one group commit can carry the whole batch.
        let pending: Vec<_> = writes
            .into_iter()
            .map(|w| {
                let (cmd, stamp) = self.write_command(board, w)?;
                self.enqueue(cmd, stamp)
            })
            .collect();
        let mut out = Vec::with_capacity(pending.len());
        for p in pending {
            out.push(match p {
                Ok(rx) => Self::outcome(rx).await.and_then(written),
                Err(e) => Err(e),
            });
        }
        Ok(out)
    }

    async fn member(
        &self,
        board: &str,
        member: &str,
        read: &ReadOptions,
    ) -> Result<MemberRow, BoardError> {
        self.with_period(board, &read.period, |period, ranking| {
            let entry = ranking.and_then(|r| r.member_ranked(member, read.ranking));
            let ((entry, ordinal), ranking) = entry
                .zip(ranking)
                .ok_or_else(|| BoardError::member_not_found(board, member, &period.id))?;
            Ok(MemberRow {
                entry,
                ordinal,
                total: ranking.len(),
                period,
            })
        })
    }

    async fn members(
        &self,
        board: &str,
        members: &[String],
        read: &ReadOptions,
    ) -> Result<MemberSet, BoardError> {
        self.with_period(board, &read.period, |period, ranking| {
            let Some(r) = ranking else {
                return Ok(MemberSet {
                    total: 0,
                    period,
                    entries: Vec::new(),
                    missing: members.to_vec(),
                });
            };
            let (entries, missing) = r.members_of(members, read.ranking);
            Ok(MemberSet {
                total: r.len(),
                period,
                entries,
                missing: missing.into_iter().map(|i| members[i].clone()).collect(),
            })
        })
    }

    async fn rank_of_score(
        &self,
        board: &str,
        score: i64,
        read: &ReadOptions,
    ) -> Result<ScoreRank, BoardError> {
        self.with_period(board, &read.period, |period, ranking| {
            Ok(ScoreRank {
                score,
                rank: ranking.map_or(1, |r| r.rank_of_score(score, read.ranking)),
                total: ranking.map_or(0, Ranking::len),
                period,
            })
        })
    }

    async fn thresholds(
        &self,
        board: &str,
        query: &ThresholdQuery,
        period: &PeriodRef,
    ) -> Result<Thresholds, BoardError> {
        self.with_period(board, period, |period, ranking| {
            let total = ranking.map_or(0, Ranking::len);
            let at = query
                .ordinal_ranks(total)
                .into_iter()
                .map(|rank| {
                    ranking
                        .zip(rank.checked_sub(1))
                        .and_then(|(r, pos)| r.at(pos))
                })
                .collect();
            Ok(Thresholds {
                total,
                period,
                thresholds: query.answer(total, at),
            })
        })
    }

    async fn page(
        &self,
        board: &str,
        offset: u64,
        limit: u64,
        read: &ReadOptions,
    ) -> Result<Rows, BoardError> {
        self.with_period(board, &read.period, |period, ranking| {
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            Ok(Rows {
                total: ranking.map_or(0, Ranking::len),
                entries: ranking.map_or_else(Vec::new, |r| r.page(offset, limit, read.ranking)),
                period,
            })
        })
    }

    async fn around(
        &self,
        board: &str,
        member: &str,
        window: Around,
        read: &ReadOptions,
    ) -> Result<Rows, BoardError> {
        self.with_period(board, &read.period, |period, ranking| {
            let rows = ranking.and_then(|r| {
                r.around(member, window.before, window.after, read.ranking)
                    .map(|entries| (entries, r.len()))
            });
            let (entries, total) =
                rows.ok_or_else(|| BoardError::member_not_found(board, member, &period.id))?;
            Ok(Rows {
                total,
                period,
                entries,
            })
        })
    }

    async fn remove(
        &self,
        board: &str,
        member: &str,
        period: &PeriodRef,
    ) -> Result<(), BoardError> {
        // A period the reader cannot see is a 404 before anything is logged; the command
        // resolves `period` again at the instant it is logged, as replays will.
        self.with_period(board, period, |_, _| Ok(()))?;
        let cmd = Command::DeleteMember {
            board: board.to_owned(),
            period: period.as_str().to_owned(),
            member: member.to_owned(),
            now_us: 0,
        };
        self.execute(cmd, true).await.map(|_| ())
    }

    async fn keyed(
        &self,
        board: &str,
        key: &IdempotencyKey,
        op: Keyed,
    ) -> Result<Replayable, BoardError> {
        let id = key.digest;
        let fingerprint = short_fingerprint(&key.fingerprint);
        // A key already remembered is answered where its command is applied (one lookup
        // in the table, by the writer), so a retry is logged like any keyed command. When
        // the command is refused instead — its board deleted since, the log unwritable —
        // the table is asked here: a remembered answer stands over today's refusal.
        let applied = match self.keyed_commands(board, op) {
            Ok((batch, cmds)) => {
                let key = KeyRecord {
                    id,
                    fingerprint,
                    ttl_us: key.ttl_us,
                    now_us: 0,
                };
                let cmd = Command::Keyed { key, batch, cmds };
                self.execute(cmd, false).await
            }
            Err(e) => Err(e),
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
            Ok(other) => Err(BoardError::Unavailable(format!(
                "the log answered a keyed command with {other:?}"
            ))),
            Err(BoardError::IdempotencyKeyReused(_)) => Err(reused()),
            Err(e) => {
                let recalled = self
                    .state()
                    .idempotency()
                    .recall(id, fingerprint, self.now_us());
                match recalled {
                    Some(Ok(answer)) => Ok(Replayable {
                        answer,
                        replayed: true,
                    }),
                    Some(Err(KeyReused)) => Err(reused()),
                    None => Err(e),
                }
            }
        }
    }

    async fn events(&self, board: &str) -> Result<Arc<EventFeed>, BoardError> {
        self.watch(board)
    }

    async fn announce_period(&self, board: &str) -> Result<(), BoardError> {
        self.announce_current(board)
    }

    async fn hooks(&self) -> Result<Vec<HookState>, BoardError> {
        Ok(self
            .state()
            .boards()
            .into_iter()
            .filter_map(|(board, handle)| {
                let b = read_lock(&handle);
                b.config().settings.webhook.as_ref()?;
                Some(HookState {
                    board,
                    config: b.config().clone(),
                    cursor_us: b.hook_cursor(),
                })
            })
            .collect())
    }

    async fn hook_advance(&self, board: &str, cursor_us: i64) -> Result<(), BoardError> {
        let moves = self.with_board(board, |b| {
            Ok(b.config().settings.webhook.is_some()
                && b.hook_cursor().is_none_or(|c| c < cursor_us))
        })?;
        if moves {
            let cmd = Command::HookAdvance {
                board: board.to_owned(),
                cursor_us,
            };
            self.execute(cmd, false).await?;
        }
        Ok(())
    }

    async fn hook_claim(
        &self,
        board: &str,
        _token: &str,
        until_us: i64,
        _hold: Duration,
        _renew: bool,
    ) -> Result<bool, BoardError> {
        // One server owns the data dir: no other node posts; only a post already made
        // (the cursor at or past the period's end) is refused.
        self.with_board(board, |b| Ok(b.hook_cursor().is_none_or(|c| c < until_us)))
    }

    async fn import(
        &self,
        board: &str,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
    ) -> Result<Imported, BoardError> {
        let now = self.now_us();
        let empty = |b: &Board| {
            let p = b.window().import_period(period, now)?;
            let held = b.ranking(&p).map_or(0, Ranking::len);
            if held > 0 {
                return Err(BoardError::BoardNotEmpty {
                    board: board.to_owned(),
                    period: p.id,
                    members: held,
                });
            }
            Ok((p, b.config().clone()))
        };
        let (target, config) = self.with_board(board, empty)?;
        // Rows go straight into the records of the new ranking, in file order (which is
        // also their sequence, so equal scores and times keep it).
        let mut check = ImportCheck::new(&config);
        let mut builder = RankingBuilder::new(config.order, 0);
        while let Some(rows) = source.next_chunk().await? {
            for row in &rows {
                let at = check.row(row, now)?;
                builder.push(SavedEntry {
                    member: &row.member,
                    score: row.score,
                    reached_at_us: at,
                    seq: builder.len() + 1,
                    metadata: row.metadata.as_deref(),
                })?;
            }
        }
        // Sort (if the rows were not in rank order), index and write the file off the
        // caller's thread: seconds for millions of entries.
        let (storage, dir) = self.files();
        let (storage, file) = (storage.clone(), crate::import::file_name(now));
        let build_path = dir.join(&file);
        let (tx, rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("pf-import".into())
            .spawn(move || {
                let built = builder.finish().and_then(|ranking| {
                    crate::import::write(&*storage, &build_path, &ranking)
                        .map_err(|e| BoardError::Unavailable(format!("import file: {e}")))?;
                    Ok(ranking)
                });
                drop(tx.send(built));
            })
            .map_err(|e| BoardError::Unavailable(format!("import: {e}")))?;
        let ranking = rx.await.map_err(|_| BoardError::ShuttingDown)??;
        let entries = ranking.len();
        self.state().stage(file.clone(), ranking);
        let cmd = Command::Import {
            board: board.to_owned(),
            period_us: target.start_us.max(0),
            file: file.clone(),
            entries,
        };
        match self.execute(cmd, false).await {
            Ok(Applied::Imported(period, entries)) => Ok(Imported { period, entries }),
            failed => {
                self.state().unstage(&file);
                // The file stays: if the record was logged (and refused when applied, say
                // because a write filled the period meanwhile), its replay reads it; if not,
                // it is an orphan, removed at the next start or clean shutdown.
                Err(failed.err().unwrap_or_else(|| {
                    BoardError::Unavailable("the log answered an import oddly".into())
                }))
            }
        }
    }

    fn backup(&self, out: &mut dyn std::io::Write) -> Result<u64, BoardError> {
        self.backup_to(out)
            .map_err(|e| BoardError::Unavailable(format!("backup: {e}")))
    }

    fn shutdown(&self) {
        Store::shutdown(self);
    }
}
