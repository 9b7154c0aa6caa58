//! Moderation (docs/SPEC.md §15) end to end, on every backend and through both doors: a
//! hidden member keeps its entries and writes but is left out of what everyone else
//! reads — pages, ranks, totals, around, members:query, thresholds, rank-of-score,
//! members across boards, cohorts, live events, exports — while it reads itself (its
//! player token), write answers included, as if visible, and an admin reads it marked
//! `hidden` with the rank it would have; unhide restores every answer exactly; hidden
//! members survive a restart, an export and import; the named limit of 10,000; every
//! refusal changes nothing.

use std::time::Duration;

use photofinish_core::access::Scope;
use photofinish_server::auth::jwt::{JwtKey, JwtOptions};
use photofinish_server::auth::keys;
use photofinish_testkit::sse::EventStream;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::*;

/// An admin key, an admin key of boards `m*` alone, a write key, a read key, and the
/// keys file they are in.
struct Creds {
    admin: String,
    admin_m: String,
    write: String,
    read: String,
    dir: tempfile::TempDir,
}

fn creds() -> Creds {
    let dir = tempfile::tempdir().expect("tmp");
    let mut stored = Vec::new();
    let mut make = |name: &str, scope, boards: &[&str]| {
        let boards = boards.iter().map(|b| (*b).to_owned()).collect();
        let (k, secret) = keys::new_key(name, scope, boards, None, "t".into()).expect("key");
        stored.push(k);
        secret.expose().to_owned()
    };
    let admin = make("moderator", Scope::Admin, &[]);
    let admin_m = make("m-admin", Scope::Admin, &["m*"]);
    let write = make("game-server", Scope::Write, &[]);
    let read = make("reader", Scope::Read, &[]);
    keys::write_file(&dir.path().join("keys.json"), stored).expect("keys");
    Creds {
        admin,
        admin_m,
        write,
        read,
        dir,
    }
}

async fn start(kind: Kind, c: &Creds) -> Server {
    let file = c.dir.path().join("keys.json");
    Server::start_configured(kind, |o| photofinish_server::serve::ServeOptions {
        keys: Some(file),
        jwt: Some(JwtOptions {
            key: JwtKey::Pem(fixture("es256-public.pem")),
            issuer: Some("studio".into()),
            audience: Some("game".into()),
        }),
        ..o
    })
    .await
}

/// A player token for `member`.
fn player(member: &str) -> String {
    es256(json!({"sub": member, "exp": now_s() + 600, "iss": "studio", "aud": "game"}))
}

async fn call(
    s: &Server,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    s.call_as(Some(token), method, path, body).await
}

async fn get(s: &Server, token: &str, path: &str) -> Value {
    let (st, v) = call(s, token, Method::GET, path, None).await;
    assert_eq!(st, 200, "GET {path}: {v}");
    v
}

async fn hide(s: &Server, admin: &str, board: &str, member: &str, hidden: bool) {
    let verb = if hidden { "hide" } else { "unhide" };
    let path = format!("/v1/boards/{board}/members/{member}/{verb}");
    let (st, v) = call(s, admin, Method::POST, &path, None).await;
    assert_eq!(st, 204, "{path}: {v}");
}

/// A page's rows as (member, rank).
fn ranks(page: &Value) -> Vec<(String, u64)> {
    page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["member"].as_str().expect("member").to_owned(),
                e["rank"].as_u64().expect("rank"),
            )
        })
        .collect()
}

fn rows(list: &[(&str, u64)]) -> Vec<(String, u64)> {
    list.iter().map(|(m, r)| ((*m).to_owned(), *r)).collect()
}

/// Everything a reader can ask of board `m`, for comparing before and after.
async fn answers(s: &Server, token: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for style in ["ordinal", "competition", "dense"] {
        for path in [
            format!("/v1/boards/m/entries?limit=100&ranking={style}"),
            format!("/v1/boards/m/members/cat/around?before=2&after=2&ranking={style}"),
            format!("/v1/boards/m/rank?score=40&ranking={style}"),
            format!("/v1/boards/m/members/dan?ranking={style}"),
            format!("/v1/boards/m/members/ann/cohort?ranking={style}"),
        ] {
            out.push(s.call_as(Some(token), Method::GET, &path, None).await.1);
        }
        let q = json!({"members": ["bob", "cat", "eve"]});
        let path = format!("/v1/boards/m/members:query?ranking={style}");
        out.push(call(s, token, Method::POST, &path, Some(q)).await.1);
    }
    out.push(
        get(
            s,
            token,
            "/v1/boards/m/thresholds?ranks=1,2,3&percentiles=50",
        )
        .await,
    );
    out.push(get(s, token, "/v1/boards/m").await["members"].clone());
    out.push(get(s, token, "/v1/members/bob?boards=m").await);
    out
}

