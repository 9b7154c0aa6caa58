//! The live event stream (docs/SPEC.md §8) on every backend, through HTTP as a browser's
//! EventSource reads it: score and remove events in order with increasing ids, nothing for
//! a write that changes nothing, `Last-Event-ID` replay or `resync`, the `members=` and
//! `partition=` filters, one reset per new period, the end of the stream when the board is deleted, no
//! replay across an erase, the refusals; on Redis, a write through one node reaches another node's stream with the
//! same ids, and a period that begins without writes is announced alike by both; a
//! consumer that stops reading is cut off instead of buffered.

use std::sync::Arc;
use std::time::Duration;

use photofinish_core::clock::ManualClock;
use photofinish_testkit::sse::{EventStream, SseEvent};
use serde_json::{json, Value};

use crate::support::*;

async fn open(s: &Server, path: &str) -> EventStream {
    EventStream::open(&s.base, path, None, None)
        .await
        .expect("stream opens")
}

async fn write(s: &Server, board: &str, member: &str, score: i64) -> Value {
    let (st, w) = s
        .post(
            &format!("/v1/boards/{board}/scores"),
            json!({"member": member, "score": score}),
        )
        .await;
    assert_eq!(st, 200, "{w}");
    w
}

/// What an event says, without its id.
fn what(e: &SseEvent) -> (String, Value) {
    let mut data = e.data.clone();
    if let Some(o) = data.as_object_mut() {
        o.remove("reached_at");
    }
    (e.event.clone(), data)
}

fn score(member: &str, score: i64, rank: u64) -> (String, Value) {
    (
        "score".into(),
        json!({"member": member, "score": score, "rank": rank, "period": "all"}),
    )
}

