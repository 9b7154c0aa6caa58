//! The erasure ledger's record (docs/SPEC.md §16, docs/privacy.md): a member erased
//! everywhere, named by its HMAC under the server's erasure key, at the instant the log
//! sequenced the record. It is logged once the erase has reached every board (the
//! embedded store's one log; on the scale-out layout a namespace's lifecycle log), so a
//! ledger entry the state holds is one fully applied: the ledger file's entries the state
//! lacks are those a start-up or a restore must apply again. The name rides along, when it
//! is known, only to take the member out of the set hidden across every board; the record
//! erases, so the store rids its files of it as it does of an erase's.
//!
//! Its fields, its bytes (a kind of its own: [`ERASED`]) and its effect on the state are
//! here, side by side.

use std::collections::{BTreeMap, BTreeSet};

use photofinish_core::idempotency::Answer;

use crate::codec::{Dec, DecodeError, Enc};

/// A member erased: `hmac` str, `at_us` i64, then a flag byte and, when it is 1, the
/// member str; then a flag byte and, when it is 1, the request's key: its digest u128,
/// fingerprint 16 bytes, lifetime i64 (µs) and the boards answered u64.
pub(super) const ERASED: u8 = 25;

/// The `Idempotency-Key` an erase came with (docs/SPEC.md §16): remembered with its
/// answer (the boards that held something of the member — never the name), so a retry
/// gets that answer again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErasedKey {
    /// The key's identity ([`photofinish_core::idempotency::IdempotencyKey::digest`]).
    pub id: u128,
    /// The request's fingerprint ([`crate::idempotency::short_fingerprint`]).
    pub fingerprint: [u8; 16],
    /// How long it is kept, µs from the record's instant.
    pub ttl_us: i64,
    /// The answer: boards that held something of the member.
    pub boards: u64,
}

/// The name an erase's remembered answer carries ([`Answer::Op`]).
pub const ERASE_ANSWER: &str = "erase_everywhere";

/// A member erased everywhere, as the ledger names it. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Erased {
    /// HMAC-SHA-256 of the name under the erasure key, hex.
    pub hmac: String,
    /// The instant, stamped when the record is sequenced.
    pub at_us: i64,
    /// The name, to take it out of the hidden-everywhere set; `None` when a ledger entry
    /// is applied again and no board held the name.
    pub member: Option<String>,
    /// The request's idempotency key, if it came with one.
    pub key: Option<ErasedKey>,
}

impl Erased {
    pub(super) fn encode(&self, e: &mut Enc) {
        e.u8(ERASED);
        e.str(&self.hmac);
        e.i64(self.at_us);
        e.opt_str(self.member.as_deref());
        match &self.key {
            None => e.u8(0),
            Some(k) => {
                e.u8(1);
                e.0.extend_from_slice(&k.id.to_le_bytes());
                e.0.extend_from_slice(&k.fingerprint);
                e.i64(k.ttl_us);
                e.u64(k.boards);
            }
        }
    }

    pub(super) fn decode(d: &mut Dec<'_>) -> Result<Self, DecodeError> {
        let (hmac, at_us, member) = (d.str()?, d.i64()?, d.opt_str()?);
        let key = match d.u8()? {
            0 => None,
            1 => Some(ErasedKey {
                id: d.u128()?,
                fingerprint: d.array16()?,
                ttl_us: d.i64()?,
                boards: d.u64()?,
            }),
            f => return Err(DecodeError(format!("an erasure's key flag {f}"))),
        };
        Ok(Erased {
            hmac,
            at_us,
            member,
            key,
        })
    }

    /// Enters the erase in `ledger` (the first instant stays when it is there already),
    /// takes the member out of `hidden` and remembers its key's answer in `keys`; the
    /// instant the ledger holds.
    pub(crate) fn apply(
        &self,
        ledger: &mut BTreeMap<String, i64>,
        hidden: &mut BTreeSet<String>,
        keys: &mut crate::idempotency::Table,
    ) -> i64 {
        if let Some(member) = &self.member {
            hidden.remove(member);
        }
        if let Some(k) = &self.key {
            let answer = Answer::Op {
                op: ERASE_ANSWER.to_owned(),
                value: serde_json::json!({"boards": k.boards}).into(),
            };
            let expires = self.at_us.saturating_add(k.ttl_us);
            keys.remember(k.id, k.fingerprint, expires, &answer);
        }
        *ledger.entry(self.hmac.clone()).or_insert(self.at_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Command;
    use crate::state::{Applied, State};

    fn erased(hmac: &str, at_us: i64, member: Option<&str>) -> Command {
        Command::Erased(Erased {
            hmac: hmac.into(),
            at_us,
            member: member.map(Into::into),
            key: None,
        })
    }

    #[test]
    fn records_round_trip() {
        let mut keyed = erased("ef", 3, Some("m"));
        if let Command::Erased(e) = &mut keyed {
            e.key = Some(ErasedKey {
                id: u128::MAX - 5,
                fingerprint: [9; 16],
                ttl_us: 86_400_000_000,
                boards: 2,
            });
        }
        for cmd in [
            erased("ab", 7, Some("mallory")),
            erased("cd", 0, None),
            keyed,
        ] {
            let mut e = Enc::default();
            cmd.encode(&mut e);
            assert_eq!(Command::decode(&e.0).expect("decodes"), cmd);
            assert!(cmd.erases() == matches!(&cmd, Command::Erased(e) if e.member.is_some()));
        }
    }

    #[test]
    fn the_first_instant_stays_and_the_hidden_set_forgets_the_name() {
        let state = State::default();
        state.restore_hidden_everywhere("mallory".into());
        assert_eq!(
            state.apply(&erased("ab", 5, Some("mallory"))),
            Ok(Applied::Erased(5))
        );
        assert_eq!(state.apply(&erased("ab", 9, None)), Ok(Applied::Erased(5)));
        assert!(state.hidden_everywhere().is_empty());
        assert_eq!(state.erasure_ledger(), vec![("ab".to_owned(), 5)]);
        // A snapshot keeps the ledger (format 10).
        let mut bytes = Vec::new();
        crate::snapshot::write(&state, 1, 5, &mut bytes).expect("snapshot");
        let loaded = crate::snapshot::read(&bytes).expect("read");
        assert_eq!(loaded.state.erasure_ledger(), state.erasure_ledger());
    }
}
