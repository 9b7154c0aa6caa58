//! Rate limits (docs/SPEC.md §7): rates as operators write them — `N/s` or `N/min`, with a
//! burst of one second's worth (at least 1) unless `,burst=B` says otherwise — and the
//! [`Limiter`] that holds each caller to its rate with token buckets (`governor`): an API
//! key to its `--rate`, a player to `--player-rate`, an anonymous client address to
//! `--anonymous-rate` (only on a server with credentials; an open server has no limits).
//! Over a limit is `rate_limited` with the whole seconds until a request would pass.
//! A player's bucket is dropped when the member is erased (docs/SPEC.md §16:
//! [`Limiter::forget_player`]), so no state under its name outlives the erase here.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::nanos::Nanos;
use governor::state::keyed::{DashMapStateStore, ShrinkableKeyedStateStore};
use governor::state::StateStore;
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};
use photofinish_core::access::Caller;
use photofinish_core::BoardError;

/// A rate: so many requests per period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    /// Requests per period.
    pub count: u32,
    /// The period, in seconds (1 or 60).
    pub per_seconds: u32,
    /// A burst other than one second's worth.
    pub burst: Option<u32>,
}

/// Players' rate unless `--player-rate` says otherwise (docs/SPEC.md §7).
pub const DEFAULT_PLAYER_RATE: Rate = Rate {
    count: 10,
    per_seconds: 1,
    burst: Some(20),
};
/// Anonymous addresses' rate unless `--anonymous-rate` says otherwise (docs/SPEC.md §7).
pub const DEFAULT_ANONYMOUS_RATE: Rate = Rate {
    count: 100,
    per_seconds: 1,
    burst: None,
};
/// How often the per-player and per-address buckets that are full again are dropped, so
/// their memory follows the callers of the last minute.
pub const FORGET_INTERVAL: Duration = Duration::from_secs(60);

/// Largest count a rate may name: beyond this a limit limits nothing.
const MAX_COUNT: u32 = 1_000_000_000;

impl Rate {
    /// Parses `N/s` or `N/min` (N ≥ 1), optionally followed by `,burst=B` (B ≥ 1).
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || {
            format!("rate {s:?} must be N/s or N/min with N from 1 to {MAX_COUNT}, optionally followed by ,burst=B")
        };
        let (rate, burst) = match s.trim().split_once(',') {
            None => (s.trim(), None),
            Some((rate, burst)) => {
                let b: u32 = burst
                    .trim()
                    .strip_prefix("burst=")
                    .and_then(|b| b.trim().parse().ok())
                    .filter(|b| (1..=MAX_COUNT).contains(b))
                    .ok_or_else(bad)?;
                (rate, Some(b))
            }
        };
        let (n, unit) = rate.split_once('/').ok_or_else(bad)?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        let per_seconds = match unit.trim() {
            "s" | "sec" => 1,
            "min" | "m" => 60,
            _ => return Err(bad()),
        };
        if count == 0 || count > MAX_COUNT {
            return Err(bad());
        }
        Ok(Self {
            count,
            per_seconds,
            burst,
        })
    }

    /// The burst: as given, else one second's worth, at least 1.
    pub fn burst(&self) -> u32 {
        self.burst.unwrap_or((self.count / self.per_seconds).max(1))
    }

    /// The token bucket of this rate.
    fn quota(&self) -> Quota {
        let per_cell = Duration::from_secs(u64::from(self.per_seconds)) / self.count;
        let burst = NonZeroU32::new(self.burst()).unwrap_or(NonZeroU32::MIN);
        Quota::with_period(per_cell.max(Duration::from_nanos(1)))
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MAX))
            .allow_burst(burst)
    }
}

/// The players' buckets by member name: `governor`'s own store, shared, so one member's
/// bucket can be dropped (a keyed limiter has no call for that).
#[derive(Clone, Default)]
struct PlayerBuckets(Arc<DashMapStateStore<String>>);

impl StateStore for PlayerBuckets {
    type Key = String;

    fn measure_and_replace<T, F, E>(&self, key: &String, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        self.0.measure_and_replace(key, f)
    }
}

impl ShrinkableKeyedStateStore<String> for PlayerBuckets {
    fn retain_recent(&self, drop_below: Nanos) {
        self.0.retain_recent(drop_below);
    }

    fn shrink_to_fit(&self) {
        self.0.shrink_to_fit();
    }

    fn len(&self) -> usize {
        ShrinkableKeyedStateStore::len(&*self.0)
    }

    fn is_empty(&self) -> bool {
        ShrinkableKeyedStateStore::is_empty(&*self.0)
    }
}

/// Holds every caller to its rate. See the module docs.
pub struct Limiter {
    /// Per API key name: its rate (rebuilt when a reloaded keys file changes it) and bucket.
    keys: RwLock<HashMap<String, (Rate, Arc<DefaultDirectRateLimiter>)>>,
    players: RateLimiter<String, PlayerBuckets, DefaultClock>,
    /// The same store as `players`'.
    player_buckets: PlayerBuckets,
    anonymous: DefaultKeyedRateLimiter<IpAddr>,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter").finish_non_exhaustive()
    }
}

