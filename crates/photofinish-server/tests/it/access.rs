//! Access control (docs/SPEC.md §6), end to end over HTTP on every backend: every endpoint
//! × every kind of caller answers as the rules say, and every refusal (401, 403) leaves
//! the boards exactly as they were. Then the players' tokens case by case, the listing,
//! public boards, the OpenAPI document's security, and TLS.

use std::path::PathBuf;

use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use photofinish_core::access::Scope;
use photofinish_server::auth::jwt::{JwtKey, JwtOptions};
use photofinish_server::auth::keys;
use photofinish_server::rate::Rate;
use photofinish_server::serve::ServeOptions;
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

/// A valid player token for `member`.
pub(crate) fn player(member: &str) -> String {
    es256(json!({"sub": member, "exp": now_s() + 600, "iss": "studio", "aud": "game"}))
}

/// The credentials of one test server.
pub(crate) struct Creds {
    pub(crate) admin: String,
    pub(crate) write_b: String,
    pub(crate) read: String,
    metrics: String,
    other_glob: String,
    pub(crate) ann: String,
    dir: tempfile::TempDir,
}

impl Creds {
    pub(crate) fn new() -> Creds {
        let dir = tempfile::tempdir().expect("tmp");
        let mut stored = Vec::new();
        let mut make = |name: &str, scope, boards: &[&str]| {
            let boards = boards.iter().map(|b| (*b).to_owned()).collect();
            let (k, secret) = keys::new_key(name, scope, boards, None, "t".into()).expect("key");
            stored.push(k);
            secret.expose().to_owned()
        };
        let admin = make("admin", Scope::Admin, &[]);
        let write_b = make("game-server", Scope::Write, &["b", "pub*"]);
        let read = make("reader", Scope::Read, &[]);
        let metrics = make("prometheus", Scope::Metrics, &[]);
        let other_glob = make("season-writer", Scope::Write, &["season-*"]);
        keys::write_file(&dir.path().join("keys.json"), stored).expect("keys file");
        Creds {
            admin,
            write_b,
            read,
            metrics,
            other_glob,
            ann: player("ann"),
            dir,
        }
    }

    fn keys_file(&self) -> PathBuf {
        self.dir.path().join("keys.json")
    }

    pub(crate) fn configure(&self, o: ServeOptions) -> ServeOptions {
        // These tests are about who may do what, not how often: a player's and an
        // address's budget is set past anything they send, so no answer depends on how
        // fast the test runs (a release build spent the default 10/s of a player before;
        // tests/it/rates.rs tests the limits themselves).
        let unlimited = Rate {
            count: 1_000_000,
            per_seconds: 1,
            burst: None,
        };
        ServeOptions {
            player_rate: unlimited,
            anonymous_rate: unlimited,
            keys: Some(self.keys_file()),
            jwt: Some(JwtOptions {
                key: JwtKey::Pem(fixture("es256-public.pem")),
                issuer: Some("studio".into()),
                audience: Some("game".into()),
            }),
            ..o
        }
    }
}

async fn start(kind: Kind) -> (Server, Creds) {
    let creds = Creds::new();
    let s = Server::start_configured(kind, |o| creds.configure(o)).await;
    (s, creds)
}

/// Board `b` (players may write, not public) with ann 5 and bob 3, and board `pub`
/// (public) with carl 1, made fresh by the admin key.
async fn reset(s: &Server, admin: &str) {
    for board in ["b", "pub", "b2", "imp", "publg"] {
        s.call_as(
            Some(admin),
            Method::DELETE,
            &format!("/v1/boards/{board}"),
            None,
        )
        .await;
    }
    let b = json!({"player_writes": true, "cohort_size": 10});
    let (st, _) = s
        .call_as(Some(admin), Method::PUT, "/v1/boards/b", Some(b))
        .await;
    assert_eq!(st, 201);
    // A league board (inside the write key's `pub*`), for the league reads.
    let lg = json!({"reset": "daily", "cohort_size": 10,
        "league": {"tiers": ["low", "high"], "promote": 1, "demote": 1}});
    let (st, _) = s
        .call_as(Some(admin), Method::PUT, "/v1/boards/publg", Some(lg))
        .await;
    assert_eq!(st, 201);
    // An empty board, for imports.
    let (st, _) = s
        .call_as(Some(admin), Method::PUT, "/v1/boards/imp", Some(json!({})))
        .await;
    assert_eq!(st, 201);
    let p = json!({"public_read": true});
    let (st, _) = s
        .call_as(Some(admin), Method::PUT, "/v1/boards/pub", Some(p))
        .await;
    assert_eq!(st, 201);
    let batch = json!({"entries": [
        {"member": "ann", "score": 5, "op": "set"},
        {"member": "bob", "score": 3, "op": "set"},
        {"member": "dan", "score": 4, "op": "set"},
    ]});
    let (st, _) = s
        .call_as(
            Some(admin),
            Method::POST,
            "/v1/boards/b/scores:batch",
            Some(batch),
        )
        .await;
    assert_eq!(st, 200);
    // A hidden member (docs/SPEC.md §15), for the moderation rows.
    let (st, _) = s
        .call_as(
            Some(admin),
            Method::POST,
            "/v1/boards/b/members/dan/hide",
            None,
        )
        .await;
    assert_eq!(st, 204);
    let one = json!({"member": "carl", "score": 1});
    s.call_as(
        Some(admin),
        Method::POST,
        "/v1/boards/pub/scores",
        Some(one),
    )
    .await;
}

