//! ROW_FORMAT=COMPRESSED pages (`dbio innodb rows`): a compressed leaf INDEX page
//! decompressed (index description, zlib stream, modification log, trailer), the records of
//! the page it gives listed, split and decoded with the definition of testdata's shop_zip
//! tables; and the same bytes read as a one-page compressed BLOB chain.
//!
//! The first byte picks the compressed page size; the rest is the page (cut or zero-padded
//! to it). Seeds: every page of testdata/innodb/shop_zip*.ibd (scripts/fuzz-seeds.sh).
#![no_main]
use dbio_innodb::page::RowFormat;
use dbio_innodb::rows::def::{self, TableDef};
use dbio_innodb::rows::record::{self, Layout, NoBlobs};
use dbio_innodb::rows::zip;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const SIZES: [usize; 5] = [1024, 2048, 4096, 8192, 16384];

const SHOP_ZIP: &str = "create table zip (
  id int primary key,
  ti tinyint, si smallint, mi mediumint, bi bigint, iu int unsigned,
  d date, dt datetime, dt6 datetime(6), ts timestamp null, tm time,
  dec1 decimal(10,2), ch char(10), vc varchar(64), tx text
) row_format=compressed key_block_size=8 default charset=latin1";

fn definition() -> &'static (TableDef, Layout) {
    static DEF: OnceLock<(TableDef, Layout)> = OnceLock::new();
    DEF.get_or_init(|| {
        let d = def::parse(SHOP_ZIP, None, "fuzz").expect("the shop_zip definition parses");
        let l = Layout::clustered(&d);
        (d, l)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let size = SIZES[sel as usize % SIZES.len()];
    let mut p = rest.to_vec();
    p.resize(size, 0);
    if let Ok((page, _)) = zip::decompress(&p) {
        let (d, layout) = definition();
        let (mut seen, mut recs, mut fields) = (Vec::new(), Vec::new(), Vec::new());
        record::list(&page, RowFormat::Compact, &mut seen, &mut recs);
        for r in &recs {
            if record::split(&page, r.origin, RowFormat::Compact, layout, &mut fields).is_ok() {
                let _ = record::decode(&page, d, layout, &fields, r.deleted, &NoBlobs);
            }
        }
    }
    let mut out = Vec::new();
    let one_page = |no: u32, b: &mut Vec<u8>| {
        b.clear();
        b.extend_from_slice(&p);
        no == 4
    };
    let _ = zip::read_zblob(one_page, 4, 12, 1 << 16, &mut out);
});
