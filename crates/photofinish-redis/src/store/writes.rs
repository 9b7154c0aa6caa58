//! Writes: each one write function call, prepared on this side first (score range,
//! instant, the period window by the clock); a batch is one pipeline of `writes` calls,
//! each carrying up to [`WRITES_PER_CALL`] writes.

use photofinish_core::calendar::validate_instant;
use photofinish_core::error::ScoreLimit;
use photofinish_core::view::{WriteOutcome, WriteRequest};
use photofinish_core::{BoardError, Outcome, Period};
use redis::Value;

use super::{unavailable, Attempt, CachedBoard, RedisStore};
use crate::layout::{self, BoardKeys};
use crate::reply::Reply;
use crate::scripts::{self, status, write::WriteCall, write::WRITES_PER_CALL};

/// A write ready for the write script: its period, keys and arguments.
pub(super) struct PreparedWrite {
    pub(super) period: Period,
    pub(super) keys: Vec<String>,
    pub(super) args: Vec<Vec<u8>>,
}

/// Where a pipelined batch may be run again one by one without reordering: `ran[i]` is
/// `Some(true)` for an entry that was applied, `Some(false)` for one that failed without
/// effect, `None` for one whose script did not run. The answer is the first entry that did
/// not run, if no entry after it was applied.
fn rerun_from(ran: &[Option<bool>]) -> Option<usize> {
    let first = ran.iter().position(Option::is_none)?;
    ran[first..]
        .iter()
        .all(|r| *r != Some(true))
        .then_some(first)
}

impl RedisStore {
    /// Everything the write script needs for `w`, checked on this side first (range,
    /// instant, the period window by the clock).
    pub(super) fn prepare_write(
        &self,
        cached: &CachedBoard,
        keys: &BoardKeys,
        w: &WriteRequest,
    ) -> Result<PreparedWrite, BoardError> {
        let op = w.op.unwrap_or(cached.config.update);
        cached.config.settings.rules.check_operand(op, w.value)?;
        let now = self.now_us();
        let current = cached.window.visible(now)?.current;
        let (at_us, period) = match (w.at_us, &w.period) {
            // Stamped now, in a period the write names: the current one, or one closed
            // within the board's grace.
            (None, Some(id)) => {
                validate_instant(now)?;
                let grace = cached.config.settings.grace;
                (now, cached.window.named_write_period(id, now, grace)?)
            }
            // Stamped now: the current period, never older than the window.
            (None, None) => {
                validate_instant(now)?;
                (now, current.clone())
            }
            (Some(at), _) => (at, cached.window.write_period(at, now)?),
        };
        let floor = cached.floor(&period);
        let previous = cached.previous(&period);
        let call = WriteCall {
            keys,
            config_text: &cached.config_text,
            period: &period,
            floor_id: &floor.id,
            member: &w.member,
            op,
            value: w.value,
            stamped: w.at_us.is_none(),
            reached_at_us: at_us,
            desc: cached.desc(),
            metadata: w.metadata.as_deref(),
            expiry_ms: cached.ttl_ms(&period, now),
            rules: &cached.config.settings.rules,
            over_budget: w.over_budget.is_some(),
            emit: period.id == current.id,
            previous_id: &previous,
        };
        Ok(PreparedWrite {
            keys: call.keys(),
            args: call.args(),
            period,
        })
    }

