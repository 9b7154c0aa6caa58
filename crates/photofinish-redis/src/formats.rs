//! A namespace's format (its format key, docs/redis-layout.md "Versions") and what a node
//! of this release writes at each. The log layout's first format, `log`, has its snapshots
//! in replica format 4 (the embedded store's `PFSNAP12`: fixed-width entries); `log-v2`
//! in format 5 (`PFSNAP13`: varint entries, a third smaller in Redis). A node reads both;
//! it writes the one its namespace is at, so nodes of the previous release, which read
//! only format 4, can run beside it until `photofinish upgrade` moves the namespace on.

use photofinish_store::snapshot::Format;

/// The format key's value in a namespace of the log layout's first format.
pub const LOG: &str = "log";

/// The format key's value once `photofinish upgrade` moved a `log` namespace on: snapshots
/// in format 5.
pub const LOG_V2: &str = "log-v2";

/// What a new namespace is marked as, and what `photofinish upgrade` moves one to.
pub const NEWEST: &str = LOG_V2;

/// How the format key of the log layout's later formats starts (`log-v2`, `log-v3`, …):
/// one this release does not know was written by a newer release.
pub const LATER: &str = "log-v";

/// The format key's value while an upgrade from the Lua data model is under way (or was
/// interrupted: run it again).
pub const CONVERTING: &str = "log-converting";

/// The snapshot format a replica publishes at the newest namespace format.
pub const SNAPSHOT_VERSION: u32 = 5;

/// The oldest snapshot format this release reads (the log layout's first).
pub const OLDEST_SNAPSHOT_VERSION: u32 = 4;

/// A namespace format of the log layout this release knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NsFormat {
    /// `log`.
    Log,
    /// `log-v2`.
    LogV2,
}

impl NsFormat {
    /// The format [`NEWEST`] names.
    pub const NEWEST: NsFormat = NsFormat::LogV2;

    /// The format a format key's value names, if this release knows it.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            LOG => Some(Self::Log),
            LOG_V2 => Some(Self::LogV2),
            _ => None,
        }
    }

    /// The snapshot format a node publishes at this namespace format, and the embedded
    /// store's encoding of it.
    pub fn snapshot(self) -> (u32, Format) {
        match self {
            Self::Log => (OLDEST_SNAPSHOT_VERSION, Format::V12),
            Self::LogV2 => (SNAPSHOT_VERSION, Format::V13),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_format_writes_the_newest_snapshot() {
        assert_eq!(NsFormat::parse(NEWEST), Some(NsFormat::NEWEST));
        assert_eq!(
            NsFormat::NEWEST.snapshot(),
            (SNAPSHOT_VERSION, Format::NEWEST)
        );
        assert_eq!(NsFormat::parse(LOG), Some(NsFormat::Log));
        assert_eq!(NsFormat::parse("log-v3"), None);
        assert!(NEWEST.starts_with(LATER) && !LOG.starts_with(LATER));
    }
}
