//! Tournaments (docs/SPEC.md §14) end to end, on every backend and through both doors,
//! with the server's clock moved by the test: a window (`opens_at`, `closes_at`, PATCH-able)
//! outside which writes and joins get 422 `board_closed`; `max_attempts` counting accepted
//! writes only (refused writes and idempotent replays do not count; a `changed: false`
//! write does), per member and period, shown on the member's answer; `join_required` with
//! `join` (201, then 200), a joined member holding a seat toward `max_members` (422
//! `board_full` beyond it) but no entry until it writes — and all of it kept across a
//! restart. Every refusal changes nothing. (Who may join — a player only itself, on a
//! `player_writes` board — is in `access.rs`, with every other endpoint.)

use std::sync::Arc;

use photofinish_core::clock::ManualClock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::idempotency::keyed;
use crate::support::*;

/// 2026-11-23T00:00:00Z, µs: a daily UTC board's period 2026-11-23 starts here.
const MIDNIGHT_US: i64 = 1_795_392_000_000_000;
const HOUR: i64 = 3_600_000_000;

/// The board's entries as (member, score), and its total.
async fn standings(s: &Server, board: &str) -> (Vec<(String, i64)>, u64) {
    let (st, page) = s
        .get(&format!("/v1/boards/{board}/entries?limit=100"))
        .await;
    assert_eq!(st, 200, "{page}");
    let rows = page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["member"].as_str().expect("member").to_owned(),
                e["score"].as_i64().expect("score"),
            )
        })
        .collect();
    (rows, page["total"].as_u64().expect("total"))
}

async fn write(s: &Server, board: &str, member: &str, score: i64) -> (reqwest::StatusCode, Value) {
    s.post(
        &format!("/v1/boards/{board}/scores"),
        json!({"member": member, "score": score}),
    )
    .await
}

async fn join(s: &Server, board: &str, member: &str) -> (reqwest::StatusCode, Value) {
    s.call(
        Method::POST,
        &format!("/v1/boards/{board}/members/{member}/join"),
        None,
    )
    .await
}

