//! A board's log in Redis (`photofinish_redis::log`, docs/redis-layout.md) against a real
//! `redis-server`, standalone and a 3-master cluster: appends from many connections at
//! once form one gapless, chained order, and each appender learns what came before its
//! entries; a skewed stamp appends nothing; a node's [`Tail`] notices a trimmed gap, a
//! rewritten entry and a log shorter than what it took; only the lease's current holder
//! publishes a snapshot; a published snapshot reads back whole, a damaged one is refused;
//! publishing trims below the snapshot and keeps the last 10,000 entries; concurrent head
//! reads share round trips and stay fresh.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::now_us;
use photofinish_redis::conn::Conn;
use photofinish_redis::log::snapshot::Refused;
use photofinish_redis::log::{
    BoardLog, Check, Divergence, LogError, LogKeys, Missed, Tail, MAX_MISSED_ENTRIES,
};
use photofinish_testkit::server::{fresh_namespace, redis_conn, Kind};

async fn connect(kind: Kind) -> Conn {
    redis_conn(kind).await
}

/// A fresh board's log on its own connection, and its keys.
async fn fresh_log(kind: Kind) -> (BoardLog, LogKeys) {
    let keys = LogKeys::new(&fresh_namespace(), "b");
    (BoardLog::new(connect(kind).await, keys.clone()), keys)
}

/// Every entry after `after`, read in pages, checked by a tail that starts there.
async fn read_all(log: &BoardLog, mut tail: Tail) -> Result<Vec<Vec<u8>>, Divergence> {
    let mut out = Vec::new();
    loop {
        let page = log.read(tail.n, 1000).await.expect("read");
        if page.is_empty() {
            return Ok(out);
        }
        for e in page {
            tail.take(&e)?;
            out.push(e.payload);
        }
    }
}

async fn concurrent_appends_form_one_chained_order(kind: Kind) {
    let (log, keys) = fresh_log(kind).await;
    const WRITERS: usize = 8;
    const GROUPS: usize = 40;
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let log = BoardLog::new(connect(kind).await, keys.clone());
        tasks.push(tokio::spawn(async move {
            // What this writer appended, by number, and what it learned came before.
            let mut mine = BTreeMap::new();
            let mut learned = BTreeMap::new();
            let mut after = Tail::default();
            for g in 0..GROUPS {
                let payloads: Vec<Vec<u8>> = (0..1 + g % 3)
                    .map(|i| format!("w{w}g{g}i{i}").into_bytes())
                    .collect();
                let a = log
                    .append(Some(&after), now_us(), Some(5_000_000), &payloads)
                    .await
                    .expect("append");
                assert_eq!(a.last - a.first + 1, payloads.len() as u64);
                let Missed::Entries(missed) = a.missed else {
                    panic!("{WRITERS} writers cannot put one more than a thousand behind");
                };
                assert_eq!(
                    missed.iter().map(|e| e.n).collect::<Vec<_>>(),
                    (after.n + 1..a.first).collect::<Vec<_>>(),
                    "the missed entries are exactly those between"
                );
                for e in missed {
                    learned.insert(e.n, e.payload);
                }
                for (n, p) in (a.first..=a.last).zip(payloads) {
                    mine.insert(n, p);
                }
                after = Tail {
                    n: a.last,
                    check: a.check,
                };
            }
            (mine, learned)
        }));
    }
    let mut by_number = BTreeMap::new();
    let mut learned_all = Vec::new();
    for t in tasks {
        let (mine, learned) = t.await.expect("writer");
        for (n, p) in mine {
            assert!(by_number.insert(n, p).is_none(), "entry {n} given twice");
        }
        learned_all.push(learned);
    }
    let total: usize = (0..GROUPS).map(|g| 1 + g % 3).sum::<usize>() * WRITERS;
    assert_eq!(by_number.len(), total);
    assert_eq!(
        by_number.keys().copied().collect::<Vec<_>>(),
        (1..=total as u64).collect::<Vec<_>>()
    );
    let stored = read_all(&log, Tail::default()).await.expect("chained");
    assert_eq!(stored, by_number.values().cloned().collect::<Vec<_>>());
    for learned in learned_all {
        for (n, p) in learned {
            assert_eq!(by_number[&n], p, "a missed entry as it is stored");
        }
    }
    let head = log.head().await.expect("head");
    assert_eq!(head.n, total as u64);
}

