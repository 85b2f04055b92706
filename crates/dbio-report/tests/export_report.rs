//! `dbio report` on constructed, deterministic bench results: snapshots of the text, JSON and
//! CSV exports, the facts the analysis must keep (exact merging, a periodic dip found with its
//! period, a comparison of two schedulers), and the HTML page's self-containment.

use dbio_report::analysis::input::{Loaded, Source};
use dbio_report::analysis::{analyse, log_bins};
use dbio_report::export::{Csv, Html, Json, Text};
use dbio_report::Exporter;
use dbio_schema::bench::*;
use dbio_schema::hist::LatencyHistogram;
use dbio_schema::report::{Report, ReportOptions};
use dbio_schema::Document;
use std::path::PathBuf;
use std::time::Duration;

fn spec(threads: u32) -> Spec {
    Spec {
        target: Target::Dir(PathBuf::from("/data/dbio")),
        mode: Mode::Rndrd,
        engine: EngineKind::Sync,
        block_size_bytes: 16384,
        file_num: 4,
        file_total_size_bytes: 64 << 20,
        threads,
        iodepth: 1,
        submit_batch: 1,
        reap_batch: 1,
        fixed_buffers: false,
        register_files: false,
        huge_pages: false,
        buffers: None,
        spin_polls: 0,
        time_s: Some(Duration::from_secs(6)),
        events: 0,
        warmup_s: Duration::ZERO,
        direct: true,
        dsync: false,
        sync: false,
        noatime: true,
        fsync_every: 0,
        fsync_mode: FsyncMode::Fdatasync,
        fsync_end: false,
        misalign_bytes: 0,
        distribution: Distribution::Uniform,
        rate_iops: None,
        rw_ratio: 1.5,
        seed: 42,
        report_interval_s: Duration::from_millis(250),
        percentiles: DEFAULT_PERCENTILES.to_vec(),
    }
}

fn environment(host: &str, scheduler: &str) -> Environment {
    Environment {
        hostname: host.into(),
        kernel: "6.1.0-test".into(),
        cpus: 4,
        mem_total_bytes: 8 << 30,
        filesystem: Some("ext4".into()),
        mount_point: Some("/data".into()),
        mount_options: Some("rw,noatime".into()),
        devices: vec![DeviceEnv {
            name: "vda".into(),
            kind: "disk".into(),
            scheduler: Some(scheduler.into()),
            rotational: Some(false),
            write_cache: Some("write back".into()),
            logical_block_size_bytes: Some(512),
            physical_block_size_bytes: Some(512),
        }],
        open_flags: vec!["O_DIRECT".into(), "O_NOATIME".into()],
        page_cache: None,
        clock: Some("CLOCK_MONOTONIC".into()),
        engine: None,
    }
}

