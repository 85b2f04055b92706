//! The output formats of `dbio bench` (text, CSV, sysbench, JSON) on constructed,
//! deterministic results: snapshots of each, and the facts each format must keep.

use dbio_report::export::sysbench::bench as bench_sysbench;
use dbio_report::export::text::bench as bench_text;
use dbio_report::export::{Csv, Json, Sysbench, Text};
use dbio_report::Exporter;
use dbio_schema::bench::*;
use dbio_schema::hist::LatencyHistogram;
use std::path::PathBuf;
use std::time::Duration;

/// A deterministic latency generator: `n` values spread around `base` ns.
fn lat(base: u64, n: u64, salt: u64) -> impl Iterator<Item = u64> {
    (0..n).map(move |j| {
        let x = (j * 7919 + salt * 104_729) % 1000;
        // a body around base, a tail of one value in a hundred at 10x
        if x % 100 == 7 {
            base * 10 + x * 37
        } else {
            base + (x % 50) * base / 500
        }
    })
}

fn spec(rate: Option<f64>) -> Spec {
    Spec {
        target: Target::Dir(PathBuf::from("/data/dbio")),
        mode: Mode::Rndrw,
        engine: EngineKind::Sync,
        block_size_bytes: 16384,
        file_num: 4,
        file_total_size_bytes: 64 << 20,
        threads: 2,
        iodepth: 1,
        submit_batch: 1,
        reap_batch: 1,
        fixed_buffers: false,
        register_files: false,
        huge_pages: false,
        buffers: None,
        spin_polls: 0,
        time_s: Some(Duration::from_secs(2)),
        events: 0,
        warmup_s: Duration::from_secs(1),
        direct: true,
        dsync: false,
        sync: false,
        noatime: true,
        fsync_every: 100,
        fsync_mode: FsyncMode::Fdatasync,
        fsync_end: true,
        misalign_bytes: 0,
        distribution: Distribution::Uniform,
        rate_iops: rate,
        rw_ratio: 1.5,
        seed: 42,
        report_interval_s: Duration::from_secs(1),
        percentiles: DEFAULT_PERCENTILES.to_vec(),
    }
}

fn environment() -> Environment {
    Environment {
        hostname: "testhost".into(),
        kernel: "6.1.0-test".into(),
        cpus: 2,
        mem_total_bytes: 4 << 30,
        filesystem: Some("ext4".into()),
        mount_point: Some("/".into()),
        mount_options: Some("rw,relatime".into()),
        devices: vec![
            DeviceEnv {
                name: "vda1".into(),
                kind: "partition".into(),
                ..Default::default()
            },
            DeviceEnv {
                name: "vda".into(),
                kind: "disk".into(),
                scheduler: Some("mq-deadline".into()),
                rotational: Some(false),
                write_cache: Some("write back".into()),
                logical_block_size_bytes: Some(512),
                physical_block_size_bytes: Some(512),
            },
        ],
        open_flags: vec!["O_RDWR".into(), "O_DIRECT".into()],
        page_cache: Some("dropped".into()),
        clock: Some("tsc (2100.00 MHz, calibrated against CLOCK_MONOTONIC)".into()),
        engine: Some(
            "sync: pread/pwrite and fsync/fdatasync system calls, one I/O at a time".into(),
        ),
    }
}

/// Per-op counts and base latencies of interval `k`.
fn plan(spec: &Spec, k: u64) -> [(u64, u64); 3] {
    let r = if spec.mode.reads() { 1500 + 100 * k } else { 0 };
    let w = if spec.mode.writes() { 1000 + 50 * k } else { 0 };
    let f = if spec.mode.writes() && spec.fsync_every > 0 {
        20 + k
    } else {
        0
    };
    [(r, 80_000 + 1000 * k), (w, 120_000), (f, 900_000)]
}