async fn changes_arrive_in_order_and_a_write_that_changes_nothing_sends_nothing(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({"update": "best"})).await;
    let mut events = open(&s, "/v1/boards/b/events").await;
    let first = write(&s, "b", "ann", 100).await;
    write(&s, "b", "bob", 200).await;
    write(&s, "b", "ann", 50).await; // best: no change, no event
    let (st, _) = s
        .post(
            "/v1/boards/b/scores",
            json!({"member": "bob", "score": 1, "metadata": {"lvl": 2}}),
        )
        .await; // metadata only: no event
    assert_eq!(st, 200);
    assert_eq!(s.delete("/v1/boards/b/members/ann").await.0, 204);
    write(&s, "b", "cid", 300).await;

    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(events.next().await);
    }
    assert_eq!(
        got.iter().map(what).collect::<Vec<_>>(),
        vec![
            score("ann", 100, 1),
            score("bob", 200, 1),
            ("remove".into(), json!({"member": "ann", "period": "all"})),
            score("cid", 300, 1),
        ]
    );
    assert_eq!(got[0].data["reached_at"], first["reached_at"]);
    let ids: Vec<u64> = got
        .iter()
        .map(|e| e.id.expect("every event has an id"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert!(events
        .next_within(Duration::from_millis(300))
        .await
        .is_none());
    s.stop().await;
}

async fn last_event_id_replays_what_was_missed_or_says_resync(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    let mut live = open(&s, "/v1/boards/b/events").await;
    for (i, m) in ["a", "b", "c"].iter().enumerate() {
        write(&s, "b", m, 10 * (i as i64 + 1)).await;
    }
    let first = live.next().await;
    let rest = [live.next().await, live.next().await];
    // Back after the first event: the two after it, in order, with their ids.
    let mut again = EventStream::open(&s.base, "/v1/boards/b/events", None, first.id)
        .await
        .expect("reopen");
    assert_eq!([again.next().await, again.next().await], rest);
    write(&s, "b", "d", 40).await;
    assert_eq!(what(&again.next().await), score("d", 40, 1));
    // An id the board never had (or no longer holds): resync, then live events.
    let mut lost = EventStream::open(&s.base, "/v1/boards/b/events", None, Some(u64::MAX / 2))
        .await
        .expect("reopen");
    let resync = lost.next().await;
    assert_eq!(
        (resync.event.as_str(), &resync.data),
        ("resync", &json!({}))
    );
    write(&s, "b", "e", 50).await;
    let e = lost.next().await;
    assert_eq!(what(&e), score("e", 50, 1));
    assert!(e.id > resync.id, "{e:?} after {resync:?}");
    s.stop().await;
}

async fn the_members_filter_passes_only_those_members(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    let mut two = open(&s, "/v1/boards/b/events?members=a,c").await;
    // Repeated: each value one name, so a name may hold a comma.
    let mut comma = open(&s, "/v1/boards/b/events?members=x%2Cy&members=c").await;
    write(&s, "b", "a", 1).await;
    write(&s, "b", "b", 2).await;
    write(&s, "b", "x,y", 3).await;
    write(&s, "b", "c", 4).await;
    assert_eq!(what(&two.next().await), score("a", 1, 1));
    assert_eq!(what(&two.next().await), score("c", 4, 1));
    assert_eq!(what(&comma.next().await), score("x,y", 3, 1));
    assert_eq!(what(&comma.next().await), score("c", 4, 1));
    assert!(two.next_within(Duration::from_millis(200)).await.is_none());
    s.stop().await;
}

/// `partition=` passes only the score events of that partition's members; score events
/// carry the member's partition, its rank there and its team (docs/SPEC.md §17).
async fn the_partition_filter_passes_only_its_members(kind: Kind) {
    let s = Server::start(kind).await;
    let config = json!({"partitions": {"max": 5}, "teams": {"max_size": 5}});
    s.put("/v1/boards/g", config).await;
    let mut fr = open(&s, "/v1/boards/g/events?partition=FR").await;
    let mut all = open(&s, "/v1/boards/g/events").await;
    for (m, score, p, t) in [
        ("a", 5, "FR", "wolves"),
        ("b", 9, "DE", "bears"),
        ("c", 7, "FR", "wolves"),
    ] {
        let body = json!({"member": m, "score": score, "partition": p, "team": t});
        let (st, w) = s.post("/v1/boards/g/scores", body).await;
        assert_eq!(st, 200, "{w}");
    }
    let event = |m: &str, score: i64, rank: u64, p: &str, prank: u64, t: &str| {
        let data = json!({"member": m, "score": score, "rank": rank, "period": "all",
            "partition": p, "partition_rank": prank, "team": t});
        ("score".to_owned(), data)
    };
    assert_eq!(what(&fr.next().await), event("a", 5, 1, "FR", 1, "wolves"));
    assert_eq!(what(&fr.next().await), event("c", 7, 2, "FR", 1, "wolves"));
    assert!(fr.next_within(Duration::from_millis(200)).await.is_none());
    assert_eq!(what(&all.next().await).1["member"], "a");
    assert_eq!(what(&all.next().await), event("b", 9, 1, "DE", 1, "bears"));
    // A partition of a board without partitions, and a key of no pattern, are refused.
    s.put("/v1/boards/plain", json!({})).await;
    let got = s.get("/v1/boards/plain/events?partition=FR").await;
    assert_error(&got, 422, "invalid_parameter");
    let got = s.get("/v1/boards/g/events?partition=a.b").await;
    assert_error(&got, 400, "invalid_parameter");
    s.stop().await;
}

/// 2026-11-23T23:59:59.5Z in µs: half a second before a daily board's period ends.
const BEFORE_MIDNIGHT_US: i64 = 1_795_478_399_500_000;

async fn a_new_period_is_announced_once(kind: Kind) {
    let clock = Arc::new(ManualClock::new(BEFORE_MIDNIGHT_US));
    let s = Server::start_manual(kind, clock.clone()).await;
    s.put("/v1/boards/d", json!({"reset": "daily"})).await;
    let mut a = open(&s, "/v1/boards/d/events").await;
    let mut b = open(&s, "/v1/boards/d/events").await;
    let w = write(&s, "d", "ann", 5).await;
    assert_eq!(w["period"], "2026-11-23");
    assert_eq!(a.next().await.data["period"], "2026-11-23");
    assert_eq!(b.next().await.data["period"], "2026-11-23");
    // Midnight passes with nobody writing: the streams wake and the reset goes out once.
    clock.advance(1_000_000);
    for stream in [&mut a, &mut b] {
        let reset = stream.next().await;
        assert_eq!(
            what(&reset),
            (
                "reset".into(),
                json!({"period": "2026-11-24", "previous": "2026-11-23"})
            )
        );
    }
    // The first write of the new day follows it; no second reset.
    write(&s, "d", "bob", 7).await;
    let e = a.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["period"]),
        ("score", &json!("2026-11-24"))
    );
    assert_eq!(e.data["rank"], 1);
    // The next midnight is announced by the write that opens it.
    clock.advance(86_400_000_000);
    write(&s, "d", "cid", 9).await;
    assert_eq!(b.next().await.data["member"], "bob");
    let reset = b.next().await;
    assert_eq!(reset.event, "reset");
    assert_eq!(reset.data["period"], "2026-11-25");
    let cid = b.next().await;
    assert_eq!(
        (cid.event.as_str(), &cid.data["member"]),
        ("score", &json!("cid"))
    );
    s.stop().await;
}

