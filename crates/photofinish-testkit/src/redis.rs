//! Throwaway `redis-server` processes on free loopback ports, for the conformance tests and
//! the benchmark harness: a standalone server (optionally with AOF) or a Redis Cluster of
//! several masters. Each process is stopped when its handle drops, and a watchdog stops it
//! when the process that started it exits, so a crashed test leaves nothing behind.
//!
//! The binary is `redis-server` on `PATH`, or `PHOTOFINISH_REDIS_SERVER`.

use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to answer PING, or a cluster to report `cluster_state:ok`.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The `redis-server` binary to run.
pub fn server_binary() -> PathBuf {
    std::env::var_os("PHOTOFINISH_REDIS_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("redis-server"))
}

/// A free loopback port (free when asked; the server binds it right after).
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// How many ports [`RedisProcess::start`] tries before it gives up.
pub const START_ATTEMPTS: u32 = 5;

/// A free loopback port below 55536 whose cluster bus port (+ 10000) is free too.
fn free_cluster_port() -> io::Result<u16> {
    for _ in 0..100 {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let Some(bus) = port.checked_add(10_000) else {
            continue;
        };
        if TcpListener::bind(("127.0.0.1", bus)).is_ok() {
            return Ok(port);
        }
    }
    Err(io::Error::other(
        "no free port with a free cluster bus port",
    ))
}

/// One `redis-server` process.
#[derive(Debug)]
pub struct RedisProcess {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
    args: Vec<String>,
}

impl RedisProcess {
    /// [`Self::start`] with every write in its append-only file before it answers
    /// (`appendfsync always`): what a test that kills and restarts Redis needs.
    pub fn start_durable(dir: &Path) -> io::Result<Self> {
        Self::start(dir, &["--appendonly", "yes", "--appendfsync", "always"])
    }

    /// Starts a server with its files in `dir` and extra config `args`
    /// (e.g. `["--appendonly", "yes"]`), and waits until it answers.
    ///
    /// The port is free when chosen, but another process may take it (or, for a cluster
    /// node, its bus port, the port + 10000, which can fall in the ephemeral range) before
    /// the server binds it: a server that exits while starting is started again on a
    /// fresh port, up to [`START_ATTEMPTS`] times.
    pub fn start(dir: &Path, args: &[&str]) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let cluster = args.contains(&"--cluster-enabled");
        let mut attempt = 1;
        loop {
            let mut p = Self {
                child: None,
                port: if cluster {
                    free_cluster_port()?
                } else {
                    free_port()?
                },
                dir: dir.to_path_buf(),
                args: args.iter().map(|s| (*s).to_owned()).collect(),
            };
            match p.spawn() {
                Ok(()) => return Ok(p),
                Err(e) if p.child.is_none() && attempt < START_ATTEMPTS => {
                    tracing::debug!(error = %e, attempt, "redis-server exited while starting; another port");
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn spawn(&mut self) -> io::Result<()> {
        let child = Command::new(server_binary())
            .arg("--port")
            .arg(self.port.to_string())
            .args([
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--protected-mode",
                "no",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot run {} ({e}); install Debian's redis-server package",
                        server_binary().display()
                    ),
                )
            })?;
        watchdog(child.id());
        self.child = Some(child);
        self.wait_ready()
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same port and directory (after [`Self::kill`]).
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match self.spawn() {
                Ok(()) => return Ok(()),
                // The old socket may linger for a moment.
                Err(e) if Instant::now() < deadline => {
                    tracing::debug!(error = %e, "redis restart retry");
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// A plain (synchronous) client connection.
    pub fn client(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(self.url())?.get_connection()
    }

    fn wait_ready(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(mut c) = self.client() {
                if redis::cmd("PING").query::<String>(&mut c).is_ok() {
                    return Ok(());
                }
            }
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    self.child = None;
                    return Err(io::Error::other(format!(
                        "redis-server on port {} exited: {status}",
                        self.port
                    )));
                }
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(io::Error::other("redis-server did not answer PING in time"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kills `pid` once this process has exited (polled by a detached shell).
fn watchdog(pid: u32) {
    let me = std::process::id();
    let script = format!(
        "while kill -0 {me} 2>/dev/null && kill -0 {pid} 2>/dev/null; do sleep 0.5; done; kill -9 {pid} 2>/dev/null"
    );
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

/// A Redis Cluster of masters without replicas, slots split evenly.
#[derive(Debug)]
pub struct RedisCluster {
    /// The masters.
    pub nodes: Vec<RedisProcess>,
}

/// Waits until every node of a cluster of `nodes` says `cluster_state:ok` and knows them
/// all, up to [`START_TIMEOUT`].
fn wait_until_ready(nodes: &[RedisProcess]) -> io::Result<()> {
    let err = |e: redis::RedisError| io::Error::other(format!("cluster setup: {e}"));
    let masters = nodes.len();
    let deadline = Instant::now() + START_TIMEOUT;
    for n in nodes {
        let mut c = n.client().map_err(err)?;
        loop {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query(&mut c)
                .map_err(err)?;
            let known = format!("cluster_known_nodes:{masters}");
            if info.contains("cluster_state:ok") && info.contains(&known) {
                break;
            }
            if Instant::now() > deadline {
                return Err(io::Error::other(format!(
                    "cluster did not become ready: {info}"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(())
}

impl RedisCluster {
    /// Starts `masters` servers in cluster mode under `dir`, assigns the 16384 slots, joins
    /// them, and waits for `cluster_state:ok` on every node.
    pub fn start(dir: &Path, masters: usize) -> io::Result<Self> {
        let mut nodes = Vec::with_capacity(masters);
        let mut buses = Vec::with_capacity(masters);
        for i in 0..masters {
            let bus = free_port()?.to_string();
            buses.push(bus.clone());
            let node_dir = dir.join(format!("node{i}"));
            let conf = node_dir.join("nodes.conf");
            let conf = conf.to_string_lossy().into_owned();
            nodes.push(RedisProcess::start(
                &node_dir,
                &[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    &conf,
                    "--cluster-port",
                    &bus,
                    "--cluster-node-timeout",
                    "5000",
                    "--appendonly",
                    "no",
                ],
            )?);
        }
        let err = |e: redis::RedisError| io::Error::other(format!("cluster setup: {e}"));
        let per = 16384 / masters;
        for (i, n) in nodes.iter().enumerate() {
            let first = i * per;
            let last = if i + 1 == masters {
                16383
            } else {
                first + per - 1
            };
            let mut c = n.client().map_err(err)?;
            redis::cmd("CLUSTER")
                .arg("ADDSLOTSRANGE")
                .arg(first)
                .arg(last)
                .query::<()>(&mut c)
                .map_err(err)?;
        }
        let mut first = nodes[0].client().map_err(err)?;
        for (n, bus) in nodes.iter().zip(&buses).skip(1) {
            redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(n.port)
                .arg(bus)
                .query::<()>(&mut first)
                .map_err(err)?;
        }
        wait_until_ready(&nodes)?;
        Ok(Self { nodes })
    }

    /// `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,…`.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }
}