    /// The write script's answer: the outcome, or `None` if the cached config was stale.
    pub(super) fn parse_written(
        cached: &CachedBoard,
        w: &WriteRequest,
        period: Period,
        r: &Reply,
    ) -> Result<Option<WriteOutcome>, BoardError> {
        match r.status()? {
            status::PERIOD_NOT_RETAINED => return Err(BoardError::PeriodNotRetained(period.id)),
            status::SCORE_OVERFLOW => {
                return Err(BoardError::ScoreOverflow {
                    old: r.integer(1)?,
                    delta: w.value,
                    limit: ScoreLimit::I64,
                })
            }
            status::RANKING_FULL => {
                return Err(BoardError::RankingFull("sequence numbers exhausted"))
            }
            status::RULE_BROKEN => return Err(Self::rule_refusal(cached, w, r)),
            status::OVER_BUDGET => {
                return Err(w.over_budget.map_or_else(
                    || r.malformed(0, "over_budget for a write admitted within budget"),
                    |over| over.refusal(),
                ))
            }
            _ => {}
        }
        if super::common_status::<()>(r)?.is_some() {
            return Ok(None);
        }
        let tiebreak = r.bytes(3)?;
        let outcome = Outcome {
            score: r.integer(1)?,
            rank: r.count(2)?,
            reached_at_us: layout::answer_reached(tiebreak, cached.config.order)
                .ok_or_else(|| r.malformed(3, "is no tie-break"))?,
            changed: r.flag(4)?,
        };
        Ok(Some(WriteOutcome { outcome, period }))
    }

    /// The refusal the board's rules give a write the script found breaking one: the
    /// rules' own check words it, from the old score, the new one and the member count
    /// the script read.
    fn rule_refusal(cached: &CachedBoard, w: &WriteRequest, r: &Reply) -> BoardError {
        let read = || -> Result<(Option<i64>, i64, u64), BoardError> {
            let old = match r.bytes(1)? {
                b"" => None,
                _ => Some(r.integer(1)?),
            };
            Ok((old, r.integer(2)?, r.count(3)?))
        };
        let (old, new, members) = match read() {
            Ok(read) => read,
            Err(e) => return e,
        };
        let op = w.op.unwrap_or(cached.config.update);
        match cached
            .config
            .settings
            .rules
            .check(op, w.value, old, new, members)
        {
            Err(e) => e,
            Ok(()) => r.malformed(0, "a broken rule the board's rules do not break"),
        }
    }

    /// Applies one write atomically.
    pub(super) async fn write_one(
        &self,
        board: &str,
        w: &WriteRequest,
    ) -> Result<WriteOutcome, BoardError> {
        let keys = self.keys(board);
        self.with_board(board, |cached| {
            let keys = keys.clone();
            async move {
                let p = self.prepare_write(&cached, &keys, w)?;
                let inv = scripts::invocation(&scripts::WRITE, &p.keys, &p.args);
                let r = self.run("write", &inv).await?;
                Ok(match Self::parse_written(&cached, w, p.period, &r)? {
                    Some(written) => Attempt::Done(written),
                    None => Attempt::Stale,
                })
            }
        })
        .await
    }

