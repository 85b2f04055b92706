//! `dbio model` as text for people: the demands and what the laws make of them, then a table
//! per population (bounds, MVA), the fitted coefficients with their standard errors and the
//! residuals (USL), or the resources with their demands (live). Times print with a unit that
//! keeps three significant figures (`2.10ms`), rates with four.

use crate::export::table::{Column, Table};
use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::model::{
    BoundsResult, Coefficient, Demands, LiveResult, Measured, MvaResult, ResourceKind, UslResult,
};
use dbio_schema::units::format_ns;
use std::fmt::Write as _;
use std::io::{self, Write};

/// A time in seconds with a unit (`850ns`, `2.10ms`, `1.50s`).
pub fn time(s: f64) -> String {
    if s == 0.0 {
        "0s".into()
    } else {
        format_ns(s * 1e9)
    }
}

/// A number with four significant figures, without an exponent between 1e-4 and 1e9.
pub fn sig4(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..9).contains(&mag) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

/// A concurrency: whole numbers as integers, others with four significant figures.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        sig4(v)
    }
}

fn demands_text(s: &mut String, d: &Demands) {
    let centres: Vec<String> = d
        .centres
        .iter()
        .map(|c| format!("{} {} ({})", c.name, time(c.demand_s), c.kind.name()))
        .collect();
    let _ = writeln!(s, "centres  {}", centres.join(", "));
    let _ = writeln!(s, "Z        {}  think time", time(d.think_s));
    let _ = writeln!(
        s,
        "D        {}  total demand: the response time of a transaction alone",
        time(d.total_demand_s)
    );
    let _ = writeln!(
        s,
        "Dmax     {}  at {}, the bottleneck",
        time(d.max_demand_s),
        d.bottleneck
    );
    let _ = writeln!(
        s,
        "Nsat     {}  (D + Z) / Dmax: from this population on, queueing is certain",
        sig4(d.n_sat)
    );
    let _ = writeln!(
        s,
        "X limit  {}/s  1 / Dmax: no population gets more",
        sig4(d.x_limit_per_s)
    );
}

/// The benchmark's own point and what the model says of its concurrency (`model`: a line
/// such as `the bounds at N = 4: X <= 221/s, R >= 6.60ms`).
fn measured_text(s: &mut String, m: &Measured, model: String) {
    let r = m
        .r_s
        .map(|r| format!(", R = {}", time(r)))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "measured N = {} (threads x iodepth): X = {}/s{r} in {}",
        num(m.n),
        sig4(m.x_per_s),
        m.source
    );
    let _ = writeln!(s, "         {model}");
    for n in &m.notes {
        let _ = writeln!(s, "         {n}");
    }
}

impl Exporter<BoundsResult> for Text {
    fn export(&self, r: &BoundsResult, out: &mut dyn Write) -> io::Result<()> {
        let mut s = String::new();
        demands_text(&mut s, &r.demands);
        if let Some(m) = &r.measured {
            let d = &r.demands;
            let x = (m.n / (d.total_demand_s + d.think_s)).min(d.x_limit_per_s);
            let rt = d.total_demand_s.max(m.n * d.max_demand_s - d.think_s);
            measured_text(
                &mut s,
                m,
                format!(
                    "the bounds at N = {}: X <= {}/s, R >= {}",
                    num(m.n),
                    sig4(x),
                    time(rt)
                ),
            );
        }
        let mut t = Table::new(vec![
            Column::right("N"),
            Column::right("X <= (/s)"),
            Column::right("R >="),
        ]);
        for row in &r.rows {
            t.row([
                row.n.to_string(),
                sig4(row.x_upper_per_s),
                time(row.r_lower_s),
            ]);
        }
        let _ = write!(s, "\n{}", t.render());
        out.write_all(s.as_bytes())
    }
}

impl Exporter<MvaResult> for Text {
    fn export(&self, r: &MvaResult, out: &mut dyn Write) -> io::Result<()> {
        let mut s = String::new();
        demands_text(&mut s, &r.demands);
        if let Some(m) = &r.measured {
            let model = match r.rows.iter().find(|row| row.n as f64 == m.n) {
                Some(row) => format!(
                    "MVA at N = {}: X = {}/s, R = {}",
                    row.n,
                    sig4(row.x_per_s),
                    time(row.r_s)
                ),
                None => format!("N = {} is not in the table: raise --max-n", num(m.n)),
            };
            measured_text(&mut s, m, model);
        }
        let mut t = Table::new(vec![
            Column::right("N"),
            Column::right("X (/s)"),
            Column::right("R"),
            Column::right("X bound"),
            Column::right("R bound"),
            Column::right(&format!("{} util", r.demands.bottleneck)),
        ]);
        for row in &r.rows {
            t.row([
                row.n.to_string(),
                sig4(row.x_per_s),
                time(row.r_s),
                sig4(row.x_upper_per_s),
                time(row.r_lower_s),
                format!("{:.1}%", row.bottleneck_utilization_pct),
            ]);
        }
        let _ = write!(s, "\n{}", t.render());
        let _ = writeln!(s, "\nat N = {}:", r.n);
        let mut c = Table::new(vec![
            Column::left("centre"),
            Column::left("kind"),
            Column::right("demand"),
            Column::right("residence"),
            Column::right("queue"),
            Column::right("util"),
        ]);
        for p in &r.per_centre {
            c.row([
                p.name.clone(),
                p.kind.name().to_string(),
                time(p.demand_s),
                time(p.residence_s),
                sig4(p.queue_length),
                p.utilization_pct
                    .map(|u| format!("{u:.1}%"))
                    .unwrap_or_else(|| "-".into()),
            ]);
        }
        s.push_str(&c.render());
        out.write_all(s.as_bytes())
    }
}

