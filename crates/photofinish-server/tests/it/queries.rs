//! The questions of docs/SPEC.md §10 against a model, on every backend and through both
//! doors: random boards with ties (equal scores and equal `reached_at`, so the write
//! sequence decides), i64's ends and scores past 2^53, both orders, all three rank styles.
//! Each answer of `members:query`, `rank?score=`, `thresholds` and a member's
//! `top_percent` over HTTP is checked against the model, and the same question over RESP
//! (`LB.QUERY`, `LB.RANKOF`, `LB.THRESHOLDS`, `LB.MEMBER`, RESP3) must answer the same.
//! Then a member across boards under the access rules, and bad input refused.

use redis::aio::MultiplexedConnection;
use serde_json::{json, Value};

use crate::support::*;

/// A model entry: member, score, reached_at (seconds), write sequence.
#[derive(Debug, Clone)]
struct Row {
    member: String,
    score: i64,
    at: u32,
    seq: usize,
}

/// The board as the model sees it, best first.
struct Model {
    rows: Vec<Row>,
    desc: bool,
}

impl Model {
    fn better(&self, a: i64, b: i64) -> bool {
        if self.desc {
            a > b
        } else {
            a < b
        }
    }

    fn sort(&mut self) {
        let desc = self.desc;
        self.rows.sort_by(|x, y| {
            let s = if desc {
                y.score.cmp(&x.score)
            } else {
                x.score.cmp(&y.score)
            };
            s.then(x.at.cmp(&y.at)).then(x.seq.cmp(&y.seq))
        });
    }

    /// The rank in `style` of the row at 0-based `pos`.
    fn rank_at(&self, pos: usize, style: &str) -> u64 {
        let score = self.rows[pos].score;
        match style {
            "ordinal" => pos as u64 + 1,
            _ => self.rank_of_score(score, style),
        }
    }

    /// The rank a member reaching `score` now would get.
    fn rank_of_score(&self, score: i64, style: &str) -> u64 {
        let better = self.rows.iter().filter(|r| self.better(r.score, score));
        let mut distinct: Vec<i64> = better.clone().map(|r| r.score).collect();
        distinct.dedup();
        let equal = self.rows.iter().filter(|r| r.score == score).count();
        1 + match style {
            "ordinal" => better.count() + equal,
            "competition" => better.count(),
            _ => distinct.len(),
        } as u64
    }

    fn entry(&self, pos: usize, style: &str) -> Value {
        let r = &self.rows[pos];
        json!({"rank": self.rank_at(pos, style), "member": r.member, "score": r.score,
               "reached_at": at_text(r.at), "metadata": null})
    }
}

fn at_text(at: u32) -> String {
    format!("2026-11-22T10:00:{at:02}.000000Z")
}

/// `100 · ordinal / total` rounded half up to hundredths, as f64.
fn top_percent(ordinal: u64, total: u64) -> f64 {
    let hundredths = (20_000 * ordinal as u128 + total as u128) / (2 * total as u128);
    hundredths as f64 / 100.0
}

/// The rank of percentage `units` (10^-4 %) of `total`.
fn percent_rank(units: u64, total: u64) -> u64 {
    ((total as u128 * units as u128).div_ceil(1_000_000) as u64).max(1)
}

/// The decimal text of `units` (10^-4 %).
fn percent_text(units: u64) -> String {
    let (whole, frac) = (units / 10_000, units % 10_000);
    if frac == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{}", format!("{frac:04}").trim_end_matches('0'))
    }
}

