//! The embedded store's table of remembered idempotency keys (docs/SPEC.md §7): each key's
//! request fingerprint, the answer it got and when it expires. It is part of the
//! [`State`](crate::State): a keyed command is logged with its key (`Command::Keyed`), and
//! applying it — live, in recovery or in the snapshotter — looks the key up and remembers
//! the answer, so the table after a replay is the table that was served. Snapshots carry
//! it (docs/format.md). Expired keys go as later commands pass their instant; past
//! `max_keys` the key expiring first is forgotten early, so memory stays bounded.

use std::collections::{BTreeSet, HashMap};

use photofinish_core::idempotency::Answer;
use photofinish_core::view::{BoardState, WriteOutcome};
use photofinish_core::{BoardError, ErrorCode, Outcome, Period};

use crate::codec::{Dec, DecodeError, Enc};

/// One remembered key.
#[derive(Debug, Clone, PartialEq)]
pub struct Remembered {
    /// SHA-256 of the request it answered.
    pub fingerprint: [u8; 32],
    /// When it may be forgotten, µs since the epoch.
    pub expires_us: i64,
    /// The answer.
    pub answer: Answer,
}

/// The table. See the module docs.
#[derive(Debug)]
pub struct Table {
    keys: HashMap<String, Remembered>,
    by_expiry: BTreeSet<(i64, String)>,
    max_keys: usize,
}

impl Default for Table {
    fn default() -> Self {
        Self::new(photofinish_core::idempotency::DEFAULT_MAX_KEYS)
    }
}

impl Table {
    /// An empty table keeping at most `max_keys` keys.
    pub fn new(max_keys: usize) -> Self {
        Self {
            keys: HashMap::new(),
            by_expiry: BTreeSet::new(),
            max_keys: max_keys.max(1),
        }
    }

    /// Keys remembered.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Forgets every key expired at `now_us`.
    pub fn expire(&mut self, now_us: i64) {
        while let Some((at, _)) = self.by_expiry.first() {
            if *at > now_us {
                break;
            }
            if let Some((_, id)) = self.by_expiry.pop_first() {
                self.keys.remove(&id);
            }
        }
    }

    /// The key `id`, if remembered.
    pub fn get(&self, id: &str) -> Option<&Remembered> {
        self.keys.get(id)
    }

    /// Remembers `id`; at the bound, the key expiring first goes.
    pub fn insert(&mut self, id: String, r: Remembered) {
        if let Some(old) = self.keys.remove(&id) {
            self.by_expiry.remove(&(old.expires_us, id.clone()));
        }
        while self.keys.len() >= self.max_keys {
            match self.by_expiry.pop_first() {
                Some((_, victim)) => {
                    self.keys.remove(&victim);
                }
                None => break,
            }
        }
        self.by_expiry.insert((r.expires_us, id.clone()));
        self.keys.insert(id, r);
    }

    /// Every key, in expiry order (snapshots).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Remembered)> {
        self.by_expiry
            .iter()
            .filter_map(|(_, id)| self.keys.get(id).map(|r| (id.as_str(), r)))
    }
}

const WRITTEN: u8 = 1;
const BATCH: u8 = 2;
const REMOVED: u8 = 3;
const CREATED: u8 = 4;

fn enc_period(e: &mut Enc, p: &Period) {
    e.str(&p.id);
    e.i64(p.start_us);
    e.i64(p.end_us);
}

fn dec_period(d: &mut Dec<'_>) -> Result<Period, DecodeError> {
    Ok(Period {
        id: d.str()?,
        start_us: d.i64()?,
        end_us: d.i64()?,
    })
}

fn enc_written(e: &mut Enc, w: &WriteOutcome) {
    e.i64(w.outcome.score);
    e.u64(w.outcome.rank);
    e.i64(w.outcome.reached_at_us);
    e.u8(u8::from(w.outcome.changed));
    enc_period(e, &w.period);
}

fn dec_written(d: &mut Dec<'_>) -> Result<WriteOutcome, DecodeError> {
    Ok(WriteOutcome {
        outcome: Outcome {
            score: d.i64()?,
            rank: d.u64()?,
            reached_at_us: d.i64()?,
            changed: d.u8()? != 0,
        },
        period: dec_period(d)?,
    })
}

