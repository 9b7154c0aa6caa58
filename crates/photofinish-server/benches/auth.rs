//! What identifying a request costs, per credential kind: an API key (hash + constant-time
//! comparison with each key), and a player's ES256 token from the verified-token cache and
//! without it (the signature check a token's first request pays).

use criterion::{criterion_group, criterion_main, Criterion};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use photofinish_core::access::Scope;
use photofinish_server::auth::jwt::{JwtKey, JwtOptions, JwtVerifier};
use photofinish_server::auth::{keys, Authenticator};

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures")
        .join(name)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("keys.json");
    let mut stored = Vec::new();
    let mut secret = String::new();
    for i in 0..10 {
        let (k, s) =
            keys::new_key(&format!("k{i}"), Scope::Write, vec![], None, "t".into()).expect("key");
        stored.push(k);
        secret = s.expose().to_owned();
    }
    keys::write_file(&path, stored).expect("write");
    let jwt = JwtOptions {
        key: JwtKey::Pem(fixture("es256-public.pem")),
        issuer: None,
        audience: None,
    };
    let auth = Authenticator::new(Some(path), Some(&jwt)).expect("auth");
    let signer =
        EncodingKey::from_ec_pem(&std::fs::read(fixture("es256-private.pem")).expect("pem"))
            .expect("key");
    let exp = jsonwebtoken::get_current_timestamp() + 3600;
    let token = encode(
        &Header::new(Algorithm::ES256),
        &serde_json::json!({"sub": "player0000000001", "exp": exp}),
        &signer,
    )
    .expect("sign");
    c.bench_function("identify: API key (10 keys in the file)", |b| {
        b.iter(|| auth.identify(Some(&secret)).expect("key"))
    });
    auth.identify(Some(&token)).expect("warm");
    c.bench_function("identify: player ES256 token, cached", |b| {
        b.iter(|| auth.identify(Some(&token)).expect("player"))
    });
    c.bench_function("verify: player ES256 token, uncached", |b| {
        b.iter_batched(
            || JwtVerifier::new(&jwt).expect("verifier"),
            |v| v.verify(&token).expect("valid"),
            criterion::BatchSize::SmallInput,
        )
    });
}

mod group {
    //! criterion's macros generate undocumented functions; they live in this module.
    #![allow(missing_docs)]
    use super::*;
    criterion_group!(benches, bench);
}
criterion_main!(group::benches);
