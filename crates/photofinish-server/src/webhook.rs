//! The period-close webhook dispatcher (docs/SPEC.md §10, docs/webhooks.md): every
//! [`TICK`] it asks the service which boards have a webhook and where their cursors stand
//! ([`photofinish_core::hook`] decides what each owes), and posts each period due — its
//! top entries and its grants (docs/SPEC.md §16: a post waits for the close step that
//! makes them), signed — from a task of its own, one board at a time, at most
//! [`MAX_POSTS_IN_FLIGHT`] at once. A 2xx moves the board's cursor past the period (durably,
//! through the backend); anything else waits [`retry_after`] and tries again, up to a day.
//!
//! At least once: the cursor moves only after a 2xx, so a crash before it leaves the
//! period owed, and the next start posts it again (with the same `Idempotency-Key`).
//! Servers sharing a Redis claim a board's post first (`hook_claim`), and a failed
//! attempt keeps the claim for its wait, so the backoff holds across nodes.
//!
//! SSRF care: only callers who may manage a board set its webhook (admins); posts follow
//! no redirects, give up after [`POST_TIMEOUT`], and read at most [`MAX_RESPONSE_BYTES`]
//! of an answer, which is otherwise ignored.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use photofinish_core::hook::{first_cursor, owed, retry_after, HookState, Owed};
use photofinish_core::op::{ReadCohorts, ReadMoves, ReadPeriodRewards};
use photofinish_core::view::ReadOptions;
use photofinish_core::BoardConfig;
use photofinish_core::{
    BoardError, BoardName, Leaderboard, Period, PeriodRef, PeriodWindow, RunRead,
};
use serde::Serialize;

use crate::conns::lock;
use crate::metrics::Metrics;
use photofinish_store::hex::encode as hex;

mod body;

use body::{all_moves, body, cohort_body, period_grants, COHORTS_PER_READ};
pub use body::{CohortClosed, PeriodClosed};

/// How often the dispatcher looks for periods due: a post leaves within this (plus the
/// time to read the entries) after its period (and grace) ended.
pub const TICK: Duration = Duration::from_secs(1);
/// How long a post may take, connection included.
pub const POST_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a receiver's answer read (and then dropped).
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// Posts under way at once, over all boards.
pub const MAX_POSTS_IN_FLIGHT: usize = 16;
/// How long a claim on a board's post holds while it is made.
const CLAIM_HOLD: Duration = Duration::from_secs(30);
/// The header carrying the body's HMAC-SHA256.
pub const SIGNATURE_HEADER: &str = "X-Photofinish-Signature";

/// How the dispatcher signs.
#[derive(Clone, Default)]
pub struct WebhookOptions {
    /// `--webhook-secret`: the HMAC-SHA256 key; `None` sends posts unsigned.
    pub secret: Option<Arc<[u8]>>,
}

impl std::fmt::Debug for WebhookOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        let secret = if self.secret.is_some() { "set" } else { "none" };
        write!(f, "WebhookOptions {{ secret: {secret} }}")
    }
}

/// `sha256=<hex>`: the HMAC-SHA256 of `body` under `secret`, as the header carries it.
pub fn signature(secret: &[u8], body: &[u8]) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(body);
    format!("sha256={}", hex(&mac.finalize().into_bytes()))
}

/// Starts the webhook cursor of `board` (with `config`) at the period current now, so that
/// period is the first posted; returns it. The Gate calls it when a webhook is set, and the
/// dispatcher for a board it finds without a cursor (a board whose create or patch set its
/// webhook had its cursor started by the store's operations, `ops::start_hook`).
pub async fn start_cursor(
    service: &dyn Leaderboard,
    board: &str,
    config: &BoardConfig,
) -> Result<i64, BoardError> {
    let cursor = first_cursor(config, service.now_us())?;
    service.hook_advance(board, cursor).await?;
    Ok(cursor)
}

/// The dispatcher's own state: boards with a post under way, and when a board that failed
/// may try again on this node.
struct Dispatcher {
    service: Weak<dyn Leaderboard>,
    metrics: Arc<Metrics>,
    client: reqwest::Client,
    secret: Option<Arc<[u8]>>,
    token: String,
    busy: Mutex<HashSet<String>>,
    not_before: Mutex<HashMap<String, Instant>>,
    /// On cohort boards, the cohorts of a period posted so far (a retry goes on from
    /// there), by board and period.
    cohorts_posted: Mutex<HashMap<(String, String), u64>>,
    slots: tokio::sync::Semaphore,
}

