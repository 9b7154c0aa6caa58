//! API keys (docs/SPEC.md §6): the keys file, secrets and their hashes.
//!
//! A secret is `pf_` followed by 43 characters of base64url: 32 bytes from the operating
//! system's random source, so the prefix makes a leaked key easy to spot (and to scan
//! for) and the rest cannot be guessed. The file stores only the SHA-256 of each secret:
//! a fast hash is enough for a 256-bit random secret (there is nothing to brute-force),
//! and it keeps a request's check to one hash and a constant-time comparison per key.
//! A secret is printed once, by `photofinish key new`, and never stored or logged.
//!
//! The file is JSON, written atomically (a temporary file, fsynced, renamed) with mode
//! 0600: `{"version":1,"keys":[{"name","scope","boards","rate","sha256","created_at"}…]}`.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use photofinish_core::access::{BoardGlob, KeyGrant, Scope};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::rate::Rate;

/// What every secret starts with.
pub const SECRET_PREFIX: &str = "pf_";
/// Random bytes in a secret.
const SECRET_BYTES: usize = 32;
/// Most keys a file may hold: each request compares against every one.
pub const MAX_KEYS: usize = 10_000;
/// The keys file format this code writes and reads.
const FILE_VERSION: u32 = 1;

/// One key as the file stores it: everything but the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredKey {
    /// Unique name (for `key revoke`, logs and metrics).
    pub name: String,
    /// What it may do.
    pub scope: Scope,
    /// Board globs it covers (`["*"]` for every board).
    pub boards: Vec<String>,
    /// Its rate limit (`N/s` or `N/min`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    /// SHA-256 of the secret, hex.
    pub sha256: String,
    /// When it was made (RFC 3339).
    pub created_at: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct KeysFile {
    version: u32,
    keys: Vec<StoredKey>,
}

/// Why a keys file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a keys file this version understands, or breaks a rule.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

/// A secret, kept out of `Debug` output and logs.
pub struct Secret(String);

