//! `dbio report RESULT.json... [--format html|text|json|csv] [-o FILE]`: bench results and
//! sweep directories in; curves, pictures and verdicts (knee, stalls, steady state, A/B) out.
//! The analysis and every format live in dbio-report; this file maps flags and writes bytes.

use crate::cli::{parse_duration_arg, usage};
use crate::output::OutputArgs;
use anyhow::Context;
use dbio_report::analysis::{self, input};
use dbio_schema::report::{Report, ReportOptions};
use std::path::PathBuf;

/// Arguments of `dbio report`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Bench results (`dbio bench --format json -o FILE`) and sweep directories (with
    /// sweep.json and points/*.json). Runs of the same workload, from any host, are merged
    /// exactly: their histograms add.
    #[arg(required = true, value_name = "RESULT")]
    pub inputs: Vec<PathBuf>,
    /// The p99 latency a load must stay under (knee); default: twice the p99 at the lowest load.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg)]
    pub slo_p99: Option<std::time::Duration>,
    /// An interval whose throughput is below this share of the run's median is a stall.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.5)]
    pub stall_fraction: f64,
    /// An interval whose p99 is above this many times the run's median p99 is a stall.
    #[arg(long, value_name = "FACTOR", default_value_t = 10.0)]
    pub stall_p99_factor: f64,
    /// Steady-state window in intervals (0: a fifth of the run, 5 to 60).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub steady_window: usize,
    /// Steady state: largest drift of throughput across the window, in % of its mean.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub steady_slope: f64,
    /// Steady state: largest (max - min) / mean of throughput over the window, in %.
    #[arg(long, value_name = "PCT", default_value_t = 20.0)]
    pub steady_range: f64,
    #[command(flatten)]
    pub out: OutputArgs<Report>,
}

fn options(a: &Args) -> anyhow::Result<ReportOptions> {
    if !(a.stall_fraction > 0.0 && a.stall_fraction < 1.0) {
        return Err(usage(format!(
            "--stall-fraction {}: give a share between 0 and 1 (0.5: half the median)",
            a.stall_fraction
        )));
    }
    if !(a.stall_p99_factor > 1.0 && a.stall_p99_factor.is_finite()) {
        return Err(usage(format!(
            "--stall-p99-factor {}: give a factor above 1 (10: ten times the median p99)",
            a.stall_p99_factor
        )));
    }
    for (flag, v) in [
        ("--steady-slope", a.steady_slope),
        ("--steady-range", a.steady_range),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            return Err(usage(format!("{flag} {v}: give a percentage above 0")));
        }
    }
    if a.steady_window == 1 {
        return Err(usage(
            "--steady-window 1: a window needs at least 2 intervals",
        ));
    }
    let slo = match a.slo_p99 {
        Some(d) if d.is_zero() => return Err(usage("--slo-p99 0: give a latency such as 2ms")),
        Some(d) => Some(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        None => None,
    };
    Ok(ReportOptions {
        slo_p99_ns: slo,
        stall_throughput_fraction: a.stall_fraction,
        stall_p99_factor: a.stall_p99_factor,
        steady_window_intervals: a.steady_window,
        steady_slope_pct: a.steady_slope,
        steady_range_pct: a.steady_range,
        ..ReportOptions::default()
    })
}

/// Runs `dbio report`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let opts = options(&args)?;
    let runs = input::load(&args.inputs).context("dbio report reads bench results")?;
    let report = analysis::analyse(&runs, &opts);
    args.out.emit_result(&report)?;
    Ok(0)
}
