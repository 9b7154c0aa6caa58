//! Group commit: the calls that arrive while a board's append is out — or in the few
//! passes of the runtime the next one waits for the calls at the door (`crate::gather`) —
//! go together in the next one (one stream entry), appended by one task per replica so a
//! caller that goes away cannot cut a group short; the append also answers what other
//! nodes appended before it, and the group's entry is checked against the chain before it
//! is applied.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use photofinish_core::BoardError;
use photofinish_store::{Applied, Command};

use super::{encode_group, since_start_us, Decoded, Position, Replica, ReplicaError};
use crate::log::{Divergence, Entry, LogError, Missed};

/// Most commands one group commit appends (as one entry).
pub const MAX_GROUP_ENTRIES: usize = 1024;

/// A call of [`Replica::execute`] waiting for its group's append.
#[derive(Debug)]
struct Waiting {
    cmds: Vec<(Command, bool)>,
    now_us: i64,
    /// When the call queued (its clock reading `now_us` is that old at the append).
    queued: std::time::Instant,
    reply: tokio::sync::oneshot::Sender<Result<Vec<Result<Applied, BoardError>>, ReplicaError>>,
}

/// The calls waiting for a group commit, and whether a task is committing them.
#[derive(Debug, Default)]
pub(super) struct Queue {
    calls: Vec<Waiting>,
    committing: bool,
}

impl Queue {
    /// Commands waiting, over all calls.
    fn commands(&self) -> usize {
        self.calls.iter().map(|w| w.cmds.len()).sum()
    }
}

/// Commands waiting at which a group stops waiting for more (`crate::gather`): an append
/// that large is paid for, and waiting cost `-P 16` pipelines 5% of their rate
/// (docs/bench-history.md §44).
const GATHER_BELOW: usize = 64;