/// Appends a remembered key (snapshots).
pub fn encode(e: &mut Enc, id: &str, r: &Remembered) {
    e.str(id);
    e.0.extend_from_slice(&r.fingerprint);
    e.i64(r.expires_us);
    match &r.answer {
        Answer::Written(w) => {
            e.u8(WRITTEN);
            enc_written(e, w);
        }
        Answer::Batch(entries) => {
            e.u8(BATCH);
            e.u32(entries.len() as u32);
            for entry in entries {
                match entry {
                    Ok(w) => {
                        e.u8(1);
                        enc_written(e, w);
                    }
                    Err(err) => {
                        e.u8(0);
                        e.str(err.code().as_str());
                        e.str(&err.to_string());
                    }
                }
            }
        }
        Answer::Removed => e.u8(REMOVED),
        Answer::Created { created, state } => {
            e.u8(CREATED);
            e.u8(u8::from(*created));
            e.str(&state.name);
            e.config2(&state.config);
            enc_period(e, &state.current);
            e.u64(state.members);
        }
    }
}

/// Reads a remembered key written by [`encode`].
pub fn decode(d: &mut Dec<'_>) -> Result<(String, Remembered), DecodeError> {
    let id = d.str()?;
    let mut fingerprint = [0u8; 32];
    fingerprint.copy_from_slice(d.take(32)?);
    let expires_us = d.i64()?;
    let answer = match d.u8()? {
        WRITTEN => Answer::Written(dec_written(d)?),
        BATCH => {
            let n = d.u32()?;
            let mut entries = Vec::with_capacity(n.min(4096) as usize);
            for _ in 0..n {
                entries.push(if d.u8()? == 1 {
                    Ok(dec_written(d)?)
                } else {
                    let code = d.str()?;
                    let code = ErrorCode::parse(&code)
                        .ok_or_else(|| DecodeError(format!("unknown error code {code:?}")))?;
                    Err(BoardError::Remembered {
                        code,
                        message: d.str()?,
                    })
                });
            }
            Answer::Batch(entries)
        }
        REMOVED => Answer::Removed,
        CREATED => Answer::Created {
            created: d.u8()? != 0,
            state: BoardState {
                name: d.str()?,
                config: d.config2()?,
                current: dec_period(d)?,
                members: d.u64()?,
            },
        },
        k => return Err(DecodeError(format!("unknown answer kind {k}"))),
    };
    Ok((
        id,
        Remembered {
            fingerprint,
            expires_us,
            answer,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remembered(expires_us: i64) -> Remembered {
        Remembered {
            fingerprint: [7; 32],
            expires_us,
            answer: Answer::Removed,
        }
    }

    #[test]
    fn keys_expire_in_order_and_the_bound_holds() {
        let mut t = Table::new(2);
        t.insert("a".into(), remembered(10));
        t.insert("b".into(), remembered(20));
        t.insert("c".into(), remembered(30)); // "a" goes early
        assert!(t.get("a").is_none() && t.get("b").is_some() && t.get("c").is_some());
        t.expire(20);
        assert!(t.get("b").is_none());
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn answers_round_trip() {
        let period = Period {
            id: "all".into(),
            start_us: i64::MIN,
            end_us: i64::MAX,
        };
        let written = WriteOutcome {
            outcome: Outcome {
                score: i64::MIN,
                rank: 3,
                reached_at_us: 5,
                changed: true,
            },
            period: period.clone(),
        };
        for answer in [
            Answer::Written(written.clone()),
            Answer::Batch(vec![
                Ok(written),
                Err(BoardError::Remembered {
                    code: ErrorCode::ScoreRejected,
                    message: "score rejected: no".into(),
                }),
            ]),
            Answer::Removed,
            Answer::Created {
                created: true,
                state: BoardState {
                    name: "b".into(),
                    config: photofinish_core::BoardConfig::default(),
                    current: period,
                    members: 0,
                },
            },
        ] {
            let r = Remembered {
                answer,
                ..remembered(9)
            };
            let mut e = Enc::default();
            encode(&mut e, "id", &r);
            let mut d = Dec::new(&e.0);
            assert_eq!(decode(&mut d).expect("decodes"), ("id".to_owned(), r));
            assert!(d.is_done());
        }
    }
}
