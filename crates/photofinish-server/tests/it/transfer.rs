//! Export and import (docs/SPEC.md §11) over HTTP, on every backend: an export imported
//! into a fresh board answers exactly as the original in every rank style — ties by time,
//! ties at the same instant, i64 extremes, long names and metadata included — and every
//! refused import (a period not empty, a malformed line, a member twice, a broken score
//! rule, an unknown board) changes nothing, so the same period then takes a good import.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::*;

/// 2026-11-23T12:00:00Z, µs.
const NOON_US: i64 = 1_795_435_200_000_000;

/// `POST /v1/boards/{board}/import{query}` with `body` as it is.
async fn import(s: &Server, board: &str, query: &str, body: &str) -> (StatusCode, Value) {
    let resp = s
        .http
        .post(format!("{}/v1/boards/{board}/import{query}", s.base))
        .header("content-type", "application/x-ndjson")
        .body(body.to_owned())
        .send()
        .await
        .expect("import");
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// `GET /v1/boards/{board}/export{query}`: the status and the body text.
async fn export(s: &Server, board: &str, query: &str) -> (StatusCode, String) {
    let resp = s
        .http
        .get(format!("{}/v1/boards/{board}/export{query}", s.base))
        .send()
        .await
        .expect("export");
    let status = resp.status();
    (status, resp.text().await.expect("body"))
}

/// Every page of a board in every rank style, the way a client reads it.
async fn answers(s: &Server, board: &str, period: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for style in ["ordinal", "competition", "dense"] {
        let path = format!("/v1/boards/{board}/entries?limit=1000&ranking={style}&period={period}");
        let (st, mut page) = s.get(&path).await;
        assert_eq!(st, 200, "{page}");
        page.as_object_mut().expect("page").remove("period");
        out.push(page);
    }
    out
}

/// A mix of what ranks hard: equal scores at different and at equal instants, the i64
/// extremes, names past the 16 inline bytes, metadata.
async fn fill(s: &Server, board: &str) {
    let at = |s: i64| {
        jiff::Timestamp::from_microsecond(NOON_US + s)
            .expect("ts")
            .to_string()
    };
    let entries = json!({"entries": [
        {"member": "ann", "score": 50, "at": at(3), "metadata": {"team": "red", "n": 1}},
        {"member": "bob", "score": 50, "at": at(1)},
        {"member": "cy", "score": 50, "at": at(1)},
        {"member": "dee", "score": 50, "at": at(1)},
        {"member": "max", "score": i64::MAX, "at": at(5)},
        {"member": "min", "score": i64::MIN, "at": at(5)},
        {"member": "a-rather-long-member-name-of-forty-bytes!", "score": -7, "at": at(2),
         "metadata": {"note": "long \"quoted\" ünïcode"}},
        {"member": "near", "score": 9_007_199_254_740_993_i64, "at": at(4)},
        {"member": "near2", "score": 9_007_199_254_740_992_i64, "at": at(4)},
        {"member": "zero", "score": 0, "at": at(6)},
    ]});
    let (st, b) = s
        .post(&format!("/v1/boards/{board}/scores:batch"), entries)
        .await;
    assert_eq!(st, 200, "{b}");
}

async fn an_export_imports_into_the_same_answers(kind: Kind) {
    let s = Server::start_at(kind, NOON_US + 60_000_000).await;
    for order in ["desc", "asc"] {
        let config = json!({"order": order, "update": "set", "reset": "daily"});
        let (src, dst) = (format!("src-{order}"), format!("dst-{order}"));
        assert_eq!(
            s.put(&format!("/v1/boards/{src}"), config.clone()).await.0,
            201
        );
        assert_eq!(s.put(&format!("/v1/boards/{dst}"), config).await.0, 201);
        fill(&s, &src).await;
        let (st, text) = export(&s, &src, "").await;
        assert_eq!(st, 200, "{text}");
        assert_eq!(text.lines().count(), 10, "{text}");
        let first = text.lines().next().expect("line");
        let want = if order == "desc" { "max" } else { "min" };
        let prefix = format!("{{\"member\":\"{want}\",\"score\":");
        assert!(first.starts_with(&prefix), "{first}");
        assert!(
            first.contains(r#","reached_at":"2026-11-23T12:00:00.000005Z","metadata":null}"#),
            "{first}"
        );
        let (st, done) = import(&s, &dst, "", &text).await;
        assert_eq!(st, 200, "{done}");
        assert_eq!(
            done,
            json!({"period": "2026-11-23", "imported": 10, "erased_dropped": 0})
        );
        assert_eq!(
            answers(&s, &dst, "current").await,
            answers(&s, &src, "current").await,
            "{order}"
        );
        // And out again: byte for byte the same file.
        assert_eq!(export(&s, &dst, "?period=2026-11-23").await.1, text);
        // The imported board goes on like any other: a new write ranks among them.
        let (st, w) = s
            .post(
                &format!("/v1/boards/{dst}/scores"),
                json!({"member": "late", "score": 50}),
            )
            .await;
        assert_eq!(st, 200, "{w}");
        let (_, m) = s.get(&format!("/v1/boards/{dst}/members/late")).await;
        let (_, total) = s.get(&format!("/v1/boards/{dst}")).await;
        assert_eq!(total["members"], 11, "{total}");
        // After three better scores and the four earlier 50s, whichever the order.
        assert_eq!(m["rank"], 8, "{order}: {m}");
    }
    // An empty current period exports as an empty file; a closed one without entries is
    // not found.
    assert_eq!(
        s.put("/v1/boards/empty", json!({"reset": "daily"})).await.0,
        201
    );
    assert_eq!(
        export(&s, "empty", "").await,
        (StatusCode::OK, String::new())
    );
    assert_eq!(export(&s, "src-desc", "?period=2026-11-22").await.0, 404);
    s.stop().await;
}

async fn imports_take_unsorted_lines_and_fill_closed_periods(kind: Kind) {
    let s = Server::start_at(kind, NOON_US).await;
    let config = json!({"reset": "daily", "retention": 3});
    assert_eq!(s.put("/v1/boards/d", config).await.0, 201);
    // Out of rank order; two at the same score and instant keep file order; one without
    // reached_at takes the import's time; blank lines are skipped.
    let body = [
        r#"{"member":"low","score":1,"reached_at":"2026-11-22T08:00:00Z"}"#,
        "",
        r#"{"member":"second","score":7,"reached_at":"2026-11-22T09:00:00.000001Z"}"#,
        r#"{"member":"first","score":7,"reached_at":"2026-11-22T09:00:00Z","metadata":{ "x" : [1, 2] }}"#,
        r#"{"member":"third","score":7,"reached_at":"2026-11-22T09:00:00.000001Z","metadata":null}"#,
        r#"{"member":"top","score":"12"}"#,
    ]
    .join("\n");
    let (st, done) = import(&s, "d", "?period=previous", &body).await;
    assert_eq!(st, 200, "{done}");
    assert_eq!(
        done,
        json!({"period": "2026-11-22", "imported": 5, "erased_dropped": 0})
    );
    let (_, page) = s
        .get("/v1/boards/d/entries?period=2026-11-22&limit=10")
        .await;
    let names = member_names(&page);
    assert_eq!(names, ["top", "first", "second", "third", "low"], "{page}");
    assert_eq!(page["entries"][1]["metadata"], json!({"x": [1, 2]}));
    assert_eq!(micros(&page["entries"][0]["reached_at"]), NOON_US);
    // The current period is still empty, and a future one is refused.
    assert_eq!(s.get("/v1/boards/d").await.1["members"], 0);
    let (st, b) = import(&s, "d", "?period=2026-11-24", &body).await;
    assert_eq!(st, 422, "{b}");
    assert_eq!(b["error"]["code"], "invalid_period");
    s.stop().await;
}

async fn refused_imports_change_nothing(kind: Kind) {
    let s = Server::start_at(kind, NOON_US).await;
    let config = json!({"max_score": 100, "max_members": 50});
    assert_eq!(s.put("/v1/boards/e", config).await.0, 201);
    assert_eq!(s.put("/v1/boards/full", json!({})).await.0, 201);
    let (st, _) = s
        .post("/v1/boards/full/scores", json!({"member": "x", "score": 1}))
        .await;
    assert_eq!(st, 200);
    let good: String = (0..40)
        .map(|i| format!("{{\"member\":\"m{i}\",\"score\":{i}}}\n"))
        .collect();
    let cases: Vec<(&str, String, u16, &str, &str)> = vec![
        (
            "e",
            format!("{good}{{\"member\":\"bad\",\n"),
            422,
            "invalid_entries",
            "line 41",
        ),
        (
            "e",
            format!("{good}{{\"member\":\"m3\",\"score\":1}}\n"),
            422,
            "invalid_entries",
            "m3",
        ),
        (
            "e",
            format!("{good}{{\"member\":\"big\",\"score\":101}}\n"),
            422,
            "invalid_entries",
            "max_score",
        ),
        (
            "e",
            format!("{good}{{\"member\":\"f\",\"score\":1.5}}\n"),
            422,
            "invalid_entries",
            "line 41",
        ),
        (
            "e",
            format!("{good}{{\"member\":\"t\",\"score\":1,\"reached_at\":\"yesterday\"}}\n"),
            422,
            "invalid_entries",
            "line 41",
        ),
        (
            "e",
            format!("{good}{{\"member\":\"md\",\"score\":1,\"metadata\":[1]}}\n"),
            422,
            "invalid_entries",
            "line 41",
        ),
        (
            "e",
            format!(
                "{good}{{\"member\":\"u\",\"score\":1,\"reachedAt\":\"2026-01-01T00:00:00Z\"}}\n"
            ),
            422,
            "invalid_entries",
            "unknown field `reachedAt`",
        ),
        (
            "e",
            format!("{good}{{\"member\":\"\",\"score\":1}}\n"),
            422,
            "invalid_entries",
            "entry 41",
        ),
        (
            "e",
            format!("{good}{}\n", "x".repeat(20_000)),
            422,
            "invalid_entries",
            "16384",
        ),
        (
            "e",
            (0..51)
                .map(|i| format!("{{\"member\":\"n{i}\",\"score\":1}}\n"))
                .collect(),
            422,
            "invalid_entries",
            "maximum of 50",
        ),
        ("full", good.clone(), 409, "board_not_empty", "holds 1"),
        ("nope", good.clone(), 404, "board_not_found", "nope"),
    ];
    for (board, body, status, code, says) in cases {
        let before = (
            answers(&s, "e", "current").await,
            answers(&s, "full", "current").await,
        );
        let (st, b) = import(&s, board, "", &body).await;
        assert_eq!(st.as_u16(), status, "{board}: {b}");
        assert_eq!(b["error"]["code"], code, "{b}");
        let message = b["error"]["message"].as_str().expect("message");
        assert!(message.contains(says), "{says:?} not in {message}");
        let after = (
            answers(&s, "e", "current").await,
            answers(&s, "full", "current").await,
        );
        assert_eq!(after, before, "{board} {code}: state changed");
    }
    // An empty body imports nothing and leaves the period open to an import.
    let (st, done) = import(&s, "e", "", "").await;
    assert_eq!((st.as_u16(), &done["imported"]), (200, &json!(0)), "{done}");
    // Nothing was left half-done: the same period takes the good import whole.
    let (st, done) = import(&s, "e", "", &good).await;
    assert_eq!(
        (st.as_u16(), &done["imported"]),
        (200, &json!(40)),
        "{done}"
    );
    assert_eq!(s.get("/v1/boards/e").await.1["members"], 40);
    // Once full, it is refused like any non-empty period.
    let (st, b) = import(&s, "e", "", &good).await;
    assert_eq!(
        (st.as_u16(), &b["error"]["code"]),
        (409, &json!("board_not_empty"))
    );
    s.stop().await;
}

async fn an_export_streams_past_one_page(kind: Kind) {
    let s = Server::start(kind).await;
    assert_eq!(s.put("/v1/boards/big", json!({})).await.0, 201);
    let body: String = (0..2_500)
        .map(|i| format!("{{\"member\":\"p{i:05}\",\"score\":{}}}\n", i % 97))
        .collect();
    let (st, done) = import(&s, "big", "", &body).await;
    assert_eq!(
        (st.as_u16(), &done["imported"]),
        (200, &json!(2_500)),
        "{done}"
    );
    let (st, text) = export(&s, "big", "").await;
    assert_eq!(st, 200);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 2_500);
    // Rank order: scores never rise (desc), equal scores in file (= reached) order.
    for w in lines.windows(2) {
        let (a, b) = (
            w[0]["score"].as_i64().expect("ok"),
            w[1]["score"].as_i64().expect("ok"),
        );
        assert!(
            a > b || (a == b && w[0]["member"].as_str() < w[1]["member"].as_str()),
            "{w:?}"
        );
    }
    let (st, _) = s.call(Method::GET, "/v1/boards/nope/export", None).await;
    assert_eq!(st, 404);
    s.stop().await;
}

photofinish_testkit::conformance!(
    an_export_imports_into_the_same_answers,
    imports_take_unsorted_lines_and_fill_closed_periods,
    refused_imports_change_nothing,
    an_export_streams_past_one_page,
);

/// On Redis, a node that did not run the import reads its ranking from
/// Redis when it takes the import's entry: both nodes answer alike, and a node loaded
/// afterwards too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_import_through_one_node_is_served_by_the_others() {
    let a = Server::start(Kind::Redis).await;
    let b = a.sibling().await;
    assert_eq!(a.put("/v1/boards/big", json!({})).await.0, 201);
    let (_, before) = b.get("/v1/boards/big/entries").await;
    assert_eq!(before["total"], 0, "b has the board before the import");
    let body: String = (0..1_500)
        .map(|i| format!("{{\"member\":\"p{i:05}\",\"score\":{}}}\n", i % 89))
        .collect();
    let (st, done) = import(&a, "big", "", &body).await;
    assert_eq!((st.as_u16(), &done["imported"]), (200, &json!(1_500)));
    let page = "/v1/boards/big/entries?limit=1000&offset=200&ranking=dense";
    let on_a = a.get(page).await;
    assert_eq!(on_a.1["total"], 1_500);
    assert_eq!(b.get(page).await, on_a);
    let c = a.sibling().await;
    assert_eq!(c.get(page).await, on_a);
    c.stop().await;
    b.stop().await;
    a.stop().await;
}