    /// Applies writes in order, each on its own, in one pipeline of `writes` calls of up
    /// to [`WRITES_PER_CALL`] writes each: one round trip for the batch, and one function
    /// call per chunk instead of one per write (a Redis that lacked the library gets it and
    /// the pipeline again: [`crate::conn::Conn::call_pipeline`]). Entries whose call did not
    /// run (the library was flushed mid-batch, or the board changed under a stale config)
    /// are run again one by one when every later entry did not run either, so the order
    /// holds; otherwise they fail. If the pipeline itself fails, or a call fails inside, the
    /// outcome of its entries is unknown and each answers unavailable.
    pub(super) async fn write_many(
        &self,
        board: &str,
        writes: &[WriteRequest],
    ) -> Result<Vec<Result<WriteOutcome, BoardError>>, BoardError> {
        let cached = self.cached(board).await?;
        let keys = self.keys(board);
        let prepared: Vec<Result<PreparedWrite, BoardError>> = writes
            .iter()
            .map(|w| self.prepare_write(&cached, &keys, w))
            .collect();
        let ready: Vec<&PreparedWrite> = prepared.iter().flatten().collect();
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for chunk in ready.chunks(WRITES_PER_CALL) {
            let mut call = scripts::WRITES.prepare_invoke();
            for k in &chunk[0].keys {
                call.key(k);
            }
            for p in chunk {
                for a in &p.args {
                    call.arg(a);
                }
            }
            pipe.add_command(call.cmd());
        }
        let calls = if pipe.is_empty() {
            Ok(Vec::new())
        } else {
            self.conn.call_pipeline(&pipe).await
        };
        let calls: Vec<redis::RedisResult<Value>> = match calls {
            Ok(r) => r,
            Err(e) => {
                let unknown = format!("outcome unknown, the batch's pipeline failed: {e}");
                return Ok(prepared
                    .into_iter()
                    .map(|p| p.and(Err(BoardError::Unavailable(unknown.clone()))))
                    .collect());
            }
        };
        // Per ready write, in order: Ok(Some) its answer, Ok(None) its call did not run
        // (the library was missing), Err its call failed.
        let mut answers: Vec<Result<Option<Value>, BoardError>> = Vec::with_capacity(ready.len());
        let mut calls = calls.into_iter();
        for chunk in ready.chunks(WRITES_PER_CALL) {
            let failed = match calls.next() {
                Some(Ok(Value::Array(each))) if each.len() == chunk.len() => {
                    answers.extend(each.into_iter().map(|v| Ok(Some(v))));
                    continue;
                }
                Some(Ok(other)) => Err(BoardError::Unavailable(format!(
                    "outcome unknown: the writes function answered {} writes with {other:?}",
                    chunk.len()
                ))),
                Some(Err(e)) if scripts::is_missing(&e) => Ok(None),
                Some(Err(e)) => Err(unavailable(e)),
                None => Err(BoardError::Unavailable(
                    "the batch's pipeline answered fewer replies than it had calls".into(),
                )),
            };
            answers.extend(chunk.iter().map(|_| failed.clone()));
        }
        // Per entry: Ok(Some) done, Ok(None) did not run (retry), Err failed.
        let mut answers = answers.into_iter();
        let mut out: Vec<Result<Option<WriteOutcome>, BoardError>> =
            Vec::with_capacity(writes.len());
        for (w, p) in writes.iter().zip(prepared) {
            out.push(match p {
                Err(e) => Err(e),
                Ok(p) => match answers.next() {
                    Some(Ok(Some(v))) => Reply::new("write", v)
                        .and_then(|r| Self::parse_written(&cached, w, p.period, &r)),
                    Some(Ok(None)) => Ok(None),
                    Some(Err(e)) => Err(e),
                    None => Err(BoardError::Unavailable(
                        "the batch's pipeline answered fewer writes than it had".into(),
                    )),
                },
            });
        }
        let ran: Vec<Option<bool>> = out
            .iter()
            .map(|r| match r {
                Ok(Some(_)) => Some(true),
                Ok(None) => None,
                Err(_) => Some(false),
            })
            .collect();
        let retry_from = rerun_from(&ran);
        let mut result = Vec::with_capacity(out.len());
        for (i, r) in out.into_iter().enumerate() {
            result.push(match r {
                Ok(Some(written)) => Ok(written),
                Err(e) => Err(e),
                Ok(None) if retry_from.is_some_and(|from| i >= from) => {
                    self.write_one(board, &writes[i]).await
                }
                Ok(None) => Err(BoardError::Unavailable(
                    "the board changed while the batch ran; retry this entry".into(),
                )),
            });
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::rerun_from;

    #[test]
    fn a_batch_reruns_only_an_unrun_tail() {
        let (done, failed, unrun) = (Some(true), Some(false), None);
        assert_eq!(rerun_from(&[done, done]), None);
        assert_eq!(rerun_from(&[done, unrun, unrun]), Some(1));
        assert_eq!(rerun_from(&[done, unrun, failed, unrun]), Some(1));
        // An entry after the gap was applied: running the gap now would reorder.
        assert_eq!(rerun_from(&[unrun, done]), None);
        assert_eq!(rerun_from(&[]), None);
    }
}
