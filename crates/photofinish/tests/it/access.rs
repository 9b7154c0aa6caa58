//! Access control through the binary: `photofinish key new|list|revoke`, a server with
//! `--keys` that drops a revoked key on SIGHUP (and keeps its keys when the file turns
//! unreadable), client commands with `--token`, and protected mode's exit status.

use std::process::Command;

use crate::support::*;

fn hup(pid: u32) {
    let ok = Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
}

/// Polls `check` for up to 10 s (a signal is handled asynchronously).
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{what} did not happen within 10 s");
}

#[test]
fn keys_are_made_listed_used_and_revoked_without_a_restart() {
    let dir = tempfile::tempdir().expect("tmp");
    let keys = dir.path().join("keys.json");
    let keys_s = keys.to_str().expect("utf-8");
    let new = |name: &str, scope: &str| {
        let (code, out, err) = photofinish(
            &[
                "key", "new", "--keys", keys_s, "--name", name, "--scope", scope, "--board", "b*",
            ],
            &[],
        );
        assert_eq!(code, 0, "{err}");
        let secret = out.trim().to_owned();
        // The secret alone on stdout, one line; the file never holds it.
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(secret.starts_with("pf_"), "{secret}");
        let file = std::fs::read_to_string(&keys).expect("keys file");
        assert!(
            !file.contains(&secret[3..]),
            "the keys file holds the secret"
        );
        secret
    };
    let admin = new("ops", "admin");
    let game = new("game", "write");
    let (code, out, _) = photofinish(&["key", "list", "--keys", keys_s], &[]);
    assert_eq!(code, 0);
    assert!(
        out.contains("ops") && out.contains("game") && out.contains("b*"),
        "{out}"
    );
    assert!(
        !out.contains(&admin) && !out.contains(&game),
        "list shows a secret"
    );
    let (code, _, err) = photofinish(
        &[
            "key", "new", "--keys", keys_s, "--name", "ops", "--scope", "read",
        ],
        &[],
    );
    assert_ne!(code, 0, "a duplicate name was accepted");
    assert!(err.contains("already"), "{err}");

    let proc = Proc::start_with(BIN, &dir.path().join("data"), &["--keys", keys_s]);
    let server = proc.base.as_str();
    let client = |token: &str, args: &[&str]| {
        photofinish(
            args,
            &[("PHOTOFINISH_SERVER", server), ("PHOTOFINISH_TOKEN", token)],
        )
    };
    assert_eq!(client(&admin, &["board", "create", "b1"]).0, 0);
    let (code, out, err) = client(&game, &["submit", "b1", "ann", "7"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ann"), "{out}");
    // The write key may not create boards: the error names the code and status.
    let (code, _, err) = client(&game, &["board", "create", "b2"]);
    assert_ne!(code, 0);
    assert!(err.contains("forbidden") && err.contains("403"), "{err}");
    // --token on the command line works as the environment variable does.
    let (code, out, _) = photofinish(&["--server", server, "--token", &game, "top", "b1"], &[]);
    assert_eq!(code, 0);
    assert!(out.contains("ann"), "{out}");

    // Revoke the game key: after SIGHUP the server refuses it, the admin key still works.
    let (code, _, err) = photofinish(&["key", "revoke", "--keys", keys_s, "game"], &[]);
    assert_eq!(code, 0, "{err}");
    hup(proc.pid());
    eventually("the revoked key being refused", || {
        client(&game, &["top", "b1"]).2.contains("unauthorized")
    });
    assert_eq!(client(&admin, &["top", "b1"]).0, 0);
    // A broken keys file is not taken: the keys in force stay.
    std::fs::write(&keys, b"{ broken").expect("break");
    hup(proc.pid());
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(
        client(&admin, &["top", "b1"]).0,
        0,
        "a broken file dropped the keys"
    );
    proc.kill9();
}

#[test]
fn an_open_server_beyond_loopback_exits_2_unless_allowed() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().join("data");
    let data_s = data.to_str().expect("utf-8");
    let (code, _, err) = photofinish(
        &["serve", "--listen", "0.0.0.0:0", "--data-dir", data_s],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--keys") && err.contains("--allow-unauthenticated"),
        "{err}"
    );
    // Loopback stays open without credentials; beyond it the opt-in serves it open.
    let open = Proc::start_with(BIN, &data, &[]);
    drop(open);
    let mut cmd = Command::new(BIN);
    cmd.args([
        "serve",
        "--listen",
        "0.0.0.0:0",
        "--allow-unauthenticated",
        "--data-dir",
        data_s,
    ]);
    let allowed = Proc::spawn_command(cmd);
    assert!(allowed.base.contains(":"), "{}", allowed.base);
}
