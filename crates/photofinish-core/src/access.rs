//! Who may do what (docs/SPEC.md §6), as one pure function: [`authorize`] takes the
//! caller, what it asks to do and the board's access flags, and allows or refuses with
//! `unauthorized` (no valid credential: 401) or `forbidden` (a valid one that does not
//! allow this: 403). Every door asks it, through the server's gate, before the service
//! runs; nothing here knows how a credential was checked.
//!
//! - An **open** server (no keys, no JWT key) allows everything.
//! - **API keys** have a scope — `read` (every read), `write` (read + submit, batch,
//!   member delete), `admin` (everything: board create/delete/patch, writes with `at`,
//!   import, backup, metrics) or `metrics` (`/metrics` alone) — and board globs; a key
//!   asking about a board outside its globs is forbidden.
//! - **Players** (a verified JWT; `sub` is the member) may read, and may write their own
//!   member on boards with `player_writes`, never with `at`, never delete.
//! - **Anonymous** callers on a server with credentials may read boards with `public_read`;
//!   anything else — a board that is not public, or does not exist — is unauthorized, so
//!   board names do not leak.

use std::sync::Arc;

use crate::error::BoardError;

/// What an API key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Every read and the event stream.
    Read,
    /// Read, plus submit, batch and member delete.
    Write,
    /// Everything.
    Admin,
    /// `/metrics` alone (for Prometheus).
    Metrics,
}

impl Scope {
    /// Parses `read`, `write`, `admin` or `metrics`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "read" => Some(Self::Read),
            "write" => Some(Self::Write),
            "admin" => Some(Self::Admin),
            "metrics" => Some(Self::Metrics),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Admin => "admin",
            Self::Metrics => "metrics",
        }
    }

    fn reads(self) -> bool {
        matches!(self, Self::Read | Self::Write | Self::Admin)
    }

    fn writes(self) -> bool {
        matches!(self, Self::Write | Self::Admin)
    }
}

/// A board-name glob: `*` matches any run of characters, `?` any one; everything else
/// matches itself (board names hold no other special characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoardGlob(String);

impl BoardGlob {
    /// The glob `pattern`.
    pub fn new(pattern: &str) -> Self {
        Self(pattern.to_owned())
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `board` matches.
    pub fn matches(&self, board: &str) -> bool {
        glob_match(self.0.as_bytes(), board.as_bytes())
    }
}

/// Iterative wildcard match with one backtrack point: linear in practice, no recursion.
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// An API key as the server holds it once its secret matched: never the secret itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyGrant {
    /// The key's name (for logs and metrics).
    pub name: String,
    /// What it may do.
    pub scope: Scope,
    /// The boards it may touch.
    pub boards: Vec<BoardGlob>,
}

impl KeyGrant {
    fn covers(&self, board: &str) -> bool {
        self.boards.iter().any(|g| g.matches(board))
    }
}

/// Who is asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A server without credentials: everything is allowed.
    Open,
    /// No credential, on a server that has some.
    Anonymous,
    /// A valid API key.
    Key(Arc<KeyGrant>),
    /// A player: a verified token whose `sub` is `member`.
    Player {
        /// The member the player is.
        member: String,
        /// Its token's `partition` claim (docs/SPEC.md §17): the one partition its writes
        /// may name.
        partition: Option<String>,
        /// Its token's `team` claim (docs/SPEC.md §17): the one team its writes may name.
        team: Option<String>,
    },
}

/// Who reads a board, as hidden members (docs/SPEC.md §15) concern it: everyone but a
/// hidden member and the board's admins sees the board without its hidden members; a
/// player sees itself as if it were visible (a shadow ban); an admin sees a hidden member
/// it names, marked, with the rank it would have — but its pages and totals leave it out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Viewer {
    /// Anyone else (and the server's own reads: the webhook, the events).
    #[default]
    Everyone,
    /// An admin of the board (an admin key covering it, or an open server).
    Admin,
    /// A player, who is this member.
    Member(String),
}

