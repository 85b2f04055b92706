//! `dbio innodb pages` and `dbio innodb grep` as text: the pages report (sources, totals, a
//! table of tablespaces and one of indexes, page files, the dictionary, other pages), one line
//! per grep hit (with its hex dump), grep's summary line and `--show-bytes`' pattern lines.

use crate::export::table::{Column, Table};
use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::innodb::{GrepEvent, GrepSummary, HitRow, PagesReport, PatternRow};
use dbio_schema::units::{format_size, format_size_approx};
use std::fmt::Write as _;
use std::io::{self, Write};

impl Exporter<PagesReport> for Text {
    fn export(&self, value: &PagesReport, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(pages_text(value).as_bytes())
    }
}

impl Exporter<GrepEvent<'_>> for Text {
    fn export(&self, value: &GrepEvent<'_>, out: &mut dyn Write) -> io::Result<()> {
        match value {
            GrepEvent::Hit { hit, .. } => out.write_all(hit_text(hit).as_bytes()),
            GrepEvent::Start { .. } | GrepEvent::End(_) => Ok(()),
        }
    }
}

/// The summary line, ending in a newline: `3 hits (2 inside InnoDB pages) in 1MiB searched in ...`.
impl Exporter<GrepSummary> for Text {
    fn export(&self, s: &GrepSummary, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "{} {} ({} inside InnoDB pages) in {} searched in {:.2}s ({}/s){}",
            s.hit_count,
            if s.hit_count == 1 { "hit" } else { "hits" },
            s.hits_in_pages,
            format_size(s.bytes_searched),
            s.elapsed_s,
            format_size_approx(s.bytes_per_s),
            if s.interrupted {
                "; interrupted"
            } else if s.max_count_reached {
                "; stopped at --max-count"
            } else {
                ""
            }
        )
    }
}

/// `--show-bytes`: a `label: hex` line per pattern.
impl Exporter<[PatternRow]> for Text {
    fn export(&self, value: &[PatternRow], out: &mut dyn Write) -> io::Result<()> {
        for p in value {
            writeln!(out, "{}: {}", p.label, p.hex)?;
        }
        Ok(())
    }
}

fn left(headers: &[&str]) -> Table {
    Table::new(headers.iter().map(|h| Column::left(h)).collect())
}

fn pages_text(r: &PagesReport) -> String {
    let mut s = String::new();
    for src in &r.sources {
        let _ = writeln!(
            s,
            "source {}: {}, {} pages",
            src.path,
            format_size(src.bytes),
            src.pages_found
        );
    }
    let scanned = if r.bytes_scanned < r.source_bytes {
        format!(
            "{} of {} (interrupted: the rest was not read)",
            format_size(r.bytes_scanned),
            format_size(r.source_bytes)
        )
    } else {
        format_size(r.bytes_scanned)
    };
    let _ = writeln!(
        s,
        "scanned {} in {:.2}s ({}/s); {} pages found, {} written to {}, {} duplicates dropped",
        scanned,
        r.elapsed_s,
        format_size_approx(r.bytes_per_s),
        r.pages_found,
        if r.pages_kept > 0 {
            format!(
                "{} ({} kept from the previous run)",
                r.pages_written, r.pages_kept
            )
        } else {
            r.pages_written.to_string()
        },
        r.out_dir,
        r.duplicates_dropped
    );
    let algos: Vec<String> = r
        .checksum_algorithms
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(s, "checksums: {}\n", algos.join(", "));
    let mut t = left(&["SPACE", "PAGE_SIZE", "FROM", "PAGES"]);
    for x in &r.spaces {
        t.row([
            x.space_id.to_string(),
            format_size(x.page_size as u64),
            x.page_size_from.to_string(),
            x.pages.to_string(),
        ]);
    }
    s.push_str(&t.render());
    s.push('\n');
    let mut t = left(&[
        "SPACE",
        "INDEX_ID",
        "TABLE",
        "INDEX",
        "FORMAT",
        "PAGES",
        "RECORDS",
        "LEVELS",
        "DELETED",
        "INTACT",
        "TORN",
        "HEURISTIC",
    ]);
    for x in &r.indexes {
        t.row([
            x.space_id.to_string(),
            x.index_id.to_string(),
            match (&x.table, x.dropped) {
                (Some(t), true) => format!("{t} (dropped)"),
                (Some(t), false) => t.clone(),
                (None, _) => "-".into(),
            },
            x.index.clone().unwrap_or_else(|| "-".into()),
            x.format.name().to_string(),
            x.pages.to_string(),
            x.records.to_string(),
            x.levels.to_string(),
            x.deleted_records.to_string(),
            x.checksum.intact.to_string(),
            x.checksum.torn.to_string(),
            x.checksum.heuristic.to_string(),
        ]);
    }
    s.push_str(&t.render());
    if !r.page_files.is_empty() {
        s.push('\n');
        for b in &r.page_files {
            let _ = writeln!(
                s,
                "space {}: {} {} pages in {}/",
                b.space_id, b.pages, b.kind, b.dir
            );
        }
    }
    if !r.dictionary.is_empty() {
        let dropped: Vec<&str> = r
            .dictionary
            .iter()
            .filter(|t| t.dropped)
            .map(|t| t.name.as_str())
            .collect();
        let missing = r
            .dictionary
            .iter()
            .filter(|t| t.indexes.iter().all(|i| i.pages_found == 0))
            .count();
        let _ = writeln!(
            s,
            "\ndictionary: {} tables named ({} dropped{}), {} without any page found (--format json lists them)",
            r.dictionary.len(),
            dropped.len(),
            if dropped.is_empty() {
                String::new()
            } else {
                format!(": {}", dropped.join(", "))
            },
            missing
        );
    }
    if !r.other_pages.is_empty() {
        let o: Vec<String> = r
            .other_pages
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(s, "\nother pages (not written): {}", o.join(", "));
    }
    s
}

/// A hit: where, which pattern, the page and record holding it, then the hex dump.
fn hit_text(h: &HitRow) -> String {
    let mut s = format!("{}:{} (0x{:x}) {}", h.source, h.offset, h.offset, h.pattern);
    match &h.page {
        Some(p) => {
            let _ = write!(
                s,
                "  space {} page {} {} ",
                p.space_id, p.page_no, p.page_type
            );
            if let Some(ix) = p.index_id {
                let _ = write!(s, "index {ix} level {} ", p.level.unwrap_or(0));
            }
            let _ = write!(
                s,
                "({}{}) page@{} +0x{:x}",
                p.status.name(),
                p.checksum
                    .map(|a| format!(" {}", a.name()))
                    .unwrap_or_default(),
                p.page_offset_in_source,
                p.offset_in_page
            );
            if let Some(rec) = &p.record {
                let _ = write!(
                    s,
                    " record heap {} at 0x{:x}{}",
                    rec.heap_no,
                    rec.origin,
                    if rec.purged {
                        " purged"
                    } else if rec.deleted {
                        " deleted"
                    } else {
                        ""
                    }
                );
            }
        }
        None => s.push_str("  (not inside a recognised page)"),
    }
    s.push('\n');
    if let Some(c) = &h.context_hex {
        s.push_str(c);
    }
    s
}