/// Everything a caller could have changed, as the admin sees it.
async fn state(s: &Server, admin: &str) -> Value {
    let mut out = Vec::new();
    out.push(
        s.call_as(Some(admin), Method::GET, "/v1/boards", None)
            .await
            .1,
    );
    for board in ["b", "pub", "b2", "imp"] {
        let path = format!("/v1/boards/{board}/entries?limit=100");
        out.push(s.call_as(Some(admin), Method::GET, &path, None).await.1);
    }
    for path in ["/v1/boards/b/hidden", "/v1/audit?limit=1000"] {
        out.push(s.call_as(Some(admin), Method::GET, path, None).await.1);
    }
    Value::Array(out)
}

/// Every kind of caller, named as [`expected`] names them, with its credential.
fn callers(c: &Creds) -> Vec<(&'static str, Option<String>)> {
    let expired =
        es256(json!({"sub": "ann", "exp": now_s() - 120, "iss": "studio", "aud": "game"}));
    vec![
        ("none", None),
        ("admin", Some(c.admin.clone())),
        ("write_b", Some(c.write_b.clone())),
        ("read", Some(c.read.clone())),
        ("metrics", Some(c.metrics.clone())),
        ("other_glob", Some(c.other_glob.clone())),
        ("ann", Some(c.ann.clone())),
        ("garbage", Some("not-a-token".into())),
        ("expired", Some(expired)),
        (
            "revoked",
            Some("pf_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".into()),
        ),
    ]
}

/// What an endpoint asks for, for the expected-answer table.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Need {
    Open,
    List,
    Read,
    Manage,
    Write,
    WriteAt,
    WriteOther,
    Remove,
    Metrics,
    Operate,
    /// Admin keys alone: the audit log of every board, hiding a member everywhere.
    AdminOnly,
    /// What is held about another member across boards (its rewards): as `List`, but a
    /// player reads its own alone (docs/SPEC.md §16).
    OthersData,
    /// Claiming a grant of one's own member (docs/SPEC.md §16): as `Write` needs, and
    /// answered 404 `reward_not_found` where allowed (no grant exists): the access
    /// refusals come first.
    Claim,
}

fn endpoints() -> Vec<(Need, Method, &'static str, Option<Value>)> {
    let at = "2026-01-01T00:00:00Z";
    vec![
        (Need::Open, Method::GET, "/healthz", None),
        (Need::Open, Method::GET, "/openapi.json", None),
        (Need::List, Method::GET, "/v1/boards", None),
        (Need::Read, Method::GET, "/v1/boards/b", None),
        (Need::Read, Method::GET, "/v1/boards/b/periods", None),
        (Need::Read, Method::GET, "/v1/boards/b/entries", None),
        (Need::Read, Method::GET, "/v1/boards/b/events", None),
        (Need::Read, Method::GET, "/v1/boards/b/members/ann", None),
        (
            Need::Read,
            Method::GET,
            "/v1/boards/b/members/ann/around",
            None,
        ),
        (
            Need::Read,
            Method::POST,
            "/v1/boards/b/members:query",
            Some(json!({"members": ["ann", "bob"]})),
        ),
        (Need::Read, Method::GET, "/v1/boards/b/rank?score=4", None),
        (
            Need::Read,
            Method::GET,
            "/v1/boards/b/thresholds?ranks=1",
            None,
        ),
        (Need::List, Method::GET, "/v1/members/ann", None),
        (Need::List, Method::GET, "/v1/members/ann/rewards", None),
        (
            Need::OthersData,
            Method::GET,
            "/v1/members/bob/rewards",
            None,
        ),
        (Need::List, Method::GET, "/v1/members/ann/export", None),
        (
            Need::OthersData,
            Method::GET,
            "/v1/members/bob/export",
            None,
        ),
        (
            Need::Read,
            Method::GET,
            "/v1/boards/b/periods/current/rewards",
            None,
        ),
        (
            Need::Claim,
            Method::POST,
            "/v1/members/ann/rewards/b:2026-01-01:1/claim",
            None,
        ),
        (
            Need::Read,
            Method::GET,
            "/v1/boards/b/members/ann/cohort",
            None,
        ),
        (Need::Read, Method::GET, "/v1/boards/b/cohorts", None),
        (
            Need::Read,
            Method::GET,
            "/v1/boards/publg/members/ann/tier",
            None,
        ),
        (
            Need::Read,
            Method::GET,
            "/v1/boards/publg/periods/current/moves",
            None,
        ),
        (
            Need::Read,
            Method::GET,
            "/v1/boards/b/cohorts/1/entries",
            None,
        ),
        (Need::Manage, Method::PUT, "/v1/boards/b2", Some(json!({}))),
        (
            Need::Manage,
            Method::PATCH,
            "/v1/boards/b",
            Some(json!({"retention": 9})),
        ),
        (Need::Manage, Method::DELETE, "/v1/boards/b", None),
        (
            Need::Write,
            Method::POST,
            "/v1/boards/b/scores",
            Some(json!({"member": "ann", "score": 1})),
        ),
        (
            Need::Write,
            Method::POST,
            "/v1/boards/b/scores:batch",
            Some(json!({"entries": [{"member": "ann", "score": 1}]})),
        ),
        (
            Need::WriteAt,
            Method::POST,
            "/v1/boards/b/scores",
            Some(json!({"member": "ann", "score": 1, "at": at})),
        ),
        (
            Need::WriteOther,
            Method::POST,
            "/v1/boards/b/scores",
            Some(json!({"member": "bob", "score": 1})),
        ),
        (
            Need::WriteOther,
            Method::POST,
            "/v1/boards/b/scores:batch",
            Some(
                json!({"entries": [{"member": "ann", "score": 1}, {"member": "bob", "score": 1}]}),
            ),
        ),
        (
            Need::Remove,
            Method::DELETE,
            "/v1/boards/b/members/bob",
            None,
        ),
        (
            Need::Write,
            Method::POST,
            "/v1/boards/b/members/ann/join",
            None,
        ),
        (
            Need::WriteOther,
            Method::POST,
            "/v1/boards/b/members/bob/join",
            None,
        ),
        (
            Need::Manage,
            Method::POST,
            "/v1/boards/b/members/bob/hide",
            None,
        ),
        (
            Need::Manage,
            Method::POST,
            "/v1/boards/b/members/dan/unhide",
            None,
        ),
        (Need::Manage, Method::GET, "/v1/boards/b/hidden", None),
        (Need::AdminOnly, Method::GET, "/v1/audit", None),
        (Need::AdminOnly, Method::POST, "/v1/members/bob/hide", None),
        (Need::AdminOnly, Method::DELETE, "/v1/members/bob", None),
        (
            Need::AdminOnly,
            Method::POST,
            "/v1/members/dan/unhide",
            None,
        ),
        (Need::Manage, Method::GET, "/v1/audit?board=b", None),
        (Need::Metrics, Method::GET, "/metrics", None),
        (Need::Operate, Method::GET, "/v1/admin/backup", None),
        (Need::Read, Method::GET, "/v1/boards/b/export", None),
        (
            Need::Manage,
            Method::POST,
            "/v1/boards/imp/import",
            Some(json!({"member": "zed", "score": 1})),
        ),
    ]
}

