//! Teams (docs/SPEC.md §17) end to end, on every backend and through both doors: a
//! write names its member's team, fixed for the period; the teams rank by the sum of
//! their visible members' scores, equal sums the first to reach them higher; a team's
//! page of members' contributions; member and write answers carry `team`; hidden and
//! deleted members' scores leave their team's sum; a player's token names only its own
//! team claim; the standings survive a restart; every refusal changes nothing.

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

async fn put(s: &Server, member: &str, score: i64, team: Option<&str>) -> (u16, Value) {
    let mut body = json!({"member": member, "score": score, "op": "set"});
    if let Some(t) = team {
        body["team"] = json!(t);
    }
    let (st, v) = s.post("/v1/boards/t/scores", body).await;
    (st.as_u16(), v)
}

/// (team, score, members, rank) of a teams page.
fn teams(v: &Value) -> Vec<(String, i64, u64, u64)> {
    v["entries"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["team"].as_str().unwrap_or_default().to_owned(),
                        e["score"].as_i64().unwrap_or_default(),
                        e["members"].as_u64().unwrap_or_default(),
                        e["rank"].as_u64().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn t(team: &str, score: i64, members: u64, rank: u64) -> (String, i64, u64, u64) {
    (team.to_owned(), score, members, rank)
}

/// Everything a reader can see of board `t`, to prove a refusal changed nothing.
async fn state(s: &Server) -> Vec<Value> {
    let mut out = vec![s.get("/v1/boards/t/entries?limit=100").await.1];
    out.push(s.get("/v1/boards/t/teams?limit=100").await.1);
    for team in ["wolves", "bears", "owls"] {
        out.push(s.get(&format!("/v1/boards/t/teams/{team}")).await.1);
    }
    out
}

/// The standings of the board the main test builds, as both doors read them.
async fn check_standings(s: &Server) {
    let (st, page) = s.get("/v1/boards/t/teams").await;
    assert_eq!(st, 200, "{page}");
    assert_eq!(page["total"], 3);
    // wolves reached 30 before bears did: ordinal puts them first, competition ties them.
    assert_eq!(
        teams(&page),
        vec![
            t("wolves", 30, 3, 1),
            t("bears", 30, 2, 2),
            t("owls", 5, 1, 3)
        ]
    );
    let (_, page) = s.get("/v1/boards/t/teams?ranking=competition").await;
    assert_eq!(
        teams(&page),
        vec![
            t("wolves", 30, 3, 1),
            t("bears", 30, 2, 1),
            t("owls", 5, 1, 3)
        ]
    );
    let (_, page) = s
        .get("/v1/boards/t/teams?ranking=dense&offset=1&limit=1")
        .await;
    assert_eq!(teams(&page), vec![t("bears", 30, 2, 1)]);
    let wolves_at = micros(&s.get("/v1/boards/t/teams").await.1["entries"][0]["reached_at"]);
    let bears_at = micros(&s.get("/v1/boards/t/teams").await.1["entries"][1]["reached_at"]);
    assert!(wolves_at < bears_at, "the first to reach 30 ranks higher");
    // One team: its rank and score, its members ranked among themselves.
    let (st, w) = s.get("/v1/boards/t/teams/wolves").await;
    assert_eq!(st, 200, "{w}");
    assert_eq!(
        (&w["team"], &w["rank"], &w["score"], &w["members"]),
        (&json!("wolves"), &json!(1), &json!(30), &json!(3)),
        "{w}"
    );
    assert_eq!(
        rows(&w),
        vec![
            ("b".to_owned(), 20, 1),
            ("a".to_owned(), 10, 2),
            ("f".to_owned(), 0, 3)
        ]
    );
    let (_, w) = s.get("/v1/boards/t/teams/wolves?offset=1&limit=1").await;
    assert_eq!(rows(&w), vec![("a".to_owned(), 10, 2)]);
    // Member answers carry the team.
    let (_, a) = s.get("/v1/boards/t/members/a").await;
    assert_eq!(a["team"], "wolves", "{a}");
    let (_, all) = s.get("/v1/boards/t/entries").await;
    assert_eq!(all["entries"][0]["team"], "bears", "{all}");
    // RESP reads the same.
    let mut c = resp(s).await;
    let got = lb(&mut c, &["LB.TEAMS", "t"]).await;
    let names: Vec<&str> = got
        .as_array()
        .map(|a| a.iter().filter_map(|r| r[1].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["wolves", "bears", "owls"], "{got}");
    assert_eq!(got[0][2], 30, "{got}");
    assert_eq!(got[0][3], 3, "{got}");
    let got = lb(
        &mut c,
        &["LB.TEAMS", "t", "RANKING", "competition", "LIMIT", "1", "1"],
    )
    .await;
    assert_eq!(got, json!([[1, "bears", 30, 2, bears_at]]));
    let got = lb(&mut c, &["LB.TEAM", "t", "bears"]).await;
    assert_eq!(
        (&got[0], &got[1], &got[2]),
        (&json!(2), &json!(30), &json!(2)),
        "{got}"
    );
    let members: Vec<&str> = got[4]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r[1].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(members, ["c", "d"], "{got}");
    assert!(lb(&mut c, &["LB.TEAM", "t", "nobody"]).await.is_null());
}

async fn teams_rank_by_their_members_sum(kind: Kind) {
    let s = Server::start(kind).await;
    let (st, b) = s
        .put("/v1/boards/t", json!({"teams": {"max_size": 3}}))
        .await;
    assert_eq!(
        (st.as_u16(), &b["teams"]),
        (201, &json!({"max_size": 3})),
        "{b}"
    );
    for (m, score, team) in [
        ("a", 10, Some("wolves")),
        ("b", 20, Some("wolves")),
        ("c", 25, Some("bears")),
    ] {
        let (st, w) = put(&s, m, score, team).await;
        assert_eq!((st, &w["team"]), (200, &json!(team)), "{m}: {w}");
    }
    // RESP writes take TEAM.
    let mut c = resp(&s).await;
    let got = lb(&mut c, &["LB.SET", "t", "d", "5", "TEAM", "bears"]).await;
    assert_eq!(got, json!(5));
    let got = lb(
        &mut c,
        &["LB.SUBMIT", "t", "e", "5", "OP", "set", "TEAM", "owls"],
    )
    .await;
    assert!(got.get("error").is_none(), "{got}");
    // A member scoring 0 joins: wolves' sum, and when it was reached, stay.
    assert_eq!(put(&s, "f", 0, Some("wolves")).await.0, 200);
    // A later write naming none keeps the member in its team.
    let (_, w) = put(&s, "a", 10, None).await;
    assert_eq!(w["team"], "wolves", "{w}");
    check_standings(&s).await;

    // Refusals change nothing.
    let before = state(&s).await;
    let refusals = [
        (put(&s, "a", 99, Some("bears")).await, 409, "team_conflict"),
        (put(&s, "g", 1, Some("wolves")).await, 422, "team_full"),
        (
            put(&s, "g", i64::MAX, Some("owls")).await,
            422,
            "score_overflow",
        ),
        (
            put(&s, "g", 1, Some("not a key")).await,
            400,
            "invalid_parameter",
        ),
    ];
    for ((st, e), want_st, code) in refusals {
        assert_eq!((st, &e["error"]["code"]), (want_st, &json!(code)), "{e}");
    }
    let got = lb(&mut c, &["LB.INCR", "t", "a", "1", "TEAM", "owls"]).await;
    assert_eq!(got["error"], "team_conflict", "{got}");
    let got = lb(&mut c, &["LB.INCR", "t", "e", &i64::MAX.to_string()]).await;
    assert_eq!(got["error"], "score_overflow", "{got}");
    assert_error(
        &s.get("/v1/boards/t/teams/a.b").await,
        400,
        "invalid_parameter",
    );
    assert_error(
        &s.get("/v1/boards/t/teams/nobody").await,
        404,
        "team_not_found",
    );
    assert_eq!(state(&s).await, before, "refusals changed nothing");
    // A team needs a board of teams, one column ordered desc.
    s.put("/v1/boards/plain", json!({})).await;
    let (st, e) = s
        .post(
            "/v1/boards/plain/scores",
            json!({"member": "a", "score": 1, "team": "wolves"}),
        )
        .await;
    assert_eq!(
        (st.as_u16(), &e["error"]["code"]),
        (422, &json!("invalid_parameter"))
    );
    assert_eq!(s.get("/v1/boards/plain/entries").await.1["total"], 0);
    assert_error(
        &s.get("/v1/boards/plain/teams").await,
        422,
        "invalid_parameter",
    );
    for (bad, status) in [
        (json!({"teams": {"max_size": 0}}), 400),
        (json!({"teams": {"max_size": 10_001}}), 400),
        (json!({"teams": {"max_size": 2, "x": 1}}), 400),
        (json!({"teams": {"max_size": 2}, "order": "asc"}), 422),
    ] {
        let (st, e) = s.put("/v1/boards/q", bad.clone()).await;
        assert_eq!(st.as_u16(), status, "{bad}: {e}");
    }
    let (st, _) = s
        .put("/v1/boards/t", json!({"teams": {"max_size": 4}}))
        .await;
    assert_eq!(st.as_u16(), 409);
    // After a restart (a replay, or a node loading the log) every standing is the same.
    let s = s.restart().await;
    check_standings(&s).await;

    // A hidden member's score leaves its team's sum (it sees it in its own view only);
    // shown again, it comes back; a deleted member's leaves for good.
    let (st, _) = s.post("/v1/boards/t/members/b/hide", json!({})).await;
    assert_eq!(st, 204);
    let (_, page) = s.get("/v1/boards/t/teams").await;
    assert_eq!(
        teams(&page),
        vec![
            t("bears", 30, 2, 1),
            t("wolves", 10, 2, 2),
            t("owls", 5, 1, 3)
        ]
    );
    let (_, w) = s.get("/v1/boards/t/teams/wolves").await;
    assert_eq!(
        rows(&w),
        vec![("a".to_owned(), 10, 1), ("f".to_owned(), 0, 2)]
    );
    let (st, _) = s.post("/v1/boards/t/members/b/unhide", json!({})).await;
    assert_eq!(st, 204);
    let (_, page) = s.get("/v1/boards/t/teams").await;
    assert_eq!(
        teams(&page)[0],
        t("bears", 30, 2, 1),
        "wolves came back to 30 later"
    );
    assert_eq!(teams(&page)[1], t("wolves", 30, 3, 2));
    let (st, _) = s.delete("/v1/boards/t/members/c").await;
    assert_eq!(st, 204);
    let (_, page) = s.get("/v1/boards/t/teams").await;
    assert_eq!(
        teams(&page),
        vec![
            t("wolves", 30, 3, 1),
            t("owls", 5, 1, 2),
            t("bears", 5, 1, 3)
        ],
        "bears came down to 5 after owls reached it"
    );
    let s = s.restart().await;
    let (_, again) = s.get("/v1/boards/t/teams").await;
    assert_eq!(
        teams(&again),
        teams(&page),
        "hides and deletes survive a restart"
    );
    s.stop().await;
}

/// An admin key, and a player token with a `team` claim.
async fn players_name_only_their_own_team(kind: Kind) {
    let (s, admin, _keys) = start_with_players(kind).await;
    let body = json!({"teams": {"max_size": 10}, "player_writes": true, "public_read": true});
    let (st, _) = s
        .call_as(Some(&admin), Method::PUT, "/v1/boards/t", Some(body))
        .await;
    assert_eq!(st, 201);
    let token = ann_token;
    let wolves = token(json!({"team": "wolves"}));
    let none = token(json!({}));
    let write = |tok: &str, team: Option<&str>| {
        let mut body = json!({"member": "ann", "score": 5});
        if let Some(team) = team {
            body["team"] = json!(team);
        }
        let tok = tok.to_owned();
        let s = &s;
        async move {
            s.call_as(Some(&tok), Method::POST, "/v1/boards/t/scores", Some(body))
                .await
        }
    };
    for (tok, team) in [(&wolves, Some("bears")), (&none, Some("wolves"))] {
        assert_error(&write(tok, team).await, 403, "forbidden");
    }
    assert_eq!(
        s.get("/v1/boards/t/teams").await.1["total"],
        0,
        "a refusal changed nothing"
    );
    let (st, w) = write(&wolves, Some("wolves")).await;
    assert_eq!((st.as_u16(), &w["team"]), (200, &json!("wolves")), "{w}");
    // An admin key names any team; a bad claim is no valid token.
    let body = json!({"member": "bob", "score": 1, "team": "bears"});
    let (st, _) = s
        .call_as(
            Some(&admin),
            Method::POST,
            "/v1/boards/t/scores",
            Some(body),
        )
        .await;
    assert_eq!(st, 200);
    let bad = token(json!({"team": "not a key"}));
    assert_error(&write(&bad, None).await, 401, "unauthorized");
    // Over RESP too.
    let mut c = resp_as(&s, Some(&wolves), false).await.expect("auth");
    let got = lb(&mut c, &["LB.INCR", "t", "ann", "1", "TEAM", "bears"]).await;
    assert_eq!(got["error"], "forbidden", "{got}");
    let got = lb(&mut c, &["LB.INCR", "t", "ann", "1", "TEAM", "wolves"]).await;
    assert_eq!(got, json!(6), "{got}");
    s.stop().await;
}

/// An export carries each member's partition and team, and its import into an empty
/// board of the same config gives the same partitions and teams, also after a restart
/// (the import file keeps them); a row naming a team on a board without teams, or one
/// team too many members, is refused whole and changes nothing.
async fn an_export_imports_with_its_partitions_and_teams(kind: Kind) {
    let s = Server::start(kind).await;
    let config = json!({"partitions": {"max": 5}, "teams": {"max_size": 2}});
    for b in ["src", "dst", "tiny"] {
        s.put(&format!("/v1/boards/{b}"), config.clone()).await;
    }
    for (m, score, p, t) in [
        ("a", 5, "FR", "wolves"),
        ("b", 7, "DE", "wolves"),
        ("c", 9, "FR", "bears"),
    ] {
        let body = json!({"member": m, "score": score, "partition": p, "team": t});
        assert_eq!(s.post("/v1/boards/src/scores", body).await.0, 200);
    }
    let resp = s
        .http
        .get(format!("{}/v1/boards/src/export", s.base))
        .send()
        .await
        .expect("export");
    let text = resp.text().await.expect("body");
    let first: Value = serde_json::from_str(text.lines().next().unwrap_or("{}")).expect("line");
    assert_eq!(
        (&first["partition"], &first["team"]),
        (&json!("FR"), &json!("bears")),
        "{text}"
    );
    let (st, done) = send(&s, "dst", text.clone()).await;
    assert_eq!((st, &done["imported"]), (200, &json!(3)), "{done}");
    let got = both(&s).await;
    assert_eq!(
        got[0], got[1],
        "the import's partitions and teams are the source's"
    );
    assert_eq!(
        teams(&json!({"entries": got[1].0})),
        vec![t("wolves", 12, 2, 1), t("bears", 9, 1, 2)]
    );
    // Refused whole: three members in a team of at most two; a team on a board without.
    let over = format!("{text}{{\"member\":\"d\",\"score\":1,\"team\":\"wolves\"}}\n");
    let (st, e) = send(&s, "tiny", over).await;
    assert_eq!(
        (st, &e["error"]["code"]),
        (422, &json!("invalid_entries")),
        "{e}"
    );
    assert_eq!(s.get("/v1/boards/tiny/entries").await.1["total"], 0);
    s.put("/v1/boards/plain", json!({})).await;
    let (st, e) = send(&s, "plain", text).await;
    assert_eq!(
        (st, &e["error"]["code"]),
        (422, &json!("invalid_entries")),
        "{e}"
    );
    let s = s.restart().await;
    assert_eq!(
        both(&s).await,
        got,
        "an import's partitions and teams survive a restart"
    );
    s.stop().await;
}

/// `POST /v1/boards/{board}/import` of `body`: the status and the answer.
async fn send(s: &Server, board: &str, body: String) -> (u16, Value) {
    let resp = s
        .http
        .post(format!("{}/v1/boards/{board}/import", s.base))
        .header("content-type", "application/x-ndjson")
        .body(body)
        .send()
        .await
        .expect("import");
    (
        resp.status().as_u16(),
        resp.json::<Value>().await.unwrap_or(Value::Null),
    )
}

/// Boards `src` and `dst` as the test compares them: teams, partitions, FR's page.
async fn both(s: &Server) -> Vec<(Value, Value, Vec<(String, i64, u64)>)> {
    let mut out = Vec::new();
    for board in ["src", "dst"] {
        let teams = s.get(&format!("/v1/boards/{board}/teams")).await.1;
        let parts = s.get(&format!("/v1/boards/{board}/partitions")).await.1;
        let fr = s
            .get(&format!("/v1/boards/{board}/entries?partition=FR"))
            .await
            .1;
        out.push((
            teams["entries"].clone(),
            parts["partitions"].clone(),
            rows(&fr),
        ));
    }
    out
}

conformance!(
    teams_rank_by_their_members_sum,
    players_name_only_their_own_team,
    an_export_imports_with_its_partitions_and_teams,
);