/// Board `m` (daily, cohorts of 4, players may write): ann 50, bob 40, cat 40 (after
/// bob), dan 30, eve 20, fay 10 — bob and cat share a score.
async fn board(s: &Server, admin: &str) {
    let cfg = json!({"reset": "daily", "cohort_size": 4, "player_writes": true});
    let (st, v) = call(s, admin, Method::PUT, "/v1/boards/m", Some(cfg)).await;
    assert_eq!(st, 201, "{v}");
    for (m, score) in [
        ("ann", 50),
        ("bob", 40),
        ("cat", 40),
        ("dan", 30),
        ("eve", 20),
        ("fay", 10),
    ] {
        let w = json!({"member": m, "score": score, "op": "set"});
        let (st, v) = call(s, admin, Method::POST, "/v1/boards/m/scores", Some(w)).await;
        assert_eq!(st, 200, "{v}");
    }
}

async fn a_hidden_member_leaves_every_read_but_its_own(kind: Kind) {
    let c = creds();
    let s = start(kind, &c).await;
    let (admin, read, bob) = (c.admin.as_str(), c.read.as_str(), player("bob"));
    board(&s, admin).await;
    let mut events = EventStream::open(&s.base, "/v1/boards/m/events", Some(read), None)
        .await
        .expect("events");

    hide(&s, admin, "m", "bob", true).await;
    // Hiding twice, and hiding a name with no entry yet, are fine.
    hide(&s, admin, "m", "bob", true).await;
    hide(&s, admin, "m", "zed", true).await;

    // Everyone else: bob is gone from every answer, and ranks close up.
    let page = get(&s, read, "/v1/boards/m/entries?limit=100").await;
    assert_eq!(page["total"], 5);
    assert_eq!(
        ranks(&page),
        rows(&[("ann", 1), ("cat", 2), ("dan", 3), ("eve", 4), ("fay", 5)])
    );
    let page = get(&s, read, "/v1/boards/m/entries?limit=100&ranking=dense").await;
    assert_eq!(
        ranks(&page),
        rows(&[("ann", 1), ("cat", 2), ("dan", 3), ("eve", 4), ("fay", 5)])
    );
    let page = get(&s, read, "/v1/boards/m/entries?offset=1&limit=2").await;
    assert_eq!(ranks(&page), rows(&[("cat", 2), ("dan", 3)]));
    for path in [
        "/v1/boards/m/members/bob",
        "/v1/boards/m/members/bob/around",
    ] {
        let got = call(&s, read, Method::GET, path, None).await;
        assert_error(&got, 404, "member_not_found");
    }
    let cat = get(&s, read, "/v1/boards/m/members/cat?ranking=competition").await;
    assert_eq!((&cat["rank"], &cat["total"]), (&json!(2), &json!(5)));
    assert!(cat.get("hidden").is_none(), "{cat}");
    let q = json!({"members": ["bob", "cat"]});
    let (_, set) = call(
        &s,
        read,
        Method::POST,
        "/v1/boards/m/members:query",
        Some(q),
    )
    .await;
    assert_eq!(ranks(&set), rows(&[("cat", 2)]));
    assert_eq!(set["missing"], json!(["bob"]));
    let rank = get(&s, read, "/v1/boards/m/rank?score=40").await;
    assert_eq!((&rank["rank"], &rank["total"]), (&json!(3), &json!(5)));
    let t = get(&s, read, "/v1/boards/m/thresholds?ranks=2").await;
    assert_eq!(t["thresholds"][0]["member"], "cat", "{t}");
    assert_eq!(get(&s, read, "/v1/boards/m").await["members"], 5);
    let across = get(&s, read, "/v1/members/bob?boards=m").await;
    assert_eq!(across["boards"], json!([]), "{across}");
    // Cohort 1 seats ann, bob, cat and dan; bob keeps his seat but is in no standing.
    let cohort = get(&s, read, "/v1/boards/m/members/ann/cohort").await;
    assert_eq!(ranks(&cohort), rows(&[("ann", 1), ("cat", 2), ("dan", 3)]));
    let dan = get(&s, read, "/v1/boards/m/members/dan").await;
    assert_eq!(dan["cohort_rank"], 3, "{dan}");
    // A non-admin's export leaves bob out.
    let exported = export(&s, read).await;
    assert!(!exported.contains("\"bob\""), "{exported}");
    // The hide was a remove event; bob's writes send none.
    let e = events.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["member"]),
        ("remove", &json!("bob"))
    );
    let w = json!({"member": "bob", "score": 5});
    call(&s, admin, Method::POST, "/v1/boards/m/scores", Some(w)).await;
    let w = json!({"member": "fay", "score": 1});
    call(&s, admin, Method::POST, "/v1/boards/m/scores", Some(w)).await;
    let e = events.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["member"]),
        ("score", &json!("fay")),
        "{e:?}"
    );

    // bob himself: as if visible, with the rank he would have (45 now: second; the
    // board adds writes).
    let me = get(&s, &bob, "/v1/boards/m/members/bob").await;
    assert_eq!((&me["rank"], &me["total"]), (&json!(2), &json!(6)), "{me}");
    assert!(
        me.get("hidden").is_none(),
        "a shadow ban does not say so: {me}"
    );
    let page = get(&s, &bob, "/v1/boards/m/entries?limit=3").await;
    assert_eq!(page["total"], 6);
    assert_eq!(ranks(&page), rows(&[("ann", 1), ("bob", 2), ("cat", 3)]));
    let around = get(&s, &bob, "/v1/boards/m/members/bob/around?before=1&after=1").await;
    assert_eq!(ranks(&around), rows(&[("ann", 1), ("bob", 2), ("cat", 3)]));
    let across = get(&s, &bob, "/v1/members/bob?boards=m").await;
    assert_eq!(across["boards"][0]["rank"], 2, "{across}");
    // His own write's answer too (players write on this board).
    let w = json!({"member": "bob", "score": 1});
    let (st, mine) = call(&s, &bob, Method::POST, "/v1/boards/m/scores", Some(w)).await;
    assert_eq!(
        (st.as_u16(), &mine["score"], &mine["rank"]),
        (200, &json!(46), &json!(2)),
        "{mine}"
    );
    let cohort = get(&s, &bob, "/v1/boards/m/members/bob/cohort").await;
    assert_eq!(
        ranks(&cohort),
        rows(&[("ann", 1), ("bob", 2), ("cat", 3), ("dan", 4)])
    );
    // Another player does not see him.
    let ann = get(&s, &player("ann"), "/v1/boards/m/entries?limit=3").await;
    assert_eq!(ranks(&ann), rows(&[("ann", 1), ("cat", 2), ("dan", 3)]));

    // An admin: pages and totals without him; a read naming him shows him, marked.
    let page = get(&s, admin, "/v1/boards/m/entries?limit=100").await;
    assert_eq!(page["total"], 5);
    assert!(!ranks(&page).iter().any(|(m, _)| m == "bob"));
    let him = get(&s, admin, "/v1/boards/m/members/bob").await;
    assert_eq!(
        (&him["rank"], &him["total"], &him["hidden"]),
        (&json!(2), &json!(5), &json!(true)),
        "{him}"
    );
    let around = get(
        &s,
        admin,
        "/v1/boards/m/members/bob/around?before=1&after=1",
    )
    .await;
    assert_eq!(ranks(&around), rows(&[("ann", 1), ("bob", 2), ("cat", 3)]));
    assert_eq!(around["entries"][1]["hidden"], true, "{around}");
    assert_eq!(around["total"], 5);
    // bob at the rank he would have, cat at hers without him.
    let q = json!({"members": ["bob", "cat"]});
    let (_, set) = call(
        &s,
        admin,
        Method::POST,
        "/v1/boards/m/members:query",
        Some(q),
    )
    .await;
    assert_eq!(ranks(&set), rows(&[("bob", 2), ("cat", 2)]));
    assert_eq!(set["entries"][0]["hidden"], true, "{set}");
    let across = get(&s, admin, "/v1/members/bob?boards=m").await;
    assert_eq!(across["boards"][0]["hidden"], true, "{across}");
    let list = get(&s, admin, "/v1/boards/m/hidden").await;
    assert_eq!(
        list,
        json!({"board": "m", "total": 2, "members": ["bob", "zed"]})
    );
    let list = get(&s, admin, "/v1/boards/m/hidden?offset=1&limit=1").await;
    assert_eq!(list["members"], json!(["zed"]));

    // Over RESP, for a reader and for the admin.
    let mut r = resp_as(&s, Some(read), false).await.expect("resp");
    assert_eq!(lb(&mut r, &["LB.RANK", "m", "bob"]).await, Value::Null);
    assert_eq!(lb(&mut r, &["LB.SCORE", "m", "bob"]).await, Value::Null);
    assert_eq!(lb(&mut r, &["LB.CARD", "m"]).await, json!(5));
    let mut a = resp_as(&s, Some(admin), false).await.expect("resp");
    assert_eq!(
        lb(&mut a, &["LB.HIDE", "m", "bob"]).await,
        json!(0),
        "already hidden"
    );
    assert_eq!(lb(&mut a, &["LB.UNHIDE", "m", "zed"]).await, json!(1));
    assert_eq!(lb(&mut a, &["LB.UNHIDE", "m", "zed"]).await, json!(0));

    // Unhide restores every answer exactly (bob's score back to 40 first: it moved).
    let w = json!({"member": "bob", "score": 40, "op": "set"});
    call(&s, admin, Method::POST, "/v1/boards/m/scores", Some(w)).await;
    let w = json!({"member": "fay", "score": 10, "op": "set"});
    call(&s, admin, Method::POST, "/v1/boards/m/scores", Some(w)).await;
    let e = events.next().await;
    assert_eq!(e.data["member"], "fay", "{e:?}");
    assert_eq!(lb(&mut a, &["LB.UNHIDE", "m", "bob"]).await, json!(1));
    let e = events.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["member"]),
        ("score", &json!("bob")),
        "{e:?}"
    );
    // bob's new 40 came after cat's: he is back, behind her.
    let page = get(&s, read, "/v1/boards/m/entries?limit=100").await;
    assert_eq!(
        ranks(&page),
        rows(&[
            ("ann", 1),
            ("cat", 2),
            ("bob", 3),
            ("dan", 4),
            ("eve", 5),
            ("fay", 6)
        ])
    );
    s.stop().await;
}

