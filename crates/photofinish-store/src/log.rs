//! Log frames and segments: how commands are laid out on disk and read back.
//!
//! A frame is `len u32 | crc32c u32 | lsn u64 | payload`, the CRC covering the LSN and the
//! payload. Reading a segment distinguishes two kinds of bad bytes: a *torn tail* (a bad
//! frame with no valid frame after it — a write cut short by a crash) is cut off, while a
//! *damaged record* (a bad frame with a valid one somewhere after it) is corruption, and
//! the reader names the file and offset instead of dropping anything silently.

use crate::codec::{DecodeError, Enc};
use crate::command::Command;

/// Bytes before the payload: length, CRC, LSN.
pub const FRAME_HEADER_BYTES: usize = 16;
/// Largest payload accepted. A command is at most a few KiB (names ≤ 128 B, metadata ≤ 1 KiB);
/// the bound keeps a damaged length field from being believed.
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024;

/// Appends the frame of `cmd` with sequence number `lsn` to `out`.
pub fn encode_frame(out: &mut Vec<u8>, lsn: u64, cmd: &Command) {
    let start = out.len();
    let mut e = Enc(std::mem::take(out));
    e.u32(0);
    e.u32(0);
    e.u64(lsn);
    cmd.encode(&mut e);
    let mut buf = e.0;
    let len = (buf.len() - start - FRAME_HEADER_BYTES) as u32;
    let crc = crc32c::crc32c(&buf[start + 8..]);
    buf[start..start + 4].copy_from_slice(&len.to_le_bytes());
    buf[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    *out = buf;
}

/// Why the bytes at an offset are not a frame.
fn frame_at(buf: &[u8], off: usize) -> Result<(u64, &[u8], usize), DecodeError> {
    let rest = &buf[off..];
    if rest.len() < FRAME_HEADER_BYTES {
        return Err(DecodeError(format!(
            "{} bytes, less than a frame header",
            rest.len()
        )));
    }
    let word = |i: usize| u32::from_le_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
    let len = word(0) as usize;
    if len > MAX_PAYLOAD_BYTES {
        return Err(DecodeError(format!(
            "length {len} over the {MAX_PAYLOAD_BYTES} limit"
        )));
    }
    if rest.len() < FRAME_HEADER_BYTES + len {
        return Err(DecodeError(format!(
            "frame of {len} bytes cut short at {}",
            rest.len()
        )));
    }
    let body = &rest[8..FRAME_HEADER_BYTES + len];
    if crc32c::crc32c(body) != word(4) {
        return Err(DecodeError("checksum mismatch".into()));
    }
    let mut lsn = [0u8; 8];
    lsn.copy_from_slice(&rest[8..16]);
    Ok((
        u64::from_le_bytes(lsn),
        &rest[FRAME_HEADER_BYTES..FRAME_HEADER_BYTES + len],
        FRAME_HEADER_BYTES + len,
    ))
}

/// What reading one segment found.
#[derive(Debug)]
pub struct SegmentRead {
    /// The whole frames, in order.
    pub frames: Vec<Frame>,
    /// Length of the valid prefix.
    pub valid_len: u64,
    /// Why the tail past `valid_len` was cut, if it was.
    pub torn: Option<String>,
}

/// One whole frame of a segment.
#[derive(Debug)]
pub struct Frame {
    /// Where the frame starts in the file (named in errors about it).
    pub offset: u64,
    /// Its log sequence number.
    pub lsn: u64,
    /// The command it records.
    pub cmd: Command,
}

/// A damaged record with valid records after it: start-up must stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Offset of the damaged frame in the file.
    pub offset: u64,
    /// What is wrong with it.
    pub reason: String,
}

/// Reads the frames of one segment; see the module docs for torn tails and damage.
pub fn read_segment(buf: &[u8]) -> Result<SegmentRead, Damage> {
    let mut frames = Vec::new();
    let mut off = 0;
    while off < buf.len() {
        let parsed = frame_at(buf, off)
            .and_then(|(lsn, payload, n)| Ok((lsn, Command::decode(payload)?, n)));
        match parsed {
            Ok((lsn, cmd, n)) => {
                frames.push(Frame {
                    offset: off as u64,
                    lsn,
                    cmd,
                });
                off += n;
            }
            Err(e) => {
                if (off + 1..buf.len()).any(|p| frame_at(buf, p).is_ok()) {
                    return Err(Damage {
                        offset: off as u64,
                        reason: e.0,
                    });
                }
                return Ok(SegmentRead {
                    frames,
                    valid_len: off as u64,
                    torn: Some(e.0),
                });
            }
        }
    }
    Ok(SegmentRead {
        frames,
        valid_len: off as u64,
        torn: None,
    })
}

/// File name of the segment whose first record has `first_lsn`.
pub fn segment_name(first_lsn: u64) -> String {
    format!("wal-{first_lsn:020}.log")
}

/// The first LSN named by a segment file name.
pub fn parse_segment_name(name: &str) -> Option<u64> {
    name.strip_prefix("wal-")?
        .strip_suffix(".log")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use photofinish_core::op::LoggedWrite;

    fn sample(n: u64) -> Vec<u8> {
        let mut buf = Vec::new();
        for lsn in 1..=n {
            let cmd = Command::Write(LoggedWrite {
                board: "b".into(),
                member: format!("m{lsn}"),
                op: None,
                scores: photofinish_core::columns::ScoreInput::Score(lsn as i64),
                at_us: 7,
                period_us: None,
                metadata: (lsn % 2 == 0).then(|| "{}".into()),
                over_budget: None,
                partition: None,
                team: None,
            });
            encode_frame(&mut buf, lsn, &cmd);
        }
        buf
    }

    #[test]
    fn every_truncation_gives_exactly_the_whole_frames_before_it() {
        let buf = sample(5);
        let ends: Vec<usize> = {
            let mut v = vec![0];
            let mut off = 0;
            while off < buf.len() {
                off += frame_at(&buf, off).expect("frame").2;
                v.push(off);
            }
            v
        };
        for cut in 0..=buf.len() {
            let r = read_segment(&buf[..cut]).expect("torn tails are not damage");
            let whole = ends.iter().filter(|&&e| e <= cut).count() - 1;
            assert_eq!(r.frames.len(), whole, "cut at {cut}");
            assert_eq!(r.valid_len as usize, ends[whole]);
            assert_eq!(r.torn.is_some(), cut != ends[whole]);
        }
    }

    #[test]
    fn a_flipped_byte_mid_log_is_damage_at_its_frame() {
        let buf = sample(5);
        let second = frame_at(&buf, 0).expect("frame").2;
        for i in second..second + 20 {
            let mut bad = buf.clone();
            bad[i] ^= 0x40;
            let err = read_segment(&bad).expect_err("damage");
            assert_eq!(err.offset, second as u64, "flip at {i}");
        }
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(parse_segment_name(&segment_name(42)), Some(42));
        assert_eq!(parse_segment_name("wal-x.log"), None);
    }
}
