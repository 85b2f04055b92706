//! `dbio innodb grep --format json`: one document (schema `dbio.innodb.grep/1`), written as
//! the hits are found: the head with the patterns, each hit as a compact line of the `hits`
//! array, then the totals. Read whole, it is an ordinary pretty-printed document.

use crate::export::Exporter;
use crate::export::Json;
use dbio_schema::doc::{stream_head, INNODB_GREP};
use dbio_schema::innodb::{GrepEvent, GrepSummary};
use std::io::{self, Write};

impl Exporter<GrepEvent<'_>> for Json {
    fn export(&self, value: &GrepEvent<'_>, out: &mut dyn Write) -> io::Result<()> {
        match *value {
            GrepEvent::Start { patterns, all_in } => {
                out.write_all(stream_head(INNODB_GREP).as_bytes())?;
                out.write_all(b"  \"patterns\": ")?;
                serde_json::to_writer(&mut *out, patterns)?;
                out.write_all(b",\n  \"all_in\": ")?;
                serde_json::to_writer(&mut *out, &all_in)?;
                out.write_all(b",\n  \"hits\": [")
            }
            GrepEvent::Hit { n, hit } => {
                out.write_all(if n == 0 { b"\n    " } else { b",\n    " })?;
                serde_json::to_writer(&mut *out, hit)?;
                Ok(())
            }
            GrepEvent::End(s) => out.write_all(tail(s).as_bytes()),
        }
    }
}

/// The hits array closed, then the totals.
fn tail(s: &GrepSummary) -> String {
    let f = |x: f64| serde_json::to_string(&x).unwrap_or_else(|_| "null".into());
    format!(
        "\n  ],\n  \"hit_count\": {},\n  \"hits_in_pages\": {},\n  \"searched_bytes\": {},\n  \"elapsed_s\": {},\n  \"bytes_per_s\": {},\n  \"max_count_reached\": {},\n  \"interrupted\": {}\n}}\n",
        s.hit_count,
        s.hits_in_pages,
        s.bytes_searched,
        f(s.elapsed_s),
        f(s.bytes_per_s),
        s.max_count_reached,
        s.interrupted
    )
}
