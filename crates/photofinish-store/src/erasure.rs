//! The erasure key (docs/SPEC.md §16, docs/privacy.md): 32 random bytes the server names an
//! erased member by, as HMAC-SHA-256 of its name, in the audit entry and the erasure
//! ledger. Kept in a file — beside the data by default (`erasure.key`), or where
//! `--erasure-key-file` says — as 64 hex digits, readable by its owner alone, made on
//! first use when absent. Never logged, exported or put in a `photofinish backup` (a
//! backup is a snapshot of the state, not a copy of the directory).

use std::io::{ErrorKind, Write};
use std::path::Path;

use photofinish_core::BoardError;

/// The key's length, bytes.
pub const KEY_BYTES: usize = 32;

/// The file's name beside the data when no path is given.
pub const KEY_FILE: &str = "erasure.key";

/// The key as its file holds it: 64 lowercase hex digits.
pub fn to_hex(key: &[u8; KEY_BYTES]) -> String {
    crate::hex::encode(key)
}

/// A key from its text (surrounding whitespace ignored): `None` unless 64 hex digits.
pub fn from_hex(text: &str) -> Option<[u8; KEY_BYTES]> {
    crate::hex::decode(text.trim())
}

/// A new random key.
pub fn generate() -> Result<[u8; KEY_BYTES], BoardError> {
    let mut key = [0u8; KEY_BYTES];
    getrandom::fill(&mut key)
        .map_err(|e| BoardError::Unavailable(format!("no randomness for the erasure key: {e}")))?;
    Ok(key)
}

/// How a key file is made: only if absent, readable by its owner alone.
fn new_key_file() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Writes `key` into `file` as its file holds it, and syncs it.
fn write_key(file: &mut std::fs::File, key: &[u8; KEY_BYTES]) -> std::io::Result<()> {
    file.write_all(format!("{}\n", to_hex(key)).as_bytes())?;
    file.sync_all()
}

/// Puts `key` in a new file at `path` (refused when one is there): a restored data dir
/// given the key its ledger was written under.
pub fn put_key(path: &Path, key: &[u8; KEY_BYTES]) -> std::io::Result<()> {
    write_key(&mut new_key_file().open(path)?, key)
}

/// The key in file `path`, made there (mode 0600, created only if absent: two servers
/// starting at once agree on the first one's) when the file does not exist.
pub fn key_in_file(path: &Path) -> Result<[u8; KEY_BYTES], BoardError> {
    let unavailable = |what: &str, e: std::io::Error| {
        BoardError::Unavailable(format!("erasure key file {}: {what}: {e}", path.display()))
    };
    match new_key_file().open(path) {
        Ok(mut file) => {
            let key = generate()?;
            write_key(&mut file, &key).map_err(|e| unavailable("cannot write it", e))?;
            Ok(key)
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            let text =
                std::fs::read_to_string(path).map_err(|e| unavailable("cannot read it", e))?;
            from_hex(&text).ok_or_else(|| {
                BoardError::Unavailable(format!(
                    "erasure key file {} does not hold 64 hex digits",
                    path.display()
                ))
            })
        }
        Err(e) => Err(unavailable("cannot create it", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_and_read_back() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join(KEY_FILE);
        let made = key_in_file(&path).expect("made");
        assert_eq!(key_in_file(&path).expect("read"), made);
        assert_ne!(made, [0u8; KEY_BYTES]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, "not a key").expect("write");
        assert!(key_in_file(&path).is_err());
        assert_eq!(from_hex(&to_hex(&made)), Some(made));
        assert_eq!(from_hex("zz"), None);
    }
}