async fn a_tournament_takes_writes_only_in_its_window(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let mut c = resp(&s).await;
    let (st, b) = s
        .put(
            "/v1/boards/cup",
            json!({"opens_at": "2026-11-23T01:00:00Z", "closes_at": "2026-11-23T02:00:00+00:00"}),
        )
        .await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(
        (&b["opens_at"], &b["closes_at"]),
        (
            &json!("2026-11-23T01:00:00.000000Z"),
            &json!("2026-11-23T02:00:00.000000Z")
        )
    );
    // Before it opens: writes and joins, over HTTP and RESP, refused; nothing changed.
    assert_error(&write(&s, "cup", "ann", 5).await, 422, "board_closed");
    assert_error(&join(&s, "cup", "ann").await, 422, "board_closed");
    assert_eq!(
        lb(&mut c, &["LB.INCR", "cup", "ann", "5"]).await["error"],
        "board_closed"
    );
    assert_eq!(
        lb(&mut c, &["LB.JOIN", "cup", "ann"]).await["error"],
        "board_closed"
    );
    let (st, b) = s
        .post(
            "/v1/boards/cup/scores:batch",
            json!({"entries": [{"member": "ann", "score": 1}]}),
        )
        .await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["results"][0]["error"]["code"], "board_closed", "{b}");
    assert_eq!(standings(&s, "cup").await, (vec![], 0));

    // Open: its first instant takes writes.
    clock.set(MIDNIGHT_US + HOUR);
    let (st, w) = write(&s, "cup", "ann", 5).await;
    assert_eq!(st, 200, "{w}");
    assert_eq!(lb(&mut c, &["LB.INCR", "cup", "bob", "3"]).await, json!(3));
    // An admin's explicit `at` is checked as the write's instant.
    let (st, w) = s
        .post(
            "/v1/boards/cup/scores",
            json!({"member": "cy", "score": 1, "at": "2026-11-23T00:59:59Z"}),
        )
        .await;
    assert_eq!(
        (st.as_u16(), &w["error"]["code"]),
        (422, &json!("board_closed")),
        "{w}"
    );

    // Closed at its last instant; the message says when.
    clock.set(MIDNIGHT_US + 2 * HOUR);
    let before = standings(&s, "cup").await;
    let got = write(&s, "cup", "ann", 1).await;
    assert_error(&got, 422, "board_closed");
    assert!(
        got.1["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("2026-11-23T02:00:00Z")),
        "{got:?}"
    );
    assert_eq!(standings(&s, "cup").await, before);
    assert_eq!(before, (vec![("ann".into(), 5), ("bob".into(), 3)], 2));

    // The window is a setting: a PATCH moves it, `null` removes it.
    let (st, b) = s
        .call(
            Method::PATCH,
            "/v1/boards/cup",
            Some(json!({"closes_at": "2026-11-23T03:00:00Z"})),
        )
        .await;
    assert_eq!(
        (st.as_u16(), &b["closes_at"]),
        (200, &json!("2026-11-23T03:00:00.000000Z"))
    );
    assert_eq!(write(&s, "cup", "ann", 1).await.0, 200);
    clock.set(MIDNIGHT_US + 3 * HOUR);
    assert_error(&write(&s, "cup", "ann", 1).await, 422, "board_closed");
    let (st, b) = s
        .call(
            Method::PATCH,
            "/v1/boards/cup",
            Some(json!({"closes_at": null, "opens_at": null})),
        )
        .await;
    assert_eq!(st, 200, "{b}");
    assert!(
        b.get("closes_at").is_none() && b.get("opens_at").is_none(),
        "{b}"
    );
    assert_eq!(write(&s, "cup", "ann", 1).await.0, 200);

    // Bad windows are invalid_config, and change nothing: what the document states of a
    // field is 400; a window whose ends are each well formed but not in order, or an
    // offset that moves an instant out of range, is a rule, 422 (docs/SPEC.md §3).
    for (path_body, status) in [
        (
            json!({"opens_at": "2026-11-23T03:00:00Z", "closes_at": "2026-11-23T03:00:00Z"}),
            422,
        ),
        (json!({"closes_at": "tomorrow"}), 400),
        (
            json!({"opens_at": "2026-11-23T03:00:00.0000001Z", "closes_at": "2026-11-23T03:00:00Z"}),
            422,
        ),
        (json!({"closes_at": "1969-12-31T23:59:59Z"}), 400),
        (json!({"closes_at": "1970-01-01T00:30:00+01:00"}), 422),
        (json!({"max_attempts": 0}), 400),
        (json!({"max_attempts": 1_000_001}), 400),
    ] {
        let got = s
            .call(Method::PUT, "/v1/boards/cup2", Some(path_body.clone()))
            .await;
        assert_error(&got, status, "invalid_config");
        assert_error(&s.get("/v1/boards/cup2").await, 404, "board_not_found");
    }
    let got = s
        .call(
            Method::PATCH,
            "/v1/boards/cup",
            Some(json!({"opens_at": "2026-11-23T05:00:00Z", "closes_at": "2026-11-23T04:00:00Z"})),
        )
        .await;
    assert_error(&got, 422, "invalid_config");
    assert!(s.get("/v1/boards/cup").await.1.get("opens_at").is_none());
    s.stop().await;
}

/// `member`'s `attempts` on board `daily`, as its member answer shows it.
async fn attempts(s: &Server, member: &str) -> Value {
    let (_, m) = s.get(&format!("/v1/boards/daily/members/{member}")).await;
    m["attempts"].clone()
}

