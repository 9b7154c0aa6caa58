//! The RESP door (docs/SPEC.md §9) with redis-rs as the client, on every backend: the same
//! random operation sequence sent over HTTP to one server and over RESP to a twin answers
//! alike at every step (writes, removals, overflow refusals, and every read in every rank
//! style, i64 extremes and equal scores included); errors carry the stable codes and
//! change nothing; pipelines of thousands answer in order and read their own writes;
//! concurrent clients lose no increment; idempotency keys, RESP3 and the connection
//! commands; writes over RESP reach the event stream.

use redis::aio::MultiplexedConnection;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::*;

/// An instant both twins' clocks are pinned at, so their `reached_at`s agree.
const T0_US: i64 = 1_795_000_000_000_000;

/// An HTTP answer as the RESP door shows it: an error as `{"error": code}`.
fn http_error(got: &(StatusCode, Value)) -> Option<Value> {
    (!got.0.is_success()).then(|| json!({"error": got.1["error"]["code"]}))
}

/// An HTTP write answer as `LB.SUBMIT` shows it.
fn as_submit(got: &(StatusCode, Value)) -> Value {
    http_error(got).unwrap_or_else(|| {
        let v = &got.1;
        json!([
            v["score"],
            v["rank"],
            micros(&v["reached_at"]),
            i64::from(v["changed"] == true)
        ])
    })
}

/// An HTTP page as `LB.RANGE`/`LB.AROUND` show it.
fn as_rows(got: &(StatusCode, Value)) -> Value {
    http_error(got).unwrap_or_else(|| {
        let rows = got.1["entries"].as_array().cloned().unwrap_or_default();
        Value::Array(
            rows.iter()
                .map(|e| json!([e["rank"], e["member"], e["score"], micros(&e["reached_at"])]))
                .collect(),
        )
    })
}

/// Compares every read of board `x` over both doors.
async fn reads_agree(http: &Server, c: &mut MultiplexedConnection, members: &[String], at: &str) {
    for style in ["ordinal", "competition", "dense"] {
        let all = http
            .get(&format!("/v1/boards/x/entries?limit=1000&ranking={style}"))
            .await;
        let got = lb(c, &["LB.RANGE", "x", "0", "1000", "RANKING", style]).await;
        assert_eq!(got, as_rows(&all), "{at}: range {style}");
        let page = http
            .get(&format!(
                "/v1/boards/x/entries?offset=3&limit=4&ranking={style}"
            ))
            .await;
        let got = lb(c, &["LB.RANGE", "x", "3", "4", "RANKING", style]).await;
        assert_eq!(got, as_rows(&page), "{at}: page {style}");
        assert_eq!(lb(c, &["LB.CARD", "x"]).await, all.1["total"], "{at}: card");
        for m in members {
            let one = http
                .get(&format!("/v1/boards/x/members/{m}?ranking={style}"))
                .await;
            let (rank, score) = match one.0 {
                StatusCode::NOT_FOUND => (Value::Null, Value::Null),
                _ => (one.1["rank"].clone(), one.1["score"].clone()),
            };
            let got = lb(c, &["LB.RANK", "x", m, "RANKING", style]).await;
            assert_eq!(got, rank, "{at}: rank of {m} {style}");
            assert_eq!(lb(c, &["LB.SCORE", "x", m]).await, score, "{at}: score {m}");
            let around = http
                .get(&format!(
                    "/v1/boards/x/members/{m}/around?before=2&after=3&ranking={style}"
                ))
                .await;
            let want = match around.0 {
                StatusCode::NOT_FOUND => json!([]),
                _ => as_rows(&around),
            };
            let got = lb(c, &["LB.AROUND", "x", m, "2", "3", "RANKING", style]).await;
            assert_eq!(got, want, "{at}: around {m} {style}");
        }
    }
}

