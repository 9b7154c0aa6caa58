//! `photofinish export`, `import` and `import-redis` on the real binary (docs/SPEC.md §11,
//! docs/migrate.md): an export imported into a new board answers the same in every rank
//! style and survives `kill -9` (the import file is replayed) and a clean restart (then it
//! is in the snapshot); each seed article's ZSET, built here by the article's own recipe,
//! imports in its order with the exact scores and, where the packing keeps it, the time;
//! a value that does not decode is reported with its member and nothing is imported.

use redis::Commands;
use serde_json::{json, Value};

use crate::support::*;

/// 2026-11-23T12:00:00Z in ms.
const TS: i64 = 1_795_435_200_000;

fn run(args: &[&str], base: &str) -> String {
    let (ok, out, err) = cli(args, base);
    assert!(ok, "{args:?}: {out}{err}");
    out
}

async fn put(http: &reqwest::Client, base: &str, board: &str, cfg: Value) {
    let r = http
        .put(format!("{base}/v1/boards/{board}"))
        .json(&cfg)
        .send()
        .await
        .expect("put");
    assert_eq!(r.status(), 201);
}

async fn all_styles(http: &reqwest::Client, base: &str, board: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for style in ["ordinal", "competition", "dense"] {
        let mut v = entries(http, base, board, style).await;
        v.as_object_mut().expect("page").remove("period");
        out.push(v);
    }
    out
}