async fn attempts_count_accepted_writes_only(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US + HOUR));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, b) = s
        .put(
            "/v1/boards/daily",
            json!({"reset": "daily", "update": "set", "max_attempts": 3, "max_increment": 100}),
        )
        .await;
    assert_eq!((st.as_u16(), &b["max_attempts"]), (201, &json!(3)), "{b}");
    // 1: accepted.
    assert_eq!(write(&s, "daily", "ann", 10).await.0, 200);
    assert_eq!(attempts(&s, "ann").await, json!(1));
    // Refused writes do not count.
    let got = s
        .post(
            "/v1/boards/daily/scores",
            json!({"member": "ann", "score": 101, "op": "incr"}),
        )
        .await;
    assert_error(&got, 422, "score_rejected");
    assert_eq!(attempts(&s, "ann").await, json!(1));
    // 2: an idempotent write; its replay does not count.
    let body = json!({"member": "ann", "score": 12});
    let (st, replayed, _) = keyed(
        &s,
        "k1",
        Method::POST,
        "/v1/boards/daily/scores",
        Some(body.clone()),
    )
    .await;
    assert_eq!((st, replayed), (200, false));
    let (st, replayed, _) = keyed(
        &s,
        "k1",
        Method::POST,
        "/v1/boards/daily/scores",
        Some(body),
    )
    .await;
    assert_eq!((st, replayed), (200, true));
    assert_eq!(attempts(&s, "ann").await, json!(2));
    // 3: a write that changes nothing still counts.
    let (st, w) = write(&s, "daily", "ann", 12).await;
    assert_eq!((st.as_u16(), &w["changed"]), (200, &json!(false)));
    assert_eq!(attempts(&s, "ann").await, json!(3));
    // 4: exhausted, over both doors, and nothing changes.
    let before = standings(&s, "daily").await;
    let got = write(&s, "daily", "ann", 50).await;
    assert_error(&got, 422, "attempts_exhausted");
    let mut c = resp(&s).await;
    assert_eq!(
        lb(&mut c, &["LB.SET", "daily", "ann", "50"]).await["error"],
        "attempts_exhausted"
    );
    assert_eq!(standings(&s, "daily").await, before);
    assert_eq!(attempts(&s, "ann").await, json!(3));
    // Another member has its own count.
    assert_eq!(lb(&mut c, &["LB.SET", "daily", "bob", "7"]).await, json!(7));
    assert_eq!(attempts(&s, "bob").await, json!(1));

    // Kept across a restart.
    let s = s.restart().await;
    assert_error(
        &write(&s, "daily", "ann", 50).await,
        422,
        "attempts_exhausted",
    );
    assert_eq!(s.get("/v1/boards/daily/members/ann").await.1["attempts"], 3);

    // A new period, a new count; the last period's entries keep theirs.
    clock.set(MIDNIGHT_US + 25 * HOUR);
    assert_eq!(write(&s, "daily", "ann", 1).await.0, 200);
    assert_eq!(s.get("/v1/boards/daily/members/ann").await.1["attempts"], 1);
    let (_, old) = s.get("/v1/boards/daily/members/ann?period=previous").await;
    assert_eq!(
        (&old["score"], &old["attempts"]),
        (&json!(12), &json!(3)),
        "{old}"
    );

    // Without max_attempts nothing is counted or shown.
    let (st, _) = s
        .call(
            Method::PATCH,
            "/v1/boards/daily",
            Some(json!({"max_attempts": null})),
        )
        .await;
    assert_eq!(st, 200);
    let (_, ann) = s.get("/v1/boards/daily/members/ann").await;
    assert!(ann.get("attempts").is_none(), "{ann}");
    s.stop().await;
}

