//! `dbio iostat --format jsonl`: one `dbio.iostat/1` document per report, one per line.

use crate::export::Exporter;
use crate::export::Jsonl;
use dbio_schema::iostat::Report;
use dbio_schema::{doc, Document};
use std::io::{self, Write};

impl Exporter<Report> for Jsonl {
    fn export(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        Jsonl.export(&Document::new(doc::IOSTAT, r), out)
    }
}