fn refusal(what: String, wait: Duration) -> BoardError {
    BoardError::RateLimited {
        what,
        retry_after_s: (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1),
    }
}

impl Limiter {
    /// Players held to `player`, anonymous addresses to `anonymous`.
    pub fn new(player: Rate, anonymous: Rate) -> Self {
        let player_buckets = PlayerBuckets::default();
        Self {
            keys: RwLock::new(HashMap::new()),
            players: RateLimiter::new(
                player.quota(),
                player_buckets.clone(),
                DefaultClock::default(),
            ),
            player_buckets,
            anonymous: RateLimiter::keyed(anonymous.quota()),
        }
    }

    /// Takes one request from the caller's bucket; `rate` is an API key's own, `peer` the
    /// client's address. `rate_limited` when the bucket is empty.
    pub fn check(
        &self,
        caller: &Caller,
        rate: Option<Rate>,
        peer: Option<IpAddr>,
    ) -> Result<(), BoardError> {
        let now = DefaultClock::default().now();
        match caller {
            Caller::Open => Ok(()),
            Caller::Key(grant) => {
                let Some(rate) = rate else { return Ok(()) };
                self.key_bucket(&grant.name, rate).check().map_err(|n| {
                    refusal(
                        format!("API key {:?} is over {rate}", grant.name),
                        n.wait_time_from(now),
                    )
                })
            }
            Caller::Player { member, .. } => self.players.check_key(member).map_err(|n| {
                refusal(
                    format!("player {member:?} is over the player rate"),
                    n.wait_time_from(now),
                )
            }),
            Caller::Anonymous => match peer {
                Some(ip) => self.anonymous.check_key(&ip).map_err(|n| {
                    refusal(
                        format!("address {ip} is over the anonymous rate"),
                        n.wait_time_from(now),
                    )
                }),
                None => Ok(()),
            },
        }
    }

    fn key_bucket(&self, name: &str, rate: Rate) -> Arc<DefaultDirectRateLimiter> {
        if let Some((r, b)) = self
            .keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
        {
            if *r == rate {
                return b.clone();
            }
        }
        let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
        let entry = keys
            .entry(name.to_owned())
            .or_insert_with(|| (rate, Arc::new(RateLimiter::direct(rate.quota()))));
        if entry.0 != rate {
            *entry = (rate, Arc::new(RateLimiter::direct(rate.quota())));
        }
        entry.1.clone()
    }

    /// Drops `member`'s player bucket (an erase, docs/SPEC.md §16): its next request
    /// starts a full bucket, as a new member's does.
    pub fn forget_player(&self, member: &str) {
        self.player_buckets.0.remove(member);
    }

    /// Drops the player and address buckets that are full again (nothing to remember).
    pub fn forget_idle(&self) {
        self.players.retain_recent();
        self.players.shrink_to_fit();
        self.anonymous.retain_recent();
        self.anonymous.shrink_to_fit();
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = if self.per_seconds == 1 { "s" } else { "min" };
        write!(f, "{}/{unit}", self.count)?;
        match self.burst {
            Some(b) => write!(f, ",burst={b}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(
            Rate::parse("10/s"),
            Ok(Rate {
                count: 10,
                per_seconds: 1,
                burst: None,
            })
        );
        assert_eq!(Rate::parse("10/s,burst=20"), Ok(DEFAULT_PLAYER_RATE));
        assert_eq!(
            Rate::parse("10/s,burst=20").map(|r| r.to_string()),
            Ok("10/s,burst=20".into())
        );
        assert_eq!(Rate::parse("30/min").map(|r| r.burst()), Ok(1));
        assert_eq!(Rate::parse("600/min").map(|r| r.burst()), Ok(10));
        assert_eq!(
            Rate::parse("100/s").map(|r| r.to_string()),
            Ok("100/s".into())
        );
        for bad in [
            "",
            "10",
            "0/s",
            "-1/s",
            "10/h",
            "x/s",
            "99999999999/s",
            "1/s,burst=0",
            "1/s,b=2",
        ] {
            assert!(Rate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn buckets_refuse_past_the_burst_and_say_when() {
        let limiter = Limiter::new(
            Rate::parse("1/min,burst=2").expect("rate"),
            DEFAULT_ANONYMOUS_RATE,
        );
        let player = Caller::Player {
            member: "p".into(),
            partition: None,
            team: None,
        };
        assert!(limiter.check(&player, None, None).is_ok());
        assert!(limiter.check(&player, None, None).is_ok());
        match limiter.check(&player, None, None) {
            Err(BoardError::RateLimited { retry_after_s, .. }) => {
                assert!((1..=60).contains(&retry_after_s), "{retry_after_s}")
            }
            other => panic!("{other:?}"),
        }
        // Another player has a bucket of its own; an open server has none.
        let other = Caller::Player {
            member: "q".into(),
            partition: None,
            team: None,
        };
        assert!(limiter.check(&other, None, None).is_ok());
        for _ in 0..1000 {
            assert!(limiter.check(&Caller::Open, None, None).is_ok());
        }
    }
}