/// Builds a whole result the way the engine does: per-interval histograms, merged into the
/// summary for the measured intervals.
fn build(spec: Spec, intervals: u64, warmup_intervals: u64) -> BenchResult {
    let bs = spec.block_size_bytes;
    let rated = spec.rate_iops.is_some();
    let mut sum = [
        LatencyHistogram::new(),
        LatencyHistogram::new(),
        LatencyHistogram::new(),
    ];
    let mut svc = sum.clone();
    let mut ivs = Vec::new();
    let mut calls = EngineCalls::default();
    let len = spec.report_interval_s.as_secs_f64();
    for k in 0..intervals {
        let warm = k < warmup_intervals;
        let mut hs = [
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        ];
        let mut total = LatencyHistogram::new();
        for (op, &(n, base)) in plan(&spec, k).iter().enumerate() {
            for v in lat(base, n, k * 3 + op as u64) {
                hs[op].record(v);
                total.record(v);
                if !warm {
                    sum[op].record(v);
                    // service time: what is left once the queueing delay (a fifth) is removed
                    svc[op].record(v - v / 5);
                }
            }
        }
        calls.reads += hs[0].count();
        calls.writes += hs[1].count();
        calls.fsyncs += hs[2].count();
        let rb = hs[0].count() * bs;
        let wb = hs[1].count() * bs;
        ivs.push(Interval {
            start_s: k as f64 * len,
            end_s: (k + 1) as f64 * len,
            warmup: warm,
            read: OpInterval::from_hist(&hs[0], rb, len),
            write: OpInterval::from_hist(&hs[1], wb, len),
            fsync: OpInterval::from_hist(&hs[2], 0, len),
            total: OpInterval::from_hist(&total, rb + wb, len),
            devices: vec![DeviceInterval {
                name: "vda".into(),
                r_per_s: 1500.0 + k as f64,
                w_per_s: 980.0,
                f_per_s: 20.0,
                rkb_per_s: 24000.0,
                wkb_per_s: 15680.0,
                rrqm_pct: 0.0,
                wrqm_pct: 2.5,
                r_await_ms: 0.09,
                w_await_ms: 0.12,
                rareq_sz_kb: 16.0,
                wareq_sz_kb: 16.0,
                aqu_sz: 0.25,
                util_pct: 24.5,
            }],
            cpu: Some(dbio_schema::bench::CpuShares {
                usr_pct: 12.5,
                sys_pct: 30.0 + k as f64,
                iowait_pct: 10.0,
                steal_pct: 0.0,
                idle_pct: 47.5 - k as f64,
            }),
            histograms: None,
        });
    }
    calls.syscalls = calls.reads + calls.writes + calls.fsyncs;
    let measured = (intervals - warmup_intervals) as f64 * len;
    let op = |i: usize, bytes_per: u64| {
        let h = &sum[i];
        OpSummary {
            count: h.count(),
            bytes: h.count() * bytes_per,
            iops: h.count() as f64 / measured,
            bytes_per_s: (h.count() * bytes_per) as f64 / measured,
            lat_ns: LatStats::from_hist(h, &spec.percentiles),
            service_lat_ns: rated.then(|| LatStats::from_hist(&svc[i], &spec.percentiles)),
            histogram: h.to_data(),
            service_histogram: rated.then(|| svc[i].to_data()),
        }
    };
    let (read, write, fsync) = (op(0, bs), op(1, bs), op(2, 0));
    let count = read.count + write.count + fsync.count;
    let nthreads = spec.threads as u64;
    let events = read.count + write.count;
    let busy_total = (sum[0].sum() + sum[1].sum() + sum[2].sum()) as f64 / 1e9;
    let threads: Vec<ThreadSummary> = (0..nthreads)
        .map(|t| ThreadSummary {
            thread: t as u32,
            events: events / nthreads + u64::from(t < events % nthreads),
            fsyncs: fsync.count / nthreads + u64::from(t < fsync.count % nthreads),
            busy_s: busy_total / nthreads as f64 + if t == 0 { 0.004 } else { -0.004 },
        })
        .collect();
    let summary = Summary {
        measured_s: measured,
        total_s: intervals as f64 * len,
        total: TotalSummary {
            count,
            iops: count as f64 / measured,
            bytes_per_s: (read.bytes + write.bytes) as f64 / measured,
        },
        fairness: Fairness::of(&threads),
        threads,
        engine_calls: calls,
        process_io: Some(ProcessIo {
            rchar: calls.reads * bs,
            wchar: calls.writes * bs,
            syscr: calls.reads,
            syscw: calls.writes,
            read_bytes: calls.reads * bs,
            write_bytes: calls.writes * bs,
        }),
        device_check: Some(DeviceCheck {
            device: "vda".into(),
            app_ios: read.count + write.count,
            device_requests: read.count + write.count - 12,
            device_merged: 12,
            device_flushes: 40,
            app_in_flight: 0.26,
            device_aqu_sz: 0.25,
            agree: true,
            notes: vec!["the device completed one request per dbio I/O (12 merged)".into()],
        }),
        read,
        write,
        fsync,
    };
    BenchResult {
        schema: BENCH_SCHEMA.into(),
        dbio_version: "0.1.0".into(),
        started_at: "2026-01-02T03:04:05Z".into(),
        spec,
        environment: environment(),
        warnings: vec![],
        interrupted: false,
        intervals: ivs,
        summary,
        default_run: None,
    }
}