/// The status each kind of caller must get (2xx as 200: success of any kind).
fn expected(caller: &str, need: Need) -> u16 {
    use Need::*;
    let ok = 200;
    match (caller, need) {
        (_, Open) => ok,
        ("garbage" | "expired" | "revoked", _) => 401,
        ("none", List | OthersData) => ok,
        ("none", _) => 401,
        ("admin", _) => ok,
        ("write_b", Read | List | OthersData | Write | WriteOther | Remove | Claim) => ok,
        ("read", Read | List | OthersData) => ok,
        ("metrics", Metrics | List | OthersData) => ok,
        ("other_glob", List | OthersData) => ok,
        ("ann", Read | List | Write | Claim) => ok,
        _ => 403,
    }
}

/// What opening an event stream answers: the status, and the error body of a refusal (an
/// accepted stream is left unread).
async fn opened(s: &Server, token: Option<&str>, path: &str) -> (reqwest::StatusCode, Value) {
    match photofinish_testkit::sse::EventStream::open(&s.base, path, token, None).await {
        Ok(_) => (reqwest::StatusCode::OK, Value::Null),
        Err(refused) => refused,
    }
}

async fn every_endpoint_answers_every_caller_by_the_rules(kind: Kind) {
    let (s, c) = start(kind).await;
    let callers = callers(&c);
    for (need, method, path, body) in endpoints() {
        for (name, token) in &callers {
            reset(&s, &c.admin).await;
            let before = state(&s, &c.admin).await;
            let got = if path.ends_with("/events") {
                opened(&s, token.as_deref(), path).await
            } else {
                s.call_as(token.as_deref(), method.clone(), path, body.clone())
                    .await
            };
            let want = expected(name, need);
            let case = format!("{name} {method} {path} {body:?}: {got:?}");
            if want == 200 && need == Need::Operate && kind != Kind::Embedded {
                // Allowed, but Redis' own persistence is its backup.
                assert_error(&got, 501, "not_supported");
            } else if want == 200 && need == Need::Claim {
                assert_error(&got, 404, "reward_not_found");
            } else if want == 200 {
                assert!(got.0.is_success(), "{case}");
            } else {
                let code = if want == 401 {
                    "unauthorized"
                } else {
                    "forbidden"
                };
                assert_error(&got, want, code);
                assert_eq!(state(&s, &c.admin).await, before, "{case}: state changed");
            }
        }
    }
    s.stop().await;
}

/// A caller without a valid credential learns nothing but 401 (docs/SPEC.md §6): on every
/// endpoint it may not call, a query string and a body the document refuses are answered
/// 401, not 400 — authentication comes before any parameter or body is read — and change
/// nothing. On a public board, where an anonymous read is allowed, the same query is
/// answered 400.
async fn callers_without_a_credential_learn_nothing_but_401(kind: Kind) {
    let (s, c) = start(kind).await;
    reset(&s, &c.admin).await;
    let before = state(&s, &c.admin).await;
    let bad_query = "limit=x&offset=-1&ranking=nope&score=nope&scores=x&since=nope&period=%21";
    for (need, method, path, body) in endpoints() {
        if matches!(need, Need::Open | Need::List | Need::OthersData) {
            continue;
        }
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = format!("{}{path}{sep}{bad_query}", s.base);
        for token in [None, Some("pf_not_a_key")] {
            let mut req = s.http.request(method.clone(), &url);
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            if body.is_some() {
                req = req
                    .header("content-type", "application/json")
                    .body("{\"member\":");
            }
            let resp = req.send().await.expect("request");
            let status = resp.status().as_u16();
            let answer: Value = resp.json().await.unwrap_or(Value::Null);
            let case = format!("{token:?} {method} {path}: {status} {answer}");
            assert_eq!(status, 401, "{case}");
            assert_eq!(answer["error"]["code"], "unauthorized", "{case}");
        }
    }
    assert_eq!(state(&s, &c.admin).await, before, "a refusal changed state");
    // Where anonymous reads are allowed (a public board, the lists), the parameters are
    // read and judged.
    for path in [
        "/v1/boards/pub/entries?limit=x",
        "/v1/boards/pub/rank",
        "/v1/boards?limit=x",
        "/v1/members/carl?ranking=nope",
    ] {
        let got = s.get(path).await;
        assert!(matches!(got.0.as_u16(), 400 | 422), "{path}: {got:?}");
    }
    s.stop().await;
}

