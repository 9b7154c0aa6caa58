//! The embedded store's table of remembered idempotency keys (docs/SPEC.md §7): each key's
//! request fingerprint, the answer it got and when it expires. It is part of the
//! [`State`](crate::State): a keyed command is logged with its key (`Command::Keyed`), and
//! applying it — live or in recovery — looks the key up and remembers the answer, so the
//! table after a replay is the table that was served. Snapshots carry it (docs/format.md).
//! Expired keys go as later commands pass their instant; past `max_keys` the key expiring
//! first is forgotten early, so memory stays bounded.

use std::collections::VecDeque;
use std::sync::Arc;

use photofinish_core::columns::ColumnNames;
use photofinish_core::idempotency::Answer;
use photofinish_core::op::WriteOutcome;
use photofinish_core::{Outcome, Period, Scores};

use crate::codec::Enc;
use crate::codec::WRITE_CHUNK_BYTES;
use crate::keyindex::KeyIndex;
use photofinish_core::prefetch::prefetch_bytes;

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

/// A key's entry in the table's index: its two halves folded into 64 bits (16-byte
/// entries where the whole key made 32: half the memory). Keys are SHA-256 and any 64 bits
/// of them would do; folding both keeps keys made otherwise (tests') apart too.
fn short(id: u128) -> u64 {
    (id as u64) ^ ((id >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The table. See the module docs. Keys live in slots in insertion order, which is expiry
/// order while the lifetime stays the same (after a restart with a shorter one, a key may
/// stay a little past its expiry; lookups check the expiry themselves); the index
/// ([`KeyIndex`]) finds a key's slot. A single write's answer — nearly every key — is
/// stored without a heap allocation of its own (its period is shared with the slots before
/// it), so copying the table for a snapshot is one pass over flat memory, and writing it
/// one in order.
#[derive(Debug, Clone)]
pub struct Table {
    /// Key ([`short`]) → sequence number of its slot. The slot holds the whole key, which
    /// a lookup checks: two keys alike in those 64 bits (one pair in ~10^13 among a million
    /// keys) share an entry, and the older is forgotten early.
    index: KeyIndex,
    /// Slots in insertion order; `slots[0]` has sequence number `first_seq`.
    slots: VecDeque<Slot>,
    first_seq: u64,
    max_keys: usize,
    /// Keys forgotten before they expired, because the table was full.
    evicted_early: u64,
    /// The period of the last single-write answer stored, shared by the next ones.
    last_period: Option<Arc<Period>>,
}

/// A slot's expiry when its key was remembered again in a later slot: the slot is
/// skipped, and dropped when it reaches the front. (No key's own expiry is this instant:
/// [`Table::remember`] keeps them after it.)
const DEAD: i64 = i64::MIN;

/// One remembered key: 80 bytes for a single write's (a test holds it there), so the
/// slots a write adds and drops are few cache lines.
#[derive(Debug, Clone)]
struct Slot {
    id: u128,
    fingerprint: [u8; 16],
    /// When it may be forgotten, or [`DEAD`].
    expires_us: i64,
    answer: Stored,
}

impl Slot {
    fn dead(&self) -> bool {
        self.expires_us == DEAD
    }
}

/// An answer as a slot keeps it.
#[derive(Debug, Clone)]
enum Stored {
    /// A single one-column write's outcome and its period, shared with the slots before
    /// it (a write on a board of several columns is kept as `Other`).
    Written {
        outcome: OneOutcome,
        period: Arc<Period>,
    },
    /// Any other answer (batches, removals, creations), as it came.
    Other(Box<Answer>),
}

/// A one-column write's outcome as a slot keeps it: 32 bytes, so that a slot stays
/// within 80.
#[derive(Debug, Clone, Copy)]
struct OneOutcome {
    score: i64,
    rank: u64,
    reached_at_us: i64,
    changed: bool,
}

impl OneOutcome {
    fn of(o: &Outcome) -> Self {
        Self {
            score: o.scores.first(),
            rank: o.rank,
            reached_at_us: o.reached_at_us,
            changed: o.changed,
        }
    }

    fn outcome(&self) -> Outcome {
        Outcome {
            scores: Scores::one(self.score),
            rank: self.rank,
            reached_at_us: self.reached_at_us,
            changed: self.changed,
            partition_rank: None,
        }
    }
}

impl Stored {
    fn answer(&self) -> Answer {
        match self {
            Stored::Written { outcome, period } => Answer::Written(WriteOutcome {
                outcome: outcome.outcome(),
                period: (**period).clone(),
                columns: ColumnNames::default(),
                partition: None,
                team: None,
            }),
            Stored::Other(answer) => (**answer).clone(),
        }
    }
}

/// Heap bytes one remembered key of a single write takes, measured at a million keys
/// (docs/bench-history.md §8): counted in the memory estimate.
pub const BYTES_PER_KEY: u64 = 117;

impl Default for Table {
    fn default() -> Self {
        Self::new(photofinish_core::idempotency::DEFAULT_MAX_KEYS)
    }
}

impl Table {
    /// An empty table keeping at most `max_keys` keys.
    pub fn new(max_keys: usize) -> Self {
        Self {
            index: KeyIndex::default(),
            slots: VecDeque::new(),
            first_seq: 0,
            max_keys: max_keys.max(1),
            evicted_early: 0,
            last_period: None,
        }
    }

    /// Keys remembered.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Forgets every key expired at `now_us` (from the front of the queue).
    pub fn expire(&mut self, now_us: i64) {
        while let Some(front) = self.slots.front() {
            if !front.dead() && front.expires_us > now_us {
                break;
            }
            self.pop_front();
        }
    }

    /// Drops the front slot (and its key, unless a later slot holds it); whether a key went.
    fn pop_front(&mut self) -> bool {
        let Some(slot) = self.slots.pop_front() else {
            return false;
        };
        self.first_seq += 1;
        if !slot.dead() {
            self.index.remove(short(slot.id));
        }
        !slot.dead()
    }

    /// Where the slot with sequence number `seq` sits in `slots`.
    fn position(&self, seq: u64) -> Option<usize> {
        usize::try_from(seq.checked_sub(self.first_seq)?).ok()
    }

    fn slot(&self, id: u128) -> Option<&Slot> {
        let seq = self.index.get(short(id))?;
        self.slots.get(self.position(seq)?).filter(|s| s.id == id)
    }

    /// Forgets every remembered answer that names `member` (docs/SPEC.md §16: an erase
    /// takes its idempotency records): an operation's answer holding the name anywhere (a
    /// removal's, a claim's grant). A write's answer never holds it. How many went; a
    /// retry with one of their keys is then a new request.
    pub fn forget_naming(&mut self, member: &str) -> usize {
        fn names(v: &serde_json::Value, member: &str) -> bool {
            match v {
                serde_json::Value::String(s) => s == member,
                serde_json::Value::Array(a) => a.iter().any(|v| names(v, member)),
                serde_json::Value::Object(o) => o.values().any(|v| names(v, member)),
                _ => false,
            }
        }
        let mut forgotten = 0;
        for slot in &mut self.slots {
            let named = matches!(&slot.answer, Stored::Other(a)
                if matches!(&**a, Answer::Op { value, .. } if names(value, member)));
            if named && !slot.dead() {
                self.index.remove(short(slot.id));
                slot.expires_us = DEAD;
                forgotten += 1;
            }
        }
        forgotten
    }

    /// Whether key `id` ([`photofinish_core::idempotency::digest`]) is remembered and not expired at `now_us`.
    pub fn contains(&self, id: u128, now_us: i64) -> bool {
        self.slot(id).is_some_and(|s| s.expires_us > now_us)
    }

    /// What a request with key `id` and `fingerprint` meets at `now_us`: nothing (a new
    /// key), the remembered answer (the same request again), or [`KeyReused`].
    pub fn recall(
        &self,
        id: u128,
        fingerprint: [u8; 16],
        now_us: i64,
    ) -> Option<Result<Answer, KeyReused>> {
        let slot = self.slot(id).filter(|s| s.expires_us > now_us)?;
        Some(if slot.fingerprint == fingerprint {
            Ok(slot.answer.answer())
        } else {
            Err(KeyReused)
        })
    }

    /// Prefetches what remembering `ids` next will touch: each key's index entry, the
    /// slots they will be written to, and — when each new key pushes one out (the table
    /// at its bound, or its front expired at `now_us`) — the index entries of the keys at
    /// the front. The writer calls it for a batch before the log append, so these memory
    /// loads (a random one each in an index of tens of MB, and slots last written a
    /// million keys ago: the table's main cost, docs/bench-history.md §8) overlap the write
    /// instead of stalling the apply one at a time.
    pub fn warm(&self, ids: impl Iterator<Item = u128>, now_us: i64) {
        let full = self.index.len() >= self.max_keys;
        // Where the next slot goes: after the last one, in the deque's buffer (or at its
        // start, if the buffer wraps or grows there; then the hint is only wasted).
        let (front, back) = self.slots.as_slices();
        let tail = if back.is_empty() { front } else { back }
            .as_ptr_range()
            .end;
        for (i, id) in ids.enumerate() {
            self.index.prefetch(short(id));
            prefetch_bytes(tail.wrapping_add(i).cast(), std::mem::size_of::<Slot>());
            if let Some(front) = self.slots.get(i) {
                if full || front.expires_us <= now_us {
                    self.index.prefetch(short(front.id));
                }
            }
        }
    }

    /// Remembers `id`; at the bound, the key remembered first goes.
    pub fn insert(&mut self, id: u128, r: Remembered) {
        self.remember(id, r.fingerprint, r.expires_us, &r.answer);
    }

    /// [`Self::insert`] from a borrowed answer (the writer answers the caller with it
    /// too): a single write's is copied without an allocation unless its period is new.
    pub fn remember(&mut self, id: u128, fingerprint: [u8; 16], expires_us: i64, answer: &Answer) {
        let expires_us = expires_us.max(DEAD + 1);
        let answer = match answer {
            Answer::Written(w)
                if w.columns.get().is_none() && w.partition.is_none() && w.team.is_none() =>
            {
                let period = match &self.last_period {
                    Some(p) if **p == w.period => p.clone(),
                    _ => {
                        let p = Arc::new(w.period.clone());
                        self.last_period = Some(p.clone());
                        p
                    }
                };
                Stored::Written {
                    outcome: OneOutcome::of(&w.outcome),
                    period,
                }
            }
            other => Stored::Other(Box::new(other.clone())),
        };
        let seq = self.first_seq + self.slots.len() as u64;
        if let Some(old) = self
            .index
            .insert(short(id), seq)
            .and_then(|s| self.position(s))
        {
            if let Some(slot) = self.slots.get_mut(old) {
                slot.expires_us = DEAD;
            }
        }
        self.slots.push_back(Slot {
            id,
            fingerprint,
            expires_us,
            answer,
        });
        while self.index.len() > self.max_keys {
            if self.pop_front() {
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

    /// Writes the count and every key, oldest first, as [`decode`] reads one (snapshots),
    /// in pieces of about a MiB (`WRITE_CHUNK_BYTES`).
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut e = Enc::default();
        e.u32(self.len() as u32);
        for slot in self.slots.iter().filter(|s| !s.dead()) {
            if e.0.len() >= WRITE_CHUNK_BYTES {
                w.write_all(&e.0)?;
                e.0.clear();
            }
            e.0.extend_from_slice(&slot.id.to_le_bytes());
            e.0.extend_from_slice(&slot.fingerprint);
            e.i64(slot.expires_us);
            match &slot.answer {
                Stored::Written { outcome, period } => {
                    e.u8(WRITTEN);
                    enc_outcome(
                        &mut e,
                        &outcome.outcome(),
                        &ColumnNames::default(),
                        Groups::default(),
                    );
                    enc_period(&mut e, period);
                }
                Stored::Other(answer) => enc_answer(&mut e, answer),
            }
        }
        w.write_all(&e.0)
    }
}

mod answers;

pub use answers::decode;
use answers::{enc_answer, enc_outcome, enc_period, Groups, WRITTEN};

#[cfg(test)]
mod tests {
    use super::answers::*;
    use super::*;
    use crate::codec::Dec;
    use photofinish_core::op::{Hide, Join, Remove};
    use photofinish_core::view::{BoardState, JoinOutcome};
    use photofinish_core::{BoardError, ErrorCode};

    fn remembered(expires_us: i64) -> Remembered {
        Remembered {
            fingerprint: [7; 16],
            expires_us,
            answer: Remove::remembered(),
        }
    }

    proptest::proptest! {
        /// Against a model (key → expiry, forgotten oldest first past the bound): whatever
        /// the inserts, repeats and expiries, the table remembers the same keys.
        #[test]
        fn the_table_matches_a_model(
            max_keys in 1usize..40,
            ops in proptest::collection::vec((0u128..60, 0i64..3, proptest::bool::ANY), 0..3000),
        ) {
            let mut t = Table::new(max_keys);
            // The model: keys in insertion order, each with its expiry.
            let mut model: VecDeque<(u128, i64)> = VecDeque::new();
            let mut now = 0;
            for (id, step, expire) in ops {
                now += step;
                if expire {
                    t.expire(now);
                    model.retain(|&(_, e)| e > now);
                } else {
                    // Warming first changes nothing (it only prefetches), wherever the
                    // queue's buffer wraps.
                    t.warm([id, id + 1].into_iter(), now);
                    t.insert(id, remembered(now + 50));
                    model.retain(|&(k, _)| k != id);
                    model.push_back((id, now + 50));
                    while model.len() > max_keys {
                        model.pop_front();
                    }
                }
                proptest::prop_assert!(t.len() <= max_keys);
                for k in 0..60 {
                    let held = model.iter().any(|&(m, e)| m == k && e > now);
                    proptest::prop_assert_eq!(t.contains(k, now), held, "key {} at {}", k, now);
                }
            }
        }
    }

    #[test]
    fn an_erase_forgets_the_answers_naming_the_member() {
        let mut t = Table::new(10);
        let op = |member: &str| Remembered {
            answer: Answer::Op {
                op: "claim".into(),
                value: serde_json::json!({"grant": {"member": member, "amount": 1}}).into(),
            },
            ..remembered(100)
        };
        t.insert(1, op("zed"));
        t.insert(2, op("ann"));
        t.insert(3, remembered(100));
        assert_eq!(t.forget_naming("zed"), 1);
        assert!(!t.contains(1, 0) && t.contains(2, 0) && t.contains(3, 0));
        assert_eq!(t.len(), 2);
        // A snapshot of the table holds the others alone.
        let mut bytes = Vec::new();
        t.write_to(&mut bytes).expect("write");
        assert!(!bytes.windows(3).any(|w| w == b"zed"));
        assert_eq!(t.forget_naming("zed"), 0);
    }

    #[test]
    fn a_slot_stays_within_80_bytes() {
        // Five 16-byte units: the key, the fingerprint, the expiry with the outcome's
        // score, and the rest of the outcome with the shared period.
        assert!(
            std::mem::size_of::<Slot>() <= 80,
            "{}",
            std::mem::size_of::<Slot>()
        );
    }

    #[test]
    fn keys_alike_in_their_index_entry_are_told_apart() {
        // Alike once folded: b's low half undoes what its high half adds.
        let a = 5u128;
        let b = (1u128 << 64) | u128::from(5u64 ^ 0x9E37_79B9_7F4A_7C15);
        assert_eq!(short(a), short(b));
        let mut t = Table::new(10);
        t.insert(a, remembered(10));
        assert!(
            t.contains(a, 0) && !t.contains(b, 0),
            "a lookup checks the whole key"
        );
        t.insert(b, remembered(20));
        assert!(
            !t.contains(a, 0) && t.contains(b, 0),
            "the older is forgotten early"
        );
        assert_eq!(t.len(), 1);
        t.expire(15);
        assert!(t.contains(b, 0) && t.len() == 1);
        t.expire(20);
        assert!(t.is_empty());
    }

    #[test]
    fn keys_expire_in_order_and_the_bound_holds() {
        let mut t = Table::new(2);
        t.insert(1, remembered(10));
        t.insert(2, remembered(20));
        t.insert(3, remembered(30)); // 1 goes early
        assert!(!t.contains(1, 0) && t.contains(2, 0) && t.contains(3, 0));
        assert!(!t.contains(3, 30), "expired at its instant");
        t.expire(20);
        assert!(!t.contains(2, 0));
        assert_eq!(t.len(), 1);
    }

    fn written(rank: u64, period: &str) -> Answer {
        Answer::Written(WriteOutcome {
            columns: Default::default(),
            outcome: Outcome {
                scores: photofinish_core::Scores::one(-7),
                rank,
                reached_at_us: 11,
                changed: true,
                partition_rank: None,
            },
            period: Period {
                id: period.into(),
                start_us: 100,
                end_us: 200,
            },
            partition: None,
            team: None,
        })
    }

    /// Reads back what `write_to` wrote, as a snapshot load does.
    fn reload(t: &Table) -> Vec<(u128, Remembered)> {
        let mut bytes = Vec::new();
        t.write_to(&mut bytes).expect("write");
        let mut d = Dec::new(&bytes);
        let n = d.u32().expect("count");
        let keys = (0..n).map(|_| decode(&mut d).expect("decodes")).collect();
        assert!(d.is_done());
        keys
    }

    /// A key remembered again keeps only its newest answer: one key, found with the new
    /// fingerprint, written once, and the old slot's expiry does not take the new one.
    #[test]
    fn a_key_remembered_again_keeps_its_newest_answer() {
        let mut t = Table::new(10);
        t.insert(
            1,
            Remembered {
                answer: written(1, "2026-11-25"),
                ..remembered(10)
            },
        );
        t.insert(
            2,
            Remembered {
                answer: written(2, "2026-11-25"),
                ..remembered(15)
            },
        );
        let newer = Remembered {
            fingerprint: [8; 16],
            answer: written(3, "2026-11-26"),
            ..remembered(30)
        };
        t.insert(1, newer.clone());
        assert_eq!(t.len(), 2);
        assert_eq!(t.recall(1, [7; 16], 0), Some(Err(KeyReused)));
        assert_eq!(t.recall(1, [8; 16], 0), Some(Ok(newer.answer.clone())));
        assert_eq!(
            reload(&t).iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            [2, 1]
        );
        t.expire(20); // past the old slot and key 2
        assert_eq!(t.len(), 1);
        assert_eq!(reload(&t), vec![(1, newer)]);
        let copy = t.clone();
        t.expire(30);
        assert!(t.is_empty() && copy.contains(1, 0), "a copy is its own");
    }

    /// Every kind of answer comes back from the table as it went in, and a table written
    /// and read back holds the same keys in the same order.
    #[test]
    fn the_table_gives_back_what_it_was_given() {
        let mut t = Table::new(10);
        let answers = [
            written(1, "2026-W48"),
            written(2, "2026-W48"),
            Remove::remembered(),
            Answer::Batch(vec![Ok(match written(4, "all") {
                Answer::Written(w) => w,
                _ => unreachable!(),
            })]),
            written(5, "2026-W49"),
        ];
        for (i, answer) in answers.iter().enumerate() {
            let r = Remembered {
                answer: answer.clone(),
                ..remembered(100 + i as i64)
            };
            t.insert(i as u128, r);
        }
        for (i, answer) in answers.iter().enumerate() {
            assert_eq!(t.recall(i as u128, [7; 16], 0), Some(Ok(answer.clone())));
        }
        let back = reload(&t);
        assert_eq!(back.len(), answers.len());
        for (i, (id, r)) in back.iter().enumerate() {
            assert_eq!(
                (*id, &r.answer, r.expires_us),
                (i as u128, &answers[i], 100 + i as i64)
            );
        }
    }

    #[test]
    fn answers_round_trip() {
        let period = Period {
            id: "all".into(),
            start_us: i64::MIN,
            end_us: i64::MAX,
        };
        let written = WriteOutcome {
            columns: Default::default(),
            outcome: Outcome {
                scores: photofinish_core::Scores::one(i64::MIN),
                rank: 3,
                reached_at_us: 5,
                changed: true,
                partition_rank: Some(2),
            },
            period: period.clone(),
            partition: Some("FR".into()),
            team: Some("wolves".into()),
        };
        let state = BoardState {
            name: "b".into(),
            config: photofinish_core::BoardConfig::default(),
            current: period.clone(),
            members: 7,
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
            Answer::Op {
                op: "remove".into(),
                value: serde_json::json!({"period": "2026-W49"}).into(),
            },
            Answer::Created {
                created: true,
                state: Box::new(state.clone()),
            },
            Answer::Op {
                op: "patch".into(),
                value: serde_json::to_value(state).expect("a board as JSON").into(),
            },
            Answer::Deleted,
            Answer::Op {
                op: "join".into(),
                value: serde_json::json!({"member": "ann", "already": false}).into(),
            },
        ] {
            let r = Remembered {
                answer,
                ..remembered(9)
            };
            let mut t = Table::new(1);
            t.insert(u128::MAX - 5, r.clone());
            assert_eq!(reload(&t), vec![(u128::MAX - 5, r)]);
        }
    }

    /// A join's answer remembered by an earlier version (kind 7) reads as the answer of
    /// the join operation, which [`Join::answer`] reads back.
    #[test]
    fn an_earlier_joins_answer_reads_as_the_operations() {
        let period = Period {
            id: "2026-12-02".into(),
            start_us: 1_795_392_000_000_000,
            end_us: 1_795_478_400_000_000,
        };
        let mut e = Enc::default();
        e.0.extend_from_slice(&7u128.to_le_bytes());
        e.0.extend_from_slice(&[3; 16]);
        e.i64(99);
        e.u8(JOINED);
        e.str("ann");
        enc_period(&mut e, &period);
        e.u8(1);
        let (id, r) = decode(&mut Dec::new(&e.0)).expect("decodes");
        assert_eq!((id, r.expires_us), (7, 99));
        let joined = Join::answer(r.answer).expect("a join's answer");
        assert_eq!(
            joined,
            JoinOutcome {
                member: "ann".into(),
                period,
                already: true,
            }
        );
    }

    /// A removal's and a hide's answers remembered by an earlier version (kinds 3 and
    /// 8) read as their operations' answers.
    #[test]
    fn earlier_removals_and_hides_read_as_the_operations() {
        for (kind, flag) in [(REMOVED, None), (HIDDEN, Some(1u8)), (HIDDEN, Some(0))] {
            let mut e = Enc::default();
            e.0.extend_from_slice(&7u128.to_le_bytes());
            e.0.extend_from_slice(&[3; 16]);
            e.i64(99);
            e.u8(kind);
            if let Some(f) = flag {
                e.u8(f);
            }
            let (_, r) = decode(&mut Dec::new(&e.0)).expect("decodes");
            match flag {
                None => assert_eq!(
                    Remove::answer(r.answer).expect("a removal's answer"),
                    photofinish_core::op::Removed { period: None }
                ),
                Some(f) => assert_eq!(Hide::answer(r.answer).expect("a hide's"), f == 1),
            }
        }
    }
}
