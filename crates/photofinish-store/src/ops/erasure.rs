//! The erasure ledger on every engine alike (docs/SPEC.md §16, docs/privacy.md): a
//! member's erase entered once it has reached every board, where the engine decides what
//! spans boards ([`Engine::spanning_log`]), and the names a ledgered erase is looked for
//! among when a start-up or a restore applies the ledger file again.

use std::collections::BTreeSet;

use photofinish_core::idempotency::{Answer, IdempotencyKey};
use photofinish_core::BoardError;

use super::{execute_one, unexpected, Engine};
use crate::command::erased::{Erased, ErasedKey, ERASE_ANSWER};
use crate::command::Command;
use crate::idempotency::{short_fingerprint, KeyReused};
use crate::state::{read_lock, Applied};

/// `Leaderboard::record_erased`: enters the erase of the member named `hmac` (and
/// `member`, when known) in the ledger, with the request's idempotency key and answer (the
/// boards) when it came with one; the instant the ledger holds for it.
pub async fn record_erased<E: Engine + ?Sized>(
    e: &E,
    hmac: &str,
    member: Option<&str>,
    key: Option<(&IdempotencyKey, u64)>,
) -> Result<i64, BoardError> {
    let cmd = Command::Erased(Erased {
        hmac: hmac.to_owned(),
        at_us: 0,
        member: member.map(str::to_owned),
        key: key.map(|(k, boards)| ErasedKey {
            id: k.digest,
            fingerprint: short_fingerprint(&k.fingerprint),
            ttl_us: k.ttl_us,
            boards,
        }),
    });
    match execute_one(e, e.spanning_log(), cmd, false).await? {
        Applied::Erased(at_us) => Ok(at_us),
        other => Err(unexpected("an erasure", &other)),
    }
}

/// `Leaderboard::recall_erase`: the answer (boards) an erase under `key` got, if one did;
/// `idempotency_key_reused` when the key came with another request.
pub async fn recall_erase<E: Engine + ?Sized>(
    e: &E,
    key: &IdempotencyKey,
) -> Result<Option<u64>, BoardError> {
    let fingerprint = short_fingerprint(&key.fingerprint);
    match e.recall(e.spanning_log(), key.digest, fingerprint).await {
        None => Ok(None),
        Some(Err(KeyReused)) => Err(BoardError::IdempotencyKeyReused(key.key.clone())),
        Some(Ok(Answer::Op { op, value })) if op == ERASE_ANSWER => Ok(value["boards"].as_u64()),
        Some(Ok(other)) => Err(BoardError::Unavailable(format!(
            "an erase's key remembered {other:?}"
        ))),
    }
}

/// `Leaderboard::names_where`: every name some board holds anything under
/// ([`photofinish_core::Board::for_each_name`]) that `wanted` takes, once each, in name
/// order. `wanted` is asked once a name.
pub async fn names_where<'w, E: Engine + ?Sized>(
    e: &E,
    wanted: &'w (dyn Fn(&str) -> bool + Sync + 'w),
) -> Result<Vec<String>, BoardError> {
    let (mut seen, mut out) = (BTreeSet::new(), BTreeSet::new());
    for board in e.board_names().await? {
        let handle = match e.board(&board).await {
            Ok(handle) => handle,
            Err(BoardError::BoardNotFound(_)) => continue,
            Err(other) => return Err(other),
        };
        read_lock(&handle).for_each_name(&mut |m| {
            if !seen.contains(m) {
                seen.insert(m.to_owned());
                if wanted(m) {
                    out.insert(m.to_owned());
                }
            }
        });
    }
    Ok(out.into_iter().collect())
}
