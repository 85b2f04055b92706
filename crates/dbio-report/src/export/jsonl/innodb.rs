//! `dbio innodb grep --format jsonl`: a line per hit (`"type": "hit"`) as it is found, then a
//! summary line (`"type": "summary"`), which alone carries `schema`
//! (`dbio.innodb.grep.jsonl/1`) and `dbio_version`.

use crate::export::Exporter;
use crate::export::Jsonl;
use dbio_schema::doc::{Document, INNODB_GREP_JSONL};
use dbio_schema::innodb::GrepEvent;
use serde::Serialize;
use std::io::{self, Write};

/// A line's object: its `type` first, then the fields of the hit or summary.
#[derive(Serialize)]
struct Typed<'a, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    value: &'a T,
}

impl Exporter<GrepEvent<'_>> for Jsonl {
    fn export(&self, value: &GrepEvent<'_>, out: &mut dyn Write) -> io::Result<()> {
        match *value {
            GrepEvent::Start { .. } => return Ok(()),
            GrepEvent::Hit { hit, .. } => {
                let line = Typed {
                    kind: "hit",
                    value: hit,
                };
                serde_json::to_writer(&mut *out, &line)?;
            }
            GrepEvent::End(s) => {
                let line = Typed {
                    kind: "summary",
                    value: s,
                };
                serde_json::to_writer(&mut *out, &Document::new(INNODB_GREP_JSONL, &line))?;
            }
        }
        out.write_all(b"\n")
    }
}
