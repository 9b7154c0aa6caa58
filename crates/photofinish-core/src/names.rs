//! Checked names: a [`BoardName`] or a [`MemberName`] exists only once its text passed the
//! rule of docs/SPEC.md §2 (`validate_board_name`, `validate_member_name`), so an
//! operation whose signature takes one cannot be reached with a name nobody checked, from
//! any door. Doors parse text into them at the boundary (an HTTP path extractor, a RESP
//! argument); the service and its backends take them as given.

use std::fmt;
use std::ops::Deref;

use crate::config::{validate_board_name, validate_member_name};
use crate::error::BoardError;
use crate::groups::validate_group_key;

macro_rules! checked_name {
    ($(#[$doc:meta])* $name:ident, $check:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// `text` if it follows the rule, else the error a client hears.
            pub fn parse(text: impl Into<String>) -> Result<Self, BoardError> {
                let text = text.into();
                $check(&text)?;
                Ok(Self(text))
            }

            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The name's text, owned.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = BoardError;
            fn try_from(text: &str) -> Result<Self, BoardError> {
                Self::parse(text)
            }
        }

        impl TryFrom<String> for $name {
            type Error = BoardError;
            fn try_from(text: String) -> Result<Self, BoardError> {
                Self::parse(text)
            }
        }

        impl From<$name> for String {
            fn from(name: $name) -> String {
                name.0
            }
        }
    };
}

checked_name!(
    /// A board name that follows the rule: 1 to 64 of `A-Z a-z 0-9 _ . -`
    /// (`invalid_board_name` otherwise).
    BoardName,
    validate_board_name
);

checked_name!(
    /// A member name that follows the rule: 1 to 128 bytes of UTF-8 without control
    /// characters (`invalid_member` otherwise).
    MemberName,
    validate_member_name
);

checked_name!(
    /// A partition or team key that follows the rule of docs/SPEC.md §17: 1 to 32 of
    /// `A-Z a-z 0-9 _ -` (`invalid_parameter` otherwise).
    GroupKey,
    validate_group_key
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn a_name_exists_only_if_it_follows_the_rule() {
        let b = BoardName::parse("weekly.kills-2026_v1").expect("a good name");
        assert_eq!(b.as_str(), "weekly.kills-2026_v1");
        assert_eq!(&*b, "weekly.kills-2026_v1");
        for bad in ["", "a b", "ü", &"x".repeat(65)] {
            let e = BoardName::parse(bad).expect_err(bad);
            assert_eq!(e.code(), ErrorCode::InvalidBoardName, "{bad:?}");
        }
        let m = MemberName::try_from("Ana María").expect("a good member");
        assert_eq!(String::from(m), "Ana María");
        for bad in ["", "tab\there", &"x".repeat(129)] {
            let e = MemberName::parse(bad).expect_err(bad);
            assert_eq!(e.code(), ErrorCode::InvalidMember, "{bad:?}");
        }
    }
}
