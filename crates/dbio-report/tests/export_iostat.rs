//! The output formats of `dbio iostat` (text, JSON Lines, CSV, Prometheus as a file and as a
//! stream) on hand-built reports: snapshots of each, and the facts each format must keep
//! (a stream declares each family once, an idle or skipped device keeps its counters, the CSV
//! header comes once, every report a table with its header).

use dbio_report::export::text::iostat::Columns;
use dbio_report::export::{Csv, Json, Jsonl, Prometheus, Text};
use dbio_report::Exporter;
use dbio_schema::iostat::{DeviceRow, Kind, Report};
use dbio_schema::iostat::{DiskStat, Figures};
use dbio_schema::Document;

fn stat(name: &str, minor: u32, n: u64) -> DiskStat {
    DiskStat {
        major: 252,
        minor,
        name: name.into(),
        fields: 17,
        reads: 1000 * n,
        reads_merged: 10 * n,
        sectors_read: 16_000 * n,
        read_ms: 1500 * n,
        writes: 3000 * n,
        writes_merged: 40 * n,
        sectors_written: 96_000 * n,
        write_ms: 900 * n,
        in_flight: n % 3,
        io_ms: 2000 * n,
        weighted_ms: 2400 * n,
        discards: 5 * n,
        discards_merged: 0,
        sectors_discarded: 8192 * n,
        discard_ms: 7 * n,
        flushes: 20 * n,
        flush_ms: 30 * n,
    }
}

fn figures(scale: f64) -> Figures {
    Figures {
        r_per_s: 114.0625 * scale,
        w_per_s: 9993.6 * scale,
        d_per_s: 9.83,
        f_per_s: 0.0,
        rkb_per_s: 755.125 * scale,
        wkb_per_s: 175_700.1 * scale,
        dkb_per_s: 2800.25,
        rrqm_per_s: 0.0,
        wrqm_per_s: 3.93,
        drqm_per_s: 0.0,
        rrqm_pct: 0.0,
        wrqm_pct: 0.039_309,
        drqm_pct: 0.0,
        r_await_ms: 3.591_234,
        w_await_ms: 0.07,
        d_await_ms: 0.4,
        f_await_ms: 0.0,
        rareq_sz_kb: 6.62,
        wareq_sz_kb: 17.581_818,
        dareq_sz_kb: 284.8,
        aqu_sz: 1.083_333,
        util_pct: 59.39 * scale,
        rd_cnc: 0.41,
        wr_cnc: 0.67,
        rd_rt_ms: 3.5,
        wr_rt_ms: 0.07,
        in_flight: 1,
        io_per_s: 10_107.662_5 * scale,
        qtime_ms: 0.05,
        stime_ms: 0.06,
    }
}

fn row(device: &str, kind: Kind, f: Figures) -> DeviceRow {
    DeviceRow {
        device: device.into(),
        kind,
        members: Vec::new(),
        figures: f,
        explain: Vec::new(),
    }
}

/// A busy disk with its --explain reading, a partition, a group of two disks, a device left
/// out (its counters went backwards); the sample also holds a device never shown.
fn first() -> Report {
    let mut vda = row("vda", Kind::Device, figures(1.0));
    vda.explain = vec![
        "aqu-sz 1.08 is at or above the 1 disk under it: every disk has work and requests queue, trading latency for throughput".into(),
        "r_await 3.59 ms, w_await 0.07 ms: writes are faster than reads: a write-back cache absorbs them; reads wait for the media".into(),
    ];
    let mut data = row("data", Kind::Group, figures(2.0));
    data.members = vec!["vda".into(), "vdb".into()];
    Report {
        ts: 1_795_336_046.590_648_7,
        time: "2026-11-22 08:27:26".into(),
        interval_s: 1.000_347_293,
        devices: vec![
            vda,
            row("vda1", Kind::Partition, figures(0.5)),
            row("nvme0n1p12", Kind::Device, figures(0.001)),
            data,
        ],
        skipped: vec!["sdc: counters went backwards (reads 10 -> 3): device reset or re-attached; left out of this interval".into()],
        sample: vec![
            stat("vda", 0, 7),
            stat("vda1", 1, 3),
            stat("vdb", 16, 5),
            stat("nvme0n1p12", 12, 1),
            stat("sdz", 32, 9),
        ],
    }
}

/// One second later: only vda is in the report (vda1 was idle, nvme0n1p12 skipped): the
/// Prometheus exporter still exports their counters.
fn second() -> Report {
    Report {
        ts: 1_795_336_047.590_1,
        time: "2026-11-22 08:27:27".into(),
        interval_s: 0.999_451,
        devices: vec![row("vda", Kind::Device, figures(0.25))],
        skipped: Vec::new(),
        sample: vec![
            stat("vda", 0, 8),
            stat("vda1", 1, 3),
            stat("vdb", 16, 6),
            stat("nvme0n1p12", 12, 2),
            stat("sdz", 32, 10),
        ],
    }
}

