//! Several columns (docs/SPEC.md §13) end to end, on every backend and through both
//! doors: a board ranking by wins (desc), then kills (desc), then fewest deaths (asc),
//! then who got there first. Config in and out, writes by column name with each column's
//! rule and a write's `op`, `best` over whole tuples, every answer carrying `scores` in
//! column order, ties on equal tuples, `rank?scores=`, the RESP forms, restarts, an
//! idempotent replay — and every refusal changing nothing. One-column boards answer as
//! they always did (the rest of the suite; here, that `scores` never appears on them).

use redis::aio::MultiplexedConnection;
use serde_json::{json, Value};

use crate::support::*;

/// The arena board's config.
fn arena() -> Value {
    json!({"columns": [
        {"name": "wins"},
        {"name": "kills", "max_increment": 100},
        {"name": "deaths", "order": "asc", "update": "max", "min": 0}
    ]})
}

/// Every entry of a page as (member, [wins, kills, deaths], rank).
fn rows(page: &Value) -> Vec<(String, Vec<i64>, u64)> {
    page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let values: Vec<i64> = ["wins", "kills", "deaths"]
                .iter()
                .map(|c| e["scores"][c].as_i64().expect("every column"))
                .collect();
            assert_eq!(e["score"], values[0], "score is the first column: {e}");
            (
                e["member"].as_str().expect("member").to_owned(),
                values,
                e["rank"].as_u64().expect("rank"),
            )
        })
        .collect()
}

async fn write(s: &Server, member: &str, scores: Value) -> (reqwest::StatusCode, Value) {
    s.post(
        "/v1/boards/arena/scores",
        json!({"member": member, "scores": scores}),
    )
    .await
}

/// The arena as a page in `style`.
async fn standings(s: &Server, style: &str) -> Vec<(String, Vec<i64>, u64)> {
    let (st, page) = s
        .get(&format!(
            "/v1/boards/arena/entries?limit=100&ranking={style}"
        ))
        .await;
    assert_eq!(st, 200, "{page}");
    rows(&page)
}

