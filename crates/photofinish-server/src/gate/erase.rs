//! A member erased everywhere through the gate (docs/SPEC.md §16, docs/privacy.md): an
//! operator's change (an admin key covering every board), named in the audit log by its
//! HMAC under the erasure key alone, and applied to every board at once.

use photofinish_core::access::{Action, Caller};
use photofinish_core::op::{Erase, LoggedOp};
use photofinish_core::{BoardError, MemberName};

use super::Gate;

/// `member`'s name as the audit log and the erasure ledger hold it: HMAC-SHA-256 under
/// `key`, hex.
pub fn member_hmac(key: &[u8], member: &str) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(member.as_bytes());
    photofinish_store::erasure::to_hex(&mac.finalize().into_bytes().into())
}

impl Gate {
    /// Erases `member` from every board at once; how many boards held something of it.
    pub async fn erase_everywhere(
        &self,
        caller: &Caller,
        member: &MemberName,
    ) -> Result<u64, BoardError> {
        self.admit(caller, Action::Operate).await?;
        let key = self
            .service
            .erasure_key(self.erasure_key_file.as_deref())
            .await?;
        let op = Erase::new(member.clone(), member_hmac(&key, member));
        let answers = self
            .service
            .change_everywhere(LoggedOp::new(Box::new(op)), &caller.actor())
            .await?;
        Ok(answers
            .iter()
            .filter(|(_, held)| *held == serde_json::Value::Bool(true))
            .count() as u64)
    }
}
