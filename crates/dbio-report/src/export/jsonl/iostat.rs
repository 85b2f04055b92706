//! `dbio iostat --format jsonl`: one `dbio.iostat/1` document per report, one per line.

use crate::export::{Exporter, JsonLinesExporter};
use dbio_schema::{doc, Document};
use dbio_sys::iostat::Report;
use std::io::{self, Write};

/// One compact `dbio.iostat/1` document per report, followed by a newline.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonlExporter;

impl Exporter<Report> for JsonlExporter {
    fn export(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        JsonLinesExporter.export(&Document::new(doc::IOSTAT, r), out)
    }
}
