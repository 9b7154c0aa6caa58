//! Import files: a ranking an import built, written beside the log before the one log
//! record that puts it in place ([`crate::command::Command::Import`]).
//!
//! A log frame holds at most 64 KiB, and an import may hold ten million entries, so the
//! entries do not go through the log: the import builds the ranking in memory (in bulk,
//! [`photofinish_core::ranking::RankingBuilder`]), writes it to `import-<µs>-<n>.rank`
//! (fsynced, renamed into place), and only then logs a small record naming the file. The
//! record is the commit point: a crash before it leaves an orphan file, removed at the
//! next start; after it, recovery reads the file where the record stands. Once a snapshot
//! covers the record, the file is removed with the segments the snapshot replaced.
//! Layout: docs/format.md, "Import files".

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use photofinish_core::{Order, Ranking, Shape};

use crate::codec::{Dec, DecodeError, Enc};
use crate::io::Storage;
use crate::snapshot::groups::{
    read_ranking_partitions, read_ranking_teams, write_ranking_partitions, write_ranking_teams,
};
use crate::snapshot::{read_ranking, write_ranking, Entries};

/// First 8 bytes of an import file of a ranking without partitions or teams.
const MAGIC: &[u8; 8] = b"PFRANK01";
/// First 8 bytes of an import file of a ranking with partitions or teams (docs/SPEC.md
/// §17): the first layout, then their sections.
const MAGIC_GROUPED: &[u8; 8] = b"PFRANK02";
/// The order byte of a ranking of several columns: a count and each one's order follow.
const COLUMNS: u8 = 2;

/// Names this process gave, so two imports in one microsecond still differ.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A fresh import file name for an import started at `now_us`.
pub fn file_name(now_us: i64) -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("import-{now_us}-{n}.rank")
}

/// Whether `name` is an import file (or the temporary file of one being written).
pub fn is_import_file(name: &str) -> bool {
    name.starts_with("import-") && (name.ends_with(".rank") || name.ends_with(".tmp"))
}

/// Writes `ranking` to `path` atomically (fsynced and renamed into place).
pub fn write(storage: &dyn Storage, path: &Path, ranking: &Ranking) -> io::Result<()> {
    let bytes = encode(ranking)?;
    storage.write_atomic(path, &mut |w| w.write_all(&bytes))
}

/// An import file's bytes for `ranking` (docs/format.md, "Import files"): what the
/// embedded store writes beside its log, and a Redis node writes as chunks before the
/// entry that puts the ranking in place.
pub fn encode(ranking: &Ranking) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut crc = crate::snapshot::CrcWriter::new(&mut out);
    let grouped = ranking.is_partitioned() || ranking.has_teams();
    let mut e = Enc::default();
    e.0.extend_from_slice(if grouped { MAGIC_GROUPED } else { MAGIC });
    let order_byte = |o: Order| match o {
        Order::Asc => 0,
        Order::Desc => 1,
    };
    match ranking.shape().orders() {
        [one] => e.u8(order_byte(*one)),
        orders => {
            e.u8(COLUMNS);
            e.u8(orders.len() as u8);
            for &o in orders {
                e.u8(order_byte(o));
            }
        }
    }
    write_ranking(&mut crc, e, ranking, Entries::Fixed)?;
    if grouped {
        let mut e = Enc::default();
        e.u32(ranking.partitions_max().unwrap_or(0));
        write_ranking_partitions(&mut crc, &mut e, ranking)?;
        e.u32(ranking.team_size().unwrap_or(0));
        write_ranking_teams(&mut crc, &mut e, ranking)?;
        std::io::Write::write_all(&mut crc, &e.0)?;
    }
    let sum = crc.crc();
    std::io::Write::write_all(crc.into_inner(), &sum.to_le_bytes())?;
    Ok(out)
}

/// Reads the import file at `path`.
pub fn read(storage: &dyn Storage, path: &Path) -> Result<Ranking, ReadError> {
    let buf = storage.read(path).map_err(ReadError::Io)?;
    decode(&buf).map_err(ReadError::Corrupt)
}

/// Why an import file could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be read (it may have been removed after a snapshot covered it).
    Io(io::Error),
    /// The file is damaged.
    Corrupt(DecodeError),
}

