//! `dbio align check --format csv`: the partition list, one row per partition (the whole
//! device as partition 0 when it has no table), with the units in the column names. Sector
//! numbers are in the table's sector size (`sector_size_bytes`, repeated on every row so a
//! row stands alone); an undefined value (no stripe unit given, no kernel view) is an empty
//! cell. `dbio align calc` is not a table and has no CSV.

use crate::export::csv::opt;
use crate::export::Csv;
use crate::export::{csv_row, Exporter};
use dbio_schema::align::{DiskCheck, GeometryMatch};
use std::io::{self, Write};

const HEADER: [&str; 20] = [
    "target",
    "number",
    "kind",
    "type_name",
    "type_code",
    "name",
    "sector_size_bytes",
    "start_sectors",
    "end_sectors",
    "size_bytes",
    "start_bytes",
    "stripe_bytes",
    "stripe_aligned",
    "stripe_remainder_bytes",
    "aligned_4k",
    "aligned_64k",
    "aligned_1m",
    "filesystem",
    "geometry",
    "kernel_alignment_offset_bytes",
];

impl Exporter<DiskCheck> for Csv {
    fn export(&self, value: &DiskCheck, out: &mut dyn Write) -> io::Result<()> {
        csv_row(out, HEADER)?;
        // Without a table the whole device is read in 512-byte sectors.
        let sector = value.table.as_ref().map_or(512, |t| t.sector_size_bytes);
        for p in &value.partitions {
            let a = &p.alignment;
            csv_row(
                out,
                [
                    value.target.clone(),
                    p.number.to_string(),
                    p.kind.name().to_string(),
                    p.type_name.clone(),
                    p.type_code.clone(),
                    p.name.clone().unwrap_or_default(),
                    sector.to_string(),
                    p.start_sectors.to_string(),
                    p.end_sectors.to_string(),
                    p.size_bytes.to_string(),
                    a.start_bytes.to_string(),
                    opt(a.stripe_bytes),
                    opt(a.stripe_aligned),
                    opt(a.stripe_remainder_bytes),
                    a.aligned_4k.to_string(),
                    a.aligned_64k.to_string(),
                    a.aligned_1m.to_string(),
                    p.filesystem.as_ref().map(|f| f.name()).unwrap_or_default(),
                    p.geometry
                        .as_ref()
                        .map(|g| match g.verdict {
                            GeometryMatch::Match => "match",
                            GeometryMatch::NoGeometry => "no_geometry",
                            GeometryMatch::Mismatch => "mismatch",
                        })
                        .unwrap_or_default()
                        .to_string(),
                    opt(p.kernel.as_ref().and_then(|k| k.alignment_offset_bytes)),
                ],
            )?;
        }
        Ok(())
    }
}
