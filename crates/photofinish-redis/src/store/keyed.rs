//! Operations under an idempotency key (docs/SPEC.md §7): one call of the keyed script,
//! which checks the key's record, applies the operation and remembers its answer with a
//! TTL, atomically. Entries the server refuses before the call (a score out of the range
//! held, an `at` outside the window) still go into the call, as refusals in their place, so
//! a replay answers exactly what the first call did whatever the clock says by then.

use photofinish_core::idempotency::{Answer, IdempotencyKey, Keyed, Replayable};
use photofinish_core::view::{BoardState, WriteOutcome, WriteRequest};
use photofinish_core::{BoardConfig, BoardError, ErrorCode, Period, PeriodWindow};

use super::{common_status, Attempt, CachedBoard, RedisStore};
use crate::layout::{self, BoardKeys};
use crate::reply::Reply;
use crate::scripts::keyed::{Entry, KeyedCall, Mode};
use crate::scripts::status;

fn refused(e: &BoardError) -> Entry {
    Entry::Refused {
        code: e.code().as_str(),
        message: e.to_string(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An entry refused before the call, as the script answers it: `{refused, code, message}`.
fn refusal(r: &Reply) -> BoardError {
    let read = || -> Result<BoardError, BoardError> {
        let code = r.text(1)?;
        Ok(BoardError::Remembered {
            code: ErrorCode::parse(&code).ok_or_else(|| r.malformed(1, "is no error code"))?,
            message: r.text(2)?,
        })
    };
    read().unwrap_or_else(|e| e)
}

impl RedisStore {
    /// Applies `op` on `board` under `key`. See the module docs.
    pub(super) async fn keyed_op(
        &self,
        board: &str,
        key: &IdempotencyKey,
        op: Keyed,
    ) -> Result<Replayable, BoardError> {
        let keys = self.keys(board);
        let base = KeyedCall {
            record_key: keys.idempotency(&key.id(board)),
            fingerprint: hex(&key.fingerprint),
            ttl_ms: key.ttl_us / 1000,
            mode: Mode::Write,
            entries: Vec::new(),
        };
        if let Keyed::Create(config) = op {
            return self.keyed_create(board, &keys, base, key, config).await;
        }
        self.with_board(board, |cached| {
            let (keys, op, base) = (keys.clone(), &op, base.clone());
            async move {
                match op {
                    Keyed::Write(w) => {
                        self.keyed_writes(&cached, &keys, base, key, std::slice::from_ref(w), false)
                            .await
                    }
                    Keyed::Batch(ws) => {
                        self.keyed_writes(&cached, &keys, base, key, ws, true).await
                    }
                    Keyed::Remove { member, period } => {
                        let entry = match cached.window.resolve(period, self.now_us()) {
                            Ok(resolved) => {
                                let (k, a) = cached.target(&keys, &resolved).remove_parts(member);
                                Entry::Run { keys: k, args: a }
                            }
                            Err(e) => refused(&e),
                        };
                        let call = KeyedCall {
                            mode: Mode::Remove,
                            entries: vec![entry],
                            ..base
                        };
                        let r = self.run("keyed", &call.invocation()).await?;
                        match r.status()? {
                            status::KEY_REUSED => {
                                Err(BoardError::IdempotencyKeyReused(key.key.clone()))
                            }
                            s @ (status::APPLIED | status::REPLAYED) => {
                                Ok(Attempt::Done(Replayable {
                                    answer: Answer::Removed,
                                    replayed: s == status::REPLAYED,
                                }))
                            }
                            status::REFUSED => Err(refusal(&r)),
                            status::PERIOD_NOT_FOUND => {
                                Err(BoardError::PeriodNotFound(period.as_str().to_owned()))
                            }
                            status::MEMBER_NOT_FOUND => {
                                Err(BoardError::member_not_found(board, member, period.as_str()))
                            }
                            _ => Ok(common_status(&r)?.unwrap_or(Attempt::Stale)),
                        }
                    }
                    Keyed::Create(_) => {
                        Err(BoardError::Unavailable("create is keyed apart".into()))
                    }
                }
            }
        })
        .await
    }

    /// A write (`batch` false, one entry) or a batch under a key.
    async fn keyed_writes(
        &self,
        cached: &CachedBoard,
        keys: &BoardKeys,
        base: KeyedCall,
        key: &IdempotencyKey,
        writes: &[WriteRequest],
        batch: bool,
    ) -> Result<Attempt<Replayable>, BoardError> {
        let mut periods = Vec::with_capacity(writes.len());
        let entries = writes
            .iter()
            .map(|w| match self.prepare_write(cached, keys, w) {
                Ok(p) => {
                    periods.push(Some(p.period));
                    Entry::Run {
                        keys: p.keys,
                        args: p.args,
                    }
                }
                Err(e) => {
                    periods.push(None);
                    refused(&e)
                }
            })
            .collect();
        let call = KeyedCall {
            mode: if batch { Mode::Batch } else { Mode::Write },
            entries,
            ..base
        };
        let r = self.run("keyed", &call.invocation()).await?;
        let replayed = match r.status()? {
            status::KEY_REUSED => return Err(BoardError::IdempotencyKeyReused(key.key.clone())),
            status::APPLIED => false,
            status::REPLAYED => true,
            status::REFUSED => return Err(refusal(&r)),
            _ => {
                // The one write's own refusal, or a stale config.
                let (w, period) = writes
                    .first()
                    .zip(periods.into_iter().next().flatten())
                    .ok_or_else(|| r.malformed(0, "for no prepared write"))?;
                return match Self::parse_written(cached, w, period, &r)? {
                    Some(_) => Err(r.malformed(0, "an applied write without its key")),
                    None => Ok(Attempt::Stale),
                };
            }
        };
        let answer = r.nested(1)?;
        let answer = if batch {
            let entries = answer.nested_all(0)?;
            if entries.len() != writes.len() {
                return Err(answer.malformed(0, "answers another number of entries"));
            }
            let outcomes = writes
                .iter()
                .zip(&entries)
                .zip(&periods)
                .map(|((w, e), p)| Self::keyed_written(cached, w, e, p.as_ref()))
                .collect();
            Answer::Batch(outcomes)
        } else {
            let w = writes
                .first()
                .ok_or_else(|| r.malformed(0, "for no write"))?;
            Answer::Written(Self::keyed_written(
                cached,
                w,
                &answer,
                periods[0].as_ref(),
            )?)
        };
        Ok(Attempt::Done(Replayable { answer, replayed }))
    }

    /// One write entry's answer: refused before the call, the script's refusal, or its
    /// outcome in the period the answer names.
    fn keyed_written(
        cached: &CachedBoard,
        w: &WriteRequest,
        r: &Reply,
        prepared: Option<&Period>,
    ) -> Result<WriteOutcome, BoardError> {
        if r.status()? == status::REFUSED {
            return Err(refusal(r));
        }
        let period = if r.status()? == status::OK {
            let n = r.len();
            let id = r.text(n.saturating_sub(2))?;
            layout::parse_period_record(&id, &r.text(n.saturating_sub(1))?)
                .ok_or_else(|| r.malformed(n - 1, "is no period record"))?
        } else {
            // A refusal remembered from the first call; this call may no longer have
            // prepared the entry (the clock moved), and only a retention refusal names it.
            prepared.cloned().unwrap_or(Period {
                id: String::new(),
                start_us: 0,
                end_us: 0,
            })
        };
        Self::parse_written(cached, w, period, r)?
            .ok_or_else(|| r.malformed(0, "a stale config inside a checked batch"))
    }

    /// A board create under a key.
    async fn keyed_create(
        &self,
        board: &str,
        keys: &BoardKeys,
        base: KeyedCall,
        key: &IdempotencyKey,
        config: BoardConfig,
    ) -> Result<Replayable, BoardError> {
        config.validate()?;
        self.check_board_limit(board).await?;
        let text = layout::config_text(&config);
        let current = PeriodWindow::new(&config)?.visible(self.now_us())?.current;
        let call = KeyedCall {
            mode: Mode::Create,
            entries: vec![Entry::Run {
                keys: vec![keys.config(), keys.events()],
                args: [
                    text,
                    current.id.clone(),
                    current.start_us.to_string(),
                    current.end_us.to_string(),
                    keys.period_prefix(),
                ]
                .map(String::into_bytes)
                .into(),
            }],
            ..base
        };
        let r = self.run("keyed", &call.invocation()).await?;
        let replayed = match r.status()? {
            status::KEY_REUSED => return Err(BoardError::IdempotencyKeyReused(key.key.clone())),
            status::CONFLICT => {
                let existing = layout::parse_config(r.bytes(1)?)
                    .ok_or_else(|| r.malformed(1, "is no config"))?;
                return Err(BoardError::ConfigConflict {
                    board: board.to_owned(),
                    existing: Box::new(existing),
                });
            }
            status::APPLIED => false,
            status::REPLAYED => true,
            other => return Err(r.malformed(0, &format!("is {other:?}"))),
        };
        let a = r.nested(1)?;
        let created = a.status()? == status::CREATED;
        let stored = a.text(1)?;
        let stored_config = layout::parse_config(stored.as_bytes())
            .ok_or_else(|| a.malformed(1, "is no config"))?;
        let state = BoardState {
            name: board.to_owned(),
            config: stored_config.clone(),
            members: a.count(2)?,
            current: Period {
                id: a.text(3)?,
                start_us: a
                    .text(4)?
                    .parse()
                    .map_err(|_| a.malformed(4, "is no instant"))?,
                end_us: a
                    .text(5)?
                    .parse()
                    .map_err(|_| a.malformed(5, "is no instant"))?,
            },
        };
        self.registry("SADD", board).await?;
        self.hook_registry(board, Some(&stored_config)).await?;
        self.remember(board, stored_config, stored)?;
        Ok(Replayable {
            answer: Answer::Created {
                created,
                state: Box::new(state),
            },
            replayed,
        })
    }
}