async fn twins(kind: Kind, seed: u64, order: &str) {
    let http = Server::start_at(kind, T0_US).await;
    let resp_server = Server::start_at(kind, T0_US).await;
    let mut c = resp(&resp_server).await;
    let (st, _) = http.put("/v1/boards/x", json!({"order": order})).await;
    assert_eq!(st, 201);
    assert_eq!(lb(&mut c, &["LB.CREATE", "x", "ORDER", order]).await, "OK");
    let members: Vec<String> = (0..8).map(|i| format!("m{i}")).collect();
    // i64's ends, and scores past 2^53 that differ by 1 (one double on Redis).
    let (min, max, big) = (i64::MIN, i64::MAX, 1_i64 << 53);
    let scores = [
        min,
        min + 1,
        -big - 1,
        -big,
        -5,
        0,
        0,
        3,
        3,
        7,
        big,
        big + 1,
        max - 1,
        max,
    ];
    let mut rng = Rng(seed);
    for step in 0..160 {
        let m = rng.pick(&members).clone();
        let score = rng.pick(&scores).to_string();
        let at = format!("seed {seed:#x} step {step}");
        match rng.below(10) {
            0 => {
                let got = http.delete(&format!("/v1/boards/x/members/{m}")).await;
                let want = match got.0 {
                    StatusCode::NO_CONTENT => json!(1),
                    StatusCode::NOT_FOUND => json!(0),
                    _ => as_submit(&got),
                };
                assert_eq!(lb(&mut c, &["LB.REM", "x", &m]).await, want, "{at}: rem");
            }
            1..=3 => {
                let op = *rng.pick(&["incr", "set", "best"]);
                let body = json!({"member": m, "score": score, "op": op});
                let got = http.post("/v1/boards/x/scores", body).await;
                let name = format!("LB.{}", op.to_uppercase());
                let want = http_error(&got).unwrap_or_else(|| got.1["score"].clone());
                let answer = lb(&mut c, &[&name, "x", &m, &score]).await;
                assert_eq!(answer, want, "{at}: {name} {m} {score}");
            }
            _ => {
                let op = *rng.pick(&["incr", "set", "best"]);
                let body = json!({"member": m, "score": score, "op": op});
                let got = http.post("/v1/boards/x/scores", body).await;
                let answer = lb(&mut c, &["LB.SUBMIT", "x", &m, &score, "OP", op]).await;
                assert_eq!(answer, as_submit(&got), "{at}: submit {m} {score} {op}");
            }
        }
        if step % 20 == 19 {
            reads_agree(&http, &mut c, &members, &at).await;
        }
    }
    reads_agree(&http, &mut c, &members, "end").await;
    let info = http.get("/v1/boards/x").await.1;
    // RESP2: a flat array of field, value.
    let flat = lb(&mut c, &["LB.INFO", "x"]).await;
    let pairs = flat.as_array().expect("an array in RESP2");
    let got: serde_json::Map<String, Value> = pairs
        .chunks(2)
        .map(|kv| (kv[0].as_str().expect("field").to_owned(), kv[1].clone()))
        .collect();
    assert_eq!(got.len(), info.as_object().map_or(0, |o| o.len()));
    for (k, v) in info.as_object().expect("board") {
        let want = match v {
            Value::Bool(b) => json!(i64::from(*b)), // RESP2 booleans are 1/0
            v => v.clone(),
        };
        assert_eq!(got[k], want, "LB.INFO field {k}");
    }
    http.stop().await;
    resp_server.stop().await;
}

async fn both_doors_answer_a_random_sequence_alike(kind: Kind) {
    twins(kind, 0x9e37_79b9_7f4a_7c15, "desc").await;
    twins(kind, 0xdead_beef_cafe_f00d, "asc").await;
}

/// Everything a refused command could have changed.
async fn state(c: &mut MultiplexedConnection) -> Vec<Value> {
    let mut out = Vec::new();
    for board in ["b", "c"] {
        out.push(lb(c, &["LB.INFO", board]).await);
        out.push(lb(c, &["LB.RANGE", board, "0", "1000"]).await);
    }
    out
}

