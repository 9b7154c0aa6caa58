//! The erasure ledger's file (docs/SPEC.md §16, docs/privacy.md): one JSON line a member
//! erased everywhere, `{"hmac": …, "erased_at": …}`, the member named only by its HMAC
//! under the erasure key. The state keeps the ledger too (the store's `Erased` record);
//! the file is its copy kept apart from the data (`--erasure-ledger`, by default beside
//! the data dir) so that an older backup, restored, does not bring an erased member back:
//! [`reapply`] — run by `photofinish restore` and at every start-up — erases again each
//! member the file names and the state does not, and writes into the file what the state
//! holds and the file lacks.
//!
//! An erase appends its line before it touches a board, so a crash half-way through
//! leaves a line the state lacks, and the next start-up finishes the erase. The state
//! enters an erase only once it has reached every board.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use photofinish_core::idempotency::IdempotencyKey;
use photofinish_core::op::{Erase, LoggedOp};
use photofinish_core::transfer::{ImportRow, ImportSource};
use photofinish_core::{BoardError, Leaderboard, MemberName};

/// `member`'s name as the audit log and the erasure ledger hold it: HMAC-SHA-256 under
/// `key`, hex.
pub fn member_hmac(key: &[u8], member: &str) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(member.as_bytes());
    photofinish_store::hex::encode(&mac.finalize().into_bytes())
}

/// The actor a start-up's or a restore's erase is audited as.
pub const LEDGER_ACTOR: &str = "erasure-ledger";

/// The file beside data dir `data_dir` when `--erasure-ledger` names none: its name with
/// `.erasure-ledger` after it (`/var/lib/pf/data` → `/var/lib/pf/data.erasure-ledger`),
/// outside the directory a backup of the data copies.
pub fn default_path(data_dir: &Path) -> PathBuf {
    let mut name = data_dir
        .file_name()
        .map_or_else(|| "data".into(), ToOwned::to_owned);
    name.push(".erasure-ledger");
    data_dir.with_file_name(name)
}

fn unavailable(path: &Path, what: &str, e: impl std::fmt::Display) -> BoardError {
    BoardError::Unavailable(format!("erasure ledger {}: {what}: {e}", path.display()))
}

/// One line of the file, but for its HMAC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// When the member was erased, µs.
    pub at_us: i64,
    /// Which erasure key the HMAC is under ([`key_id`]).
    pub key: String,
}

/// The erasure key `key`'s public name, as each line carries it (16 hex digits of an HMAC
/// of a text no member name can be): a start-up or a restore under another key refuses
/// the lines rather than finding nobody under them.
pub fn key_id(key: &[u8; 32]) -> String {
    member_hmac(key, "\0photofinish erasure key")[..16].to_owned()
}

/// The entries of the file at `path` (none when there is no file), by HMAC: the first
/// line's when an HMAC is there twice. A last line cut short (a crash while it was
/// written) is passed over; any other line that is not an entry is an error, never a
/// guess.
pub fn read(path: &Path) -> Result<BTreeMap<String, Line>, BoardError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(unavailable(path, "cannot read it", e)),
    };
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        let torn = i + 1 == lines.len();
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Some((hmac, entry)) => {
                out.entry(hmac).or_insert(entry);
            }
            None if torn => {}
            None => {
                let e = format!("line {} is not an entry: {line:?}", i + 1);
                return Err(unavailable(path, "unreadable", e));
            }
        }
    }
    Ok(out)
}

/// An entry's HMAC (64 hex digits) and the rest, from its line.
fn parse_line(line: &str) -> Option<(String, Line)> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
    let hmac = v.get("hmac")?.as_str().filter(|h| hex(h, 64))?;
    let key = v.get("key")?.as_str().filter(|k| hex(k, 16))?;
    let at: jiff::Timestamp = v.get("erased_at")?.as_str()?.parse().ok()?;
    let line = Line {
        at_us: at.as_microsecond(),
        key: key.to_ascii_lowercase(),
    };
    Some((hmac.to_ascii_lowercase(), line))
}

/// Appends `entries` (HMAC, instant), under the key named `key` ([`key_id`]), to the file
/// at `path` (made, readable by its owner alone, when absent) in one write, and syncs it;
/// a last line cut short is cut off first.
pub fn append(path: &Path, key: &str, entries: &[(String, i64)]) -> Result<(), BoardError> {
    if entries.is_empty() {
        return Ok(());
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .map_err(|e| unavailable(path, "cannot open it", e))?;
    // A last line cut short by a crash goes: the new lines start on a line of their own.
    let mut held = Vec::new();
    file.read_to_end(&mut held)
        .map_err(|e| unavailable(path, "cannot read it", e))?;
    if held.last().is_some_and(|&b| b != b'\n') {
        let keep = held.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        file.set_len(keep as u64)
            .map_err(|e| unavailable(path, "cannot cut its torn line", e))?;
    }
    let mut text = String::new();
    for (hmac, at_us) in entries {
        let at = crate::wire::parse::rfc3339_us(*at_us);
        let line = serde_json::json!({"hmac": hmac, "erased_at": at, "key": key});
        text.push_str(&line.to_string());
        text.push('\n');
    }
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| unavailable(path, "cannot write it", e))
}

