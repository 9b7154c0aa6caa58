//! How a RESP command fails before the service answers it ([`CmdError`]): an error with a
//! stable code, or a line in Redis's own words (wrong arity, `WRONGPASS`). The commands,
//! the connection and the session share it; it imports none of them.

use crate::error::ApiError;

/// How a command fails before the service answers it.
#[derive(Debug)]
pub enum CmdError {
    /// An error with a stable code (`-ERR <code> <message>`, or `-NOAUTH` for
    /// `unauthorized`).
    Api(ApiError),
    /// A line sent as it is, Redis's wording (`ERR wrong number of arguments …`).
    Raw(String),
}

impl From<ApiError> for CmdError {
    fn from(e: ApiError) -> Self {
        CmdError::Api(e)
    }
}

impl From<photofinish_core::BoardError> for CmdError {
    fn from(e: photofinish_core::BoardError) -> Self {
        CmdError::Api(e.into())
    }
}

/// `ERR wrong number of arguments for '<name>' command`, as Redis words it.
pub fn wrong_arity(name: &str) -> CmdError {
    CmdError::Raw(format!(
        "ERR wrong number of arguments for '{name}' command"
    ))
}

/// Redis's answer to a credential that does not check out.
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// `WRONGPASS`, for a credential that does not check out.
pub fn wrongpass() -> CmdError {
    CmdError::Raw(WRONGPASS.into())
}
