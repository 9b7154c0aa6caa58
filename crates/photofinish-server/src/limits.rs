//! Every size limit of the HTTP API and the RESP door, named, with the reason beside it.

/// Largest request body: a full batch (1000 writes of a 128-byte member and 1 KiB of
/// metadata) is about 1.2 MiB; 2 MiB leaves room for JSON overhead and nothing more.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// Most bytes of a body over [`MAX_BODY_BYTES`] read and thrown away before its 413, so
/// the client reads the answer instead of a reset (`input::read_body`): 8 MiB covers a
/// client's honest mistake (a body a few times too large); a larger one is cut.
pub const MAX_DISCARD_BYTES: usize = 8 * 1024 * 1024;
/// Longest the rest of a too-large body is read before its 413 is sent anyway.
pub const BODY_DISCARD_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// Most writes in one batch (docs/SPEC.md §3).
pub const MAX_BATCH_ENTRIES: usize = 1000;
/// Largest page (docs/SPEC.md §3).
pub const MAX_PAGE_LIMIT: u64 = 1000;
/// Page size when `limit` is absent.
pub const DEFAULT_PAGE_LIMIT: u64 = 10;
/// Boards in a page of `GET /v1/boards` when `limit` is absent: a screenful of a console's
/// list, where a page of entries is a top ten. (At most [`MAX_PAGE_LIMIT`], as every page.)
pub const DEFAULT_BOARDS_PAGE: u64 = 100;
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

/// RESP: most arguments in one command. The longest command, `LB.CREATE` with every
/// option, has 28; Redis allows a million, which only an attacker needs.
pub const RESP_MAX_ARGS: usize = 1024;
/// RESP: largest argument. Metadata is at most 1 KiB serialized and names 128 bytes, so
/// 64 KiB is room for any JSON spelling of them; Redis allows 512 MiB.
pub const RESP_MAX_BULK_BYTES: usize = 64 * 1024;
/// RESP: longest inline command line (Redis's own limit).
pub const RESP_MAX_INLINE_BYTES: usize = 64 * 1024;
/// RESP: most bytes one command may span while it is incomplete: past this the
/// connection is closed as a protocol error, so no client makes the server buffer more.
pub const RESP_MAX_COMMAND_BYTES: usize = 1024 * 1024;
/// RESP: most commands taken from the input in one round before answering (as many as
/// an HTTP batch holds); a longer pipeline is answered in several rounds.
pub const RESP_MAX_PIPELINE: usize = MAX_BATCH_ENTRIES;
/// RESP: replies held before they are written: a round whose answers grow past this
/// writes them out before running its next command, so output stays bounded even when
/// a pipeline asks for a thousand full pages.
pub const RESP_MAX_REPLY_BYTES: usize = 1024 * 1024;
/// RESP: bytes asked of the socket per read.
pub const RESP_READ_CHUNK: usize = 64 * 1024;
/// RESP: how long a client may take to read its answers before the connection is closed
/// (a client that never reads would otherwise hold its replies forever).
pub const RESP_WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
