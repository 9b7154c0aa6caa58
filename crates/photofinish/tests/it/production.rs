//! Running it in production (docs/SPEC.md §18) through the binary: the config file and
//! `photofinish config`.

use std::collections::BTreeMap;
use std::process::Command;

use crate::support::*;

/// `photofinish config`'s settings: each key set, with its value and source.
fn settings(out: &str) -> BTreeMap<String, (String, String)> {
    out.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (setting, source) = l.split_once("  # ").expect("a source");
            let table: toml::Table = setting.parse().expect("a TOML line");
            let (k, v) = table.into_iter().next().expect("one key");
            let v = match v {
                toml::Value::String(s) => s,
                other => other.to_string(),
            };
            (k, (v, source.to_owned()))
        })
        .collect()
}

/// Every key `photofinish config` knows, set or not.
fn all_keys() -> Vec<String> {
    let (code, out, err) = photofinish(&["config"], &[]);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .filter_map(|l| match l.strip_prefix("# ") {
            Some(rest) => rest.strip_suffix(": not set").map(str::to_owned),
            None => l.split_once(" = ").map(|(k, _)| k.to_owned()),
        })
        .collect()
}

/// Two files that together set every key of `serve` to a value other than its default
/// (two because some keys exclude each other: a JWT public key or an HS256 secret file, a
/// webhook secret or its file), each printed back by `photofinish config` as the file
/// said, from the file — secrets as `<redacted>`, the Redis URL without its password.
#[test]
fn a_config_file_with_every_key_round_trips_through_photofinish_config() {
    let dir = tempfile::tempdir().expect("tmp");
    let secret_file = dir.path().join("webhook.secret");
    std::fs::write(&secret_file, "filed-secret\n").expect("write");
    let secret_file = secret_file.display().to_string();
    let common: Vec<(&str, &str)> = vec![
        ("listen", "127.0.0.1:17770"),
        ("resp-listen", "off"),
        ("data-dir", "/var/lib/photofinish"),
        ("fsync", "everysec"),
        ("storage", "redis://app:hunter2@127.0.0.1:6390/0"),
        ("redis-namespace", "lb"),
        ("redis-reads", "local"),
        ("redis-wait", "1"),
        ("max-clock-skew", "250ms"),
        ("workers", "3"),
        ("log-format", "json"),
        ("access-log", "true"),
        ("shutdown-delay", "1s"),
        ("shutdown-grace", "5s"),
        ("keys", "/etc/photofinish/keys.json"),
        ("jwt-issuer", "https://id.example"),
        ("jwt-audience", "game"),
        ("allow-unauthenticated", "true"),
        ("tls-cert", "/etc/photofinish/cert.pem"),
        ("tls-key", "/etc/photofinish/key.pem"),
        ("clock-offset-us", "-5"),
        ("close-step-members", "1000"),
        ("header-timeout", "4.5"),
        ("max-connections", "900"),
        ("max-boards", "50"),
        ("max-memory", "2GiB"),
        ("player-rate", "5/s,burst=10"),
        ("anonymous-rate", "50/s"),
        ("idempotency-ttl", "48h"),
        ("audit-retention", "30d"),
        ("erasure-key-file", "/etc/photofinish/erasure.key"),
        ("erasure-ledger", "/var/lib/photofinish-ledger"),
    ];
    let first: Vec<(&str, &str)> = vec![
        ("jwt-key", "/etc/photofinish/jwt.pem"),
        ("webhook-secret", "s3cret-value"),
    ];
    let second: Vec<(&str, &str)> = vec![
        ("jwt-hs256-secret-file", "/etc/photofinish/hs256.secret"),
        ("webhook-secret-file", &secret_file),
    ];
    let mut covered: Vec<String> = common
        .iter()
        .chain(&first)
        .chain(&second)
        .map(|(k, _)| k.to_string())
        .collect();
    covered.sort();
    let mut known = all_keys();
    known.sort();
    assert_eq!(covered, known, "the test sets every key serve has");
    for (n, extra) in [first, second].into_iter().enumerate() {
        let file = dir.path().join(format!("photofinish-{n}.toml"));
        let keys: Vec<(&str, &str)> = common.iter().copied().chain(extra).collect();
        let text: String = keys
            .iter()
            .map(|(k, v)| match *v {
                "true" => format!("{k} = true\n"),
                v => format!("{k} = {}\n", toml::Value::String(v.to_owned())),
            })
            .collect();
        std::fs::write(&file, &text).expect("write");
        let (code, out, err) =
            photofinish(&["config", "--config", &file.display().to_string()], &[]);
        assert_eq!(code, 0, "{err}");
        assert!(
            !out.contains("s3cret-value") && !out.contains("hunter2"),
            "{out}"
        );
        assert!(!out.contains("filed-secret"), "a file was read out: {out}");
        let got = settings(&out);
        let from = format!("file {}", file.display());
        for (k, v) in &keys {
            let want = match *k {
                "webhook-secret" => "<redacted>",
                "storage" => "redis://app:<redacted>@127.0.0.1:6390/0",
                _ => v,
            };
            assert_eq!(
                got.get(*k),
                Some(&(want.to_owned(), from.clone())),
                "{k}: {out}"
            );
        }
        assert_eq!(got.len(), keys.len(), "{out}");
    }
}