/// A report of an interval in which nothing was shown.
fn empty() -> Report {
    Report {
        ts: 1000.0,
        time: "1970-01-01 00:16:40".into(),
        interval_s: 1.0,
        devices: Vec::new(),
        skipped: Vec::new(),
        sample: vec![stat("vda", 0, 1)],
    }
}

/// The bytes an exporter writes for successive reports.
fn run(e: &dyn Exporter<Report>, reports: &[Report]) -> String {
    let mut out = Vec::new();
    for r in reports {
        e.export(r, &mut out).unwrap();
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn text() {
    let s = run(&Text::default(), &[first(), second()]);
    assert_eq!(s.matches("\nDevice ").count(), 2, "a header per report");
    insta::assert_snapshot!(s);
}

#[test]
fn text_columns() {
    let columns = Columns::parse("%util,r/s,in_prg,w_await").unwrap();
    let s = run(&Text { columns }, &[first()]);
    assert!(s.lines().all(|l| l.len() < 130), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn text_empty() {
    insta::assert_snapshot!(run(&Text::default(), &[empty()]));
}

#[test]
fn jsonl() {
    let s = run(&Jsonl, &[first(), second()]);
    let docs: Vec<serde_json::Value> = s
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["schema"], "dbio.iostat/1");
    assert!(
        docs[0].get("sample").is_none(),
        "the raw sample is not in the document"
    );
    insta::assert_snapshot!(s.replace(dbio_schema::doc::DBIO_VERSION, "[version]"));
}

#[test]
fn json_one_report() {
    let s = Json
        .to_string(&Document::new(dbio_schema::doc::IOSTAT, &second()))
        .unwrap();
    insta::assert_snapshot!(s.replace(dbio_schema::doc::DBIO_VERSION, "[version]"));
}

#[test]
fn csv() {
    let s = run(&Csv::default(), &[first(), second(), empty()]);
    assert_eq!(s.matches("time,ts,").count(), 1, "header once");
    assert_eq!(s.lines().count(), 1 + 4 + 1);
    // Full precision, the zone in the time.
    assert!(
        s.contains("\n2026-11-22T08:27:26Z,1795336046.5906487,1.000347293,vda,device,114.0625,"),
        "{s}"
    );
    insta::assert_snapshot!(s);
}

#[test]
fn csv_empty_report_still_has_the_header() {
    assert_eq!(run(&Csv::default(), &[empty()]).lines().count(), 1);
}

/// Family name of each `# HELP` line.
fn helps(s: &str) -> Vec<&str> {
    s.lines()
        .filter_map(|l| l.strip_prefix("# HELP "))
        .map(|l| l.split(' ').next().unwrap())
        .collect()
}

#[test]
fn prometheus_file() {
    let e = Prometheus::file();
    let a = e.to_string(&first()).unwrap();
    let b = e.to_string(&second()).unwrap();
    // Each report a whole exposition, no timestamps.
    assert_eq!(helps(&a).len(), 17 + 12 + 1 + 12, "{a}");
    assert_eq!(helps(&b).len(), 17 + 12, "{b}");
    assert!(a
        .lines()
        .filter(|l| !l.starts_with('#'))
        .all(|l| l.split(' ').count() == 2));
    // vda1 went idle, nvme0n1p12 was skipped: their counters stay; sdz and vdb were never
    // shown as devices (vdb only in a group): not exported.
    for dev in ["vda1", "nvme0n1p12"] {
        assert!(
            b.contains(&format!(
                "node_disk_reads_completed_total{{device=\"{dev}\"}}"
            )),
            "{b}"
        );
    }
    assert!(
        !a.contains("\"sdz\"") && !a.contains("{device=\"vdb\"}"),
        "{a}"
    );
    assert!(a.contains("dbio_disk_group_member_info{group=\"data\",device=\"vdb\"} 1\n"));
    insta::assert_snapshot!(format!("{a}---\n{b}"));
}

#[test]
fn prometheus_stream() {
    let s = run(&Prometheus::stream(), &[first(), second()]);
    // Each family declared once, every sample stamped with its report's time in ms.
    let h = helps(&s);
    let mut unique = h.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(h.len(), unique.len(), "a family declared twice:\n{s}");
    for l in s.lines().filter(|l| !l.starts_with('#')) {
        let ts = l.rsplit(' ').next().unwrap();
        assert!(["1795336046591", "1795336047590"].contains(&ts), "{l}");
    }
    assert!(s.contains("node_disk_reads_completed_total{device=\"vda1\"} 3000 1795336047590\n"));
    insta::assert_snapshot!(s);
}

#[test]
fn prometheus_empty() {
    // Nothing shown yet: nothing exported (no family without samples).
    assert_eq!(Prometheus::file().to_string(&empty()).unwrap(), "");
}