async fn listings_and_public_boards_show_only_what_the_caller_may_read(kind: Kind) {
    let (s, c) = start(kind).await;
    reset(&s, &c.admin).await;
    let names = |v: &Value| -> Vec<String> {
        v["boards"]
            .as_array()
            .expect("boards")
            .iter()
            .map(|b| b["name"].as_str().expect("name").to_owned())
            .collect()
    };
    let list = |t: Option<String>| {
        let s = &s;
        async move {
            s.call_as(t.as_deref(), Method::GET, "/v1/boards", None)
                .await
        }
    };
    assert_eq!(names(&list(None).await.1), ["pub"]);
    assert_eq!(list(None).await.1["total"], 1);
    assert_eq!(
        names(&list(Some(c.admin.clone())).await.1),
        ["b", "imp", "pub", "publg"]
    );
    // Paged (docs/SPEC.md §3): `total` counts what the caller may read, the page is a
    // slice of it in name order; past the end, an empty page.
    for (query, want, total) in [
        ("?offset=1&limit=2", vec!["imp", "pub"], 4),
        ("?offset=3", vec!["publg"], 4),
        ("?offset=9", Vec::<&str>::new(), 4),
        ("?limit=0", Vec::<&str>::new(), 4),
    ] {
        let (st, page) = s
            .call_as(
                Some(&c.admin),
                Method::GET,
                &format!("/v1/boards{query}"),
                None,
            )
            .await;
        assert_eq!(st, 200, "{page}");
        assert_eq!(names(&page), want, "{query}");
        assert_eq!(page["total"], json!(total), "{query}");
    }
    let (st, _) = s
        .call_as(Some(&c.admin), Method::GET, "/v1/boards?limit=1001", None)
        .await;
    assert_eq!(st, 400, "a page is at most 1000 boards");
    assert_eq!(
        names(&list(Some(c.other_glob.clone())).await.1),
        Vec::<String>::new()
    );
    assert_eq!(
        names(&list(Some(c.ann.clone())).await.1),
        ["b", "imp", "pub", "publg"]
    );
    // A member across boards shows the boards the caller may read and no other, named
    // or not: a board it may not read is left out like one that does not exist.
    let carl = json!({"member": "carl", "score": 4});
    let (st, _) = s
        .call_as(
            Some(&c.admin),
            Method::POST,
            "/v1/boards/b/scores",
            Some(carl),
        )
        .await;
    assert_eq!(st, 200);
    let across = |t: Option<String>, query: &'static str| {
        let s = &s;
        async move {
            let path = format!("/v1/members/carl{query}");
            let (st, v) = s.call_as(t.as_deref(), Method::GET, &path, None).await;
            assert_eq!(st, 200, "{v}");
            v["boards"]
                .as_array()
                .expect("boards")
                .iter()
                .map(|b| b["board"].as_str().expect("board").to_owned())
                .collect::<Vec<_>>()
        }
    };
    for query in ["", "?boards=b,pub,nope"] {
        assert_eq!(across(None, query).await, ["pub"], "{query}");
        assert_eq!(across(Some(c.read.clone()), query).await, ["b", "pub"]);
        assert_eq!(across(Some(c.ann.clone()), query).await, ["b", "pub"]);
        assert!(across(Some(c.other_glob.clone()), query).await.is_empty());
        assert!(across(Some(c.metrics.clone()), query).await.is_empty());
    }
    // Anonymous reads of a public board work; of a private or missing one they are 401,
    // so a name's existence does not leak.
    assert_eq!(s.get("/v1/boards/pub/entries").await.0, 200);
    assert_eq!(s.get("/v1/boards/pub/members/carl").await.0, 200);
    assert_error(&s.get("/v1/boards/b/entries").await, 401, "unauthorized");
    assert_error(&s.get("/v1/boards/nope/entries").await, 401, "unauthorized");
    let nope = s
        .call_as(Some(&c.admin), Method::GET, "/v1/boards/nope", None)
        .await;
    assert_error(&nope, 404, "board_not_found");
    // A player writing to a board without player_writes is forbidden, and it changes
    // nothing; the admin turns it on with PATCH and the same write goes through.
    let w = json!({"member": "ann", "score": 2});
    let before = state(&s, &c.admin).await;
    let refused = s
        .call_as(
            Some(&c.ann),
            Method::POST,
            "/v1/boards/pub/scores",
            Some(w.clone()),
        )
        .await;
    assert_error(&refused, 403, "forbidden");
    assert_eq!(state(&s, &c.admin).await, before);
    let patch = json!({"player_writes": true});
    let (st, b) = s
        .call_as(Some(&c.admin), Method::PATCH, "/v1/boards/pub", Some(patch))
        .await;
    assert_eq!(
        (st.as_u16(), &b["player_writes"], &b["public_read"]),
        (200, &json!(true), &json!(true))
    );
    let ok = s
        .call_as(Some(&c.ann), Method::POST, "/v1/boards/pub/scores", Some(w))
        .await;
    assert_eq!(ok.0, 200, "{ok:?}");
    // A write endpoint checks the caller before the board: a key that may not write there
    // gets 403 whether the board exists or not, and an empty batch is no way around it.
    for board in ["b", "nope"] {
        for key in [&c.read, &c.other_glob, &c.metrics] {
            let path = format!("/v1/boards/{board}/scores");
            let got = s
                .call_as(
                    Some(key),
                    Method::POST,
                    &path,
                    Some(json!({"member": "x", "score": 1})),
                )
                .await;
            assert_error(&got, 403, "forbidden");
            let path = format!("/v1/boards/{board}/scores:batch");
            let got = s
                .call_as(Some(key), Method::POST, &path, Some(json!({"entries": []})))
                .await;
            assert_error(&got, 403, "forbidden");
        }
    }
    // Every entry of a player's batch is authorized before anything applies: ann's own
    // write does not go through beside one for bob, or one with `at`.
    let before = state(&s, &c.admin).await;
    let batch = json!({"entries": [{"member": "ann", "score": 1}, {"member": "bob", "score": 1}]});
    let got = s
        .call_as(
            Some(&c.ann),
            Method::POST,
            "/v1/boards/b/scores:batch",
            Some(batch),
        )
        .await;
    assert_error(&got, 403, "forbidden");
    let batch = json!({"entries": [{"member": "ann", "score": 1}, {"member": "ann", "score": 1, "at": "2026-01-01T00:00:00Z"}]});
    let got = s
        .call_as(
            Some(&c.ann),
            Method::POST,
            "/v1/boards/b/scores:batch",
            Some(batch),
        )
        .await;
    assert_error(&got, 403, "forbidden");
    assert_eq!(state(&s, &c.admin).await, before);
    // The 401 says how to authenticate.
    let resp = s
        .http
        .get(format!("{}/v1/boards/b", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), 401);
    let challenge = resp.headers().get("www-authenticate").expect("challenge");
    assert!(challenge.to_str().expect("ascii").starts_with("Bearer"));
    // Refusals are counted by reason.
    let (_, text) = s
        .call_as(Some(&c.metrics), Method::GET, "/metrics", None)
        .await;
    let text = text.as_str().expect("text").to_owned();
    assert!(
        text.contains("photofinish_refusals_total{reason=\"unauthorized\"}"),
        "{text}"
    );
    assert!(
        text.contains("photofinish_refusals_total{reason=\"forbidden\"}"),
        "{text}"
    );
    s.stop().await;
}

