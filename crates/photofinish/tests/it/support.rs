//! Spawning the real `photofinish` binary.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_photofinish");

/// A running server process.
pub struct Proc {
    pub child: Child,
    pub base: String,
}

impl Proc {
    /// Starts `photofinish serve` on a free port and waits for its "listening" line.
    pub fn start(dir: &Path, fsync: &str) -> Proc {
        let mut cmd = Command::new(BIN);
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

    /// Starts `photofinish serve` with `PHOTOFINISH_STORAGE` set to `storage`.
    pub fn start_on_storage(storage: &str) -> Proc {
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .env("PHOTOFINISH_STORAGE", storage);
        Self::spawn(cmd)
    }

    fn spawn(mut cmd: Command) -> Proc {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn photofinish");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read listening line");
        let base = line
            .trim()
            .strip_prefix("photofinish listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Proc { child, base }
    }

    /// SIGKILL, then reap.
    pub fn kill9(mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("wait");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// splitmix64, seeded by the caller.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}