async fn joins_hold_seats_without_entries(kind: Kind) {
    let clock = Arc::new(ManualClock::new(MIDNIGHT_US + HOUR));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, b) = s
        .put(
            "/v1/boards/t",
            json!({"reset": "daily", "join_required": true, "max_members": 3}),
        )
        .await;
    assert_eq!(
        (st.as_u16(), &b["join_required"]),
        (201, &json!(true)),
        "{b}"
    );
    let mut c = resp(&s).await;
    // Not joined: refused on both doors, nothing changed.
    assert_error(&write(&s, "t", "ann", 5).await, 422, "not_joined");
    assert_eq!(
        lb(&mut c, &["LB.INCR", "t", "ann", "5"]).await["error"],
        "not_joined"
    );
    assert_eq!(standings(&s, "t").await, (vec![], 0));
    // A join: 201, then 200 (already), over HTTP; 1 then 0 over RESP.
    let (st, j) = join(&s, "t", "ann").await;
    assert_eq!(st, 201, "{j}");
    assert_eq!(
        j,
        json!({"board": "t", "member": "ann", "period": "2026-11-23", "already": false})
    );
    let (st, j) = join(&s, "t", "ann").await;
    assert_eq!((st.as_u16(), &j["already"]), (200, &json!(true)));
    assert_eq!(lb(&mut c, &["LB.JOIN", "t", "bob"]).await, json!(1));
    assert_eq!(lb(&mut c, &["LB.JOIN", "t", "bob"]).await, json!(0));
    // A seat is no entry: in no page, total, rank or member answer.
    assert_eq!(standings(&s, "t").await, (vec![], 0));
    assert_error(
        &s.get("/v1/boards/t/members/ann").await,
        404,
        "member_not_found",
    );
    assert_eq!(s.get("/v1/boards/t").await.1["members"], 0);
    // Its first write makes it one.
    assert_eq!(write(&s, "t", "ann", 5).await.0, 200);
    assert_eq!(standings(&s, "t").await, (vec![("ann".into(), 5)], 1));
    let (st, j) = join(&s, "t", "ann").await;
    assert_eq!((st.as_u16(), &j["already"]), (200, &json!(true)));
    // Seats count toward max_members: ann (entry), bob (seat), cy (seat) fill it.
    assert_eq!(join(&s, "t", "cy").await.0, 201);
    assert_error(&join(&s, "t", "dee").await, 422, "board_full");
    assert_eq!(
        lb(&mut c, &["LB.JOIN", "t", "dee"]).await["error"],
        "board_full"
    );
    // The refused join left no seat; a seat holder's first write takes no new one.
    assert_error(&write(&s, "t", "dee", 1).await, 422, "not_joined");
    assert_eq!(write(&s, "t", "bob", 2).await.0, 200);
    // Bad member names are refused before anything.
    assert_error(&join(&s, "t", "%01").await, 422, "invalid_member");
    assert_error(&join(&s, "nope", "ann").await, 404, "board_not_found");

    // Seats outlive a restart.
    let s = s.restart().await;
    let (st, j) = join(&s, "t", "cy").await;
    assert_eq!((st.as_u16(), &j["already"]), (200, &json!(true)), "{j}");
    assert_error(&join(&s, "t", "dee").await, 422, "board_full");
    assert_eq!(write(&s, "t", "cy", 9).await.0, 200);
    assert_eq!(
        standings(&s, "t").await,
        (
            vec![("cy".into(), 9), ("ann".into(), 5), ("bob".into(), 2)],
            3
        )
    );

    // A new period: nobody has joined it.
    clock.set(MIDNIGHT_US + 25 * HOUR);
    assert_error(&write(&s, "t", "ann", 1).await, 422, "not_joined");
    assert_eq!(join(&s, "t", "dee").await.0, 201);
    assert_eq!(write(&s, "t", "dee", 4).await.0, 200);
    // join_required is a setting: turned off, anyone writes.
    let (st, _) = s
        .call(
            Method::PATCH,
            "/v1/boards/t",
            Some(json!({"join_required": false})),
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(write(&s, "t", "ann", 1).await.0, 200);
    s.stop().await;
}

conformance!(
    a_tournament_takes_writes_only_in_its_window,
    attempts_count_accepted_writes_only,
    joins_hold_seats_without_entries,
);
