//! The web console (docs/SPEC.md §8) in headless Chromium against a live server: the
//! boards list, the top entries in rank order, the rank-style switch changing tied
//! members' ranks, the member search with the member highlighted among its neighbours,
//! and a write made during the test appearing on the open page without a reload. The
//! board page's screenshots (desktop and phone width) are saved under
//! `target/artifacts/` for a person to look at.

use serde_json::json;

use crate::browser::Browser;
use crate::support::*;

const ROWS: &str =
    "[...document.querySelectorAll('#entries tbody tr')].map(r => r.dataset.member + ':' + r.dataset.rank).join(' ')";

fn artifact(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/artifacts")
        .join(name)
}

/// Waits for the render after the one numbered `before`.
async fn next_render(b: &mut Browser, before: &serde_json::Value) {
    let before = before.as_str().unwrap_or("0").parse::<u64>().unwrap_or(0);
    b.wait_for(&format!("Number(document.body.dataset.renders) > {before}"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_shows_a_board_live() {
    let s = Server::start(Kind::Embedded).await;
    s.put(
        "/v1/boards/weekly",
        json!({"reset": "weekly", "update": "best"}),
    )
    .await;
    s.put("/v1/boards/daily", json!({"reset": "daily"})).await;
    for (m, v) in [("ann", 300), ("bob", 200), ("cid", 200), ("dan", 100)] {
        let body = json!({"member": m, "score": v, "metadata": {"guild": "red"}});
        assert_eq!(s.post("/v1/boards/weekly/scores", body).await.0, 200);
    }
    for i in 0..40 {
        let body = json!({"member": format!("p{i:02}"), "score": 10 + i * 2});
        s.post("/v1/boards/weekly/scores", body).await;
    }
    let mut b = Browser::start(1280, 1000).await;

    // The boards list links each board.
    b.goto(&format!("{}/", s.base)).await;
    let boards = b
        .wait_for("[...document.querySelectorAll('#boards tbody tr')].map(r => r.dataset.board).join(' ')")
        .await;
    assert_eq!(boards, "daily weekly");

    // The board page: top entries in rank order, ties first-reached first.
    b.goto(&format!("{}/?board=weekly", s.base)).await;
    b.wait_for("document.body.dataset.ready === '1'").await;
    let rows = b.eval(ROWS).await;
    assert!(
        rows.as_str()
            .unwrap_or("")
            .starts_with("ann:1 bob:2 cid:3 dan:4"),
        "{rows}"
    );

    // Rank styles: tied bob and cid share a rank.
    for (style, want) in [
        ("competition", "ann:1 bob:2 cid:2 dan:4"),
        ("dense", "ann:1 bob:2 cid:2 dan:3"),
        ("ordinal", "ann:1 bob:2 cid:3 dan:4"),
    ] {
        let before = b.eval("document.body.dataset.renders").await;
        b.eval(&format!(
            "(() => {{ const s = document.getElementById('ranking'); s.value = '{style}'; s.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()"
        ))
        .await;
        next_render(&mut b, &before).await;
        let rows = b.eval(ROWS).await;
        assert!(
            rows.as_str().unwrap_or("").starts_with(want),
            "{style}: {rows}"
        );
    }

    // Live: a write made now shows on the open page, marked, without a reload.
    b.wait_for("document.getElementById('live').textContent.trim() === 'live'")
        .await;
    b.eval("window.__same_page = true").await;
    let w = json!({"member": "eve", "score": 400});
    assert_eq!(s.post("/v1/boards/weekly/scores", w).await.0, 200);
    let top = b
        .wait_for("(() => { const r = document.querySelector('#entries tbody tr'); return r && r.dataset.member === 'eve' && r.classList.contains('changed') && r.dataset.rank; })()")
        .await;
    assert_eq!(top, "1");
    // eve is a new member: the header and the period picker count her too.
    let counts = "(() => [...document.querySelectorAll('#board-facts li')].find(li => li.textContent.startsWith('Members')).textContent + ' | ' + document.getElementById('period').selectedOptions[0].textContent)()";
    let head = b.eval(counts).await;
    assert!(head.as_str().unwrap_or("").contains("Members 45"), "{head}");
    assert!(
        head.as_str().unwrap_or("").contains("· 45 members"),
        "{head}"
    );
    assert_eq!(
        b.eval("window.__same_page === true").await,
        true,
        "the page was not reloaded"
    );

    // Member search: the member among its neighbours, highlighted.
    b.eval("(() => { document.getElementById('search-member').value = 'cid'; document.getElementById('search').requestSubmit(); return true; })()").await;
    let found = b
        .wait_for("(() => { const r = document.querySelector('#around tr.highlight'); return r && r.dataset.member + ':' + r.dataset.rank; })()")
        .await;
    assert_eq!(found, "cid:4");
    let neighbours = b
        .eval("[...document.querySelectorAll('#around tbody tr')].map(r => r.dataset.member).join(' ')")
        .await;
    assert!(
        neighbours.as_str().unwrap_or("").contains("bob cid dan"),
        "{neighbours}"
    );

    b.screenshot(&artifact("console-board.png")).await;
    drop(b);
    let mut phone = Browser::start(390, 844).await;
    phone.goto(&format!("{}/?board=weekly", s.base)).await;
    phone.wait_for("document.body.dataset.ready === '1'").await;
    let overflow = phone
        .eval("document.documentElement.scrollWidth <= window.innerWidth + 1")
        .await;
    assert_eq!(overflow, true, "the page fits a phone's width");
    phone.screenshot(&artifact("console-phone.png")).await;
    s.stop().await;
}

/// A board of several columns (docs/SPEC.md §13): one table column per board column, in
/// the board's order, each cell its column's value (exact past 2^53), rows in the tuple's
/// order, and a live write's new values on the open page.
/// The boards list is paged (docs/SPEC.md §3): 100 boards a page, where it is and how
/// many there are, and Next/Previous move through them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_pages_the_boards_list() {
    let s = Server::start(Kind::Embedded).await;
    for i in 0..105 {
        assert_eq!(
            s.put(&format!("/v1/boards/b{i:03}"), json!({})).await.0,
            201
        );
    }
    let mut b = Browser::start(1280, 1000).await;
    b.goto(&format!("{}/", s.base)).await;
    const NAMES: &str =
        "[...document.querySelectorAll('#boards tbody tr')].map(r => r.dataset.board)";
    b.wait_for(&format!("{NAMES}.length === 100")).await;
    assert_eq!(
        b.eval("document.getElementById('boards-info').textContent")
            .await,
        "1–100 of 105 boards"
    );
    assert_eq!(b.eval(&format!("{NAMES}[0]")).await, "b000");
    b.eval("document.getElementById('boards-next').click()")
        .await;
    b.wait_for(&format!("{NAMES}.length === 5")).await;
    assert_eq!(
        b.eval(&format!("{NAMES}.join(' ')")).await,
        "b100 b101 b102 b103 b104"
    );
    assert_eq!(
        b.eval("[document.getElementById('boards-info').textContent, document.getElementById('boards-next').disabled, location.search]").await,
        json!(["101–105 of 105 boards", true, "?offset=100"])
    );
    b.screenshot(&artifact("console-boards-page.png")).await;
    b.eval("document.getElementById('boards-prev').click()")
        .await;
    b.wait_for(&format!("{NAMES}.length === 100")).await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_shows_one_table_column_per_board_column() {
    let s = Server::start(Kind::Embedded).await;
    let columns = json!({"columns": [
        {"name": "wins"}, {"name": "kills"}, {"name": "deaths", "order": "asc"}
    ]});
    assert!(s.put("/v1/boards/arena", columns).await.0.is_success());
    for (m, w, k, d) in [
        ("ann", 3, 10, 2),
        ("bob", 3, 10, 1),
        ("cid", 4, 0, 9),
        ("dan", 3, 12, 5),
    ] {
        let body = json!({"member": m, "scores": {"wins": w, "kills": k, "deaths": d}});
        assert_eq!(s.post("/v1/boards/arena/scores", body).await.0, 200);
    }
    let big =
        json!({"member": "eve", "scores": {"wins": 1, "kills": "9007199254740993", "deaths": 0}});
    assert_eq!(s.post("/v1/boards/arena/scores", big).await.0, 200);
    let mut b = Browser::start(1280, 900).await;
    b.goto(&format!("{}/?board=arena", s.base)).await;
    b.wait_for("document.body.dataset.ready === '1'").await;
    let heads = b
        .eval("[...document.querySelectorAll('#entries thead th')].filter(t => !t.hidden).map(t => t.textContent).join('|')")
        .await;
    assert_eq!(
        heads,
        "Rank|Movement|Member|wins|kills|deaths|Reached|Metadata"
    );
    let rows = b.eval(ROWS).await;
    assert_eq!(rows, "cid:1 dan:2 bob:3 ann:4 eve:5");
    let cells = "(m) => [...document.querySelector(`#entries tr[data-member='${m}']`).querySelectorAll('td.score')].map(t => t.textContent).join(',')";
    assert_eq!(b.eval(&format!("({cells})('dan')")).await, "3,12,5");
    assert_eq!(
        b.eval(&format!("({cells})('eve')")).await,
        "1,9007199254740993,0"
    );
    // Live: bob's kills grow past dan's; the page shows his new values, ranked.
    b.wait_for("document.getElementById('live').textContent.trim() === 'live'")
        .await;
    let w = json!({"member": "bob", "scores": {"kills": 5}});
    assert_eq!(s.post("/v1/boards/arena/scores", w).await.0, 200);
    let second = b
        .wait_for("(() => { const r = document.querySelectorAll('#entries tbody tr')[1]; return r && r.dataset.member === 'bob' && [...r.querySelectorAll('td.score')].map(t => t.textContent).join(','); })()")
        .await;
    assert_eq!(second, "3,15,1");
    b.screenshot(&artifact("console-columns.png")).await;
    s.stop().await;
}

/// A cohort board (docs/SPEC.md §14): the facts name the cohort size, the side lists the
/// period's cohorts, a searched member's cohort shows with its cohort ranks, and a cohort
/// picked from the list shows its standings.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_shows_a_members_cohort_and_the_boards_cohorts() {
    let s = Server::start(Kind::Embedded).await;
    assert!(s
        .put(
            "/v1/boards/league",
            json!({"cohort_size": 3, "update": "set"})
        )
        .await
        .0
        .is_success());
    for (m, v) in [
        ("ann", 40),
        ("bob", 70),
        ("cid", 55),
        ("dan", 90),
        ("eve", 10),
        ("fay", 65),
        ("gus", 5),
    ] {
        let body = json!({"member": m, "score": v});
        assert_eq!(s.post("/v1/boards/league/scores", body).await.0, 200);
    }
    let mut b = Browser::start(1280, 900).await;
    b.goto(&format!("{}/?board=league&member=cid", s.base))
        .await;
    b.wait_for("document.body.dataset.ready === '1'").await;
    let facts = b
        .eval("document.getElementById('board-facts').textContent")
        .await;
    assert!(
        facts.as_str().is_some_and(|f| f.contains("Cohorts of 3")),
        "{facts}"
    );
    let list = b
        .eval("[...document.querySelectorAll('#cohorts li')].map(l => l.textContent).join('|')")
        .await;
    assert_eq!(list, "Cohort 13 / 3|Cohort 23 / 3|Cohort 31 / 3");
    assert_eq!(
        b.eval("document.getElementById('cohort-title').textContent")
            .await,
        "Cohort 1 of cid"
    );
    let cohort = "[...document.querySelectorAll('#cohort tbody tr')].map(r => r.dataset.member + ':' + r.dataset.rank).join(' ')";
    assert_eq!(b.eval(cohort).await, "bob:1 cid:2 ann:3");
    b.screenshot(&artifact("console-cohorts.png")).await;
    // Picking cohort 2 from the list shows its standings.
    b.eval("document.querySelectorAll('#cohorts li button')[1].click()")
        .await;
    b.wait_for("document.getElementById('cohort-title').textContent === 'Cohort 2'")
        .await;
    assert_eq!(b.eval(cohort).await, "dan:1 fay:2 eve:3");
    s.stop().await;
}

/// A board of partitions and teams (docs/SPEC.md §17): the facts name both, rows name
/// each member's partition and team, the side lists the partitions and the top teams,
/// picking a partition shows its standings alone, and picking a team its members.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_shows_partitions_and_teams() {
    let s = Server::start(Kind::Embedded).await;
    let config = json!({"partitions": {"max": 10}, "teams": {"max_size": 5}, "update": "set"});
    assert!(s.put("/v1/boards/clans", config).await.0.is_success());
    for (m, v, p, t) in [
        ("ann", 40, "FR", "wolves"),
        ("bob", 70, "DE", "wolves"),
        ("cid", 55, "FR", "bears"),
        ("dan", 90, "JP", "bears"),
        ("eve", 10, "FR", "owls"),
    ] {
        let body = json!({"member": m, "score": v, "partition": p, "team": t});
        assert_eq!(s.post("/v1/boards/clans/scores", body).await.0, 200);
    }
    let mut b = Browser::start(1280, 900).await;
    b.goto(&format!("{}/?board=clans", s.base)).await;
    b.wait_for("document.body.dataset.ready === '1'").await;
    let facts = b
        .eval("document.getElementById('board-facts').textContent")
        .await;
    let facts = facts.as_str().unwrap_or_default().to_owned();
    assert!(
        facts.contains("Partitions up to 10") && facts.contains("Teams of up to 5"),
        "{facts}"
    );
    let list = "[...document.querySelectorAll('#partitions li')].map(l => l.textContent).join('|')";
    assert_eq!(b.eval(list).await, "DE1 member|FR3 members|JP1 member");
    let teams = "[...document.querySelectorAll('#teams li')].map(l => l.textContent).join('|')";
    assert_eq!(
        b.eval(teams).await,
        "#1 bears145 · 2 members|#2 wolves110 · 2 members|#3 owls10 · 1 member"
    );
    let chips =
        "[...document.querySelectorAll('#entries tbody tr')][0].querySelectorAll('.group-chip')";
    let chips = format!("[...{chips}].map(c => c.textContent).join(' ')");
    assert_eq!(b.eval(&chips).await, "JP bears");
    b.screenshot(&artifact("console-teams.png")).await;
    // Picking FR shows France's standings alone, ranked among themselves.
    let rows = "[...document.querySelectorAll('#entries tbody tr')].map(r => r.dataset.member + ':' + r.dataset.rank).join(' ')";
    b.eval("[...document.querySelectorAll('#partitions li button')].find(x => x.textContent === 'FR').click()").await;
    b.wait_for("document.getElementById('page-info').textContent.includes('partition FR')")
        .await;
    assert_eq!(b.eval(rows).await, "cid:1 ann:2 eve:3");
    // Picking wolves shows its members' contributions.
    b.eval("document.querySelectorAll('#teams li button')[1].click()")
        .await;
    b.wait_for("document.getElementById('team-title').textContent === 'Team wolves'")
        .await;
    let members = "[...document.querySelectorAll('#team tbody tr')].map(r => r.dataset.member + ':' + r.dataset.rank).join(' ')";
    assert_eq!(b.eval(members).await, "bob:1 ann:2");
    b.screenshot(&artifact("console-team.png")).await;
    s.stop().await;
}

/// A league board (docs/SPEC.md §14): the facts name the league, the cohort list names
/// each cohort's tier, a searched member's cohort shows its tier and the member's tier
/// now, and a cohort of another tier picked from the list shows that tier's standings.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_shows_tiers_on_a_league_board() {
    // 2026-11-23T01:00:00Z: inside period 2026-11-23 of a daily UTC board.
    let day1 = 1_795_395_600_000_000_i64;
    let clock = std::sync::Arc::new(photofinish_core::clock::ManualClock::new(day1));
    let s = Server::start_manual(Kind::Embedded, clock.clone()).await;
    let config = json!({"reset": "daily", "update": "set", "cohort_size": 3,
        "league": {"tiers": ["bronze", "silver", "gold"], "promote": 1, "demote": 1}});
    assert!(s.put("/v1/boards/lg", config).await.0.is_success());
    for (m, v) in [("ann", 40), ("bob", 70), ("cid", 55), ("dan", 90)] {
        let body = json!({"member": m, "score": v});
        assert_eq!(s.post("/v1/boards/lg/scores", body).await.0, 200);
    }
    // Day 1 closes: bob and dan (each first in its cohort) go up to silver.
    clock.set(day1 + 86_400_000_000);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while s.get("/v1/boards/lg/periods/previous/moves").await.1["closed"] != json!(true) {
        assert!(std::time::Instant::now() < deadline, "day 1 never closed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for (m, v) in [("ann", 12), ("bob", 30), ("dan", 20), ("cid", 25)] {
        let body = json!({"member": m, "score": v});
        assert_eq!(s.post("/v1/boards/lg/scores", body).await.0, 200);
    }
    let mut b = Browser::start(1280, 900).await;
    b.goto(&format!("{}/?board=lg&member=ann", s.base)).await;
    b.wait_for("document.body.dataset.ready === '1'").await;
    let facts = b
        .eval("document.getElementById('board-facts').textContent")
        .await;
    assert!(
        facts
            .as_str()
            .is_some_and(|f| f.contains("League bronze → silver → gold")),
        "{facts}"
    );
    let list = b
        .eval("[...document.querySelectorAll('#cohorts li')].map(l => l.textContent).join('|')")
        .await;
    assert_eq!(list, "bronze · Cohort 12 / 3|silver · Cohort 12 / 3");
    assert_eq!(
        b.eval("document.getElementById('cohort-title').textContent")
            .await,
        "bronze · Cohort 1 of ann"
    );
    let info = b
        .eval("document.getElementById('cohort-info').textContent")
        .await;
    assert!(
        info.as_str()
            .is_some_and(|i| i.contains("ann's tier now: bronze")),
        "{info}"
    );
    b.screenshot(&artifact("console-league.png")).await;
    // Picking silver's cohort 1 shows silver's standings, not bronze's.
    b.eval("document.querySelectorAll('#cohorts li button')[1].click()")
        .await;
    b.wait_for("document.getElementById('cohort-title').textContent === 'silver · Cohort 1'")
        .await;
    let cohort = "[...document.querySelectorAll('#cohort tbody tr')].map(r => r.dataset.member + ':' + r.dataset.rank).join(' ')";
    assert_eq!(b.eval(cohort).await, "bob:1 dan:2");
    s.stop().await;
}

/// A board with reward rows (docs/SPEC.md §16): the period's grants once it closed, each
/// with what it pays and whether it was claimed, and a searched member's rewards across
/// boards.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_console_shows_a_periods_grants_and_a_members_rewards() {
    // 2026-11-23T01:00:00Z: inside period 2026-11-23 of a daily UTC board.
    let day1 = 1_795_395_600_000_000_i64;
    let clock = std::sync::Arc::new(photofinish_core::clock::ManualClock::new(day1));
    let s = Server::start_manual(Kind::Embedded, clock.clone()).await;
    let config = json!({"reset": "daily", "rewards": [
        {"from": 1, "to": 1, "reward": "gold-chest", "amount": 3},
        {"from": 2, "to": 3, "reward": "silver-chest"}]});
    assert!(s.put("/v1/boards/rw", config).await.0.is_success());
    for (m, v) in [("ann", 40), ("bob", 70), ("cid", 55), ("dan", 10)] {
        let body = json!({"member": m, "score": v});
        assert_eq!(s.post("/v1/boards/rw/scores", body).await.0, 200);
    }
    clock.set(day1 + 86_400_000_000);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while s.get("/v1/boards/rw/periods/previous/rewards").await.1["granted"] != json!(true) {
        assert!(std::time::Instant::now() < deadline, "day 1 never granted");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let claimed = s
        .post("/v1/members/bob/rewards/rw:2026-11-23:1/claim", json!({}))
        .await;
    assert_eq!(claimed.0, 200, "{}", claimed.1);
    let mut b = Browser::start(1280, 900).await;
    b.goto(&format!(
        "{}/?board=rw&period=2026-11-23&member=cid",
        s.base
    ))
    .await;
    b.wait_for("document.body.dataset.ready === '1' && !document.getElementById('rewards-card').hidden && !document.getElementById('member-rewards-card').hidden")
        .await;
    let grants = "[...document.querySelectorAll('#rewards li')].map(l => l.textContent).join('|')";
    assert_eq!(
        b.eval(grants).await,
        "#1 bobgold-chest × 3claimed|#2 cidsilver-chestunclaimed|#3 annsilver-chestunclaimed"
    );
    assert_eq!(
        b.eval("document.getElementById('rewards-caption').textContent")
            .await,
        "3 grants · 2026-11-23"
    );
    let mine =
        "[...document.querySelectorAll('#member-rewards li')].map(l => l.textContent).join('|')";
    assert_eq!(
        b.eval(mine).await,
        "rw · 2026-11-23 · #2silver-chestunclaimed"
    );
    b.screenshot(&artifact("console-rewards.png")).await;
    // The current period has not closed: nothing granted yet, and it says when.
    b.goto(&format!("{}/?board=rw", s.base)).await;
    b.wait_for(
        "document.body.dataset.ready === '1' && !document.getElementById('rewards-card').hidden",
    )
    .await;
    assert_eq!(
        b.eval("document.getElementById('rewards-empty').textContent")
            .await,
        "Granted when this period closes."
    );
    s.stop().await;
}

/// An admin moderates from the console (docs/SPEC.md §15): "Hide" on a member's row, the
/// hidden list with "Unhide", a hidden member found by a search shown marked; a reader's
/// console has none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_admin_hides_and_unhides_members_from_the_console() {
    use photofinish_core::access::Scope;
    use photofinish_server::auth::keys;
    let dir = tempfile::tempdir().expect("tmp");
    let (a, admin) = keys::new_key("moderator", Scope::Admin, vec![], None, "t".into()).expect("k");
    let (r, read) = keys::new_key("reader", Scope::Read, vec![], None, "t".into()).expect("k");
    let file = dir.path().join("keys.json");
    keys::write_file(&file, vec![a, r]).expect("keys");
    let (admin, read) = (admin.expose().to_owned(), read.expose().to_owned());
    let s = Server::start_configured(Kind::Embedded, |o| {
        photofinish_server::serve::ServeOptions {
            keys: Some(file),
            ..o
        }
    })
    .await;
    let put = s
        .call_as(
            Some(&admin),
            reqwest::Method::PUT,
            "/v1/boards/mod",
            Some(json!({})),
        )
        .await;
    assert_eq!(put.0, 201);
    for (m, v) in [("ann", 50), ("bob", 40), ("cat", 30), ("dan", 20)] {
        let body = json!({"member": m, "score": v});
        let w = s
            .call_as(
                Some(&admin),
                reqwest::Method::POST,
                "/v1/boards/mod/scores",
                Some(body),
            )
            .await;
        assert_eq!(w.0, 200);
    }
    let mut b = Browser::start(1280, 900).await;
    b.goto(&format!("{}/", s.base)).await;
    b.eval(&format!(
        "sessionStorage.setItem('photofinish.credential', {admin:?})"
    ))
    .await;
    b.goto(&format!("{}/?board=mod", s.base)).await;
    b.wait_for(
        "document.body.dataset.ready === '1' && !document.getElementById('hidden-card').hidden",
    )
    .await;
    assert_eq!(b.eval(ROWS).await, "ann:1 bob:2 cat:3 dan:4");
    b.eval("document.querySelector('#entries tr[data-member=\"bob\"] button[data-moderate=\"hide\"]').click()")
        .await;
    b.wait_for(&format!("{ROWS} === 'ann:1 cat:2 dan:3'")).await;
    let hidden =
        "[...document.querySelectorAll('#hidden-list li')].map(l => l.textContent).join('|')";
    b.wait_for(&format!("{hidden} === 'bobUnhide'")).await;
    // A search finds bob, marked, at the rank he would have.
    b.eval("document.querySelector('#hidden-list li button.link').click()")
        .await;
    b.wait_for("!document.getElementById('around-panel').hidden")
        .await;
    let row = "document.querySelector('#around tr[data-member=\"bob\"]')";
    assert_eq!(b.eval(&format!("{row}.dataset.rank")).await, "2");
    assert_eq!(
        b.eval(&format!("{row}.classList.contains('hidden-member')"))
            .await,
        true
    );
    b.screenshot(&artifact("console-moderation.png")).await;
    // The board's recent changes, from the audit log.
    b.wait_for("document.querySelectorAll('#board-audit li').length === 2")
        .await;
    let changes = b
        .eval("document.getElementById('board-audit').textContent")
        .await;
    assert!(
        changes.as_str().is_some_and(
            |c| c.contains("moderator · member.hide bob") && c.contains("board.create")
        ),
        "{changes}"
    );
    // Unhide from the list: bob is back in place.
    b.eval("document.querySelector('#hidden-list button[data-moderate=\"unhide\"]').click()")
        .await;
    b.wait_for(&format!("{ROWS} === 'ann:1 bob:2 cat:3 dan:4'"))
        .await;
    b.wait_for("document.getElementById('hidden-list').children.length === 0")
        .await;
    // The boards page shows an admin the audit log.
    b.goto(&format!("{}/", s.base)).await;
    b.wait_for("!document.getElementById('audit-card').hidden && document.querySelectorAll('#audit tbody tr').length === 3")
        .await;
    let first = b
        .eval("[...document.querySelectorAll('#audit tbody tr')[0].cells].map(c => c.textContent).slice(1, 5).join('|')")
        .await;
    assert_eq!(first, "moderator|member.unhide|mod|bob");
    b.screenshot(&artifact("console-audit.png")).await;
    // A reader's console: no hidden list, no buttons.
    let hide = s
        .call_as(
            Some(&admin),
            reqwest::Method::POST,
            "/v1/boards/mod/members/cat/hide",
            None,
        )
        .await;
    assert_eq!(hide.0, 204);
    b.eval(&format!(
        "sessionStorage.setItem('photofinish.credential', {read:?})"
    ))
    .await;
    b.goto(&format!("{}/?board=mod", s.base)).await;
    b.wait_for("document.body.dataset.ready === '1'").await;
    assert_eq!(b.eval(ROWS).await, "ann:1 bob:2 dan:3");
    assert_eq!(
        b.eval("document.getElementById('hidden-card').hidden")
            .await,
        true
    );
    assert_eq!(
        b.eval("document.querySelectorAll('button.mod').length")
            .await,
        0
    );
    assert_eq!(
        b.eval("document.getElementById('board-audit-card').hidden")
            .await,
        true
    );
    b.goto(&format!("{}/", s.base)).await;
    b.wait_for("document.body.dataset.ready === '1'").await;
    assert_eq!(
        b.eval("document.getElementById('audit-card').hidden").await,
        true
    );
    s.stop().await;
}
