//! Every size limit of the HTTP API, named, with the reason beside it.

/// Largest request body: a full batch (1000 writes of a 128-byte member and 1 KiB of
/// metadata) is about 1.2 MiB; 2 MiB leaves room for JSON overhead and nothing more.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// Most writes in one batch (docs/SPEC.md §3).
pub const MAX_BATCH_ENTRIES: usize = 1000;
/// Largest page (docs/SPEC.md §3).
pub const MAX_PAGE_LIMIT: u64 = 1000;
/// Page size when `limit` is absent.
pub const DEFAULT_PAGE_LIMIT: u64 = 10;
/// Most rows on either side of an around window: 500 + 1 + 500 stays near a page's limit.
pub const MAX_AROUND_SIDE: u64 = 500;
/// Rows on each side of an around window when absent.
pub const DEFAULT_AROUND_SIDE: u64 = 5;

/// A comment on an idle event stream this often keeps proxies from closing it
/// (docs/SPEC.md §8).
pub const EVENTS_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);
/// Most member names in an event stream's `members=` filter.
pub const MAX_EVENT_FILTER_MEMBERS: usize = 1000;
/// Longest an idle event stream sleeps before looking at the clock again (a period's end
/// is computed from the clock, which may be moved).
pub const MAX_PERIOD_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Most event streams open at once: half the connection cap, so streams (which hold their
/// connection busy for as long as they last) never take every connection.
pub fn max_event_streams(max_connections: u64) -> usize {
    usize::try_from(max_connections / 2)
        .unwrap_or(usize::MAX)
        .max(1)
}