fn import_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("import-"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_export_imports_and_survives_kill_9_and_a_clean_restart() {
    let work = tempfile::tempdir().expect("tmp");
    let dir = work.path().join("data");
    let http = reqwest::Client::new();
    let server = tokio::task::block_in_place(|| Proc::start(BIN, &dir, "always"));
    let base = server.base.clone();
    put(&http, &base, "src", json!({"update": "set"})).await;
    put(&http, &base, "dst", json!({"update": "set"})).await;
    let batch = json!({"entries": [
        {"member": "ann", "score": 5, "metadata": {"skin": "red"}},
        {"member": "bob", "score": 5},
        {"member": "cy", "score": i64::MAX},
        {"member": "dee", "score": i64::MIN},
        {"member": "a-member-name-longer-than-sixteen", "score": 7},
    ]});
    let r = http
        .post(format!("{base}/v1/boards/src/scores:batch"))
        .json(&batch)
        .send()
        .await
        .expect("batch");
    assert_eq!(r.status(), 200);
    let file = work.path().join("src.jsonl");
    let (b, f) = (base.clone(), file.to_str().expect("path").to_owned());
    let out =
        tokio::task::spawn_blocking(move || run(&["export", "--board", "src", "--out", &f], &b))
            .await
            .expect("export");
    assert!(out.contains("exported 5 entries of src"), "{out}");
    let text = std::fs::read_to_string(&file).expect("file");
    assert_eq!(text.lines().count(), 5);
    let (b, f2) = (base.clone(), file.clone());
    let out = tokio::task::spawn_blocking(move || {
        run(
            &["import", "--board", "dst", f2.to_str().expect("path")],
            &b,
        )
    })
    .await
    .expect("import");
    assert!(out.contains("imported 5 entries into dst"), "{out}");
    let want = all_styles(&http, &base, "src").await;
    assert_eq!(all_styles(&http, &base, "dst").await, want);
    // Exported again to stdout: the same bytes.
    let b = base.clone();
    let again = tokio::task::spawn_blocking(move || run(&["export", "--board", "dst"], &b))
        .await
        .expect("export");
    assert_eq!(again, text);
    // Importing again is refused: the period holds entries.
    let (b, f2) = (base.clone(), file.clone());
    let (ok, _, err) = tokio::task::spawn_blocking(move || {
        cli(
            &["import", "--board", "dst", f2.to_str().expect("path")],
            &b,
        )
    })
    .await
    .expect("import");
    assert!(!ok && err.contains("board_not_empty"), "{err}");

    // kill -9: the log's record names the import file, which recovery reads.
    assert_eq!(import_files(&dir), 1);
    server.kill9();
    let server = tokio::task::block_in_place(|| Proc::start(BIN, &dir, "always"));
    assert_eq!(all_styles(&http, &server.base, "dst").await, want);
    // A clean stop snapshots everything: the file is not needed any more.
    let status = server.terminate();
    assert!(status.success(), "exit status {status:?}");
    let server = tokio::task::block_in_place(|| Proc::start(BIN, &dir, "always"));
    assert_eq!(import_files(&dir), 0);
    assert_eq!(all_styles(&http, &server.base, "dst").await, want);
}

/// One seed's ZSET: its members with the packed scores the article's code computes, the
/// flags that decode it, and what each member should come back as: (member, score,
/// reached_at ms or None for "the import's time").
struct Seed {
    name: &'static str,
    flags: Vec<String>,
    zset: Vec<(String, f64)>,
    want: Vec<(&'static str, i64, Option<i64>)>,
}

fn seeds() -> Vec<Seed> {
    let flags = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // (member, score, ms): ann and bob tie on score, bob first; cy and dee tie on score
    // and on the very millisecond (the ZSET's order between them is kept).
    // Small scores: the fraction packings keep the time only while the score leaves the
    // double enough bits (at 300 they do not; that case is below).
    let rows: [(&str, i64, i64); 5] = [
        ("ann", 30, TS + 5_000),
        ("bob", 30, TS + 1_000),
        ("cy", 12, TS + 2_000),
        ("dee", 12, TS + 2_000),
        ("eve", 7, TS),
    ];
    // ZREVRANGE lists equal doubles by member, descending: dee before cy.
    let want_timed = vec![
        ("bob", 30, Some(TS + 1_000)),
        ("ann", 30, Some(TS + 5_000)),
        ("dee", 12, Some(TS + 2_000)),
        ("cy", 12, Some(TS + 2_000)),
        ("eve", 7, Some(TS)),
    ];
    let packed = |f: &dyn Fn(i64, i64) -> f64| -> Vec<(String, f64)> {
        rows.iter()
            .map(|(m, s, t)| (m.to_string(), f(*s, *t)))
            .collect()
    };
    let c000 = 9_999_999_999_999_i64;
    let t_max = 30_000_000_000_000_i64;
    let end = TS + 80 * 86_400_000; // 002: the end of a three-month window
    vec![
        // 000: contribution · 10^13 + (Integer.MAX − ts), "Integer.MAX" a 13-digit constant.
        Seed {
            name: "000-decimal",
            flags: flags(&[
                "--encoding",
                "decimal",
                "--digits",
                "13",
                "--epoch",
                "9999999999999",
                "--unit",
                "ms",
            ]),
            zset: packed(&|s, t| (s * 10_i64.pow(13) + (c000 - t)) as f64),
            want: want_timed.clone(),
        },
        // 000: contribution + (Integer.MAX − ts) · 10^−13 (the Lua adds floor(old) + both).
        Seed {
            name: "000-fraction",
            flags: flags(&[
                "--encoding",
                "fraction",
                "--scale",
                "10000000000000",
                "--epoch",
                "9999999999999",
                "--unit",
                "ms",
            ]),
            zset: packed(&|s, t| (s as f64).floor() + (c000 - t) as f64 * 1e-13),
            want: want_timed.clone(),
        },
        // 001: new_score + (T_MAX − ts) / D, T_MAX = 3e13, D = T_MAX + 1.
        Seed {
            name: "001-fraction",
            flags: flags(&[
                "--encoding",
                "fraction",
                "--scale",
                "30000000000001",
                "--epoch",
                "30000000000000",
                "--unit",
                "ms",
            ]),
            zset: packed(&|s, t| s as f64 + (t_max as f64 - t as f64) / (t_max as f64 + 1.0)),
            want: want_timed.clone(),
        },
        // 002 RankOperator: (point << 34) | (PERIOD_END − now).
        Seed {
            name: "002-bits-34",
            flags: vec![
                "--encoding".into(),
                "bits".into(),
                "--bits".into(),
                "34".into(),
                "--epoch".into(),
                end.to_string(),
                "--unit".into(),
                "ms".into(),
            ],
            zset: packed(&|s, t| ((s << 34) | (end - t)) as f64),
            want: want_timed.clone(),
        },
        // 004: (point << 41) | (periodEnd − now).
        Seed {
            name: "004-bits-41",
            flags: vec![
                "--encoding".into(),
                "bits".into(),
                "--bits".into(),
                "41".into(),
                "--epoch".into(),
                end.to_string(),
                "--unit".into(),
                "ms".into(),
            ],
            zset: packed(&|s, t| ((s << 41) | (end - t)) as f64),
            want: want_timed.clone(),
        },
        // 003: score + 1 − ts / 1e13.
        Seed {
            name: "003-fraction",
            flags: flags(&[
                "--encoding",
                "fraction",
                "--scale",
                "10000000000000",
                "--epoch",
                "10000000000000",
                "--unit",
                "ms",
            ]),
            zset: packed(&|s, t| s as f64 + (1.0 - t as f64 / 10_000_000_000_000_f64)),
            want: want_timed.clone(),
        },
        // 002's divisor: point + 1e6 / ts. The ZSET's order is kept; no time.
        Seed {
            name: "002-divisor",
            flags: flags(&["--encoding", "divisor"]),
            zset: packed(&|s, t| s as f64 + 1_000_000.0 / t as f64),
            want: vec![
                ("bob", 30, None),
                ("ann", 30, None),
                ("dee", 12, None),
                ("cy", 12, None),
                ("eve", 7, None),
            ],
        },
        // Plain integer scores: equal ones keep the ZSET's order.
        Seed {
            name: "plain",
            flags: flags(&["--encoding", "plain"]),
            zset: packed(&|s, _| s as f64),
            // Plain: equal scores list in the ZSET's order (by member, descending).
            want: vec![
                ("bob", 30, None),
                ("ann", 30, None),
                ("dee", 12, None),
                ("cy", 12, None),
                ("eve", 7, None),
            ],
        },
    ]
}

/// A throwaway Redis to import from and a server (the binary, `fsync=always`) to import
/// into, with their files in a temporary directory that outlives both.
fn redis_and_server() -> (
    tempfile::TempDir,
    photofinish_testkit::redis::RedisProcess,
    Proc,
) {
    let work = tempfile::tempdir().expect("tmp");
    let redis = photofinish_testkit::redis::RedisProcess::start(work.path(), &[]).expect("redis");
    let server =
        tokio::task::block_in_place(|| Proc::start(BIN, &work.path().join("data"), "always"));
    (work, redis, server)
}

/// The CLI with `args` against `base`, off the async runtime's workers.
async fn cli_async(args: Vec<String>, base: &str) -> (bool, String, String) {
    let base = base.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cli(&args, &base)
    })
    .await
    .expect("cli")
}