/// Runs the dispatcher until the service is gone.
pub async fn run(service: Weak<dyn Leaderboard>, metrics: Arc<Metrics>, opts: WebhookOptions) {
    let client = match reqwest::Client::builder()
        .timeout(POST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("photofinish/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "cannot build the webhook client; no webhook will be posted");
            return;
        }
    };
    let mut token = [0u8; 16];
    if getrandom::fill(&mut token).is_err() {
        // Only distinguishes nodes' claims: the time does as well.
        token = u128::from(std::process::id()).to_le_bytes();
    }
    let d = Arc::new(Dispatcher {
        service,
        metrics,
        client,
        secret: opts.secret,
        token: hex(&token),
        busy: Mutex::new(HashSet::new()),
        not_before: Mutex::new(HashMap::new()),
        cohorts_posted: Mutex::new(HashMap::new()),
        slots: tokio::sync::Semaphore::new(MAX_POSTS_IN_FLIGHT),
    });
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(service) = d.service.upgrade() else {
            return;
        };
        match service.hooks().await {
            Ok(hooks) => d.clone().visit(&service, hooks).await,
            Err(e) => tracing::debug!(error = %e, "webhooks: cannot list boards"),
        }
    }
}

impl Dispatcher {
    /// One pass: starts the cursor of boards seen for the first time, and a post for each
    /// board that owes one and is not busy or waiting.
    async fn visit(self: Arc<Self>, service: &Arc<dyn Leaderboard>, hooks: Vec<HookState>) {
        let now = service.now_us();
        let mut pending = 0;
        let names: HashSet<&str> = hooks.iter().map(|h| h.board.as_str()).collect();
        lock(&self.not_before).retain(|b, _| names.contains(b.as_str()));
        for h in hooks {
            let cursor = match h.cursor_us {
                Some(c) => c,
                None => match start_cursor(&**service, &h.board, &h.config).await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(board = %h.board, error = %e, "webhook: cannot start its cursor");
                        continue;
                    }
                },
            };
            let owes = match owed(&h.config, cursor, now) {
                Ok(Owed::Until(_)) => continue,
                Ok(o) => o,
                Err(e) => {
                    tracing::warn!(board = %h.board, error = %e, "webhook: cannot place its period");
                    continue;
                }
            };
            pending += 1;
            let waiting = lock(&self.not_before)
                .get(&h.board)
                .is_some_and(|t| Instant::now() < *t);
            if waiting || !lock(&self.busy).insert(h.board.clone()) {
                continue;
            }
            let Ok(slot) = self.slots.try_acquire() else {
                lock(&self.busy).remove(&h.board);
                continue;
            };
            slot.forget();
            let d = self.clone();
            let service = service.clone();
            tokio::spawn(async move {
                d.settle(&service, &h, owes).await;
                lock(&d.busy).remove(&h.board);
                d.slots.add_permits(1);
            });
        }
        self.metrics.webhook_pending(pending);
    }

    /// Posts (or gives up) what the board owes, under a claim.
    async fn settle(&self, service: &Arc<dyn Leaderboard>, h: &HookState, owes: Owed) {
        let board = h.board.as_str();
        let (period, give_up) = match owes {
            Owed::Due(p) => (p, false),
            Owed::GiveUp(p) => (p, true),
            Owed::Until(_) => return,
        };
        if h.config.league.is_some() && !give_up && !league_closed(service, board, &period).await {
            // Its post carries the moves: it waits for the league's close (the closer's).
            return;
        }
        if !give_up && grants_pending(service, board, &period).await {
            // Its post carries the grants: it waits for the close step that makes them.
            return;
        }
        let claim = service.hook_claim(board, &self.token, period.end_us, CLAIM_HOLD, false);
        match claim.await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::debug!(board, error = %e, "webhook: cannot claim its post");
                return;
            }
        }
        let retained = PeriodWindow::new(&h.config)
            .and_then(|w| w.visible(service.now_us()))
            .is_ok_and(|v| period.start_us >= v.floor_us);
        if !retained {
            tracing::error!(board, period = %period.id, "webhook: the period left the board's retention before it was posted; given up");
            self.metrics.webhook_outcome("abandoned");
            self.advance(service, board, &period).await;
            return;
        }
        if give_up {
            tracing::error!(board, period = %period.id, "webhook: no 2xx for a day; this period's post is given up");
            self.metrics.webhook_outcome("abandoned");
            self.advance(service, board, &period).await;
            return;
        }
        let result = self.post(service, h, &period).await;
        match result {
            Ok(()) => {
                tracing::info!(board, period = %period.id, "webhook posted");
                self.metrics.webhook_outcome("delivered");
                self.advance(service, board, &period).await;
            }
            Err(why) => {
                let due = period.end_us.saturating_add(h.config.settings.grace_us());
                let wait = retry_after(service.now_us().saturating_sub(due));
                tracing::warn!(board, period = %period.id, error = %why, retry_in_s = wait.as_secs_f64(), "webhook post failed");
                self.metrics.webhook_outcome("failed");
                lock(&self.not_before).insert(board.to_owned(), Instant::now() + wait);
                let hold = service.hook_claim(board, &self.token, period.end_us, wait, true);
                if let Err(e) = hold.await {
                    tracing::debug!(board, error = %e, "webhook: cannot hold its claim for the wait");
                }
            }
        }
    }

    async fn advance(&self, service: &Arc<dyn Leaderboard>, board: &str, period: &Period) {
        if let Err(e) = service.hook_advance(board, period.end_us).await {
            // The period stays owed: posted again later (the receiver dedups by key).
            tracing::warn!(board, period = %period.id, error = %e, "webhook: cannot record the post");
        }
    }

    /// One attempt: the period's post (on a cohort board, one per cohort, each once per
    /// period on this node: a retry resumes at the cohort that failed); `Err` says why
    /// one did not get a 2xx.
    async fn post(
        &self,
        service: &Arc<dyn Leaderboard>,
        h: &HookState,
        period: &Period,
    ) -> Result<(), String> {
        let mut grants = period_grants(service, &h.board, period).await?;
        let Some(size) = h.config.cohort_size else {
            let top = (h.config.settings.webhook_top(), h.config.teams.is_some());
            let mut body = body(service, &h.board, top, period)
                .await
                .map_err(|e| format!("cannot read the period: {e}"))?;
            body.grants = grants.remove(&None).unwrap_or_default();
            let key = format!("{}/{}", h.board, period.id);
            return self.send(h, &key, &body).await;
        };
        let mut moves = all_moves(service, &h.board, period).await?;
        let progress_key = (h.board.clone(), period.id.clone());
        let mut done = lock(&self.cohorts_posted)
            .get(&progress_key)
            .copied()
            .unwrap_or(0);
        loop {
            let list = ReadCohorts {
                board: BoardName::parse(&h.board).map_err(|e| e.to_string())?,
                tier: None,
                offset: done,
                limit: COHORTS_PER_READ,
                options: ReadOptions {
                    period: PeriodRef::Id(period.id.clone()),
                    ..ReadOptions::default()
                },
            };
            let cohorts = match service.read(&list).await {
                Ok(l) => l.cohorts,
                Err(BoardError::PeriodNotFound(_)) => Vec::new(),
                Err(e) => return Err(format!("cannot read the period's cohorts: {e}")),
            };
            if cohorts.is_empty() {
                lock(&self.cohorts_posted).remove(&progress_key);
                return Ok(());
            }
            for (tier, cohort, _) in cohorts {
                let mut body =
                    cohort_body(service, h, period, size, tier, cohort, &mut moves).await?;
                body.grants = grants
                    .remove(&Some((body.tier.clone(), cohort)))
                    .unwrap_or_default();
                let key = match &body.tier {
                    Some(t) => format!("{}/{}/{t}/{cohort}", h.board, period.id),
                    None => format!("{}/{}/{cohort}", h.board, period.id),
                };
                self.send(h, &key, &body).await?;
                done += 1;
                lock(&self.cohorts_posted).insert(progress_key.clone(), done);
            }
        }
    }

    /// Posts one body under `Idempotency-Key: key`, signed.
    async fn send(&self, h: &HookState, key: &str, body: &impl Serialize) -> Result<(), String> {
        let Some(url) = h.config.settings.webhook.as_deref() else {
            return Err("the webhook was removed".into());
        };
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let mut req = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("Idempotency-Key", key);
        if let Some(secret) = &self.secret {
            req = req.header(SIGNATURE_HEADER, signature(secret, &body));
        }
        let mut resp = req.body(body).send().await.map_err(|e| e.to_string())?;
        let status = resp.status();
        // Read a little of the answer (so the connection may be reused), never more.
        let mut read = 0;
        while read < MAX_RESPONSE_BYTES {
            match resp.chunk().await {
                Ok(Some(c)) => read += c.len(),
                _ => break,
            }
        }
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the receiver answered {status}"))
        }
    }
}

