//! The connection to Redis: one multiplexed connection that reconnects by itself
//! (standalone) or a cluster connection that follows slots and reconnects (cluster), with
//! timeouts so that a Redis that is down fails a request quickly instead of hanging it.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, FromRedisValue, Pipeline, RedisFuture, RedisResult, Value};

/// Where the data lives, parsed from `--storage`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `redis://host:port[/db]`.
    Standalone(String),
    /// `redis+cluster://host:port[,host:port…]`: the seed nodes.
    Cluster(Vec<String>),
}

impl Target {
    /// Parses a storage URL; `None` if it is not a Redis URL.
    pub fn parse(url: &str) -> Option<Self> {
        if let Some(rest) = url.strip_prefix("redis+cluster://") {
            let nodes: Vec<String> = rest
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(|n| format!("redis://{}", n.trim_end_matches('/')))
                .collect();
            return (!nodes.is_empty()).then_some(Self::Cluster(nodes));
        }
        if url.starts_with("redis://") || url.starts_with("valkey://") {
            return Some(Self::Standalone(url.replacen("valkey://", "redis://", 1)));
        }
        None
    }
}

/// How long one request may wait for Redis before it answers 503.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// A live connection of either kind. Cloning is cheap and shares it.
#[derive(Clone)]
pub enum Conn {
    /// Standalone Redis or Valkey.
    Standalone(ConnectionManager),
    /// Redis Cluster.
    Cluster(ClusterConnection),
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Conn::Standalone(_) => "Conn::Standalone",
            Conn::Cluster(_) => "Conn::Cluster",
        })
    }
}

impl Conn {
    /// Connects to `target`. Fails if Redis cannot be reached now.
    pub async fn connect(target: &Target) -> RedisResult<Self> {
        Self::connect_with(target, RESPONSE_TIMEOUT).await
    }

    /// [`Self::connect`] with requests that may wait up to `response_timeout` (a blocking
    /// read's connection of its own).
    pub async fn connect_with(target: &Target, response_timeout: Duration) -> RedisResult<Self> {
        match target {
            Target::Standalone(url) => {
                let client = redis::Client::open(url.as_str())?;
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(response_timeout))
                    .set_number_of_retries(1)
                    .set_min_delay(Duration::from_millis(20))
                    .set_max_delay(Duration::from_millis(200));
                Ok(Self::Standalone(
                    ConnectionManager::new_with_config(client, config).await?,
                ))
            }
            Target::Cluster(nodes) => {
                let client = redis::cluster::ClusterClientBuilder::new(nodes.clone())
                    .connection_timeout(CONNECT_TIMEOUT)
                    .response_timeout(response_timeout)
                    .retries(2)
                    .min_retry_wait(20)
                    .max_retry_wait(200)
                    .build()?;
                Ok(Self::Cluster(client.get_async_connection().await?))
            }
        }
    }

    /// Runs a pipeline whose replies are ignored (`.ignore()` on each command); any
    /// command's error fails it.
    pub async fn run(&self, pipe: &Pipeline) -> RedisResult<()> {
        pipe.query_async(&mut self.clone()).await
    }

    /// Runs a script (`EVALSHA`, loading it with `EVAL` when Redis lacks it), routed by its
    /// keys on a cluster.
    pub async fn invoke<T: FromRedisValue>(
        &self,
        script: &redis::ScriptInvocation<'_>,
    ) -> RedisResult<T> {
        script.invoke_async(&mut self.clone()).await
    }

    /// Runs one command.
    pub async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> RedisResult<T> {
        cmd.query_async(&mut self.clone()).await
    }

    /// `WAIT replicas timeout` on the primary that holds `key` (on a cluster, that one
    /// only), over the connection the writes to it went on: how many replicas confirmed
    /// every write sent before it. The connection is held meanwhile (Redis answers a
    /// client's commands in order).
    pub async fn wait_replicas(
        &self,
        key: &str,
        replicas: u32,
        timeout: Duration,
    ) -> RedisResult<u32> {
        let mut cmd = redis::cmd("WAIT");
        cmd.arg(replicas).arg(
            u64::try_from(timeout.as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
        );
        let acked: i64 = self.query_at_slot_of(key, cmd).await?;
        Ok(u32::try_from(acked).unwrap_or(0))
    }

    /// Runs `cmd` (a command without keys) on the primary that holds `key`'s slot: on a
    /// cluster, that node alone; the one Redis otherwise.
    async fn query_at_slot_of<T: FromRedisValue>(&self, key: &str, cmd: Cmd) -> RedisResult<T> {
        match self {
            Conn::Standalone(_) => self.query(&cmd).await,
            Conn::Cluster(c) => {
                use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
                let route = Route::with_key(key, SlotAddr::Master);
                let v = c
                    .clone()
                    .route_command(
                        cmd,
                        RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route)),
                    )
                    .await?;
                Ok(redis::from_redis_value(v)?)
            }
        }
    }

    /// Every key matching `pattern` on the node that holds `slot_key`'s slot (on a
    /// cluster; the one Redis otherwise), `SCAN`ned `count` at a time.
    pub async fn scan_slot(
        &self,
        slot_key: &str,
        pattern: &str,
        count: usize,
    ) -> RedisResult<Vec<String>> {
        let mut out = Vec::new();
        let mut cursor = 0_u64;
        loop {
            let mut cmd = redis::cmd("SCAN");
            cmd.arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(count);
            let (next, keys): (u64, Vec<String>) = self.query_at_slot_of(slot_key, cmd).await?;
            out.extend(keys);
            cursor = next;
            if cursor == 0 {
                return Ok(out);
            }
        }
    }

    /// The `maxmemory-policy` of every primary (one on a standalone Redis).
    pub async fn eviction_policies(&self) -> RedisResult<Vec<String>> {
        let mut cmd = redis::cmd("CONFIG");
        cmd.arg("GET").arg("maxmemory-policy");
        let reply: Value = match self {
            Conn::Standalone(_) => self.query(&cmd).await?,
            Conn::Cluster(c) => {
                use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo};
                c.clone()
                    .route_command(
                        cmd,
                        RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None)),
                    )
                    .await?
            }
        };
        let mut words = Vec::new();
        flatten(reply, &mut words);
        Ok(words
            .windows(2)
            .filter(|w| w[0].eq_ignore_ascii_case("maxmemory-policy"))
            .map(|w| w[1].clone())
            .collect())
    }
}

