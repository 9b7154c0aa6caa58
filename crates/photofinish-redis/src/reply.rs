//! Strict reading of format 2's script answers, as its idempotency records keep them (read
//! by the upgrade to the log layout, [`crate::upgrade_log`]): an array whose first element
//! is a status word, then fields at fixed places. A reply of another
//! shape — a missing field, a string where a number belongs, a negative count — is an
//! error (`storage_unavailable`, naming the script and the field), never a silent 0.

use photofinish_core::BoardError;
use redis::Value;

/// One script's reply. See the module docs.
#[derive(Debug)]
pub struct Reply {
    values: Vec<Value>,
    script: &'static str,
}

impl Reply {
    /// Reads `v` as the reply of `script`: it must be an array.
    pub fn new(script: &'static str, v: Value) -> Result<Self, BoardError> {
        match v {
            Value::Array(values) => Ok(Self { values, script }),
            other => Err(malformed(script, &format!("not an array: {other:?}"))),
        }
    }

    /// The error for field `at`, with what was wrong.
    pub fn malformed(&self, at: usize, what: &str) -> BoardError {
        malformed(self.script, &format!("field {at} {what}"))
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// The status word.
    pub fn status(&self) -> Result<&[u8], BoardError> {
        self.bytes(0)
    }

    /// Field `at` as bytes: a bulk or simple string.
    pub fn bytes(&self, at: usize) -> Result<&[u8], BoardError> {
        self.opt_bytes(at)?
            .ok_or_else(|| self.malformed(at, "is nil"))
    }

    /// Field `at` as bytes, or `None` for nil (Lua's `false`).
    pub fn opt_bytes(&self, at: usize) -> Result<Option<&[u8]>, BoardError> {
        match self.values.get(at) {
            Some(Value::BulkString(b)) => Ok(Some(b)),
            Some(Value::SimpleString(s)) => Ok(Some(s.as_bytes())),
            Some(Value::Nil) => Ok(None),
            Some(other) => Err(self.malformed(at, &format!("is not a string: {other:?}"))),
            None => Err(self.malformed(at, "is missing")),
        }
    }

    /// Field `at`, itself an array, as a reply of the same script.
    pub fn nested(&self, at: usize) -> Result<Reply, BoardError> {
        match self.values.get(at) {
            Some(v @ Value::Array(_)) => Reply::new(self.script, v.clone()),
            _ => Err(self.malformed(at, "is not an array")),
        }
    }

    /// Every field from `from` on, each an array, as replies of the same script.
    pub fn nested_all(&self, from: usize) -> Result<Vec<Reply>, BoardError> {
        (from..self.values.len()).map(|i| self.nested(i)).collect()
    }

    /// Field `at` as UTF-8 text.
    pub fn text(&self, at: usize) -> Result<String, BoardError> {
        let b = self.bytes(at)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.malformed(at, "is not UTF-8"))
    }

    /// Field `at` as a non-negative integer (a count, a position or a rank).
    pub fn count(&self, at: usize) -> Result<u64, BoardError> {
        let n = match self.values.get(at) {
            Some(Value::Int(i)) => *i,
            _ => std::str::from_utf8(self.bytes(at)?)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| self.malformed(at, "is not an integer"))?,
        };
        u64::try_from(n).map_err(|_| self.malformed(at, &format!("is negative: {n}")))
    }

    /// Field `at` as an exact integer in decimal (a score the scripts formatted).
    pub fn integer(&self, at: usize) -> Result<i64, BoardError> {
        std::str::from_utf8(self.bytes(at)?)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| self.malformed(at, "is not an integer"))
    }

    /// Field `at` as `1` (true) or `0` (false).
    pub fn flag(&self, at: usize) -> Result<bool, BoardError> {
        match self.count(at)? {
            0 => Ok(false),
            1 => Ok(true),
            n => Err(self.malformed(at, &format!("is {n}, not 0 or 1"))),
        }
    }
}

fn malformed(script: &str, detail: &str) -> BoardError {
    BoardError::Unavailable(format!(
        "malformed reply from the {script} script: {detail}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(v: Vec<Value>) -> Reply {
        Reply::new("test", Value::Array(v)).expect("array")
    }

    #[test]
    fn a_malformed_field_is_an_error_never_zero() {
        let r = reply(vec![
            Value::SimpleString("ok".into()),
            Value::BulkString(b"x".to_vec()),
            Value::Int(-1),
            Value::Nil,
        ]);
        assert_eq!(r.status().expect("status"), b"ok");
        for at in [1, 2, 3, 4] {
            let e = r.count(at).expect_err("not a count");
            assert_eq!(e.code(), photofinish_core::ErrorCode::StorageUnavailable);
            assert!(e.to_string().contains(&format!("field {at}")), "{e}");
        }
        assert_eq!(r.opt_bytes(3).expect("nil"), None);
        assert!(r.integer(1).is_err());
        assert!(Reply::new("test", Value::Int(1)).is_err());
    }
}
