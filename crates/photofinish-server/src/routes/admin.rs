//! `GET /v1/admin/backup` (docs/SPEC.md §11, docs/backup.md): a consistent snapshot of every
//! board streamed while writes go on. The service builds it on a blocking thread and writes
//! it through a bounded channel, so memory on the way out stays at a few chunks; an error
//! before the first byte (a backend without backups, a damaged log) is an ordinary error
//! answer, one after it cuts the download short (the file's checksum then fails to verify).

use std::io::Write;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use photofinish_core::error::Refuses;
use photofinish_core::{BoardError, ErrorCode};
use tokio::sync::mpsc;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::Auth;

/// Bytes per chunk of a backup on its way out.
pub const BACKUP_CHUNK_BYTES: usize = 256 * 1024;
/// Chunks a backup may have on its way out at once.
const BACKUP_CHUNKS_QUEUED: usize = 8;

/// Sends what the snapshot writer writes as chunks down the channel.
struct ChannelWriter {
    buf: Vec<u8>,
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
}

impl ChannelWriter {
    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(BACKUP_CHUNK_BYTES));
        self.tx
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| std::io::Error::other("the client went away"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= BACKUP_CHUNK_BYTES {
            self.send()?;
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// A backup (docs/SPEC.md §11): what it may be refused with.
pub struct Backup;

impl Refuses for Backup {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::NotSupported];
}

/// A consistent snapshot of every board, made while writes go on.
#[utoipa::path(get, path = "/v1/admin/backup", tag = "ops",
    description = "A snapshot file (docs/format.md) of every board at one log position, named in its header (bytes 8..16, little-endian), made while writes go on. `photofinish restore FILE --data-dir DIR` makes a data directory of it. Needs an admin key for every board (`--board '*'`). Embedded store only: 501 `not_supported` on Redis, whose own persistence (RDB/AOF) is the backup.",
    responses(
        (status = 200, description = "The snapshot file", content_type = "application/octet-stream"),
        Refusals<Backup>))]
pub async fn get_backup(State(app): State<AppState>, Auth(id): Auth) -> Result<Response, ApiError> {
    let backup = app.gate.backup(&id.caller).await?;
    let (tx, mut rx) = mpsc::channel(BACKUP_CHUNKS_QUEUED);
    let task = tokio::task::spawn_blocking(move || {
        let mut w = ChannelWriter {
            buf: Vec::with_capacity(BACKUP_CHUNK_BYTES),
            tx,
        };
        let done = backup.write_to(&mut w).and_then(|lsn| {
            w.flush()
                .map_err(|e| BoardError::Unavailable(format!("backup: {e}")))?;
            Ok(lsn)
        });
        match &done {
            Ok(lsn) => tracing::info!(lsn, "backup streamed"),
            // The body ends in an error, so the client sees the download fail.
            Err(e) => drop(w.tx.blocking_send(Err(std::io::Error::other(e.to_string())))),
        }
        done
    });
    // The first chunk; an error before any is an error answer.
    let first = match rx.recv().await {
        Some(Ok(chunk)) => Some(Ok(chunk)),
        _ => {
            let failed = match task.await {
                Ok(Err(e)) => e,
                Ok(Ok(_)) => BoardError::Unavailable("backup: an empty snapshot".into()),
                Err(e) => BoardError::Unavailable(format!("backup: {e}")),
            };
            return Err(failed.into());
        }
    };
    let stream = futures_util::stream::unfold((first, rx), |(next, mut rx)| async move {
        let item = next?;
        let following = rx.recv().await;
        Some((item, (following, rx)))
    });
    Ok((
        [
            (CONTENT_TYPE, "application/octet-stream"),
            (
                CONTENT_DISPOSITION,
                "attachment; filename=\"photofinish.backup\"",
            ),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}
