//! Changes through the gate: any [`Change`] of a board, authorized by what it is (a
//! create, patch or delete needs the board's admin, a removal write access; each write of
//! a write or a batch is authorized for its member), the memory budget's verdict put on
//! each write, and an idempotency key held by one request at a time on this server —
//! then the service's one [`Leaderboard::change`](photofinish_core::Leaderboard::change).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use photofinish_core::access::Caller;
use photofinish_core::idempotency::{IdempotencyKey, Replayable};
use photofinish_core::op::Change;
use photofinish_core::op::{WriteOutcome, WriteRequest};
use photofinish_core::{BoardError, BoardName};

use super::{Gate, WriteTarget};

/// A request's idempotency key, as its door read it (the `Idempotency-Key` header, RESP's
/// `IDEMPOTENCY` option), and the fingerprint of the request it came with.
#[derive(Debug, Clone)]
pub struct KeyedRequest {
    /// The key.
    pub key: String,
    /// SHA-256 of the request (HTTP: method, path and query, body).
    pub fingerprint: [u8; 32],
}

/// A key in flight; dropping it lets the key be used again.
pub(super) struct InFlight {
    digest: u128,
    set: Arc<Mutex<HashSet<u128>>>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.digest);
    }
}

/// Whose keys a caller's are: keys are scoped per credential (docs/SPEC.md §7).
pub(super) fn scope_of(caller: &Caller) -> String {
    match caller {
        Caller::Open | Caller::Anonymous => "anonymous".into(),
        Caller::Key(grant) => format!("key:{}", grant.name),
        Caller::Player { member, .. } => format!("player:{member}"),
    }
}

impl Gate {
    /// Applies `change` to `board` if `caller` may make it, under the idempotency key
    /// `key` if one came with the request: the one way a door changes a board. A write or
    /// a batch is checked as [`Self::check_write_target`] then [`Self::submit`] do.
    pub async fn change(
        &self,
        caller: &Caller,
        board: &BoardName,
        change: Change,
        key: Option<KeyedRequest>,
    ) -> Result<Replayable, BoardError> {
        match change.action(board) {
            Some(action) => self.admit(caller, action).await?,
            None => {
                let target = self.check_write_target(caller, board).await?;
                return self.submit(&target, change, key).await;
            }
        }
        let mut change = change;
        change.admit_budget(self.over_budget());
        self.apply(caller, board, change, key).await
    }

    /// A write or a batch to a checked target: every write authorized before anything
    /// applies (one the caller may not make refuses the whole change), each with the memory
    /// budget's verdict on it.
    pub async fn submit(
        &self,
        target: &WriteTarget<'_>,
        mut change: Change,
        key: Option<KeyedRequest>,
    ) -> Result<Replayable, BoardError> {
        if let Some(action) = change.action(target.board) {
            self.admit(target.caller, action).await?;
        }
        for w in change.writes() {
            target.authorize(w)?;
        }
        change.admit_budget(self.over_budget());
        self.apply(target.caller, target.board, change, key).await
    }

    /// Writes to a checked target, each on its own (a door's pipeline, not an HTTP
    /// batch): a write the caller may not make is refused alone, the others go to the
    /// service together — one group commit on the embedded store, one append on Redis —
    /// in order. One answer per write, in order.
    pub async fn write_each(
        &self,
        target: &WriteTarget<'_>,
        mut writes: Vec<WriteRequest>,
    ) -> Vec<Result<WriteOutcome, BoardError>> {
        let over_budget = self.over_budget();
        let mut answers: Vec<Option<Result<WriteOutcome, BoardError>>> =
            Vec::with_capacity(writes.len());
        // Refused writes leave the batch in place: none is moved while all are allowed.
        writes.retain_mut(|w| match target.authorize(w) {
            Ok(()) => {
                w.over_budget = over_budget;
                answers.push(None);
                true
            }
            Err(e) => {
                answers.push(Some(Err(e)));
                false
            }
        });
        let mut allowed = writes;
        let n = allowed.len();
        let applied = if n > 1 {
            let all = self
                .service
                .change(target.board, Change::Batch(allowed), None, "");
            match all.await.and_then(|r| r.answer.into_batch()) {
                Ok(each) => each,
                Err(e) => vec![Err(e); n],
            }
        } else if let Some(w) = allowed.pop() {
            // One write goes alone: no batch to build.
            let one = self
                .service
                .change(target.board, Change::Write(w), None, "");
            vec![one.await.and_then(|r| r.answer.into_written())]
        } else {
            Vec::new()
        };
        let mut applied = applied.into_iter();
        answers
            .into_iter()
            .map(|a| {
                a.unwrap_or_else(|| {
                    applied.next().unwrap_or_else(|| {
                        Err(BoardError::Unavailable("no answer for this write".into()))
                    })
                })
            })
            .collect()
    }

    /// An authorized change applied: under `key` if any (409
    /// `idempotency_key_in_flight` while a request with the same key is being applied
    /// here).
    async fn apply(
        &self,
        caller: &Caller,
        board: &BoardName,
        change: Change,
        key: Option<KeyedRequest>,
    ) -> Result<Replayable, BoardError> {
        let actor = caller.actor();
        let done = match key {
            None => self.service.change(board, change, None, &actor).await?,
            Some(request) => {
                change.check_key()?;
                let key = IdempotencyKey::new(
                    scope_of(caller),
                    request.key,
                    request.fingerprint,
                    self.idempotency_ttl_us,
                    board,
                );
                let _guard = self.hold(&key)?;
                self.service
                    .change(board, change, Some(&key), &actor)
                    .await?
            }
        };
        Ok(done)
    }

    /// Holds `key` while its request is applied here: `idempotency_key_in_flight` if
    /// another request holds it.
    pub(super) fn hold(&self, key: &IdempotencyKey) -> Result<InFlight, BoardError> {
        let mut set = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if !set.insert(key.digest) {
            return Err(BoardError::IdempotencyKeyInFlight(key.key.clone()));
        }
        Ok(InFlight {
            digest: key.digest,
            set: self.in_flight.clone(),
        })
    }
}