/// An `asc` board takes the ZSET in its own order, lowest first (`ZRANGE`): rows a
/// packing without time ties on keep the ZSET's order (by member, as Redis orders ties).
/// The client once read the board's order from a field the API does not have, and read
/// every ZSET best-first for a `desc` board.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_asc_board_imports_the_zset_lowest_first() {
    let (_work, redis, server) = redis_and_server();
    let mut r = redis.client().expect("client");
    let (base, http) = (server.base.clone(), reqwest::Client::new());
    for (m, z) in [("b", 5.0), ("a", 5.0), ("c", 3.0)] {
        let _: i64 = r.zadd("lb:asc", m, z).expect("zadd");
    }
    put(
        &http,
        &base,
        "asc",
        json!({"order": "asc", "update": "set"}),
    )
    .await;
    let url = redis.url();
    let args: Vec<String> = [
        "import-redis",
        "--redis",
        &url,
        "--key",
        "lb:asc",
        "--board",
        "asc",
        "--encoding",
        "plain",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = cli_async(args.clone(), &base).await;
    assert!(out.0, "{}{}", out.1, out.2);
    let page = entries(&http, &base, "asc", "ordinal").await;
    let names: Vec<&str> = page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["member"].as_str().expect("member"))
        .collect();
    assert_eq!(names, ["c", "a", "b"], "{page}");
    // A board of several columns (docs/SPEC.md §13) is not a ZSET's: refused, nothing in.
    put(
        &http,
        &base,
        "multi",
        json!({"columns": [{"name": "wins"}, {"name": "kills"}]}),
    )
    .await;
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a == "asc" {
                "multi".to_owned()
            } else {
                a.clone()
            }
        })
        .collect();
    let out = cli_async(args, &base).await;
    assert!(!out.0, "{}{}", out.1, out.2);
    assert!(out.2.contains("one-column boards only"), "{}", out.2);
    let page = entries(&http, &base, "multi", "ordinal").await;
    assert_eq!(page["total"], json!(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_seeds_zset_imports_in_its_order_with_exact_scores_and_times() {
    let (_work, redis, server) = redis_and_server();
    let mut r = redis.client().expect("client");
    let (base, http) = (server.base.clone(), reqwest::Client::new());
    for seed in seeds() {
        let key = format!("lb:{}", seed.name);
        let board = seed.name.replace(['-'], "_");
        for (m, z) in &seed.zset {
            let _: i64 = r.zadd(&key, m, *z).expect("zadd");
        }
        put(&http, &base, &board, json!({"update": "set"})).await;
        let mut args: Vec<String> = vec![
            "import-redis".into(),
            "--redis".into(),
            redis.url(),
            "--key".into(),
            key.clone(),
            "--board".into(),
            board.clone(),
        ];
        args.extend(seed.flags.iter().cloned());
        let out = cli_async(args, &base).await;
        assert!(out.0, "{}: {}{}", seed.name, out.1, out.2);
        let page = entries(&http, &base, &board, "ordinal").await;
        let got: Vec<(String, i64, i64)> = page["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| {
                let at: jiff::Timestamp =
                    e["reached_at"].as_str().expect("at").parse().expect("ts");
                (
                    e["member"].as_str().expect("m").to_owned(),
                    e["score"].as_i64().expect("s"),
                    at.as_millisecond(),
                )
            })
            .collect();
        let want = seed.want.clone();
        let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        let want_names: Vec<&str> = want.iter().map(|w| w.0).collect();
        assert_eq!(names, want_names, "{}", seed.name);
        for ((_, score, at), (_, wscore, wat)) in got.iter().zip(&want) {
            assert_eq!(score, wscore, "{}", seed.name);
            if let Some(wat) = wat {
                assert_eq!(at, wat, "{}", seed.name);
            }
        }
        if want.iter().all(|w| w.2.is_none()) {
            // No time in the packing: every entry took the import's.
            assert!(
                got.windows(2).all(|w| w[0].2 == w[1].2),
                "{}: {got:?}",
                seed.name
            );
            assert!(out.2.contains("keeps no time"), "{}", out.2);
        }
    }
    // Undecodable values are reported with their member, and nothing is imported: a
    // decimal-packed score past 2^53, and 003's fraction at a score of 300.
    let cases = [
        (
            "lb:bad-decimal",
            "big",
            (901 * 10_i64.pow(13) + 5) as f64,
            vec![
                "--encoding",
                "decimal",
                "--digits",
                "13",
                "--epoch",
                "9999999999999",
                "--unit",
                "ms",
            ],
            "2^53",
        ),
        (
            "lb:bad-003",
            "ann",
            300.0 + (1.0 - TS as f64 / 1e13),
            vec![
                "--encoding",
                "fraction",
                "--scale",
                "10000000000000",
                "--epoch",
                "10000000000000",
                "--unit",
                "ms",
            ],
            "lost",
        ),
        (
            "lb:bad-plain",
            "frac",
            2.5,
            vec!["--encoding", "plain"],
            "integer",
        ),
    ];
    for (i, (key, member, z, flags, says)) in cases.into_iter().enumerate() {
        let board = format!("bad{i}");
        for k in 0..3 {
            let _: i64 = r.zadd(key, format!("ok{k}"), 1.0 + k as f64).expect("zadd");
        }
        let _: i64 = r.zadd(key, member, z).expect("zadd");
        put(&http, &base, &board, json!({})).await;
        let mut args = vec!["import-redis", "--redis"];
        let url = redis.url();
        args.push(&url);
        args.extend(["--key", key, "--board", &board]);
        args.extend(flags);
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (ok, out, err) = cli_async(args, &base).await;
        assert!(!ok, "{key}: {out}");
        assert!(
            err.contains(&format!("member {member:?}")) && err.contains(says),
            "{key}: {err}"
        );
        assert!(err.contains("nothing was imported"), "{err}");
        let page = entries(&http, &base, &board, "ordinal").await;
        assert_eq!(page["total"], 0, "{key}: {page}");
    }
}
