//! Fresh reads' head reads, shared ([`BoardLog::fresh_head`]): a read that must see every
//! write acknowledged before it began needs the log's head as read after it began; the
//! reads waiting at the same time share one `HMGET`, sent in numbered rounds by a task of
//! their own, each round after a few passes of the runtime for the reads already at the
//! door (`crate::gather`).

use super::{BoardLog, Head, LogError};

/// Head reads shared by the reads waiting for one ([`BoardLog::fresh_head`]): rounds of
/// one `HMGET` each, numbered; a caller waits for a round sent after it asked.
#[derive(Debug)]
pub(super) struct HeadRounds {
    state: std::sync::Mutex<Rounds>,
    /// The newest round's number and answer.
    answer: tokio::sync::watch::Sender<(u64, Result<Head, LogError>)>,
}

/// Where the rounds stand.
#[derive(Debug)]
struct Rounds {
    /// The next round's number.
    next: u64,
    /// The highest round a caller waits for.
    wanted: u64,
    /// Whether a task is sending rounds.
    sending: bool,
    /// How many callers have asked so far (what `crate::gather` watches grow).
    asked: usize,
}

impl HeadRounds {
    /// No round sent yet; answers go out on `answer`.
    pub(super) fn new(answer: tokio::sync::watch::Sender<(u64, Result<Head, LogError>)>) -> Self {
        Self {
            state: std::sync::Mutex::new(Rounds {
                next: 1,
                wanted: 0,
                sending: false,
                asked: 0,
            }),
            answer,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Rounds> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl BoardLog {
    /// The last entry's number and check, from a read of the head sent after this call
    /// began (docs/SPEC.md §12, "Reads"), shared with the calls waiting at the same time:
    /// while one round trip is out, the calls that arrive wait for the next one, so
    /// concurrent reads of a board cost one `HMGET` a round trip, not one each, and a round
    /// waits a few passes of the runtime for the reads already at the door
    /// (`crate::gather`). The rounds run in a task of their own (a caller that goes away
    /// stops nothing).
    pub async fn fresh_head(&self) -> Result<Head, LogError> {
        let mut rx = self.heads.answer.subscribe();
        let (mine, lead) = {
            let mut st = self.heads.state();
            let mine = st.next;
            st.wanted = st.wanted.max(mine);
            st.asked = st.asked.wrapping_add(1);
            let lead = !st.sending;
            st.sending = true;
            (mine, lead)
        };
        if lead {
            let log = self.clone();
            tokio::spawn(async move {
                loop {
                    // Reads already at the door ask before this round's number is taken.
                    crate::gather::gather(|| log.heads.state().asked, usize::MAX).await;
                    let round = {
                        let mut st = log.heads.state();
                        let round = st.next;
                        st.next += 1;
                        round
                    };
                    let answer = log.head().await;
                    drop(log.heads.answer.send_replace((round, answer)));
                    let mut st = log.heads.state();
                    if st.wanted < st.next {
                        st.sending = false;
                        return;
                    }
                }
            });
        }
        loop {
            {
                let got = rx.borrow_and_update();
                if got.0 >= mine {
                    return got.1.clone();
                }
            }
            if rx.changed().await.is_err() {
                return self.head().await;
            }
        }
    }
}