/// Reads, writes and fsyncs; 3 intervals, the first one warmup; 2 threads.
fn sample(rate: bool) -> BenchResult {
    let mut r = build(spec(rate.then_some(2000.0)), 3, 1);
    if !rate {
        r.warnings = vec!["the file set (64MiB) fits in RAM (4GiB) and reads are buffered".into()];
    }
    r
}

fn export(e: &dyn Exporter<BenchResult>, r: &BenchResult) -> String {
    e.to_string(r).unwrap()
}

// ---------------------------------------------------------------- snapshots

#[test]
fn text_snapshot() {
    insta::assert_snapshot!("text", export(&Text::default(), &sample(false)));
    insta::assert_snapshot!("text_rate", export(&Text::default(), &sample(true)));
}

#[test]
fn csv_snapshot() {
    insta::assert_snapshot!("csv", export(&Csv::default(), &sample(false)));
}

#[test]
fn sysbench_snapshot() {
    insta::assert_snapshot!("sysbench", export(&Sysbench, &sample(false)));
    insta::assert_snapshot!("sysbench_rate", export(&Sysbench, &sample(true)));
}

#[test]
fn json_snapshot() {
    insta::assert_snapshot!("json_rate", export(&Json, &sample(true)));
    let plain = export(&Json, &sample(false));
    insta::assert_snapshot!("json", plain);
}

// ---------------------------------------------------------------- facts: pieces

#[test]
fn live_pieces_concatenate_to_the_exported_document() {
    for r in [sample(false), sample(true)] {
        let mut live = bench_text::header(&r.spec, &r.environment, &r.warnings);
        for i in &r.intervals {
            live += &bench_text::interval_line(i, &r.spec);
        }
        live += &bench_text::summary(&r);
        assert_eq!(live, export(&Text::default(), &r));

        let mut live = bench_sysbench::header(&r.spec, &r.environment, &r.warnings);
        for i in &r.intervals {
            live += &bench_sysbench::interval_line(i, &r.spec);
        }
        live += &bench_sysbench::summary(&r);
        assert_eq!(live, export(&Sysbench, &r));
    }
}

// ---------------------------------------------------------------- facts: text

#[test]
fn text_has_one_line_per_interval_with_warmup_marked() {
    let r = sample(false);
    let out = export(&Text::default(), &r);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && l.contains(" | "))
        .collect();
    assert_eq!(lines.len(), r.intervals.len(), "{out}");
    assert_eq!(lines.iter().filter(|l| l.ends_with("(warmup)")).count(), 1);
    assert!(lines[0].ends_with("(warmup)"));
    // rndrw with --fsync-every: read, write and fsync groups; the second interval's read IOPS
    let i = &r.intervals[1];
    assert!(
        lines[1].contains(&format!(" {:.0} ", i.read.iops)),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains(&format!(" {:.2} ", i.read.bytes_per_s / 1048576.0)));
    assert_eq!(lines[1].matches(" | ").count(), 3);
    assert!(out.contains("warning: the file set"));
}

#[test]
fn text_interval_columns_follow_the_mode() {
    let mut s = spec(None);
    s.mode = Mode::Rndrd;
    s.fsync_every = 0;
    let r = build(s, 2, 0);
    let out = export(&Text::default(), &r);
    assert!(out.contains("| read"));
    assert!(!out.contains("| write"));
    assert!(!out.contains("| fsync"));
    // a write mode without --fsync-every has no fsync column
    let mut s = spec(None);
    s.mode = Mode::Rndwr;
    s.fsync_every = 0;
    let out = export(&Text::default(), &build(s, 2, 0));
    assert!(out.contains("| write") && !out.contains("| read") && !out.contains("| fsync"));
}

