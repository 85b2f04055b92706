//! `dbio model ... --format html`: the model's result as one self-contained page, with the
//! chart the performance-modelling slides draw: throughput against the population, the
//! operational-law bounds (N / (D + Z) and 1 / Dmax) with Nsat marked, the MVA curve, the
//! measured points and the fitted USL curve. Inline SVG (plotters), no script, nothing loaded.

use super::charts::{fmt_iops, nice_max, svg, Area, Res, COLOURS, FONT};
use super::report::{esc, STYLE};
use crate::export::Exporter;
use crate::export::Html;
use dbio_schema::model::{BoundsResult, Demands, Measured, MvaResult, UslResult};
use dbio_schema::units::format_ns;
use plotters::prelude::*;
use std::io::{self, Write};

/// One line of a chart: its label and its (N, X) points.
struct Line {
    label: String,
    points: Vec<(f64, f64)>,
    dashed: bool,
}

/// Throughput against N: lines, measured points, and an optional vertical mark (Nsat, Nmax).
fn chart(
    caption: &str,
    title: &str,
    lines: &[Line],
    measured: &[(f64, f64)],
    mark: Option<(f64, &str)>,
) -> io::Result<String> {
    let x1 = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .chain(measured.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let y1 = nice_max(
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .chain(measured.iter().map(|p| p.1))
            .filter(|y| y.is_finite())
            .fold(0.0, f64::max),
    );
    svg(960, 420, caption, |area: &Area| -> Res {
        let mut c = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(60)
            .caption(title, (FONT, 14))
            .build_cartesian_2d(0.0..x1 * 1.05, 0.0..y1)?;
        c.configure_mesh()
            .x_desc("N (users, threads x iodepth)")
            .y_desc("throughput (/s)")
            .y_label_formatter(&fmt_iops)
            .max_light_lines(0)
            .label_style((FONT, 11))
            .draw()?;
        for (k, l) in lines.iter().enumerate() {
            let colour = COLOURS[k % COLOURS.len()];
            let style = colour.stroke_width(2);
            if l.dashed {
                c.draw_series(DashedLineSeries::new(l.points.clone(), 6, 4, style))?
            } else {
                c.draw_series(LineSeries::new(l.points.clone(), style))?
            }
            .label(l.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style));
        }
        if !measured.is_empty() {
            let black = COLOURS[6];
            c.draw_series(measured.iter().map(|&p| Circle::new(p, 4, black.filled())))?
                .label("measured")
                .legend(move |(x, y)| Circle::new((x + 7, y), 4, black.filled()));
        }
        if let Some((n, what)) = mark {
            let grey = RGBColor(120, 120, 120);
            c.draw_series(DashedLineSeries::new(
                vec![(n, 0.0), (n, y1)],
                3,
                3,
                grey.stroke_width(1),
            ))?;
            c.draw_series(std::iter::once(Text::new(
                format!("{what} = {n:.1}"),
                (n, y1 * 0.05),
                (FONT, 12).into_font().color(&grey),
            )))?;
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .border_style(RGBColor(200, 200, 200))
            .background_style(WHITE.mix(0.9))
            .label_font((FONT, 11))
            .draw()?;
        Ok(())
    })
}

fn page(out: &mut dyn Write, title: &str, lead: &str, figure: &str, table: &str) -> io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n<p>{lead}</p>\n<figure>{figure}</figure>\n{table}</body></html>\n",
        t = esc(title)
    )
}

/// The demands as the text output states them, one line each.
fn demands_text(d: &Demands) -> String {
    let centres: Vec<String> = d
        .centres
        .iter()
        .map(|c| format!("{} {}", c.name, format_ns(c.demand_s * 1e9)))
        .collect();
    format!(
        "Demands {}; think time {}; D = {}, Dmax = {} at {} (the bottleneck); Nsat = {:.2}; X &le; {:.1}/s.",
        esc(&centres.join(", ")),
        format_ns(d.think_s * 1e9),
        format_ns(d.total_demand_s * 1e9),
        format_ns(d.max_demand_s * 1e9),
        esc(&d.bottleneck),
        d.n_sat,
        d.x_limit_per_s
    )
}

fn measured_points(m: &Option<Measured>) -> Vec<(f64, f64)> {
    m.iter().map(|m| (m.n, m.x_per_s)).collect()
}

fn caption(kind: &str) -> String {
    format!(
        "dbio {} · dbio model {kind}",
        dbio_schema::doc::DBIO_VERSION
    )
}

