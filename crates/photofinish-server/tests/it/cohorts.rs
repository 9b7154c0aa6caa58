//! Cohorts (docs/SPEC.md §14) end to end, on every backend and through both doors: members
//! fill cohorts of `cohort_size` in arrival order (first accepted write, or join), each
//! cohort ranked on its own in all three styles; membership is fixed for the period and
//! starts afresh in the next; member answers carry `tier`, `cohort` and `cohort_rank`;
//! a period's cohorts list and page; concurrent first writes never overfill a cohort or
//! seat a member twice; it all survives a restart; every refusal changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use photofinish_core::clock::ManualClock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

/// 2026-11-23T01:00:00Z, µs: inside period 2026-11-23 of a daily UTC board.
const DAY_US: i64 = 1_795_395_600_000_000;
const HOUR: i64 = 3_600_000_000;

async fn write(s: &Server, member: &str, score: i64) -> (reqwest::StatusCode, Value) {
    s.post(
        "/v1/boards/g/scores",
        json!({"member": member, "score": score, "op": "set"}),
    )
    .await
}

async fn cohorts_fill_in_arrival_order_and_rank_alone(kind: Kind) {
    let clock = Arc::new(ManualClock::new(DAY_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    let (st, b) = s
        .put("/v1/boards/g", json!({"reset": "daily", "cohort_size": 3}))
        .await;
    assert_eq!((st.as_u16(), &b["cohort_size"]), (201, &json!(3)), "{b}");
    // Seven arrivals: a b c | d e f | g. Scores so that board and cohort ranks differ.
    for (m, score) in [
        ("a", 10),
        ("b", 30),
        ("c", 30),
        ("d", 50),
        ("e", 5),
        ("f", 50),
        ("g", 1),
    ] {
        assert_eq!(write(&s, m, score).await.0, 200);
    }
    // A member's cohort, in each style: b and c tie in cohort 1.
    let (st, c) = s.get("/v1/boards/g/members/a/cohort").await;
    assert_eq!(st, 200, "{c}");
    assert_eq!(
        (
            &c["board"],
            &c["period"],
            &c["tier"],
            &c["cohort"],
            &c["total"]
        ),
        (
            &json!("g"),
            &json!("2026-11-23"),
            &Value::Null,
            &json!(1),
            &json!(3)
        )
    );
    assert_eq!(
        rows(&c),
        [
            ("b".into(), 30, 1),
            ("c".into(), 30, 2),
            ("a".into(), 10, 3)
        ]
    );
    let (_, c) = s
        .get("/v1/boards/g/members/c/cohort?ranking=competition")
        .await;
    assert_eq!(
        rows(&c),
        [
            ("b".into(), 30, 1),
            ("c".into(), 30, 1),
            ("a".into(), 10, 3)
        ]
    );
    let (_, c) = s.get("/v1/boards/g/members/c/cohort?ranking=dense").await;
    assert_eq!(
        rows(&c),
        [
            ("b".into(), 30, 1),
            ("c".into(), 30, 1),
            ("a".into(), 10, 2)
        ]
    );
    let (_, c) = s.get("/v1/boards/g/members/e/cohort").await;
    assert_eq!(c["cohort"], 2);
    assert_eq!(
        rows(&c),
        [("d".into(), 50, 1), ("f".into(), 50, 2), ("e".into(), 5, 3)]
    );
    // Member answers carry the cohort; board-wide rank stays as it is.
    let (_, a) = s.get("/v1/boards/g/members/a?ranking=competition").await;
    assert_eq!(
        (&a["rank"], &a["tier"], &a["cohort"], &a["cohort_rank"]),
        (&json!(5), &Value::Null, &json!(1), &json!(3)),
        "{a}"
    );
    // The answer across boards is a member answer too (docs/SPEC.md §10, §14): the same
    // fields, the board named.
    let (_, across) = s.get("/v1/members/a?boards=g&ranking=competition").await;
    let mut one = across["boards"][0].clone();
    assert_eq!(one["board"], "g", "{across}");
    let fields = one.as_object_mut().expect("an object");
    fields.remove("board");
    fields.remove("period");
    assert_eq!(one, a, "{across}");
    // Every member's cohort_rank is its rank in its cohort's standings, in each style.
    for style in ["ordinal", "competition", "dense"] {
        for k in 1..=3 {
            let (_, p) = s
                .get(&format!("/v1/boards/g/cohorts/{k}/entries?ranking={style}"))
                .await;
            for (m, _, rank) in rows(&p) {
                let (_, one) = s
                    .get(&format!("/v1/boards/g/members/{m}?ranking={style}"))
                    .await;
                assert_eq!(
                    (&one["cohort"], &one["cohort_rank"]),
                    (&json!(k), &json!(rank)),
                    "{m} {style}"
                );
            }
        }
    }
    let (_, page) = s.get("/v1/boards/g/entries?limit=10").await;
    assert!(page["entries"][0].get("cohort").is_none(), "{page}");
    // Membership is fixed: a member's later writes keep its cohort, and move it within.
    assert_eq!(write(&s, "a", 99).await.0, 200);
    let (_, c) = s.get("/v1/boards/g/members/a/cohort").await;
    assert_eq!(
        (c["cohort"].clone(), rows(&c)[0].clone()),
        (json!(1), ("a".into(), 99, 1))
    );
    // The cohorts of the period, paged.
    let (st, l) = s.get("/v1/boards/g/cohorts").await;
    assert_eq!(st, 200, "{l}");
    assert_eq!(
        l,
        json!({"board": "g", "period": "2026-11-23", "total": 3, "cohorts": [
            {"tier": null, "cohort": 1, "members": 3},
            {"tier": null, "cohort": 2, "members": 3},
            {"tier": null, "cohort": 3, "members": 1}]})
    );
    let (_, l) = s.get("/v1/boards/g/cohorts?offset=1&limit=1").await;
    assert_eq!(
        l["cohorts"],
        json!([{"tier": null, "cohort": 2, "members": 3}])
    );
    // A page of one cohort.
    let (st, p) = s
        .get("/v1/boards/g/cohorts/2/entries?offset=1&limit=1&ranking=competition")
        .await;
    assert_eq!(st, 200, "{p}");
    assert_eq!(
        (&p["total"], rows(&p)),
        (&json!(3), vec![("f".into(), 50, 1)])
    );
    let (_, p) = s.get("/v1/boards/g/cohorts/9/entries").await;
    assert_eq!((&p["total"], &p["entries"]), (&json!(0), &json!([])));
    // RESP: LB.COHORT answers rows as LB.RANGE does.
    let mut r = resp(&s).await;
    let got = lb(&mut r, &["LB.COHORT", "g", "e", "RANKING", "dense"]).await;
    assert_eq!(got[0][1], "d", "{got}");
    assert_eq!(
        got.as_array()
            .map(|a| a.iter().map(|row| row[0].clone()).collect::<Vec<_>>()),
        Some(vec![json!(1), json!(1), json!(2)])
    );
    // Refusals: a member with no place, a board without cohorts, a tier with no league,
    // a cohort that is no number.
    assert_error(
        &s.get("/v1/boards/g/members/zed/cohort").await,
        404,
        "member_not_found",
    );
    assert_eq!(lb(&mut r, &["LB.COHORT", "g", "zed"]).await, json!([]));
    s.put("/v1/boards/plain", json!({})).await;
    // The board's config decides these: rules, 422 (docs/SPEC.md §3).
    assert_error(
        &s.get("/v1/boards/plain/cohorts").await,
        422,
        "invalid_parameter",
    );
    assert_error(
        &s.get("/v1/boards/g/cohorts?tier=gold").await,
        422,
        "invalid_parameter",
    );
    assert_error(
        &s.get("/v1/boards/g/cohorts/0/entries").await,
        400,
        "invalid_parameter",
    );
    assert_error(
        &s.get("/v1/boards/g/cohorts/x/entries").await,
        400,
        "invalid_parameter",
    );

    // A joined member sits in the next cohort; its cohort answer lists who has played.
    let (st, _) = s
        .call(Method::POST, "/v1/boards/g/members/h/join", None)
        .await;
    assert_eq!(st, 201);
    let (st, c) = s.get("/v1/boards/g/members/h/cohort").await;
    assert_eq!((st.as_u16(), &c["cohort"]), (200, &json!(3)), "{c}");
    assert_eq!(rows(&c), [("g".into(), 1, 1)]);
    assert_error(
        &s.get("/v1/boards/g/members/h").await,
        404,
        "member_not_found",
    );

    // Kept across a restart; the next period starts its cohorts afresh.
    let s = s.restart().await;
    let (_, c) = s.get("/v1/boards/g/members/h/cohort").await;
    assert_eq!(c["cohort"], 3);
    assert_eq!(write(&s, "i", 7).await.0, 200);
    let (_, c) = s.get("/v1/boards/g/members/i/cohort").await;
    assert_eq!((&c["cohort"], &c["total"]), (&json!(3), &json!(2)));
    clock.set(DAY_US + 24 * HOUR);
    assert_eq!(write(&s, "g", 3).await.0, 200);
    let (_, c) = s.get("/v1/boards/g/members/g/cohort").await;
    assert_eq!(
        (&c["period"], &c["cohort"]),
        (&json!("2026-11-24"), &json!(1))
    );
    let (_, old) = s
        .get("/v1/boards/g/members/g/cohort?period=2026-11-23")
        .await;
    assert_eq!(old["cohort"], 3, "{old}");
    s.stop().await;
}

async fn concurrent_first_writes_never_overfill_a_cohort(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/g", json!({"cohort_size": 7})).await;
    let members: Vec<String> = (0..60).map(|i| format!("p{i:02}")).collect();
    let mut tasks = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let (base, m) = (s.base.clone(), m.clone());
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            // Half join first, half write first; each writes twice.
            if i % 2 == 0 {
                let url = format!("{base}/v1/boards/g/members/{m}/join");
                assert!(client
                    .post(url)
                    .send()
                    .await
                    .expect("join")
                    .status()
                    .is_success());
            }
            for score in [i as i64, i as i64 + 1] {
                let r = client
                    .post(format!("{base}/v1/boards/g/scores"))
                    .json(&json!({"member": m, "score": score}))
                    .send()
                    .await
                    .expect("write");
                assert!(r.status().is_success());
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let (_, l) = s.get("/v1/boards/g/cohorts?limit=100").await;
    let sizes: Vec<u64> = l["cohorts"]
        .as_array()
        .expect("cohorts")
        .iter()
        .map(|c| c["members"].as_u64().expect("members"))
        .collect();
    assert_eq!(sizes, [7, 7, 7, 7, 7, 7, 7, 7, 4], "{l}");
    // Every member in exactly one cohort, and each cohort's answer agrees.
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    for k in 1..=9 {
        let (_, p) = s
            .get(&format!("/v1/boards/g/cohorts/{k}/entries?limit=100"))
            .await;
        for (m, _, _) in rows(&p) {
            assert!(seen.insert(m.clone(), k).is_none(), "{m} in two cohorts");
        }
    }
    assert_eq!(
        seen.keys().cloned().collect::<BTreeSet<_>>(),
        members.iter().cloned().collect()
    );
    for m in &members {
        let (_, a) = s.get(&format!("/v1/boards/g/members/{m}")).await;
        assert_eq!(a["cohort"].as_u64(), seen.get(m).copied(), "{a}");
    }
    s.stop().await;
}

async fn cohort_config_is_checked_and_fixed(kind: Kind) {
    let s = Server::start(kind).await;
    for bad in [
        json!({"cohort_size": 1}),
        json!({"cohort_size": 10_001}),
        json!({"cohort_size": -3}),
    ] {
        let got = s.put("/v1/boards/g", bad.clone()).await;
        assert!(got.0 == 400, "{bad}: {got:?}");
        assert_error(&s.get("/v1/boards/g").await, 404, "board_not_found");
    }
    assert_eq!(
        s.put("/v1/boards/g", json!({"cohort_size": 50})).await.0,
        201
    );
    // Fixed for the board's life: no PATCH takes it, a create with another is a conflict.
    let got = s
        .call(
            Method::PATCH,
            "/v1/boards/g",
            Some(json!({"cohort_size": 20})),
        )
        .await;
    assert_error(&got, 400, "malformed_json");
    assert_error(
        &s.put("/v1/boards/g", json!({"cohort_size": 20})).await,
        409,
        "board_config_conflict",
    );
    assert_eq!(s.get("/v1/boards/g").await.1["cohort_size"], 50);
    // An import is its members' first entry: they arrive in rank order.
    assert_eq!(
        s.put("/v1/boards/imp", json!({"cohort_size": 2})).await.0,
        201
    );
    let lines = "{\"member\":\"low\",\"score\":1}\n{\"member\":\"top\",\"score\":9}\n{\"member\":\"mid\",\"score\":5}\n";
    let (st, got) = s.raw(Method::POST, "/v1/boards/imp/import", lines).await;
    assert_eq!((st.as_u16(), &got["imported"]), (200, &json!(3)), "{got}");
    let (_, c) = s.get("/v1/boards/imp/members/mid/cohort").await;
    assert_eq!(
        (&c["cohort"], rows(&c)),
        (&json!(1), vec![("top".into(), 9, 1), ("mid".into(), 5, 2)])
    );
    let (_, c) = s.get("/v1/boards/imp/members/low/cohort").await;
    assert_eq!(c["cohort"], 2);
    // RESP makes one too.
    let mut r = resp(&s).await;
    assert_eq!(
        lb(&mut r, &["LB.CREATE", "g2", "COHORTSIZE", "4"]).await,
        "OK"
    );
    assert_eq!(s.get("/v1/boards/g2").await.1["cohort_size"], 4);
    assert_eq!(
        lb(&mut r, &["LB.CREATE", "g3", "COHORTSIZE", "1"]).await["error"],
        "invalid_config"
    );
    s.stop().await;
}

conformance!(
    cohorts_fill_in_arrival_order_and_rank_alone,
    concurrent_first_writes_never_overfill_a_cohort,
    cohort_config_is_checked_and_fixed,
);
