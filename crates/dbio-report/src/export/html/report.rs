//! `dbio report --format html`: one self-contained page. Inline SVG charts (plotters), an
//! inline style sheet that also lays the page out for print, no script and nothing loaded
//! from anywhere: the file can be mailed, archived and printed as it is.

use super::charts;
use crate::export::text::report::{iops, knee_words, stall_words, steady_words, too_few_to_judge};
use crate::export::Exporter;
use crate::export::Html;
use dbio_schema::report::{Curve, Report, RunReport};
use dbio_schema::units::format_ns;
use std::io::{self, Write};

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1320px}\
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:1.6em}\
h3{font-size:1.05em;margin-bottom:.2em}table{border-collapse:collapse;font-size:13px;margin:.5em 0}\
.runs{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:0 1.5em}\
.runs svg{width:100%}.note{color:#444}\
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}th{background:#f2f2f2}\
td.l,th.l{text-align:left}.stall{color:#b00}.ok{color:#070}svg{max-width:100%;height:auto;display:block}\
figure{margin:.6em 0;break-inside:avoid;page-break-inside:avoid}\
@media print{body{margin:0;max-width:none}h2{break-after:avoid}}";

fn row(out: &mut dyn Write, cells: &[String], left: usize) -> io::Result<()> {
    write!(out, "<tr>")?;
    for (i, c) in cells.iter().enumerate() {
        let class = if i < left { " class=\"l\"" } else { "" };
        write!(out, "<td{class}>{}</td>", esc(c))?;
    }
    writeln!(out, "</tr>")
}

fn head(out: &mut dyn Write, cells: &[&str], left: usize) -> io::Result<()> {
    write!(out, "<tr>")?;
    for (i, c) in cells.iter().enumerate() {
        let class = if i < left { " class=\"l\"" } else { "" };
        write!(out, "<th{class}>{}</th>", esc(c))?;
    }
    writeln!(out, "</tr>")
}

fn figure(out: &mut dyn Write, svg: &str) -> io::Result<()> {
    // The SVG backend writes an XML declaration-free <svg> element: inline it as it is.
    writeln!(out, "<figure>{svg}</figure>")
}

/// The throughput and latency over time of every run with enough intervals to draw, two
/// charts a row (one run: the page's width); the runs with too few are named in one line.
fn runs_over_time(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<h2 id=\"runs\">Throughput and latency over time</h2>")?;
    let (drawn, short): (Vec<&RunReport>, Vec<&RunReport>) = r
        .runs
        .iter()
        .partition(|x| x.intervals.len() >= charts::MIN_TIMELINE_INTERVALS);
    if !short.is_empty() {
        let names: Vec<&str> = short.iter().map(|x| x.label.as_str()).collect();
        let n = |x: &&RunReport| x.intervals.len();
        let most = short.iter().map(n).max().unwrap_or(0);
        writeln!(
            out,
            "<p class=\"note\">No chart over time for {} (at most {most} {} each: a line needs {}); \
             a shorter <code>--report-interval</code> gives more (a 1 s run with 100ms has 10).</p>",
            if short.len() == r.runs.len() && short.len() > 1 {
                format!("any of the {} runs", short.len())
            } else {
                esc(&names.join(", "))
            },
            if most == 1 { "interval" } else { "intervals" },
            charts::MIN_TIMELINE_INTERVALS
        )?;
    }
    if drawn.is_empty() {
        return Ok(());
    }
    // One run: a chart at the page's width; more: two a row.
    let (width, class) = if drawn.len() == 1 {
        (charts::WIDE, "one")
    } else {
        (charts::HALF, "runs")
    };
    writeln!(out, "<div class=\"{class}\">")?;
    for x in drawn {
        writeln!(out, "<div><h3>{}</h3>", esc(&x.label))?;
        figure(out, &charts::run_timeline(x, width)?)?;
        writeln!(out, "</div>")?;
    }
    writeln!(out, "</div>")
}

/// The "steady from" cell: the time, or why there is none.
fn steady_from(x: &RunReport) -> String {
    match x.steady.from_s {
        Some(s) => format!("{s:.2}s"),
        None if too_few_to_judge(x) => "too few intervals".into(),
        None => "not steady".into(),
    }
}

impl Exporter<Report> for Html {
    fn export(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        let version = r.runs.first().map_or("", |x| x.dbio_version.as_str());
        writeln!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"generator\" content=\"dbio {}\"><title>dbio report: {} runs</title>\
             <style>{STYLE}</style></head><body>",
            esc(dbio_schema::doc::DBIO_VERSION),
            r.runs.len()
        )?;
        writeln!(
            out,
            "<h1>dbio report</h1><p>{} runs, {} points, written by dbio {} from results of dbio {}. \
             Percentiles come from histograms (merged exactly across runs and hosts); \
             comparisons use the Mann-Whitney U test over per-interval throughput.</p>",
            r.runs.len(),
            r.points.len(),
            esc(dbio_schema::doc::DBIO_VERSION),
            esc(version)
        )?;

        writeln!(out, "<h2 id=\"verdicts\">Verdicts</h2><ul>")?;
        for x in &r.runs {
            let class = if x.stalls.intervals > 0 || x.stalls.periodic.is_some() {
                "stall"
            } else {
                "ok"
            };
            writeln!(
                out,
                "<li><b>{}</b>: <span class=\"{class}\">{}</span>; {}</li>",
                esc(&x.label),
                esc(&stall_words(x)),
                esc(&steady_words(x, &r.options))
            )?;
        }
        for c in &r.curves {
            if let Some(k) = &c.knee {
                writeln!(
                    out,
                    "<li>knee of {} by {}: {}</li>",
                    esc(&c.label),
                    esc(&c.axis),
                    esc(&knee_words(k))
                )?;
            }
        }
        writeln!(out, "</ul>")?;

        if !r.curves.is_empty() {
            writeln!(out, "<h2 id=\"scaling\">Scaling</h2>")?;
            for axis in ["threads", "iodepth", "block_size_bytes"] {
                let cs: Vec<&Curve> = r.curves.iter().filter(|c| c.axis == axis).collect();
                if !cs.is_empty() {
                    figure(out, &charts::scaling(r, axis, &cs)?)?;
                }
            }
        }

        if !r.comparisons.is_empty() {
            writeln!(out, "<h2 id=\"comparisons\">Comparisons</h2>")?;
            let refs: Vec<_> = r.comparisons.iter().collect();
            for chunk in refs.chunks(12) {
                figure(out, &charts::comparisons(r, chunk)?)?;
            }
            writeln!(out, "<table>")?;
            head(
                out,
                &[
                    "parameter",
                    "A",
                    "B",
                    "shared",
                    "IOPS A",
                    "IOPS B",
                    "B/A",
                    "p99 A",
                    "p99 B",
                    "p99 B/A",
                    "intervals",
                    "p (Mann-Whitney)",
                    "verdict",
                ],
                4,
            )?;
            for c in &r.comparisons {
                row(
                    out,
                    &[
                        c.parameter.clone(),
                        c.a_value.clone(),
                        c.b_value.clone(),
                        c.label.clone(),
                        iops(c.a_iops),
                        iops(c.b_iops),
                        format!("{:.3}", c.iops_ratio),
                        format_ns(c.a_p99_ns as f64),
                        format_ns(c.b_p99_ns as f64),
                        format!("{:.3}", c.p99_ratio),
                        format!("{} / {}", c.a_intervals, c.b_intervals),
                        c.p_value
                            .map(|p| format!("{p:.2e}"))
                            .unwrap_or_else(|| "-".into()),
                        match c.p_value {
                            None => "too few intervals".into(),
                            Some(_) if c.significant => "differs beyond noise".into(),
                            Some(_) => "within noise".into(),
                        },
                    ],
                    4,
                )?;
            }
            writeln!(out, "</table>")?;
            let found: Vec<_> = r
                .comparisons
                .iter()
                .filter(|c| c.finding.is_some())
                .collect();
            if !found.is_empty() {
                writeln!(out, "<ul>")?;
                for c in found {
                    writeln!(
                        out,
                        "<li><b>{}</b> ({}): {}</li>",
                        esc(&c.parameter),
                        esc(&c.label),
                        esc(c.finding.as_deref().unwrap_or_default())
                    )?;
                }
                writeln!(out, "</ul>")?;
            }
        }

        runs_over_time(r, out)?;

        writeln!(
            out,
            "<h2 id=\"distribution\">Latency distribution per operation</h2>"
        )?;
        for (i, p) in r.points.iter().enumerate() {
            figure(out, &charts::distribution(r, i, p)?)?;
        }

        every_point(r, out)?;
        writeln!(
            out,
            "<p>Thresholds: stall below {:.0}% of the median throughput or p99 above {}x the median p99; \
             periodic dips at least {:.0}% deep; steady state: drift at most {:.0}% and range at most {:.0}% \
             over the window; knee: throughput growth under {:.0}% per doubling; SLO {}.</p></body></html>",
            r.options.stall_throughput_fraction * 100.0,
            r.options.stall_p99_factor,
            r.options.periodic_min_depth_pct,
            r.options.steady_slope_pct,
            r.options.steady_range_pct,
            r.options.saturation_growth_pct,
            r.options
                .slo_p99_ns
                .map(|v| format!("p99 <= {}", format_ns(v as f64)))
                .unwrap_or_else(|| "2x the p99 at the lowest load".into())
        )?;
        Ok(())
    }
}

