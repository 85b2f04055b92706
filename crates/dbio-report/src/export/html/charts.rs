//! The report's charts, drawn with plotters' SVG backend into strings that the page inlines.
//! Every chart carries its own caption line (dbio version, host, target, device, filesystem,
//! the flags that matter), so a chart copied out of the page still says what it shows.

use dbio_schema::report::{Comparison, Curve, PointReport, Report, RunReport};
use dbio_schema::units::{format_ns, format_size};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;
use std::io;

pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
pub(crate) type Res = Result<(), Box<dyn Error>>;
/// A per-interval latency figure: its name and how to read it.
type LatLine = (&'static str, fn(&dbio_schema::report::IntervalPoint) -> u64);

pub(crate) const FONT: &str = "sans-serif";
/// Line colours, in order (colour-blind safe: Okabe-Ito).
pub const COLOURS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];
const STALL: RGBColor = RGBColor(255, 200, 200);
const WARM: RGBColor = RGBColor(225, 225, 225);
/// The caption line of every chart, and the titles and tick labels (pixels at the chart's
/// own size: the wide charts are drawn at the page's width, so they are not scaled down).
const CAPTION_PX: u32 = 14;
pub(crate) const TITLE_PX: u32 = 15;
pub(crate) const LABEL_PX: u32 = 13;
/// The width of a chart that spans the page, and of one in the two-column grid of runs.
pub const WIDE: u32 = 1300;
pub const HALF: u32 = 640;
/// A chart over time needs at least this many intervals (a line needs two points).
pub const MIN_TIMELINE_INTERVALS: usize = 2;
/// The height of one row of a legend strip.
const KEY_ROW: u32 = 20;

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
pub(crate) enum Mark {
    /// A solid line of this width.
    Line(RGBColor, u32),
    /// A dashed line (p95 in the scaling chart).
    Dashed(RGBColor),
    /// A dotted line (a p99 limit).
    Dotted(RGBColor),
    /// A filled box (shaded spans: stalls, warm-up).
    Box(RGBColor),
    /// A ring (a knee).
    Ring(RGBColor),
}

/// The rough width of `text` at `px` pixels in a sans-serif font (no font metrics here: the
/// SVG is laid out by the browser; this is generous, so entries never touch).
fn text_width(text: &str, px: u32) -> i32 {
    (text.chars().count() as f64 * px as f64 * 0.52).ceil() as i32
}

/// The rows a legend of `keys` takes in `width` pixels.
pub(crate) fn legend_rows(keys: &[(Mark, String)], width: u32) -> u32 {
    legend_layout(keys, width).last().map_or(0, |p| p.1 + 1)
}

/// Where each entry goes: (x, row).
fn legend_layout(keys: &[(Mark, String)], width: u32) -> Vec<(i32, u32)> {
    let (mut x, mut row) = (8, 0);
    keys.iter()
        .map(|(_, t)| {
            let w = 22 + text_width(t, LABEL_PX) + 18;
            if x > 8 && x + w > width as i32 {
                x = 8;
                row += 1;
            }
            let at = (x, row);
            x += w;
            at
        })
        .collect()
}

/// A legend strip: the entries side by side, wrapped into rows, outside every plot so that it
/// covers no data point.
pub(crate) fn legend(area: &Area, keys: &[(Mark, String)]) -> Res {
    let width = area.dim_in_pixel().0;
    let font = (FONT, LABEL_PX).into_font().color(&RGBColor(30, 30, 30));
    for ((mark, text), (x, row)) in keys.iter().zip(legend_layout(keys, width)) {
        let y = (row * KEY_ROW) as i32 + KEY_ROW as i32 / 2;
        let line = |dash: i32, gap: i32, c: RGBColor| -> Res {
            let mut at = x;
            while at < x + 18 {
                area.draw(&PathElement::new(
                    vec![(at, y), ((at + dash).min(x + 18), y)],
                    c.stroke_width(2),
                ))?;
                at += dash + gap;
            }
            Ok(())
        };
        match *mark {
            Mark::Line(c, w) => area.draw(&PathElement::new(
                vec![(x, y), (x + 18, y)],
                c.stroke_width(w),
            ))?,
            Mark::Dashed(c) => line(5, 3, c)?,
            Mark::Dotted(c) => line(2, 3, c)?,
            Mark::Box(c) => {
                area.draw(&Rectangle::new([(x, y - 6), (x + 18, y + 6)], c.filled()))?
            }
            Mark::Ring(c) => area.draw(&Circle::new((x + 9, y), 7, c.stroke_width(2)))?,
        }
        area.draw_text(text, &font, (x + 24, y - LABEL_PX as i32 / 2 - 1))?;
    }
    Ok(())
}

