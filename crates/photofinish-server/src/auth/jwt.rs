//! Players' own login tokens (docs/SPEC.md §6): JWTs verified with the `jsonwebtoken`
//! crate against one configured key. The algorithm is fixed by that key — RS256, ES256 or
//! EdDSA from a PEM public key, HS256 from a secret file — so a token naming another
//! algorithm (`none` included) is refused before its claims are read, and a public key can
//! never be used as an HMAC secret. `exp` is required (30 s leeway), `nbf` honoured, `iss`
//! and `aud` checked when configured (then required). `sub` is the member.
//!
//! A verified token is cached until it expires, keyed by the SHA-256 of its text, so a
//! player's next request costs a hash instead of a signature check. The cache holds at most
//! [`MAX_CACHED_TOKENS`]; when full, expired entries go first, then all.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use photofinish_core::config::validate_member_name;
use photofinish_core::groups::validate_group_key;
use photofinish_core::BoardError;
use serde::Deserialize;

use super::keys::digest;

/// Seconds a token is still taken after its `exp` (and before its `nbf`): clock skew.
pub const LEEWAY_SECONDS: u64 = 30;
/// Most verified tokens remembered at once (≈ 100 B each).
pub const MAX_CACHED_TOKENS: usize = 100_000;
/// Longest token accepted: real ones are well under 2 KiB.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// Shortest HS256 secret taken: RFC 7518 §3.2 asks for a key of at least the hash's size.
pub const MIN_HS256_SECRET_BYTES: usize = 32;
/// The DER of the P-256 curve's OID (1.2.840.10045.3.1.7), as an EC public key names it.
const P256_OID_DER: [u8; 10] = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];

/// Whether a PEM public key names the P-256 curve (ES256's; P-384 would load, then refuse
/// every token).
fn is_p256(pem: &[u8]) -> bool {
    use base64::Engine;
    let text = String::from_utf8_lossy(pem);
    let body: String = text
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat();
    base64::engine::general_purpose::STANDARD
        .decode(body.trim())
        .is_ok_and(|der| der.windows(P256_OID_DER.len()).any(|w| w == P256_OID_DER))
}

/// Where the verification key comes from.
#[derive(Debug, Clone)]
pub enum JwtKey {
    /// A PEM public key file (RSA, EC P-256 or Ed25519).
    Pem(std::path::PathBuf),
    /// A file whose bytes, trailing whitespace trimmed, are the HS256 secret.
    Hs256SecretFile(std::path::PathBuf),
}

/// How to verify players' tokens.
#[derive(Debug, Clone)]
pub struct JwtOptions {
    /// The key.
    pub key: JwtKey,
    /// Required `iss`, if set.
    pub issuer: Option<String>,
    /// Required `aud`, if set.
    pub audience: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Claims {
    sub: String,
    exp: u64,
    /// The one partition the player's writes may name (docs/SPEC.md §17).
    #[serde(default)]
    partition: Option<String>,
    /// The one team the player's writes may name (docs/SPEC.md §17).
    #[serde(default)]
    team: Option<String>,
}

/// What a valid token says of its player: its member and its partition and team claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// The member (`sub`).
    pub member: String,
    /// The `partition` claim, when the token has one.
    pub partition: Option<String>,
    /// The `team` claim, when the token has one.
    pub team: Option<String>,
}

/// Verifies players' tokens. See the module docs.
pub struct JwtVerifier {
    key: DecodingKey,
    validation: Validation,
    cache: Mutex<HashMap<[u8; 32], (Player, u64)>>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("algorithms", &self.validation.algorithms)
            .finish_non_exhaustive()
    }
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn unauthorized(why: impl std::fmt::Display) -> BoardError {
    BoardError::Unauthorized(format!("invalid token: {why}"))
}

impl JwtVerifier {
    /// Loads the key and sets up the checks; the error names the file and what is wrong.
    pub fn new(opts: &JwtOptions) -> Result<Self, String> {
        let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
        let (key, alg) = match &opts.key {
            JwtKey::Hs256SecretFile(path) => {
                let bytes = read(path)?;
                let end = bytes
                    .iter()
                    .rposition(|b| !b.is_ascii_whitespace())
                    .map_or(0, |i| i + 1);
                if end < MIN_HS256_SECRET_BYTES {
                    return Err(format!(
                        "{}: the HS256 secret has {end} bytes; use at least {MIN_HS256_SECRET_BYTES}",
                        path.display()
                    ));
                }
                (DecodingKey::from_secret(&bytes[..end]), Algorithm::HS256)
            }
            JwtKey::Pem(path) => {
                let pem = read(path)?;
                if let Ok(k) = DecodingKey::from_rsa_pem(&pem) {
                    (k, Algorithm::RS256)
                } else if let Ok(k) = DecodingKey::from_ec_pem(&pem) {
                    if !is_p256(&pem) {
                        return Err(format!(
                            "{}: an EC key must be on the P-256 curve (ES256)",
                            path.display()
                        ));
                    }
                    (k, Algorithm::ES256)
                } else if let Ok(k) = DecodingKey::from_ed_pem(&pem) {
                    (k, Algorithm::EdDSA)
                } else {
                    return Err(format!(
                        "{}: not an RSA, EC P-256 or Ed25519 public key in PEM",
                        path.display()
                    ));
                }
            }
        };
        let mut validation = Validation::new(alg);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        let mut required = vec!["exp", "sub"];
        match &opts.issuer {
            Some(iss) => {
                validation.set_issuer(&[iss]);
                required.push("iss");
            }
            None => validation.iss = None,
        }
        match &opts.audience {
            Some(aud) => {
                validation.set_audience(&[aud]);
                required.push("aud");
            }
            None => validation.validate_aud = false,
        }
        validation.set_required_spec_claims(&required);
        Ok(Self {
            key,
            validation,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The player a valid `token` speaks for, or why it is refused.
    pub fn verify(&self, token: &str) -> Result<Player, BoardError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(unauthorized(format!("over {MAX_TOKEN_BYTES} bytes")));
        }
        let id = digest(token);
        let now = now_s();
        if let Some((player, until)) = self.lock().get(&id) {
            if now <= *until {
                return Ok(player.clone());
            }
        }
        let data = jsonwebtoken::decode::<Claims>(token, &self.key, &self.validation)
            .map_err(unauthorized)?;
        let member = data.claims.sub;
        validate_member_name(&member).map_err(|_| unauthorized("sub is not a member name"))?;
        for (claim, key) in [
            ("partition", &data.claims.partition),
            ("team", &data.claims.team),
        ] {
            if let Some(k) = key {
                validate_group_key(k)
                    .map_err(|_| unauthorized(format!("{claim} is not a {claim} key")))?;
            }
        }
        let player = Player {
            member,
            partition: data.claims.partition,
            team: data.claims.team,
        };
        let until = data.claims.exp.saturating_add(LEEWAY_SECONDS);
        let mut cache = self.lock();
        if cache.len() >= MAX_CACHED_TOKENS {
            cache.retain(|_, (_, u)| now <= *u);
            if cache.len() >= MAX_CACHED_TOKENS {
                cache.clear();
            }
        }
        cache.insert(id, (player.clone(), until));
        Ok(player)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (Player, u64)>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }
}