/// Whether `period` of league board `board` is closed (its moves are final).
async fn league_closed(service: &Arc<dyn Leaderboard>, board: &str, period: &Period) -> bool {
    let Ok(board) = BoardName::parse(board) else {
        return false;
    };
    let op = ReadMoves {
        board,
        period: PeriodRef::Id(period.id.clone()),
        offset: 0,
        limit: 0,
    };
    match service.read(&op).await {
        Ok(m) => m.closed,
        // Nobody played in it: nothing to close.
        Err(BoardError::PeriodNotFound(_)) => true,
        Err(_) => false,
    }
}

/// Whether `period`'s close owes grants not yet made (docs/SPEC.md §16).
async fn grants_pending(service: &Arc<dyn Leaderboard>, board: &str, period: &Period) -> bool {
    let Ok(board) = BoardName::parse(board) else {
        return false;
    };
    let op = ReadPeriodRewards {
        board,
        period: PeriodRef::Id(period.id.clone()),
        offset: 0,
        limit: 0,
    };
    service.read(&op).await.is_ok_and(|r| r.pending)
}

#[cfg(test)]
mod tests {
    use super::signature;

    /// RFC 4231 test case 2.
    #[test]
    fn signs_as_hmac_sha256() {
        assert_eq!(
            signature(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
