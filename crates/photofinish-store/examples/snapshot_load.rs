//! Times writing and loading a snapshot of one board with N members (default 1,000,000;
//! 16-byte ids, scores spread over 0..1,000,000), in format 12 (fixed-width entries) and
//! format 13 (varints) taken in turn: the size, the encoding, the file read, then decoding
//! and building the ranking.
//!
//! Run: `cargo run --release -p photofinish-store --example snapshot_load -- 10000000`

use std::time::Instant;

use photofinish_core::ranking::SavedEntry;
use photofinish_core::{Board, BoardConfig, Ranking};
use photofinish_store::State;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(Ok(1_000_000), |a| a.parse())?;
    let dir = std::env::temp_dir().join(format!("pf-snapshot-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    use photofinish_store::snapshot::Format;
    let formats = [(Format::V12, "12"), (Format::V13, "13")];
    let paths: Vec<_> = formats
        .iter()
        .map(|(_, v)| dir.join(format!("bench-v{v}.snap")))
        .collect();
    {
        let names: Vec<String> = (0..n).map(|i| format!("player{i:010}")).collect();
        let mut order: Vec<(i64, u64)> = (0..n)
            .map(|i| (((i * 2_654_435_761) % 1_000_000) as i64, i + 1))
            .collect();
        order.sort_by_key(|&(score, seq)| (std::cmp::Reverse(score), seq));
        let entries = order.iter().map(|&(score, seq)| {
            Ok(SavedEntry {
                member: &names[(seq - 1) as usize],
                scores: photofinish_core::Scores::one(score),
                reached_at_us: seq as i64,
                seq,
                metadata: None,
            })
        });
        let ranking = Ranking::from_sorted(BoardConfig::default().shape(), n as usize, entries)?;
        let mut board = Board::checked(BoardConfig::default())?;
        let all = board.calendar().parse("all")?;
        board.insert_ranking(all, ranking);
        let state = State::default();
        state.insert_board("bench".into(), board);
        for ((format, v), path) in formats.iter().zip(&paths) {
            let start = Instant::now();
            let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
            let bytes = photofinish_store::snapshot::write_as(*format, &state, 1, 0, &mut out)?;
            drop(out);
            println!(
                "format {v}: {bytes} bytes ({:.1} a member), written in {:.2} s",
                bytes as f64 / n as f64,
                start.elapsed().as_secs_f64()
            );
        }
    }
    for run in 1..=3 {
        for ((_, v), path) in formats.iter().zip(&paths) {
            let start = Instant::now();
            let bytes = std::fs::read(path)?;
            let read = start.elapsed();
            let start = Instant::now();
            let loaded = photofinish_store::snapshot::read(&bytes)?;
            let build = start.elapsed();
            let members: u64 = loaded
                .state
                .boards()
                .iter()
                .map(|(_, b)| photofinish_store::state::read_lock(b).total_members())
                .sum();
            println!("run {run}, format {v}: {n} members, {} MB: read {:.2} s, decode and build {:.2} s ({members} loaded)", bytes.len() >> 20, read.as_secs_f64(), build.as_secs_f64());
        }
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
