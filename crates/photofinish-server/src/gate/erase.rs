//! A member erased everywhere through the gate (docs/SPEC.md §16, docs/privacy.md): an
//! operator's change (an admin key covering every board), named in the audit log by its
//! HMAC under the erasure key alone, and applied to every board at once.

use photofinish_core::access::{Action, Caller};
use photofinish_core::idempotency::IdempotencyKey;
use photofinish_core::{BoardError, MemberName};

use super::change::{scope_of, KeyedRequest};
use super::Gate;

impl Gate {
    /// Erases `member` from every board at once, under the request's idempotency `key` if
    /// one came with it; how many boards held something of it, and whether that answer is
    /// a remembered one (nothing applied). Its line goes into the ledger file first, so a
    /// crash half-way is finished at the next start-up ([`crate::ledger`]).
    pub async fn erase_everywhere(
        &self,
        caller: &Caller,
        member: &MemberName,
        key: Option<KeyedRequest>,
    ) -> Result<(u64, bool), BoardError> {
        self.admit(caller, Action::Operate).await?;
        // Keys of what spans boards are the credential's on no board ("*").
        let key = key.map(|k| {
            let ttl = self.idempotency_ttl_us;
            IdempotencyKey::new(scope_of(caller), k.key, k.fingerprint, ttl, "*")
        });
        let _held = key.as_ref().map(|k| self.hold(k)).transpose()?;
        if let Some(k) = &key {
            if let Some(boards) = self.service.recall_erase(k).await? {
                return Ok((boards, true));
            }
        }
        let secret = self
            .service
            .erasure_key(self.erasure_key_file.as_deref())
            .await?;
        let hmac = crate::ledger::member_hmac(&secret, member);
        if let Some(file) = &self.erasure_ledger {
            let id = crate::ledger::key_id(&secret);
            let now = self.service.now_us();
            crate::ledger::append(file, &id, &[(hmac.clone(), now)])?;
        }
        let service = &*self.service;
        let actor = caller.actor();
        let erased = crate::ledger::erase_named(service, member, &hmac, &actor, key.as_ref());
        Ok((erased.await?.boards, false))
    }
}