#[test]
fn text_summary_lists_every_configured_percentile_and_service_rows_only_with_rate() {
    let r = sample(false);
    let out = bench_text::summary(&r);
    let head = out.lines().find(|l| l.starts_with("op ")).unwrap();
    let cols: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "op", "count", "IOPS", "MiB/s", "min", "mean", "p50", "p90", "p95", "p99", "p99.9",
            "p99.99", "max"
        ]
    );
    let read = out.lines().find(|l| l.starts_with("read ")).unwrap();
    let cells: Vec<&str> = read.split_whitespace().collect();
    assert_eq!(cells[1], r.summary.read.count.to_string());
    assert_eq!(cells[2], format!("{:.1}", r.summary.read.iops));
    assert_eq!(
        cells[8],
        dbio_schema::units::format_ns(r.summary.read.lat_ns.get(95.0).unwrap() as f64)
    );
    assert!(!out.contains("service"));
    assert!(!out.contains("INTERRUPTED"));

    let rated = bench_text::summary(&sample(true));
    assert_eq!(
        rated.lines().filter(|l| l.starts_with(" service")).count(),
        3
    );
    assert!(rated.contains("intended start at 2000 IOPS"));

    let mut r = sample(false);
    r.interrupted = true;
    r.spec.percentiles = vec![99.0];
    let out = bench_text::summary(&r);
    assert!(out.contains("INTERRUPTED"));
    let head = out.lines().find(|l| l.starts_with("op ")).unwrap();
    assert!(
        head.ends_with("min  mean  p99  max")
            || head.split_whitespace().collect::<Vec<_>>()
                == ["op", "count", "IOPS", "MiB/s", "min", "mean", "p99", "max"]
    );
}

#[test]
fn text_summary_shows_fairness_and_engine_calls() {
    let r = sample(false);
    let out = bench_text::summary(&r);
    for t in &r.summary.threads {
        assert!(
            out.contains(&format!("thread {}: {} events", t.thread, t.events)),
            "{out}"
        );
    }
    let e = r.summary.engine_calls;
    assert!(out.contains(&format!(
        "{} reads, {} writes, {} fsyncs, {} system calls (1.00 per I/O)",
        e.reads, e.writes, e.fsyncs, e.syscalls
    )));
}

// ---------------------------------------------------------------- facts: csv

#[test]
fn csv_has_a_header_and_one_row_per_interval_that_parse_back() {
    let r = sample(false);
    let out = export(&Csv::default(), &r);
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), r.intervals.len() + 1);
    assert_eq!(
        rows[0][..9],
        [
            "start_s",
            "end_s",
            "warmup",
            "read_count",
            "read_iops",
            "read_bytes_per_s",
            "read_p50_ns",
            "read_p99_ns",
            "read_max_ns"
        ]
    );
    assert_eq!(
        rows[0].len(),
        3 + 4 * 6 + 9,
        "one device (vda) adds 9 iostat columns"
    );
    assert_eq!(rows[0][3 + 4 * 6 - 1], "total_max_ns");
    assert_eq!(rows[0].last(), Some(&"vda_f_per_s"));
    for (row, i) in rows[1..].iter().zip(&r.intervals) {
        assert_eq!(row.len(), rows[0].len());
        let col = |name: &str| row[rows[0].iter().position(|h| *h == name).unwrap()];
        assert_eq!(col("warmup").parse::<bool>().unwrap(), i.warmup);
        assert_eq!(col("end_s").parse::<f64>().unwrap(), i.end_s);
        assert_eq!(col("write_count").parse::<u64>().unwrap(), i.write.count);
        assert_eq!(col("read_iops").parse::<f64>().unwrap(), i.read.iops);
        assert_eq!(
            col("vda_r_per_s").parse::<f64>().unwrap(),
            i.devices[0].r_per_s
        );
        assert_eq!(
            col("vda_aqu_sz").parse::<f64>().unwrap(),
            i.devices[0].aqu_sz
        );
        assert_eq!(
            col("fsync_p99_ns").parse::<u64>().unwrap(),
            i.fsync.lat_ns.p99
        );
        assert_eq!(
            col("total_bytes_per_s").parse::<f64>().unwrap(),
            i.total.bytes_per_s
        );
    }
}

// ---------------------------------------------------------------- facts: json