/// Draws into an SVG string of `w` x `h` pixels: a caption line on top, then `f` on the rest.
pub(crate) fn svg(
    w: u32,
    h: u32,
    caption: &str,
    f: impl FnOnce(&Area) -> Res,
) -> io::Result<String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (w, h)).into_drawing_area();
        let r: Res = (|| {
            root.fill(&WHITE)?;
            let (top, rest) = root.split_vertically(26);
            top.draw_text(
                caption,
                &(FONT, CAPTION_PX).into_font().color(&RGBColor(40, 40, 40)),
                (6, 6),
            )?;
            f(&rest)?;
            root.present()?;
            Ok(())
        })();
        r.map_err(|e| io::Error::other(format!("drawing a chart: {e}")))?;
    }
    Ok(buf)
}

/// `dbio 0.1.0 · host · /dev/shm/x · vda · tmpfs · rndrd 16KiB t4 qd1 sync direct`.
pub fn run_caption(r: &RunReport) -> String {
    let p = &r.params;
    let mut parts = vec![
        format!("dbio {}", r.dbio_version),
        p.host.clone(),
        p.target.clone(),
        format!("device {}", p.device.as_deref().unwrap_or("-")),
        format!("fs {}", p.filesystem.as_deref().unwrap_or("-")),
    ];
    parts.push(workload(p));
    parts.join(" · ")
}

/// The workload flags that matter, in a few words.
pub fn workload(p: &dbio_schema::report::Params) -> String {
    let mut w = format!(
        "{} {} threads={} iodepth={} {} {}",
        p.mode,
        format_size(p.block_size_bytes),
        p.threads,
        p.iodepth,
        p.engine,
        p.flags
    );
    if let Some(s) = &p.scheduler {
        w += &format!(" sched={s}");
    }
    if p.misalign_bytes > 0 {
        w += &format!(" misalign={}", format_size(p.misalign_bytes));
    }
    if p.fsync_every > 0 {
        w += &format!(" fsync_every={}", p.fsync_every);
    }
    if let Some(r) = p.rate_iops {
        w += &format!(" rate={r}");
    }
    w
}

/// The caption of a chart over many points: what they share, and what differs, joined.
pub fn many_caption(r: &Report, points: &[usize]) -> String {
    let set = |f: &dyn Fn(&RunReport) -> String| {
        let mut v: Vec<String> = points
            .iter()
            .flat_map(|&p| r.points[p].runs.iter().map(|&i| f(&r.runs[i])))
            .collect();
        v.sort();
        v.dedup();
        v.join(",")
    };
    [
        format!("dbio {}", set(&|x| x.dbio_version.clone())),
        set(&|x| x.params.host.clone()),
        set(&|x| x.params.target.clone()),
        format!(
            "device {}",
            set(&|x| x.params.device.clone().unwrap_or("-".into()))
        ),
        format!(
            "fs {}",
            set(&|x| x.params.filesystem.clone().unwrap_or("-".into()))
        ),
        set(&|x| format!("{} {} {}", x.params.mode, x.params.engine, x.params.flags)),
    ]
    .join(" · ")
}

pub(crate) fn nice_max(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        1.0
    } else {
        v * 1.08
    }
}

