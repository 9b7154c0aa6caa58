//! A typed HTTP client for a running server: one method per API call the CLI makes, each
//! sending and reading the server's own wire types (`photofinish_server::wire::types`),
//! so a field the API renames breaks this at compile time; it builds percent-encoded
//! paths and turns failures into one plain sentence (never Rust debug output).

use anyhow::{anyhow, Result};
use photofinish_server::wire::types::{
    BoardConfigBody, BoardList, BoardView, EntriesPage, ImportAnswer, MemberView,
    PartitionListView, TeamDetailView, TeamListView, WriteBody, WriteResult,
};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Talks to one server.
pub struct Client {
    base: String,
    http: reqwest::Client,
    token: Option<String>,
}

/// Percent-encodes one path segment (everything but unreserved characters).
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Client {
    /// A client for the server at `base` (e.g. `http://127.0.0.1:7770`), sending `token`
    /// as `Authorization: Bearer` when given.
    pub fn new(base: &str, token: Option<&str>) -> Result<Self> {
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| anyhow!("cannot build an HTTP client: {e}"))?;
        Ok(Self {
            base: base.trim_end_matches('/').to_owned(),
            http,
            token: token.map(str::to_owned),
        })
    }

    /// `PUT /v1/boards/{name}`: creates a board, or confirms one with the same config.
    pub async fn create_board(&self, name: &str, config: &BoardConfigBody) -> Result<BoardView> {
        self.call(Method::PUT, &["v1", "boards", name], &[], Some(config))
            .await
    }

    /// `GET /v1/boards`: a page of the boards the caller may read.
    pub async fn boards(&self, offset: u64, limit: Option<u64>) -> Result<BoardList> {
        let mut q = vec![("offset".to_owned(), offset.to_string())];
        if let Some(l) = limit {
            q.push(("limit".to_owned(), l.to_string()));
        }
        self.call(Method::GET, &["v1", "boards"], &q, None::<&()>)
            .await
    }

    /// `GET /v1/boards/{name}`.
    pub async fn board(&self, name: &str) -> Result<BoardView> {
        self.call(Method::GET, &["v1", "boards", name], &[], None::<&()>)
            .await
    }

    /// `DELETE /v1/boards/{name}`.
    pub async fn delete_board(&self, name: &str) -> Result<()> {
        self.send(Method::DELETE, &["v1", "boards", name], &[], None::<&()>)
            .await
            .map(drop)
    }

    /// `POST /v1/boards/{board}/scores`.
    pub async fn submit(&self, board: &str, write: &WriteBody) -> Result<WriteResult> {
        let path = ["v1", "boards", board, "scores"];
        self.call(Method::POST, &path, &[], Some(write)).await
    }

    /// `GET /v1/boards/{board}/entries` with `query` (`offset`, `limit`, `ranking`,
    /// `period`).
    pub async fn entries(&self, board: &str, query: &[(String, String)]) -> Result<EntriesPage> {
        let path = ["v1", "boards", board, "entries"];
        self.call(Method::GET, &path, query, None::<&()>).await
    }

    /// `GET /v1/boards/{board}/members/{member}` with `query` (`ranking`, `period`).
    pub async fn member(
        &self,
        board: &str,
        member: &str,
        query: &[(String, String)],
    ) -> Result<MemberView> {
        let path = ["v1", "boards", board, "members", member];
        self.call(Method::GET, &path, query, None::<&()>).await
    }

    /// `GET /v1/boards/{board}/members/{member}/around` with `query` (`before`, `after`,
    /// `ranking`, `period`).
    pub async fn around(
        &self,
        board: &str,
        member: &str,
        query: &[(String, String)],
    ) -> Result<EntriesPage> {
        let path = ["v1", "boards", board, "members", member, "around"];
        self.call(Method::GET, &path, query, None::<&()>).await
    }

    /// `GET /v1/boards/{board}/partitions` with `query` (`offset`, `limit`, `period`).
    pub async fn partitions(
        &self,
        board: &str,
        query: &[(String, String)],
    ) -> Result<PartitionListView> {
        let path = ["v1", "boards", board, "partitions"];
        self.call(Method::GET, &path, query, None::<&()>).await
    }

    /// `GET /v1/boards/{board}/teams` with `query` (`offset`, `limit`, `ranking`,
    /// `period`).
    pub async fn teams(&self, board: &str, query: &[(String, String)]) -> Result<TeamListView> {
        let path = ["v1", "boards", board, "teams"];
        self.call(Method::GET, &path, query, None::<&()>).await
    }

    /// `GET /v1/boards/{board}/teams/{team}` with `query`.
    pub async fn team(
        &self,
        board: &str,
        team: &str,
        query: &[(String, String)],
    ) -> Result<TeamDetailView> {
        let path = ["v1", "boards", board, "teams", team];
        self.call(Method::GET, &path, query, None::<&()>).await
    }

    /// `POST /v1/boards/{board}/import` with `body` streamed as it is produced (JSON
    /// Lines).
    pub async fn import(
        &self,
        board: &str,
        query: &[(String, String)],
        body: reqwest::Body,
    ) -> Result<ImportAnswer> {
        let v = self
            .upload(
                &["v1", "boards", board, "import"],
                query,
                "application/x-ndjson",
                body,
            )
            .await?;
        Self::typed(v)
    }

    /// A request whose answer is a `T`.
    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(String, String)],
        body: Option<&impl Serialize>,
    ) -> Result<T> {
        Self::typed(self.send(method, segments, query, body).await?)
    }

    /// The answer as a `T`; a shape it does not have is a plain sentence.
    fn typed<T: DeserializeOwned>(v: Value) -> Result<T> {
        serde_json::from_value(v).map_err(|e| {
            anyhow!(
                "the server's answer is not what this client reads ({e}): is it another version?"
            )
        })
    }

    /// Sends a request; returns the JSON answer (`null` for 204), or an error sentence.
    async fn send(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(String, String)],
        body: Option<&impl Serialize>,
    ) -> Result<Value> {
        let mut req = self.request(method, segments).query(query);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.map_err(|e| {
            if e.is_connect() {
                anyhow!(
                    "cannot reach the server at {}: is it running? (photofinish serve)",
                    self.base
                )
            } else {
                anyhow!("request to {} failed: {}", self.base, e.without_url())
            }
        })?;
        let status = resp.status();
        let value = Self::answer(resp).await?;
        if status.is_success() {
            return Ok(value);
        }
        Err(Self::refusal(status, &value))
    }

    /// A request to the path of `segments` (each percent-encoded), with the credential.
    fn request(&self, method: Method, segments: &[&str]) -> reqwest::RequestBuilder {
        let path: Vec<String> = segments.iter().map(|s| encode_segment(s)).collect();
        let req = self
            .http
            .request(method, format!("{}/{}", self.base, path.join("/")));
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// The answer's body as JSON (`null` when empty, a string when not JSON).
    async fn answer(resp: reqwest::Response) -> Result<Value> {
        let text = resp
            .text()
            .await
            .map_err(|e| anyhow!("cannot read the answer: {}", e.without_url()))?;
        Ok(if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        })
    }

    /// An error answer as one sentence.
    fn refusal(status: reqwest::StatusCode, value: &Value) -> anyhow::Error {
        match (
            value["error"]["message"].as_str(),
            value["error"]["code"].as_str(),
        ) {
            (Some(msg), Some(code)) => anyhow!("{msg} ({code}, HTTP {})", status.as_u16()),
            _ => anyhow!("the server answered HTTP {}", status.as_u16()),
        }
    }

    /// POSTs `body` (streamed as it is produced) to `segments` with `content_type`; returns
    /// the JSON answer, or an error sentence.
    async fn upload(
        &self,
        segments: &[&str],
        query: &[(String, String)],
        content_type: &str,
        body: reqwest::Body,
    ) -> Result<Value> {
        let resp = self
            .request(Method::POST, segments)
            .query(query)
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(body)
            .send()
            .await
            .map_err(|e| anyhow!("the upload to {} failed: {}", self.base, e.without_url()))?;
        let status = resp.status();
        let value = Self::answer(resp).await?;
        if status.is_success() {
            return Ok(value);
        }
        Err(Self::refusal(status, &value))
    }

    /// GETs `segments` with `query` and streams the body into `out`, calling `progress`
    /// with each chunk; returns the bytes written.
    pub async fn download_with(
        &self,
        segments: &[&str],
        query: &[(String, String)],
        out: &mut dyn std::io::Write,
        progress: &mut dyn FnMut(&[u8]),
    ) -> Result<u64> {
        let req = self.request(Method::GET, segments).query(query);
        let mut resp = req.send().await.map_err(|e| {
            anyhow!(
                "cannot reach the server at {}: {}",
                self.base,
                e.without_url()
            )
        })?;
        let status = resp.status();
        if !status.is_success() {
            let value = Self::answer(resp).await?;
            return Err(Self::refusal(status, &value));
        }
        let mut written = 0u64;
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| anyhow!("the download broke off: {}", e.without_url()))?
        {
            out.write_all(&chunk)
                .map_err(|e| anyhow!("cannot write the file: {e}"))?;
            progress(&chunk);
            written += chunk.len() as u64;
        }
        Ok(written)
    }
}