#[test]
fn json_round_trips_and_has_the_promised_keys() {
    for r in [sample(false), sample(true)] {
        let out = export(&Json, &r);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        for k in ["schema", "spec", "environment", "intervals", "summary"] {
            assert!(keys.iter().any(|x| *x == k), "missing {k}");
        }
        for op in ["read", "write", "fsync"] {
            for k in ["count", "iops", "bytes_per_s", "lat_ns"] {
                assert!(v["summary"][op].get(k).is_some(), "summary.{op}.{k}");
            }
            assert_eq!(
                v["summary"][op].get("service_lat_ns").is_some(),
                r.spec.rate_iops.is_some()
            );
        }
        assert_eq!(
            v["summary"]["read"]["lat_ns"]["p99_9"],
            r.summary.read.lat_ns.get(99.9).unwrap()
        );
        // Everything reads back, floats to the last bit (serde_json's `float_roundtrip`).
        let back: BenchResult = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (&back.spec, &back.environment, &back.intervals),
            (&r.spec, &r.environment, &r.intervals)
        );
        assert_eq!(back.summary, r.summary);
        for op in ["read", "write", "fsync"] {
            let (a, b) = match op {
                "read" => (&back.summary.read, &r.summary.read),
                "write" => (&back.summary.write, &r.summary.write),
                _ => (&back.summary.fsync, &r.summary.fsync),
            };
            assert_eq!(a.histogram, b.histogram);
            assert_eq!(a.service_histogram, b.service_histogram);
            assert_eq!(
                (a.count, a.lat_ns.min, a.lat_ns.max),
                (b.count, b.lat_ns.min, b.lat_ns.max)
            );
            assert_eq!(a.lat_ns.percentiles, b.lat_ns.percentiles);
            assert_eq!(a.lat_ns.mean, b.lat_ns.mean);
        }
        assert_eq!(back.summary.engine_calls, r.summary.engine_calls);
    }
}

// ---------------------------------------------------------------- facts: sysbench

fn line_after<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("no line with {label:?} in\n{out}"))
}

#[test]
fn sysbench_figures_are_dbio_figures_in_sysbench_units() {
    let r = sample(false);
    let out = export(&Sysbench, &r);
    let sm = &r.summary;
    let mib = |b: f64| format!("{:.2}", b / 1048576.0);
    assert!(line_after(&out, "read, MiB/s:").ends_with(&format!(" {}", mib(sm.read.bytes_per_s))));
    assert!(
        line_after(&out, "written, MiB/s:").ends_with(&format!(" {}", mib(sm.write.bytes_per_s)))
    );
    assert!(line_after(&out, "reads/s:").ends_with(&format!(" {:.2}", sm.read.iops)));
    assert!(line_after(&out, "fsyncs/s:").ends_with(&format!(" {:.2}", sm.fsync.iops)));
    assert!(
        line_after(&out, "total number of events:").ends_with(&format!(
            " {}",
            sm.read.count + sm.write.count + sm.fsync.count
        ))
    );
    assert!(line_after(&out, "total time:").ends_with(&format!(" {:.4}s", sm.measured_s)));

    // one histogram over all operations: min of all, max of all, sum of all
    let all_min = sm
        .read
        .lat_ns
        .min
        .min(sm.write.lat_ns.min)
        .min(sm.fsync.lat_ns.min);
    let all_max = sm
        .read
        .lat_ns
        .max
        .max(sm.write.lat_ns.max)
        .max(sm.fsync.lat_ns.max);
    let sum_ns = sm.read.histogram.sum_ns + sm.write.histogram.sum_ns + sm.fsync.histogram.sum_ns;
    assert!(line_after(&out, "min:").ends_with(&format!(" {:.2}", all_min as f64 / 1e6)));
    assert!(line_after(&out, "max:").ends_with(&format!(" {:.2}", all_max as f64 / 1e6)));
    assert!(line_after(&out, "sum:").ends_with(&format!(" {:.2}", sum_ns as f64 / 1e6)));
    let merged = bench_sysbench::merged_histogram(&r);
    assert_eq!(
        merged.count(),
        sm.read.count + sm.write.count + sm.fsync.count
    );
    assert!(line_after(&out, "95th percentile:")
        .ends_with(&format!(" {:.2}", merged.percentile(95.0) as f64 / 1e6)));

    // interval lines: measured intervals only, timed from the end of the warmup, p95 of all
    let iv: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(iv.len(), 2);
    let i = &r.intervals[1];
    assert_eq!(
        iv[0],
        format!(
            "[ 1s ] reads: {} MiB/s writes: {} MiB/s fsyncs: {:.2}/s latency (ms,95%): {:.3}",
            mib(i.read.bytes_per_s),
            mib(i.write.bytes_per_s),
            i.fsync.iops,
            i.total.lat_ns.p95 as f64 / 1e6
        )
    );
    assert!(iv[1].starts_with("[ 2s ] "));

    // fairness counts fsyncs as events, like sysbench
    let ev: Vec<f64> = sm
        .threads
        .iter()
        .map(|t| (t.events + t.fsyncs) as f64)
        .collect();
    let mean = ev.iter().sum::<f64>() / ev.len() as f64;
    assert!(line_after(&out, "events (avg/stddev):").contains(&format!(" {mean:.4}/")));
    assert!(
        line_after(&out, "execution time (avg/stddev):").ends_with(&format!(
            " {:.4}/{:.2}",
            sm.fairness.busy_mean_s, sm.fairness.busy_stddev_s
        ))
    );
}