fn lat_range(values: impl Iterator<Item = u64>) -> (f64, f64) {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for v in values.filter(|&v| v > 0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi == 0 {
        return (1.0, 1000.0);
    }
    // Whole decades, so that a log axis always has labelled ticks (a range inside one decade
    // gets none).
    let down = 10f64.powf((lo as f64 / 1.2).max(1.0).log10().floor());
    let up = 10f64.powf((hi as f64 * 1.2).log10().ceil());
    (down, up)
}

fn fmt_ns(v: &f64) -> String {
    format_ns(*v)
}

/// An axis label of a rate: `350k`, `1.5k`, `2.25M`, `500`: as many decimals as the value
/// needs (up to two), so two ticks never print alike (1500 and 2000 both printed `2k`).
pub(crate) fn fmt_iops(v: &f64) -> String {
    let short = |x: f64, unit: &str| {
        let s = format!("{x:.2}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        format!("{s}{unit}")
    };
    if *v >= 1e6 {
        short(v / 1e6, "M")
    } else if *v >= 1e3 {
        short(v / 1e3, "k")
    } else {
        format!("{v:.0}")
    }
}

/// The time spans of consecutive intervals that satisfy `f`.
fn spans(
    iv: &[dbio_schema::report::IntervalPoint],
    f: impl Fn(&dbio_schema::report::IntervalPoint) -> bool,
) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut open = false;
    for i in iv {
        match (f(i), open, out.last_mut()) {
            (true, true, Some(last)) => last.1 = i.end_s,
            (true, _, _) => out.push((i.start_s, i.end_s)),
            _ => {}
        }
        open = f(i);
    }
    out
}

/// Throughput over time (IOPS, MiB/s on the right axis), stall intervals shaded red, warm-up
/// grey; under it the per-interval p50/p95/p99/max latency on a log axis. Each panel has its
/// legend in a strip under it. `width`: [`WIDE`] or [`HALF`]. A run with fewer than
/// [`MIN_TIMELINE_INTERVALS`] intervals has no chart (the page says so in a line instead).
pub fn run_timeline(r: &RunReport, width: u32) -> io::Result<String> {
    let iv = &r.intervals;
    let x0 = iv.first().map_or(0.0, |i| i.start_s);
    let x1 = iv.last().map_or(1.0, |i| i.end_s).max(x0 + 1e-3);
    let ymax = nice_max(iv.iter().map(|i| i.iops).fold(0.0, f64::max));
    let mib_per_io = {
        let (b, n) = iv
            .iter()
            .fold((0.0, 0.0), |a, i| (a.0 + i.bytes_per_s, a.1 + i.iops));
        if n > 0.0 {
            b / n / 1_048_576.0
        } else {
            0.0
        }
    };
    let warm_end = r.steady.from_s.unwrap_or(x0);
    let warm = iv.iter().any(|i| i.warmup || i.end_s <= warm_end);
    let stalled = iv.iter().any(|i| i.stall);
    let mut top_keys = vec![(
        Mark::Line(COLOURS[0], 2),
        "IOPS (left axis; MiB/s on the right axis)".to_string(),
    )];
    if stalled {
        top_keys.push((Mark::Box(STALL), "stall interval".into()));
    }
    if warm {
        top_keys.push((Mark::Box(WARM), "warm-up (before the steady state)".into()));
    }
    let lines: [LatLine; 4] = [
        ("p50", |i| i.lat_ns.p50),
        ("p95", |i| i.lat_ns.p95),
        ("p99", |i| i.lat_ns.p99),
        ("max", |i| i.lat_ns.max),
    ];
    let lat_keys: Vec<(Mark, String)> = lines
        .iter()
        .enumerate()
        .map(|(k, (name, _))| {
            let w = if *name == "p99" { 3 } else { 2 };
            (
                Mark::Line(COLOURS[k + 1], w),
                format!("{name} of the interval"),
            )
        })
        .collect();
    let key_h = |keys: &[(Mark, String)]| legend_rows(keys, width) * KEY_ROW + 4;
    let (top_h, lat_h) = (key_h(&top_keys), key_h(&lat_keys));
    let panel = 220;
    let h = 26 + 2 * panel + top_h + lat_h;
    svg(width, h, &run_caption(r), |area| {
        let (top, rest) = area.split_vertically(panel);
        let (top_key, rest) = rest.split_vertically(top_h);
        let (bottom, lat_key) = rest.split_vertically(panel);
        let mut c = ChartBuilder::on(&top)
            .margin_left(8)
            .margin_right(8)
            .x_label_area_size(24)
            .y_label_area_size(60)
            .right_y_label_area_size(52)
            .caption(
                format!("{}: throughput per interval", r.label),
                (FONT, TITLE_PX),
            )
            .build_cartesian_2d(x0..x1, 0.0..ymax)?
            .set_secondary_coord(x0..x1, 0.0..(ymax * mib_per_io).max(1e-9));
        c.configure_mesh()
            .y_desc("IOPS")
            .y_label_formatter(&fmt_iops)
            .x_label_formatter(&|v| format!("{v:.1}s"))
            .x_labels(if width < WIDE { 6 } else { 12 })
            .max_light_lines(0)
            .label_style((FONT, LABEL_PX))
            .draw()?;
        c.configure_secondary_axes()
            .y_desc("MiB/s")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FONT, LABEL_PX))
            .draw()?;
        // Warm-up (the bench's, and before the steady state), then stalls: one rectangle per
        // run of consecutive intervals.
        let shade = spans(iv, |i| i.warmup || i.end_s <= warm_end)
            .into_iter()
            .map(|(a, b)| Rectangle::new([(a, 0.0), (b, ymax)], WARM.filled()));
        c.draw_series(shade)?;
        let stalls = spans(iv, |i| i.stall)
            .into_iter()
            .map(|(a, b)| Rectangle::new([(a, 0.0), (b, ymax)], STALL.filled()));
        c.draw_series(stalls)?;
        let mid = |i: &dbio_schema::report::IntervalPoint| (i.start_s + i.end_s) / 2.0;
        c.draw_series(LineSeries::new(
            iv.iter().map(|i| (mid(i), i.iops)),
            COLOURS[0].stroke_width(2),
        ))?;
        legend(&top_key, &top_keys)?;

        let (lo, hi) = lat_range(iv.iter().flat_map(|i| [i.lat_ns.p50, i.lat_ns.max]));
        let mut c = ChartBuilder::on(&bottom)
            .margin_left(8)
            .margin_right(60)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .caption(
                "latency per interval (from interval histograms)",
                (FONT, TITLE_PX),
            )
            .build_cartesian_2d(x0..x1, (lo..hi).log_scale())?;
        c.configure_mesh()
            .y_desc("latency")
            .x_desc("seconds since start")
            .y_labels(6)
            .y_label_formatter(&fmt_ns)
            .x_label_formatter(&|v| format!("{v:.1}s"))
            .x_labels(if width < WIDE { 6 } else { 12 })
            .max_light_lines(0)
            .label_style((FONT, LABEL_PX))
            .draw()?;
        for (k, (name, f)) in lines.iter().enumerate() {
            c.draw_series(LineSeries::new(
                iv.iter()
                    .filter(|i| f(i) > 0)
                    .map(|i| (mid(i), f(i) as f64)),
                COLOURS[k + 1].stroke_width(if *name == "p99" { 3 } else { 2 }),
            ))?;
        }
        legend(&lat_key, &lat_keys)?;
        Ok(())
    })
}

