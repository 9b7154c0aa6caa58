//! JSON shapes of requests and answers, with their OpenAPI schemas. Request types are loose
//! (a score may be a number or a string) and checked by [`crate::wire::parse`]. Answers
//! deserialize too, and the bodies a client sends serialize: the CLI's client reads and
//! writes these same types (`photofinish/src/client.rs`), so a renamed field breaks it at
//! compile time, not in a user's terminal.

mod admin;
mod board;
mod competition;
mod groups;
mod privacy;
mod read;
mod rewards;
mod write;

pub use admin::*;
pub use board::*;
pub use competition::*;
pub use groups::*;
pub use privacy::*;
pub use read::*;
pub use rewards::*;
pub use write::*;
