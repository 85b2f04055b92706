//! The output formats of `dbio innodb pages` (text, JSON) and `dbio innodb grep` (text, JSON,
//! JSON Lines, the summary line, `--show-bytes`) on hand-built results: a snapshot of each,
//! and the facts each format must keep.

use dbio_report::export::{Json, Jsonl, Text};
use dbio_report::Exporter;
use dbio_schema::doc::{INNODB_GREP, INNODB_GREP_JSONL, INNODB_PAGES};
use dbio_schema::innodb::*;
use dbio_schema::Document;
use serde_json::Value;
use std::collections::BTreeMap;

fn index(space_id: u32, index_id: u64, table: Option<&str>, index: Option<&str>) -> IndexRow {
    IndexRow {
        space_id,
        index_id,
        table: table.map(str::to_string),
        index: index.map(str::to_string),
        dropped: false,
        format: RowFormat::Compact,
        pages: 4,
        records: 1234,
        levels: 2,
        deleted_records: 3,
        checksum: StatusCounts {
            intact: 3,
            torn: 1,
            heuristic: 0,
        },
        file: format!("{space_id}/{index_id}.pages"),
    }
}

/// A report with every part filled: two sources, spaces of two page sizes, indexes named,
/// dropped, unnamed and with a non-ASCII name, page files, a dictionary with a dropped table
/// and one without pages, other pages, a warning.
fn pages_report() -> PagesReport {
    let mut indexes = vec![
        IndexRow {
            format: RowFormat::Redundant,
            levels: 1,
            ..index(0, 1, Some("SYS_TABLES"), Some("CLUST_IND"))
        },
        index(5, 23, Some("shop/orders"), Some("PRIMARY")),
        IndexRow {
            dropped: true,
            ..index(6, 25, Some("shop/gone"), Some("PRIMARY"))
        },
        IndexRow {
            format: RowFormat::Compressed,
            checksum: StatusCounts {
                intact: 0,
                torn: 0,
                heuristic: 4,
            },
            ..index(7, 40, None, None)
        },
        index(8, 41, Some("shop/café"), Some("idx_prix")),
    ];
    indexes[1].records = 0;
    PagesReport {
        out_dir: "/srv/recovered".into(),
        sources: vec![
            SourceRow {
                path: "/dev/sdb".into(),
                bytes: 64 << 30,
                pages_found: 180,
            },
            SourceRow {
                path: "/var/lib/mysql/shop/orders.ibd".into(),
                bytes: 96 << 10,
                pages_found: 6,
            },
        ],
        bytes_scanned: (64 << 30) + (96 << 10),
        source_bytes: (64 << 30) + (96 << 10),
        elapsed_s: 12.345,
        bytes_per_s: 5.6e9,
        pages_found: 186,
        pages_written: 180,
        pages_kept: 0,
        duplicates_dropped: 6,
        checksum_algorithms: BTreeMap::from([
            ("crc32".to_string(), 12),
            ("full_crc32".to_string(), 160),
            ("torn".to_string(), 8),
        ]),
        spaces: vec![
            SpaceRow {
                space_id: 0,
                page_size: 16384,
                page_size_from: "fsp_flags",
                pages: 13,
            },
            SpaceRow {
                space_id: 20,
                page_size: 8192,
                page_size_from: "checksum",
                pages: 4,
            },
        ],
        indexes,
        page_files: vec![
            PageFileRow {
                space_id: 9,
                kind: "BLOB",
                pages: 2,
                dir: "9/BLOB".into(),
            },
            PageFileRow {
                space_id: 12,
                kind: "COMPRESSED",
                pages: 3,
                dir: "12/COMPRESSED".into(),
            },
        ],
        other_pages: BTreeMap::from([("FSP_HDR".to_string(), 3), ("INODE".to_string(), 2)]),
        dictionary: vec![
            DictTable {
                table_id: 18,
                name: "shop/orders".into(),
                space_id: 5,
                dropped: false,
                indexes: vec![DictIndex {
                    index_id: 23,
                    name: "PRIMARY".into(),
                    root_page: 3,
                    pages_found: 4,
                }],
            },
            DictTable {
                table_id: 19,
                name: "shop/gone".into(),
                space_id: 6,
                dropped: true,
                indexes: vec![DictIndex {
                    index_id: 25,
                    name: "PRIMARY".into(),
                    root_page: 3,
                    pages_found: 4,
                }],
            },
            DictTable {
                table_id: 21,
                name: "shop/lost".into(),
                space_id: 30,
                dropped: false,
                indexes: vec![DictIndex {
                    index_id: 50,
                    name: "PRIMARY".into(),
                    root_page: 3,
                    pages_found: 0,
                }],
            },
        ],
        warnings: vec!["/dev/sdb: 2 pages torn".into()],
        interrupted: false,
        write_error: None,
    }
}