impl Secret {
    /// The secret's text: for printing once, to the person who asked for it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// SHA-256 of `token`.
pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// A new random secret.
pub fn new_secret() -> Result<Secret, std::io::Error> {
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    Ok(Secret(format!("{SECRET_PREFIX}{text}")))
}

/// One usable key: its grant, its rate and its hash.
#[derive(Debug)]
pub struct ActiveKey {
    /// What it may do.
    pub grant: Arc<KeyGrant>,
    /// Its rate limit.
    pub rate: Option<Rate>,
    sha256: [u8; 32],
}

/// The keys a server accepts. See the module docs.
#[derive(Debug, Default)]
pub struct KeySet {
    keys: Vec<ActiveKey>,
}

impl KeySet {
    /// The key whose secret is `token`, if any. Compares the token's hash with every key's
    /// in constant time, whichever matches (or none).
    pub fn find(&self, token: &str) -> Option<&ActiveKey> {
        let d = digest(token);
        let mut found = None;
        for k in &self.keys {
            if bool::from(k.sha256.ct_eq(&d)) {
                found = Some(k);
            }
        }
        found
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Builds the set from stored keys, checking every field.
    pub fn from_stored(stored: &[StoredKey]) -> Result<Self, String> {
        let mut keys = Vec::with_capacity(stored.len());
        for s in stored {
            let sha256 = photofinish_store::hex::decode(&s.sha256)
                .ok_or_else(|| format!("key {:?}: sha256 is not 64 hex digits", s.name))?;
            let rate = s
                .rate
                .as_deref()
                .map(|r| Rate::parse(r).map_err(|e| format!("key {:?}: {e}", s.name)))
                .transpose()?;
            let boards = s.boards.iter().map(|g| BoardGlob::new(g)).collect();
            keys.push(ActiveKey {
                grant: Arc::new(KeyGrant {
                    name: s.name.clone(),
                    scope: s.scope,
                    boards,
                }),
                rate,
                sha256,
            });
        }
        Ok(Self { keys })
    }
}

fn io_error(path: &Path, source: std::io::Error) -> KeysError {
    KeysError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn invalid(path: &Path, reason: impl Into<String>) -> KeysError {
    KeysError::Invalid {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Reads the stored keys of `path`; a missing file holds none when `missing_ok`.
pub fn read_file(path: &Path, missing_ok: bool) -> Result<Vec<StoredKey>, KeysError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if missing_ok && e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(io_error(path, source)),
    };
    let file: KeysFile = serde_json::from_slice(&bytes)
        .map_err(|e| invalid(path, format!("not a keys file: {e}")))?;
    if file.version != FILE_VERSION {
        return Err(invalid(
            path,
            format!(
                "keys file version {} (this build reads {FILE_VERSION})",
                file.version
            ),
        ));
    }
    check(&file.keys).map_err(|r| invalid(path, r))?;
    Ok(file.keys)
}

/// The rules every keys file keeps: unique names, at most [`MAX_KEYS`], valid fields.
fn check(keys: &[StoredKey]) -> Result<(), String> {
    if keys.len() > MAX_KEYS {
        return Err(format!("{} keys, over the limit of {MAX_KEYS}", keys.len()));
    }
    let mut names = std::collections::HashSet::new();
    for k in keys {
        if !names.insert(k.name.as_str()) {
            return Err(format!("key name {:?} appears twice", k.name));
        }
    }
    KeySet::from_stored(keys).map(drop)
}

/// Loads the key set of `path` (the file must exist).
pub fn load(path: &Path) -> Result<KeySet, KeysError> {
    let stored = read_file(path, false)?;
    KeySet::from_stored(&stored).map_err(|r| invalid(path, r))
}

/// Reads the keys of `path` (none if it is missing), lets `change` edit them, and writes
/// them back — holding an exclusive lock on `<path>.lock` throughout, so two commands
/// changing one file never lose each other's change.
pub fn update<T>(
    path: &Path,
    change: impl FnOnce(&mut Vec<StoredKey>) -> Result<T, String>,
) -> Result<T, KeysError> {
    let lock_path = path.with_file_name(format!(
        "{}.lock",
        path.file_name()
            .map_or_else(|| "keys".into(), |n| n.to_string_lossy())
    ));
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| io_error(&lock_path, e))?;
    lock.lock().map_err(|e| io_error(&lock_path, e))?;
    let mut keys = read_file(path, true)?;
    let out = change(&mut keys).map_err(|r| invalid(path, r))?;
    write_file(path, keys)?;
    Ok(out)
}

/// Writes `keys` to `path` atomically (a new temporary file beside it, fsynced, renamed),
/// readable by its owner only.
pub fn write_file(path: &Path, keys: Vec<StoredKey>) -> Result<(), KeysError> {
    check(&keys).map_err(|r| invalid(path, r))?;
    let io = |source| io_error(path, source);
    let text = serde_json::to_vec_pretty(&KeysFile {
        version: FILE_VERSION,
        keys,
    })
    .map_err(|e| invalid(path, e.to_string()))?;
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = path.with_file_name(format!(
        ".{}.{}.{nonce}.tmp",
        path.file_name()
            .map_or_else(|| "keys".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    {
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        // create_new: never reuse (or follow a link at) a name someone else made.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(io)?;
        let written = f
            .write_all(&text)
            .and_then(|()| f.write_all(b"\n"))
            .and_then(|()| f.sync_all());
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
    }
    std::fs::rename(&tmp, path).map_err(io)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// A new key: its stored form and its secret (to print once).
pub fn new_key(
    name: &str,
    scope: Scope,
    boards: Vec<String>,
    rate: Option<String>,
    created_at: String,
) -> Result<(StoredKey, Secret), String> {
    if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
        return Err(format!(
            "key name {name:?} must be 1 to 64 bytes without control characters"
        ));
    }
    if let Some(r) = &rate {
        Rate::parse(r)?;
    }
    let boards = if boards.is_empty() {
        vec!["*".to_owned()]
    } else {
        boards
    };
    let secret = new_secret().map_err(|e| format!("no random source: {e}"))?;
    let stored = StoredKey {
        name: name.to_owned(),
        scope,
        boards,
        rate,
        sha256: photofinish_store::hex::encode(&digest(secret.expose())),
        created_at,
    };
    Ok((stored, secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_matches_only_its_secret() {
        let (stored, secret) = new_key(
            "game",
            Scope::Write,
            vec![],
            Some("50/s".into()),
            "now".into(),
        )
        .expect("key");
        assert!(secret.expose().starts_with(SECRET_PREFIX));
        assert_eq!(secret.expose().len(), SECRET_PREFIX.len() + 43);
        assert_eq!(format!("{secret:?}"), "Secret(…)");
        assert!(!stored.sha256.contains(&secret.expose()[3..]));
        let set = KeySet::from_stored(&[stored]).expect("set");
        let found = set.find(secret.expose()).expect("found");
        assert_eq!(found.grant.name, "game");
        assert_eq!(found.grant.boards, vec![BoardGlob::new("*")]);
        assert!(set.find("pf_wrong").is_none());
        let (_, other) = new_key("x", Scope::Read, vec![], None, "now".into()).expect("key");
        assert_ne!(other.expose(), secret.expose());
    }

    #[test]
    fn files_round_trip_and_refuse_what_breaks_the_rules() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("keys.json");
        assert!(read_file(&path, true).expect("missing ok").is_empty());
        assert!(load(&path).is_err());
        let (a, _) = new_key("a", Scope::Admin, vec!["s-*".into()], None, "t".into()).expect("a");
        write_file(&path, vec![a.clone()]).expect("write");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(read_file(&path, false).expect("read"), vec![a.clone()]);
        assert!(
            write_file(&path, vec![a.clone(), a.clone()]).is_err(),
            "duplicate name"
        );
        std::fs::write(&path, b"{not json").expect("write");
        assert!(load(&path).is_err());
        assert!(new_key("", Scope::Read, vec![], None, "t".into()).is_err());
        assert!(new_key("r", Scope::Read, vec![], Some("fast".into()), "t".into()).is_err());
    }
}
