//! The entry format (docs/redis-layout.md, "Entries"): one stream entry per group commit,
//! [`ENTRY_VERSION`], the number of commands, then per command a flag byte (bit 0: the
//! command's time is the node's stamp), the stamp in µs, the command's length and the
//! command as the embedded log encodes it; the names of import rankings; and how event ids
//! derive from entry numbers.

use photofinish_store::codec::Enc;
use photofinish_store::Command;

use super::{ReplicaError, MAX_GROUP_ENTRIES};

/// The version of the entries this build writes; a newer one is refused (the node must
/// be upgraded before it serves the board).
pub const ENTRY_VERSION: u8 = 2;

const STAMPED: u8 = 1;

/// One command of an entry, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Whether the command's time is the stamp.
    pub stamped: bool,
    /// The appending node's clock.
    pub stamp_us: i64,
    /// The command, as appended (unstamped).
    pub cmd: Command,
}

/// The payload of an entry holding `cmds` (each with whether its time is the stamp, and
/// the appending node's clock then), in order.
pub fn encode_group<'a>(cmds: impl ExactSizeIterator<Item = (&'a Command, bool, i64)>) -> Vec<u8> {
    let mut e = Enc::default();
    e.u8(ENTRY_VERSION);
    e.u32(u32::try_from(cmds.len()).unwrap_or(u32::MAX));
    let mut one = Enc::default();
    for (cmd, stamped, stamp_us) in cmds {
        e.u8(if stamped { STAMPED } else { 0 });
        e.i64(stamp_us);
        one.0.clear();
        cmd.encode(&mut one);
        e.u32(u32::try_from(one.0.len()).unwrap_or(u32::MAX));
        e.0.extend_from_slice(&one.0);
    }
    e.0
}

/// The payload of an entry holding `cmd` alone, appended at `stamp_us`.
pub fn encode_entry(cmd: &Command, stamped: bool, stamp_us: i64) -> Vec<u8> {
    encode_group(std::iter::once((cmd, stamped, stamp_us)))
}

/// Reads an entry's payload: its commands, in order.
pub fn decode_entry(payload: &[u8]) -> Result<Vec<Decoded>, ReplicaError> {
    let bad = |why: String| ReplicaError::Unreadable(why);
    let mut d = photofinish_store::codec::Dec::new(payload);
    let version = d.u8().map_err(|_| bad("empty entry".into()))?;
    if version > ENTRY_VERSION {
        return Err(ReplicaError::NewerFormat {
            what: "log entry",
            found: u32::from(version),
            known: u32::from(ENTRY_VERSION),
        });
    }
    if version != ENTRY_VERSION {
        return Err(bad(format!(
            "entry version {version}; this build reads {ENTRY_VERSION}"
        )));
    }
    let short = |_| bad("entry shorter than it says".into());
    let count = d.u32().map_err(short)?;
    let mut out = Vec::with_capacity(count.min(MAX_GROUP_ENTRIES as u32) as usize);
    for _ in 0..count {
        let stamped = d.u8().map_err(short)? & STAMPED != 0;
        let stamp_us = d.i64().map_err(short)?;
        let len = d.u32().map_err(short)? as usize;
        let cmd = Command::decode(d.take(len).map_err(short)?)
            .map_err(|e| bad(format!("entry command: {}", e.0)))?;
        out.push(Decoded {
            stamped,
            stamp_us,
            cmd,
        });
    }
    if !d.is_done() {
        return Err(bad("entry longer than its commands".into()));
    }
    Ok(out)
}

/// The name an import's command gives its ranking: import `id`, in `chunks` chunks.
pub fn import_file(id: u64, chunks: u64) -> String {
    format!("imp{id}.{chunks}")
}

/// The id and chunk count an import file name says ([`import_file`]).
pub fn parse_import_file(name: &str) -> Option<(u64, u64)> {
    let (id, chunks) = name.strip_prefix("imp")?.split_once('.')?;
    Some((id.parse().ok()?, chunks.parse().ok()?))
}

/// The effective time of a stamped entry (docs/SPEC.md §12, "Time"): the store's one rule.
pub use photofinish_store::command::effective_time;

/// Event ids are entry numbers shifted by this (docs/redis-layout.md, "Events"): the events
/// entry `n` emits are numbered from `n << EVENT_ID_SHIFT` + 1, so every node numbers them
/// alike. An entry holds at most 1,024 commands, each emitting at most a reset and a
/// batch's 1,000 events: below 2^20.
pub const EVENT_ID_SHIFT: u32 = 20;