async fn check_board(s: &Server, c: &mut MultiplexedConnection, rng: &mut Rng, order: &str) {
    let board = format!("q{order}{}", rng.below(1_000_000));
    let path = format!("/v1/boards/{board}");
    let (st, _) = s.put(&path, json!({"order": order, "update": "set"})).await;
    assert_eq!(st, 201);
    let big = 1_i64 << 53;
    let scores = [
        i64::MIN,
        i64::MIN + 1,
        -big - 1,
        -5,
        0,
        3,
        3,
        7,
        big,
        big + 1,
        i64::MAX - 1,
        i64::MAX,
    ];
    let n = 1 + rng.below(40) as usize;
    let mut model = Model {
        rows: Vec::new(),
        desc: order == "desc",
    };
    for seq in 0..n {
        let row = Row {
            member: format!("m{seq}"),
            score: *rng.pick(&scores),
            at: rng.below(3) as u32,
            seq,
        };
        let body = json!({"member": row.member, "score": row.score.to_string(),
                          "at": at_text(row.at)});
        let (st, got) = s.post(&format!("{path}/scores"), body).await;
        assert_eq!(st, 200, "{got}");
        model.rows.push(row);
    }
    model.sort();
    let total = n as u64;
    let names: Vec<String> = (0..n + 5).map(|i| format!("m{i}")).collect();

    for style in ["ordinal", "competition", "dense"] {
        // A friends set: some present, some absent, one repeated.
        let mut asked: Vec<String> = (0..1 + rng.below(12))
            .map(|_| rng.pick(&names).clone())
            .collect();
        asked.push(asked[0].clone());
        let mut distinct = asked.clone();
        let mut seen = std::collections::HashSet::new();
        distinct.retain(|m| seen.insert(m.clone()));
        let entries: Vec<Value> = (0..n)
            .filter(|&p| distinct.contains(&model.rows[p].member))
            .map(|p| model.entry(p, style))
            .collect();
        let missing: Vec<&String> = distinct
            .iter()
            .filter(|m| !model.rows.iter().any(|r| &r.member == *m))
            .collect();
        let want = json!({"total": total, "period": "all", "entries": entries,
                          "missing": missing});
        let (st, got) = s
            .post(
                &format!("{path}/members:query"),
                json!({"members": asked, "ranking": style}),
            )
            .await;
        assert_eq!((st.as_u16(), &got), (200, &want), "{board} query {style}");
        let mut args = vec![
            "LB.QUERY".to_owned(),
            board.clone(),
            asked.len().to_string(),
        ];
        args.extend(asked.iter().cloned());
        args.extend(["RANKING".into(), style.into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(lb(c, &args).await, want, "{board} LB.QUERY {style}");

        // The rank of every score on the board and its neighbours.
        for &v in &scores {
            for probe in [v.checked_sub(1), Some(v), v.checked_add(1)]
                .into_iter()
                .flatten()
            {
                let want = model.rank_of_score(probe, style);
                let (st, got) = s
                    .get(&format!("{path}/rank?score={probe}&ranking={style}"))
                    .await;
                assert_eq!(
                    (st.as_u16(), &got),
                    (
                        200,
                        &json!({"score": probe, "rank": want, "total": total, "period": "all"})
                    ),
                    "{board} rank of {probe} {style}"
                );
                let p = probe.to_string();
                let got = lb(c, &["LB.RANKOF", &board, &p, "RANKING", style]).await;
                assert_eq!(got, json!(want), "{board} LB.RANKOF {probe} {style}");
            }
        }

        // Each member's top_percent, whatever the style.
        for (pos, r) in model.rows.iter().enumerate() {
            let (_, got) = s
                .get(&format!("{path}/members/{}?ranking={style}", r.member))
                .await;
            assert_eq!(got["rank"], json!(model.rank_at(pos, style)));
            assert_eq!(
                got["top_percent"],
                json!(top_percent(pos as u64 + 1, total)),
                "{board} {} top_percent",
                r.member
            );
        }
    }

    // Thresholds: ranks (past the end too) and percentages.
    let mut ranks: Vec<u64> = vec![1, total, total + 1, total + 7];
    ranks.extend((0..3).map(|_| 1 + rng.below(total + 2)));
    let units: Vec<u64> = vec![
        1,
        10_000,
        100_000,
        333_333,
        500_000,
        1_000_000,
        1 + rng.below(1_000_000),
    ];
    let mut thresholds = Vec::new();
    let at = |rank: u64| -> (Value, Value) {
        match model.rows.get(rank as usize - 1) {
            Some(r) => (json!(r.score), json!(r.member)),
            None => (Value::Null, Value::Null),
        }
    };
    for &r in &ranks {
        let (score, member) = at(r);
        thresholds.push(json!({"rank": r, "score": score, "member": member}));
    }
    for &u in &units {
        let r = percent_rank(u, total);
        let (score, member) = at(r);
        let p: f64 = percent_text(u).parse().expect("a number");
        thresholds.push(json!({"top_percent": p, "rank": r, "score": score, "member": member}));
    }
    let want = json!({"total": total, "period": "all", "thresholds": thresholds});
    let ranks_text = ranks
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let percents_text = units
        .iter()
        .map(|&u| percent_text(u))
        .collect::<Vec<_>>()
        .join(",");
    let (st, got) = s
        .get(&format!(
            "{path}/thresholds?ranks={ranks_text}&top_percent={percents_text}"
        ))
        .await;
    assert_eq!((st.as_u16(), &got), (200, &want), "{board} thresholds");
    let got = lb(
        c,
        &[
            "LB.THRESHOLDS",
            &board,
            "RANKS",
            &ranks_text,
            "TOP_PERCENT",
            &percents_text,
        ],
    )
    .await;
    assert_eq!(got, want, "{board} LB.THRESHOLDS");
}

async fn questions_answer_as_the_model(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp_as(&s, None, true).await.expect("RESP3");
    let mut rng = Rng(0x5eed_0f7e_57a1_b2c3);
    for _ in 0..3 {
        for order in ["desc", "asc"] {
            check_board(&s, &mut c, &mut rng, order).await;
        }
    }
    // An empty board: every rank is 1, every threshold past the end, nobody found.
    s.put("/v1/boards/empty", json!({})).await;
    let (_, got) = s.get("/v1/boards/empty/rank?score=5").await;
    assert_eq!(
        got,
        json!({"score": 5, "rank": 1, "total": 0, "period": "all"})
    );
    let (_, got) = s
        .get("/v1/boards/empty/thresholds?ranks=1&top_percent=50")
        .await;
    assert_eq!(
        got,
        json!({"total": 0, "period": "all", "thresholds": [
            {"rank": 1, "score": null, "member": null},
            {"top_percent": 50.0, "rank": 1, "score": null, "member": null}]})
    );
    let (_, got) = s
        .post(
            "/v1/boards/empty/members:query",
            json!({"members": ["a", "b", "a"]}),
        )
        .await;
    assert_eq!(
        got,
        json!({"total": 0, "period": "all", "entries": [], "missing": ["a", "b"]})
    );
    s.stop().await;
}

async fn a_member_across_boards(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp_as(&s, None, true).await.expect("RESP3");
    for (board, order) in [("zeta", "desc"), ("alpha", "asc"), ("mid", "desc")] {
        s.put(&format!("/v1/boards/{board}"), json!({"order": order}))
            .await;
    }
    for (board, member, score) in [
        ("zeta", "ann", 10),
        ("zeta", "bob", 20),
        ("zeta", "cy", 5),
        ("alpha", "ann", 7),
        ("alpha", "bob", 7),
        ("mid", "bob", 1),
    ] {
        let (st, _) = s
            .post(
                &format!("/v1/boards/{board}/scores"),
                json!({"member": member, "score": score}),
            )
            .await;
        assert_eq!(st, 200);
    }
    // Name order when no boards are named; boards without ann are left out.
    let (st, got) = s.get("/v1/members/ann?ranking=competition").await;
    assert_eq!(st, 200);
    let rows: Vec<Value> = got["boards"]
        .as_array()
        .expect("boards")
        .iter()
        .map(|b| {
            json!([
                b["board"],
                b["rank"],
                b["score"],
                b["total"],
                b["top_percent"]
            ])
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            json!(["alpha", 1, 7, 2, 50.0]),
            json!(["zeta", 2, 10, 3, 66.67])
        ]
    );
    // The order asked, missing and unknown boards left out, repeats once.
    let (_, got) = s
        .get("/v1/members/bob?boards=mid,nope,zeta,alpha,mid")
        .await;
    let names: Vec<&str> = got["boards"]
        .as_array()
        .expect("boards")
        .iter()
        .map(|b| b["board"].as_str().expect("board"))
        .collect();
    assert_eq!(names, ["mid", "zeta", "alpha"]);
    assert_eq!(
        got["boards"][2]["rank"], 2,
        "ordinal: bob reached 7 after ann"
    );
    assert_eq!(got["boards"][2]["top_percent"], 100.0);
    let resp = lb(
        &mut c,
        &["LB.MEMBER", "bob", "BOARDS", "mid,nope,zeta,alpha,mid"],
    )
    .await;
    assert_eq!(resp, got, "LB.MEMBER answers as HTTP");
    let (_, none) = s.get("/v1/members/nobody").await;
    assert_eq!(none, json!({"member": "nobody", "boards": []}));
    s.stop().await;
}

async fn bad_questions_are_refused(kind: Kind) {
    let s = Server::start(kind).await;
    let mut c = resp(&s).await;
    s.put("/v1/boards/b", json!({})).await;
    s.post("/v1/boards/b/scores", json!({"member": "ann", "score": 1}))
        .await;
    let many: Vec<String> = (0..1001).map(|i| format!("m{i}")).collect();
    for (path, body, status, code) in [
        (
            "/v1/boards/b/members:query",
            json!({"members": many}),
            400,
            "invalid_parameter",
        ),
        (
            "/v1/boards/b/members:query",
            json!({"members": [""]}),
            422,
            "invalid_member",
        ),
        (
            "/v1/boards/b/members:query",
            json!({"members": "ann"}),
            400,
            "malformed_json",
        ),
        (
            "/v1/boards/b/members:query",
            json!({"members": [], "x": 1}),
            400,
            "malformed_json",
        ),
        (
            "/v1/boards/b/members:query",
            json!({"members": ["ann"], "ranking": "best"}),
            400,
            "invalid_parameter",
        ),
        (
            "/v1/boards/b/members:query",
            json!({"members": ["ann"], "period": "1999-01-01"}),
            404,
            "period_not_found",
        ),
        (
            "/v1/boards/nope/members:query",
            json!({"members": ["ann"]}),
            404,
            "board_not_found",
        ),
    ] {
        assert_error(&s.post(path, body).await, status, code);
    }
    for (path, status, code) in [
        // One of two parameters is required: no schema states that, so 422 (§3).
        ("/v1/boards/b/rank", 422, "invalid_parameter"),
        ("/v1/boards/b/rank?score=1.5", 422, "score_not_integer"),
        (
            "/v1/boards/b/rank?score=99999999999999999999",
            422,
            "score_out_of_range",
        ),
        (
            "/v1/boards/b/rank?score=1&ranking=x",
            400,
            "invalid_parameter",
        ),
        ("/v1/boards/nope/rank?score=1", 404, "board_not_found"),
        ("/v1/boards/nope/thresholds", 404, "board_not_found"),
        ("/v1/boards/b/thresholds?ranks=0", 400, "invalid_parameter"),
        (
            "/v1/boards/b/thresholds?ranks=1,,2",
            400,
            "invalid_parameter",
        ),
        ("/v1/boards/b/thresholds?ranks=-1", 400, "invalid_parameter"),
        (
            "/v1/boards/b/thresholds?ranks=%2B1",
            400,
            "invalid_parameter",
        ),
        (
            "/v1/boards/b/thresholds?ranks=18446744073709551616",
            400,
            "invalid_parameter",
        ),
        (
            "/v1/boards/b/thresholds?top_percent=0",
            400,
            "invalid_parameter",
        ),
        (
            "/v1/boards/b/thresholds?top_percent=100.5",
            400,
            "invalid_parameter",
        ),
        (
            "/v1/boards/b/thresholds?top_percent=0.00001",
            400,
            "invalid_parameter",
        ),
        ("/v1/boards/nope/thresholds?ranks=1", 404, "board_not_found"),
        ("/v1/members/ann?boards=a,,b", 400, "invalid_parameter"),
        ("/v1/members/ann?boards=a%20b", 400, "invalid_board_name"),
        ("/v1/members/ann?ranking=x", 400, "invalid_parameter"),
    ] {
        assert_error(&s.get(path).await, status, code);
    }
    // Asking for no threshold is answered with none (the board must still exist).
    let (st, none) = s.get("/v1/boards/b/thresholds").await;
    assert_eq!(st, 200, "{none}");
    assert_eq!(none["thresholds"], json!([]), "{none}");
    assert!(none["total"].is_u64(), "{none}");
    let hundred_one = (1..=101)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    assert_error(
        &s.get(&format!("/v1/boards/b/thresholds?ranks={hundred_one}"))
            .await,
        400,
        "invalid_parameter",
    );
    let boards = (0..1001)
        .map(|i| format!("b{i}"))
        .collect::<Vec<_>>()
        .join(",");
    assert_error(
        &s.get(&format!("/v1/members/ann?boards={boards}")).await,
        400,
        "invalid_parameter",
    );
    // The same refusals over RESP, with the same codes.
    for (args, code) in [
        (vec!["LB.QUERY", "b", "2", "ann"], "invalid_parameter"),
        (vec!["LB.QUERY", "b", "x", "ann"], "invalid_parameter"),
        (vec!["LB.QUERY", "b", "1", ""], "invalid_member"),
        (vec!["LB.QUERY", "nope", "1", "ann"], "board_not_found"),
        (vec!["LB.RANKOF", "b", "1.5"], "score_not_integer"),
        (
            vec!["LB.RANKOF", "b", "1", "RANKING", "x"],
            "invalid_parameter",
        ),
        (vec!["LB.THRESHOLDS", "nope"], "board_not_found"),
        (
            vec!["LB.THRESHOLDS", "b", "RANKS", "0"],
            "invalid_parameter",
        ),
        (
            vec!["LB.THRESHOLDS", "b", "TOP_PERCENT", "101"],
            "invalid_parameter",
        ),
        (
            vec!["LB.MEMBER", "ann", "BOARDS", "a,,b"],
            "invalid_parameter",
        ),
        (
            vec!["LB.MEMBER", "ann", "COLOUR", "red"],
            "invalid_parameter",
        ),
    ] {
        assert_eq!(lb(&mut c, &args).await, json!({"error": code}), "{args:?}");
    }
    let none = lb(&mut c, &["LB.THRESHOLDS", "b"]).await;
    assert!(
        none.get("error").is_none(),
        "no thresholds asked, none answered: {none}"
    );
    // Nothing changed.
    let (_, b) = s.get("/v1/boards/b/entries").await;
    assert_eq!(b["total"], 1);
    s.stop().await;
}

conformance!(
    questions_answer_as_the_model,
    a_member_across_boards,
    bad_questions_are_refused,
);