impl Viewer {
    /// How `caller` views `board`.
    pub fn of(caller: &Caller, board: &str) -> Self {
        match caller {
            Caller::Open => Viewer::Admin,
            Caller::Key(k) if k.scope == Scope::Admin && k.covers(board) => Viewer::Admin,
            Caller::Player { member, .. } => Viewer::Member(member.clone()),
            Caller::Key(_) | Caller::Anonymous => Viewer::Everyone,
        }
    }

    /// The member the viewer is, if a player: it sees itself.
    pub fn own(&self) -> Option<&str> {
        match self {
            Viewer::Member(m) => Some(m),
            _ => None,
        }
    }

    /// Whether a read naming a hidden member shows it to this viewer (marked): an admin.
    pub fn sees_hidden(&self) -> bool {
        *self == Viewer::Admin
    }
}

impl Caller {
    /// Who the caller is, as the audit log names it (docs/SPEC.md §15): the API key's
    /// name, `open` on a server without credentials, `player:<member>`, `anonymous`.
    /// Borrowed but for a player's: every change is handed its actor, and only an admin
    /// change's is kept (in its audit entry).
    pub fn actor(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Caller::Open => "open".into(),
            Caller::Anonymous => "anonymous".into(),
            Caller::Key(k) => k.name.as_str().into(),
            Caller::Player { member, .. } => format!("player:{member}").into(),
        }
    }
}

/// A board's access flags, as its config sets them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BoardFlags {
    /// Reads need no credential.
    pub public_read: bool,
    /// Players may write their own member.
    pub player_writes: bool,
}

/// What a caller asks to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action<'a> {
    /// Read a board (its config, entries, members, periods, events).
    Read {
        /// The board.
        board: &'a str,
    },
    /// Submit a score for `member` (one write, or each entry of a batch).
    Write {
        /// The board.
        board: &'a str,
        /// The member written.
        member: &'a str,
        /// Whether the write carries an explicit `at` (admin only).
        with_at: bool,
        /// The partition the write names (docs/SPEC.md §17): a player's must be its
        /// token's claim.
        partition: Option<&'a str>,
        /// The team the write names (docs/SPEC.md §17): a player's must be its token's
        /// claim.
        team: Option<&'a str>,
    },
    /// Write anything to a board: what a write endpoint checks before it reads the body,
    /// so a caller who may not write there learns nothing (not even whether the board
    /// exists). Each entry is then checked as a `Write`.
    WriteTo {
        /// The board.
        board: &'a str,
    },
    /// Remove a member from a period.
    RemoveMember {
        /// The board.
        board: &'a str,
    },
    /// Create, delete or change a board; import into it.
    Manage {
        /// The board.
        board: &'a str,
    },
    /// Operator work not tied to one board (backup).
    Operate,
    /// Read `/metrics`.
    Metrics,
}

impl Action<'_> {
    fn board(&self) -> Option<&str> {
        match *self {
            Action::Read { board }
            | Action::Write { board, .. }
            | Action::WriteTo { board }
            | Action::RemoveMember { board }
            | Action::Manage { board } => Some(board),
            Action::Operate | Action::Metrics => None,
        }
    }
}

/// The refusal for a caller without a valid credential.
pub fn unauthorized() -> BoardError {
    BoardError::Unauthorized(
        "a valid credential is required (Authorization: Bearer <token>)".into(),
    )
}

fn forbidden(why: String) -> BoardError {
    BoardError::Forbidden(why)
}

/// A player's write may name a partition or team (`what`) only as its token's claim
/// `claim` says (docs/SPEC.md §17), so players cannot fill or drain others'.
fn own_claim(what: &str, asked: Option<&str>, claim: Option<&str>) -> Result<(), BoardError> {
    match asked {
        Some(asked) if Some(asked) != claim => Err(forbidden(format!(
            "a player's write may name only its token's {what} claim ({}), not {asked:?}",
            claim.map_or("none".to_owned(), |c| format!("{c:?}")),
        ))),
        _ => Ok(()),
    }
}

