//! Prints N player tokens, one a line: line i+1 is member `player%010d` i's, ES256-signed
//! with the test key in `tests/it/fixtures/` and valid for a day. For the benchmark of
//! player writes (`bench/auth.sh`), whose server verifies them with the matching public key.
//!
//! Usage: cargo run --release -p photofinish-server --example player_tokens -- N

use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "1000".into())
        .parse()?;
    let pem_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/fixtures/es256-private.pem"
    );
    let key = EncodingKey::from_ec_pem(&std::fs::read(pem_path)?)?;
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs()
        + 86_400;
    let header = Header::new(Algorithm::ES256);
    for i in 0..n {
        let claims = serde_json::json!({"sub": format!("player{i:010}"), "exp": exp});
        println!("{}", encode(&header, &claims, &key)?);
    }
    Ok(())
}