async fn errors_carry_stable_codes_and_change_nothing(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp(&s).await;
    assert_eq!(
        lb(&mut c, &["LB.CREATE", "b", "UPDATE", "best"]).await,
        "OK"
    );
    // The same config again is fine; another is a conflict.
    assert_eq!(
        lb(&mut c, &["lb.create", "b", "update", "BEST"]).await,
        "OK"
    );
    assert_eq!(lb(&mut c, &["LB.INCR", "b", "ann", "5"]).await, json!(5));
    assert_eq!(lb(&mut c, &["LB.SET", "b", "bob", "9"]).await, json!(9));
    let big = "x".repeat(2000);
    let meta_big = format!("{{\"k\":\"{big}\"}}");
    let over = (i128::from(i64::MAX) + 1).to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["LB.CREATE", "b", "UPDATE", "incr"],
            "board_config_conflict",
        ),
        (
            vec!["LB.CREATE", "b", "ORDER", "sideways"],
            "invalid_config",
        ),
        (
            vec!["LB.CREATE", "c", "TZ", "Mars/Olympus"],
            "invalid_config",
        ),
        (vec!["LB.CREATE", "c", "RETENTION", "-1"], "invalid_config"),
        (vec!["LB.CREATE", "c", "COLOR", "red"], "invalid_parameter"),
        (vec!["LB.CREATE", "bad name"], "invalid_board_name"),
        (vec!["LB.INCR", "nope", "ann", "1"], "board_not_found"),
        (vec!["LB.INCR", "b", "ann", "1.5"], "score_not_integer"),
        (vec!["LB.INCR", "b", "ann", "1e3"], "score_not_integer"),
        (vec!["LB.INCR", "b", "ann", &over], "score_out_of_range"),
        (vec!["LB.INCR", "b", "", "1"], "invalid_member"),
        (
            vec!["LB.SUBMIT", "b", "ann", "1", "OP", "double"],
            "invalid_op",
        ),
        (
            vec!["LB.SUBMIT", "b", "ann", "1", "META", "[1]"],
            "invalid_metadata",
        ),
        (
            vec!["LB.SUBMIT", "b", "ann", "1", "META", "{"],
            "invalid_metadata",
        ),
        (
            vec!["LB.SUBMIT", "b", "ann", "1", "META", &meta_big],
            "metadata_too_large",
        ),
        (
            vec!["LB.SUBMIT", "b", "ann", "1", "AT", "yesterday"],
            "invalid_time",
        ),
        (
            vec!["LB.SUBMIT", "b", "ann", "1", "OP"],
            "invalid_parameter",
        ),
        (
            vec!["LB.SUBMIT", "b", "ann", "1", "OP", "set", "OP", "set"],
            "invalid_parameter",
        ),
        (
            vec!["LB.INCR", "b", "ann", "1", "IDEMPOTENCY", ""],
            "invalid_idempotency_key",
        ),
        (vec!["LB.RANGE", "b", "0", "1001"], "invalid_parameter"),
        (vec!["LB.RANGE", "b", "-1", "10"], "invalid_parameter"),
        (
            vec!["LB.RANGE", "b", "0", "10", "RANKING", "alphabetical"],
            "invalid_parameter",
        ),
        (
            vec!["LB.AROUND", "b", "ann", "501", "0"],
            "invalid_parameter",
        ),
        (
            vec!["LB.RANK", "b", "ann", "PERIOD", "1999-01-01"],
            "period_not_found",
        ),
        (vec!["LB.SCORE", "nope", "ann"], "board_not_found"),
        (vec!["LB.REM", "b", ""], "invalid_parameter"),
        (vec!["LB.INFO", "nope"], "board_not_found"),
        (vec!["LB.NOPE", "b"], "unknown"),
        (vec!["LB.INCR", "b", "ann"], "wrong"),
        (vec!["LB.DROP", "b", "extra"], "wrong"),
        (vec!["SELECT", "1"], "DB"),
        (vec!["HELLO", "4"], "NOPROTO"),
    ];
    let before = state(&mut c).await;
    for (args, code) in &cases {
        let got = lb(&mut c, args).await;
        assert_eq!(got["error"], json!(code), "{args:?}: {got}");
        assert_eq!(state(&mut c).await, before, "{args:?} changed something");
    }
    // Redis's wording for arity and unknown commands, word for word.
    let mut arity = redis::cmd("LB.INCR");
    arity.arg("b").arg("ann");
    let e = arity
        .query_async::<redis::Value>(&mut c)
        .await
        .expect_err("wrong arity");
    assert_eq!(
        e.detail(),
        Some("wrong number of arguments for 'lb.incr' command")
    );
    // A member not ranked is nil, an absent member or board removed is 0.
    assert_eq!(lb(&mut c, &["LB.SCORE", "b", "zed"]).await, Value::Null);
    assert_eq!(lb(&mut c, &["LB.RANK", "b", "zed"]).await, Value::Null);
    assert_eq!(
        lb(&mut c, &["LB.AROUND", "b", "zed", "1", "1"]).await,
        json!([])
    );
    assert_eq!(lb(&mut c, &["LB.REM", "b", "zed"]).await, json!(0));
    assert_eq!(lb(&mut c, &["LB.DROP", "nope"]).await, json!(0));
    assert_eq!(lb(&mut c, &["LB.DROP", "b"]).await, json!(1));
    assert_eq!(
        lb(&mut c, &["LB.INFO", "b"]).await["error"],
        "board_not_found"
    );
    s.stop().await;
}