/// Allows `action` for `caller`, or says why not. `flags` are the board's, or `None` when
/// the board does not exist (the service then answers `board_not_found` to callers who may
/// know that).
pub fn authorize(
    caller: &Caller,
    action: &Action<'_>,
    flags: Option<BoardFlags>,
) -> Result<(), BoardError> {
    match caller {
        Caller::Open => Ok(()),
        Caller::Anonymous => match action {
            Action::Read { .. } if flags.is_some_and(|f| f.public_read) => Ok(()),
            _ => Err(unauthorized()),
        },
        Caller::Key(key) => authorize_key(key, action),
        Caller::Player {
            member,
            partition,
            team,
        } => match *action {
            Action::Read { .. } => Ok(()),
            Action::WriteTo { .. } if flags.is_some_and(|f| !f.player_writes) => Err(forbidden(
                "this board does not take players' writes (player_writes is off)".into(),
            )),
            Action::WriteTo { .. } => Ok(()),
            Action::Write {
                member: m,
                with_at,
                partition: asked,
                team: asked_team,
                ..
            } => {
                if m != member {
                    Err(forbidden(format!(
                        "a player may write only its own member {member:?}, not {m:?}"
                    )))
                } else if with_at {
                    Err(forbidden(
                        "a player may not write with an explicit `at`".into(),
                    ))
                } else if flags.is_some_and(|f| !f.player_writes) {
                    Err(forbidden(
                        "this board does not take players' writes (player_writes is off)".into(),
                    ))
                } else {
                    own_claim("partition", asked, partition.as_deref())?;
                    own_claim("team", asked_team, team.as_deref())
                }
            }
            _ => Err(forbidden(
                "players may read, and write their own member; nothing else".into(),
            )),
        },
    }
}

fn authorize_key(key: &KeyGrant, action: &Action<'_>) -> Result<(), BoardError> {
    if let Some(board) = action.board() {
        if !key.covers(board) {
            return Err(forbidden(format!(
                "key {:?} does not cover board {board:?}",
                key.name
            )));
        }
    }
    // Operator work (a backup) reaches every board: only a key covering every board.
    if matches!(action, Action::Operate) && !key.boards.iter().any(|g| g.as_str() == "*") {
        return Err(forbidden(format!(
            "key {:?} covers only some boards; operator work (backup) needs a key for all (--board '*')",
            key.name
        )));
    }
    let allowed = match action {
        Action::Read { .. } => key.scope.reads(),
        Action::Write { with_at: false, .. }
        | Action::WriteTo { .. }
        | Action::RemoveMember { .. } => key.scope.writes(),
        Action::Write { with_at: true, .. } | Action::Manage { .. } | Action::Operate => {
            key.scope == Scope::Admin
        }
        Action::Metrics => matches!(key.scope, Scope::Admin | Scope::Metrics),
    };
    if allowed {
        Ok(())
    } else {
        Err(forbidden(format!(
            "key {:?} has scope {}, which does not allow this",
            key.name,
            key.scope.as_str()
        )))
    }
}

/// Whether `caller` may manage `board` (admin): who sees its private settings.
pub fn may_manage(caller: &Caller, board: &str) -> bool {
    authorize(caller, &Action::Manage { board }, None).is_ok()
}

/// Whether `caller` may read the audit log of every board it administers at once
/// (docs/SPEC.md §15): an admin key (its entries filtered to the boards it covers), or
/// anyone on a server without credentials. Anonymous callers are unauthorized; every
/// other caller is refused.
pub fn may_audit_across(caller: &Caller) -> Result<(), BoardError> {
    match caller {
        Caller::Open => Ok(()),
        Caller::Key(k) if k.scope == Scope::Admin => Ok(()),
        Caller::Anonymous => Err(unauthorized()),
        _ => Err(BoardError::Forbidden(
            "the audit log is for admin keys (scope admin)".into(),
        )),
    }
}

