//! A one-line progress bar on stderr while a target loads its members.

use std::io::Write;
use std::time::{Duration, Instant};

/// Redraws at most this often.
const REDRAW: Duration = Duration::from_millis(200);
/// Width of the bar in characters.
const WIDTH: u64 = 30;

/// One bar, drawn on stderr.
pub struct Progress {
    label: String,
    total: u64,
    started: Instant,
    drawn: Option<Instant>,
}

impl Progress {
    /// A bar for loading `total` members into `label`.
    pub fn new(label: &str, total: u64) -> Self {
        Self {
            label: label.to_owned(),
            total: total.max(1),
            started: Instant::now(),
            drawn: None,
        }
    }

    /// `done` members are loaded.
    pub fn set(&mut self, done: u64) {
        let now = Instant::now();
        if self.drawn.is_some_and(|t| now - t < REDRAW) && done < self.total {
            return;
        }
        self.drawn = Some(now);
        let filled = (done.min(self.total) * WIDTH / self.total) as usize;
        let rate = done as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r  loading {:<18} [{}{}] {:>10}/{} {:>9.0}/s",
            self.label,
            "#".repeat(filled),
            ".".repeat(WIDTH as usize - filled),
            done,
            self.total,
            rate
        );
        let _ = err.flush();
    }

    /// Finishes the line.
    pub fn done(&mut self) {
        self.set(self.total);
        eprintln!(" {:.1}s", self.started.elapsed().as_secs_f64());
    }
}