/// A flag beats the environment, the environment beats the file, the file beats the
/// default; `data_dir` is the same key as `data-dir`.
#[test]
fn flag_beats_environment_beats_file_beats_default() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("pf.toml");
    std::fs::write(&file, "fsync = \"everysec\"\ndata_dir = \"/srv/pf\"\n").expect("write");
    let file = file.display().to_string();
    let fsync = |args: &[&str], env: &[(&str, &str)]| {
        let (code, out, err) = photofinish(args, env);
        assert_eq!(code, 0, "{err}");
        settings(&out)["fsync"].clone()
    };
    let cfg = ["config", "--config", file.as_str()];
    assert_eq!(fsync(&["config"], &[]), ("always".into(), "default".into()));
    assert_eq!(
        fsync(&cfg, &[]),
        ("everysec".into(), format!("file {file}"))
    );
    let env = [("PHOTOFINISH_FSYNC", "never")];
    assert_eq!(
        fsync(&cfg, &env),
        ("never".into(), "env PHOTOFINISH_FSYNC".into())
    );
    let flagged = [&cfg[..], &["--fsync", "always"]].concat();
    assert_eq!(fsync(&flagged, &env), ("always".into(), "flag".into()));
    // The file can be named by the environment too.
    let (code, out, _) = photofinish(&["config"], &[("PHOTOFINISH_CONFIG", &file)]);
    assert_eq!(code, 0);
    assert_eq!(settings(&out)["data-dir"].0, "/srv/pf");
}

/// An unknown key, a bad value, a key given twice or a file that is not TOML exits 2
/// naming the key and the file, for `serve` as for `config`; nothing is served.
#[test]
fn a_bad_config_file_exits_2_naming_the_key_and_the_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("bad.toml");
    let path = file.display().to_string();
    for (text, names) in [
        ("dta-dir = \"/x\"\n", "unknown key `dta-dir`"),
        ("workers = 0\n", "key `workers`"),
        ("fsync = \"sometimes\"\n", "key `fsync`"),
        ("max-memory = \"lots\"\n", "key `max-memory`"),
        (
            "allow-unauthenticated = \"yes\"\n",
            "key `allow-unauthenticated`",
        ),
        ("[server]\nlisten = \"x\"\n", "unknown key `server`"),
        ("data-dir = \"/a\"\ndata_dir = \"/b\"\n", "given twice"),
        ("fsync = \n", "TOML parse error"),
    ] {
        std::fs::write(&file, text).expect("write");
        for cmd in ["config", "serve"] {
            let (code, _, err) =
                photofinish(&[cmd, "--config", &path, "--listen", "127.0.0.1:0"], &[]);
            assert_eq!(code, 2, "{cmd} with {text:?}: {err}");
            assert!(
                err.contains(&path) && err.contains(names),
                "{cmd} {text:?}: {err}"
            );
        }
    }
    let (code, _, err) = photofinish(&["serve", "--config", "/nonexistent/pf.toml"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/pf.toml"), "{err}");
}

/// `serve --config` runs with the file's settings: the data directory it names is where
/// the data goes.
#[test]
fn serve_runs_with_the_files_settings() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().join("data");
    let file = dir.path().join("pf.toml");
    std::fs::write(
        &file,
        format!(
            "data-dir = {}\nfsync = \"never\"\n",
            toml::Value::String(data.display().to_string())
        ),
    )
    .expect("write");
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&file);
    let server = Proc::spawn_command(cmd);
    let (ok, _, err) = cli(&["board", "create", "cfg"], &server.base);
    assert!(ok, "{err}");
    assert!(server.terminate().success());
    assert!(
        std::fs::read_dir(&data)
            .expect("the file's data dir")
            .count()
            > 0,
        "nothing in {}",
        data.display()
    );
}

