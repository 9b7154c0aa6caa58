//! The namespace's format key (docs/redis-layout.md, "Versions"): whether a node of this
//! release may serve namespace `ns` — a format of the log layout it knows, or an empty
//! namespace (then marked as the newest) — and, when it may not, what to do: a format-1 or
//! format-2 namespace is upgraded, one mid-upgrade is resumed, one at a later release's
//! format needs that release.

use photofinish_core::BoardError;

use super::get;
use crate::conn::Conn;
use crate::formats::{NsFormat, CONVERTING, LATER, NEWEST};
use crate::layout;
use crate::log::LogKeys;

/// The refusal of a namespace in data format 1 (written before format 2: no format key,
/// boards whose keys are not the log layout's), which this release cannot read.
pub(super) fn format_1(ns: &str) -> BoardError {
    BoardError::Unavailable(format!(
        "redis namespace {ns:?} holds boards of data format 1 (written before format 2 of the \
         Redis layout), which this Photofinish cannot convert: upgrade it to format 2 with the \
         last release that has it (commit 4b01e0d: `photofinish redis-upgrade`), then run \
         `photofinish upgrade` of this one"
    ))
}

/// Whether namespace `ns` may be served by the log layout: an empty one is marked as at
/// the newest format; one in format 1 or 2, or mid-upgrade, is refused with what to do.
pub async fn check_log_format(conn: &Conn, ns: &str) -> Result<(), BoardError> {
    let format_key = layout::format_key(ns);
    let found: Option<String> = get(conn, redis::cmd("GET").arg(&format_key)).await?;
    let hint = format!(
        "stop every Photofinish server on it, then run `photofinish upgrade --storage \
         <url> --redis-namespace {ns}`"
    );
    match found.as_deref() {
        Some(NEWEST) => Ok(()),
        Some(older) if NsFormat::parse(older).is_some() => {
            // Served as it is: this node writes what the previous release reads.
            tracing::warn!(
                namespace = ns,
                format = older,
                "the redis namespace is at an older format; once every node runs this \
                 release, `photofinish upgrade` moves it to {NEWEST} (smaller snapshots)"
            );
            Ok(())
        }
        Some(CONVERTING) => Err(BoardError::Unavailable(format!(
            "redis namespace {ns:?} is being converted to the log layout, or its conversion \
             was interrupted: {hint}"
        ))),
        Some(other) if other.starts_with(LATER) => Err(BoardError::Unavailable(format!(
            "redis namespace {ns:?} is at format {other}, newer than this node writes \
             ({NEWEST}): `photofinish upgrade` moved it on once its nodes ran a newer \
             release; upgrade this node"
        ))),
        Some(other) => Err(BoardError::Unavailable(format!(
            "redis namespace {ns:?} holds data format {other} (the Lua data model); the log \
             layout reads its own: {hint}"
        ))),
        None => {
            let boards: Vec<String> = get(
                conn,
                redis::cmd("SRANDMEMBER")
                    .arg(layout::registry_key(ns))
                    .arg(1),
            )
            .await?;
            if let Some(b) = boards.first() {
                // A namespace the log layout wrote before it marked its format.
                let head: bool =
                    get(conn, redis::cmd("EXISTS").arg(LogKeys::new(ns, b).head)).await?;
                if !head {
                    return Err(format_1(ns));
                }
            }
            let _: () = get(conn, redis::cmd("SET").arg(&format_key).arg(NEWEST)).await?;
            Ok(())
        }
    }
}