#[test]
fn sysbench_sizes_print_like_sysbench() {
    use bench_sysbench::print_value_size as p;
    assert_eq!(p(1048576.0), "1Mi");
    assert_eq!(p(1572864.0), "1.5Mi");
    assert_eq!(p(16384.0), "16Ki");
    assert_eq!(p(4194304.0), "4Mi");
    assert_eq!(p(2147483648.0), "2Gi");
    assert_eq!(p(512.0), "512");
    assert_eq!(p(1000.0 * 1024.0 * 1024.0 / 3.0), "333.33Mi");
}

/// The result of a dbio run configured like the fixture's sysbench run.
fn like_fixture() -> BenchResult {
    let mut s = spec(None);
    s.threads = 1;
    s.file_num = 4;
    s.file_total_size_bytes = 4 << 20;
    s.direct = false;
    s.fsync_mode = FsyncMode::Fsync;
    s.warmup_s = Duration::ZERO;
    s.seed = 1;
    let mut r = build(s, 2, 0);
    r.warnings.clear();
    r
}

#[test]
fn sysbench_layout_matches_a_real_sysbench_1_0_20_run_line_by_line() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/bench/sysbench-1.0.20-fileio-rndrw.txt"
    );
    let theirs = std::fs::read_to_string(path).unwrap();
    let ours = export(&Sysbench, &like_fixture());
    assert!(theirs.starts_with("sysbench 1.0.20 ") && ours.starts_with("dbio "));
    assert!(ours.lines().next().unwrap().contains("sysbench 1.0.20"));
    // sysbench's interval percentile is --percentile (95), and so is dbio's
    assert!(theirs.contains("latency (ms,95%)") && ours.contains("latency (ms,95%)"));
    if let Err(e) = bench_sysbench::same_layout_doc(&theirs, &ours) {
        panic!("{e}\n--- sysbench\n{theirs}\n--- dbio\n{ours}");
    }
    assert!(ours.ends_with("\n\n") && theirs.ends_with("\n\n"));
}

#[test]
fn the_layout_check_catches_a_shifted_or_reformatted_number() {
    use bench_sysbench::same_layout;
    let real = "         max:                                   58.21";
    assert!(same_layout(
        real,
        "         max:                                  123.45",
        true
    )
    .is_ok());
    assert!(same_layout(
        real,
        "         max:                                    1.80",
        true
    )
    .is_ok());
    // %38.2f instead of %39.2f: same padding as the reference by chance, but ends a column early
    assert!(same_layout(
        real,
        "         max:                                   1.80",
        true
    )
    .is_err());
    assert!(same_layout(
        real,
        "         max:                                   123.45",
        true
    )
    .is_err());
    assert!(same_layout(
        real,
        "         max:                                   58.210",
        true
    )
    .is_err());
    assert!(same_layout(
        real,
        "         mx:                                    58.21",
        true
    )
    .is_err());
    let left = "    reads/s:                      43223.20";
    assert!(same_layout(left, "    reads/s:                      1.00", false).is_ok());
    assert!(same_layout(left, "    reads/s:                     43223.20", false).is_err());
    let iv =
        "[ 1s ] reads: 618.01 MiB/s writes: 412.01 MiB/s fsyncs: 2633.64/s latency (ms,99%): 0.004";
    assert!(same_layout(
        iv,
        "[ 12s ] reads: 1.00 MiB/s writes: 4123.01 MiB/s fsyncs: 0.00/s latency (ms,99%): 12.100",
        false
    )
    .is_ok());
    assert!(same_layout(
        iv,
        "[ 1s ] reads: 1.00 MiB/s  writes: 412.01 MiB/s fsyncs: 0.00/s latency (ms,99%): 0.004",
        false
    )
    .is_err());
}

