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