/// The latency distribution of each operation of a point (counts in tenth-of-a-decade bins on
/// a log axis) beside its percentile spectrum (latency against the percentile's nines).
pub fn distribution(r: &Report, pi: usize, p: &PointReport) -> io::Result<String> {
    let (lo, hi) = lat_range(
        p.ops
            .iter()
            .flat_map(|o| [o.lat_ns.min.max(1), o.lat_ns.max]),
    );
    let ymax = nice_max(
        p.ops
            .iter()
            .flat_map(|o| {
                o.distribution
                    .iter()
                    .map(|b| b.count as f64 / o.count.max(1) as f64 * 100.0)
            })
            .fold(0.0, f64::max),
    );
    let keys: Vec<(Mark, String)> = p
        .ops
        .iter()
        .enumerate()
        .map(|(k, o)| {
            (
                Mark::Line(COLOURS[k], 2),
                format!("{} ({} ops)", o.op, o.count),
            )
        })
        .collect();
    let key_h = legend_rows(&keys, WIDE) * KEY_ROW + 4;
    svg(WIDE, 26 + 300 + key_h, &many_caption(r, &[pi]), |area| {
        let (plots, key) = area.split_vertically(300);
        legend(&key, &keys)?;
        let (left, right) = plots.split_horizontally(WIDE / 2);
        let mut c = ChartBuilder::on(&left)
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .caption(
                format!("point {pi} {}: latency distribution", p.label),
                (FONT, TITLE_PX),
            )
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..ymax)?;
        c.configure_mesh()
            .x_desc("latency (log)")
            .y_desc("% of operations")
            .x_label_formatter(&fmt_ns)
            .max_light_lines(0)
            .label_style((FONT, LABEL_PX))
            .draw()?;
        for (k, o) in p.ops.iter().enumerate() {
            let colour = COLOURS[k];
            let n = o.count.max(1) as f64;
            // Steps: each bin spans from the previous bound (a tenth of a decade lower).
            let mut pts = Vec::with_capacity(o.distribution.len() * 2 + 2);
            for b in &o.distribution {
                let right = b.le_ns.max(1) as f64;
                let left = right / 10f64.powf(0.1);
                let y = b.count as f64 / n * 100.0;
                pts.push((left.max(lo), y));
                pts.push((right.min(hi), y));
            }
            c.draw_series(LineSeries::new(pts, colour.stroke_width(2)))?;
        }

        // Percentile spectrum: x = nines (p50 = 0.3, p90 = 1, p99 = 2, p99.9 = 3, ...).
        let nines = |q: f64| -(1.0 - q / 100.0).log10();
        let mut c = ChartBuilder::on(&right)
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .caption("percentile spectrum", (FONT, TITLE_PX))
            .build_cartesian_2d(0.0..4.5, (lo..hi).log_scale())?;
        c.configure_mesh()
            .x_desc("percentile (max at the right)")
            .y_labels(6)
            .y_label_formatter(&fmt_ns)
            .x_labels(10)
            .x_label_formatter(&|v: &f64| match v.round() as i32 {
                _ if (v - v.round()).abs() > 1e-6 => String::new(),
                0 => "p0".into(),
                1 => "p90".into(),
                2 => "p99".into(),
                3 => "p99.9".into(),
                _ => "p99.99".into(),
            })
            .max_light_lines(0)
            .label_style((FONT, LABEL_PX))
            .draw()?;
        for (k, o) in p.ops.iter().enumerate() {
            let colour = COLOURS[k];
            let pts: Vec<(f64, f64)> = o
                .lat_ns
                .percentiles
                .iter()
                .map(|&(q, v)| (nines(q), v.max(1) as f64))
                .chain(std::iter::once((4.5, o.lat_ns.max.max(1) as f64)))
                .collect();
            c.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))?;
            c.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
        }
        Ok(())
    })
}