/// The event stream takes its credential from `access_token` too (browsers' EventSource
/// sends no headers) — and no other endpoint does; a public board's stream needs none.
async fn event_streams_take_a_token_in_the_query(kind: Kind) {
    use photofinish_testkit::sse::EventStream;
    let (s, c) = start(kind).await;
    reset(&s, &c.admin).await;
    let with = |t: &str| format!("/v1/boards/b/events?access_token={t}");
    let mut events = EventStream::open(&s.base, &with(&c.read), None, None)
        .await
        .expect("a read key opens the stream");
    let denied = EventStream::open(&s.base, &with(&c.other_glob), None, None).await;
    assert_error(&denied.err().expect("refused"), 403, "forbidden");
    let garbage = EventStream::open(&s.base, &with("pf_nope"), None, None).await;
    assert_error(&garbage.err().expect("refused"), 401, "unauthorized");
    let anonymous = EventStream::open(&s.base, "/v1/boards/b/events", None, None).await;
    assert_error(&anonymous.err().expect("refused"), 401, "unauthorized");
    EventStream::open(&s.base, "/v1/boards/pub/events", None, None)
        .await
        .expect("a public board's stream is open to all");
    let elsewhere = s
        .get(&format!("/v1/boards/b/entries?access_token={}", c.read))
        .await;
    assert_error(&elsewhere, 401, "unauthorized");
    let w = json!({"member": "zed", "score": 9});
    let (st, _) = s
        .call_as(Some(&c.admin), Method::POST, "/v1/boards/b/scores", Some(w))
        .await;
    assert_eq!(st, 200);
    assert_eq!(events.next().await.data["member"], "zed");
    s.stop().await;
}

/// Every board command of the RESP door, with what it needs (`Need` as for endpoints).
fn commands() -> Vec<(Need, Vec<&'static str>)> {
    vec![
        (Need::Read, vec!["LB.INFO", "b"]),
        (Need::Read, vec!["LB.SCORE", "b", "ann"]),
        (Need::Read, vec!["LB.RANK", "b", "ann"]),
        (Need::Read, vec!["LB.RANGE", "b", "0", "10"]),
        (Need::Read, vec!["LB.AROUND", "b", "ann", "1", "1"]),
        (Need::Read, vec!["LB.CARD", "b"]),
        (Need::Read, vec!["LB.COHORT", "b", "ann"]),
        (Need::Read, vec!["LB.TIER", "publg", "ann"]),
        (Need::Read, vec!["LB.QUERY", "b", "2", "ann", "bob"]),
        (Need::Read, vec!["LB.RANKOF", "b", "4"]),
        (Need::Read, vec!["LB.THRESHOLDS", "b", "RANKS", "1"]),
        (Need::List, vec!["LB.MEMBER", "ann"]),
        (Need::List, vec!["LB.REWARDS", "ann"]),
        (Need::OthersData, vec!["LB.REWARDS", "bob"]),
        (Need::Claim, vec!["LB.CLAIM", "ann", "b:2026-01-01:1"]),
        (Need::Manage, vec!["LB.CREATE", "b2"]),
        (Need::Manage, vec!["LB.DROP", "b"]),
        (Need::Write, vec!["LB.INCR", "b", "ann", "1"]),
        (Need::Write, vec!["LB.SUBMIT", "b", "ann", "1"]),
        (
            Need::Write,
            vec!["LB.SET", "b", "ann", "1", "IDEMPOTENCY", "k1"],
        ),
        (
            Need::WriteAt,
            vec!["LB.SUBMIT", "b", "ann", "1", "AT", "2026-01-01T00:00:00Z"],
        ),
        (Need::WriteOther, vec!["LB.INCR", "b", "bob", "1"]),
        (Need::Remove, vec!["LB.REM", "b", "bob"]),
        (Need::Write, vec!["LB.JOIN", "b", "ann"]),
        (Need::WriteOther, vec!["LB.JOIN", "b", "bob"]),
        (Need::Manage, vec!["LB.HIDE", "b", "bob"]),
        (Need::Manage, vec!["LB.UNHIDE", "b", "dan"]),
    ]
}