/// The least a report holds: one source, nothing found.
fn empty_report() -> PagesReport {
    PagesReport {
        out_dir: "out".into(),
        sources: vec![SourceRow {
            path: "zeros.img".into(),
            bytes: 1 << 20,
            pages_found: 0,
        }],
        bytes_scanned: 1 << 20,
        source_bytes: 1 << 20,
        elapsed_s: 0.01,
        bytes_per_s: 1e8,
        pages_found: 0,
        pages_written: 0,
        pages_kept: 0,
        duplicates_dropped: 0,
        checksum_algorithms: BTreeMap::new(),
        spaces: vec![],
        indexes: vec![],
        page_files: vec![],
        other_pages: BTreeMap::new(),
        dictionary: vec![],
        warnings: vec!["no InnoDB pages found in the sources".into()],
        interrupted: true,
        write_error: None,
    }
}

fn export<T: ?Sized>(e: &dyn Exporter<T>, v: &T) -> String {
    e.to_string(v).unwrap()
}

#[test]
fn pages_text() {
    let s = export(&Text::default(), &pages_report());
    insta::assert_snapshot!("pages_text", s);
    insta::assert_snapshot!(
        "pages_text_empty",
        export(&Text::default(), &empty_report())
    );
    // The index table's columns line up although a table name is not ASCII.
    let at: Vec<usize> = s
        .lines()
        .filter_map(|l| l.find("PRIMARY").map(|b| l[..b].chars().count()))
        .collect();
    assert!(at.len() == 2 && at[0] == at[1], "{s}");
    let cafe = s.lines().find(|l| l.contains("café")).unwrap();
    let orders = s.lines().find(|l| l.contains("shop/orders ")).unwrap();
    assert_eq!(
        cafe.chars().count(),
        orders.chars().count(),
        "{cafe}\n{orders}"
    );
    // A scan a signal stopped says how far it got, not the size of the sources.
    let mut r = empty_report();
    (r.sources, r.bytes_scanned, r.source_bytes, r.interrupted) =
        (vec![], 512 << 20, 3000 << 20, true);
    let s = export(&Text::default(), &r);
    assert!(
        s.starts_with("scanned 512MiB of 3000MiB (interrupted: the rest was not read) in 0.01s"),
        "{s}"
    );
}

#[test]
fn pages_json() {
    let r = pages_report();
    let s = export(&Json, &Document::new(INNODB_PAGES, &r));
    insta::assert_snapshot!("pages_json", s);
    let v: Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["schema"], INNODB_PAGES);
    assert_eq!(v["scanned_bytes"], (64u64 << 30) + (96 << 10));
    assert_eq!(v["indexes"][3]["format"], "COMPRESSED");
    assert_eq!(v["spaces"][1]["page_size_bytes"], 8192);
}

fn hit_page(status: Status, checksum: Option<Algorithm>, record: Option<Record>) -> HitPage {
    HitPage {
        page_offset_in_source: 81920,
        page_size: 16384,
        space_id: 5,
        page_no: 3,
        page_type: "INDEX".into(),
        index_id: Some(23),
        level: Some(0),
        status,
        checksum,
        offset_in_page: 0xa3,
        record,
    }
}

fn record(heap_no: u16, deleted: bool, purged: bool) -> Record {
    Record {
        origin: 0x9b,
        heap_no,
        deleted,
        purged,
        node_ptr: false,
    }
}

/// Hits of every kind: in a live record, a deleted one, a purged one, a page without a record,
/// a non-INDEX page, outside any page, and one with a hex dump.
fn hits() -> Vec<HitRow> {
    let src = "/var/lib/mysql/shop/orders.ibd".to_string();
    let row = |offset: u64, pattern: &str, page: Option<HitPage>| HitRow {
        source: src.clone(),
        offset,
        pattern: pattern.into(),
        page,
        context_hex: None,
    };
    let mut blob = hit_page(Status::Torn, None, None);
    blob.page_type = "BLOB".into();
    blob.index_id = None;
    blob.level = None;
    vec![
        row(
            82083,
            "int:837492636",
            Some(hit_page(
                Status::Intact,
                Some(Algorithm::FullCrc32),
                Some(record(2, false, false)),
            )),
        ),
        row(
            82200,
            "int:837492636",
            Some(hit_page(
                Status::Intact,
                Some(Algorithm::Crc32),
                Some(record(3, true, false)),
            )),
        ),
        row(
            82300,
            "text:café",
            Some(hit_page(Status::Heuristic, None, Some(record(4, true, true)))),
        ),
        row(
            82400,
            "text:café",
            Some(hit_page(Status::Intact, Some(Algorithm::Innodb), None)),
        ),
        row(99000, "hex:80 07 ?? 03", Some(blob)),
        HitRow {
            context_hex: Some(
                "000000000020  30 31 32 33 34 35 36 37 38 39 61 62 63 64 65 66  |0123456789abcdef|\n"
                    .into(),
            ),
            ..row(32, "text:café", None)
        },
    ]
}