/// Whether `caller` may read what is held about `member` across boards (its rewards and
/// its export, docs/SPEC.md §16: "read scope, or the player itself"): a player only its own; every
/// other caller as its boards allow, board by board.
pub fn may_read_member_data(caller: &Caller, member: &str) -> Result<(), BoardError> {
    match caller {
        Caller::Player { member: me, .. } if me != member => Err(BoardError::Forbidden(format!(
            "a player reads its own member's data, not {member:?}'s"
        ))),
        _ => Ok(()),
    }
}

/// Whether `caller` may see `board` in a listing (`GET /v1/boards`).
pub fn may_list(caller: &Caller, board: &str, flags: BoardFlags) -> bool {
    authorize(caller, &Action::Read { board }, Some(flags)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(scope: Scope, globs: &[&str]) -> Caller {
        Caller::Key(Arc::new(KeyGrant {
            name: "k".into(),
            scope,
            boards: globs.iter().map(|g| BoardGlob::new(g)).collect(),
        }))
    }

    const PUBLIC: Option<BoardFlags> = Some(BoardFlags {
        public_read: true,
        player_writes: true,
    });
    const CLOSED: Option<BoardFlags> = Some(BoardFlags {
        public_read: false,
        player_writes: false,
    });

    fn code(r: Result<(), BoardError>) -> &'static str {
        match r {
            Ok(()) => "ok",
            Err(e) => e.code().as_str(),
        }
    }

    #[test]
    fn globs() {
        for (g, b, ok) in [
            ("*", "anything", true),
            ("season-*", "season-3", true),
            ("season-*", "season-", true),
            ("season-*", "daily", false),
            ("s?", "s1", true),
            ("s?", "s12", false),
            ("*-eu", "pvp-eu", true),
            ("*-eu", "pvp-us", false),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
        ] {
            assert_eq!(BoardGlob::new(g).matches(b), ok, "{g} ~ {b}");
        }
    }

    #[test]
    fn the_matrix() {
        let w = |with_at| Action::Write {
            board: "b",
            member: "ann",
            with_at,
            partition: None,
            team: None,
        };
        let in_fr = Action::Write {
            board: "b",
            member: "ann",
            with_at: false,
            partition: Some("FR"),
            team: None,
        };
        let in_wolves = Action::Write {
            board: "b",
            member: "ann",
            with_at: false,
            partition: None,
            team: Some("wolves"),
        };
        let ann_fr = Caller::Player {
            member: "ann".into(),
            partition: Some("FR".into()),
            team: None,
        };
        let ann_de = Caller::Player {
            member: "ann".into(),
            partition: Some("DE".into()),
            team: Some("bears".into()),
        };
        let ann_wolf = Caller::Player {
            member: "ann".into(),
            partition: None,
            team: Some("wolves".into()),
        };
        let read = Action::Read { board: "b" };
        let rm = Action::RemoveMember { board: "b" };
        let manage = Action::Manage { board: "b" };
        let ann = Caller::Player {
            member: "ann".into(),
            partition: None,
            team: None,
        };
        let bob = Caller::Player {
            member: "bob".into(),
            partition: None,
            team: None,
        };
        // (caller, action, flags, expected)
        let cases: Vec<(&Caller, Action, Option<BoardFlags>, &str)> = vec![
            (&Caller::Open, manage, None, "ok"),
            (&Caller::Anonymous, read, PUBLIC, "ok"),
            (&Caller::Anonymous, read, CLOSED, "unauthorized"),
            (&Caller::Anonymous, read, None, "unauthorized"),
            (&Caller::Anonymous, w(false), PUBLIC, "unauthorized"),
            (&Caller::Anonymous, Action::Metrics, None, "unauthorized"),
            (&ann, read, CLOSED, "ok"),
            (&ann, w(false), PUBLIC, "ok"),
            (&ann, w(false), CLOSED, "forbidden"),
            (&ann, w(true), PUBLIC, "forbidden"),
            (&bob, w(false), PUBLIC, "forbidden"),
            (&ann, rm, PUBLIC, "forbidden"),
            (&ann, manage, PUBLIC, "forbidden"),
            (&ann, Action::Metrics, None, "forbidden"),
            // A player names only its token's partition claim (docs/SPEC.md §17).
            (&ann_fr, in_fr, PUBLIC, "ok"),
            (&ann_fr, w(false), PUBLIC, "ok"),
            (&ann_de, in_fr, PUBLIC, "forbidden"),
            (&ann, in_fr, PUBLIC, "forbidden"),
            (&Caller::Open, in_fr, None, "ok"),
            // A player names only its token's team claim (docs/SPEC.md §17).
            (&ann_wolf, in_wolves, PUBLIC, "ok"),
            (&ann_wolf, w(false), PUBLIC, "ok"),
            (&ann_de, in_wolves, PUBLIC, "forbidden"),
            (&ann, in_wolves, PUBLIC, "forbidden"),
            (&ann_wolf, in_fr, PUBLIC, "forbidden"),
        ];
        for (caller, action, flags, want) in cases {
            assert_eq!(
                code(authorize(caller, &action, flags)),
                want,
                "{caller:?} {action:?} {flags:?}"
            );
        }
        let scopes = [Scope::Read, Scope::Write, Scope::Admin, Scope::Metrics];
        // Per scope: read, write, write with at, remove, manage, operate, metrics.
        let expected = [
            [
                "ok",
                "forbidden",
                "forbidden",
                "forbidden",
                "forbidden",
                "forbidden",
                "forbidden",
            ],
            [
                "ok",
                "ok",
                "forbidden",
                "ok",
                "forbidden",
                "forbidden",
                "forbidden",
            ],
            ["ok", "ok", "ok", "ok", "ok", "ok", "ok"],
            [
                "forbidden",
                "forbidden",
                "forbidden",
                "forbidden",
                "forbidden",
                "forbidden",
                "ok",
            ],
        ];
        let actions = [
            read,
            w(false),
            w(true),
            rm,
            manage,
            Action::Operate,
            Action::Metrics,
        ];
        for (scope, row) in scopes.into_iter().zip(expected) {
            for (action, want) in actions.iter().zip(row) {
                let k = key(scope, &["*"]);
                assert_eq!(
                    code(authorize(&k, action, CLOSED)),
                    want,
                    "{scope:?} {action:?}"
                );
            }
            // Outside the globs every board action is forbidden, even for admin, and so is
            // operator work (a backup reaches every board).
            let other = key(scope, &["season-*"]);
            assert_eq!(code(authorize(&other, &read, PUBLIC)), "forbidden");
            assert_eq!(code(authorize(&other, &manage, PUBLIC)), "forbidden");
            assert_eq!(code(authorize(&other, &Action::Operate, None)), "forbidden");
            let some = key(scope, &["b", "c*"]);
            assert_eq!(
                code(authorize(&some, &read, CLOSED)),
                row[0],
                "globs that cover the board act as all"
            );
        }
    }

    #[test]
    fn listings_show_what_the_caller_may_read() {
        let flags = BoardFlags::default();
        let public = BoardFlags {
            public_read: true,
            player_writes: false,
        };
        assert!(may_list(&Caller::Anonymous, "b", public));
        assert!(!may_list(&Caller::Anonymous, "b", flags));
        assert!(may_list(&key(Scope::Read, &["b*"]), "b2", flags));
        assert!(!may_list(&key(Scope::Read, &["b*"]), "c", flags));
        assert!(!may_list(&key(Scope::Metrics, &["*"]), "b", public));
    }
}