/// `--log-format json --access-log`: every line of the log is one JSON object; each
/// request's line carries its request id, method, route template (never the raw path,
/// which names a member), status and latency; no line holds the key's secret.
#[tokio::test(flavor = "multi_thread")]
async fn json_logs_parse_carry_route_templates_and_hold_no_secret() {
    let dir = tempfile::tempdir().expect("tmp");
    let keys = dir.path().join("keys.json");
    let keys_s = keys.display().to_string();
    let (code, out, err) = photofinish(
        &[
            "key", "new", "--keys", &keys_s, "--name", "ops", "--scope", "admin",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let secret = out.trim().to_owned();
    let log = dir.path().join("server.log");
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--log-format", "json"])
        .args([
            "--access-log",
            "--fsync",
            "never",
            "--keys",
            &keys_s,
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .env("RUST_LOG", "info");
    let server = tokio::task::block_in_place(|| Proc::spawn_command_logging(cmd, &log));
    let http = reqwest::Client::new();
    let base = &server.base;
    let send = |rb: reqwest::RequestBuilder| {
        let rb = rb.bearer_auth(&secret);
        async move { rb.send().await.expect("send").status().as_u16() }
    };
    let board = serde_json::json!({"order": "desc"});
    assert_eq!(
        send(http.put(format!("{base}/v1/boards/logs")).json(&board)).await,
        201
    );
    let member = format!("{base}/v1/boards/logs/members/alice.private");
    let score = serde_json::json!({"member": "alice.private", "score": 5});
    assert_eq!(
        send(
            http.post(format!("{base}/v1/boards/logs/scores"))
                .json(&score)
        )
        .await,
        200
    );
    assert_eq!(send(http.get(&member)).await, 200);
    assert_eq!(
        send(http.get(format!("{base}/v1/boards/nope/members/bob.private"))).await,
        404
    );
    let unauthorized = http
        .get(&member)
        .bearer_auth("pf_wrong")
        .send()
        .await
        .expect("send");
    assert_eq!(unauthorized.status().as_u16(), 401);
    assert!(tokio::task::block_in_place(|| server.terminate()).success());
    let text = std::fs::read_to_string(&log).expect("log");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines
        .iter()
        .all(|l| l["level"].is_string() && l["timestamp"].is_string()));
    let requests: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["message"] == "request").collect();
    let routes: Vec<(&str, u64)> = requests
        .iter()
        .map(|l| {
            (
                l["route"].as_str().unwrap_or(""),
                l["status"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    for want in [
        ("/v1/boards/{board}", 201),
        ("/v1/boards/{board}/scores", 200),
        ("/v1/boards/{board}/members/{member}", 200),
        ("/v1/boards/{board}/members/{member}", 404),
        ("/v1/boards/{board}/members/{member}", 401),
    ] {
        assert!(routes.contains(&want), "{want:?} not in {routes:?}");
    }
    for l in &requests {
        assert!(
            l["request_id"].is_string() && l["method"].is_string(),
            "{l}"
        );
        assert!(l["latency_us"].is_u64(), "{l}");
    }
    assert!(
        !text.contains(".private"),
        "a raw path reached the log: {text}"
    );
    assert!(
        !text.contains(&secret[3..]) && !text.contains("pf_wrong"),
        "a secret in the log"
    );
}

/// A flag or variable excluding a file's key wins over it (whichever side declares the
/// exclusion), a flag may require a key the file gives, and settings refused together
/// exit 2 naming the file.
#[test]
fn flags_and_file_keys_combine_as_flags_do() {
    let dir = tempfile::tempdir().expect("tmp");
    let secret = dir.path().join("webhook.secret");
    std::fs::write(&secret, "filed\n").expect("write");
    let file = dir.path().join("pf.toml");
    let path = file.display().to_string();
    let write = |text: String| std::fs::write(&file, text).expect("write");
    let quoted = |p: &std::path::Path| toml::Value::String(p.display().to_string());
    write(format!("webhook-secret-file = {}\n", quoted(&secret)));
    let env = [("PHOTOFINISH_WEBHOOK_SECRET", "from-env")];
    let (code, out, err) = photofinish(&["config", "--config", &path], &env);
    assert_eq!(code, 0, "{err}");
    let got = settings(&out);
    assert_eq!(got["webhook-secret"].1, "env PHOTOFINISH_WEBHOOK_SECRET");
    assert!(!got.contains_key("webhook-secret-file"), "{out}");
    write("jwt-hs256-secret-file = \"/etc/pf/hs256\"\n".into());
    let (code, out, err) = photofinish(&["config", "--config", &path, "--jwt-key", "/k.pem"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !settings(&out).contains_key("jwt-hs256-secret-file"),
        "{out}"
    );
    write("tls-key = \"/etc/pf/key.pem\"\n".into());
    let args = [
        "config",
        "--config",
        &path,
        "--tls-cert",
        "/etc/pf/cert.pem",
    ];
    let (code, out, err) = photofinish(&args, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(settings(&out)["tls-key"].1, format!("file {path}"));
    write("shutdown-delay = \"5s\"\nshutdown-grace = \"5s\"\n".into());
    for cmd in ["config", "serve"] {
        let (code, _, err) = photofinish(&[cmd, "--config", &path, "--listen", "127.0.0.1:0"], &[]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(
            err.contains("--shutdown-delay") && err.contains(&path),
            "{err}"
        );
    }
}