/// The ranking an import file's bytes hold (checksum and layout checked).
pub fn decode(buf: &[u8]) -> Result<Ranking, DecodeError> {
    let grouped = buf.get(..8) == Some(MAGIC_GROUPED.as_slice());
    if buf.len() < MAGIC.len() + 1 + 4 || (&buf[..8] != MAGIC && !grouped) {
        return Err(DecodeError(
            "not a Photofinish import file (bad magic)".into(),
        ));
    }
    let (body, crc) = buf.split_at(buf.len() - 4);
    if crc32c::crc32c(body) != u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]) {
        return Err(DecodeError("import file checksum mismatch".into()));
    }
    let mut d = Dec::new(&body[8..]);
    let order = |b: u8| match b {
        0 => Ok(Order::Asc),
        1 => Ok(Order::Desc),
        b => Err(DecodeError(format!("unknown order byte {b}"))),
    };
    let orders = match d.u8()? {
        COLUMNS => (0..d.u8()?)
            .map(|_| order(d.u8()?))
            .collect::<Result<Vec<_>, _>>()?,
        b => vec![order(b)?],
    };
    let shape = Shape::of_orders(&orders)
        .ok_or_else(|| DecodeError(format!("{} columns in an import file", orders.len())))?;
    let mut ranking = read_ranking(&mut d, shape, buf.len(), Entries::Fixed)?;
    if grouped {
        ranking = read_groups(&mut d, ranking)?;
    }
    if !d.is_done() {
        return Err(DecodeError("trailing bytes in import file".into()));
    }
    Ok(ranking)
}

/// The partitions' and teams' sections of a `PFRANK02` file, put on `ranking`: each
/// limit (0 for none), then its section as a snapshot's period has it.
fn read_groups(d: &mut Dec<'_>, ranking: Ranking) -> Result<Ranking, DecodeError> {
    let bad = |e: photofinish_core::BoardError| DecodeError(e.to_string());
    let max = d.u32()?;
    let mut ranking = ranking.with_partitions((max > 0).then_some(max));
    let pairs = read_ranking_partitions(d)?;
    ranking.load_partitions(pairs).map_err(bad)?;
    let size = d.u32()?;
    let mut ranking = ranking.with_teams((size > 0).then_some(size));
    let (next_seq, teams) = read_ranking_teams(d)?;
    ranking.load_teams(teams, next_seq).map_err(bad)?;
    Ok(ranking)
}

/// Removes the import files in `dir` that `keep` does not name: orphans of imports that
/// never logged their record, and files a snapshot covers.
pub fn remove_unreferenced(storage: &dyn Storage, dir: &Path, keep: &HashSet<PathBuf>) {
    let Ok(names) = storage.list(dir) else {
        return;
    };
    for name in names.into_iter().filter(|n| is_import_file(n)) {
        let path = dir.join(&name);
        if !keep.contains(&path) {
            match storage.remove(&path) {
                Ok(()) => {
                    tracing::info!(file = %path.display(), "removed an import file no log record needs")
                }
                Err(e) => {
                    tracing::warn!(file = %path.display(), error = %e, "could not remove an import file")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::RealStorage;
    use photofinish_core::ranking::{RankingBuilder, SavedEntry};

    #[test]
    fn a_ranking_survives_its_file_and_damage_is_refused() {
        let dir = tempfile::tempdir().expect("ok");
        let mut b = RankingBuilder::new(Shape::single(Order::Desc, photofinish_core::Op::Incr), 3);
        for (i, (m, s)) in [("b", 5), ("a", 9), ("c", 5)].into_iter().enumerate() {
            let meta = (m == "a").then_some("{\"k\":1}");
            b.push(SavedEntry {
                member: m,
                scores: photofinish_core::Scores::one(s),
                reached_at_us: 10,
                seq: i as u64 + 1,
                metadata: meta,
            })
            .expect("ok");
        }
        let ranking = b.finish().expect("ok");
        let path = dir.path().join(file_name(1));
        write(&RealStorage, &path, &ranking).expect("ok");
        let back = read(&RealStorage, &path).expect("ok");
        let rows = |r: &Ranking| {
            let mut v = Vec::new();
            r.for_each_entry(|m, s, at, seq, meta| {
                v.push((m.to_owned(), *s, at, seq, meta.map(str::to_owned)))
            });
            v
        };
        assert_eq!(rows(&back), rows(&ranking));
        assert_eq!(rows(&back)[0].0, "a");
        assert_eq!(back.shape().orders(), &[Order::Desc]);
        let mut bytes = std::fs::read(&path).expect("ok");
        bytes[20] ^= 1;
        std::fs::write(&path, &bytes).expect("ok");
        assert!(matches!(
            read(&RealStorage, &path),
            Err(ReadError::Corrupt(_))
        ));
        let mut keep = HashSet::new();
        let other = dir.path().join(file_name(2));
        write(&RealStorage, &other, &ranking).expect("ok");
        keep.insert(other.clone());
        remove_unreferenced(&RealStorage, dir.path(), &keep);
        assert!(!path.exists() && other.exists());
    }
}