/// The RESP door answers every command by the same rules, on the same credentials
/// (`AUTH`, `HELLO 3 AUTH`): what HTTP answers 401 is `-NOAUTH`, 403 is `-ERR forbidden`;
/// a credential that does not check out is `-WRONGPASS` and leaves the connection
/// anonymous; every refusal changes nothing.
async fn every_resp_command_answers_every_caller_by_the_rules(kind: Kind) {
    let (s, c) = start(kind).await;
    let callers = callers(&c);
    for (i, (name, token)) in callers.iter().enumerate() {
        let mut conn = resp(&s).await;
        if let Some(t) = token {
            // Half the callers say who they are with AUTH, half with HELLO 3 AUTH.
            let how: Vec<&str> = if i % 2 == 0 {
                vec!["AUTH", t]
            } else {
                vec!["HELLO", "3", "AUTH", "default", t]
            };
            let got = lb(&mut conn, &how).await;
            let good = !matches!(*name, "garbage" | "expired" | "revoked");
            assert_eq!(got.get("error").is_none(), good, "{name}: {got}");
            if !good {
                assert_eq!(got["error"], "WRONGPASS", "{name}");
            }
        }
        for (need, args) in commands() {
            reset(&s, &c.admin).await;
            let before = state(&s, &c.admin).await;
            let got = lb(&mut conn, &args).await;
            let case = format!("{name} {args:?}: {got}");
            // A credential that does not check out leaves the connection anonymous, and
            // anonymous callers may list (what they may read), as `none` may.
            let anonymous = matches!(*name, "garbage" | "expired" | "revoked");
            let want = match need {
                Need::List | Need::OthersData if anonymous => expected("none", need),
                _ => expected(name, need),
            };
            match want {
                200 if need == Need::Claim => assert_eq!(got["error"], "reward_not_found"),
                200 => assert!(got.get("error").is_none(), "{case}"),
                401 => assert_eq!(got["error"], "NOAUTH", "{case}"),
                _ => assert_eq!(got["error"], "forbidden", "{case}"),
            }
            if got.get("error").is_some() {
                assert_eq!(state(&s, &c.admin).await, before, "{case}: state changed");
            }
        }
    }
    // A public board is readable without a credential; a key revoked while its
    // connection is open stops working at the connection's next command.
    reset(&s, &c.admin).await;
    let mut anonymous = resp(&s).await;
    assert_eq!(
        lb(&mut anonymous, &["LB.SCORE", "pub", "carl"]).await,
        json!(1)
    );
    let mut writer = resp(&s).await;
    assert_eq!(lb(&mut writer, &["AUTH", &c.write_b]).await, "OK");
    assert_eq!(
        lb(&mut writer, &["LB.INCR", "b", "ann", "1"]).await,
        json!(6)
    );
    let mut stored = keys::read_file(&c.keys_file(), false).expect("keys");
    stored.retain(|k| k.name != "game-server");
    keys::write_file(&c.keys_file(), stored).expect("keys file");
    // SIGHUP re-reads the keys file (every server of this test process re-reads its own).
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .expect("kill");
    assert!(hup.success());
    let mut got = Value::Null;
    for _ in 0..600 {
        // up to 30 s: a loaded machine may be slow to take the signal
        got = lb(&mut writer, &["LB.SCORE", "b", "ann"]).await;
        if got.get("error").is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(got["error"], "NOAUTH", "the revoked key still works: {got}");
    s.stop().await;
}

conformance!(
    every_endpoint_answers_every_caller_by_the_rules,
    callers_without_a_credential_learn_nothing_but_401,
    every_resp_command_answers_every_caller_by_the_rules,
    listings_and_public_boards_show_only_what_the_caller_may_read,
    event_streams_take_a_token_in_the_query,
);

/// Each way a player token can be wrong is a 401, and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_player_tokens_are_refused() {
    let (s, c) = start(Kind::Embedded).await;
    reset(&s, &c.admin).await;
    let now = now_s();
    let claims = |over: Value| {
        let mut base = json!({"sub": "ann", "exp": now + 600, "iss": "studio", "aud": "game"});
        for (k, v) in over.as_object().expect("object") {
            if v.is_null() {
                base.as_object_mut().expect("object").remove(k);
            } else {
                base[k] = v.clone();
            }
        }
        base
    };
    let hs_with_public_key = {
        // Algorithm confusion: an HMAC token keyed with the server's public key.
        let public = std::fs::read(fixture("es256-public.pem")).expect("pem");
        encode(
            &Header::new(Algorithm::HS256),
            &claims(json!({})),
            &EncodingKey::from_secret(&public),
        )
        .expect("sign")
    };
    let rs256 = {
        let pem = std::fs::read(fixture("rs256-private.pem")).expect("pem");
        encode(
            &Header::new(Algorithm::RS256),
            &claims(json!({})),
            &EncodingKey::from_rsa_pem(&pem).expect("rsa"),
        )
        .expect("sign")
    };
    let unsigned = {
        use base64::Engine;
        let b64 =
            |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!(
            "{}.{}.",
            b64(&json!({"alg": "none", "typ": "JWT"})),
            b64(&claims(json!({})))
        )
    };
    let valid = player("ann");
    let mut tampered = valid.clone();
    let sig_start = tampered.rfind('.').expect("dot") + 1;
    let flipped = if tampered.as_bytes()[sig_start] == b'A' {
        "B"
    } else {
        "A"
    };
    tampered.replace_range(sig_start..=sig_start, flipped);
    let cases = [
        (
            "expired beyond the leeway",
            es256(claims(json!({"exp": now - 60}))),
        ),
        ("not yet valid", es256(claims(json!({"nbf": now + 600})))),
        ("no exp", es256(claims(json!({"exp": null})))),
        ("no sub", es256(claims(json!({"sub": null})))),
        (
            "wrong issuer",
            es256(claims(json!({"iss": "someone-else"}))),
        ),
        ("no issuer", es256(claims(json!({"iss": null})))),
        (
            "wrong audience",
            es256(claims(json!({"aud": "other-game"}))),
        ),
        ("bad signature", tampered),
        ("truncated", valid[..valid.len() - 10].to_owned()),
        ("HS256 keyed with the public key", hs_with_public_key),
        ("another algorithm", rs256),
        ("alg none", unsigned),
    ];
    let write = json!({"member": "ann", "score": 1});
    for (what, token) in cases {
        let before = state(&s, &c.admin).await;
        let got = s
            .call_as(
                Some(&token),
                Method::POST,
                "/v1/boards/b/scores",
                Some(write.clone()),
            )
            .await;
        assert_eq!(got.0, 401, "{what}: {got:?}");
        assert_eq!(got.1["error"]["code"], "unauthorized", "{what}");
        assert_eq!(state(&s, &c.admin).await, before, "{what}: state changed");
    }
    // Within the 30 s leeway an expired token still works.
    let lenient = es256(claims(json!({"exp": now_s() - 10}))); // now, not the test's start
    let got = s
        .call_as(
            Some(&lenient),
            Method::POST,
            "/v1/boards/b/scores",
            Some(write.clone()),
        )
        .await;
    assert_eq!(got.0, 200, "{got:?}");
    // A verified token served from the cache still answers for its own member only.
    let ann = player("ann");
    for _ in 0..3 {
        let ok = s
            .call_as(
                Some(&ann),
                Method::POST,
                "/v1/boards/b/scores",
                Some(write.clone()),
            )
            .await;
        assert_eq!(ok.0, 200);
        let bob = json!({"member": "bob", "score": 1});
        let refused = s
            .call_as(Some(&ann), Method::POST, "/v1/boards/b/scores", Some(bob))
            .await;
        assert_eq!(refused.0, 403);
    }
    s.stop().await;
}

