//! The deployment files of `deploy/` (docs/SPEC.md §18, docs/production.md): the systemd
//! unit passes `systemd-analyze verify` and its security review, the example config is
//! one `photofinish config` accepts, and the container file's contract — non-root, the
//! data dir a volume, all interfaces, keys from `/etc/photofinish/keys.json` or exit 2 —
//! holds for the binary run as the image runs it. (Building the image itself needs a
//! container engine and a registry to pull the base from; CI has neither.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

fn deploy(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(file)
}

fn read(file: &str) -> String {
    std::fs::read_to_string(deploy(file)).unwrap_or_else(|e| panic!("deploy/{file}: {e}"))
}

/// The unit, its binary path pointed at the one under test (verify checks that the
/// command exists), passes `systemd-analyze verify` without a word, and its security
/// review rates it well; it runs as its own user, gains no privileges, and sees the
/// system read-only but for its data directory.
#[test]
fn the_systemd_unit_verifies_and_is_hardened() {
    let unit = read("photofinish.service");
    for line in [
        "User=photofinish",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "StateDirectory=photofinish photofinish-ledger",
        "Environment=PHOTOFINISH_ERASURE_LEDGER=/var/lib/photofinish-ledger/erasure-ledger",
        "Environment=PHOTOFINISH_DATA_DIR=/var/lib/photofinish",
        "CapabilityBoundingSet=",
        "ExecStart=/usr/local/bin/photofinish serve --config /etc/photofinish/photofinish.toml",
    ] {
        assert!(unit.lines().any(|l| l == line), "the unit lacks {line}");
    }
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("photofinish.service");
    std::fs::write(&file, unit.replace("/usr/local/bin/photofinish", BIN)).expect("write");
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&file)
        .output()
        .expect("systemd-analyze (Debian's systemd package) is installed");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && said.trim().is_empty(), "{said}");
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=true"])
        .arg(&file)
        .output()
        .expect("systemd-analyze");
    let report = String::from_utf8_lossy(&out.stdout);
    let level: f64 = report
        .lines()
        .find_map(|l| l.split_once("Overall exposure level for photofinish.service: "))
        .and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in {report}"));
    assert!(
        level <= 2.0,
        "exposure {level} (0 best, 10 worst): {report}"
    );
}

/// The example config in `deploy/` is one the server takes.
#[test]
fn the_example_config_is_accepted() {
    let out = Command::new(BIN)
        .arg("config")
        .arg("--config")
        .arg(deploy("photofinish.toml"))
        .env_remove("PHOTOFINISH_RESP_LISTEN")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("listen = \"0.0.0.0:7770\""), "{text}");
}

/// The image's last stage, as `KEY value` instructions; `ENV` split into its variables.
fn final_stage(text: &str) -> (Vec<(String, String)>, BTreeMap<String, String>) {
    let joined = text.replace("\\\n", " ");
    let stage = joined
        .rsplit_once("\nFROM ")
        .map(|(_, s)| s)
        .expect("a FROM");
    let mut lines = Vec::new();
    let mut env = BTreeMap::new();
    for l in stage
        .lines()
        .skip(1)
        .filter(|l| !l.trim_start().starts_with('#'))
    {
        let Some((k, v)) = l.trim().split_once(' ') else {
            continue;
        };
        if k == "ENV" {
            for pair in v.split_whitespace() {
                let (name, value) = pair.split_once('=').expect("NAME=value");
                env.insert(name.to_owned(), value.to_owned());
            }
        }
        lines.push((k.to_owned(), v.trim().to_owned()));
    }
    (lines, env)
}

/// The container file's last stage runs as a non-root user, keeps the data dir the
/// server uses as a volume and listens on all interfaces with keys from
/// `/etc/photofinish/keys.json`; the binary run with that environment (paths moved into
/// a temporary directory, a free port) exits 2 naming the keys file when there is none,
/// and serves when it is there.
#[test]
fn the_container_files_contract_holds_for_the_binary() {
    let (lines, env) = final_stage(&read("Containerfile"));
    let get = |k: &str| {
        lines
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no {k}"))
    };
    let user = get("USER");
    assert!(
        !user.starts_with('0') && !user.starts_with("root"),
        "USER {user}"
    );
    let data = &env["PHOTOFINISH_DATA_DIR"];
    assert!(get("VOLUME").contains(&format!("\"{data}\"")), "{lines:?}");
    // The erasure ledger, outside the data, in a volume of its own the user may write.
    let ledger = std::path::Path::new(&env["PHOTOFINISH_ERASURE_LEDGER"]);
    let ledger_dir = ledger.parent().expect("a directory").display().to_string();
    assert!(!ledger.starts_with(data), "{ledger:?}");
    assert!(
        get("VOLUME").contains(&format!("\"{ledger_dir}\"")),
        "{lines:?}"
    );
    assert!(env["PHOTOFINISH_LISTEN"].starts_with("0.0.0.0:"));
    assert_eq!(env["PHOTOFINISH_KEYS"], "/etc/photofinish/keys.json");
    assert_eq!(get("ENTRYPOINT"), "[\"/usr/local/bin/photofinish\"]");
    assert_eq!(get("CMD"), "[\"serve\"]");

    let dir = tempfile::tempdir().expect("tmp");
    let keys = dir.path().join("keys.json");
    let run_as_image = || {
        let mut cmd = Command::new(BIN);
        cmd.arg("serve");
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let ledger_dir = dir.path().join("ledger");
        std::fs::create_dir_all(&ledger_dir).expect("ledger dir");
        cmd.env("PHOTOFINISH_DATA_DIR", dir.path().join("data"))
            .env(
                "PHOTOFINISH_ERASURE_LEDGER",
                ledger_dir.join("erasure-ledger"),
            )
            .env("PHOTOFINISH_KEYS", &keys)
            .env("PHOTOFINISH_LISTEN", "0.0.0.0:0")
            .env("PHOTOFINISH_RESP_LISTEN", "0.0.0.0:0");
        cmd
    };
    let out = run_as_image().output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&keys.display().to_string()), "{err}");
    let made = Command::new(BIN)
        .args(["key", "new", "--name", "ops", "--scope", "admin", "--keys"])
        .arg(&keys)
        .output()
        .expect("key new");
    assert!(made.status.success());
    let server = Proc::spawn_command(run_as_image());
    let port = server.base.rsplit(':').next().expect("a port");
    let base = format!("http://127.0.0.1:{port}");
    let (ok, _, _) = cli(&["board", "create", "anon"], &base);
    assert!(!ok, "a board was made without a key");
    let secret = String::from_utf8_lossy(&made.stdout).trim().to_owned();
    let (ok, _, err) = cli(&["--token", &secret, "board", "create", "ops"], &base);
    assert!(ok, "{err}");
    assert!(server.terminate().success());
}