fn patterns() -> Vec<PatternRow> {
    vec![
        PatternRow {
            label: "int:837492636".into(),
            hex: "B1 EB 1F 9C".into(),
        },
        PatternRow {
            label: "text:café".into(),
            hex: "63 61 66 C3 A9".into(),
        },
        PatternRow {
            label: "hex:80 07 ?? 03".into(),
            hex: "80 07 ?? 03".into(),
        },
    ]
}

fn summary(hits: u64) -> GrepSummary {
    GrepSummary {
        patterns: patterns(),
        all_in: Some("page".into()),
        hit_count: hits,
        hits_in_pages: hits.saturating_sub(1),
        bytes_searched: 96 << 10,
        elapsed_s: 0.0123,
        bytes_per_s: 7.99e6,
        max_count_reached: false,
        interrupted: false,
    }
}

/// Runs a grep stream through an exporter, event by event, as the command does.
fn grep_stream(e: &dyn for<'a> Exporter<GrepEvent<'a>>, all_in: Option<&str>) -> String {
    let (pats, hits) = (patterns(), hits());
    let sum = summary(hits.len() as u64);
    let mut out = Vec::new();
    e.export(
        &GrepEvent::Start {
            patterns: &pats,
            all_in,
        },
        &mut out,
    )
    .unwrap();
    for (n, hit) in hits.iter().enumerate() {
        e.export(&GrepEvent::Hit { n: n as u64, hit }, &mut out)
            .unwrap();
    }
    e.export(&GrepEvent::End(&sum), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn grep_text() {
    let s = grep_stream(&Text::default(), Some("page"));
    insta::assert_snapshot!("grep_text", s);
    assert_eq!(
        s.lines().count(),
        hits().len() + 1,
        "one line per hit, plus the dump"
    );
}

#[test]
fn grep_json() {
    let s = grep_stream(&Json, Some("page"));
    insta::assert_snapshot!("grep_json", s);
    let v: Value = serde_json::from_str(&s).expect("the streamed document is one JSON value");
    assert_eq!(v["schema"], INNODB_GREP);
    assert_eq!(v["all_in"], "page");
    assert_eq!(v["hits"].as_array().unwrap().len(), hits().len());
    assert_eq!(v["hit_count"], hits().len());
    assert_eq!(v["hits"][5]["offset_bytes"], 32);
    assert!(v["hits"][5].get("page").is_none());
    // No hit at all: an empty array, still one document.
    let mut out = Vec::new();
    let pats = patterns();
    let start = GrepEvent::Start {
        patterns: &pats,
        all_in: None,
    };
    Json.export(&start, &mut out).unwrap();
    Json.export(&GrepEvent::End(&summary(0)), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["hits"], serde_json::json!([]));
    assert_eq!(v["all_in"], Value::Null);
}

#[test]
fn grep_jsonl() {
    let s = grep_stream(&Jsonl, None);
    insta::assert_snapshot!("grep_jsonl", s);
    let lines: Vec<Value> = s
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), hits().len() + 1);
    assert!(lines[..hits().len()].iter().all(|l| l["type"] == "hit"));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "summary");
    assert_eq!(last["schema"], INNODB_GREP_JSONL);
    // The same hit objects as in the JSON document, with their type.
    let doc: Value = serde_json::from_str(&grep_stream(&Json, None)).unwrap();
    let mut first = lines[0].clone();
    first.as_object_mut().unwrap().remove("type");
    assert_eq!(first, doc["hits"][0]);
}

#[test]
fn grep_summary_line() {
    let mut s = summary(1);
    let one = export(&Text::default(), &s);
    s.hit_count = 0;
    let none = export(&Text::default(), &s);
    s.hit_count = 7;
    s.max_count_reached = true;
    let max = export(&Text::default(), &s);
    s.interrupted = true;
    let stopped = export(&Text::default(), &s);
    insta::assert_snapshot!("grep_summary", [one, none, max, stopped].concat());
}

#[test]
fn grep_show_bytes() {
    insta::assert_snapshot!(
        "grep_show_bytes",
        export(&Text::default(), patterns().as_slice())
    );
}
