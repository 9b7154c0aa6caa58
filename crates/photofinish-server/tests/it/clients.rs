//! The game clients (clients/typescript, clients/csharp; docs/clients.md) against a live
//! server: the server is started here with an admin key, players' ES256 tokens and a low
//! anonymous rate, and each client's own test suite runs against it (`node --test` for
//! TypeScript; for C#, a program compiled with mono's `mcs` and run with `mono`), on the
//! embedded store and once on Redis. First each client's generated types are checked
//! against the server's `/openapi.json`: a file that differs from a fresh generation
//! fails. The C# Unity sample is compiled too, against stubs of the UnityEngine types it
//! uses. `scripts/test.sh` installs Node.js, mono and the TypeScript dev dependencies.

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

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../clients")
}

fn typescript_dir() -> PathBuf {
    clients_dir().join("typescript")
}

fn csharp_dir() -> PathBuf {
    clients_dir().join("csharp")
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
/// environment the client's tests read, its boards' names prefixed with `client`'s.
async fn server(kind: Kind, client: &str) -> (Server, Vec<(String, String)>, tempfile::TempDir) {
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
            format!("{client}-{kind:?}-").to_lowercase(),
        ),
    ];
    (s, env, dir)
}

/// Checks `lang`'s generated types against `s`'s OpenAPI document.
async fn types_are_current(s: &Server, lang: &str) {
    let openapi = format!("{}/openapi.json", s.base);
    check(
        &format!(
            "the {lang} types' check (node clients/generate.mjs {lang} <server>/openapi.json)"
        ),
        &run(
            clients_dir(),
            "node",
            &["generate.mjs", lang, "--check", &openapi],
            vec![],
        )
        .await,
    );
}

async fn typescript_suite(kind: Kind) {
    build_typescript().await;
    let (s, env, _dir) = server(kind, "ts").await;
    types_are_current(&s, "typescript").await;
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

/// Compiles the `.cs` files of `dirs` (under clients/csharp, each not recursed) with
/// mcs into `out`, warnings as errors; `target` is mcs's (`exe`, `library`).
async fn mcs(what: &str, target: &str, out: &Path, dirs: &[&str]) {
    let mut args = vec![
        format!("-target:{target}"),
        format!("-out:{}", out.display()),
        "-r:System.Net.Http.dll".to_owned(),
        "-warnaserror".to_owned(),
    ];
    let mut files = Vec::new();
    for d in dirs {
        for e in std::fs::read_dir(csharp_dir().join(d)).expect("sources") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "cs") {
                files.push(p.display().to_string());
            }
        }
    }
    files.sort();
    args.extend(files);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check(what, &run(csharp_dir(), "mcs", &args, vec![]).await);
}

/// Compiles the C# client's tests, and the Unity sample against the UnityEngine stubs,
/// once per test process: the tests' program.
async fn build_csharp() -> PathBuf {
    static BUILT: OnceCell<PathBuf> = OnceCell::const_new();
    BUILT
        .get_or_init(|| async {
            let out = std::env::temp_dir().join(format!("photofinish-cs-{}", std::process::id()));
            std::fs::create_dir_all(&out).expect("out dir");
            let exe = out.join("tests.exe");
            let sources = ["Runtime", "Tests~"];
            mcs("mcs (the C# client and its tests)", "exe", &exe, &sources).await;
            let sample = ["Runtime", "Tests~/UnityStubs", "Samples~/LeaderboardSample"];
            mcs(
                "mcs (the Unity sample)",
                "library",
                &out.join("sample.dll"),
                &sample,
            )
            .await;
            exe
        })
        .await
        .clone()
}

async fn csharp_suite(kind: Kind) {
    let exe = build_csharp().await;
    let (s, env, _dir) = server(kind, "cs").await;
    types_are_current(&s, "csharp").await;
    let exe = exe.display().to_string();
    let out = run(csharp_dir(), "mono", &["--debug", &exe], env).await;
    check(&format!("the C# client's tests on {kind:?}"), &out);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csharp_client_on_the_embedded_store() {
    csharp_suite(Kind::Embedded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csharp_client_on_redis() {
    csharp_suite(Kind::Redis).await;
}
