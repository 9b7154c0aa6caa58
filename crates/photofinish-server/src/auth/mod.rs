//! Authentication: turning the credential a request carries (`Authorization: Bearer …` on
//! HTTP, `AUTH` on RESP) into a [`Caller`] for the core's access rules. API keys come from
//! a keys file ([`keys`]), re-read on SIGHUP; players' tokens are JWTs ([`jwt`]). A server
//! with neither is *open*: every caller is [`Caller::Open`] and credentials are ignored.
//!
//! A token starting with `pf_` is an API key; anything else is tried as a player token
//! when a JWT key is configured. A credential that does not check out is refused
//! (`unauthorized`), never downgraded to anonymous.

pub mod jwt;
pub mod keys;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use photofinish_core::access::Caller;
use photofinish_core::BoardError;

use crate::rate::Rate;

/// What a server checks credentials against.
pub struct Authenticator {
    keys_file: Option<PathBuf>,
    keys: RwLock<Arc<keys::KeySet>>,
    jwt: Option<jwt::JwtVerifier>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("keys_file", &self.keys_file)
            .field("keys", &self.key_set().len())
            .field("jwt", &self.jwt)
            .finish()
    }
}

/// Whether an anonymous caller may ever call `method` on `path` (a route's template or a
/// request's path) on a server with credentials: the reads, which `public_read` boards
/// serve to anyone (docs/SPEC.md §6) — a `GET` under `/v1/`, and `members:query`, a read
/// sent as a `POST`. Everything else needs a credential. The OpenAPI document marks the
/// credential optional on exactly these, and the HTTP door refuses any other anonymous
/// request with 401 before it reads a parameter or the body.
pub fn anonymous_may_call(method: &str, path: &str) -> bool {
    (method.eq_ignore_ascii_case("get") && path.starts_with("/v1/"))
        || path.ends_with("/members:query")
}

/// Who a request is, and the rate it is held to.
#[derive(Debug, Clone)]
pub struct Identity {
    /// For the access rules.
    pub caller: Caller,
    /// The key's rate limit, if it has one.
    pub rate: Option<Rate>,
}

impl Authenticator {
    /// An open server: no credentials.
    pub fn open() -> Self {
        Self {
            keys_file: None,
            keys: RwLock::new(Arc::default()),
            jwt: None,
        }
    }

    /// Loads the keys file (if any) and the JWT key (if any); the error says what is wrong.
    pub fn new(keys_file: Option<PathBuf>, jwt: Option<&jwt::JwtOptions>) -> Result<Self, String> {
        let keys = match &keys_file {
            Some(path) => keys::load(path).map_err(|e| e.to_string())?,
            None => keys::KeySet::default(),
        };
        let jwt = jwt.map(jwt::JwtVerifier::new).transpose()?;
        Ok(Self {
            keys_file,
            keys: RwLock::new(Arc::new(keys)),
            jwt,
        })
    }

    /// Whether any credential is configured (else the server is open).
    pub fn has_credentials(&self) -> bool {
        self.keys_file.is_some() || self.jwt.is_some()
    }

    fn key_set(&self) -> Arc<keys::KeySet> {
        self.keys.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Re-reads the keys file (SIGHUP). A file that cannot be read or is invalid keeps the
    /// old set; the error says why. Returns the number of keys now in force.
    pub fn reload(&self) -> Result<usize, String> {
        let Some(path) = &self.keys_file else {
            return Ok(0);
        };
        let set = keys::load(path).map_err(|e| e.to_string())?;
        let n = set.len();
        *self.keys.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(set);
        Ok(n)
    }

    /// The identity behind `bearer` (the token after `Bearer `), or `None` for a request
    /// without one.
    pub fn identify(&self, bearer: Option<&str>) -> Result<Identity, BoardError> {
        if !self.has_credentials() {
            return Ok(Identity {
                caller: Caller::Open,
                rate: None,
            });
        }
        let Some(token) = bearer else {
            return Ok(Identity {
                caller: Caller::Anonymous,
                rate: None,
            });
        };
        if token.starts_with(keys::SECRET_PREFIX) {
            let set = self.key_set();
            return match set.find(token) {
                Some(k) => Ok(Identity {
                    caller: Caller::Key(k.grant.clone()),
                    rate: k.rate,
                }),
                None => Err(BoardError::Unauthorized(
                    "unknown or revoked API key".into(),
                )),
            };
        }
        match &self.jwt {
            Some(v) => Ok(Identity {
                caller: {
                    let player = v.verify(token)?;
                    Caller::Player {
                        member: player.member,
                        partition: player.partition,
                        team: player.team,
                    }
                },
                rate: None,
            }),
            None => Err(BoardError::Unauthorized(
                "not an API key, and this server takes no player tokens".into(),
            )),
        }
    }
}

/// The token of an `Authorization` header value: `Bearer <token>` (scheme case-insensitive).
pub fn bearer(header: &str) -> Result<&str, BoardError> {
    let (scheme, token) = header.trim().split_once(' ').unwrap_or((header, ""));
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(BoardError::Unauthorized(
            "the Authorization header must be `Bearer <token>`".into(),
        ));
    }
    Ok(token)
}