/// What an erase of one member everywhere took: boards that held something of it, and
/// the rows they held ([`photofinish_core::Board::erase`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Erased {
    /// Boards that held something of the member.
    pub boards: u64,
    /// Rows they held, all told.
    pub rows: u64,
}

/// Erases `member` (named `hmac` in the trail) from every board at once, audited as
/// `actor`'s, then enters it in the state's ledger with the request's idempotency `key`
/// and its answer: the one erase a request and a ledger applied again both make.
pub async fn erase_named(
    service: &dyn Leaderboard,
    member: &MemberName,
    hmac: &str,
    actor: &str,
    key: Option<&IdempotencyKey>,
) -> Result<Erased, BoardError> {
    let op = Erase::new(member.clone(), hmac.to_owned());
    let answers = service
        .change_everywhere(LoggedOp::new(Box::new(op)), actor)
        .await?;
    let mut out = Erased::default();
    for rows in answers.into_iter().filter_map(|(_, v)| Erase::rows(v)) {
        out.boards += u64::from(rows > 0);
        out.rows += rows;
    }
    let key = key.map(|k| (k, out.boards));
    service.record_erased(hmac, Some(member), key).await?;
    Ok(out)
}

/// What [`reapply`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reapplied {
    /// Entries in the file.
    pub entries: usize,
    /// Of those, the ones the state lacked: applied again.
    pub applied: usize,
    /// Members found under them and erased again.
    pub members: usize,
    /// What those erases took.
    pub dropped: Erased,
    /// Entries the state held and the file lacked, written into it.
    pub filed: usize,
}

/// Applies the ledger file at `path` to `service` (see the module docs): each entry the
/// state lacks is erased again — every name on any board whose HMAC it is under the
/// erasure key (`key_file`'s, or the backend's) — and entered; then the state's entries
/// the file lacks are appended to it.
pub async fn reapply(
    service: &dyn Leaderboard,
    key_file: Option<&Path>,
    path: &Path,
) -> Result<Reapplied, BoardError> {
    let file = read(path)?;
    let held: BTreeMap<String, i64> = service.erasure_ledger().await?.into_iter().collect();
    let pending: BTreeSet<&String> = file.keys().filter(|h| !held.contains_key(*h)).collect();
    let unfiled: Vec<(String, i64)> = held
        .into_iter()
        .filter(|(h, _)| !file.contains_key(h))
        .collect();
    let mut out = Reapplied {
        entries: file.len(),
        applied: pending.len(),
        ..Reapplied::default()
    };
    if pending.is_empty() && unfiled.is_empty() {
        return Ok(out);
    }
    let key = &service.erasure_key(key_file).await?;
    let id = key_id(key);
    if let Some((_, other)) = file
        .iter()
        .find(|(h, l)| pending.contains(h) && l.key != id)
    {
        return Err(BoardError::Unavailable(format!(
            "erasure ledger {}: entries written under erasure key {}, and this server's is \
             {id}: give --erasure-key-file with the key they were written under",
            path.display(),
            other.key
        )));
    }
    if !pending.is_empty() {
        let found = service
            .names_where(&|m| pending.contains(&member_hmac(key, m)))
            .await?;
        let mut named = BTreeSet::new();
        for name in found {
            let hmac = member_hmac(key, &name);
            let member = MemberName::parse(name)?;
            let e = erase_named(service, &member, &hmac, LEDGER_ACTOR, None).await?;
            out.members += 1;
            out.dropped.boards += e.boards;
            out.dropped.rows += e.rows;
            named.insert(hmac);
        }
        for hmac in pending.iter().filter(|h| !named.contains(**h)) {
            service.record_erased(hmac, None, None).await?;
        }
    }
    out.filed = unfiled.len();
    append(path, &id, &unfiled)?;
    Ok(out)
}

/// An import's rows with those of an erased member written before its erase dropped
/// (docs/SPEC.md §16): a row whose member's HMAC the ledger holds and whose `reached_at`
/// (`now_us` when it has none) is before the erase. A row after it is a new member's.
pub struct DropErased<'a> {
    inner: &'a mut dyn ImportSource,
    key: [u8; 32],
    ledger: BTreeMap<String, i64>,
    now_us: i64,
    /// Rows dropped so far.
    pub dropped: u64,
}

impl<'a> DropErased<'a> {
    /// `inner`'s rows checked against `ledger` (HMAC → erased at) under `key`.
    pub fn new(
        inner: &'a mut dyn ImportSource,
        key: [u8; 32],
        ledger: BTreeMap<String, i64>,
        now_us: i64,
    ) -> Self {
        Self {
            inner,
            key,
            ledger,
            now_us,
            dropped: 0,
        }
    }
}

