//! The InnoDB page scanner over raw bytes (`dbio innodb pages`: any page size at any
//! 512-byte step), overlap resolution, and locating offsets in the pages found (what
//! `dbio innodb grep` does for each hit).
#![no_main]
use dbio_innodb::grep;
use dbio_innodb::scan::{self, ScanOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = ScanOptions::default();
    let mut pages = Vec::new();
    let mut warnings = Vec::new();
    scan::scan_buffer(data, 0, data.len(), &opts, true, &mut pages, &mut warnings);
    pages.sort_by_key(|p| p.offset);
    let pages = scan::resolve_overlaps(pages);
    let mut offsets: Vec<u64> = pages.iter().map(|p| p.offset + 100).collect();
    offsets.push(data.len() as u64 / 2);
    offsets.truncate(8);
    for o in offsets {
        if o < data.len() as u64 {
            let _ = grep::locate_in(data, 0, o, opts.step, &opts.page_sizes);
        }
    }
});