async fn export(s: &Server, token: &str) -> String {
    let resp = s
        .http
        .get(format!("{}/v1/boards/m/export", s.base))
        .bearer_auth(token)
        .send()
        .await
        .expect("export");
    assert_eq!(resp.status(), 200);
    resp.text().await.expect("body")
}

/// Hide then unhide, with no write between: every answer is what it was.
async fn unhide_restores_every_answer_exactly(kind: Kind) {
    let c = creds();
    let s = start(kind, &c).await;
    let (admin, read) = (c.admin.as_str(), c.read.as_str());
    board(&s, admin).await;
    let before = answers(&s, read).await;
    for m in ["bob", "ann", "fay"] {
        hide(&s, admin, "m", m, true).await;
    }
    assert_ne!(answers(&s, read).await, before);
    for m in ["fay", "bob", "ann"] {
        hide(&s, admin, "m", m, false).await;
    }
    assert_eq!(answers(&s, read).await, before);
    // Hidden members survive a restart (the log, then a snapshot of it).
    hide(&s, admin, "m", "cat", true).await;
    let hidden = answers(&s, read).await;
    let s = match kind {
        Kind::Embedded => s.restart().await,
        _ => {
            let other = s.sibling().await;
            s.stop().await;
            other
        }
    };
    assert_eq!(answers(&s, read).await, hidden);
    assert_eq!(
        get(&s, admin, "/v1/boards/m/hidden").await["members"],
        json!(["cat"])
    );
    s.stop().await;
}

