//! The erasure ledger on Redis (docs/SPEC.md §16, docs/privacy.md): it is kept in the
//! namespace's lifecycle log, so every node knows each erase, and a node started with
//! `--erasure-ledger` writes into its file what Redis holds and the file lacks; a copy of
//! the namespace from before an erase, put back (an older RDB), loses the member again
//! when a node starts with the ledger, and every node of it then agrees.

use serde_json::{json, Value};

use crate::privacy::{erase_named, namespace_keys, NAME};
use crate::support::*;

/// Every key of namespace `ns`, as `DUMP` serializes it.
async fn dump(conn: &photofinish_redis::conn::Conn, ns: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for key in namespace_keys(conn, ns).await {
        let bytes: Vec<u8> = conn
            .query(redis::cmd("DUMP").arg(&key))
            .await
            .expect("dump");
        out.push((key, bytes));
    }
    out
}

/// Namespace `ns` made exactly `old` again: what an older RDB file, loaded, does.
async fn put_back(conn: &photofinish_redis::conn::Conn, ns: &str, old: &[(String, Vec<u8>)]) {
    for (key, _) in dump(conn, ns).await {
        let _: i64 = conn.query(redis::cmd("DEL").arg(key)).await.expect("del");
    }
    for (key, bytes) in old {
        let _: String = conn
            .query(redis::cmd("RESTORE").arg(key).arg(0).arg(bytes.as_slice()))
            .await
            .expect("restore");
    }
}

fn lines(file: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .expect("ledger file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

async fn an_older_copy_of_redis_loses_the_erased_member_again(kind: Kind) {
    let work = tempfile::tempdir().expect("tmp");
    let (file, key) = (work.path().join("ledger"), work.path().join("key"));
    let (f, k) = (file.clone(), key.clone());
    let s = Server::start_configured(kind, move |o| photofinish_server::serve::ServeOptions {
        erasure_ledger: Some(f),
        erasure_key_file: Some(k),
        ..o
    })
    .await;
    let conn = photofinish_testkit::server::redis_conn(kind).await;
    let ns = s.namespace().expect("a namespace").to_owned();
    for board in ["a", "b"] {
        assert_eq!(
            s.put(&format!("/v1/boards/{board}"), json!({})).await.0,
            201
        );
        for (m, score) in [(NAME, 5), ("keeps", 3)] {
            let body = json!({"member": m, "score": score});
            let (st, _) = s.post(&format!("/v1/boards/{board}/scores"), body).await;
            assert_eq!(st, 200);
        }
    }
    let old = dump(&conn, &ns).await;
    erase_named(&s, 2).await;
    let written = lines(&file);
    assert_eq!(written.len(), 1, "{written:?}");
    let hmac = written[0]["hmac"].clone();

    // Another node, with a file of its own: Redis holds the erase, so the file gets it.
    let other_file = work.path().join("other-ledger");
    let o = other_file.clone();
    let other = s
        .sibling_with(move |opts| photofinish_server::serve::ServeOptions {
            erasure_ledger: Some(o),
            ..opts
        })
        .await;
    let filed = lines(&other_file);
    assert_eq!(
        (filed.len(), &filed[0]["hmac"], &filed[0]["key"]),
        (1, &hmac, &written[0]["key"])
    );
    other.stop().await;

    // The namespace as it was before the erase, then a node started with the ledger.
    put_back(&conn, &ns, &old).await;
    let s = s.restart().await;
    for board in ["a", "b"] {
        let url = format!("/v1/boards/{board}/members/{NAME}");
        assert_eq!(s.get(&url).await.0, 404, "{board}");
        let (st, m) = s.get(&format!("/v1/boards/{board}/members/keeps")).await;
        assert_eq!((st.as_u16(), &m["score"]), (200, &json!(3)), "{m}");
    }
    let (st, audit) = s.get("/v1/audit").await;
    assert_eq!(st, 200);
    let again: Vec<&Value> = audit["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["action"] == "member_erase" && e["actor"] == "erasure-ledger")
        .collect();
    assert_eq!(again.len(), 2, "{audit}");
    assert!(again.iter().all(|e| e["detail"]["member_hmac"] == hmac));
    // Every node reads it so: one started now, without the file, finds the member gone.
    let third = s
        .sibling_with(|opts| photofinish_server::serve::ServeOptions {
            erasure_ledger: None,
            ..opts
        })
        .await;
    assert_eq!(
        third.get(&format!("/v1/boards/a/members/{NAME}")).await.0,
        404
    );
    assert_eq!(lines(&file).len(), 1, "nothing new to file");
    third.stop().await;
    s.stop().await;
}

photofinish_testkit::on_kinds!([redis => Redis] an_older_copy_of_redis_loses_the_erased_member_again);