/// The table of every run, with its stalls and steady state.
fn every_point(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<h2 id=\"points\">Every point</h2><table>")?;
    head(
        out,
        &[
            "run",
            "host",
            "target",
            "device",
            "fs",
            "workload",
            "point",
            "IOPS",
            "MiB/s",
            "p50",
            "p95",
            "p99",
            "p99.9",
            "max",
            "stalls",
            "periodic",
            "steady from",
        ],
        6,
    )?;
    for x in &r.runs {
        let one = (x.ops.len() == 1).then(|| &x.ops[0].lat_ns);
        let lat = |q: f64| {
            one.and_then(|l| l.get(q))
                .map(|v| format_ns(v as f64))
                .unwrap_or_else(|| "-".into())
        };
        let p = &r.points[x.point];
        row(
            out,
            &[
                x.label.clone(),
                x.params.host.clone(),
                x.params.target.clone(),
                x.params.device.clone().unwrap_or_else(|| "-".into()),
                x.params.filesystem.clone().unwrap_or_else(|| "-".into()),
                charts::workload(&x.params),
                x.point.to_string(),
                iops(x.iops),
                format!("{:.2}", x.bytes_per_s / 1_048_576.0),
                lat(50.0),
                format_ns(p.p95_ns as f64),
                lat(99.0),
                lat(99.9),
                one.map(|l| format_ns(l.max as f64))
                    .unwrap_or_else(|| "-".into()),
                x.stalls.intervals.to_string(),
                x.stalls
                    .periodic
                    .as_ref()
                    .map(|p| format!("every {:.2}s, {:.0}% deep", p.period_s, p.depth_pct))
                    .unwrap_or_else(|| "-".into()),
                steady_from(x),
            ],
            6,
        )?;
    }
    writeln!(out, "</table>")?;
    Ok(())
}