/// An admin's export marks hidden members; importing it hides them again. A reader's
/// export leaves them out.
async fn exports_and_imports_keep_members_hidden(kind: Kind) {
    let c = creds();
    let s = start(kind, &c).await;
    let (admin, read) = (c.admin.as_str(), c.read.as_str());
    board(&s, admin).await;
    hide(&s, admin, "m", "bob", true).await;
    hide(&s, admin, "m", "eve", true).await;
    let text = export(&s, admin).await;
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 6, "{text}");
    for l in &lines {
        let hidden = matches!(l["member"].as_str(), Some("bob" | "eve"));
        assert_eq!(l.get("hidden") == Some(&json!(true)), hidden, "{l}");
    }
    assert_eq!(export(&s, read).await.lines().count(), 4);
    let (st, v) = call(
        &s,
        admin,
        Method::PUT,
        "/v1/boards/m2",
        Some(json!({"reset": "daily"})),
    )
    .await;
    assert_eq!(st, 201, "{v}");
    let resp = s
        .http
        .post(format!("{}/v1/boards/m2/import", s.base))
        .bearer_auth(admin)
        .header("content-type", "application/x-ndjson")
        .body(text.clone())
        .send()
        .await
        .expect("import");
    assert_eq!(
        resp.status(),
        200,
        "{}",
        resp.text().await.unwrap_or_default()
    );
    assert_eq!(
        get(&s, admin, "/v1/boards/m2/hidden").await["members"],
        json!(["bob", "eve"])
    );
    let page = get(&s, read, "/v1/boards/m2/entries?limit=100").await;
    assert_eq!(
        ranks(&page),
        rows(&[("ann", 1), ("cat", 2), ("dan", 3), ("fay", 4)])
    );
    let again = s
        .http
        .get(format!("{}/v1/boards/m2/export", s.base))
        .bearer_auth(admin)
        .send()
        .await
        .expect("export")
        .text()
        .await
        .expect("body");
    assert_eq!(again, text, "an export of the import is the export");
    s.stop().await;
}

