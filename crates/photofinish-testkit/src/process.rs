//! The real `photofinish` binary as a child process, for tests that must kill it (`kill -9`)
//! or drive it through its command line. The caller names the binary: Cargo tells a
//! binary crate's own tests where it is (`env!("CARGO_BIN_EXE_photofinish")`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running server process.
pub struct Proc {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The RESP door's `127.0.0.1:<port>`, when it is on.
    pub resp: Option<String>,
}

impl Proc {
    /// Starts `photofinish serve` on a free port and waits for its "listening" line.
    pub fn start(bin: &str, dir: &Path, fsync: &str) -> Proc {
        let mut cmd = Command::new(bin);
        cmd.args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--fsync",
            fsync,
            "--data-dir",
        ])
        .arg(dir);
        Self::spawn(cmd)
    }

    /// [`Self::start`], its log (`RUST_LOG=debug`, everything the server says) written to
    /// `log`.
    pub fn start_logging(bin: &str, dir: &Path, fsync: &str, log: &Path) -> Proc {
        Self::start_with_log(bin, dir, &["--fsync", fsync], log)
    }

    /// [`Self::start_with`], its log (`RUST_LOG=debug`) written to `log`.
    pub fn start_with_log(bin: &str, dir: &Path, args: &[&str], log: &Path) -> Proc {
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir)
            .args(args)
            .env("RUST_LOG", "debug");
        Self::spawn_to(
            cmd,
            Stdio::from(std::fs::File::create(log).expect("log file")),
        )
    }

    /// Starts `photofinish serve` with `PHOTOFINISH_STORAGE` set to `storage`.
    pub fn start_on_storage(bin: &str, storage: &str) -> Proc {
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .env("PHOTOFINISH_STORAGE", storage);
        Self::spawn(cmd)
    }

    /// Starts `photofinish serve` on a free loopback port with the data in `dir` and the
    /// extra `args` (credentials, TLS).
    pub fn start_with(bin: &str, dir: &Path, args: &[&str]) -> Proc {
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir)
            .args(args);
        Self::spawn(cmd)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs `cmd` (a `photofinish serve …`) and waits for its "listening" line.
    pub fn spawn_command(cmd: Command) -> Proc {
        Self::spawn(cmd)
    }

    /// [`Self::spawn_command`], its log (stderr, at the level the command sets) written
    /// to `log`.
    pub fn spawn_command_logging(cmd: Command, log: &Path) -> Proc {
        Self::spawn_to(
            cmd,
            Stdio::from(std::fs::File::create(log).expect("log file")),
        )
    }

    /// Spawns `cmd` and reads its stdout up to the "listening" line (after the RESP line,
    /// when there is one). The RESP door takes a free port unless the command names one:
    /// tests run side by side, and the default 7771 would be taken by the first; and a
    /// stop has no delay unless the command names one.
    fn spawn(cmd: Command) -> Proc {
        Self::spawn_to(cmd, Stdio::null())
    }

    /// [`Self::spawn`], its stderr (the log) sent to `log`.
    fn spawn_to(mut cmd: Command, log: Stdio) -> Proc {
        let names_resp = cmd.get_args().any(|a| a == "--resp-listen")
            || cmd.get_envs().any(|(k, _)| k == "PHOTOFINISH_RESP_LISTEN");
        if !names_resp {
            cmd.env("PHOTOFINISH_RESP_LISTEN", "127.0.0.1:0");
        }
        // No load balancer waits for these servers to leave: a stop need not serve on
        // for the default 2 s (the stop's own tests name the flag).
        let names_delay = cmd.get_args().any(|a| a == "--shutdown-delay")
            || cmd
                .get_envs()
                .any(|(k, _)| k == "PHOTOFINISH_SHUTDOWN_DELAY");
        if !names_delay {
            cmd.env("PHOTOFINISH_SHUTDOWN_DELAY", "0s");
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("spawn photofinish");
        let stdout = child.stdout.take().expect("stdout");
        let mut stdout = BufReader::new(stdout);
        let mut resp = None;
        loop {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("read listening line");
            if let Some(addr) = line.trim().strip_prefix("photofinish RESP on ") {
                resp = Some(addr.to_owned());
                continue;
            }
            let base = line
                .trim()
                .strip_prefix("photofinish listening on ")
                .unwrap_or_else(|| panic!("unexpected line {line:?}"))
                .to_owned();
            return Proc { child, base, resp };
        }
    }

    /// SIGKILL, then reap.
    pub fn kill9(mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("wait");
    }
}

impl Proc {
    /// Stops the server the way an operator does (SIGTERM) and waits for it to exit; how it
    /// exited.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success(), "kill -TERM {}", self.child.id());
        self.child.wait().expect("wait")
    }
}

impl Proc {
    /// Waits for the server to exit by itself (a signal sent already); how it exited.
    pub fn wait(mut self) -> std::process::ExitStatus {
        self.child.wait().expect("wait")
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