/// Keys that would load and then refuse every token, or a guessable secret, stop start-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_jwt_keys_stop_start_up() {
    let dir = tempfile::tempdir().expect("tmp");
    let short = dir.path().join("short.secret");
    std::fs::write(&short, b"too-short\n").expect("secret");
    let p384 = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).expect("p384");
    let p384_pem = dir.path().join("p384.pem");
    std::fs::write(&p384_pem, p384.public_key_pem()).expect("pem");
    for (key, why) in [
        (JwtKey::Hs256SecretFile(short), "at least 32"),
        (JwtKey::Pem(p384_pem), "P-256"),
    ] {
        let opts = JwtOptions {
            key,
            issuer: None,
            audience: None,
        };
        let err = photofinish_server::auth::jwt::JwtVerifier::new(&opts).expect_err("refused");
        assert!(err.contains(why), "{err}");
    }
}

/// RS256 and EdDSA keys and an HS256 secret file verify their own tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_key_kind_verifies_its_tokens() {
    let secret_dir = tempfile::tempdir().expect("tmp");
    let secret_file = secret_dir.path().join("hs256.secret");
    std::fs::write(&secret_file, b"a-long-shared-secret-of-the-studio\n").expect("secret");
    let pem = |n: &str| std::fs::read(fixture(n)).expect("pem");
    let claims = json!({"sub": "ann", "exp": now_s() + 600});
    let kinds: Vec<(JwtKey, Algorithm, EncodingKey)> = vec![
        (
            JwtKey::Pem(fixture("rs256-public.pem")),
            Algorithm::RS256,
            EncodingKey::from_rsa_pem(&pem("rs256-private.pem")).expect("rsa"),
        ),
        (
            JwtKey::Pem(fixture("eddsa-public.pem")),
            Algorithm::EdDSA,
            EncodingKey::from_ed_pem(&pem("eddsa-private.pem")).expect("ed"),
        ),
        (
            JwtKey::Hs256SecretFile(secret_file.clone()),
            Algorithm::HS256,
            // The file's trailing newline is not part of the secret.
            EncodingKey::from_secret(b"a-long-shared-secret-of-the-studio"),
        ),
    ];
    for (key, alg, signer) in kinds {
        let s = Server::start_configured(Kind::Embedded, |o| ServeOptions {
            jwt: Some(JwtOptions {
                key,
                issuer: None,
                audience: None,
            }),
            ..o
        })
        .await;
        let token = encode(&Header::new(alg), &claims, &signer).expect("sign");
        let got = s
            .call_as(Some(&token), Method::GET, "/v1/boards", None)
            .await;
        assert_eq!(got.0, 200, "{alg:?}: {got:?}");
        let es = es256(claims.clone());
        let refused = s.call_as(Some(&es), Method::GET, "/v1/boards", None).await;
        assert_eq!(refused.0, 401, "{alg:?} took an ES256 token");
        // JWT alone: no keys file, so an API-key-shaped token is unknown.
        let key = s
            .call_as(Some("pf_x"), Method::GET, "/v1/boards", None)
            .await;
        assert_eq!(key.0, 401);
        s.stop().await;
    }
}