/// The refusals: a non-admin (403), a bad name (422), an unknown board (404), the
/// 10,000th-and-first hidden member (422 too_many_hidden) — each changes nothing.
async fn refusals_change_nothing(kind: Kind) {
    let c = creds();
    let s = start(kind, &c).await;
    let (admin, read) = (c.admin.as_str(), c.read.as_str());
    board(&s, admin).await;
    let before = answers(&s, admin).await;
    let bad = "x".repeat(200);
    let cases: Vec<(Option<&str>, String, u16, &str)> = vec![
        (
            Some(read),
            "/v1/boards/m/members/bob/hide".into(),
            403,
            "forbidden",
        ),
        (
            Some(read),
            "/v1/boards/m/members/bob/unhide".into(),
            403,
            "forbidden",
        ),
        (
            None,
            "/v1/boards/m/members/bob/hide".into(),
            401,
            "unauthorized",
        ),
        (
            Some(admin),
            format!("/v1/boards/m/members/{bad}/hide"),
            422,
            "invalid_member",
        ),
        (
            Some(admin),
            "/v1/boards/nope/members/bob/hide".into(),
            404,
            "board_not_found",
        ),
    ];
    for (token, path, status, code) in cases {
        let got = s.call_as(token, Method::POST, &path, None).await;
        assert_error(&got, status, code);
        assert_eq!(answers(&s, admin).await, before, "{path}");
    }
    let got = call(&s, &player("bob"), Method::GET, "/v1/boards/m/hidden", None).await;
    assert_error(&got, 403, "forbidden");
    // The named limit, filled over RESP in one pipeline.
    let mut a = resp_as(&s, Some(admin), false).await.expect("resp");
    let mut pipe = redis::pipe();
    for i in 0..10_000 {
        pipe.cmd("LB.HIDE").arg("m").arg(format!("h{i}"));
    }
    let _: Vec<i64> = pipe.query_async(&mut a).await.expect("hides");
    let got = call(
        &s,
        admin,
        Method::POST,
        "/v1/boards/m/members/bob/hide",
        None,
    )
    .await;
    assert_error(&got, 422, "too_many_hidden");
    let reply = lb(&mut a, &["LB.HIDE", "m", "bob"]).await;
    assert_eq!(reply["error"], "too_many_hidden", "{reply}");
    assert_eq!(
        get(&s, admin, "/v1/boards/m/hidden?limit=1").await["total"],
        10_000
    );
    assert_eq!(answers(&s, admin).await, before, "bob is still shown");
    // At the limit a read still answers (ranks cost O(log n + hidden)).
    tokio::time::timeout(
        Duration::from_secs(30),
        get(&s, read, "/v1/boards/m/entries"),
    )
    .await
    .expect("a read at the limit");
    s.stop().await;
}

