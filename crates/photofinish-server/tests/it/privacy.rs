//! A member's own data (docs/SPEC.md §16, docs/privacy.md) end to end, on every backend:
//! its export lists every board and kept period where it has an entry or a seat (scores,
//! metadata, `reached_at`, cohort, tier, attempts) and its grants; an admin's adds whether
//! it is hidden and the audit entries naming it; the player's own and a read key's keep
//! the shadow ban (no `hidden`, no actor's name); a key limited to some boards exports
//! those alone; a player exporting another member is refused and changes nothing. An
//! erase takes the member from every board and period at once (its cohort seat still
//! counted, the others' grants keeping their ids), names it in the audit by an HMAC
//! alone, survives a restart, and a later write under the name is a new member; every
//! caller but an admin of every board is refused and changes nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use photofinish_core::clock::ManualClock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::access::Creds;
use crate::support::*;

/// 2026-11-23T01:00:00Z, µs: inside period 2026-11-23 of a daily UTC board.
const DAY1_US: i64 = 1_795_395_600_000_000;
const DAY: i64 = 86_400_000_000;
const S: i64 = 1_000_000;
const GRACE: i64 = 60;
/// A second past day 1's close (after grace).
const CLOSED_US: i64 = DAY1_US + DAY + (GRACE + 1) * S;

/// Each board's name and the ids of its periods, as an export lists them.
fn boards_and_periods(export: &Value) -> Vec<(String, Vec<String>)> {
    export["boards"]
        .as_array()
        .expect("boards")
        .iter()
        .map(|b| {
            let periods = b["periods"].as_array().expect("periods");
            let ids = periods
                .iter()
                .map(|p| p["period"].as_str().expect("id").to_owned());
            (
                b["board"].as_str().expect("board").to_owned(),
                ids.collect(),
            )
        })
        .collect()
}

/// `v` without the fields that depend on who else ranks (rank, cohort rank, total, share).
fn without_ranks(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| {
                    !["rank", "cohort_rank", "total", "top_percent"].contains(&k.as_str())
                })
                .map(|(k, v)| (k.clone(), without_ranks(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_ranks).collect()),
        other => other.clone(),
    }
}

fn board<'a>(export: &'a Value, name: &str) -> &'a Value {
    export["boards"]
        .as_array()
        .expect("boards")
        .iter()
        .find(|b| b["board"] == json!(name))
        .unwrap_or_else(|| panic!("no board {name} in {export}"))
}

/// A server on a manual clock at day 1 with the three boards the export and erase tests
/// share — `b` (daily, its winner paid `gold`, players write their own), `lg` (a daily
/// league of cohorts of 10, one promoted) and `quiet` (two members at most) — and its
/// credentials.
struct Day1 {
    s: Server,
    c: Creds,
    clock: Arc<ManualClock>,
}

impl Day1 {
    /// Starts it; `gold_to` is the last rank `b` pays.
    async fn start(kind: Kind, gold_to: u64) -> Self {
        let clock = Arc::new(ManualClock::new(DAY1_US));
        let c = Creds::new();
        let s = Server::start_manual_configured(kind, clock.clone(), |o| c.configure(o)).await;
        let d = Self { s, c, clock };
        let boards = [
            (
                "b",
                json!({"reset": "daily", "grace": GRACE, "player_writes": true,
                    "rewards": [{"from": 1, "to": gold_to, "reward": "gold", "amount": 2}]}),
            ),
            (
                "lg",
                json!({"reset": "daily", "grace": GRACE, "cohort_size": 10, "max_attempts": 3,
                    "league": {"tiers": ["low", "high"], "promote": 1, "demote": 0}}),
            ),
            ("quiet", json!({"max_members": 2})),
        ];
        for (name, config) in boards {
            let (st, b) = d
                .admin(Method::PUT, &format!("/v1/boards/{name}"), Some(config))
                .await;
            assert_eq!(st, 201, "{name}: {b}");
        }
        d
    }

