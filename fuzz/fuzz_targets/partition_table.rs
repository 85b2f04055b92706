//! Partition tables (MBR with extended/logical partitions, GPT with its backup) read from a
//! disk image, then `dbio align check`'s own code on it (`align::check::check_source`): byte
//! offsets, the superblock probe of each partition, the alignment of its start, the problems
//! that fail the check and the text rendering.
//!
//! The first byte picks the sector size given (none, 512, 4096, or any value read from the
//! next 8 bytes) and whether the GPT CRCs are fixed up before parsing, so the fuzzer gets
//! past the CRC checks into the entries.
#![no_main]
use dbio_report::export::{Csv, Text};
use dbio_storage::align::check::{check_source, CheckOptions};
use dbio_report::export::Exporter;
use dbio_storage::source::ReadAt;
use dbio_storage::{crc32::crc32, table};
use libfuzzer_sys::fuzz_target;

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Rewrites the entry-array CRC and the header CRC of a GPT header at `lba`, when its fields
/// make that possible.
fn fix_gpt(img: &mut [u8], ss: usize, lba: usize) {
    let Some(at) = lba.checked_mul(ss) else {
        return;
    };
    if at.checked_add(ss).is_none_or(|end| end > img.len()) || &img[at..at + 8] != b"EFI PART" {
        return;
    }
    let hsize = le32(img, at + 12) as usize;
    if !(92..=ss).contains(&hsize) {
        return;
    }
    let (count, esize) = (le32(img, at + 80) as usize, le32(img, at + 84) as usize);
    let elba = le64(img, at + 72);
    if let (Some(len), Some(start)) = (
        count.checked_mul(esize).filter(|&l| l <= 4 << 20),
        usize::try_from(elba).ok().and_then(|l| l.checked_mul(ss)),
    ) {
        if start.checked_add(len).is_some_and(|end| end <= img.len()) {
            let c = crc32(&img[start..start + len]);
            img[at + 88..at + 92].copy_from_slice(&c.to_le_bytes());
        }
    }
    img[at + 16..at + 20].fill(0);
    let c = crc32(&img[at..at + hsize]);
    img[at + 16..at + 20].copy_from_slice(&c.to_le_bytes());
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, mut rest)) = data.split_first() else {
        return;
    };
    // Mode 3: a sector size as a user may type it (`dbio align check --sector N`), from the
    // next 8 bytes.
    let mut typed = None;
    if mode & 3 == 3 && rest.len() >= 8 {
        typed = Some(u64::from_le_bytes(rest[..8].try_into().unwrap()));
        rest = &rest[8..];
    }
    let mut img = rest.to_vec();
    if mode & 4 != 0 {
        for ss in [512usize, 4096] {
            if img.len() >= 2 * ss {
                let last = img.len() / ss - 1;
                let alt = if &img[ss..ss + 8] == b"EFI PART" {
                    usize::try_from(le64(&img, ss + 32)).unwrap_or(last)
                } else {
                    last
                };
                fix_gpt(&mut img, ss, 1);
                fix_gpt(&mut img, ss, alt);
                if alt != last {
                    fix_gpt(&mut img, ss, last);
                }
            }
        }
    }
    let sector = match mode & 3 {
        1 => Some(512),
        2 => Some(4096),
        3 => typed,
        _ => None,
    };
    let src: &dyn ReadAt = &img;
    if let Ok(t) = table::read_table(src, sector) {
        let _ = serde_json::to_string(&t);
    }
    // What `dbio align check` does with it: byte offsets, the superblock probe of each
    // partition (or of the whole image without a table), alignment, problems, the text.
    for stripe in [Some(65536), Some(3 * 65536), None] {
        let o = CheckOptions {
            target: "fuzz.img".into(),
            stripe_bytes: stripe,
            data_disks: Some(4),
            sector_bytes: sector,
        };
        if let Ok(r) = check_source(src, None, &o) {
            let _ = r.problems();
            let _ = Text::default().to_string(&r);
            let _ = Csv::default().to_string(&r);
            let _ = serde_json::to_string(&r);
        }
    }
});
