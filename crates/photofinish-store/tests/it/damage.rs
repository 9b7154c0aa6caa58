//! Log damage: a torn tail at every byte offset of the last records recovers exactly the
//! whole records before it; a flipped byte mid-log, or a record missing from the sequence,
//! refuses start-up, naming file and offset.

use photofinish_store::StoreError;

use crate::support::*;

#[test]
fn truncation_at_every_offset_of_the_last_records_recovers_the_valid_prefix() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut prefixes = Vec::new(); // (segment length after record i, listing after record i)
    {
        let store = open_log_only(dir.path());
        create(&store, "b");
        let seg = only_segment(dir.path());
        prefixes.push((
            std::fs::metadata(&seg).expect("len").len(),
            listing(&store, "b"),
        ));
        for i in 0..4 {
            submit(&store, incr("b", &format!("m{i}"), 10 + i))
                .expect("durable")
                .expect("applied");
            prefixes.push((
                std::fs::metadata(&seg).expect("len").len(),
                listing(&store, "b"),
            ));
        }
    }
    let seg = only_segment(dir.path());
    let full = std::fs::read(&seg).expect("read");
    let start = prefixes[0].0 as usize;
    for cut in start..=full.len() {
        let copy = tempfile::tempdir().expect("tmp");
        let path = copy.path().join(seg.file_name().expect("name"));
        std::fs::write(&path, &full[..cut]).expect("write");
        let store = open_log_only(copy.path());
        let want = prefixes
            .iter()
            .rfind(|(len, _)| *len as usize <= cut)
            .expect("prefix");
        assert_eq!(listing(&store, "b"), want.1, "cut at {cut}");
        drop(store);
        // The torn tail was cut off on disk: appends continue from the valid prefix.
        assert_eq!(
            std::fs::metadata(&path).expect("len").len(),
            want.0,
            "cut at {cut}"
        );
    }
}

#[test]
fn a_flipped_byte_mid_log_refuses_to_start_and_names_file_and_offset() {
    let dir = tempfile::tempdir().expect("tmp");
    let second_record_at;
    {
        let store = open_log_only(dir.path());
        create(&store, "b");
        second_record_at = std::fs::metadata(only_segment(dir.path()))
            .expect("len")
            .len();
        for i in 0..5 {
            submit(&store, incr("b", "m", i))
                .expect("durable")
                .expect("applied");
        }
    }
    let seg = only_segment(dir.path());
    let mut bytes = std::fs::read(&seg).expect("read");
    bytes[second_record_at as usize + 20] ^= 0x01;
    std::fs::write(&seg, &bytes).expect("write");
    match open_with(
        std::sync::Arc::new(photofinish_store::io::RealStorage),
        dir.path(),
        1 << 30,
    ) {
        Err(StoreError::Corrupt { file, offset, .. }) => {
            assert_eq!(file, seg);
            assert_eq!(offset, second_record_at);
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("damaged log accepted"),
    }
    // Nothing was cut: the file is as it was.
    assert_eq!(std::fs::read(&seg).expect("read"), bytes);
}

#[test]
fn a_gap_in_sequence_numbers_names_the_offset_of_the_record_after_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let seg = dir.path().join(photofinish_store::log::segment_name(1));
    // Three whole, checksummed records numbered 1, 2, 4: record 3 is missing.
    let mut bytes = Vec::new();
    let mut third_record_at = 0;
    for (i, lsn) in [1u64, 2, 4].into_iter().enumerate() {
        if i == 2 {
            third_record_at = bytes.len() as u64;
        }
        let cmd = if i == 0 {
            photofinish_store::Command::from(photofinish_store::command::CreateBoard {
                board: "b".into(),
                config: photofinish_core::BoardConfig::default()
                    .checked()
                    .expect("valid config"),
                max_boards: None,
                hidden: Vec::new(),
            })
        } else {
            incr("b", "m", 1)
        };
        photofinish_store::log::encode_frame(&mut bytes, lsn, &cmd);
    }
    std::fs::write(&seg, &bytes).expect("write");
    match open_with(
        std::sync::Arc::new(photofinish_store::io::RealStorage),
        dir.path(),
        1 << 30,
    ) {
        Err(StoreError::Corrupt {
            file,
            offset,
            reason,
        }) => {
            assert_eq!((file, offset), (seg, third_record_at), "{reason}");
            assert!(reason.contains("lsn 4 where 3 was due"), "{reason}");
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("a log with a gap was accepted"),
    }
}