/// The document says what the server asks for: optional on an open server, required (with
/// 401/403 answers) on one with credentials except for reads and the open routes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_follows_the_configuration() {
    let open = Server::start(Kind::Embedded).await;
    let (_, doc) = open.get("/openapi.json").await;
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    let post = &doc["paths"]["/v1/boards/{board}/scores"]["post"];
    assert_eq!(post["security"], json!([{}, {"bearer": []}]));
    assert!(post["responses"].get("401").is_none());
    // An open server refuses no caller: no route documents the access refusals, admin
    // changes included.
    let hide = &doc["paths"]["/v1/boards/{board}/members/{member}/hide"]["post"];
    for status in ["401", "403", "429"] {
        assert!(hide["responses"].get(status).is_none(), "{status}");
    }
    // Each route's refusals are its operation's, under their statuses: a hide's are the
    // board it names and its rules; a removal's, what it names, and its key's.
    let refusals = |op: &Value, status: &str| -> String {
        op["responses"][status]["description"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(refusals(hide, "404").contains("`board_not_found`"));
    let rules = refusals(hide, "422");
    assert!(rules.contains("`invalid_member`") && rules.contains("`too_many_hidden`"));
    let remove = &doc["paths"]["/v1/boards/{board}/members/{member}"]["delete"];
    let absent = refusals(remove, "404");
    for code in ["board_not_found", "period_not_found", "member_not_found"] {
        assert!(absent.contains(&format!("`{code}`")), "{code}: {absent}");
    }
    assert!(refusals(remove, "422").contains("`idempotency_key_reused`"));
    assert!(refusals(remove, "409").contains("`idempotency_key_in_flight`"));
    // Every code the operation declares is in its route's document, and nothing else.
    use photofinish_core::error::Refuses;
    let listed = |op: &Value| -> String {
        op["responses"]
            .as_object()
            .map(|r| r.values().map(|v| v["description"].to_string()).collect())
            .unwrap_or_default()
    };
    let declared = [
        (hide, photofinish_core::op::Hide::REFUSALS),
        (remove, photofinish_core::op::Remove::REFUSALS),
    ];
    for (op, codes) in declared {
        let all = listed(op);
        for code in photofinish_core::ErrorCode::ALL {
            let named = all.contains(&format!("`{}`", code.as_str()));
            let keyed = matches!(
                code,
                photofinish_core::ErrorCode::IdempotencyKeyReused
                    | photofinish_core::ErrorCode::IdempotencyKeyInFlight
            );
            assert_eq!(
                named,
                codes.contains(code) || (keyed && op == remove),
                "{code:?}"
            );
        }
    }
    let cohort = &doc["paths"]["/v1/boards/{board}/members/{member}/cohort"]["get"];
    assert!(refusals(cohort, "409").contains("`cohort_pending`"));
    open.stop().await;

    let (s, _c) = start(Kind::Embedded).await;
    let (_, doc) = s.get("/openapi.json").await;
    let op = |path: &str, method: &str| doc["paths"][path][method].clone();
    let post = op("/v1/boards/{board}/scores", "post");
    assert_eq!(post["security"], json!([{"bearer": []}]));
    assert!(post["responses"].get("401").is_some() && post["responses"].get("403").is_some());
    // Every 401 states the header it carries, and the header is what the server sends.
    let refused = s
        .http
        .post(format!("{}/v1/boards/b/scores", s.base))
        .json(&json!({"member": "ann", "score": 1}))
        .send()
        .await
        .expect("post");
    assert_eq!(refused.status(), 401);
    let sent = refused.headers()["www-authenticate"]
        .to_str()
        .expect("ascii")
        .to_owned();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("item") {
            if let Some(r) = op["responses"].get("401") {
                let h = &r["headers"]["WWW-Authenticate"]["schema"];
                assert_eq!(h["enum"], json!([sent]), "{method} {path}");
            }
        }
    }
    assert_eq!(
        op("/v1/boards/{board}/entries", "get")["security"],
        json!([{}, {"bearer": []}])
    );
    assert_eq!(op("/metrics", "get")["security"], json!([{"bearer": []}]));
    assert_eq!(op("/healthz", "get")["security"], json!([{}]));
    assert_eq!(
        op("/v1/boards/{board}", "patch")["security"],
        json!([{"bearer": []}])
    );
    s.stop().await;
}

/// HTTPS with a certificate made here: a client that trusts it talks to the server; the
/// server still answers plain HTTP with nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_round_trip_with_a_self_signed_certificate() {
    let dir = tempfile::tempdir().expect("tmp");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
    let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_file, cert.cert.pem()).expect("cert");
    std::fs::write(&key_file, cert.key_pair.serialize_pem()).expect("key");
    let s = Server::start_configured(Kind::Embedded, |o| ServeOptions {
        tls: Some(photofinish_server::listen::TlsFiles {
            cert: cert_file,
            key: key_file,
        }),
        ..o
    })
    .await;
    let port = s.base.rsplit(':').next().expect("port").to_owned();
    let client = reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(cert.cert.pem().as_bytes()).expect("root"),
        )
        .tls_built_in_root_certs(false)
        .build()
        .expect("client");
    let base = format!("https://localhost:{port}");
    let put = client
        .put(format!("{base}/v1/boards/t"))
        .json(&json!({}))
        .send()
        .await
        .expect("https");
    assert_eq!(put.status(), 201);
    let health: Value = client
        .get(format!("{base}/healthz"))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(health["status"], "ok");
    // Plain HTTP to the TLS port gets no HTTP answer.
    assert!(s
        .http
        .get(format!("{}/healthz", s.base))
        .send()
        .await
        .is_err());
    // The RESP door speaks TLS too: redis-cli --tls, verifying the certificate.
    let resp_port = s.resp.expect("RESP").port().to_string();
    let ca = dir.path().join("cert.pem");
    let cli = tokio::task::spawn_blocking(move || {
        std::process::Command::new("redis-cli")
            .args(["--tls", "--cacert"])
            .arg(&ca)
            .args(["-h", "127.0.0.1", "--sni", "localhost", "-p", &resp_port])
            .args(["LB.INCR", "t", "ann", "2"])
            .output()
            .expect("redis-cli")
    })
    .await
    .expect("join");
    assert_eq!(String::from_utf8_lossy(&cli.stdout), "2\n", "{cli:?}");
    s.stop().await;
}
