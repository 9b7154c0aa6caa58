//! The game clients (clients/typescript; docs/clients.md) against a live server: the
//! server is started here with an admin key, players' ES256 tokens and a low anonymous
//! rate, and the client's own test suite (`node --test`) runs against it, on the embedded
//! store and once on Redis. First the client's generated types are checked against the
//! server's `/openapi.json`: a `src/schema.ts` that differs from a fresh generation fails.
//! `scripts/test.sh` installs Node.js and the client's dev dependencies (`npm ci`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use photofinish_core::access::Scope;
use photofinish_server::auth::jwt::{JwtKey, JwtOptions};
use photofinish_server::auth::keys;
use photofinish_server::rate::Rate;
use photofinish_server::serve::ServeOptions;
use serde_json::json;
use tokio::sync::OnceCell;

use crate::support::*;

fn typescript_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../clients/typescript")
}

/// Runs `program args` in `dir` with `envs`, off the async workers.
async fn run(dir: PathBuf, program: &str, args: &[&str], envs: Vec<(String, String)>) -> Output {
    let (program, args): (String, Vec<String>) = (
        program.into(),
        args.iter().map(|a| (*a).to_owned()).collect(),
    );
    tokio::task::spawn_blocking(move || {
        Command::new(&program)
            .current_dir(&dir)
            .args(&args)
            .envs(envs)
            .output()
            .unwrap_or_else(|e| panic!("{program} (scripts/test.sh installs Node.js): {e}"))
    })
    .await
    .expect("join")
}

fn check(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles the client and its tests once per test process.
async fn build_typescript() {
    static BUILT: OnceCell<()> = OnceCell::const_new();
    BUILT
        .get_or_init(|| async {
            let dir = typescript_dir();
            assert!(
                dir.join("node_modules/typescript").exists(),
                "the client's dev dependencies are not installed in {}: run `npm ci` there \
                 (scripts/test.sh does)",
                dir.display()
            );
            check(
                "npm run build",
                &run(dir, "npm", &["run", "build", "--silent"], vec![]).await,
            );
        })
        .await;
}

/// A server with an admin key, players' tokens and an anonymous rate of 4 a second; the
/// environment the client's tests read.
async fn server(kind: Kind) -> (Server, Vec<(String, String)>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tmp");
    let (key, secret) =
        keys::new_key("admin", Scope::Admin, vec![], None, "t".into()).expect("key");
    keys::write_file(&dir.path().join("keys.json"), vec![key]).expect("keys file");
    let keys_file = dir.path().join("keys.json");
    let s = Server::start_configured(kind, |o| ServeOptions {
        keys: Some(keys_file),
        jwt: Some(JwtOptions {
            key: JwtKey::Pem(fixture("es256-public.pem")),
            issuer: Some("studio".into()),
            audience: Some("game".into()),
        }),
        anonymous_rate: Rate::parse("4/s").expect("rate"),
        player_rate: Rate::parse("1000/s").expect("rate"),
        ..o
    })
    .await;
    let token = |member: &str| {
        es256(json!({"sub": member, "exp": now_s() + 3600, "iss": "studio", "aud": "game"}))
    };
    let env = vec![
        ("PF_URL".to_owned(), s.base.clone()),
        ("PF_ADMIN".to_owned(), secret.expose().to_owned()),
        ("PF_ANN".to_owned(), token("ann")),
        ("PF_BOB".to_owned(), token("bob")),
        (
            "PF_PREFIX".to_owned(),
            format!("ts-{kind:?}-").to_lowercase(),
        ),
    ];
    (s, env, dir)
}

async fn typescript_suite(kind: Kind) {
    build_typescript().await;
    let (s, env, _dir) = server(kind).await;
    let openapi = format!("{}/openapi.json", s.base);
    check(
        "the generated types' check (npm run generate -- <server>/openapi.json)",
        &run(
            typescript_dir(),
            "node",
            &["scripts/generate.mjs", "--check", &openapi],
            vec![],
        )
        .await,
    );
    let out = run(
        typescript_dir(),
        "node",
        &["--test", "--test-concurrency=1", "dist/test/client.test.js"],
        env,
    )
    .await;
    check(&format!("the TypeScript client's tests on {kind:?}"), &out);
    s.stop().await;
}

// The client runs as a child process: the server keeps the other workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_client_on_the_embedded_store() {
    typescript_suite(Kind::Embedded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_client_on_redis() {
    typescript_suite(Kind::Redis).await;
}
