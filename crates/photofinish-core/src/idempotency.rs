//! Idempotent requests (docs/SPEC.md §7, after the IETF Idempotency-Key draft): a submit,
//! batch, member delete or board create may carry a key; a repeat of the same request with
//! the same key gets the first answer again and applies nothing. The door names the key
//! ([`IdempotencyKey`]: who asked, the key, a fingerprint of the request, how long to keep
//! it); the backend applies the change ([`Change`](crate::op::Change)) and remembers its [`Answer`] in the
//! same atomic step — the same log record on the embedded store, the same script call on
//! Redis — so a retry after a crash is still recognised. Only successful answers are
//! remembered.

/// What a change answered, which a key remembers (it is the operations' own type).
pub use crate::op::{Answer, Replayable};

/// Longest key (docs/SPEC.md §7).
pub const MAX_KEY_BYTES: usize = 255;
/// How long keys are kept unless `--idempotency-ttl` says longer: 24 h.
pub const DEFAULT_TTL_US: i64 = 24 * 3600 * 1_000_000;
/// Most keys the embedded store remembers; past it the one expiring first is forgotten
/// early. About 120 bytes each for a single write's answer (docs/bench-history.md §8).
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
    /// Its identity on the board it is used with, in 128 bits: [`digest`] of
    /// [`Self::id`] — computed once by [`Self::new`], for the door's in-flight set and the
    /// embedded store's table.
    pub digest: u128,
}

impl IdempotencyKey {
    /// The key `key` of caller `scope` with request `fingerprint`, kept `ttl_us`, used on
    /// `board`.
    pub fn new(
        scope: String,
        key: String,
        fingerprint: [u8; 32],
        ttl_us: i64,
        board: &str,
    ) -> Self {
        let id = key_id(&scope, board, &key);
        Self {
            scope,
            key,
            fingerprint,
            ttl_us,
            digest: digest(&id),
        }
    }

    /// The key's identity on `board`: scope, board and key (they are scoped per credential
    /// and per board).
    pub fn id(&self, board: &str) -> String {
        key_id(&self.scope, board, &self.key)
    }
}

fn key_id(scope: &str, board: &str, key: &str) -> String {
    format!("{scope}\u{1}{board}\u{1}{key}")
}

/// A key's identity ([`IdempotencyKey::id`]) in 128 bits: the first 16 bytes of its
/// SHA-256 — fixed size, and a collision (one caller's key answering for another's) as
/// likely as guessing a 128-bit secret.
pub fn digest(id: &str) -> u128 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(id.as_bytes());
    u128::from_le_bytes(d[..16].try_into().unwrap_or_default())
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