impl Replica {
    /// Appends `cmds` (each with whether its time is this node's stamp, `now_us`) as the
    /// board's next entries and answers each as applied in log order, after whatever other
    /// nodes appended before them. Calls that arrive while another appends wait and go
    /// together in the next append (group commit, up to [`MAX_GROUP_ENTRIES`]).
    ///
    /// The appends run in a task of their own, not in any caller: a caller that goes away
    /// (its client hung up) neither cuts a group's append short, leaving the others of
    /// its group without an answer, nor leaves its commands queued — a call gone before
    /// its group is formed is not appended.
    pub async fn execute(
        self: &Arc<Self>,
        cmds: &[(Command, bool)],
        now_us: i64,
    ) -> Result<Vec<Result<Applied, BoardError>>, ReplicaError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let lead = {
            let mut queue = self.waiting();
            queue.calls.push(Waiting {
                cmds: cmds.to_vec(),
                now_us,
                queued: std::time::Instant::now(),
                reply: tx,
            });
            !std::mem::replace(&mut queue.committing, true)
        };
        if lead {
            let me = self.clone();
            tokio::spawn(async move { me.commit_all().await });
        }
        rx.await.unwrap_or_else(|_| {
            Err(ReplicaError::Unreadable(
                "the group commit stopped without an answer (shutting down)".into(),
            ))
        })
    }

    /// Appends groups until no call waits (the one committing task of this replica).
    async fn commit_all(self: Arc<Self>) {
        loop {
            // Calls already at the door join this group (crate::gather).
            crate::gather::gather(|| self.waiting().commands(), GATHER_BELOW).await;
            let mut pos = self.position.lock().await;
            let group = self.next_group();
            if group.is_empty() {
                return;
            }
            self.commit(&mut pos, group).await;
        }
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The calls waiting whose callers are still there, oldest first, up to
    /// [`MAX_GROUP_ENTRIES`] entries (at least one call); the rest wait for the next
    /// append. None waiting: the committing task ends (the next call starts another).
    fn next_group(&self) -> Vec<Waiting> {
        let mut queue = self.waiting();
        queue.calls.retain(|w| !w.reply.is_closed());
        if queue.calls.is_empty() {
            queue.committing = false;
            return Vec::new();
        }
        let mut entries = 0;
        let mut take = 0;
        for w in queue.calls.iter() {
            if take > 0 && entries + w.cmds.len() > MAX_GROUP_ENTRIES {
                break;
            }
            entries += w.cmds.len();
            take += 1;
        }
        queue.calls.drain(..take).collect()
    }

    /// Appends a group's commands in one call, takes what came before them and then them,
    /// and answers each call.
    async fn commit(&self, pos: &mut Position, mut group: Vec<Waiting>) {
        // The node's clock as the append leaves (what the skew check compares with Redis's
        // TIME): a call's reading plus how long it waited in the queue — a group formed
        // behind a slow one must not look skewed.
        let stamp_us = group
            .iter()
            .map(|w| {
                let waited = i64::try_from(w.queued.elapsed().as_micros()).unwrap_or(i64::MAX);
                w.now_us.saturating_add(waited)
            })
            .max()
            .unwrap_or(0);
        let own: Vec<Decoded> = group
            .iter_mut()
            .flat_map(|w| {
                let now_us = w.now_us;
                w.cmds.iter().map(move |(cmd, stamped)| Decoded {
                    stamped: *stamped,
                    stamp_us: now_us,
                    cmd: cmd.clone(),
                })
            })
            .collect();
        let payload = encode_group(own.iter().map(|d| (&d.cmd, d.stamped, d.stamp_us)));
        // As the embedded writer does before its log write: the members' slots and records
        // are loaded while the append is at Redis, not one stall at a time in the apply.
        self.state.prefetch(own.iter().map(|d| &d.cmd), stamp_us);
        let began = since_start_us();
        let mut done = self.append_and_take(pos, stamp_us, payload, own).await;
        if done.is_ok() {
            // The append answered every entry before the group's own: at the head then.
            self.caught_up_at.fetch_max(began, Ordering::AcqRel);
            if let Some(w) = self.wait {
                done = match self
                    .log
                    .conn()
                    .wait_replicas(&self.log.keys().log, w.replicas, w.timeout)
                    .await
                {
                    Ok(acked) if acked >= w.replicas => done,
                    Ok(acked) => Err(ReplicaError::NotReplicated {
                        acked,
                        wanted: w.replicas,
                    }),
                    Err(e) => Err(LogError::from(e).into()),
                };
            }
        }
        match done {
            Ok(answers) => {
                let mut answers = answers.into_iter();
                for w in group {
                    let mine: Vec<_> = answers.by_ref().take(w.cmds.len()).collect();
                    let _ = w.reply.send(Ok(mine));
                }
            }
            Err(e) => {
                for w in group {
                    let _ = w.reply.send(Err(e.clone()));
                }
            }
        }
    }

    /// Appends `payload` (the group `own`, encoded) as the board's next entry, takes what
    /// other nodes appended before it and then it; the answers of `own`'s commands.
    async fn append_and_take(
        &self,
        pos: &mut Position,
        stamp_us: i64,
        payload: Vec<u8>,
        own: Vec<Decoded>,
    ) -> Result<Vec<Result<Applied, BoardError>>, ReplicaError> {
        let payloads = [payload];
        // The imports the group takes: their chunks are persisted with the append.
        let imports: Vec<&str> = own
            .iter()
            .filter_map(|d| match d.cmd.inner() {
                Command::Import { file, .. } => Some(file.as_str()),
                _ => None,
            })
            .collect();
        let appended = match self
            .log
            .append_group(
                &crate::log::group_id(),
                Some(&pos.tail),
                stamp_us,
                self.skew,
                &imports,
                &payloads,
            )
            .await
        {
            Err(LogError::Diverged) => return Err(Divergence::Refused { after: pos.tail.n }.into()),
            other => other?,
        };
        match appended.missed {
            Missed::Entries(missed) => self.follow_all(pos, &missed).await?,
            Missed::Behind => self.take_through(pos, appended.first - 1).await?,
        }
        // The group's entry chains from what this node took: checked against the log's
        // answer before it is applied, so a history rewritten under the node (a lost tail
        // refilled to the same length) is refused, never applied.
        let [payload] = payloads;
        let entry = Entry {
            n: appended.first,
            check: pos.tail.check.next(&payload),
            payload,
        };
        if appended.last != appended.first || entry.check != appended.check {
            return Err(Divergence::Mismatch { n: appended.last }.into());
        }
        self.prepare(&entry, &own).await?;
        self.take(pos, &entry, own)
    }
}
