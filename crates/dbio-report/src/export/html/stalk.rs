//! `dbio mysql stalk --report DIR --format html`: one self-contained page for a capture. The
//! lead-up and the collection on one time axis (seconds from the trigger; the lead-up shaded):
//! Threads_running and the active threads on the left axis, the busiest device's %util on the
//! right; then who did it (by user, by statement, by statement time where performance_schema
//! gave digests) and the notes. Inline SVG (plotters), no script, nothing loaded.

use super::charts::{legend, legend_rows, svg, Mark, COLOURS, FONT, LABEL_PX, TITLE_PX};
use super::report::{esc, STYLE};
use crate::export::Exporter;
use crate::export::Html;
use dbio_schema::stalk::{AttributionRow, StalkReport, TimelinePoint};
use plotters::prelude::*;
use std::io::{self, Write};

/// The shade of the lead-up.
const LEAD: RGBColor = RGBColor(232, 236, 245);
/// Fewer points than this draw no chart (one line says so instead).
const MIN_POINTS: usize = 2;

fn series(tl: &[TimelinePoint], f: impl Fn(&TimelinePoint) -> Option<f64>) -> Vec<(f64, f64)> {
    tl.iter().filter_map(|p| f(p).map(|v| (p.t_s, v))).collect()
}

/// The timeline chart, or why there is none.
fn timeline(r: &StalkReport, width: u32) -> io::Result<Option<String>> {
    let tl = &r.timeline;
    let running = series(tl, |p| p.threads_running);
    let active = series(tl, |p| p.active_threads.map(|v| v as f64));
    let util = series(tl, |p| p.util_pct);
    if running.len().max(active.len()) < MIN_POINTS {
        return Ok(None);
    }
    let x0 = tl.iter().map(|p| p.t_s).fold(0.0, f64::min);
    let x1 = tl.iter().map(|p| p.t_s).fold(0.0, f64::max).max(x0 + 1.0);
    let ymax = running
        .iter()
        .chain(&active)
        .map(|p| p.1)
        .fold(1.0, f64::max)
        * 1.1;
    let device = tl
        .iter()
        .rev()
        .find_map(|p| p.busiest_device.clone())
        .unwrap_or_else(|| "busiest device".into());
    let mut keys = vec![
        (Mark::Line(COLOURS[0], 2), "Threads_running".to_string()),
        (
            Mark::Line(COLOURS[1], 2),
            "active threads in the processlist (not the stalker)".to_string(),
        ),
    ];
    if !util.is_empty() {
        keys.push((
            Mark::Dashed(COLOURS[2]),
            format!("%util of the busiest device ({device}; right axis)"),
        ));
    }
    keys.push((Mark::Box(LEAD), "lead-up (before the trigger)".into()));
    let key_h = legend_rows(&keys, width) * 20 + 4;
    let panel = 300;
    let caption = format!(
        "{} · capture {} · made by {}",
        r.capture_dir, r.prefix, r.made_by
    );
    svg(width, 26 + panel + key_h, &caption, |area| {
        let (top, key) = area.split_vertically(panel);
        let mut c = ChartBuilder::on(&top)
            .margin_left(8)
            .margin_right(8)
            .x_label_area_size(36)
            .y_label_area_size(50)
            .right_y_label_area_size(50)
            .caption(
                "the lead-up and the collection (t = 0: the trigger fired)",
                (FONT, TITLE_PX),
            )
            .build_cartesian_2d(x0..x1, 0.0..ymax)?
            .set_secondary_coord(x0..x1, 0.0..100.0);
        c.configure_mesh()
            .y_desc("threads")
            .x_desc("seconds from the trigger")
            .x_label_formatter(&|v| format!("{v:.0}s"))
            .max_light_lines(0)
            .label_style((FONT, LABEL_PX))
            .draw()?;
        c.configure_secondary_axes()
            .y_desc("%util")
            .label_style((FONT, LABEL_PX))
            .draw()?;
        if x0 < 0.0 {
            c.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (0.0, ymax)],
                LEAD.filled(),
            )))?;
        }
        c.draw_series(LineSeries::new(
            vec![(0.0, 0.0), (0.0, ymax)],
            RGBColor(90, 90, 90).stroke_width(1),
        ))?;
        c.draw_series(LineSeries::new(running, COLOURS[0].stroke_width(2)))?;
        c.draw_series(LineSeries::new(active, COLOURS[1].stroke_width(2)))?;
        if !util.is_empty() {
            c.draw_secondary_series(DashedLineSeries::new(
                util,
                5,
                3,
                COLOURS[2].stroke_width(2),
            ))?;
        }
        legend(&key, &keys)?;
        Ok(())
    })
    .map(Some)
}

