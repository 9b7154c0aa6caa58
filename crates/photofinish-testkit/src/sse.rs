//! A small Server-Sent Events client for tests: opens an event stream over HTTP (with a
//! bearer token or `Last-Event-ID` if asked) and reads it one event at a time, with a
//! deadline, so a test can say both "this event arrives" and "nothing more arrives".

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

/// One event as it arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// `id:`, if sent.
    pub id: Option<u64>,
    /// `event:` (`message` when absent, as browsers do).
    pub event: String,
    /// `data:`, parsed as JSON.
    pub data: Value,
}

/// An open event stream.
pub struct EventStream {
    resp: reqwest::Response,
    buf: String,
    ended: bool,
}

/// What opening a stream answered when it was not a stream: the status and JSON body.
pub type Refused = (StatusCode, Value);

impl EventStream {
    /// `GET base + path` as an event stream.
    pub async fn open(
        base: &str,
        path: &str,
        token: Option<&str>,
        last_event_id: Option<u64>,
    ) -> Result<EventStream, Refused> {
        let mut req = reqwest::Client::new()
            .get(format!("{base}{path}"))
            .header("accept", "text/event-stream");
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id.to_string());
        }
        let resp = req.send().await.expect("request");
        let status = resp.status();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            return Err((
                status,
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
            ));
        }
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        assert!(ct.starts_with("text/event-stream"), "content-type {ct:?}");
        Ok(EventStream {
            resp,
            buf: String::new(),
            ended: false,
        })
    }

    /// The next event within `within`; `None` if none came (or the stream ended: see
    /// [`Self::ended`]). Keep-alive comments are skipped.
    pub async fn next_within(&mut self, within: Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(e) = self.take_event() {
                return Some(e);
            }
            if self.ended {
                return None;
            }
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Err(_) => return None,
                Ok(Ok(Some(bytes))) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                Ok(Ok(None) | Err(_)) => self.ended = true,
            }
        }
    }

    /// The next event, which must come within 10 s.
    pub async fn next(&mut self) -> SseEvent {
        self.next_within(Duration::from_secs(10))
            .await
            .expect("an event within 10 s")
    }

    /// Whether the server ended the stream.
    pub fn ended(&self) -> bool {
        self.ended
    }

    fn take_event(&mut self) -> Option<SseEvent> {
        loop {
            let end = self.buf.find("\n\n")?;
            let block: String = self.buf.drain(..end + 2).collect();
            let (mut id, mut event, mut data) = (None, None, Vec::new());
            for line in block.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => id = value.parse().ok(),
                    "event" => event = Some(value.to_owned()),
                    "data" => data.push(value.to_owned()),
                    _ => {} // a comment (keep-alive) or an unknown field
                }
            }
            if event.is_none() && data.is_empty() {
                continue;
            }
            let data = data.join("\n");
            return Some(SseEvent {
                id,
                event: event.unwrap_or_else(|| "message".into()),
                data: serde_json::from_str(&data).unwrap_or(Value::String(data)),
            });
        }
    }
}
