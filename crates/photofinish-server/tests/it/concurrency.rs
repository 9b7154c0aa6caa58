//! 32 concurrent clients × 1000 increments of one member end at exactly 32,000.

use serde_json::json;

use crate::support::*;

async fn concurrent_increments_of_one_member_are_never_lost(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    let mut clients = Vec::new();
    for _ in 0..32 {
        let http = reqwest::Client::new();
        let url = format!("{}/v1/boards/b/scores", s.base);
        clients.push(tokio::spawn(async move {
            for _ in 0..1000 {
                let resp = http
                    .post(&url)
                    .json(&json!({"member": "hot", "score": 1}))
                    .send()
                    .await
                    .expect("send");
                assert_eq!(resp.status(), 200);
            }
        }));
    }
    for c in clients {
        c.await.expect("client");
    }
    let (_, m) = s.get("/v1/boards/b/members/hot").await;
    assert_eq!(m["score"], 32_000);
    s.stop().await;
}

conformance!(concurrent_increments_of_one_member_are_never_lost,);
