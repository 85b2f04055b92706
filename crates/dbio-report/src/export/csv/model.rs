//! `dbio model ... --format csv`: the table of each result with a header row, units in the
//! column names (the JSON keys), full precision, empty cells for undefined values.

use super::{csv_row, opt};
use crate::export::Csv;
use crate::export::Exporter;
use dbio_schema::model::{BoundsResult, LiveResult, MvaResult, ResourceKind, UslResult};
use std::io::{self, Write};

impl Exporter<BoundsResult> for Csv {
    /// One row per population.
    fn export(&self, r: &BoundsResult, out: &mut dyn Write) -> io::Result<()> {
        csv_row(out, ["n", "x_upper_per_s", "r_lower_s"])?;
        for row in &r.rows {
            csv_row(
                out,
                [
                    row.n.to_string(),
                    row.x_upper_per_s.to_string(),
                    row.r_lower_s.to_string(),
                ],
            )?;
        }
        Ok(())
    }
}

impl Exporter<MvaResult> for Csv {
    /// One row per population.
    fn export(&self, r: &MvaResult, out: &mut dyn Write) -> io::Result<()> {
        csv_row(
            out,
            [
                "n",
                "x_per_s",
                "r_s",
                "x_upper_per_s",
                "r_lower_s",
                "bottleneck_utilization_pct",
            ],
        )?;
        for row in &r.rows {
            csv_row(
                out,
                [
                    row.n.to_string(),
                    row.x_per_s.to_string(),
                    row.r_s.to_string(),
                    row.x_upper_per_s.to_string(),
                    row.r_lower_s.to_string(),
                    row.bottleneck_utilization_pct.to_string(),
                ],
            )?;
        }
        Ok(())
    }
}

impl Exporter<UslResult> for Csv {
    /// One row per measured point.
    fn export(&self, r: &UslResult, out: &mut dyn Write) -> io::Result<()> {
        csv_row(
            out,
            [
                "n",
                "x_per_s",
                "r_s",
                "fitted_x_per_s",
                "residual_per_s",
                "efficiency",
            ],
        )?;
        for p in &r.points {
            csv_row(
                out,
                [
                    p.n.to_string(),
                    p.x_per_s.to_string(),
                    opt(p.r_s),
                    p.fitted_x_per_s.to_string(),
                    p.residual_per_s.to_string(),
                    p.efficiency.to_string(),
                ],
            )?;
        }
        Ok(())
    }
}

impl Exporter<LiveResult> for Csv {
    /// One row per resource.
    fn export(&self, r: &LiveResult, out: &mut dyn Write) -> io::Result<()> {
        csv_row(
            out,
            [
                "name",
                "kind",
                "utilization_pct",
                "demand_s",
                "servers",
                "detail",
            ],
        )?;
        for x in &r.resources {
            let kind = match x.kind {
                ResourceKind::Cpu => "cpu",
                ResourceKind::Disk => "disk",
                ResourceKind::Net => "net",
            };
            csv_row(
                out,
                [
                    x.name.clone(),
                    kind.to_string(),
                    x.utilization_pct.to_string(),
                    x.demand_s.to_string(),
                    opt(x.servers),
                    x.detail.clone(),
                ],
            )?;
        }
        Ok(())
    }
}