/// A run of 24 intervals of 250 ms: `ios` reads per interval around `base` ns; every
/// `dip`-th interval (from the third) does a tenth of the I/Os at five times the latency.
fn run(
    threads: u32,
    host: &str,
    scheduler: &str,
    ios: u64,
    base: u64,
    dip: Option<usize>,
) -> BenchResult {
    let len = 0.25;
    let mut intervals = Vec::new();
    let mut sum = LatencyHistogram::new();
    for k in 0..24usize {
        let dipped = dip.is_some_and(|d| k % d == 2);
        let (n, b) = if dipped {
            (ios / 10, base * 5)
        } else {
            (ios, base)
        };
        let mut h = LatencyHistogram::new();
        for j in 0..n {
            let x = (j * 7919 + k as u64 * 104_729) % 1000;
            h.record(if x % 100 == 7 {
                b * 8 + x
            } else {
                b + (x % 50) * b / 400
            });
        }
        sum.merge(&h);
        let empty = LatencyHistogram::new();
        let bytes = n * 16384;
        intervals.push(Interval {
            start_s: k as f64 * len,
            end_s: (k + 1) as f64 * len,
            warmup: false,
            read: OpInterval::from_hist(&h, bytes, len),
            write: OpInterval::from_hist(&empty, 0, len),
            fsync: OpInterval::from_hist(&empty, 0, len),
            total: OpInterval::from_hist(&h, bytes, len),
            devices: Vec::new(),
            histograms: Some(IntervalHistograms::of(&h, &empty, &empty)),
            cpu: None,
        });
    }
    let secs = 24.0 * len;
    let count = sum.count();
    let op = |h: &LatencyHistogram, bytes: u64| OpSummary {
        count: h.count(),
        bytes,
        iops: h.count() as f64 / secs,
        bytes_per_s: bytes as f64 / secs,
        lat_ns: LatStats::from_hist(h, &DEFAULT_PERCENTILES),
        service_lat_ns: None,
        histogram: h.to_data(),
        service_histogram: None,
    };
    let none = LatencyHistogram::new();
    BenchResult {
        schema: BENCH_SCHEMA.into(),
        dbio_version: "0.1.0".into(),
        started_at: "2026-11-24T08:00:00Z".into(),
        spec: spec(threads),
        environment: environment(host, scheduler),
        warnings: Vec::new(),
        interrupted: false,
        intervals,
        summary: Summary {
            measured_s: secs,
            total_s: secs,
            read: op(&sum, count * 16384),
            write: op(&none, 0),
            fsync: op(&none, 0),
            total: TotalSummary {
                count,
                iops: count as f64 / secs,
                bytes_per_s: (count * 16384) as f64 / secs,
            },
            threads: Vec::new(),
            fairness: Fairness::default(),
            engine_calls: EngineCalls::default(),
            process_io: None,
            device_check: None,
        },
        default_run: None,
    }
}

fn loaded(name: &str, r: BenchResult) -> Loaded {
    Loaded {
        source: Source::Bench(PathBuf::from(format!("results/{name}.json"))),
        result: r,
    }
}

/// Four runs: threads 1 and 2 on db1 (none), threads 2 on db2 (none: merges with db1's),
/// threads 2 on db1 with mq-deadline, which dips every 4 intervals.
fn sample() -> (Vec<Loaded>, Report) {
    let runs = vec![
        loaded("t1", run(1, "db1", "none", 1000, 100_000, None)),
        loaded("t2", run(2, "db1", "none", 1900, 105_000, None)),
        loaded("t2-db2", run(2, "db2", "none", 1800, 110_000, None)),
        loaded(
            "t2-deadline",
            run(2, "db1", "mq-deadline", 1500, 130_000, Some(4)),
        ),
    ];
    let report = analyse(&runs, &ReportOptions::default());
    (runs, report)
}

fn export(e: &dyn Exporter<Report>, r: &Report) -> String {
    e.to_string(r).unwrap()
}

#[test]
fn text_snapshot() {
    insta::assert_snapshot!("text", export(&Text::default(), &sample().1));
}

#[test]
fn csv_snapshot() {
    insta::assert_snapshot!("csv", export(&Csv::default(), &sample().1));
}

#[test]
fn json_snapshot() {
    let r = sample().1;
    let json = Json
        .to_string(&Document::new(dbio_schema::doc::REPORT, &r))
        .unwrap();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r, "the JSON reads back to the same report");
    // The writer's version (the runs carry their own, fixed in the sample).
    let json = json.replacen(
        &format!("\"dbio_version\": \"{}\"", dbio_schema::doc::DBIO_VERSION),
        "\"dbio_version\": \"[version]\"",
        1,
    );
    insta::assert_snapshot!("json", json);
}

#[test]
fn runs_of_one_workload_merge_exactly() {
    let (runs, r) = sample();
    assert_eq!(r.points.len(), 3);
    let p = &r.points[1];
    assert_eq!(p.runs, [1, 2]);
    assert_eq!(p.params.host, "db1,db2");
    let mut all = LatencyHistogram::new();
    for i in [1, 2] {
        all.merge(&LatencyHistogram::from_data(
            &runs[i].result.summary.read.histogram,
        ));
    }
    let read = &p.ops[0];
    assert_eq!(read.count, all.count());
    for q in DEFAULT_PERCENTILES {
        assert_eq!(read.lat_ns.get(q), Some(all.percentile(q)), "p{q}");
    }
    assert_eq!(p.p99_ns, all.percentile(99.0));
    assert_eq!(read.distribution, log_bins(&all.to_data()));
    assert_eq!(
        read.distribution.iter().map(|b| b.count).sum::<u64>(),
        all.count()
    );
}