/// The audit log's entries as (actor, action, board, member).
fn trail(v: &Value) -> Vec<(String, String, String, Option<String>)> {
    v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["actor"].as_str().expect("actor").to_owned(),
                e["action"].as_str().expect("action").to_owned(),
                e["board"].as_str().expect("board").to_owned(),
                e["member"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn t(
    actor: &str,
    action: &str,
    board: &str,
    member: Option<&str>,
) -> (String, String, String, Option<String>) {
    (
        actor.into(),
        action.into(),
        board.into(),
        member.map(str::to_owned),
    )
}

/// Every admin change is in the audit log with its actor, newest first, from the same log
/// record as the change: board create, patch and delete, member delete (by whatever key),
/// hide and unhide, import; writes and refused changes are not. A deleted board's trail
/// stays; `board=`, `since=` and `limit=` filter; a narrower admin key sees its boards'
/// entries; everyone else is refused; it all survives a restart.
async fn every_admin_change_is_audited_with_its_actor(kind: Kind) {
    let c = creds();
    let s = start(kind, &c).await;
    let (admin, write) = (c.admin.as_str(), c.write.as_str());
    let (st, v) = call(
        &s,
        admin,
        Method::PUT,
        "/v1/boards/m",
        Some(json!({"reset": "daily"})),
    )
    .await;
    assert_eq!(st, 201, "{v}");
    // Creating it again alike changes nothing, and is not recorded.
    call(
        &s,
        admin,
        Method::PUT,
        "/v1/boards/m",
        Some(json!({"reset": "daily"})),
    )
    .await;
    call(
        &s,
        &c.admin_m,
        Method::PUT,
        "/v1/boards/other",
        Some(json!({})),
    )
    .await; // 403
    let patch = json!({"retention": 3});
    assert_eq!(
        call(&s, &c.admin_m, Method::PATCH, "/v1/boards/m", Some(patch))
            .await
            .0,
        200
    );
    for m in ["ann", "bob", "cat"] {
        let w = json!({"member": m, "score": 10});
        assert_eq!(
            call(&s, write, Method::POST, "/v1/boards/m/scores", Some(w))
                .await
                .0,
            200
        );
    }
    let gone = call(&s, write, Method::DELETE, "/v1/boards/m/members/cat", None).await;
    assert_eq!(gone.0, 204);
    // Refused, and so not recorded: a read key's delete, a hide past nothing.
    call(
        &s,
        &c.read,
        Method::DELETE,
        "/v1/boards/m/members/ann",
        None,
    )
    .await;
    hide(&s, admin, "m", "bob", true).await;
    hide(&s, admin, "m", "bob", true).await; // changes nothing: not recorded
    hide(&s, admin, "m", "bob", false).await;
    let (st, v) = call(&s, admin, Method::PUT, "/v1/boards/t", Some(json!({}))).await;
    assert_eq!(st, 201, "{v}");
    let resp = s
        .http
        .post(format!("{}/v1/boards/t/import", s.base))
        .bearer_auth(admin)
        .header("content-type", "application/x-ndjson")
        .body("{\"member\":\"x\",\"score\":1,\"hidden\":true}\n{\"member\":\"y\",\"score\":2}\n")
        .send()
        .await
        .expect("import");
    assert_eq!(resp.status(), 200);
    let mut r = resp_as(&s, Some(admin), false).await.expect("resp");
    assert_eq!(lb(&mut r, &["LB.DROP", "t"]).await, json!(1));

    let want = vec![
        t("moderator", "board.delete", "t", None),
        t("moderator", "board.import", "t", None),
        t("moderator", "board.create", "t", None),
        t("moderator", "member.unhide", "m", Some("bob")),
        t("moderator", "member.hide", "m", Some("bob")),
        t("game-server", "member.delete", "m", Some("cat")),
        t("m-admin", "board.patch", "m", None),
        t("moderator", "board.create", "m", None),
    ];
    let all = get(&s, admin, "/v1/audit").await;
    assert_eq!(trail(&all), want, "{all}");
    let e = &all["entries"];
    assert_eq!(
        e[1]["detail"],
        json!({"period": "all", "entries": 2, "hidden": 1})
    );
    assert_eq!(
        e[5]["detail"]["period"].as_str().map(str::len),
        Some(10),
        "{}",
        e[5]
    );
    assert_eq!(e[6]["detail"]["retention"], 3);
    assert_eq!(e[7]["detail"]["reset"], "daily");
    let ats: Vec<i64> = e
        .as_array()
        .expect("entries")
        .iter()
        .map(|x| micros(&x["at"]))
        .collect();
    assert!(
        ats.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {ats:?}"
    );
    // Filters.
    assert_eq!(
        trail(&get(&s, admin, "/v1/audit?board=t").await),
        want[..3].to_vec()
    );
    assert_eq!(
        trail(&get(&s, admin, "/v1/audit?limit=2").await),
        want[..2].to_vec()
    );
    let since = e[3]["at"].as_str().expect("at").to_owned();
    let path = format!("/v1/audit?since={}", since.replace('+', "%2B"));
    assert_eq!(trail(&get(&s, admin, &path).await), want[..4].to_vec());
    // An admin of m* alone sees m's entries; of t (deleted, not its) it is refused.
    assert_eq!(
        trail(&get(&s, &c.admin_m, "/v1/audit").await),
        want[3..].to_vec()
    );
    let got = call(&s, &c.admin_m, Method::GET, "/v1/audit?board=t", None).await;
    assert_error(&got, 403, "forbidden");
    for token in [Some(c.read.as_str()), Some(write), None] {
        let got = s.call_as(token, Method::GET, "/v1/audit", None).await;
        let (status, code) = if token.is_some() {
            (403, "forbidden")
        } else {
            (401, "unauthorized")
        };
        assert_error(&got, status, code);
    }
    let got = call(&s, admin, Method::GET, "/v1/audit?limit=1001", None).await;
    assert_error(&got, 400, "invalid_parameter");
    let got = call(&s, admin, Method::GET, "/v1/audit?since=yesterday", None).await;
    assert_error(&got, 400, "invalid_parameter");
    // A restart (the log, then a snapshot of it) keeps every entry.
    let s = match kind {
        Kind::Embedded => s.restart().await,
        _ => {
            let other = s.sibling().await;
            s.stop().await;
            other
        }
    };
    assert_eq!(trail(&get(&s, admin, "/v1/audit").await), want);
    s.stop().await;
}

/// A hidden member keeps its seat: it counts toward `max_members` (so a new member is
/// refused while it holds one), and the board's count that everyone sees leaves it out.
/// The audit log keeps entries for `--audit-retention` and no longer.
async fn a_hidden_member_keeps_its_seat_and_the_log_its_retention(kind: Kind) {
    let c = creds();
    let clock = std::sync::Arc::new(photofinish_core::clock::ManualClock::new(
        1_795_395_600_000_000,
    ));
    let file = c.dir.path().join("keys.json");
    let s = Server::start_manual_configured(kind, clock.clone(), |o| {
        photofinish_server::serve::ServeOptions {
            keys: Some(file),
            audit_retention: Duration::from_secs(2 * 86_400),
            ..o
        }
    })
    .await;
    let admin = c.admin.as_str();
    let cfg = json!({"max_members": 2});
    assert_eq!(
        call(&s, admin, Method::PUT, "/v1/boards/m", Some(cfg))
            .await
            .0,
        201
    );
    for m in ["ann", "bob"] {
        let w = json!({"member": m, "score": 1});
        assert_eq!(
            call(&s, admin, Method::POST, "/v1/boards/m/scores", Some(w))
                .await
                .0,
            200
        );
    }
    hide(&s, admin, "m", "bob", true).await;
    assert_eq!(get(&s, c.read.as_str(), "/v1/boards/m").await["members"], 1);
    let w = json!({"member": "cid", "score": 1});
    let got = call(&s, admin, Method::POST, "/v1/boards/m/scores", Some(w)).await;
    assert_error(&got, 422, "board_full");
    // Three days on, the create and the hide (two days' retention) are gone; a patch
    // made then is there.
    clock.advance(3 * 86_400_000_000);
    let patch = json!({"retention": 3});
    assert_eq!(
        call(&s, admin, Method::PATCH, "/v1/boards/m", Some(patch))
            .await
            .0,
        200
    );
    let log = get(&s, admin, "/v1/audit").await;
    assert_eq!(
        trail(&log),
        vec![t("moderator", "board.patch", "m", None)],
        "{log}"
    );
    s.stop().await;
}

/// Members on a board, as a reader sees them.
async fn members_of(s: &Server, token: &str, board: &str) -> Vec<String> {
    let page = get(s, token, &format!("/v1/boards/{board}/entries?limit=100")).await;
    ranks(&page).into_iter().map(|(m, _)| m).collect()
}

async fn write_on(s: &Server, admin: &str, board: &str, member: &str, score: i64) {
    let w = json!({"member": member, "score": score});
    let path = format!("/v1/boards/{board}/scores");
    assert_eq!(call(s, admin, Method::POST, &path, Some(w)).await.0, 200);
}

async fn hide_everywhere(
    s: &Server,
    token: &str,
    member: &str,
    hidden: bool,
) -> (StatusCode, Value) {
    let verb = if hidden { "hide" } else { "unhide" };
    call(
        s,
        token,
        Method::POST,
        &format!("/v1/members/{member}/{verb}"),
        None,
    )
    .await
}

/// A member hidden across every board is hidden on the boards there are and on boards
/// made later (also after a restart); a board's own unhide does not show it, and undoing
/// the hide everywhere leaves a board's own hide in place. Only an admin key for every
/// board may do it; each board it reaches has it in its audit trail.
async fn hiding_everywhere_covers_every_board_present_and_future(kind: Kind) {
    let c = creds();
    let s = start(kind, &c).await;
    let (admin, read) = (c.admin.as_str(), c.read.as_str());
    for board in ["a", "b"] {
        let (st, v) = call(
            &s,
            admin,
            Method::PUT,
            &format!("/v1/boards/{board}"),
            Some(json!({})),
        )
        .await;
        assert_eq!(st, 201, "{v}");
        write_on(&s, admin, board, "ann", 5).await;
    }
    write_on(&s, admin, "a", "zed", 9).await;
    // Refused: an admin of some boards, a read key, no credential — nothing changes.
    for (token, status, code) in [
        (Some(c.admin_m.as_str()), 403, "forbidden"),
        (Some(read), 403, "forbidden"),
        (None, 401, "unauthorized"),
    ] {
        let got = s
            .call_as(token, Method::POST, "/v1/members/zed/hide", None)
            .await;
        assert_error(&got, status, code);
    }
    assert_eq!(members_of(&s, read, "a").await, ["zed", "ann"]);
    let (st, v) = hide_everywhere(&s, admin, "zed", true).await;
    assert_eq!(st, 204, "{v}");
    assert_eq!(members_of(&s, read, "a").await, ["ann"]);
    // A later write on another board, and a board made afterwards.
    write_on(&s, admin, "b", "zed", 9).await;
    assert_eq!(members_of(&s, read, "b").await, ["ann"]);
    let (st, v) = call(&s, admin, Method::PUT, "/v1/boards/c", Some(json!({}))).await;
    assert_eq!(st, 201, "{v}");
    write_on(&s, admin, "c", "zed", 9).await;
    write_on(&s, admin, "c", "ann", 5).await;
    assert_eq!(members_of(&s, read, "c").await, ["ann"]);
    assert_eq!(
        get(&s, admin, "/v1/boards/c/hidden").await["members"],
        json!(["zed"])
    );
    // zed sees itself everywhere.
    let me = get(&s, &player("zed"), "/v1/boards/c/members/zed").await;
    assert_eq!(me["rank"], 1, "{me}");
    // A board's unhide does not undo the hide everywhere.
    hide(&s, admin, "a", "zed", false).await;
    assert_eq!(members_of(&s, read, "a").await, ["ann"]);
    // A board's own hide outlasts undoing the hide everywhere.
    hide(&s, admin, "b", "zed", true).await;
    let (st, v) = hide_everywhere(&s, admin, "zed", false).await;
    assert_eq!(st, 204, "{v}");
    assert_eq!(members_of(&s, read, "a").await, ["zed", "ann"]);
    assert_eq!(members_of(&s, read, "b").await, ["ann"]);
    assert_eq!(members_of(&s, read, "c").await, ["zed", "ann"]);
    // Recorded, with who: on each board it reached (the embedded store's one record
    // names every board, "*").
    let log = get(&s, admin, "/v1/audit").await;
    let everywhere: Vec<&Value> = log["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["detail"] == json!({"everywhere": true}))
        .collect();
    assert!(everywhere.len() >= 2, "{log}");
    assert!(everywhere
        .iter()
        .all(|e| e["actor"] == "moderator" && e["member"] == "zed"));
    // A hide everywhere survives a restart, and reaches a board made after it.
    let (st, _) = hide_everywhere(&s, admin, "eve", true).await;
    assert_eq!(st, 204);
    let s = match kind {
        Kind::Embedded => s.restart().await,
        _ => {
            let other = s.sibling().await;
            s.stop().await;
            other
        }
    };
    let (st, v) = call(&s, admin, Method::PUT, "/v1/boards/d", Some(json!({}))).await;
    assert_eq!(st, 201, "{v}");
    write_on(&s, admin, "d", "eve", 3).await;
    write_on(&s, admin, "d", "ann", 5).await;
    assert_eq!(members_of(&s, read, "d").await, ["ann"]);
    write_on(&s, admin, "a", "eve", 3).await;
    assert_eq!(members_of(&s, read, "a").await, ["zed", "ann"]);
    s.stop().await;
}

conformance!(
    hiding_everywhere_covers_every_board_present_and_future,
    a_hidden_member_keeps_its_seat_and_the_log_its_retention,
    every_admin_change_is_audited_with_its_actor,
    a_hidden_member_leaves_every_read_but_its_own,
    unhide_restores_every_answer_exactly,
    exports_and_imports_keep_members_hidden,
    refusals_change_nothing,
);