/// Refuses a Redis that may evict keys (docs/SPEC.md §12, "Snapshots"): an evicted log
/// entry, snapshot chunk or board key would lose acknowledged writes silently. Every
/// primary must have `maxmemory-policy noeviction` (Redis's default). A Redis that does not
/// answer `CONFIG GET` (a managed service that renames it) is served with a warning.
pub async fn refuse_eviction(conn: &Conn) -> Result<(), String> {
    match conn.eviction_policies().await {
        Ok(policies) => match policies
            .iter()
            .find(|p| !p.eq_ignore_ascii_case("noeviction"))
        {
            Some(p) => Err(format!(
                "redis has maxmemory-policy {p}, which evicts keys and would lose acknowledged \
                 writes; set it to noeviction (CONFIG SET maxmemory-policy noeviction)"
            )),
            None => Ok(()),
        },
        Err(e) => {
            tracing::warn!(error = %e, "could not read redis's maxmemory-policy (CONFIG GET); make sure it is noeviction");
            Ok(())
        }
    }
}

/// A Redis error: the storage is unavailable, and nothing changed.
pub(crate) fn unavailable(e: redis::RedisError) -> photofinish_core::BoardError {
    photofinish_core::BoardError::Unavailable(format!("redis: {e}"))
}

/// The memory Redis reports in use (`INFO memory`, `used_memory`), bytes; on a cluster,
/// summed over the nodes that answer.
pub(crate) async fn used_memory(conn: &Conn) -> Result<u64, photofinish_core::BoardError> {
    let info: Value = conn
        .query(redis::cmd("INFO").arg("memory"))
        .await
        .map_err(unavailable)?;
    let mut texts = Vec::new();
    flatten(info, &mut texts);
    let found: Vec<u64> = texts
        .iter()
        .flat_map(|t| t.lines())
        .filter_map(|l| l.strip_prefix("used_memory:"))
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    if found.is_empty() {
        return Err(photofinish_core::BoardError::Unavailable(
            "redis INFO has no used_memory".into(),
        ));
    }
    Ok(found.iter().sum())
}

/// Every string in a reply, depth first (a cluster's per-node answers included).
fn flatten(v: Value, out: &mut Vec<String>) {
    match v {
        Value::BulkString(b) => out.push(String::from_utf8_lossy(&b).into_owned()),
        Value::SimpleString(s) | Value::VerbatimString { text: s, .. } => out.push(s),
        Value::Array(items) | Value::Set(items) => {
            for i in items {
                flatten(i, out);
            }
        }
        Value::Map(pairs) => {
            for (k, v) in pairs {
                flatten(k, out);
                flatten(v, out);
            }
        }
        _ => {}
    }
}

/// Every command goes to whichever connection this is.
impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Standalone(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipe: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Standalone(c) => c.req_packed_commands(pipe, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipe, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Standalone(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_urls() {
        assert_eq!(
            Target::parse("redis://127.0.0.1:6379"),
            Some(Target::Standalone("redis://127.0.0.1:6379".into()))
        );
        assert_eq!(
            Target::parse("redis+cluster://a:1, b:2,"),
            Some(Target::Cluster(vec![
                "redis://a:1".into(),
                "redis://b:2".into()
            ]))
        );
        assert_eq!(Target::parse("redis+cluster://"), None);
        assert_eq!(Target::parse("./data"), None);
    }
}
