//! An import on Redis (docs/SPEC.md §11): the rows are loaded, a chunk per script call,
//! into a *staged* period — the keys of a period under `…:imp:<token>:` (`load.lua`, which
//! numbers them with the board's sequence in file order) — that readers never see and that
//! expires an hour after its last chunk if the import dies. Once every row is in, one
//! `board.lua` `import` call checks that the target period is still empty and renames the
//! staged keys into place, so the period appears whole or not at all. Any failure removes
//! the staged keys (`import_abort`).

use std::sync::atomic::{AtomicU64, Ordering};

use photofinish_core::transfer::{ImportCheck, ImportRow, ImportSource, Imported};
use photofinish_core::{BoardError, PeriodRef};

use super::RedisStore;
use crate::layout::BoardKeys;
use crate::scripts::board::BoardCall;
use crate::scripts::load::{LoadCall, LoadEntry};
use crate::scripts::status;

/// Entries per load call (one script run: a few ms of Redis' time).
const LOAD_CHUNK: usize = 1000;
/// How long staged keys outlive their last chunk, ms: an import that dies leaves nothing
/// for longer.
const STAGE_TTL_MS: i64 = 3_600_000;

/// Tokens this process gave.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The staged keys of one import.
struct Stage {
    keys: BoardKeys,
    prefix: String,
    record: String,
    period_id: String,
}

impl RedisStore {
    pub(super) async fn import_rows(
        &self,
        board: &str,
        period: &PeriodRef,
        source: &mut dyn ImportSource,
    ) -> Result<Imported, BoardError> {
        let now = self.now_us();
        let cached = self.cached(board).await?;
        let target = cached.window.import_period(period, now)?;
        let keys = self.keys(board);
        let token = format!(
            "{:x}.{:x}.{}",
            std::process::id(),
            now,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let stage = Stage {
            prefix: keys.import_stage(&token),
            record: keys.import_record(&token),
            period_id: target.id.clone(),
            keys,
        };
        let floor = cached.floor(&target).id;
        let done = async {
            // Refused early when the period holds entries (the commit checks again).
            let held = self
                .count_period(board, &cached.config_text, &stage.keys, &target.id)
                .await?;
            if held > 0 {
                return Err(not_empty(board, &target.id, held));
            }
            let mut check = ImportCheck::new(&cached.config);
            let mut batch: Vec<LoadEntry> = Vec::with_capacity(LOAD_CHUNK);
            while let Some(rows) = source.next_chunk().await? {
                for row in rows {
                    let at = check.row(&row, now)?;
                    let ImportRow {
                        member,
                        score,
                        metadata,
                        ..
                    } = row;
                    batch.push(LoadEntry {
                        name: member,
                        score,
                        reached_at_us: at,
                        seq: 0,
                        metadata,
                    });
                    if batch.len() == LOAD_CHUNK {
                        self.load(&stage, &target, &floor, cached.desc(), &batch)
                            .await?;
                        batch.clear();
                    }
                }
            }
            self.load(&stage, &target, &floor, cached.desc(), &batch)
                .await?;
            let call = BoardCall::Import {
                config_text: &cached.config_text,
                period_id: &target.id,
                stage: &stage.prefix,
                stage_record: &stage.record,
                expiry_ms: cached.ttl_ms(&target, self.now_us()),
            };
            let r = self.run("board", &call.invocation(&stage.keys)).await?;
            match r.status()? {
                status::OK => Ok(Imported {
                    period: target.clone(),
                    entries: r.count(1)?,
                }),
                status::NOT_EMPTY => Err(not_empty(board, &target.id, r.count(1)?)),
                status::NO_BOARD => Err(BoardError::BoardNotFound(board.to_owned())),
                status::CONFIG_CHANGED => Err(BoardError::Unavailable(format!(
                    "board {board:?} was changed during the import; nothing was imported"
                ))),
                status::NO_STAGE => Err(BoardError::Unavailable(
                    "the import's staged entries expired; nothing was imported".into(),
                )),
                other => Err(r.malformed(0, &format!("is {:?}", String::from_utf8_lossy(other)))),
            }
        }
        .await;
        if done.is_err() {
            let abort = BoardCall::ImportAbort {
                period_id: &stage.period_id,
                stage: &stage.prefix,
                stage_record: &stage.record,
            };
            if let Err(e) = self.run("board", &abort.invocation(&stage.keys)).await {
                tracing::warn!(error = %e, "could not remove a failed import's staged keys; they expire within the hour");
            }
        }
        done
    }

    /// Loads one chunk into the staged period; a member already staged fails the import.
    async fn load(
        &self,
        stage: &Stage,
        target: &photofinish_core::Period,
        floor_id: &str,
        desc: bool,
        entries: &[LoadEntry],
    ) -> Result<(), BoardError> {
        let seq = stage.keys.seq();
        let call = LoadCall {
            keys: &stage.keys,
            prefix: &stage.prefix,
            periods_key: &stage.record,
            seq_key: Some(&seq),
            period: target,
            floor_id,
            desc,
            expiry_ms: Some(STAGE_TTL_MS),
            entries,
        };
        let r = self.run("load", &call.invocation()).await?;
        if r.status()? != status::OK {
            return Err(r.malformed(0, "is not ok"));
        }
        if r.len() > 2 {
            return Err(BoardError::InvalidEntries(format!(
                "member {:?} appears twice",
                r.text(2)?
            )));
        }
        Ok(())
    }

    /// Members of one period.
    async fn count_period(
        &self,
        board: &str,
        config_text: &str,
        keys: &BoardKeys,
        period_id: &str,
    ) -> Result<u64, BoardError> {
        let call = BoardCall::Count {
            config_text,
            period_id,
        };
        let r = self.run("board", &call.invocation(keys)).await?;
        match r.status()? {
            status::OK => r.count(1),
            status::NO_BOARD => Err(BoardError::BoardNotFound(board.to_owned())),
            _ => Err(BoardError::Unavailable(
                "the board was changed during the import; nothing was imported".into(),
            )),
        }
    }
}

fn not_empty(board: &str, period: &str, members: u64) -> BoardError {
    BoardError::BoardNotEmpty {
        board: board.to_owned(),
        period: period.to_owned(),
        members,
    }
}
