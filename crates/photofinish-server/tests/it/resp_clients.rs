//! The RESP door with Node.js's two common Redis clients, ioredis and node-redis, each with
//! its defaults (ioredis' `INFO` ready check, node-redis' `HELLO`), RESP2 and RESP3,
//! pipelines, errors, and reading scores past 2^53 exactly (docs/resp.md, "From Node.js").
//! The clients run as `node tests/resp-clients/clients.mjs PORT`; `scripts/test.sh`
//! installs Node.js and the two packages (`npm ci` in `tests/resp-clients`).

use std::path::PathBuf;
use std::process::Command;

use crate::support::*;

fn clients_dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/resp-clients")
}

/// Runs the script against `s`'s RESP door; its stdout and stderr when it fails.
async fn run_clients(s: &Server) -> Result<(), String> {
    let dir = clients_dir();
    assert!(
        dir.join("node_modules/ioredis").exists() && dir.join("node_modules/redis").exists(),
        "ioredis and redis are not installed in {}: run `npm ci` there (scripts/test.sh does)",
        dir.display()
    );
    let port = s.resp.expect("RESP door").port().to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .current_dir(&dir)
            .args(["clients.mjs", &port])
            .output()
    })
    .await
    .expect("join")
    .expect("node (Debian's nodejs; scripts/test.sh installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && stdout.trim() == "ok" {
        Ok(())
    } else {
        Err(format!(
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

// The clients run as a blocking child process: the server keeps the other workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ioredis_and_node_redis_work_with_their_defaults() {
    let s = Server::start(Kind::Embedded).await;
    if let Err(e) = run_clients(&s).await {
        panic!("the Node.js clients failed: {e}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ioredis_and_node_redis_work_on_redis() {
    let s = Server::start(Kind::Redis).await;
    if let Err(e) = run_clients(&s).await {
        panic!("the Node.js clients failed on the Redis backend: {e}");
    }
    s.stop().await;
}