fn coef(c: &Coefficient) -> String {
    let mut s = sig4(c.estimate);
    if let Some(e) = c.std_error {
        let _ = write!(s, " ± {}", sig4(e));
    }
    if c.at_bound {
        s.push_str(" (on its bound)");
    }
    s
}

impl Exporter<UslResult> for Text {
    fn export(&self, r: &UslResult, out: &mut dyn Write) -> io::Result<()> {
        let mut s = String::new();
        let _ = writeln!(s, "source   {} ({} points)", r.source, r.points.len());
        let _ = writeln!(s, "sigma    {}  contention", coef(&r.sigma));
        let _ = writeln!(s, "kappa    {}  coherency", coef(&r.kappa));
        let _ = writeln!(
            s,
            "lambda   {}  throughput of one user without loss (fitted)",
            coef(&r.lambda_per_s)
        );
        let rse = r
            .residual_std_error_per_s
            .map(|e| format!("residual standard error {} on {} df, ", sig4(e), r.df))
            .unwrap_or_default();
        let _ = writeln!(s, "fit      {rse}R² {:.4}", r.r_squared);
        if let (Some(n), Some(x)) = (r.n_max, r.x_max_per_s) {
            let _ = writeln!(s, "Nmax     {}  sqrt((1 - sigma) / kappa)", sig4(n));
            let _ = writeln!(s, "Xmax     {}  X at Nmax", sig4(x));
        }
        if let Some(c) = r.x_ceiling_per_s {
            let _ = writeln!(
                s,
                "ceiling  {}  lambda / sigma (kappa = 0: no peak)",
                sig4(c)
            );
        }
        if let Some(z) = r.implied_think_s {
            let _ = writeln!(s, "Z        {}  think time implied by N / X - R", time(z));
        }
        let _ = writeln!(s, "reading  {}", r.reading_text);
        let with_r = r.points.iter().any(|p| p.r_s.is_some());
        let mut cols = vec![
            Column::right("N"),
            Column::right("X"),
            Column::right("fitted"),
            Column::right("residual"),
            Column::right("efficiency"),
        ];
        if with_r {
            cols.push(Column::right("R"));
        }
        let mut t = Table::new(cols);
        for p in &r.points {
            let mut row = vec![
                num(p.n),
                sig4(p.x_per_s),
                sig4(p.fitted_x_per_s),
                sig4(p.residual_per_s),
                format!("{:.1}%", 100.0 * p.efficiency),
            ];
            if with_r {
                row.push(p.r_s.map(time).unwrap_or_default());
            }
            t.row(row);
        }
        let _ = write!(s, "\n{}", t.render());
        if !r.predictions.is_empty() {
            let mut t = Table::new(vec![
                Column::right("N"),
                Column::right("X predicted"),
                Column::right("R predicted"),
                Column::left(""),
            ]);
            for p in &r.predictions {
                t.row([
                    num(p.n),
                    sig4(p.x_per_s),
                    p.r_s.map(time).unwrap_or_else(|| "-".into()),
                    if p.beyond_2x_measured {
                        "beyond 2x the measured range".into()
                    } else {
                        String::new()
                    },
                ]);
            }
            let _ = write!(s, "\n{}", t.render());
        }
        for w in &r.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        for n in &r.notes {
            let _ = writeln!(s, "note: {n}");
        }
        out.write_all(s.as_bytes())
    }
}

impl Exporter<LiveResult> for Text {
    fn export(&self, r: &LiveResult, out: &mut dyn Write) -> io::Result<()> {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "interval {:.1}s, {} TPS ({})",
            r.interval_s,
            sig4(r.transactions_per_s),
            r.tps_source
        );
        let mut t = Table::new(vec![
            Column::left("resource"),
            Column::left("kind"),
            Column::right("busy"),
            Column::right("demand"),
            Column::left("measured"),
        ]);
        for x in &r.resources {
            let kind = match x.kind {
                ResourceKind::Cpu => "cpu",
                ResourceKind::Disk => "disk",
                ResourceKind::Net => "net",
            };
            t.row([
                x.name.clone(),
                kind.to_string(),
                format!("{:.1}%", x.utilization_pct),
                time(x.demand_s),
                x.detail.clone(),
            ]);
        }
        let _ = write!(s, "\n{}\n", t.render());
        let _ = writeln!(s, "D        {}  sum of the demands", time(r.total_demand_s));
        let _ = writeln!(
            s,
            "Dmax     {}  at {}, the bottleneck",
            time(r.max_demand_s),
            r.bottleneck
        );
        let _ = writeln!(s, "Z        {}  think time", time(r.think_s));
        let _ = writeln!(
            s,
            "Nsat     {}  (D + Z) / Dmax: from this concurrency on, queueing is certain",
            sig4(r.n_sat)
        );
        if let (Some(n), Some(f)) = (r.threads_running, r.r_floor_s) {
            let _ = writeln!(
                s,
                "R floor  {}  max(D, N Dmax - Z) at N = {} threads running (mean)",
                time(f),
                sig4(n)
            );
        }
        for n in &r.notes {
            let _ = writeln!(s, "note: {n}");
        }
        out.write_all(s.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_figures() {
        assert_eq!(sig4(90.0), "90.00");
        assert_eq!(sig4(0.02773), "0.02773");
        assert_eq!(sig4(1884.3), "1884");
        assert_eq!(sig4(1.044e-4), "0.0001044");
        assert_eq!(sig4(1.044e-5), "1.044e-5");
        assert_eq!(time(0.0021), "2.10ms");
        assert_eq!(time(0.0), "0s");
    }
}