/// IOPS and p95/p99 against one axis, one line per curve, knees marked.
pub fn scaling(r: &Report, axis: &str, curves: &[&Curve]) -> io::Result<String> {
    let xs: Vec<u64> = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.x(axis)))
        .collect();
    let x0 = xs.iter().copied().min().unwrap_or(1).max(1) as f64;
    let x1 = (xs.iter().copied().max().unwrap_or(2).max(1) as f64).max(x0 * 2.0);
    let ymax = nice_max(
        curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.iops))
            .fold(0.0, f64::max),
    );
    let (lo, hi) = lat_range(
        curves
            .iter()
            .flat_map(|c| c.points.iter().flat_map(|p| [p.p95_ns, p.p99_ns])),
    );
    let points: Vec<usize> = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.point))
        .collect();
    let name = axis.trim_end_matches("_bytes").replace('_', " ");
    let fmt_x = move |v: &f64| {
        if axis == "block_size_bytes" {
            format_size(v.round() as u64)
        } else {
            format!("{v:.0}")
        }
    };
    let mut keys: Vec<(Mark, String)> = curves
        .iter()
        .enumerate()
        .map(|(k, cv)| (Mark::Line(COLOURS[k % COLOURS.len()], 2), cv.label.clone()))
        .collect();
    let grey = RGBColor(90, 90, 90);
    keys.push((Mark::Line(grey, 2), "latency: solid p99".into()));
    keys.push((Mark::Dashed(grey), "dashed p95".into()));
    let slo = curves.iter().any(|c| c.knee.is_some());
    if slo {
        keys.push((
            Mark::Dotted(grey),
            "dotted: the curve's p99 limit (SLO) of the knee".into(),
        ));
    }
    if curves
        .iter()
        .any(|c| c.knee.as_ref().and_then(|k| k.saturation_load).is_some())
    {
        keys.push((
            Mark::Ring(grey),
            "ring: knee (throughput stops growing)".into(),
        ));
    }
    let key_h = legend_rows(&keys, WIDE) * KEY_ROW + 4;
    let panel = 340;
    svg(
        WIDE,
        26 + panel + key_h,
        &many_caption(r, &points),
        |area| {
            let (plots, key) = area.split_vertically(panel);
            legend(&key, &keys)?;
            let (left, right) = plots.split_horizontally(WIDE / 2);
            let mut c = ChartBuilder::on(&left)
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(60)
                .caption(format!("IOPS by {name}"), (FONT, TITLE_PX))
                .build_cartesian_2d((x0 / 1.2..x1 * 1.2).log_scale().base(2.0), 0.0..ymax)?;
            c.configure_mesh()
                .x_desc(format!("{name} (log2)"))
                .y_desc("IOPS")
                .x_label_formatter(&fmt_x)
                .y_label_formatter(&fmt_iops)
                .max_light_lines(0)
                .label_style((FONT, LABEL_PX))
                .draw()?;
            for (k, cv) in curves.iter().enumerate() {
                let colour = COLOURS[k % COLOURS.len()];
                let pts: Vec<(f64, f64)> = cv
                    .points
                    .iter()
                    .map(|p| (p.x(axis) as f64, p.iops))
                    .collect();
                c.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))?;
                c.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
                // The knee: a ring around its point, explained in the legend (a word beside it
                // would sit on the next curve's points).
                if let Some(k) = cv.knee.as_ref().and_then(|k| k.saturation_load) {
                    if let Some(p) = cv.points.iter().find(|p| p.load == k) {
                        c.draw_series(std::iter::once(Circle::new(
                            (p.x(axis) as f64, p.iops),
                            8,
                            colour.stroke_width(2),
                        )))?;
                    }
                }
            }
            let mut c = ChartBuilder::on(&right)
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(60)
                .caption(
                    format!("p99 (solid) and p95 (dashed) by {name}"),
                    (FONT, TITLE_PX),
                )
                .build_cartesian_2d(
                    (x0 / 1.2..x1 * 1.2).log_scale().base(2.0),
                    (lo..hi).log_scale(),
                )?;
            c.configure_mesh()
                .x_desc(format!("{name} (log2)"))
                .y_desc("latency")
                .x_label_formatter(&fmt_x)
                .y_labels(6)
                .y_label_formatter(&fmt_ns)
                .max_light_lines(0)
                .label_style((FONT, LABEL_PX))
                .draw()?;
            for (k, cv) in curves.iter().enumerate() {
                let colour = COLOURS[k % COLOURS.len()];
                let p99: Vec<(f64, f64)> = cv
                    .points
                    .iter()
                    .map(|p| (p.x(axis) as f64, p.p99_ns.max(1) as f64))
                    .collect();
                let p95: Vec<(f64, f64)> = cv
                    .points
                    .iter()
                    .map(|p| (p.x(axis) as f64, p.p95_ns.max(1) as f64))
                    .collect();
                c.draw_series(LineSeries::new(p99.clone(), colour.stroke_width(2)))?;
                c.draw_series(p99.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
                c.draw_series(DashedLineSeries::new(p95, 5, 3, colour.stroke_width(1)))?;
                if let Some(slo) = cv.knee.as_ref().map(|k| k.slo_p99_ns as f64) {
                    if slo > lo && slo < hi {
                        c.draw_series(DashedLineSeries::new(
                            vec![(x0 / 1.2, slo), (x1 * 1.2, slo)],
                            2,
                            3,
                            colour.mix(0.6).stroke_width(1),
                        ))?;
                    }
                }
            }
            Ok(())
        },
    )
}

