//! One InnoDB page: checksum verification, the header/trailer and ROW_FORMAT=COMPRESSED
//! detectors, classification (INDEX header, record lists), REDUNDANT field offsets and the
//! SYS_TABLES/SYS_INDEXES dictionary reader.
//!
//! The first byte picks the page size; the rest is the page (cut or zero-padded to it).
#![no_main]
use dbio_innodb::page::{self, RowFormat};
use dbio_innodb::scan::{self, Status};
use dbio_innodb::{checksum, dict::Dictionary};
use libfuzzer_sys::fuzz_target;

const SIZES: [usize; 6] = [1024, 2048, 4096, 8192, 16384, 65536];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let size = SIZES[sel as usize % SIZES.len()];
    let mut p = rest.to_vec();
    p.resize(size, 0);
    let _ = checksum::verify(&p);
    let _ = checksum::zip_crc32(&p);
    let h = page::FilHeader::parse(&p);
    let _ = page::page_type_name(h.page_type);
    if h.page_no == 0 {
        let flags = page::be32(&p, 54);
        let _ = page::page_size_from_flags(flags);
        let _ = page::physical_page_size_from_flags(flags);
    }
    let _ = scan::detect_at(&p, 0, size, 0);
    let _ = scan::detect_zip_at(&p, 0, 0);
    let _ = scan::compressed_payload_at(&p, 0);
    let found = scan::classify(&p, 0, Status::Torn, None);
    let _ = found.extent();
    for fmt in [
        RowFormat::Compact,
        RowFormat::Redundant,
        RowFormat::Compressed,
    ] {
        let _ = scan::infer_index_size(&p, 0, fmt, &page::PAGE_SIZES);
    }
    let recs = page::records(&p);
    for r in &recs {
        let _ = page::record_containing(&recs, r.origin as usize + 3);
        let _ = page::redundant_fields(&p, r.origin as usize);
    }
    let mut d = Dictionary::default();
    d.add_page(&p);
    for ix in d.indexes.values() {
        let _ = d.name_of(ix.space, ix.id);
        let _ = d.is_dropped(ix.id);
    }
});