async fn pipelines_of_thousands_answer_in_order(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp(&s).await;
    assert_eq!(lb(&mut c, &["LB.CREATE", "p"]).await, "OK");
    assert_eq!(lb(&mut c, &["LB.CREATE", "q", "ORDER", "asc"]).await, "OK");
    // 5,000 commands: increments to two boards, reads of their own writes, errors.
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    let mut want = Vec::new();
    let mut totals = std::collections::HashMap::<String, i64>::new();
    for i in 0..5000i64 {
        let board = if i % 3 == 0 { "q" } else { "p" };
        let member = format!("m{}", i % 37);
        match i % 10 {
            7 => {
                pipe.cmd("LB.SCORE").arg(board).arg(&member);
                want.push(
                    totals
                        .get(&format!("{board}/{member}"))
                        .map_or(json!(null), |t| json!(t)),
                );
            }
            8 => {
                pipe.cmd("LB.INCR").arg(board).arg(&member).arg("x");
                want.push(json!({"error": "score_not_integer"}));
            }
            _ => {
                pipe.cmd("LB.INCR").arg(board).arg(&member).arg(i);
                let t = totals.entry(format!("{board}/{member}")).or_default();
                *t += i;
                want.push(json!(*t));
            }
        }
    }
    let got: Vec<redis::Value> = pipe.query_async(&mut c).await.expect("pipeline");
    let got: Vec<Value> = got.into_iter().map(|v| reply_json(Ok(v))).collect();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "answer {i}");
    }
    // The same totals over HTTP.
    for (key, total) in &totals {
        let (board, member) = key.split_once('/').expect("key");
        let (_, v) = s.get(&format!("/v1/boards/{board}/members/{member}")).await;
        assert_eq!(v["score"], json!(total), "{key}");
    }
    s.stop().await;
}