async fn deleting_the_board_ends_its_streams(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    let mut events = open(&s, "/v1/boards/b/events").await;
    write(&s, "b", "a", 1).await;
    assert_eq!(events.next().await.event, "score");
    assert_eq!(s.delete("/v1/boards/b").await.0, 204);
    assert!(events.next_within(Duration::from_secs(10)).await.is_none());
    assert!(events.ended(), "the stream ends with its board");
    // A board made again under the name streams again.
    s.put("/v1/boards/b", json!({})).await;
    let mut again = open(&s, "/v1/boards/b/events").await;
    write(&s, "b", "z", 2).await;
    assert_eq!(what(&again.next().await), score("z", 2, 1));
    s.stop().await;
}

async fn bad_stream_requests_are_refused(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    let refused = |path: &'static str, last: Option<&'static str>| {
        let base = s.base.clone();
        async move {
            let mut req = reqwest::Client::new().get(format!("{base}{path}"));
            if let Some(l) = last {
                req = req.header("last-event-id", l);
            }
            let resp = req.send().await.expect("request");
            let status = resp.status();
            let body: Value = resp.json().await.expect("a JSON error");
            (status, body)
        }
    };
    assert_error(
        &refused("/v1/boards/nope/events", None).await,
        404,
        "board_not_found",
    );
    assert_error(
        &refused("/v1/boards/b%20b/events", None).await,
        400,
        "invalid_board_name",
    );
    assert_error(
        &refused("/v1/boards/b/events", Some("ten")).await,
        400,
        "invalid_parameter",
    );
    assert_error(
        &refused("/v1/boards/b/events?member=a", None).await,
        400,
        "invalid_parameter",
    );
    assert_error(
        &refused("/v1/boards/b/events?members=", None).await,
        422,
        "invalid_member",
    );
    s.stop().await;
}

/// No replay across an erase (docs/SPEC.md §16, docs/privacy.md): a reader reconnecting
/// with an id from before it is told to resync instead of being sent events that named
/// the erased member, and gets later writes; a reader that kept up goes on live.
async fn an_erase_cuts_the_replay(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    let mut live = open(&s, "/v1/boards/b/events").await;
    write(&s, "b", "zelda-wants-out", 10).await;
    write(&s, "b", "bob", 20).await;
    let first = live.next().await;
    assert_eq!(what(&first), score("zelda-wants-out", 10, 1));
    assert_eq!(what(&live.next().await), score("bob", 20, 1));
    crate::privacy::erase_named(&s, 1).await;
    let mut back = EventStream::open(&s.base, "/v1/boards/b/events", None, first.id)
        .await
        .expect("reopen");
    let resync = back.next().await;
    assert_eq!(
        (resync.event.as_str(), &resync.data),
        ("resync", &json!({}))
    );
    write(&s, "b", "cid", 30).await;
    assert_eq!(what(&back.next().await), score("cid", 30, 1));
    // The live reader may be told of the erase (as a removal), never of it again later.
    let next = loop {
        let e = live.next().await;
        if e.event == "score" {
            break e;
        }
    };
    assert_eq!(what(&next), score("cid", 30, 1));
    s.stop().await;
}