async fn columns_rank_in_their_directions(kind: Kind) {
    let s = Server::start(kind).await;
    let (st, board) = s.put("/v1/boards/arena", arena()).await;
    assert!(st.is_success(), "{board}");
    assert_eq!(
        board["columns"],
        json!([
            {"name": "wins", "order": "desc", "update": "incr"},
            {"name": "kills", "order": "desc", "update": "incr", "max_increment": 100},
            {"name": "deaths", "order": "asc", "update": "max", "min": 0}
        ])
    );
    // First writes set the columns they name and 0 elsewhere.
    let (st, w) = write(&s, "ann", json!({"wins": 3, "kills": 10})).await;
    assert_eq!(st, 200, "{w}");
    assert_eq!(w["scores"], json!({"wins": 3, "kills": 10, "deaths": 0}));
    assert_eq!(
        (w["score"].clone(), w["rank"].clone()),
        (json!(3), json!(1))
    );
    write(&s, "bob", json!({"wins": 3, "kills": 10, "deaths": 2})).await;
    write(&s, "cat", json!({"wins": 3, "kills": 12, "deaths": 9})).await;
    write(&s, "dan", json!({"wins": 4})).await;
    // After that each column follows its rule: wins and kills add, deaths keeps the max.
    let (_, w) = write(&s, "bob", json!({"kills": 0, "deaths": 1})).await;
    assert_eq!(w["scores"], json!({"wins": 3, "kills": 10, "deaths": 2}));
    assert_eq!(
        w["changed"],
        json!(false),
        "an equal tuple keeps reached_at"
    );
    // eve reaches ann's tuple later: same competition and dense rank, below her.
    write(&s, "eve", json!({"wins": "3", "kills": 10})).await;
    let want = [
        ("dan", vec![4, 0, 0], 1),
        ("cat", vec![3, 12, 9], 2),
        ("ann", vec![3, 10, 0], 3),
        ("eve", vec![3, 10, 0], 4),
        ("bob", vec![3, 10, 2], 5),
    ];
    let listed = standings(&s, "ordinal").await;
    let expect: Vec<_> = want
        .iter()
        .map(|(m, t, r)| (m.to_string(), t.clone(), *r))
        .collect();
    assert_eq!(listed, expect);
    let ranks = |v: Vec<(String, Vec<i64>, u64)>| v.into_iter().map(|r| r.2).collect::<Vec<_>>();
    assert_eq!(ranks(standings(&s, "competition").await), [1, 2, 3, 3, 5]);
    assert_eq!(ranks(standings(&s, "dense").await), [1, 2, 3, 3, 4]);
    // A write's op overrides every column it names.
    let (_, w) = s
        .post(
            "/v1/boards/arena/scores",
            json!({"member": "bob", "scores": {"deaths": 0}, "op": "set"}),
        )
        .await;
    assert_eq!(w["scores"], json!({"wins": 3, "kills": 10, "deaths": 0}));
    assert_eq!(w["rank"], json!(5), "reached the tuple last");
    // Every answer that carries an entry carries scores.
    // In column order on the wire (a JSON parser may sort keys; the text does not).
    let text = s
        .http
        .get(format!("{}/v1/boards/arena/members/cat", s.base))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("text");
    assert!(
        text.contains(r#""scores":{"wins":3,"kills":12,"deaths":9}"#),
        "{text}"
    );
    let (_, m) = s.get("/v1/boards/arena/members/cat").await;
    assert_eq!(m["scores"], json!({"wins": 3, "kills": 12, "deaths": 9}));
    let (_, around) = s
        .get("/v1/boards/arena/members/ann/around?before=1&after=1")
        .await;
    assert_eq!(rows(&around).len(), 3);
    let (_, q) = s
        .post(
            "/v1/boards/arena/members:query",
            json!({"members": ["eve", "dan", "zed"]}),
        )
        .await;
    assert_eq!(rows(&q).len(), 2);
    assert_eq!(q["missing"], json!(["zed"]));
    let (_, t) = s.get("/v1/boards/arena/thresholds?ranks=2").await;
    assert_eq!(
        t["thresholds"][0]["scores"],
        json!({"wins": 3, "kills": 12, "deaths": 9})
    );
    let (_, across) = s.get("/v1/members/cat").await;
    assert_eq!(
        across["boards"][0]["scores"],
        json!({"wins": 3, "kills": 12, "deaths": 9}),
        "{across}"
    );
    // The rank a tuple would get: every column, in column order.
    for (query, rank) in [
        ("scores=3,10,0", 6),
        ("scores=3,10,0&ranking=competition", 3),
        ("scores=3,10,0&ranking=dense", 3),
        ("scores=3,11,100", 3),
        ("scores=9,0,0", 1),
    ] {
        let (st, r) = s.get(&format!("/v1/boards/arena/rank?{query}")).await;
        assert_eq!(
            (st.as_u16(), r["rank"].clone()),
            (200, json!(rank)),
            "{query}: {r}"
        );
    }
    let (_, r) = s.get("/v1/boards/arena/rank?scores=3,10,0").await;
    assert_eq!(r["scores"], json!({"wins": 3, "kills": 10, "deaths": 0}));
    // Restarted (log replay or the Redis log), the board is the same.
    let before = standings(&s, "dense").await;
    let s = s.restart().await;
    assert_eq!(standings(&s, "dense").await, before);
    let (_, board) = s.get("/v1/boards/arena").await;
    assert_eq!(board["columns"][2]["update"], json!("max"));
    s.stop().await;
}

async fn refusals_change_nothing(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/arena", arena()).await;
    write(&s, "ann", json!({"wins": 1, "kills": 5, "deaths": 1})).await;
    let before = standings(&s, "ordinal").await;
    let srv = &s;
    let post = |body: Value| async move { srv.post("/v1/boards/arena/scores", body).await };
    for (body, status, code) in [
        // The board's columns are a rule no schema states (422); `score` with `scores`
        // the document excludes (400), docs/SPEC.md §3.
        (json!({"member": "ann", "score": 1}), 422, "invalid_score"),
        (
            json!({"member": "ann", "score": 1, "scores": {"wins": 1}}),
            400,
            "invalid_score",
        ),
        (
            json!({"member": "ann", "scores": {"assists": 1}}),
            422,
            "invalid_score",
        ),
        (json!({"member": "ann", "scores": {}}), 422, "invalid_score"),
        (
            json!({"member": "ann", "scores": {"wins": 1}, "op": "best"}),
            422,
            "invalid_score",
        ),
        (
            json!({"member": "ann", "scores": {"wins": 1.5}}),
            422,
            "score_not_integer",
        ),
        (json!({"member": "ann"}), 400, "malformed_json"),
        // Column bounds: 422 naming the column.
        (
            json!({"member": "ann", "scores": {"kills": 101}}),
            422,
            "score_rejected",
        ),
        (
            json!({"member": "ann", "scores": {"deaths": -1}, "op": "set"}),
            422,
            "score_rejected",
        ),
        // Overflow in one column refuses the whole write.
        (
            json!({"member": "ann", "scores": {"wins": i64::MAX, "kills": 1}}),
            422,
            "score_overflow",
        ),
    ] {
        let got = post(body.clone()).await;
        assert_error(&got, status, code);
        if code == "score_rejected" {
            let message = got.1["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("kills") || message.contains("deaths"),
                "{message}"
            );
        }
        assert_eq!(standings(&s, "ordinal").await, before, "{body}");
    }
    for query in [
        "score=1",
        "scores=1,2",
        "scores=1,2,3,4",
        "score=1&scores=1,2,3",
    ] {
        let got = s.get(&format!("/v1/boards/arena/rank?{query}")).await;
        assert_error(&got, 422, "invalid_score");
    }
    // Bad column configs.
    for (i, columns) in [
        json!([{"name": "a"}, {"name": "a"}]),
        json!([{"name": "Kills"}]),
        json!([{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}, {"name": "f"}]),
        json!([{"name": "a", "order": "up"}]),
        json!([{"name": "a", "update": "avg"}]),
        json!([{"name": "a", "min": 5, "max": 4}]),
        json!([{"name": "a", "colour": "red"}]),
    ]
    .into_iter()
    .enumerate()
    {
        let got = s
            .put(&format!("/v1/boards/bad{i}"), json!({"columns": columns}))
            .await;
        let code = if i == 6 { "malformed_json" } else { "invalid_config" };
        // A name twice and min above max compare values: rules, 422 (docs/SPEC.md §3).
        let status = if i == 0 || i == 5 { 422 } else { 400 };
        assert_error(&got, status, code);
    }
    let got = s
        .put(
            "/v1/boards/bad",
            json!({"columns": [{"name": "a"}, {"name": "b"}], "min_score": 0}),
        )
        .await;
    assert_error(&got, 422, "invalid_config");
    let got = s
        .put(
            "/v1/boards/bad",
            json!({"update": "best", "columns": [{"name": "a", "update": "max"}]}),
        )
        .await;
    assert_error(&got, 422, "invalid_config");
    let (st, _) = s.get("/v1/boards/bad").await;
    assert_eq!(st, 404, "no refused board exists");
    // Columns are fixed for the board's life: a patch cannot name them, and creating the
    // board again with others is a conflict.
    let patch = s
        .call(
            reqwest::Method::PATCH,
            "/v1/boards/arena",
            Some(json!({"columns": [{"name": "wins"}]})),
        )
        .await;
    assert_error(&patch, 400, "malformed_json");
    let again = s
        .put(
            "/v1/boards/arena",
            json!({"columns": [{"name": "wins"}, {"name": "kills"}]}),
        )
        .await;
    assert_error(&again, 409, "board_config_conflict");
    let (_, board) = s.get("/v1/boards/arena").await;
    assert_eq!(board["columns"].as_array().map(Vec::len), Some(3));
    s.stop().await;
}

async fn best_keeps_the_better_tuple(kind: Kind) {
    let s = Server::start(kind).await;
    // Stars (more is better), then fewest moves.
    let (st, b) = s
        .put(
            "/v1/boards/puzzle",
            json!({"update": "best", "columns": [{"name": "stars"}, {"name": "moves", "order": "asc"}]}),
        )
        .await;
    assert!(st.is_success(), "{b}");
    let srv = &s;
    let post = |member: &str, stars: i64, moves: i64| {
        let body = json!({"member": member, "scores": {"stars": stars, "moves": moves}});
        async move { srv.post("/v1/boards/puzzle/scores", body).await.1 }
    };
    assert_eq!(post("p", 2, 30).await["changed"], json!(true));
    assert_eq!(
        post("p", 2, 31).await["changed"],
        json!(false),
        "more moves"
    );
    assert_eq!(
        post("p", 1, 5).await["changed"],
        json!(false),
        "fewer stars"
    );
    let w = post("p", 2, 29).await;
    assert_eq!(w["scores"], json!({"stars": 2, "moves": 29}));
    let w = post("p", 3, 99).await;
    assert_eq!(w["scores"], json!({"stars": 3, "moves": 99}));
    // A one-column board never shows `scores`.
    s.put("/v1/boards/plain", json!({})).await;
    let (_, w) = s
        .post(
            "/v1/boards/plain/scores",
            json!({"member": "a", "score": 5}),
        )
        .await;
    assert!(w.get("scores").is_none(), "{w}");
    let (_, w) = s
        .post(
            "/v1/boards/plain/scores",
            json!({"member": "a", "scores": {"score": 2}}),
        )
        .await;
    assert_eq!((w["score"].clone(), w.get("scores")), (json!(7), None));
    let both = s
        .post(
            "/v1/boards/plain/scores",
            json!({"member": "a", "score": 1, "scores": {"score": 2}}),
        )
        .await;
    assert_error(&both, 400, "invalid_score");
    let (_, m) = s.get("/v1/boards/plain/members/a").await;
    assert_eq!(m["score"], json!(7), "the refusal changed nothing");
    s.stop().await;
}

async fn the_resp_door_takes_one_value_per_column(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c: MultiplexedConnection = resp(&s).await;
    let cmd = |args: &[&str]| {
        let mut k = redis::cmd(args[0]);
        for a in &args[1..] {
            k.arg(*a);
        }
        k
    };
    let ok: redis::RedisResult<redis::Value> = cmd(&[
        "LB.CREATE",
        "race",
        "ORDER",
        "desc",
        "COLUMNS",
        "2",
        "laps",
        "-",
        "max",
        "time",
        "asc",
        "min",
        "RETENTION",
        "3",
    ])
    .query_async(&mut c)
    .await;
    assert_eq!(reply_json(ok), json!("OK"));
    let (_, board) = s.get("/v1/boards/race").await;
    assert_eq!(
        board["columns"],
        json!([
            {"name": "laps", "order": "desc", "update": "max"},
            {"name": "time", "order": "asc", "update": "min"}
        ])
    );
    assert_eq!(board["retention"], json!(3));
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.SUBMIT", "race", "a", "5", "300"])
        .query_async(&mut c)
        .await;
    let got = reply_json(got);
    assert_eq!(got[0], json!([5, 300]), "{got}");
    assert_eq!(got[1], json!(1));
    let got: redis::RedisResult<redis::Value> =
        cmd(&["LB.SUBMIT", "race", "b", "5", "280", "META", "{\"car\":1}"])
            .query_async(&mut c)
            .await;
    assert_eq!(reply_json(got)[1], json!(1), "fewer seconds, same laps");
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.SET", "race", "a", "6", "400"])
        .query_async(&mut c)
        .await;
    assert_eq!(reply_json(got), json!([6, 400]));
    let got: redis::RedisResult<redis::Value> =
        cmd(&["LB.SCORE", "race", "b"]).query_async(&mut c).await;
    assert_eq!(reply_json(got), json!([5, 280]));
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.RANGE", "race", "0", "10"])
        .query_async(&mut c)
        .await;
    let got = reply_json(got);
    assert_eq!(got[0][1], json!("a"));
    assert_eq!(got[0][2], json!([6, 400]));
    assert_eq!(got[1][2], json!([5, 280]));
    // BEST keeps the better tuple; INCR adds to every column; AROUND rows carry arrays.
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.BEST", "race", "b", "5", "290"])
        .query_async(&mut c)
        .await;
    assert_eq!(
        reply_json(got),
        json!([5, 280]),
        "a slower lap time is not better"
    );
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.INCR", "race", "b", "1", "-10"])
        .query_async(&mut c)
        .await;
    assert_eq!(reply_json(got), json!([6, 270]));
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.AROUND", "race", "b", "1", "1"])
        .query_async(&mut c)
        .await;
    let got = reply_json(got);
    assert_eq!(
        (got[0][1].clone(), got[0][2].clone()),
        (json!("b"), json!([6, 270]))
    );
    assert_eq!(
        (got[1][1].clone(), got[1][2].clone()),
        (json!("a"), json!([6, 400]))
    );
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.SET", "race", "b", "5", "280"])
        .query_async(&mut c)
        .await;
    assert_eq!(reply_json(got), json!([5, 280]));
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.RANKOF", "race", "6", "401"])
        .query_async(&mut c)
        .await;
    assert_eq!(reply_json(got), json!(2), "one second slower than a");
    // Refusals: one value, too many values, on a board of two columns.
    for args in [
        &["LB.SUBMIT", "race", "c", "5"][..],
        &["LB.INCR", "race", "c", "1", "2", "3"],
        &["LB.SUBMIT", "race", "c", "1", "2", "3", "4", "5", "6"],
        &["LB.RANKOF", "race", "5"],
    ] {
        let got: redis::RedisResult<redis::Value> = cmd(args).query_async(&mut c).await;
        assert_eq!(
            reply_json(got),
            json!({"error": "invalid_score"}),
            "{args:?}"
        );
    }
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.CARD", "race"]).query_async(&mut c).await;
    assert_eq!(reply_json(got), json!(2), "the refusals added no one");
    // A one-column board answers exactly as before.
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.INCR", "solo", "x", "5"])
        .query_async(&mut c)
        .await;
    assert_eq!(reply_json(got), json!({"error": "board_not_found"}));
    s.put("/v1/boards/solo", json!({})).await;
    let got: redis::RedisResult<redis::Value> = cmd(&["LB.INCR", "solo", "x", "5"])
        .query_async(&mut c)
        .await;
    assert_eq!(reply_json(got), json!(5));
    s.stop().await;
}

async fn export_and_import_keep_every_column(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/arena", arena()).await;
    s.put("/v1/boards/copy", arena()).await;
    write(&s, "ann", json!({"wins": 2, "kills": 3})).await;
    write(&s, "bob", json!({"wins": 2, "kills": 3, "deaths": 1})).await;
    for (member, scores) in [
        ("cid", json!({"wins": i64::MAX, "kills": -100, "deaths": 5})),
        (
            "dan",
            json!({"wins": i64::MIN.to_string(), "deaths": i64::MAX}),
        ),
    ] {
        let (st, w) = write(&s, member, scores).await;
        assert_eq!(st, 200, "{w}");
    }
    let text = s
        .http
        .get(format!("{}/v1/boards/arena/export", s.base))
        .send()
        .await
        .expect("export")
        .text()
        .await
        .expect("text");
    let first: Value = serde_json::from_str(text.lines().next().expect("a line")).expect("json");
    assert_eq!(first["score"], json!(i64::MAX));
    assert_eq!(
        first["scores"],
        json!({"wins": i64::MAX, "kills": -100, "deaths": 5})
    );
    assert!(text
        .lines()
        .last()
        .unwrap_or_default()
        .contains("-9223372036854775808"));
    let import = |board: &str, body: String| {
        let url = format!("{}/v1/boards/{board}/import", s.base);
        let http = s.http.clone();
        async move {
            let r = http
                .post(url)
                .header("content-type", "application/x-ndjson")
                .body(body)
                .send()
                .await
                .expect("import");
            (r.status().as_u16(), r.json::<Value>().await.expect("json"))
        }
    };
    // A line whose score is not its first column's, or that leaves a column out, refuses
    // the whole import.
    let (st, e) = import(
        "copy",
        r#"{"member":"x","score":1,"scores":{"wins":2,"kills":0,"deaths":0}}"#.to_owned(),
    )
    .await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (422, json!("invalid_entries"))
    );
    let (st, _) = import("copy", r#"{"member":"x","scores":{"wins":2}}"#.to_owned()).await;
    assert_eq!(st, 422);
    let (st, done) = import("copy", text).await;
    assert_eq!(st, 200, "{done}");
    let (_, a) = s.get("/v1/boards/arena/entries?ranking=dense").await;
    let (_, b) = s.get("/v1/boards/copy/entries?ranking=dense").await;
    assert_eq!(a["entries"], b["entries"]);
    s.stop().await;
}

async fn events_carry_every_column(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/arena", arena()).await;
    let mut stream =
        photofinish_testkit::sse::EventStream::open(&s.base, "/v1/boards/arena/events", None, None)
            .await
            .expect("stream opens");
    write(&s, "ann", json!({"wins": 2, "kills": 3})).await;
    let e = stream.next().await;
    assert_eq!(e.event, "score");
    assert_eq!(
        (e.data["score"].clone(), e.data["scores"].clone()),
        (json!(2), json!({"wins": 2, "kills": 3, "deaths": 0}))
    );
    s.stop().await;
}

async fn a_keyed_write_replays_its_scores(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/arena", arena()).await;
    let body = json!({"member": "ann", "scores": {"wins": 1, "kills": 2}});
    let send = || async {
        s.http
            .post(format!("{}/v1/boards/arena/scores", s.base))
            .header("Idempotency-Key", "k-1")
            .json(&body)
            .send()
            .await
            .expect("send")
    };
    let first: Value = send().await.json().await.expect("json");
    let again = send().await;
    assert_eq!(
        again
            .headers()
            .get("idempotent-replayed")
            .map(|v| v.to_str().ok()),
        Some(Some("true"))
    );
    let again: Value = again.json().await.expect("json");
    assert_eq!(first, again);
    assert_eq!(again["scores"], json!({"wins": 1, "kills": 2, "deaths": 0}));
    s.stop().await;
}

conformance!(
    columns_rank_in_their_directions,
    refusals_change_nothing,
    best_keeps_the_better_tuple,
    the_resp_door_takes_one_value_per_column,
    a_keyed_write_replays_its_scores,
    events_carry_every_column,
    export_and_import_keep_every_column,
);
