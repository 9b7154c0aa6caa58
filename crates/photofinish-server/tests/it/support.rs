//! What only this test binary needs; the server launcher and the Redis launcher are in
//! `photofinish-testkit`.

use std::sync::{Arc, OnceLock};

pub use photofinish_testkit::conformance;
pub use photofinish_testkit::server::*;

/// Everything logged at `warn` and above by this test binary, from the first call on: a
/// global subscriber writing into a buffer (tests find their own lines by request id).
pub fn captured_logs() -> Arc<std::sync::Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<std::sync::Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(move || LogSink(sink.clone()))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
        buf
    })
    .clone()
}

struct LogSink(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for LogSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("logs").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A file of `tests/it/fixtures` (test keys and certificates).
pub fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures")
        .join(name)
}

/// Now, whole seconds since the epoch (token claims).
pub fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// A token signed with the ES256 test key, with `claims`.
pub fn es256(claims: serde_json::Value) -> String {
    use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
    let pem = std::fs::read(fixture("es256-private.pem")).expect("key");
    let key = EncodingKey::from_ec_pem(&pem).expect("ec key");
    encode(&Header::new(Algorithm::ES256), &claims, &key).expect("sign")
}