async fn concurrent_clients_lose_no_increment(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp(&s).await;
    assert_eq!(lb(&mut c, &["LB.CREATE", "c"]).await, "OK");
    let mut tasks = Vec::new();
    for client in 0..8 {
        let mut conn = resp(&s).await;
        tasks.push(tokio::spawn(async move {
            for round in 0..10 {
                let mut pipe = redis::pipe();
                for i in 0..50 {
                    pipe.cmd("LB.INCR").arg("c").arg("shared").arg(1);
                    pipe.cmd("LB.INCR")
                        .arg("c")
                        .arg(format!("own{client}"))
                        .arg(round * 50 + i);
                }
                let _: Vec<i64> = pipe.query_async(&mut conn).await.expect("pipeline");
            }
        }));
    }
    for t in tasks {
        t.await.expect("client");
    }
    assert_eq!(
        lb(&mut c, &["LB.SCORE", "c", "shared"]).await,
        json!(8 * 500)
    );
    let own: i64 = (0..500).sum();
    for client in 0..8 {
        let m = format!("own{client}");
        assert_eq!(lb(&mut c, &["LB.SCORE", "c", &m]).await, json!(own));
    }
    assert_eq!(lb(&mut c, &["LB.CARD", "c"]).await, json!(9));
    s.stop().await;
}

async fn idempotency_keys_apply_once(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp(&s).await;
    let create = ["LB.CREATE", "k", "IDEMPOTENCY", "create-1"];
    assert_eq!(lb(&mut c, &create).await, "OK");
    assert_eq!(lb(&mut c, &create).await, "OK");
    let incr = ["LB.INCR", "k", "ann", "5", "IDEMPOTENCY", "retry-1"];
    assert_eq!(lb(&mut c, &incr).await, json!(5));
    assert_eq!(
        lb(&mut c, &incr).await,
        json!(5),
        "a retry answers the first answer"
    );
    // The key's case-insensitive command spelling is the same request.
    let lower = ["lb.incr", "k", "ann", "5", "idempotency", "retry-1"];
    assert_eq!(lb(&mut c, &lower).await, json!(5));
    assert_eq!(
        lb(&mut c, &["LB.SCORE", "k", "ann"]).await,
        json!(5),
        "applied once"
    );
    let other = ["LB.INCR", "k", "ann", "6", "IDEMPOTENCY", "retry-1"];
    assert_eq!(lb(&mut c, &other).await["error"], "idempotency_key_reused");
    let submit = ["LB.SUBMIT", "k", "bob", "7", "IDEMPOTENCY", "s-1"];
    let first = lb(&mut c, &submit).await;
    assert_eq!(lb(&mut c, &submit).await, first);
    let rem = ["LB.REM", "k", "bob", "IDEMPOTENCY", "rem-1"];
    assert_eq!(lb(&mut c, &rem).await, json!(1));
    assert_eq!(lb(&mut c, &rem).await, json!(1), "a replayed removal");
    assert_eq!(lb(&mut c, &["LB.CARD", "k"]).await, json!(1));
    // A refusal is not remembered: the same key works once the board exists.
    let missing = ["LB.INCR", "later", "ann", "1", "IDEMPOTENCY", "l-1"];
    assert_eq!(lb(&mut c, &missing).await["error"], "board_not_found");
    assert_eq!(lb(&mut c, &["LB.CREATE", "later"]).await, "OK");
    assert_eq!(lb(&mut c, &missing).await, json!(1));
    // Keys are the credential's, whichever door: the same key over HTTP is another request.
    let (st, v) = s
        .http
        .post(format!("{}/v1/boards/k/scores", s.base))
        .header("Idempotency-Key", "retry-1")
        .json(&json!({"member": "ann", "score": 5}))
        .send()
        .await
        .map(|r| (r.status(), r))
        .expect("http");
    let body: Value = v.json().await.expect("json");
    assert_eq!(
        (st.as_u16(), &body["error"]["code"]),
        (422, &json!("idempotency_key_reused"))
    );
    s.stop().await;
}