conformance!(
    an_erase_cuts_the_replay,
    changes_arrive_in_order_and_a_write_that_changes_nothing_sends_nothing,
    last_event_id_replays_what_was_missed_or_says_resync,
    the_members_filter_passes_only_those_members,
    the_partition_filter_passes_only_its_members,
    a_new_period_is_announced_once,
    deleting_the_board_ends_its_streams,
    bad_stream_requests_are_refused,
);

/// Two Photofinish nodes on one Redis: a write through node A appears on node B's stream,
/// and a reader that moves from A to B with its `Last-Event-ID` replays from B.
async fn a_write_through_one_node_reaches_the_others(kind: Kind) {
    let a = Server::start(kind).await;
    let b = a.sibling().await;
    a.put("/v1/boards/b", json!({})).await;
    let mut on_b = open(&b, "/v1/boards/b/events").await;
    let mut on_a = open(&a, "/v1/boards/b/events").await;
    write(&a, "b", "ann", 3).await;
    write(&b, "b", "bob", 4).await;
    let from_b = [on_b.next().await, on_b.next().await];
    let from_a = [on_a.next().await, on_a.next().await];
    assert_eq!(
        from_a, from_b,
        "both nodes see the same events with the same ids"
    );
    assert_eq!(what(&from_b[0]), score("ann", 3, 1));
    assert_eq!(what(&from_b[1]), score("bob", 4, 1));
    drop(on_a);
    write(&a, "b", "cid", 5).await;
    let mut moved = EventStream::open(&b.base, "/v1/boards/b/events", None, from_a[1].id)
        .await
        .expect("reopen on the other node");
    assert_eq!(what(&moved.next().await), score("cid", 5, 1));
    b.stop().await;
    a.stop().await;
}

