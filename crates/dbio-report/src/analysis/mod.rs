//! `dbio report`'s analysis: bench results in, one [`Report`] out. Pure functions over
//! per-interval series ([`stalls`], [`steady`], [`knee`], [`compare`]) and the assembly of
//! runs into points (runs of the same workload merged exactly: histograms add), curves and
//! comparisons. Reading the inputs is [`input`].

mod sample;
pub use sample::Sample;
pub mod compare;
pub mod input;
pub mod knee;
pub mod stalls;
pub mod steady;

use dbio_schema::bench::{BenchResult, IntervalLat, LatStats, OpSummary, DEFAULT_PERCENTILES};
use dbio_schema::hist::HistogramData;
use dbio_schema::report::*;
use input::{Loaded, Source};
use std::collections::BTreeMap;

/// The facets of a point, as [`facets`] lists them.
type Facets = Vec<(&'static str, String)>;

/// Counts of a histogram in bins of a tenth of a decade, from its lowest to its highest
/// non-empty bin (empty bins between kept, so the bins can be drawn as they are).
pub fn log_bins(h: &HistogramData) -> Vec<Bin> {
    let bin_of = |v: u64| (10.0 * (v.max(1) as f64).log10()).ceil() as i32;
    let mut counts: BTreeMap<i32, u64> = BTreeMap::new();
    for &(v, c) in &h.buckets {
        let n = counts.entry(bin_of(v)).or_default();
        *n = n.saturating_add(c);
    }
    let (Some(&lo), Some(&hi)) = (counts.keys().next(), counts.keys().next_back()) else {
        return Vec::new();
    };
    (lo..=hi)
        .map(|k| Bin {
            le_ns: 10f64.powf(k as f64 / 10.0).floor() as u64,
            count: counts.get(&k).copied().unwrap_or(0),
        })
        .collect()
}

fn lat_stats(h: &HistogramData) -> LatStats {
    LatStats {
        min: h.min_ns,
        mean: h.mean(),
        percentiles: DEFAULT_PERCENTILES
            .iter()
            .map(|&p| (p, h.percentile(p)))
            .collect(),
        max: h.max_ns,
    }
}

fn op_stats(op: &str, h: &HistogramData, bytes: u64, secs: f64) -> OpStats {
    let per_s = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    OpStats {
        op: op.to_string(),
        count: h.count,
        iops: per_s(h.count as f64),
        bytes_per_s: per_s(bytes as f64),
        lat_ns: lat_stats(h),
        distribution: log_bins(h),
    }
}

fn summary_ops(r: &BenchResult) -> [(&'static str, &OpSummary); 3] {
    [
        ("read", &r.summary.read),
        ("write", &r.summary.write),
        ("fsync", &r.summary.fsync),
    ]
}

/// The parameters of a run.
pub fn params(r: &BenchResult) -> Params {
    let s = &r.spec;
    let e = &r.environment;
    let top = e.devices.first();
    let flags: Vec<&str> = [
        (s.direct, "direct"),
        (s.dsync, "dsync"),
        (s.sync, "sync"),
        (s.noatime, "noatime"),
    ]
    .iter()
    .filter(|f| f.0)
    .map(|f| f.1)
    .collect();
    Params {
        host: e.hostname.clone(),
        target: s.target.path().display().to_string(),
        device: top.map(|d| d.name.clone()),
        filesystem: e.filesystem.clone(),
        scheduler: top.and_then(|d| d.scheduler.clone()),
        write_cache: top.and_then(|d| d.write_cache.clone()),
        mode: s.mode.name().to_string(),
        engine: s.engine.name().to_string(),
        block_size_bytes: s.block_size_bytes,
        threads: s.threads,
        iodepth: s.iodepth,
        misalign_bytes: s.misalign_bytes,
        flags: if flags.is_empty() {
            "buffered".into()
        } else {
            flags.join("+")
        },
        fsync_every: s.fsync_every,
        distribution: s.distribution.to_string(),
        rw_ratio: s.rw_ratio,
        rate_iops: s.rate_iops,
        file_total_size_bytes: s.file_total_size_bytes,
        // A result from before the layout was recorded with its reason, and without huge
        // pages set, cannot say: the default was huge pages then, and --no-huge-pages existed.
        buffers: match (s.huge_pages, &s.buffers, s.engine.name()) {
            (true, _, _) => "huge",
            (false, Some(_), _) => "4k",
            (false, None, "sync" | "uring") => "unknown",
            (false, None, _) => "-",
        }
        .into(),
    }
}

/// The parameters that tell points apart, as (name, value) in a fixed order. Host and target
/// path are not among them: the same workload on many hosts is one point.
pub fn facets(p: &Params) -> Vec<(&'static str, String)> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    vec![
        ("mode", p.mode.clone()),
        (
            "block_size",
            dbio_schema::units::format_size(p.block_size_bytes),
        ),
        ("threads", p.threads.to_string()),
        ("iodepth", p.iodepth.to_string()),
        ("engine", p.engine.clone()),
        ("device", opt(&p.device)),
        ("filesystem", opt(&p.filesystem)),
        ("scheduler", opt(&p.scheduler)),
        ("write_cache", opt(&p.write_cache)),
        (
            "misalign",
            dbio_schema::units::format_size(p.misalign_bytes),
        ),
        ("flags", p.flags.clone()),
        ("buffers", p.buffers.clone()),
        ("fsync_every", p.fsync_every.to_string()),
        ("distribution", p.distribution.clone()),
        ("rw_ratio", p.rw_ratio.to_string()),
        (
            "rate",
            p.rate_iops.map_or_else(|| "-".into(), |r| r.to_string()),
        ),
        (
            "file_total_size",
            dbio_schema::units::format_size(p.file_total_size_bytes),
        ),
    ]
}

/// Words for a set of facets: `rndrd bs=16KiB threads=8`.
fn words(f: &[(&str, String)]) -> String {
    f.iter()
        .map(|(k, v)| {
            if *k == "mode" {
                v.clone()
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Analyses one run. `label` names it; `point` is filled in by [`analyse`].
pub fn run_report(
    label: String,
    source: String,
    r: &BenchResult,
    opts: &ReportOptions,
) -> RunReport {
    let mut from_hist = true;
    let mut intervals: Vec<IntervalPoint> = r
        .intervals
        .iter()
        .map(|iv| {
            let lat_ns = match &iv.histograms {
                Some(h) => {
                    let mut all = HistogramData::default();
                    for (_, d) in h.ops() {
                        if let Some(d) = d {
                            all.merge(d);
                        }
                    }
                    IntervalLat {
                        p50: all.percentile(50.0),
                        p95: all.percentile(95.0),
                        p99: all.percentile(99.0),
                        max: all.max_ns,
                    }
                }
                None => {
                    from_hist = from_hist && iv.total.count == 0;
                    iv.total.lat_ns
                }
            };
            IntervalPoint {
                start_s: iv.start_s,
                end_s: iv.end_s,
                warmup: iv.warmup,
                iops: iv.total.iops,
                bytes_per_s: iv.total.bytes_per_s,
                lat_ns,
                stall: false,
            }
        })
        .collect();
    let measured: Vec<usize> = (0..intervals.len())
        .filter(|&i| !intervals[i].warmup)
        .collect();
    let samples: Vec<Sample> = measured
        .iter()
        .map(|&i| Sample {
            start_s: intervals[i].start_s,
            end_s: intervals[i].end_s,
            iops: intervals[i].iops,
            p99_ns: intervals[i].lat_ns.p99,
        })
        .collect();
    let (flags, mut st) = stalls::detect(
        &samples,
        opts.stall_throughput_fraction,
        opts.stall_p99_factor,
    );
    st.periodic = stalls::periodic(&samples, opts.periodic_min_depth_pct)
        .or_else(|| stalls::periodic_events(&samples, opts.stall_throughput_fraction));
    for (&i, f) in measured.iter().zip(flags) {
        intervals[i].stall = f;
    }
    let steady = steady::steady(
        &samples,
        opts.steady_window_intervals,
        opts.steady_slope_pct,
        opts.steady_range_pct,
    );
    let secs = r.summary.measured_s;
    let util: Vec<f64> = r
        .intervals
        .iter()
        .filter(|iv| !iv.warmup)
        .filter_map(|iv| iv.devices.first().map(|d| d.util_pct))
        .collect();
    RunReport {
        label,
        source,
        dbio_version: r.dbio_version.clone(),
        started_at: r.started_at.clone(),
        params: params(r),
        point: 0,
        interrupted: r.interrupted,
        interval_s: r.spec.report_interval_s.as_secs_f64(),
        percentiles_from: if from_hist {
            "interval histograms".into()
        } else {
            "interval figures".into()
        },
        iops: r.summary.total.iops,
        bytes_per_s: r.summary.total.bytes_per_s,
        device_util_pct: (!util.is_empty()).then(|| util.iter().sum::<f64>() / util.len() as f64),
        ops: summary_ops(r)
            .iter()
            .filter(|(_, o)| o.count > 0)
            .map(|(name, o)| op_stats(name, &o.histogram, o.bytes, secs))
            .collect(),
        intervals,
        stalls: st,
        steady,
    }
}

/// Short unique labels: file names, or whole paths where two file names are the same.
fn labels(runs: &[Loaded]) -> Vec<String> {
    // The commit phase of a default run is named after its file, with " commit".
    let phase = |l: &Loaded| match l.source {
        Source::CommitPhase(_) => " commit",
        _ => "",
    };
    let name = |l: &Loaded| {
        let p = l.source.path();
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string());
        format!("{stem}{}", phase(l))
    };
    let names: Vec<String> = runs.iter().map(name).collect();
    names
        .iter()
        .zip(runs)
        .map(|(n, l)| {
            if names.iter().filter(|m| *m == n).count() > 1 {
                format!("{}{}", l.source.path().display(), phase(l))
            } else {
                n.clone()
            }
        })
        .collect()
}

/// Analyses every run and builds points, curves and comparisons.
pub fn analyse(runs: &[Loaded], opts: &ReportOptions) -> Report {
    let labels = labels(runs);
    let mut reports: Vec<RunReport> = runs
        .iter()
        .zip(labels)
        .map(|(l, label)| {
            let source = match &l.source {
                Source::CommitPhase(p) => format!("{} (default_run.commit)", p.display()),
                s => s.path().display().to_string(),
            };
            run_report(label, source, &l.result, opts)
        })
        .collect();
    // Points: runs with the same facets, in order of first appearance.
    let keys: Vec<Facets> = reports.iter().map(|r| facets(&r.params)).collect();
    let mut order: Vec<usize> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        match order.iter().position(|&o| keys[o] == *k) {
            Some(p) => members[p].push(i),
            None => {
                order.push(i);
                members.push(vec![i]);
            }
        }
    }
    let varying: Vec<bool> = (0..keys.first().map_or(0, |k| k.len()))
        .map(|f| order.iter().any(|&o| keys[o][f].1 != keys[order[0]][f].1))
        .collect();
    let point_label = |k: &[(&'static str, String)]| {
        let f: Vec<(&str, String)> = k
            .iter()
            .zip(&varying)
            .filter(|(_, &v)| v)
            .map(|(f, _)| f.clone())
            .collect();
        if f.is_empty() {
            words(&k[..4])
        } else {
            words(&f)
        }
    };
    let mut points = Vec::with_capacity(members.len());
    for (pi, m) in members.iter().enumerate() {
        for &r in m {
            reports[r].point = pi;
        }
        points.push(point(&reports, runs, m, point_label(&keys[m[0]])));
    }
    let curves = curves(&points, &keys, &order, &varying, opts);
    let comparisons = comparisons(&reports, &points, &keys, &order, &varying, opts);
    Report {
        options: opts.clone(),
        runs: reports,
        points,
        curves,
        comparisons,
    }
}

fn point(reports: &[RunReport], runs: &[Loaded], m: &[usize], label: String) -> PointReport {
    let first = &reports[m[0]];
    let mut hosts: Vec<String> = m.iter().map(|&r| reports[r].params.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    let mut params = first.params.clone();
    params.host = hosts.join(",");
    let mut ops = Vec::new();
    let mut all = HistogramData::default();
    let secs: f64 = m.iter().map(|&r| runs[r].result.summary.measured_s).sum();
    for (k, name) in ["read", "write", "fsync"].iter().enumerate() {
        let mut h = HistogramData::default();
        let mut bytes = 0;
        for &r in m {
            let o = summary_ops(&runs[r].result)[k].1;
            h.merge(&o.histogram);
            bytes += o.bytes;
        }
        if h.count > 0 {
            all.merge(&h);
            // Rates per run: the merged counts over the runs' summed time.
            ops.push(op_stats(name, &h, bytes, secs));
        }
    }
    let n = m.len() as f64;
    PointReport {
        label,
        params,
        runs: m.to_vec(),
        load: first.params.threads as u64 * first.params.iodepth as u64,
        iops: m.iter().map(|&r| reports[r].iops).sum::<f64>() / n,
        bytes_per_s: m.iter().map(|&r| reports[r].bytes_per_s).sum::<f64>() / n,
        ops,
        p95_ns: all.percentile(95.0),
        p99_ns: all.percentile(99.0),
        stall_intervals: m.iter().map(|&r| reports[r].stalls.intervals).sum(),
    }
}

const AXES: [(&str, usize); 3] = [("threads", 2), ("iodepth", 3), ("block_size_bytes", 1)];

fn curves(
    points: &[PointReport],
    keys: &[Facets],
    order: &[usize],
    varying: &[bool],
    opts: &ReportOptions,
) -> Vec<Curve> {
    let mut out = Vec::new();
    for (axis, f) in AXES {
        // Group points by every facet but the axis.
        let mut groups: Vec<(Facets, Vec<usize>)> = Vec::new();
        for (pi, &o) in order.iter().enumerate() {
            let mut k = keys[o].clone();
            k.remove(f);
            match groups.iter_mut().find(|g| g.0 == k) {
                Some(g) => g.1.push(pi),
                None => groups.push((k, vec![pi])),
            }
        }
        for (k, pis) in groups {
            let mut cps: Vec<CurvePoint> = pis
                .iter()
                .map(|&pi| CurvePoint {
                    threads: points[pi].params.threads,
                    iodepth: points[pi].params.iodepth,
                    block_size_bytes: points[pi].params.block_size_bytes,
                    load: points[pi].load,
                    point: pi,
                    iops: points[pi].iops,
                    bytes_per_s: points[pi].bytes_per_s,
                    p95_ns: points[pi].p95_ns,
                    p99_ns: points[pi].p99_ns,
                })
                .collect();
            cps.sort_by_key(|c| c.x(axis));
            if cps.len() < 2 {
                continue;
            }
            let knee = (axis != "block_size_bytes")
                .then(|| {
                    let lp: Vec<knee::LoadPoint> = cps
                        .iter()
                        .map(|c| knee::LoadPoint {
                            load: c.load,
                            iops: c.iops,
                            p99_ns: c.p99_ns,
                        })
                        .collect();
                    knee::knee(&lp, opts.slo_p99_ns, opts.saturation_growth_pct)
                })
                .flatten();
            let mut shown: Vec<(&str, String)> = Vec::new();
            let mut vi = varying.iter().enumerate().filter(|(i, _)| *i != f);
            for kv in &k {
                if let Some((_, &v)) = vi.next() {
                    if v {
                        shown.push(kv.clone());
                    }
                }
            }
            out.push(Curve {
                axis: axis.to_string(),
                label: if shown.is_empty() {
                    "all runs".into()
                } else {
                    words(&shown)
                },
                points: cps,
                knee,
            });
        }
    }
    out
}

/// Facets that are curve axes (or the workload itself) are not A/B parameters.
const NOT_AB: [&str; 4] = ["mode", "block_size", "threads", "iodepth"];

fn comparisons(
    reports: &[RunReport],
    points: &[PointReport],
    keys: &[Facets],
    order: &[usize],
    varying: &[bool],
    opts: &ReportOptions,
) -> Vec<Comparison> {
    // Per point: the steady, measured per-interval throughput of its runs.
    let series: Vec<Vec<f64>> = points
        .iter()
        .map(|p| {
            p.runs
                .iter()
                .flat_map(|&r| {
                    let rr = &reports[r];
                    let from = rr.steady.from_s.unwrap_or(f64::NEG_INFINITY);
                    rr.intervals
                        .iter()
                        .filter(move |i| !i.warmup && i.start_s >= from)
                        .map(|i| i.iops)
                })
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    for a in 0..points.len() {
        for b in a + 1..points.len() {
            let (ka, kb) = (&keys[order[a]], &keys[order[b]]);
            let diff: Vec<usize> = (0..ka.len()).filter(|&i| ka[i].1 != kb[i].1).collect();
            let [d] = diff[..] else { continue };
            if NOT_AB.contains(&ka[d].0) {
                continue;
            }
            let p_value = compare::mann_whitney(&series[a], &series[b]);
            let shared: Vec<(&str, String)> = ka
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != d && (varying[*i] || *i < 4))
                .map(|(_, kv)| kv.clone())
                .collect();
            let (pa, pb) = (&points[a], &points[b]);
            let ratio = |x: f64, y: f64| if x > 0.0 { y / x } else { 0.0 };
            let significant = p_value.is_some_and(|p| p < opts.alpha);
            let finding = buffers_finding(
                (ka[d].0, &ka[d].1, &kb[d].1),
                (pa, pb),
                p_value.map(|_| significant),
                ka,
            );
            out.push(Comparison {
                parameter: ka[d].0.to_string(),
                label: words(&shared),
                a_point: a,
                a_value: ka[d].1.clone(),
                b_point: b,
                b_value: kb[d].1.clone(),
                a_iops: pa.iops,
                b_iops: pb.iops,
                iops_ratio: ratio(pa.iops, pb.iops),
                a_p99_ns: pa.p99_ns,
                b_p99_ns: pb.p99_ns,
                p99_ratio: ratio(pa.p99_ns as f64, pb.p99_ns as f64),
                test: compare::TEST.to_string(),
                a_intervals: series[a].len(),
                b_intervals: series[b].len(),
                p_value,
                significant,
                finding,
            });
        }
    }
    out
}

/// What an A/B of the buffers' layout (`dbio sweep --buffers 4k,huge`) means for a database:
/// the huge-page figure is what a server with large_pages=ON would get, the 4k one what it gets
/// with large_pages=OFF. None for other parameters, or without a test (too few intervals).
fn buffers_finding(
    (parameter, a_value, b_value): (&str, &str, &str),
    (pa, pb): (&PointReport, &PointReport),
    significant: Option<bool>,
    facets: &Facets,
) -> Option<String> {
    if parameter != "buffers" {
        return None;
    }
    let (small, huge) = match (a_value, b_value) {
        ("4k", "huge") => (pa, pb),
        ("huge", "4k") => (pb, pa),
        _ => return None,
    };
    let get = |name: &str| {
        facets
            .iter()
            .find(|f| f.0 == name)
            .map_or("-", |f| f.1.as_str())
    };
    let what = format!("{} {}", get("block_size"), get("mode"));
    if !significant? {
        return Some(format!(
            "{what}: the buffers' layout makes no difference beyond noise here: large_pages in the server would not change its I/O"
        ));
    }
    let x = if small.iops > 0.0 {
        huge.iops / small.iops
    } else {
        0.0
    };
    let p99 = if small.p99_ns > 0 {
        huge.p99_ns as f64 / small.p99_ns as f64
    } else {
        0.0
    };
    Some(format!(
        "{what}: I/O into huge-page (contiguous) buffers gets {x:.2}x the IOPS of I/O into 4 KiB pages on this device (p99 {p99:.2}x): a server with large_pages=ON (hugetlb pages reserved) would get the huge figure, one with large_pages=OFF (the usual default) gets the 4k figure"
    ))
}