async fn resp3_and_the_connection_commands(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp_as(&s, None, true).await.expect("RESP3");
    assert_eq!(lb(&mut c, &["LB.CREATE", "r"]).await, "OK");
    let got = lb(&mut c, &["LB.SUBMIT", "r", "ann", "3"]).await;
    assert_eq!(got[0], json!(3));
    assert_eq!(got[1], json!(1));
    assert_eq!(got[3], json!(true), "changed is a boolean in RESP3");
    let again = lb(&mut c, &["LB.SUBMIT", "r", "ann", "0"]).await;
    assert_eq!(again[3], json!(false));
    assert_eq!(again[2], got[2], "reached_at stays when nothing changed");
    let info = lb(&mut c, &["LB.INFO", "r"]).await;
    assert_eq!(info["name"], "r");
    assert_eq!(
        info["public_read"],
        json!(false),
        "a map with booleans in RESP3"
    );
    assert_eq!(info["members"], json!(1));
    assert_eq!(lb(&mut c, &["LB.SCORE", "r", "nobody"]).await, Value::Null);
    assert_eq!(lb(&mut c, &["PING"]).await, "PONG");
    assert_eq!(lb(&mut c, &["PING", "hi"]).await, "hi");
    assert_eq!(lb(&mut c, &["ECHO", "x y"]).await, "x y");
    assert_eq!(lb(&mut c, &["SELECT", "0"]).await, "OK");
    assert_eq!(lb(&mut c, &["CLIENT", "SETNAME", "game-1"]).await, "OK");
    assert_eq!(lb(&mut c, &["CLIENT", "GETNAME"]).await, "game-1");
    assert_eq!(
        lb(&mut c, &["CLIENT", "SETINFO", "LIB-NAME", "x"]).await,
        "OK"
    );
    let count = lb(&mut c, &["COMMAND", "COUNT"]).await;
    let infos = lb(&mut c, &["COMMAND", "INFO", "lb.incr", "nope"]).await;
    assert_eq!(infos[0][0], "lb.incr");
    assert_eq!(infos[0][1], json!(-4));
    assert_eq!(infos[1], Value::Null);
    let all = lb(&mut c, &["COMMAND"]).await;
    assert_eq!(json!(all.as_array().map_or(0, Vec::len)), count);
    // HELLO 2 goes back to RESP2 on this connection.
    let hello = lb(&mut c, &["HELLO", "2"]).await;
    assert_eq!((&hello[4], &hello[5]), (&json!("proto"), &json!(2)));
    assert_eq!(
        lb(&mut c, &["LB.SUBMIT", "r", "bob", "1"]).await[3],
        json!(1)
    );
    s.stop().await;
}

async fn writes_over_resp_reach_the_event_stream(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp(&s).await;
    assert_eq!(lb(&mut c, &["LB.CREATE", "e"]).await, "OK");
    let mut stream =
        photofinish_testkit::sse::EventStream::open(&s.base, "/v1/boards/e/events", None, None)
            .await
            .expect("stream");
    let mut pipe = redis::pipe();
    pipe.cmd("LB.INCR").arg("e").arg("ann").arg(4);
    pipe.cmd("LB.INCR").arg("e").arg("bob").arg(2);
    let _: Vec<i64> = pipe.query_async(&mut c).await.expect("pipeline");
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let ev = stream.next().await;
        if ev.event == "score" {
            seen.push((ev.data["member"].clone(), ev.data["score"].clone()));
        }
    }
    assert_eq!(
        seen,
        vec![(json!("ann"), json!(4)), (json!("bob"), json!(2))]
    );
    s.stop().await;
}

conformance!(
    both_doors_answer_a_random_sequence_alike,
    errors_carry_stable_codes_and_change_nothing,
    pipelines_of_thousands_answer_in_order,
    concurrent_clients_lose_no_increment,
    idempotency_keys_apply_once,
    resp3_and_the_connection_commands,
    writes_over_resp_reach_the_event_stream,
);