/// Side by side: A and B of each comparison, IOPS bars with the ratio, p99 bars.
pub fn comparisons(r: &Report, cs: &[&Comparison]) -> io::Result<String> {
    let n = cs.len().max(1);
    let h = 90 + 80 * n as u32;
    let points: Vec<usize> = cs.iter().flat_map(|c| [c.a_point, c.b_point]).collect();
    let imax = nice_max(
        cs.iter()
            .flat_map(|c| [c.a_iops, c.b_iops])
            .fold(0.0, f64::max),
    ) * 2.0;
    let pmax = nice_max(
        cs.iter()
            .flat_map(|c| [c.a_p99_ns, c.b_p99_ns])
            .max()
            .unwrap_or(1) as f64,
    ) * 1.3;
    svg(WIDE, h, &many_caption(r, &points), |area| {
        let (left, right) = area.split_horizontally(WIDE * 7 / 12);
        let rows = 0.0..(n as f64);
        let mut c = ChartBuilder::on(&left)
            .margin(8)
            .x_label_area_size(32)
            .y_label_area_size(0)
            .caption("IOPS, A (top) and B", (FONT, TITLE_PX))
            .build_cartesian_2d(0.0..imax, rows.clone())?;
        c.configure_mesh()
            .disable_y_mesh()
            .x_label_formatter(&fmt_iops)
            .max_light_lines(0)
            .label_style((FONT, LABEL_PX))
            .draw()?;
        for (k, cmp) in cs.iter().enumerate() {
            let y = (n - 1 - k) as f64;
            let verdict = match cmp.p_value {
                Some(_) if cmp.significant => "beyond noise",
                Some(_) => "within noise",
                None => "too few intervals",
            };
            for (j, (v, label)) in [(cmp.a_iops, &cmp.a_value), (cmp.b_iops, &cmp.b_value)]
                .iter()
                .enumerate()
            {
                let top = y + 0.95 - j as f64 * 0.42;
                c.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, top - 0.36), (*v, top)],
                    COLOURS[j].mix(0.8).filled(),
                )))?;
                let ratio = if j == 1 {
                    format!(", B/A {:.3}, {verdict}", cmp.iops_ratio)
                } else {
                    String::new()
                };
                c.draw_series(std::iter::once(Text::new(
                    format!("{}={label}: {}{ratio}", cmp.parameter, fmt_iops(v)),
                    (*v + imax * 0.01, top - 0.1),
                    (FONT, LABEL_PX).into_font().color(&BLACK),
                )))?;
            }
        }
        let mut c = ChartBuilder::on(&right)
            .margin(8)
            .x_label_area_size(32)
            .y_label_area_size(0)
            .caption("p99, A (top) and B", (FONT, TITLE_PX))
            .build_cartesian_2d(0.0..pmax, rows)?;
        c.configure_mesh()
            .disable_y_mesh()
            .x_label_formatter(&fmt_ns)
            .max_light_lines(0)
            .label_style((FONT, LABEL_PX))
            .draw()?;
        for (k, cmp) in cs.iter().enumerate() {
            let y = (n - 1 - k) as f64;
            for (j, v) in [cmp.a_p99_ns, cmp.b_p99_ns].iter().enumerate() {
                let top = y + 0.95 - j as f64 * 0.42;
                c.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, top - 0.36), (*v as f64, top)],
                    COLOURS[j].mix(0.8).filled(),
                )))?;
                c.draw_series(std::iter::once(Text::new(
                    format_ns(*v as f64),
                    (*v as f64 + pmax * 0.01, top - 0.1),
                    (FONT, LABEL_PX).into_font().color(&BLACK),
                )))?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn rate_labels_keep_the_decimals_they_need() {
        let f = |v: f64| super::fmt_iops(&v);
        assert_eq!(f(1500.0), "1.5k");
        assert_eq!(f(2000.0), "2k");
        assert_eq!(f(350_000.0), "350k");
        assert_eq!(f(2_250_000.0), "2.25M");
        assert_eq!(f(500.0), "500");
    }
}
