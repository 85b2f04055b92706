//! `dbio report --format text`: the points, the runs with their verdicts (stalls, periodic
//! dips, steady state), the knees of the scaling curves and the A/B comparisons.

use crate::export::table::{Column, Table};
use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::report::{Curve, Knee, Report, ReportOptions, RunReport};
use dbio_schema::units::{format_ns, format_size};
use std::io::{self, Write};

/// Throughput with a thousands-friendly precision.
pub fn iops(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// `1.20 s` for a time in seconds.
pub fn secs(v: f64) -> String {
    format!("{v:.2}s")
}

/// One line on a run's stalls.
pub fn stall_words(r: &RunReport) -> String {
    let s = &r.stalls;
    let mut w = if s.intervals == 0 {
        "no stalls".to_string()
    } else {
        format!(
            "{} stall interval{} ({} in {} event{})",
            s.intervals,
            if s.intervals == 1 { "" } else { "s" },
            secs(s.stalled_s),
            s.events.len(),
            if s.events.len() == 1 { "" } else { "s" }
        )
    };
    if let Some(p) = &s.periodic {
        w += &format!(
            "; periodic dips every {} ({} intervals), {:.0}% below the median, first at {}",
            secs(p.period_s),
            p.period_intervals,
            p.depth_pct,
            secs(p.first_dip_s)
        );
    }
    w
}

/// The run has fewer measured intervals than the steady-state window: nothing was judged.
pub fn too_few_to_judge(r: &RunReport) -> bool {
    let measured = r.intervals.iter().filter(|i| !i.warmup).count();
    measured < r.steady.window_intervals.max(2)
}

/// One line on a run's steady state.
pub fn steady_words(r: &RunReport, o: &ReportOptions) -> String {
    let s = &r.steady;
    if s.from_s.is_none() && too_few_to_judge(r) {
        let measured = r.intervals.iter().filter(|i| !i.warmup).count();
        return format!(
            "steady state not judged: not enough intervals ({measured} measured, the window is {}; \
             a longer --time or a shorter --report-interval gives more)",
            s.window_intervals.max(2)
        );
    }
    let mut w = match s.from_s {
        Some(t) => format!(
            "steady from {} ({} iops from there; warm-up before it excluded)",
            secs(t),
            iops(s.iops)
        ),
        None => format!(
            "throughput not steady (drift {:.0}%, range {:.0}% over {} intervals; limits {:.0}%, {:.0}%)",
            s.slope_pct, s.range_pct, s.window_intervals, o.steady_slope_pct, o.steady_range_pct
        ),
    };
    w += &match s.p99_from_s {
        Some(t) => format!(", p99 steady from {}", secs(t)),
        None => ", p99 not steady".to_string(),
    };
    w
}

/// One line on a knee.
pub fn knee_words(k: &Knee) -> String {
    let slo = format!("p99 <= {} ({})", format_ns(k.slo_p99_ns as f64), k.slo_from);
    let within = match k.max_load_within_slo {
        Some(l) => format!("{slo} up to load {l}"),
        None => format!("{slo} at no load"),
    };
    let sat = match (k.saturation_load, k.saturation_iops) {
        (Some(l), Some(i)) => format!("throughput stops growing after load {l} ({} iops)", iops(i)),
        _ => "throughput still grows at the highest load".to_string(),
    };
    format!("{within}; {sat}")
}

fn axis_value(c: &Curve, x: u64) -> String {
    if c.axis == "block_size_bytes" {
        format_size(x)
    } else {
        x.to_string()
    }
}

impl Exporter<Report> for Text {
    fn export(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        let hosts: std::collections::BTreeSet<&str> =
            r.runs.iter().map(|x| x.params.host.as_str()).collect();
        writeln!(
            out,
            "{} run{} on {} host{}, {} point{}",
            r.runs.len(),
            if r.runs.len() == 1 { "" } else { "s" },
            hosts.len(),
            if hosts.len() == 1 { "" } else { "s" },
            r.points.len(),
            if r.points.len() == 1 { "" } else { "s" },
        )?;
        points(r, out)?;

        writeln!(out, "\nRuns")?;
        let mut t = Table::new(vec![
            Column::left("run"),
            Column::left("host"),
            Column::left("target"),
            Column::left("device"),
            Column::left("fs"),
            Column::right("#"),
            Column::right("iops"),
            Column::right("MiB/s"),
            Column::right("p99"),
            Column::right("intervals"),
            Column::right("stalls"),
            Column::left("periodic"),
            Column::left("steady from"),
        ]);
        for x in &r.runs {
            let p99 = x
                .ops
                .iter()
                .filter_map(|o| o.lat_ns.get(99.0))
                .max()
                .map(|v| format_ns(v as f64))
                .unwrap_or_default();
            t.row([
                x.label.clone(),
                x.params.host.clone(),
                x.params.target.clone(),
                x.params.device.clone().unwrap_or_else(|| "-".into()),
                x.params.filesystem.clone().unwrap_or_else(|| "-".into()),
                x.point.to_string(),
                iops(x.iops),
                format!("{:.2}", x.bytes_per_s / 1_048_576.0),
                p99,
                x.intervals.len().to_string(),
                x.stalls.intervals.to_string(),
                x.stalls
                    .periodic
                    .as_ref()
                    .map(|p| format!("every {}", secs(p.period_s)))
                    .unwrap_or_else(|| "-".into()),
                match x.steady.from_s {
                    Some(t) => secs(t),
                    None if too_few_to_judge(x) => "too few intervals".into(),
                    None => "not steady".into(),
                },
            ]);
        }
        out.write_all(t.render().as_bytes())?;

        writeln!(out, "\nVerdicts")?;
        for x in &r.runs {
            writeln!(out, "  {}: {}", x.label, stall_words(x))?;
            writeln!(
                out,
                "  {}  {}",
                " ".repeat(x.label.chars().count()),
                steady_words(x, &r.options)
            )?;
            if x.percentiles_from != "interval histograms" {
                writeln!(
                    out,
                    "  {}  per-interval percentiles from the interval figures (result written before bench kept interval histograms)",
                    " ".repeat(x.label.chars().count())
                )?;
            }
        }

        if !r.curves.is_empty() {
            writeln!(out, "\nScaling")?;
            for c in &r.curves {
                let axis = c.axis.trim_end_matches("_bytes");
                writeln!(out, "  {} by {axis}:", c.label)?;
                let mut t = Table::new(vec![
                    Column::right(axis),
                    Column::right("load"),
                    Column::right("iops"),
                    Column::right("MiB/s"),
                    Column::right("p95"),
                    Column::right("p99"),
                ]);
                for p in &c.points {
                    t.row([
                        axis_value(c, p.x(&c.axis)),
                        p.load.to_string(),
                        iops(p.iops),
                        format!("{:.2}", p.bytes_per_s / 1_048_576.0),
                        format_ns(p.p95_ns as f64),
                        format_ns(p.p99_ns as f64),
                    ]);
                }
                for line in t.lines() {
                    writeln!(out, "    {line}")?;
                }
                if let Some(k) = &c.knee {
                    writeln!(out, "    knee: {}", knee_words(k))?;
                }
            }
        }

        if !r.comparisons.is_empty() {
            writeln!(
                out,
                "\nComparisons (Mann-Whitney U over per-interval throughput of steady intervals, two-sided, alpha {})",
                r.options.alpha
            )?;
            let mut t = Table::new(vec![
                Column::left("parameter"),
                Column::left("A"),
                Column::left("B"),
                Column::right("iops A"),
                Column::right("iops B"),
                Column::right("B/A"),
                Column::right("p99 A"),
                Column::right("p99 B"),
                Column::right("p"),
                Column::left("verdict"),
                Column::left("shared"),
            ]);
            for c in &r.comparisons {
                t.row([
                    c.parameter.clone(),
                    c.a_value.clone(),
                    c.b_value.clone(),
                    iops(c.a_iops),
                    iops(c.b_iops),
                    format!("{:.3}", c.iops_ratio),
                    format_ns(c.a_p99_ns as f64),
                    format_ns(c.b_p99_ns as f64),
                    c.p_value
                        .map(|p| format!("{p:.2e}"))
                        .unwrap_or_else(|| "-".into()),
                    match c.p_value {
                        None => "too few intervals".into(),
                        Some(_) if c.significant => "differs beyond noise".into(),
                        Some(_) => "within noise".into(),
                    },
                    c.label.clone(),
                ]);
            }
            out.write_all(t.render().as_bytes())?;
            for c in r.comparisons.iter().filter(|c| c.finding.is_some()) {
                writeln!(
                    out,
                    "  {} ({}): {}",
                    c.parameter,
                    c.label,
                    c.finding.as_deref().unwrap_or_default()
                )?;
            }
        }
        Ok(())
    }
}

/// The points table: runs of one workload merged.
fn points(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\nPoints (runs of one workload merged: histograms add)"
    )?;
    let mut t = Table::new(vec![
        Column::left("#"),
        Column::left("point"),
        Column::right("runs"),
        Column::right("iops"),
        Column::right("MiB/s"),
        Column::right("p50"),
        Column::right("p95"),
        Column::right("p99"),
        Column::right("p99.9"),
        Column::right("max"),
        Column::right("stalls"),
    ]);
    for (i, p) in r.points.iter().enumerate() {
        let first = p.ops.first();
        let g = |q: f64| {
            first
                .and_then(|o| o.lat_ns.get(q))
                .map(|v| format_ns(v as f64))
                .unwrap_or_default()
        };
        let many_ops = p.ops.len() > 1;
        t.row([
            i.to_string(),
            p.label.clone(),
            p.runs.len().to_string(),
            iops(p.iops),
            format!("{:.2}", p.bytes_per_s / 1_048_576.0),
            if many_ops { String::new() } else { g(50.0) },
            format_ns(p.p95_ns as f64),
            format_ns(p.p99_ns as f64),
            if many_ops { String::new() } else { g(99.9) },
            if many_ops {
                String::new()
            } else {
                first
                    .map(|o| format_ns(o.lat_ns.max as f64))
                    .unwrap_or_default()
            },
            p.stall_intervals.to_string(),
        ]);
    }
    out.write_all(t.render().as_bytes())?;
    Ok(())
}