mod across_nodes {
    use photofinish_testkit::server::Kind;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn redis() {
        super::a_write_through_one_node_reaches_the_others(Kind::Redis).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn cluster() {
        super::a_write_through_one_node_reaches_the_others(Kind::Cluster).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn resets() {
        super::two_nodes_announce_a_period_alike(Kind::Redis).await
    }
}

/// On Redis, a period that begins without writes is announced by the first entry
/// in it (a node whose readers wait for it appends a tick): both nodes' streams send the
/// same reset with the same id, once, and the events after it agree too.
async fn two_nodes_announce_a_period_alike(kind: Kind) {
    let clock = Arc::new(ManualClock::new(BEFORE_MIDNIGHT_US));
    let a = Server::start_manual(kind, clock.clone()).await;
    let b = a.sibling().await;
    a.put("/v1/boards/d", json!({"reset": "daily"})).await;
    let mut on_a = open(&a, "/v1/boards/d/events").await;
    let mut on_b = open(&b, "/v1/boards/d/events").await;
    write(&a, "d", "ann", 5).await;
    let first = [on_a.next().await, on_b.next().await];
    assert_eq!(first[0], first[1]);
    clock.advance(1_000_000);
    let reset = [on_a.next().await, on_b.next().await];
    assert_eq!(
        reset[0], reset[1],
        "the nodes announced the period differently"
    );
    assert_eq!(
        what(&reset[0]),
        (
            "reset".into(),
            json!({"period": "2026-11-24", "previous": "2026-11-23"})
        )
    );
    write(&b, "d", "bob", 7).await;
    let next = [on_a.next().await, on_b.next().await];
    assert_eq!(next[0], next[1]);
    assert_eq!(next[0].event, "score", "a second reset: {next:?}");
    assert!(next[0].id > reset[0].id && reset[0].id > first[0].id);
    a.stop().await;
    b.stop().await;
}

/// The id of the last event in raw SSE bytes.
fn last_id(raw: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(raw);
    text.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("id: ").or_else(|| l.strip_prefix("id:")))
        .find_map(|v| v.trim().parse().ok())
}

/// A consumer that stops reading falls behind the ring (10,000 events) and is cut off:
/// its connection is closed (not just the response ended, which left a keep-alive
/// connection open and the reader waiting forever), the server goes on answering, and
/// the reader reconnecting with the last id it got is told to resync, then gets later
/// writes. `recv_buffer`: the socket's receive buffer, or the system's default.
async fn a_consumer_that_stops_reading_is_cut_off(kind: Kind, recv_buffer: Option<u32>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({"update": "incr"})).await;
    let addr: std::net::SocketAddr = s.base.trim_start_matches("http://").parse().expect("addr");
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    if let Some(size) = recv_buffer {
        socket.set_recv_buffer_size(size).expect("rcvbuf");
    }
    let mut conn = socket.connect(addr).await.expect("connect");
    conn.write_all(b"GET /v1/boards/b/events HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("request");
    let mut head = [0u8; 64];
    let n = conn.read(&mut head).await.expect("head");
    assert!(
        head[..n].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&head[..n])
    );
    // 60,000 events (~7.5 MB): far more than the ring, and more than loopback's socket
    // buffers hold at their defaults (~28,000 events were read back here).
    const BATCHES: usize = 60;
    for _ in 0..BATCHES {
        let entries: Vec<Value> = (0..1000)
            .map(|i| json!({"member": format!("m{i}"), "score": 1}))
            .collect();
        let (st, _) = s
            .post("/v1/boards/b/scores:batch", json!({"entries": entries}))
            .await;
        assert_eq!(st, 200);
    }
    // Now read: the server closes the connection before it has given them all.
    let mut received = Vec::new();
    let read_all = async {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    };
    // A bound on the wait, not a speed: what the server's send buffer holds (~3.5 MB)
    // crosses a 4 KiB receive window in ~900 round trips, which on a loaded CI machine
    // (every test binary's tests at once on two cores) once took more than 60 s.
    tokio::time::timeout(Duration::from_secs(300), read_all)
        .await
        .expect("the server closes the connection");
    assert!(
        !received.ends_with(b"\r\n0\r\n\r\n"),
        "the response was ended as if complete, not cut"
    );
    let events = received
        .windows(12)
        .filter(|w| w == b"event: score")
        .count();
    assert!(
        events < BATCHES * 1000,
        "all {events} events were kept for a consumer that did not read"
    );
    assert_eq!(s.get("/healthz").await.0, 200);
    // As an EventSource does: reconnect with the last id received.
    let last = last_id(&received).expect("some events arrived before the cut");
    let mut again = EventStream::open(&s.base, "/v1/boards/b/events", None, Some(last))
        .await
        .expect("reconnect");
    assert_eq!(again.next().await.event, "resync");
    write(&s, "b", "late", 5).await;
    assert_eq!(what(&again.next().await), score("late", 5, 1001));
    s.stop().await;
}

mod cut_off {
    use photofinish_testkit::server::Kind;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn embedded_small_buffer() {
        super::a_consumer_that_stops_reading_is_cut_off(Kind::Embedded, Some(4096)).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn embedded_default_buffer() {
        super::a_consumer_that_stops_reading_is_cut_off(Kind::Embedded, None).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn redis_small_buffer() {
        super::a_consumer_that_stops_reading_is_cut_off(Kind::Redis, Some(4096)).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn redis_default_buffer() {
        super::a_consumer_that_stops_reading_is_cut_off(Kind::Redis, None).await
    }
}