fn table(head: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut s = String::from("<table><tr>");
    for h in head {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr>\n");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            s.push_str(&format!("<td>{}</td>", esc(&c)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

impl Exporter<BoundsResult> for Html {
    fn export(&self, r: &BoundsResult, out: &mut dyn Write) -> io::Result<()> {
        let line = Line {
            label: "X(N) <= min(N / (D + Z), 1 / Dmax)".into(),
            points: r
                .rows
                .iter()
                .map(|b| (b.n as f64, b.x_upper_per_s))
                .collect(),
            dashed: true,
        };
        let svg = chart(
            &caption("bounds"),
            "Throughput bounds",
            &[line],
            &measured_points(&r.measured),
            Some((r.demands.n_sat, "Nsat")),
        )?;
        let t = table(
            &["N", "X <= (/s)", "R >="],
            r.rows.iter().map(|b| {
                vec![
                    b.n.to_string(),
                    format!("{:.1}", b.x_upper_per_s),
                    format_ns(b.r_lower_s * 1e9),
                ]
            }),
        );
        page(
            out,
            "dbio model bounds",
            &demands_text(&r.demands),
            &svg,
            &t,
        )
    }
}

impl Exporter<MvaResult> for Html {
    fn export(&self, r: &MvaResult, out: &mut dyn Write) -> io::Result<()> {
        let lines = [
            Line {
                label: "MVA X(N)".into(),
                points: r.rows.iter().map(|m| (m.n as f64, m.x_per_s)).collect(),
                dashed: false,
            },
            Line {
                label: "bounds".into(),
                points: r
                    .rows
                    .iter()
                    .map(|m| (m.n as f64, m.x_upper_per_s))
                    .collect(),
                dashed: true,
            },
        ];
        let svg = chart(
            &caption("mva"),
            "Throughput by exact mean value analysis, under its bounds",
            &lines,
            &measured_points(&r.measured),
            Some((r.demands.n_sat, "Nsat")),
        )?;
        let t = table(
            &["N", "X (/s)", "R", "X bound", "R bound", "bottleneck util"],
            r.rows.iter().map(|m| {
                vec![
                    m.n.to_string(),
                    format!("{:.1}", m.x_per_s),
                    format_ns(m.r_s * 1e9),
                    format!("{:.1}", m.x_upper_per_s),
                    format_ns(m.r_lower_s * 1e9),
                    format!("{:.1}%", m.bottleneck_utilization_pct),
                ]
            }),
        );
        page(out, "dbio model mva", &demands_text(&r.demands), &svg, &t)
    }
}

/// X(N) of the fitted USL.
fn usl_x(r: &UslResult, n: f64) -> f64 {
    let (s, k, l) = (r.sigma.estimate, r.kappa.estimate, r.lambda_per_s.estimate);
    l * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))
}

impl Exporter<UslResult> for Html {
    fn export(&self, r: &UslResult, out: &mut dyn Write) -> io::Result<()> {
        // The curve from N = 1 to past the peak and the predictions, at least twice the range.
        let far = r
            .predictions
            .iter()
            .map(|p| p.n)
            .chain(r.n_max.map(|n| n * 1.5))
            .fold(r.max_measured_n * 2.0, f64::max);
        let steps = 200;
        let curve: Vec<(f64, f64)> = (0..=steps)
            .map(|i| {
                let n = 1.0 + (far - 1.0) * i as f64 / steps as f64;
                (n, usl_x(r, n))
            })
            .collect();
        let linear: Vec<(f64, f64)> = [1.0, far]
            .iter()
            .map(|&n| (n, r.lambda_per_s.estimate * n))
            .filter(|p| p.1.is_finite())
            .collect();
        let mut lines = vec![Line {
            label: format!(
                "USL fit: sigma {:.4}, kappa {:.3e}, lambda {:.1}",
                r.sigma.estimate, r.kappa.estimate, r.lambda_per_s.estimate
            ),
            points: curve,
            dashed: false,
        }];
        // The linear line is cut where it leaves the chart's range of the measured points.
        let top = r
            .points
            .iter()
            .map(|p| p.x_per_s)
            .fold(0.0, f64::max)
            .max(r.x_max_per_s.unwrap_or(0.0))
            * 1.2;
        if let (Some(a), Some(b)) = (linear.first(), linear.last()) {
            let n_top = (top / r.lambda_per_s.estimate).min(b.0);
            lines.push(Line {
                label: "linear scaling (lambda N)".into(),
                points: vec![*a, (n_top, r.lambda_per_s.estimate * n_top)],
                dashed: true,
            });
        }
        let measured: Vec<(f64, f64)> = r.points.iter().map(|p| (p.n, p.x_per_s)).collect();
        let svg = chart(
            &format!("{} · {}", caption("usl"), r.source),
            "Universal Scalability Law: measured points and the fitted curve",
            &lines,
            &measured,
            r.n_max.map(|n| (n, "Nmax")),
        )?;
        let t = table(
            &["N", "X measured", "X fitted", "residual", "efficiency"],
            r.points.iter().map(|p| {
                vec![
                    format!("{}", p.n),
                    format!("{:.2}", p.x_per_s),
                    format!("{:.2}", p.fitted_x_per_s),
                    format!("{:.2}", p.residual_per_s),
                    format!("{:.1}%", p.efficiency * 100.0),
                ]
            }),
        );
        let mut lead = esc(&r.reading_text);
        for w in &r.warnings {
            lead.push_str(&format!("<br>warning: {}", esc(w)));
        }
        page(out, "dbio model usl", &lead, &svg, &t)
    }
}