async fn a_skewed_stamp_appends_nothing(kind: Kind) {
    let (log, _) = fresh_log(kind).await;
    log.append(None, now_us(), Some(1_000_000), &[b"a".to_vec()])
        .await
        .expect("in time");
    let late = log
        .append(
            None,
            now_us() - 10_000_000,
            Some(1_000_000),
            &[b"b".to_vec()],
        )
        .await;
    let Err(LogError::Skew { redis_us, .. }) = late else {
        panic!("a stamp 10 s behind was taken: {late:?}");
    };
    assert!((redis_us - now_us()).abs() < 5_000_000, "{redis_us}");
    assert_eq!(log.head().await.expect("head").n, 1);
    assert_eq!(
        read_all(&log, Tail::default()).await,
        Ok(vec![b"a".to_vec()])
    );
}

async fn far_behind_is_told_behind(kind: Kind) {
    let (log, _) = fresh_log(kind).await;
    let many: Vec<Vec<u8>> = (0..=MAX_MISSED_ENTRIES)
        .map(|i| i.to_string().into_bytes())
        .collect();
    log.append(None, now_us(), None, &many).await.expect("many");
    let a = log
        .append(Some(&Tail::default()), now_us(), None, &[b"x".to_vec()])
        .await
        .expect("append");
    assert_eq!(a.missed, Missed::Behind);
    let at_head = Tail {
        n: a.last,
        check: a.check.clone(),
    };
    let caught_up = log
        .append(Some(&at_head), now_us(), None, &[])
        .await
        .expect("nothing");
    assert_eq!((caught_up.first, caught_up.last), (a.last + 1, a.last));
    assert_eq!(caught_up.missed, Missed::Entries(vec![]));
}

/// A log rewritten under a node (Redis restored from an older copy, then written to):
/// shorter than what the node took, or as long but not the same.
async fn a_node_notices_a_shorter_or_rewritten_log(kind: Kind) {
    let (log, keys) = fresh_log(kind).await;
    let five: Vec<Vec<u8>> = (0..5).map(|i| vec![b'a', i]).collect();
    log.append(None, now_us(), None, &five).await.expect("five");
    let mut tail = Tail::default();
    for e in log.read(0, 10).await.expect("read") {
        tail.take(&e).expect("take");
    }
    assert!(tail.follows(&log.head().await.expect("head")).is_ok());
    let lose = |conn: Conn, keys: LogKeys| async move {
        let mut cmd = redis::cmd("DEL");
        cmd.arg(&keys.log).arg(&keys.head);
        conn.query::<i64>(&cmd).await.expect("del");
    };
    let conn = connect(kind).await;
    lose(conn.clone(), keys.clone()).await;
    let three: Vec<Vec<u8>> = (0..3).map(|i| vec![b'b', i]).collect();
    log.append(None, now_us(), None, &three)
        .await
        .expect("three");
    assert_eq!(
        tail.follows(&log.head().await.expect("head")),
        Err(Divergence::Shorter { head: 3, taken: 5 })
    );
    let more: Vec<Vec<u8>> = (0..4).map(|i| vec![b'c', i]).collect();
    log.append(None, now_us(), None, &more).await.expect("more");
    assert!(tail.follows(&log.head().await.expect("head")).is_ok());
    let next = log.read(tail.n, 1).await.expect("read");
    assert_eq!(tail.take(&next[0]), Err(Divergence::Mismatch { n: 6 }));
}