/// What scripts commonly take from sysbench output: `grep LABEL | awk '{print $N}'`.
const GREPS: [(&str, usize); 14] = [
    ("reads/s:", 1),
    ("writes/s:", 1),
    ("fsyncs/s:", 1),
    ("read, MiB/s:", 2),
    ("written, MiB/s:", 2),
    ("total time:", 2),
    ("total number of events:", 4),
    ("min:", 1),
    ("avg:", 1),
    ("max:", 1),
    ("th percentile:", 2),
    ("sum:", 1),
    ("events (avg/stddev):", 2),
    ("execution time (avg/stddev):", 3),
];

fn awk_field(out: &str, label: &str, n: usize) -> f64 {
    let f = line_after(out, label).split_whitespace().nth(n).unwrap();
    let f = f.split('/').next().unwrap().trim_end_matches('s');
    f.parse()
        .unwrap_or_else(|_| panic!("{label}: field {n} = {f:?} is not a number"))
}

#[test]
fn what_scripts_grep_from_sysbench_parses_the_same_from_dbio() {
    let theirs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/bench/sysbench-1.0.20-fileio-rndrw.txt"
    ))
    .unwrap();
    let r = like_fixture();
    let ours = export(&Sysbench, &r);
    for (label, n) in GREPS {
        awk_field(&theirs, label, n);
        awk_field(&ours, label, n);
    }
    assert_eq!(
        awk_field(&ours, "reads/s:", 1),
        (r.summary.read.iops * 100.0).round() / 100.0
    );
    assert_eq!(
        awk_field(&ours, "total number of events:", 4) as u64,
        r.summary.total.count
    );
    // interval lines: `awk '{print $2, $5, $8, $11, $14}'` -> time, read MiB/s, write MiB/s, fsyncs, latency
    for out in [&theirs, &ours] {
        for l in out.lines().filter(|l| l.starts_with("[ ")) {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 14, "{l}");
            for k in [1, 4, 7, 10, 13] {
                f[k].trim_end_matches("/s")
                    .trim_end_matches('s')
                    .parse::<f64>()
                    .unwrap_or_else(|_| panic!("{l}: field {k}"));
            }
        }
    }
}

#[test]
fn text_interval_times_keep_the_report_interval_resolution() {
    let mut s = spec(None);
    s.report_interval_s = Duration::from_millis(250);
    let mut r = build(s, 3, 0);
    for (k, i) in r.intervals.iter_mut().enumerate() {
        i.end_s = 0.25 * (k + 1) as f64;
    }
    let lines: Vec<String> = r
        .intervals
        .iter()
        .map(|i| bench_text::interval_line(i, &r.spec))
        .collect();
    assert!(lines[0].trim_start().starts_with("0.25s |"), "{}", lines[0]);
    assert!(lines[1].trim_start().starts_with("0.50s |"), "{}", lines[1]);
    assert!(lines[2].trim_start().starts_with("0.75s |"), "{}", lines[2]);
}

#[test]
fn text_interval_iops_are_whole_numbers_when_the_rate_is_whole() {
    // sample(): fsyncs run at 20-22 per 1s interval, reads at 1500+: both print as integers.
    let r = sample(false);
    let line = bench_text::interval_line(&r.intervals[1], &r.spec);
    let fsync_group = line.rsplit(" | ").next().unwrap();
    let iops = fsync_group.split_whitespace().next().unwrap();
    assert_eq!(iops, format!("{:.0}", r.intervals[1].fsync.iops), "{line}");
    assert!(!line.contains(".0 "), "{line}");
    // a rate that is not whole keeps one decimal: 5 fsyncs in 2s
    let mut r = sample(false);
    r.intervals[1].fsync.iops = 2.5;
    let line = bench_text::interval_line(&r.intervals[1], &r.spec);
    assert!(line.contains(" 2.5 "), "{line}");
}