#[test]
fn per_interval_percentiles_come_from_the_interval_histograms() {
    let (runs, r) = sample();
    for (x, l) in r.runs.iter().zip(&runs) {
        assert_eq!(x.percentiles_from, "interval histograms");
        for (iv, src) in x.intervals.iter().zip(&l.result.intervals) {
            assert_eq!(
                iv.lat_ns, src.total.lat_ns,
                "same histograms, same percentiles"
            );
        }
    }
    // A result from before interval histograms falls back to the interval figures, and says so.
    let mut old = runs[0].result.clone();
    for iv in &mut old.intervals {
        iv.histograms = None;
    }
    let r = analyse(&[loaded("old", old)], &ReportOptions::default());
    assert_eq!(r.runs[0].percentiles_from, "interval figures");
}

#[test]
fn the_dip_every_fourth_interval_is_found_and_flat_runs_raise_no_alarm() {
    let r = sample().1;
    let d = &r.runs[3];
    let p = d.stalls.periodic.as_ref().expect("periodic dips");
    assert_eq!(p.period_intervals, 4);
    assert_eq!(p.period_s, 1.0);
    assert_eq!(p.first_dip_s, 0.5);
    assert_eq!(d.stalls.intervals, 6);
    for x in &r.runs[..3] {
        assert_eq!(x.stalls.intervals, 0, "{}", x.label);
        assert!(x.stalls.periodic.is_none(), "{}", x.label);
        assert!(
            x.steady.reached && x.steady.from_interval == Some(0),
            "{}",
            x.label
        );
    }
    assert!(
        !d.steady.reached,
        "a run that dips every second is not steady"
    );
}

#[test]
fn a_threads_curve_and_a_scheduler_comparison() {
    let r = sample().1;
    assert_eq!(r.curves.len(), 1);
    let c = &r.curves[0];
    assert_eq!(c.axis, "threads");
    assert_eq!(
        c.points.iter().map(|p| p.threads).collect::<Vec<_>>(),
        [1, 2]
    );
    assert!(c.knee.is_some());
    assert_eq!(r.comparisons.len(), 1);
    let cmp = &r.comparisons[0];
    assert_eq!(cmp.parameter, "scheduler");
    assert_eq!(
        (cmp.a_value.as_str(), cmp.b_value.as_str()),
        ("none", "mq-deadline")
    );
    assert_eq!((cmp.a_intervals, cmp.b_intervals), (48, 24));
    assert!(cmp.significant, "{cmp:?}");
    assert!(cmp.iops_ratio < 1.0);
}

#[test]
fn html_is_one_self_contained_page_with_every_chart_labelled() {
    let r = sample().1;
    let html = export(&Html, &r);
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    for forbidden in ["<script", "http://", "https://", "<link", "@import", "url("] {
        let hits: Vec<&str> = html.matches(forbidden).collect();
        // plotters' SVG root names its XML namespace: the only URL allowed.
        let allowed = if forbidden == "http://" {
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        } else {
            0
        };
        assert_eq!(hits.len(), allowed, "{forbidden} in the page");
    }
    // One chart per run, one per point, one per scaling axis, one for the comparisons.
    assert_eq!(html.matches("<svg").count(), 4 + 3 + 1 + 1);
    // Every chart is labelled with the version, host, target, device and filesystem.
    let captions = html.matches("dbio 0.1.0 · ").count();
    assert_eq!(captions, 4 + 3 + 1 + 1);
    assert!(html.contains("db1 · /data/dbio · device vda · fs ext4 · rndrd 16KiB threads=2"));
    assert!(html.contains("periodic dips every 1.00s"));
}