async fn only_the_lease_holder_publishes_and_snapshots_read_back_whole(kind: Kind) {
    let (log, keys) = fresh_log(kind).await;
    let payloads: Vec<Vec<u8>> = (0..10).map(|i| vec![i]).collect();
    let a = log
        .append(None, now_us(), None, &payloads)
        .await
        .expect("append");
    let short = Duration::from_millis(300);
    let first = log.take_lease(short).await.expect("take").expect("free");
    assert_eq!(log.take_lease(short).await.expect("take"), None, "held");
    // The holder is paused past its lease; another takes it.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let second = log
        .take_lease(Duration::from_secs(30))
        .await
        .expect("take")
        .expect("expired");
    assert!(second.token > first.token, "fencing tokens grow");
    assert!(!log.renew_lease(first, short).await.expect("renew"));
    // 1.2 MB: three chunks.
    let bytes: Vec<u8> = (0..1_200_000u32).map(|i| (i % 251) as u8).collect();
    let stale = log
        .publish_snapshot(first, a.last, &a.check, 1, &bytes, 1)
        .await
        .expect("publish");
    assert_eq!(stale, Err(Refused::LeaseLost));
    assert_eq!(log.read_snapshot().await.expect("read"), None);
    let wrong = log
        .publish_snapshot(second, a.last, &Check("0".repeat(16)), 1, &bytes, 1)
        .await
        .expect("publish");
    assert_eq!(
        wrong,
        Err(Refused::EntryGone),
        "a check the log does not hold"
    );
    let meta = log
        .publish_snapshot(second, a.last, &a.check, 1, &bytes, 1)
        .await
        .expect("publish")
        .expect("published");
    assert_eq!((meta.n, meta.chunks, meta.version), (10, 3, 1));
    let (read, back) = log.read_snapshot().await.expect("read").expect("one");
    assert_eq!((read, back.len()), (meta.clone(), bytes.len()));
    assert!(back == bytes);
    assert!(log.renew_lease(second, short).await.expect("renew"));

    // A damaged chunk, then a missing one: refused, never read as the state.
    let conn = connect(kind).await;
    let chunk = |i: u64| format!("{}{i}", keys.chunk_prefix(second.token, 10));
    let size = photofinish_redis::log::snapshot::SNAPSHOT_CHUNK_BYTES;
    let mut damaged = bytes[size..2 * size].to_vec();
    damaged[100] ^= 1;
    conn.query::<()>(redis::cmd("SET").arg(chunk(1)).arg(damaged))
        .await
        .expect("set");
    let got = log.read_snapshot().await;
    assert!(
        matches!(&got, Err(LogError::Damaged(m)) if m.contains("checksum")),
        "{got:?}"
    );
    conn.query::<i64>(redis::cmd("DEL").arg(chunk(2)))
        .await
        .expect("del");
    let got = log.read_snapshot().await;
    assert!(
        matches!(&got, Err(LogError::Damaged(m)) if m.contains("lacks a chunk")),
        "{got:?}"
    );
    // A later snapshot replaces it and unlinks its chunks.
    let b = log
        .append(None, now_us(), None, &[vec![99]])
        .await
        .expect("append");
    log.publish_snapshot(second, b.last, &b.check, 1, b"small", 1)
        .await
        .expect("publish")
        .expect("published");
    let (meta, back) = log.read_snapshot().await.expect("read").expect("one");
    assert_eq!((meta.n, back), (11, b"small".to_vec()));
    let old: i64 = conn
        .query(redis::cmd("EXISTS").arg(chunk(0)))
        .await
        .expect("exists");
    assert_eq!(old, 0, "the replaced snapshot's chunks are gone");
    assert!(log.release_lease(second).await.expect("release"));
}

async fn publishing_trims_below_the_snapshot_keeping_the_last_entries(kind: Kind) {
    let (log, keys) = fresh_log(kind).await;
    let mut last = None;
    for round in 0..12u32 {
        let group: Vec<Vec<u8>> = (0..1000u32)
            // Big-endian: every payload's first byte (an entry's format) is the same.
            .map(|i| (round * 1000 + i).to_be_bytes().to_vec())
            .collect();
        last = Some(
            log.append(None, now_us(), None, &group)
                .await
                .expect("append"),
        );
    }
    let head = log.head().await.expect("head");
    assert_eq!(head.n, 12_000);
    // The snapshot is taken at entry 11,000 (its check, as a node that took it knows).
    let at = log.read(10_999, 1).await.expect("read").remove(0);
    let lease = log
        .take_lease(Duration::from_secs(30))
        .await
        .expect("take")
        .expect("free");
    // The publisher keeps from entry 2,001 on (for the entries a node may still replay):
    // the trim stops there, below the snapshot.
    log.publish_snapshot(lease, at.n, &at.check, 1, b"state", 2_001)
        .await
        .expect("publish")
        .expect("published");
    let conn = connect(kind).await;
    let len: u64 = conn
        .query(redis::cmd("XLEN").arg(&keys.log))
        .await
        .expect("xlen");
    assert_eq!(len, 10_000, "entries below the kept ones are gone");
    let first = log.read(0, 1).await.expect("read").remove(0);
    assert_eq!(first.n, 2_001);
    // A node that had taken nothing finds the gap and must load the snapshot.
    assert!(matches!(
        Tail::default().take(&first),
        Err(Divergence::Gap { after: 0, .. })
    ));
    // One that loads it follows the rest.
    let tail = Tail {
        n: at.n,
        check: at.check,
    };
    let rest = read_all(&log, tail).await.expect("chained");
    assert_eq!(rest.len(), 1000);
    assert_eq!(last.expect("appended").last, 12_000);
}

