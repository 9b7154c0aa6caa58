//! The embedded store's table of remembered idempotency keys (docs/SPEC.md §7): each key's
//! request fingerprint, the answer it got and when it expires. It is part of the
//! [`State`](crate::State): a keyed command is logged with its key (`Command::Keyed`), and
//! applying it — live or in recovery — looks the key up and remembers the answer, so the
//! table after a replay is the table that was served. Snapshots carry it (docs/format.md). Expired keys go as later commands pass their instant; past
//! `max_keys` the key expiring first is forgotten early, so memory stays bounded.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use photofinish_core::idempotency::Answer;
use photofinish_core::view::{BoardState, WriteOutcome};
use photofinish_core::{BoardError, ErrorCode, Outcome, Period};

use crate::codec::{Dec, DecodeError, Enc};

/// A key's identity in the table and the log: the first 16 bytes of SHA-256 of
/// `IdempotencyKey::id` (scope, board, key) — fixed size, no allocation, and a collision
/// as likely as guessing a 128-bit secret.
pub fn key_hash(id: &str) -> u128 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(id.as_bytes());
    u128::from_le_bytes(d[..16].try_into().unwrap_or_default())
}

/// A request fingerprint as the log and table keep it: its first 16 bytes.
pub fn short_fingerprint(fp: &[u8; 32]) -> [u8; 16] {
    fp[..16].try_into().unwrap_or_default()
}

/// A remembered key met with another request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyReused;

/// One remembered key.
#[derive(Debug, Clone, PartialEq)]
pub struct Remembered {
    /// The request it answered ([`short_fingerprint`]).
    pub fingerprint: [u8; 16],
    /// When it may be forgotten, µs since the epoch.
    pub expires_us: i64,
    /// The answer.
    pub answer: Answer,
}

/// Hashes a key hash: its low 64 bits (already uniform — it comes from SHA-256).
#[derive(Debug, Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

/// The table. See the module docs. Keys are kept in insertion order, which is expiry order
/// while the lifetime stays the same (after a restart with a shorter one, a key may stay a
/// little past its expiry in the queue; lookups check the expiry themselves).
#[derive(Debug, Clone)]
pub struct Table {
    keys: HashMap<u128, Remembered, BuildHasherDefault<KeyHasher>>,
    /// (expiry, key) in insertion order; an entry whose expiry no longer matches the map's
    /// (the key was remembered again) is skipped.
    order: VecDeque<(i64, u128)>,
    max_keys: usize,
    /// Keys forgotten before they expired, because the table was full.
    evicted_early: u64,
}

/// Heap bytes one remembered key of a single write takes, measured at a million keys
/// (docs/BENCHMARKS.md §8): counted in the memory estimate.
pub const BYTES_PER_KEY: u64 = 280;

impl Default for Table {
    fn default() -> Self {
        Self::new(photofinish_core::idempotency::DEFAULT_MAX_KEYS)
    }
}

impl Table {
    /// An empty table keeping at most `max_keys` keys.
    pub fn new(max_keys: usize) -> Self {
        Self {
            keys: HashMap::default(),
            order: VecDeque::new(),
            max_keys: max_keys.max(1),
            evicted_early: 0,
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

    /// Forgets every key expired at `now_us` (from the front of the queue).
    pub fn expire(&mut self, now_us: i64) {
        while let Some(&(at, id)) = self.order.front() {
            if at > now_us {
                break;
            }
            self.order.pop_front();
            self.forget_if_current(at, id);
        }
    }

    /// Removes `id` if the queue entry `(at, id)` is its current one.
    fn forget_if_current(&mut self, at: i64, id: u128) -> bool {
        if self.keys.get(&id).is_some_and(|r| r.expires_us == at) {
            self.keys.remove(&id);
            return true;
        }
        false
    }

    /// The key `id` ([`key_hash`]), if remembered and not expired at `now_us`.
    pub fn get(&self, id: u128, now_us: i64) -> Option<&Remembered> {
        self.keys.get(&id).filter(|r| r.expires_us > now_us)
    }

    /// What a request with key `id` and `fingerprint` meets at `now_us`: nothing (a new
    /// key), the remembered answer (the same request again), or [`KeyReused`].
    pub fn recall(
        &self,
        id: u128,
        fingerprint: [u8; 16],
        now_us: i64,
    ) -> Option<Result<&Answer, KeyReused>> {
        self.get(id, now_us).map(|r| {
            if r.fingerprint == fingerprint {
                Ok(&r.answer)
            } else {
                Err(KeyReused)
            }
        })
    }

    /// Remembers `id`; at the bound, the key remembered first goes.
    pub fn insert(&mut self, id: u128, r: Remembered) {
        self.order.push_back((r.expires_us, id));
        self.keys.insert(id, r);
        while self.keys.len() > self.max_keys {
            let Some((at, victim)) = self.order.pop_front() else {
                break;
            };
            if self.forget_if_current(at, victim) {
                if self.evicted_early.is_multiple_of(100_000) {
                    tracing::warn!(
                        max_keys = self.max_keys,
                        evicted_early = self.evicted_early + 1,
                        "idempotency table full: keys are forgotten before they expire, oldest first"
                    );
                }
                self.evicted_early += 1;
            }
        }
    }

    /// Every key, oldest first (snapshots).
    pub fn iter(&self) -> impl Iterator<Item = (u128, &Remembered)> {
        self.order.iter().filter_map(|(at, id)| {
            self.keys
                .get(id)
                .filter(|r| r.expires_us == *at)
                .map(|r| (*id, r))
        })
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
pub fn encode(e: &mut Enc, id: u128, r: &Remembered) {
    e.0.extend_from_slice(&id.to_le_bytes());
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
pub fn decode(d: &mut Dec<'_>) -> Result<(u128, Remembered), DecodeError> {
    let id = d.u128()?;
    let fingerprint = d.array16()?;
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
            state: Box::new(BoardState {
                name: d.str()?,
                config: d.config2()?,
                current: dec_period(d)?,
                members: d.u64()?,
            }),
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
            fingerprint: [7; 16],
            expires_us,
            answer: Answer::Removed,
        }
    }

    #[test]
    fn keys_expire_in_order_and_the_bound_holds() {
        let mut t = Table::new(2);
        t.insert(1, remembered(10));
        t.insert(2, remembered(20));
        t.insert(3, remembered(30)); // 1 goes early
        assert!(t.get(1, 0).is_none() && t.get(2, 0).is_some() && t.get(3, 0).is_some());
        assert!(t.get(3, 30).is_none(), "expired at its instant");
        t.expire(20);
        assert!(t.get(2, 0).is_none());
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
                state: Box::new(BoardState {
                    name: "b".into(),
                    config: photofinish_core::BoardConfig::default(),
                    current: period,
                    members: 0,
                }),
            },
        ] {
            let r = Remembered {
                answer,
                ..remembered(9)
            };
            let mut e = Enc::default();
            encode(&mut e, u128::MAX - 5, &r);
            let mut d = Dec::new(&e.0);
            assert_eq!(decode(&mut d).expect("decodes"), (u128::MAX - 5, r));
            assert!(d.is_done());
        }
    }
}