    /// A call as `token`.
    async fn call(
        &self,
        token: Option<&str>,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (reqwest::StatusCode, Value) {
        self.s.call_as(token, method, path, body).await
    }

    /// A call as the admin of every board.
    async fn admin(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (reqwest::StatusCode, Value) {
        self.call(Some(&self.c.admin), method, path, body).await
    }

    /// `member` scores `score` (with `metadata`) on `board`, as the admin.
    async fn score(&self, board: &str, member: &str, score: i64, metadata: Value) {
        let body = json!({"member": member, "score": score, "metadata": metadata});
        let path = format!("/v1/boards/{board}/scores");
        let (st, w) = self.admin(Method::POST, &path, Some(body)).await;
        assert_eq!(st, 200, "{w}");
    }

    /// Hides `member` on `board`, as the admin.
    async fn hide(&self, board: &str, member: &str) {
        let path = format!("/v1/boards/{board}/members/{member}/hide");
        let (st, h) = self.admin(Method::POST, &path, Some(json!({}))).await;
        assert_eq!(st, 204, "{h}");
    }

    /// Past day 1's close: waits for `b`'s grants and for ann's promotion on `lg`.
    async fn close_day1(&self) {
        self.clock.set(CLOSED_US);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let path = "/v1/boards/b/periods/2026-11-23/rewards";
            let (_, r) = self.admin(Method::GET, path, None).await;
            let path = "/v1/boards/lg/members/ann/tier";
            let (_, t) = self.admin(Method::GET, path, None).await;
            if r["granted"] == json!(true) && t["tier"] == json!("high") {
                return;
            }
            assert!(Instant::now() < deadline, "never closed: {r} {t}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn an_export_holds_every_board_and_period_and_keeps_the_shadow_ban(kind: Kind) {
    let d = Day1::start(kind, 1).await;
    let (c, admin) = (&d.c, Some(d.c.admin.as_str()));
    // Day 1: ann wins b (gold) and tops her cohort of lg in two attempts (5 + 7); bob is on
    // every board, quiet included, where ann has nothing.
    d.score("b", "ann", 9, json!({"skin": "red"})).await;
    d.score("b", "bob", 3, Value::Null).await;
    d.score("lg", "ann", 5, Value::Null).await;
    d.score("lg", "ann", 7, Value::Null).await;
    d.score("lg", "bob", 6, Value::Null).await;
    d.score("quiet", "bob", 1, Value::Null).await;
    d.close_day1().await;
    // Day 2: ann plays b again and joins lg without playing; the admin hides her on b and
    // the game server claims her grant.
    d.score("b", "ann", 4, Value::Null).await;
    d.score("b", "bob", 8, Value::Null).await;
    let (st, j) = d
        .call(admin, Method::POST, "/v1/boards/lg/members/ann/join", None)
        .await;
    assert_eq!(st, 201, "{j}");
    d.hide("b", "ann").await;
    let claim = "/v1/members/ann/rewards/b:2026-11-23:1/claim";
    let (st, g) = d.call(Some(&c.write_b), Method::POST, claim, None).await;
    assert_eq!(
        (st.as_u16(), &g["claimed_by"]),
        (200, &json!("game-server")),
        "{g}"
    );

    // The admin's export: every board and kept period, newest first; hidden; the audit.
    let path = "/v1/members/ann/export";
    let (st, full) = d.call(admin, Method::GET, path, None).await;
    assert_eq!(st, 200, "{full}");
    assert_eq!(full["member"], json!("ann"));
    let periods = vec!["2026-11-24".to_owned(), "2026-11-23".to_owned()];
    assert_eq!(
        boards_and_periods(&full),
        [
            ("b".to_owned(), periods.clone()),
            ("lg".to_owned(), periods.clone())
        ]
    );
    let b = board(&full, "b");
    assert_eq!(b["hidden"], json!(true));
    let (today, day1) = (&b["periods"][0]["entry"], &b["periods"][1]["entry"]);
    assert_eq!(
        (&today["score"], &today["hidden"]),
        (&json!(4), &json!(true)),
        "{b}"
    );
    assert_eq!(today["rank"], json!(2), "the rank it would have: {b}");
    assert_eq!(
        (
            &day1["score"],
            &day1["rank"],
            &day1["metadata"],
            &day1["hidden"]
        ),
        (&json!(9), &json!(1), &json!({"skin": "red"}), &json!(true)),
        "{b}"
    );
    assert!(day1["reached_at"].is_string(), "{day1}");
    let grant = &b["grants"][0];
    assert_eq!(
        (
            &grant["id"],
            &grant["reward"],
            &grant["amount"],
            &grant["claimed_by"]
        ),
        (
            &json!("b:2026-11-23:1"),
            &json!("gold"),
            &json!(2),
            &json!("game-server")
        )
    );
    let lg = board(&full, "lg");
    assert_eq!(
        (&lg["hidden"], &lg["tier"]),
        (&json!(false), &json!("high")),
        "{lg}"
    );
    let (joined, played) = (&lg["periods"][0], &lg["periods"][1]);
    assert_eq!(
        (&joined["waiting"], &joined["entry"]),
        (&json!(true), &Value::Null)
    );
    assert_eq!(played["waiting"], json!(false));
    let e = &played["entry"];
    assert_eq!(
        (
            &e["score"],
            &e["attempts"],
            &e["cohort"],
            &e["cohort_rank"],
            &e["tier"]
        ),
        (&json!(12), &json!(2), &json!(1), &json!(1), &json!("low")),
        "{e}"
    );
    assert_eq!(lg["grants"], json!([]));
    let audit = full["audit"]
        .as_array()
        .expect("an admin's export has the audit");
    assert!(
        audit.iter().any(|a| a["action"] == json!("member.hide")
            && a["member"] == json!("ann")
            && a["actor"] == json!("admin")),
        "{full}"
    );
    assert!(audit.iter().all(|a| a["member"] == json!("ann")), "{full}");

    // The player's own export and a read key's: the same data, as ann sees herself —
    // not whether she is hidden, no actor's name, no audit.
    for token in [c.ann.as_str(), c.read.as_str()] {
        let (st, own) = d.call(Some(token), Method::GET, path, None).await;
        assert_eq!(st, 200, "{own}");
        assert_eq!(boards_and_periods(&own), boards_and_periods(&full));
        let text = own.to_string();
        for secret in ["hidden", "audit", "game-server", "admin"] {
            assert!(!text.contains(secret), "{secret} in {own}");
        }
        let b = board(&own, "b");
        assert_eq!(b["periods"][0]["entry"]["rank"], json!(2), "{own}");
        assert_eq!(b["grants"][0]["claimed_by"], Value::Null);
        assert!(b["grants"][0]["claimed_at"].is_string(), "{own}");
    }
    // A key limited to some boards exports those alone.
    let (st, some) = d.call(Some(&c.write_b), Method::GET, path, None).await;
    assert_eq!(st, 200, "{some}");
    assert_eq!(
        boards_and_periods(&some),
        [("b".to_owned(), periods.clone())]
    );
    // Nothing held: no boards. Another member's, by a player: 403, nothing changed.
    let (st, none) = d
        .call(admin, Method::GET, "/v1/members/zed/export", None)
        .await;
    assert_eq!((st.as_u16(), &none["boards"]), (200, &json!([])), "{none}");
    let before = d
        .call(admin, Method::GET, "/v1/members/bob/export", None)
        .await;
    let refused = d
        .call(Some(&c.ann), Method::GET, "/v1/members/bob/export", None)
        .await;
    assert_error(&refused, 403, "forbidden");
    let after = d
        .call(admin, Method::GET, "/v1/members/bob/export", None)
        .await;
    assert_eq!(
        (before.1["boards"].clone(), before.1["audit"].clone()),
        (after.1["boards"].clone(), after.1["audit"].clone())
    );
    assert_error(
        &d.call(admin, Method::GET, "/v1/members/a%01b/export", None)
            .await,
        422,
        "invalid_member",
    );
    d.s.stop().await;
}

async fn an_erase_takes_the_member_from_every_board_at_once(kind: Kind) {
    let d = Day1::start(kind, 2).await;
    let (c, admin) = (&d.c, Some(d.c.admin.as_str()));
    for (board, member, score) in [
        ("b", "ann", 9),
        ("b", "bob", 3),
        ("lg", "ann", 5),
        ("lg", "bob", 4),
        ("quiet", "bob", 1),
        ("quiet", "ann", 2),
    ] {
        d.score(board, member, score, Value::Null).await;
    }
    // quiet is full: cy is refused until ann's place frees.
    let cy = || json!({"member": "cy", "score": 1});
    let full = d
        .admin(Method::POST, "/v1/boards/quiet/scores", Some(cy()))
        .await;
    assert_error(&full, 422, "board_full");
    d.close_day1().await;
    d.hide("b", "ann").await;
    // Hidden across every board too: the set forgets the name with the rest.
    let (st, _) = d
        .call(admin, Method::POST, "/v1/members/ann/hide", Some(json!({})))
        .await;
    assert_eq!(st, 204);
    let bob_before = d
        .call(admin, Method::GET, "/v1/members/bob/export", None)
        .await
        .1;

    // Everyone but an admin of every board is refused, and nothing changes.
    let ann_before = d
        .call(admin, Method::GET, "/v1/members/ann/export", None)
        .await
        .1;
    for (token, status, code) in [
        (Some(c.write_b.as_str()), 403, "forbidden"),
        (Some(c.read.as_str()), 403, "forbidden"),
        (Some(c.ann.as_str()), 403, "forbidden"),
        (None, 401, "unauthorized"),
    ] {
        assert_error(
            &d.call(token, Method::DELETE, "/v1/members/ann", None).await,
            status,
            code,
        );
        let now = d
            .call(admin, Method::GET, "/v1/members/ann/export", None)
            .await
            .1;
        assert_eq!(now["boards"], ann_before["boards"]);
    }

    let token = c.admin.clone();
    let (s, admin) = (d.s, Some(token.as_str()));
    let erased = keyed_erase(&s, admin, "ann", "erase-1").await;
    assert_eq!(erased, (200, json!({"member": "ann", "boards": 3}), false));
    ann_is_erased(&s, admin, &bob_before).await;
    let (st, w) = s
        .call_as(admin, Method::POST, "/v1/boards/quiet/scores", Some(cy()))
        .await;
    assert_eq!(st, 200, "ann's place on quiet is free: {w}");
    let s = s.restart().await;
    ann_is_erased(&s, admin, &bob_before).await;
    // Its key, retried after a restart, answers the first answer again; with another
    // request it is refused.
    let again = keyed_erase(&s, admin, "ann", "erase-1").await;
    assert_eq!(again, (200, json!({"member": "ann", "boards": 3}), true));
    let (st, reused, _) = keyed_erase(&s, admin, "bob", "erase-1").await;
    assert_eq!(
        (st, &reused["error"]["code"]),
        (422, &json!("idempotency_key_reused"))
    );
    // Erasing again finds nothing; a later write under the name is a new member.
    let (st, again) = s
        .call_as(admin, Method::DELETE, "/v1/members/ann", None)
        .await;
    assert_eq!((st.as_u16(), &again["boards"]), (200, &json!(0)));
    let body = json!({"member": "ann", "score": 1});
    let (st, w) = s
        .call_as(admin, Method::POST, "/v1/boards/lg/scores", Some(body))
        .await;
    assert_eq!(st, 200, "{w}");
    let (_, fresh) = s
        .call_as(admin, Method::GET, "/v1/members/ann/export", None)
        .await;
    assert_eq!(
        boards_and_periods(&fresh),
        [("lg".to_owned(), vec!["2026-11-24".to_owned()])]
    );
    let lg = board(&fresh, "lg");
    assert_eq!(
        (&lg["tier"], &lg["hidden"], &lg["grants"]),
        (&json!("low"), &json!(false), &json!([])),
        "{lg}"
    );
    // A board made after the erase does not hide the new member either.
    let (st, _) = s
        .call_as(admin, Method::PUT, "/v1/boards/after", Some(json!({})))
        .await;
    assert_eq!(st, 201);
    let body = json!({"member": "ann", "score": 2});
    let (st, _) = s
        .call_as(admin, Method::POST, "/v1/boards/after/scores", Some(body))
        .await;
    assert_eq!(st, 200);
    let (_, hidden) = s
        .call_as(admin, Method::GET, "/v1/boards/after/hidden", None)
        .await;
    assert_eq!(hidden["members"], json!([]), "{hidden}");
    s.stop().await;
}

/// `DELETE /v1/members/{member}` as `token` with `Idempotency-Key: key`: the status, the
/// answer, and whether it was a replay.
async fn keyed_erase(
    s: &Server,
    token: Option<&str>,
    member: &str,
    key: &str,
) -> (u16, Value, bool) {
    let mut req = s
        .http
        .delete(format!("{}/v1/members/{member}", s.base))
        .header("Idempotency-Key", key);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.expect("erase");
    let replayed = r.headers().get("idempotent-replayed").is_some();
    let status = r.status().as_u16();
    (status, r.json().await.expect("json"), replayed)
}

/// What an erase of ann leaves (see [`an_erase_takes_the_member_from_every_board_at_once`]).
async fn ann_is_erased(s: &Server, admin: Option<&str>, bob_before: &Value) {
    let (_, gone) = s
        .call_as(admin, Method::GET, "/v1/members/ann/export", None)
        .await;
    assert_eq!(gone["boards"], json!([]), "{gone}");
    let (_, bob) = s
        .call_as(admin, Method::GET, "/v1/members/bob/export", None)
        .await;
    // Bob keeps everything: ranks move up where ann ranked above him.
    assert_eq!(
        without_ranks(&bob["boards"]),
        without_ranks(&bob_before["boards"])
    );
    assert_eq!(board(&bob, "lg")["periods"][0]["entry"]["rank"], json!(1));
    // Its grant is listed nowhere; bob's keeps its id.
    let (_, r) = s
        .call_as(
            admin,
            Method::GET,
            "/v1/boards/b/periods/2026-11-23/rewards",
            None,
        )
        .await;
    let ids: Vec<_> = r["grants"]
        .as_array()
        .expect("grants")
        .iter()
        .map(|g| (g["id"].clone(), g["member"].clone()))
        .collect();
    assert_eq!(ids, [(json!("b:2026-11-23:2"), json!("bob"))], "{r}");
    assert_eq!(r["total"], json!(1));
    // Its cohort seat is still counted for day 1.
    let (_, l) = s
        .call_as(
            admin,
            Method::GET,
            "/v1/boards/lg/cohorts?period=2026-11-23",
            None,
        )
        .await;
    assert_eq!(l["cohorts"][0]["members"], json!(2), "{l}");
    // The audit names it by an HMAC alone, one entry a board it was on.
    let (_, a) = s
        .call_as(admin, Method::GET, "/v1/audit?limit=1000", None)
        .await;
    let erases: Vec<&Value> = a["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["action"] == json!("member_erase"))
        .collect();
    assert_eq!(erases.len(), 3, "{a}");
    let hmac = erases[0]["detail"]["member_hmac"]
        .as_str()
        .expect("hmac")
        .to_owned();
    assert!(
        hmac.len() == 64 && hmac.bytes().all(|b| b.is_ascii_hexdigit()),
        "{hmac}"
    );
    for e in &erases {
        assert_eq!(
            (&e["member"], &e["detail"]["member_hmac"], &e["actor"]),
            (&Value::Null, &json!(hmac), &json!("admin"))
        );
        assert!(!e.to_string().contains("ann"), "{e}");
    }
    // The entries from before that named it name its HMAC now: no entry names it.
    assert!(!a.to_string().contains("\"ann\""), "{a}");
    let hide = a["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["action"] == json!("member.hide"))
        .expect("the hide's entry");
    assert_eq!(
        (&hide["member"], &hide["detail"]["member_hmac"]),
        (&Value::Null, &json!(hmac)),
        "{hide}"
    );
}

/// The name the tests that read every stored byte erase.
pub(crate) const NAME: &str = "zelda-wants-out";

/// Whether `bytes` hold [`NAME`].
fn holds_name(bytes: &[u8]) -> bool {
    bytes.windows(NAME.len()).any(|w| w == NAME.as_bytes())
}

/// Erases [`NAME`] through `s`, which must answer that `boards` boards held it.
pub(crate) async fn erase_named(s: &Server, boards: u64) {
    let (st, erased) = s
        .call(Method::DELETE, &format!("/v1/members/{NAME}"), None)
        .await;
    assert_eq!(
        (st.as_u16(), &erased["boards"]),
        (200, &json!(boards)),
        "{erased}"
    );
}

/// Boards `a` and `b`, each holding [`NAME`] and `keeps`, on a server whose clock is
/// `clock` (at [`DAY1_US`]): `a` closes at 02:00 and pays its winner, [`NAME`], who claims
/// the grant under an `Idempotency-Key` (a remembered answer naming it); then [`NAME`] is
/// hidden on `a`.
async fn two_boards_holding(s: &Server, clock: &ManualClock) {
    let a = json!({"closes_at": "2026-11-23T02:00:00Z",
        "rewards": [{"from": 1, "to": 1, "reward": "gold"}]});
    for (board, config) in [("a", a), ("b", json!({"reset": "daily"}))] {
        let (st, _) = s.put(&format!("/v1/boards/{board}"), config).await;
        assert_eq!(st, 201);
        write(s, board, NAME, 5).await;
        write(s, board, "keeps", 3).await;
    }
    clock.set(DAY1_US + 3601 * S);
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.get("/v1/boards/a/periods/all/rewards").await.1["granted"] != json!(true) {
        assert!(Instant::now() < deadline, "a never granted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let path = format!("/v1/members/{NAME}/rewards/a:all:1/claim");
    let (st, _, grant) = crate::idempotency::keyed(s, "claim-1", Method::POST, &path, None).await;
    assert_eq!((st, &grant["member"]), (200, &json!(NAME)), "{grant}");
    let (st, _) = s
        .post(&format!("/v1/boards/a/members/{NAME}/hide"), json!({}))
        .await;
    assert_eq!(st, 204);
}

/// After an erase, the name is in no file of the data dir (docs/SPEC.md §16: the boards
/// snapshotted and the log trimmed below the erase) — not in its entries, hidden marks,
/// grant or remembered claim answer: the store seals the segment holding the erase and
/// snapshots at once, which deletes every segment and snapshot before it.
#[tokio::test]
async fn an_erased_name_leaves_every_file_of_the_data_dir() {
    let dir = tempfile::tempdir().expect("tmp");
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let opts = photofinish_server::serve::ServeOptions {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        clock: photofinish_server::serve::SharedClock(clock.clone()),
        ..photofinish_server::serve::ServeOptions::default()
    };
    let storage = Arc::new(photofinish_store::io::FaultyStorage::default());
    let s = Server::start_with(opts, storage, Kind::Embedded).await;
    two_boards_holding(&s, &clock).await;
    // A snapshot from before the erase, holding the name, as a long-running server has.
    let s = s.restart().await;
    let holding = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .expect("data dir")
            .filter_map(|f| {
                let path = f.ok()?.path();
                let bytes = std::fs::read(&path).ok()?;
                holds_name(&bytes).then(|| path.display().to_string())
            })
            .collect()
    };
    assert!(
        !holding(dir.path()).is_empty(),
        "the name is in the files before"
    );
    erase_named(&s, 2).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = holding(dir.path());
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the name is still in {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // What is left serves the others, and a restart reads it.
    let s = s.restart().await;
    let (st, m) = s.get("/v1/boards/b/members/keeps").await;
    assert_eq!((st.as_u16(), &m["score"]), (200, &json!(3)), "{m}");
    assert_eq!(s.get(&format!("/v1/boards/b/members/{NAME}")).await.0, 404);
    assert!(holding(dir.path()).is_empty());
    // The claim's remembered answer went with the grant: its key is a new request now
    // (one naming the member again, so after the files are read).
    let path = format!("/v1/members/{NAME}/rewards/a:all:1/claim");
    let (st, replayed, got) =
        crate::idempotency::keyed(&s, "claim-1", Method::POST, &path, None).await;
    assert_eq!((st, replayed), (404, false), "{got}");
    s.stop().await;
}

/// The names of every key of namespace `ns`.
pub(crate) async fn namespace_keys(conn: &photofinish_redis::conn::Conn, ns: &str) -> Vec<String> {
    conn.query(redis::cmd("KEYS").arg(format!("{ns}:*")))
        .await
        .expect("keys")
}

/// Every byte the Redis keys of namespace `ns` hold, key by key.
async fn redis_contents(conn: &photofinish_redis::conn::Conn, ns: &str) -> Vec<(String, Vec<u8>)> {
    fn bytes(v: &redis::Value, out: &mut Vec<u8>) {
        match v {
            redis::Value::BulkString(b) => out.extend_from_slice(b),
            redis::Value::SimpleString(s) => out.extend_from_slice(s.as_bytes()),
            redis::Value::Array(a) | redis::Value::Set(a) => a.iter().for_each(|v| bytes(v, out)),
            redis::Value::Map(m) => m.iter().for_each(|(k, v)| {
                bytes(k, out);
                bytes(v, out);
            }),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for key in namespace_keys(conn, ns).await {
        let kind: String = conn
            .query(redis::cmd("TYPE").arg(&key))
            .await
            .expect("type");
        let mut read = match kind.as_str() {
            "string" => redis::cmd("GET"),
            "stream" => redis::cmd("XRANGE"),
            "hash" => redis::cmd("HGETALL"),
            "set" => redis::cmd("SMEMBERS"),
            "zset" => redis::cmd("ZRANGE"),
            "list" => redis::cmd("LRANGE"),
            _ => continue,
        };
        read.arg(&key);
        match kind.as_str() {
            "stream" => {
                read.arg("-").arg("+");
            }
            "zset" | "list" => {
                read.arg(0).arg(-1);
            }
            _ => {}
        }
        let value: redis::Value = conn.query(&read).await.expect("read");
        let mut held = key.clone().into_bytes();
        bytes(&value, &mut held);
        out.push((key, held));
    }
    out
}

/// After an erase, the name is in no Redis key of the namespace (docs/SPEC.md §16): each
/// board it was on publishes a snapshot past the erase and trims its log up to it.
async fn an_erased_name_leaves_every_redis_key(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY1_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let conn = photofinish_testkit::server::redis_conn(kind).await;
    let ns = s.namespace().expect("a namespace").to_owned();
    two_boards_holding(&s, &clock).await;
    let holding = |all: Vec<(String, Vec<u8>)>| -> Vec<String> {
        all.into_iter()
            .filter(|(_, b)| holds_name(b))
            .map(|(k, _)| k)
            .collect()
    };
    assert!(!holding(redis_contents(&conn, &ns).await).is_empty());
    erase_named(&s, 2).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = holding(redis_contents(&conn, &ns).await);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the name is still in {left:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // A node that loads the boards now reads them from what is left.
    let other = s.sibling().await;
    let (st, m) = other.get("/v1/boards/b/members/keeps").await;
    assert_eq!((st.as_u16(), &m["score"]), (200, &json!(3)), "{m}");
    assert_eq!(
        other.get(&format!("/v1/boards/a/members/{NAME}")).await.0,
        404
    );
    other.stop().await;
    s.stop().await;
}

photofinish_testkit::on_kinds!([redis => Redis] an_erased_name_leaves_every_redis_key);

conformance!(
    an_export_holds_every_board_and_period_and_keeps_the_shadow_ban,
    an_erase_takes_the_member_from_every_board_at_once,
);