#[test]
fn text_counts_of_one_are_singular() {
    let mut r = sample(false);
    r.summary.threads[0].events = 1;
    r.summary.threads[0].fsyncs = 1;
    r.summary.engine_calls = EngineCalls {
        reads: 1,
        writes: 1,
        fsyncs: 1,
        syscalls: 1,
    };
    let p = r.summary.process_io.as_mut().unwrap();
    (p.syscr, p.syscw) = (1, 1);
    let c = r.summary.device_check.as_mut().unwrap();
    (c.app_ios, c.device_requests, c.device_flushes) = (1, 1, 1);
    let out = bench_text::summary(&r);
    assert!(out.contains("thread 0: 1 event, 1 fsync, busy"), "{out}");
    assert!(
        out.contains("1 read, 1 write, 1 fsync, 1 system call ("),
        "{out}"
    );
    assert!(out.contains("1 syscall read") && out.contains("1 syscall wrote"));
    assert!(
        out.contains(
            "dbio completed 1 I/O, the device 1 request (1.00 per dbio I/O; 12 merged, 1 flush)"
        ),
        "{out}"
    );
}

/// Issue 31: a commit run on vda (the figures of its real output: 29,140 dbio I/Os, 67,032
/// device requests, 1.99 I/Os in flight in dbio, aqu-sz 2.03) printed "-> they disagree" beside
/// two in-flight figures that agree. Each comparison now has its own verdict.
#[test]
fn text_device_check_gives_each_comparison_its_own_verdict() {
    let mut r = sample(false);
    let c = r.summary.device_check.as_mut().unwrap();
    (c.app_ios, c.device_requests, c.device_flushes) = (29_140, 67_032, 29_000);
    (c.app_in_flight, c.device_aqu_sz, c.agree) = (1.99, 2.03, false);
    let out = bench_text::summary(&r);
    assert!(
        out.contains("  request counts differ: dbio completed 29140 I/Os, the device 67032 requests (2.30 per dbio I/O;"),
        "{out}"
    );
    assert!(
        out.contains("  I/Os in flight agree: dbio 1.99 on average (IOPS x mean latency), the device 2.03 (aqu-sz)"),
        "{out}"
    );
    assert!(
        !out.contains("disagree") && !out.contains("they agree"),
        "{out}"
    );
    // dbio kept nothing in flight: the second comparison is not made, and says so.
    let c = r.summary.device_check.as_mut().unwrap();
    c.app_in_flight = 0.0;
    assert!(bench_text::summary(&r).contains("  I/Os in flight not compared:"));
}

#[test]
fn csv_leaves_undefined_statistics_empty() {
    // A write-only run without --fsync-every: no reads and no fsyncs in any interval.
    let mut s = spec(None);
    s.mode = Mode::Rndwr;
    s.fsync_every = 0;
    let r = build(s, 2, 0);
    let out = export(&Csv::default(), &r);
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split(',').collect()).collect();
    for row in &rows[1..] {
        let col = |name: &str| row[rows[0].iter().position(|h| *h == name).unwrap()];
        assert_eq!(col("read_count"), "0");
        assert_eq!(col("read_iops"), "0");
        for c in [
            "read_p50_ns",
            "read_p99_ns",
            "read_max_ns",
            "fsync_p50_ns",
            "fsync_max_ns",
            "fsync_bytes_per_s",
        ] {
            assert_eq!(col(c), "", "{c} is undefined: {out}");
        }
        assert!(col("write_p50_ns").parse::<u64>().unwrap() > 0);
    }
}

#[test]
fn sysbench_report_interval_0_prints_no_interval_lines() {
    let mut r = like_fixture();
    r.spec.report_interval_s = Duration::ZERO;
    let out = export(&Sysbench, &r);
    assert!(!out.lines().any(|l| l.starts_with("[ ")), "{out}");
    assert!(!out.contains("Report intermediate results"), "{out}");
    assert!(out.contains("File operations:"));
}

#[test]
fn sysbench_prints_whole_intervals_only_as_sysbench_does() {
    // --time 2.5s --report-interval 1s: sysbench 1.0.20 prints [ 1s ] and [ 2s ], not the
    // half interval at the end (measured: --time=3 prints 3 lines, --time=2 prints 2).
    let mut r = like_fixture();
    r.intervals.push(r.intervals[1].clone());
    let last = r.intervals.last_mut().unwrap();
    last.start_s = 2.0;
    last.end_s = 2.5;
    let out = export(&Sysbench, &r);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("[ 1s ]") && lines[1].starts_with("[ 2s ]"));
}
