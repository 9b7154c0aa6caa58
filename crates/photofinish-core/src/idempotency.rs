//! Idempotent requests (docs/SPEC.md §7, after the IETF Idempotency-Key draft): a submit,
//! batch, member delete or board create may carry a key; a repeat of the same request with
//! the same key gets the first answer again and applies nothing. The door names the key
//! ([`IdempotencyKey`]: who asked, the key, a fingerprint of the request, how long to keep
//! it); the backend applies the operation ([`Keyed`]) and remembers its [`Answer`] in the
//! same atomic step — the same log record on the embedded store, the same script call on
//! Redis — so a retry after a crash is still recognised. Only successful answers are
//! remembered.

use crate::board::PeriodRef;
use crate::config::BoardConfig;
use crate::error::BoardError;
use crate::view::{BoardState, WriteOutcome, WriteRequest};

/// Longest key (docs/SPEC.md §7).
pub const MAX_KEY_BYTES: usize = 255;
/// How long keys are kept unless `--idempotency-ttl` says longer: 24 h.
pub const DEFAULT_TTL_US: i64 = 24 * 3600 * 1_000_000;
/// Most keys the embedded store remembers; past it the one expiring first is forgotten
/// early. About 200 bytes each for a single write's answer (docs/BENCHMARKS.md).
pub const DEFAULT_MAX_KEYS: usize = 1_000_000;

/// [`validate_key`] as a regular expression, for the OpenAPI document: printable ASCII,
/// and no space at either end (HTTP drops those from a header's value).
pub const IDEMPOTENCY_KEY_PATTERN: &str = "^[\\x21-\\x7E]([\\x20-\\x7E]{0,253}[\\x21-\\x7E])?$";

/// Checks a key: 1 to 255 printable ASCII characters.
pub fn validate_key(key: &str) -> Result<(), String> {
    if key.is_empty()
        || key.len() > MAX_KEY_BYTES
        || !key.bytes().all(|b| (0x20..0x7f).contains(&b))
    {
        return Err(format!(
            "Idempotency-Key must be 1 to {MAX_KEY_BYTES} printable ASCII characters, got {} bytes",
            key.len()
        ));
    }
    Ok(())
}

/// A request's idempotency key, as the door resolved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    /// Who asked: `anonymous`, `key:<name>` or `player:<member>`.
    pub scope: String,
    /// The key the client sent.
    pub key: String,
    /// SHA-256 of the request (method, path, body): the same key with another request is
    /// `idempotency_key_reused`.
    pub fingerprint: [u8; 32],
    /// How long the key is kept, µs.
    pub ttl_us: i64,
}

impl IdempotencyKey {
    /// The key's identity on `board`: scope, board and key (they are scoped per credential
    /// and per board).
    pub fn id(&self, board: &str) -> String {
        format!("{}\u{1}{board}\u{1}{}", self.scope, self.key)
    }
}

/// An operation applied under an idempotency key.
#[derive(Debug, Clone)]
pub enum Keyed {
    /// One write.
    Write(WriteRequest),
    /// A batch of writes.
    Batch(Vec<WriteRequest>),
    /// Removing a member from a period.
    Remove {
        /// The member.
        member: String,
        /// The period.
        period: PeriodRef,
    },
    /// Creating a board.
    Create(BoardConfig),
}

/// The answer an idempotent operation gave, remembered to be given again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A write's outcome.
    Written(WriteOutcome),
    /// Each entry's outcome or error, in order.
    Batch(Vec<Result<WriteOutcome, BoardError>>),
    /// The member was removed.
    Removed,
    /// The board was created (`true`) or existed alike, and how it was then.
    Created {
        /// New, or the same config existed.
        created: bool,
        /// The board at that moment (boxed: the common answers stay small).
        state: Box<BoardState>,
    },
}

/// An answer, and whether it is a replay of a remembered one.
#[derive(Debug, Clone)]
pub struct Replayable {
    /// The answer.
    pub answer: Answer,
    /// It was remembered: nothing was applied this time.
    pub replayed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert!(validate_key("a").is_ok());
        assert!(validate_key(&"k".repeat(255)).is_ok());
        assert!(validate_key("retry 1 ~!").is_ok());
        for bad in ["", "tab\there", "é", &"k".repeat(256)] {
            assert!(validate_key(bad).is_err(), "{bad:?}");
        }
    }
}
