//! Gathering callers for one round trip to Redis. A group commit's append
//! (`replica/commit.rs`) and a head read shared by fresh reads ([`crate::log::BoardLog`]'s
//! `fresh_head`) each cost Redis, and the node, far more per call than per caller: a
//! wake-up, a socket read and write, an AOF write, a script's start (docs/bench-history.md
//! §44). So before one is sent, the task that sends it lets the runtime run a few passes
//! while callers keep arriving: the requests already read from their sockets, or readable,
//! join this round trip rather than wait a whole one for the next. A caller alone costs
//! one pass.

/// Most passes of the runtime a round trip waits for more callers. Four against none: the
/// node's and Redis's CPU a write 0.91× unpipelined, its rate 1.15×; sixteen cost more
/// than they gathered (docs/bench-history.md §44).
pub(crate) const PASSES: usize = 4;

/// Yields to the runtime while `waiting()` — a count of the callers, or their commands,
/// for the round trip: all that matters is that it grows as they come — grows and stays
/// below `enough`, at most [`PASSES`] times. Returns at once when `enough` already wait.
pub(crate) async fn gather(mut waiting: impl FnMut() -> usize, enough: usize) {
    let mut seen = waiting();
    for _ in 0..PASSES {
        if seen >= enough {
            return;
        }
        tokio::task::yield_now().await;
        let now = waiting();
        if now == seen {
            return;
        }
        seen = now;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::{gather, PASSES};

    /// Runs `gather` on one thread beside a task that adds a caller each time it runs,
    /// `arrivals` times; answers how many times `gather` looked and how many had arrived.
    fn run(arrivals: usize, enough: usize) -> (usize, usize) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let queued = Arc::new(AtomicUsize::new(1));
            let q = queued.clone();
            tokio::spawn(async move {
                for _ in 0..arrivals {
                    q.fetch_add(1, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                }
            });
            let mut looks = 0;
            gather(
                || {
                    looks += 1;
                    queued.load(Ordering::SeqCst)
                },
                enough,
            )
            .await;
            (looks, queued.load(Ordering::SeqCst))
        })
    }

    #[test]
    fn a_caller_alone_waits_one_pass() {
        assert_eq!(run(0, usize::MAX), (2, 1));
    }

    #[test]
    fn callers_that_keep_arriving_are_waited_for_at_most_the_passes() {
        let (looks, arrived) = run(100, usize::MAX);
        assert_eq!(looks, PASSES + 1);
        assert!(arrived > 1 && arrived < 100, "{arrived} arrived");
    }

    #[test]
    fn callers_stop_arriving_and_the_wait_ends() {
        // Two passes bring one caller each, the third brings none: four looks, fewer than
        // the passes allow.
        assert_eq!(run(2, usize::MAX), (4, 3));
    }

    #[test]
    fn enough_waiting_goes_at_once() {
        assert_eq!(run(100, 1), (1, 1));
    }

    #[test]
    fn the_wait_ends_when_enough_have_arrived() {
        // One caller a pass: the third look sees three, enough.
        assert_eq!(run(100, 3), (3, 3));
    }
}