fn table(out: &mut dyn Write, head: &[&str], rows: &[Vec<String>], left: usize) -> io::Result<()> {
    write!(out, "<table><tr>")?;
    for (i, h) in head.iter().enumerate() {
        let class = if i >= head.len() - left {
            " class=\"l\""
        } else {
            ""
        };
        write!(out, "<th{class}>{}</th>", esc(h))?;
    }
    writeln!(out, "</tr>")?;
    for r in rows {
        write!(out, "<tr>")?;
        for (i, c) in r.iter().enumerate() {
            let class = if i >= r.len() - left {
                " class=\"l\""
            } else {
                ""
            };
            write!(out, "<td{class}>{}</td>", esc(c))?;
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</table>")
}

fn shares(a: &AttributionRow) -> Vec<String> {
    vec![
        format!("{:.1}%", a.collect_share_pct),
        format!("{:.1}%", a.pre_share_pct),
        format!("{:.2}", a.collect_avg_threads),
        format!("{:.2}", a.pre_avg_threads),
        a.max_time_s.to_string(),
    ]
}

impl Exporter<StalkReport> for Html {
    fn export(&self, r: &StalkReport, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"generator\" content=\"dbio {}\"><title>dbio mysql stalk: {}</title>\
             <style>{STYLE}</style></head><body>",
            esc(dbio_schema::doc::DBIO_VERSION),
            esc(&r.prefix)
        )?;
        writeln!(
            out,
            "<h1>dbio mysql stalk: capture {}</h1><p>{} (made by {}).</p>",
            esc(&r.prefix),
            esc(&r.capture_dir),
            esc(&r.made_by)
        )?;
        if let Some(c) = &r.capture {
            let values: Vec<String> = c
                .trigger
                .values
                .iter()
                .map(|v| match v.value {
                    Some(x) => format!("{} (value {x})", v.comparison),
                    None => format!("{} (no value)", v.comparison),
                })
                .collect();
            writeln!(
                out,
                "<p>Trigger <code>{}</code> held for {} consecutive checks: {}. Lead-up {:.0} s \
                 ({} samples), collection {:.0} s ({} samples), every {:.1} s; server {}, host {}.</p>",
                esc(&c.trigger.expression),
                c.trigger.cycles,
                esc(&values.join(", ")),
                c.pre_s,
                c.pre_samples,
                c.collect_s,
                c.collect_samples,
                c.interval_s,
                esc(&c.server),
                esc(&c.hostname)
            )?;
        }
        if let Some(t) = &r.pt_trigger {
            writeln!(out, "<pre>{}</pre>", esc(t.trim()))?;
        }
        writeln!(out, "<h2>Timeline</h2>")?;
        match timeline(r, 1280)? {
            Some(svg) => writeln!(out, "<figure>{svg}</figure>")?,
            None => writeln!(
                out,
                "<p class=\"note\">{} sample(s) with thread counts: too few to draw a timeline.</p>",
                r.timeline.len()
            )?,
        }
        let a = &r.attribution;
        writeln!(
            out,
            "<h2>Who did it</h2><p>{}: {} samples in the lead-up, {} in the collection. Shares \
             are of the active thread-samples of each window; threads are the average number \
             busy at once; max_t the longest a statement had run when seen (s).</p>",
            esc(&a.method),
            a.pre_samples,
            a.collect_samples
        )?;
        let head = [
            "collection",
            "lead-up",
            "threads now",
            "threads before",
            "max_t",
        ];
        let users: Vec<Vec<String>> = a
            .users
            .iter()
            .take(10)
            .map(|u| {
                let mut v = shares(u);
                v.push(u.user.clone());
                v
            })
            .collect();
        table(out, &[&head[..], &["user"]].concat(), &users, 1)?;
        let stmts: Vec<Vec<String>> = a
            .statements
            .iter()
            .take(15)
            .map(|u| {
                let mut v = shares(u);
                v.push(format!("{}@{}", u.user, u.host));
                v.push(u.db.clone());
                v.push(u.digest.clone());
                v
            })
            .collect();
        table(
            out,
            &[&head[..], &["user@host", "db", "statement"]].concat(),
            &stmts,
            3,
        )?;
        if a.statements.is_empty() {
            writeln!(out, "<p class=\"note\">No active thread in any sample.</p>")?;
        }
        if let Some(d) = &a.digests {
            writeln!(
                out,
                "<h3>Statement time by digest (performance_schema)</h3><p>{:.1} s of statement \
                 time in the {:.0} s of the collection, {:.1} s in the {:.0} s before the trigger; \
                 digests count completed statements.</p>",
                d.collect_statement_time_s,
                d.collect_window_s,
                d.pre_statement_time_s,
                d.pre_window_s
            )?;
            let rows: Vec<Vec<String>> = d
                .digests
                .iter()
                .take(15)
                .map(|g| {
                    vec![
                        format!("{:.1}%", g.collect_share_pct),
                        format!("{:.1}%", g.pre_share_pct),
                        format!("{:.3}", g.collect_time_s),
                        g.collect_calls.to_string(),
                        g.collect_rows_examined.to_string(),
                        g.schema.clone(),
                        g.text.clone(),
                    ]
                })
                .collect();
            table(
                out,
                &[
                    "collection",
                    "lead-up",
                    "time (s)",
                    "calls",
                    "rows examined",
                    "schema",
                    "statement",
                ],
                &rows,
                2,
            )?;
        }
        if !r.notes.is_empty() {
            writeln!(out, "<h2>Notes</h2><ul>")?;
            for n in &r.notes {
                writeln!(out, "<li>{}</li>", esc(n))?;
            }
            writeln!(out, "</ul>")?;
        }
        writeln!(out, "</body></html>")
    }
}
