//! 32 concurrent clients × 1000 increments of one member end at exactly 32,000.

use serde_json::json;

use crate::support::*;

async fn concurrent_increments_of_one_member_are_never_lost(kind: Kind) {
    let s = Server::start(kind).await;
    s.put("/v1/boards/b", json!({})).await;
    increment_concurrently(&[&s.base], "b", "hot", 32, 1000).await;
    let (_, m) = s.get("/v1/boards/b/members/hot").await;
    assert_eq!(m["score"], 32_000);
    s.stop().await;
}

conformance!(concurrent_increments_of_one_member_are_never_lost,);