#[async_trait::async_trait]
impl ImportSource for DropErased<'_> {
    async fn next_chunk(&mut self) -> Result<Option<Vec<ImportRow>>, BoardError> {
        let Some(mut rows) = self.inner.next_chunk().await? else {
            return Ok(None);
        };
        let before = rows.len();
        rows.retain(|row| {
            let erased_at = self.ledger.get(&member_hmac(&self.key, &row.member));
            erased_at.is_none_or(|at| row.reached_at_us.unwrap_or(self.now_us) >= *at)
        });
        self.dropped += (before - rows.len()) as u64;
        Ok(Some(rows))
    }
}

/// Whether a restore may apply the ledger file at `path` with key file `key_file`:
/// asked before the backup is restored, so a refusal makes nothing. A restored dir holds
/// no key (a backup never does), so a ledger with entries needs the key it was written
/// under — a new one would name nobody.
pub fn check_restore_key(path: &Path, key_file: Option<&Path>) -> Result<(), BoardError> {
    if let Some(file) = key_file.filter(|f| !f.exists()) {
        return Err(BoardError::Unavailable(format!(
            "erasure key file {}: there is none (a restore never makes one)",
            file.display()
        )));
    }
    if key_file.is_none() && !read(path)?.is_empty() {
        return Err(BoardError::Unavailable(format!(
            "the erasure ledger {} names members by their HMAC under the erasure key: give \
             --erasure-key-file (the old data dir's erasure.key, or the server's key file)",
            path.display()
        )));
    }
    Ok(())
}

/// `photofinish restore`'s last step: the ledger file at `path` applied ([`reapply`]) to
/// the embedded data just restored into `data_dir`, opened for it and closed after. The
/// erasure key is `key_file`'s, copied into the data dir, where the server finds it by
/// default; the caller asked [`check_restore_key`] before restoring.
pub async fn reapply_in_dir(
    data_dir: &Path,
    key_file: Option<&Path>,
    path: &Path,
) -> Result<Reapplied, BoardError> {
    if let Some(file) = key_file {
        let key = photofinish_store::erasure::key_in_file(file)?;
        let beside = data_dir.join(photofinish_store::erasure::KEY_FILE);
        photofinish_store::erasure::put_key(&beside, &key)
            .map_err(|e| unavailable(&beside, "cannot copy the erasure key there", e))?;
    }
    let opts = photofinish_store::StoreOptions::new(data_dir);
    let storage = std::sync::Arc::new(photofinish_store::io::RealStorage);
    let clock = Box::new(photofinish_core::clock::SystemClock);
    let store =
        tokio::task::spawn_blocking(move || photofinish_store::Store::open(storage, opts, clock))
            .await
            .map_err(|e| BoardError::Unavailable(e.to_string()))?
            .map_err(|e| BoardError::Unavailable(e.to_string()))?;
    let store = std::sync::Arc::new(store);
    let out = reapply(&*store, None, path).await;
    tokio::task::spawn_blocking(move || store.shutdown())
        .await
        .map_err(|e| BoardError::Unavailable(e.to_string()))?;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_sits_beside_the_data_dir() {
        assert_eq!(
            default_path(Path::new("/var/lib/pf/data")),
            PathBuf::from("/var/lib/pf/data.erasure-ledger")
        );
        assert_eq!(
            default_path(Path::new("data/")),
            PathBuf::from("data.erasure-ledger")
        );
    }

    #[test]
    fn lines_round_trip_and_a_torn_last_line_is_passed_over() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("ledger");
        assert!(read(&path).expect("no file").is_empty());
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let k = key_id(&[7; 32]);
        append(&path, &k, &[(a.clone(), 1_000_000)]).expect("append");
        // A crash while the next line was written.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        f.write_all(b"{\"hmac\":\"bbb").expect("torn");
        assert_eq!(read(&path).expect("read").len(), 1);
        append(&path, &k, &[(b.clone(), 2_000_000), (a.clone(), 9)]).expect("append");
        let all = read(&path).expect("read");
        let line = |at_us| Line {
            at_us,
            key: k.clone(),
        };
        assert_eq!(
            all,
            BTreeMap::from([(a, line(1_000_000)), (b, line(2_000_000))])
        );
        let text = std::fs::read_to_string(&path).expect("text");
        assert_eq!(text.lines().count(), 3, "the torn line is gone: {text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_line_that_is_no_entry_is_an_error() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("ledger");
        std::fs::write(&path, "{\"hmac\":\"zz\",\"erased_at\":\"x\"}\n").expect("write");
        let e = read(&path).expect_err("refused");
        assert!(e.to_string().contains("line 1"), "{e}");
    }
}