/// A group is appended once however often its call is sent (a retry after a timeout
/// answers where it stands), and a caller whose place the log does not hold as it took it
/// appends nothing.
async fn a_retried_append_lands_once_and_a_stale_caller_appends_nothing(kind: Kind) {
    let (log, keys) = fresh_log(kind).await;
    let three: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i]).collect();
    let first = log
        .append_group("g1", Some(&Tail::default()), now_us(), None, &[], &three)
        .await
        .expect("append");
    let again = log
        .append_group("g1", Some(&Tail::default()), now_us(), None, &[], &three)
        .await
        .expect("retry");
    assert_eq!(
        (again.first, again.last, &again.check),
        (1, 3, &first.check)
    );
    assert_eq!(log.head().await.expect("head").n, 3, "appended once");
    let refused = |tail: Tail| {
        let log = log.clone();
        async move {
            let got = log.append(Some(&tail), now_us(), None, &[vec![9]]).await;
            assert!(matches!(got, Err(LogError::Diverged)), "{tail:?}: {got:?}");
        }
    };
    // Past the head; the head with another check; an entry with another check.
    refused(Tail {
        n: 4,
        check: first.check.clone(),
    })
    .await;
    refused(Tail {
        n: 3,
        check: Check("0".repeat(16)),
    })
    .await;
    refused(Tail {
        n: 2,
        check: Check("0".repeat(16)),
    })
    .await;
    // From the start, once the start is trimmed.
    let conn = connect(kind).await;
    conn.query::<i64>(redis::cmd("XTRIM").arg(&keys.log).arg("MINID").arg("0-2"))
        .await
        .expect("trim");
    refused(Tail::default()).await;
    assert_eq!(log.head().await.expect("head").n, 3, "nothing appended");
    let at_head = Tail {
        n: 3,
        check: first.check.clone(),
    };
    let next = log
        .append(Some(&at_head), now_us(), None, &[vec![9]])
        .await
        .expect("append");
    assert_eq!((next.first, next.last), (4, 4));
}

/// Reads waiting for the head at once share its round trips: 200 of them cost far fewer
/// `HMGET`s, each answer is of a read sent after it asked (a head appended before the
/// call is seen), and later calls see later appends. On a Redis of its own, whose command
/// counts only this test moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_head_reads_share_round_trips_and_stay_fresh() {
    let dir = tempfile::tempdir().expect("tmp");
    let redis = tokio::task::spawn_blocking({
        let dir = dir.path().to_path_buf();
        move || photofinish_testkit::redis::RedisProcess::start(&dir, &[]).expect("redis")
    })
    .await
    .expect("start");
    let target = photofinish_redis::Target::parse(&redis.url()).expect("url");
    let conn = Conn::connect(&target).await.expect("connect");
    let log = BoardLog::new(conn.clone(), LogKeys::new("ns", "b"));
    log.append(None, now_us(), None, &[b"one".to_vec()])
        .await
        .expect("append");
    let hmgets = || async {
        let info: String = conn
            .query(redis::cmd("INFO").arg("commandstats"))
            .await
            .expect("info");
        info.lines()
            .find_map(|l| l.strip_prefix("cmdstat_hmget:calls="))
            .and_then(|v| v.split(',').next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let before = hmgets().await;
    let mut tasks = Vec::new();
    for _ in 0..200 {
        let log = log.clone();
        tasks.push(tokio::spawn(async move { log.fresh_head().await }));
    }
    for t in tasks {
        assert_eq!(t.await.expect("task").expect("head").n, 1);
    }
    let used = hmgets().await - before;
    assert!(used < 100, "200 concurrent reads sent {used} HMGETs");
    log.append(None, now_us(), None, &[b"two".to_vec()])
        .await
        .expect("append");
    assert_eq!(log.fresh_head().await.expect("head").n, 2);
}

photofinish_testkit::on_redis!(
    a_retried_append_lands_once_and_a_stale_caller_appends_nothing,
    concurrent_appends_form_one_chained_order,
    a_skewed_stamp_appends_nothing,
    far_behind_is_told_behind,
    a_node_notices_a_shorter_or_rewritten_log,
    only_the_lease_holder_publishes_and_snapshots_read_back_whole,
    publishing_trims_below_the_snapshot_keeping_the_last_entries,
);
