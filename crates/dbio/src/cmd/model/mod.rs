//! `dbio model`: how far will it scale. `bounds` and `mva` from service demands, `usl` from
//! measured (N, X) points, `live` from a running server. The math is in dbio-model; this
//! module parses flags, reads the input file and renders.

mod live;
mod live_args;

use crate::cli::usage;
use crate::output::OutputArgs;
use anyhow::Context;
use dbio_model::ModelError;
use dbio_report::export::{Format, Render};
use dbio_schema::model::{BoundsResult, MvaResult, UslResult};
use std::path::PathBuf;

/// `bounds` and `mva` share their arguments, so their results must offer the same formats.
const _: () = assert!(same_formats(BoundsResult::FORMATS, MvaResult::FORMATS));

const fn same_formats(a: &[Format], b: &[Format]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] as u8 != b[i] as u8 {
            return false;
        }
        i += 1;
    }
    true
}

/// Arguments of `dbio model`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// The models.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Operational-law bounds: X(N) <= min(N/(D+Z), 1/Dmax), R(N) >= max(D, N Dmax - Z),
    /// Nsat and the bottleneck, for N = 1..max-n.
    Bounds(DemandArgs),
    /// Exact mean value analysis: X(N), R(N), and each centre's queue length and utilisation.
    Mva(DemandArgs),
    /// Fit the Universal Scalability Law to measured points (CSV or JSON of N, X[, R],
    /// `dbio bench --format json` results, or a `dbio sweep`): sigma, kappa, lambda, Nmax, Xmax.
    Usl(UslArgs),
    /// The elements of response time of a running server: TPS, the demand at the CPUs, each
    /// disk under the datadir and each network link; Dmax, Nsat and the response-time floor.
    Live(live_args::LiveArgs),
}

/// The demands of `bounds` and `mva`.
#[derive(clap::Args, Debug)]
pub struct DemandArgs {
    /// Service demand per transaction at a queueing centre, NAME=TIME (`cpu=2.1ms`,
    /// `disk=0.0045`: plain numbers are seconds); comma-separated or repeated.
    #[arg(long, value_name = "NAME=TIME", value_delimiter = ',', required_unless_present = "from_bench", value_parser = parse_demand)]
    pub demand: Vec<(String, f64)>,
    /// Take the demands from a `dbio bench --format json` result: the CPUs' and each disk's
    /// utilisation over its operations per second (more centres may be added with --demand).
    #[arg(long, value_name = "FILE")]
    pub from_bench: Option<PathBuf>,
    /// A delay centre (no queue: a fixed network round trip, a sleep), NAME=TIME; repeatable.
    #[arg(long, value_name = "NAME=TIME", value_delimiter = ',', value_parser = parse_demand)]
    pub delay: Vec<(String, f64)>,
    /// Think time Z between a user's transactions.
    #[arg(long, short = 'Z', value_name = "TIME", default_value = "0", value_parser = crate::cli::parse_duration_arg)]
    pub think: std::time::Duration,
    /// Largest population N in the table (default: twice Nsat, at least 4).
    #[arg(long, value_name = "N")]
    pub max_n: Option<u64>,
    /// Show every K-th population only (with N = 1, the last and the benchmark's own).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub step: u64,
    #[command(flatten)]
    pub out: OutputArgs<BoundsResult>,
}

/// Arguments of `dbio model usl`.
#[derive(clap::Args, Debug)]
pub struct UslArgs {
    /// The measured points: CSV (N, X[, R in seconds], a header line may name the columns),
    /// JSON ([[N, X], ...] or [{"n": .., "x": ..}, ...]), dbio bench JSON results, or a dbio
    /// sweep (its directory or sweep.json): N = threads x iodepth, X = IOPS, R = mean
    /// latency; `-` or none reads stdin.
    #[arg(default_value = "-")]
    pub file: PathBuf,
    /// For a sweep over several modes, block sizes, misalignments or schedulers: the curve to
    /// fit, numbered from 1 in the sweep's order (without it, such a sweep lists its curves).
    #[arg(long, value_name = "N")]
    pub curve: Option<usize>,
    /// Also predict X (and R, when the points have R) at these concurrencies.
    #[arg(long, value_name = "N", value_delimiter = ',')]
    pub predict: Vec<f64>,
    #[command(flatten)]
    pub out: OutputArgs<UslResult>,
}

/// `NAME=TIME` with the shared duration parser (`2.1ms`, `0.0021`).
fn parse_demand(s: &str) -> Result<(String, f64), String> {
    let (name, t) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: give NAME=TIME, e.g. cpu=2.1ms"))?;
    if name.is_empty() {
        return Err(format!("{s:?}: the centre needs a name before ="));
    }
    let d = crate::cli::parse_duration_arg(t)?;
    Ok((name.to_string(), d.as_secs_f64()))
}

/// Runs `dbio model`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.what {
        What::Bounds(a) => {
            let (d, rows, measured) = demands(&a)?;
            let mut r = dbio_model::bounds::table(d, rows).map_err(model_usage)?;
            r.measured = measured;
            emit(&a.out, &r)
        }
        What::Mva(a) => {
            let (d, rows, measured) = demands(&a)?;
            let mut r = dbio_model::mva::solve(d, rows).map_err(model_usage)?;
            r.measured = measured;
            emit(&a.out, &r)
        }
        What::Usl(a) => usl(a),
        What::Live(a) => {
            let (result, interrupted) = live::measure(&a)?;
            emit(&a.out, &result)?;
            Ok(if interrupted {
                crate::signals::EXIT_INTERRUPTED
            } else {
                0
            })
        }
    }
}

/// A model's refusal of the values given: a usage error (exit 2).
fn model_usage(e: ModelError) -> anyhow::Error {
    usage(e.to_string())
}

type DemandsAndN = (
    dbio_schema::model::Demands,
    dbio_model::Rows,
    Option<dbio_schema::model::Measured>,
);

fn demands(a: &DemandArgs) -> anyhow::Result<DemandsAndN> {
    let (mut centres, measured) = match &a.from_bench {
        Some(p) => {
            let cannot_read = || {
                format!(
                    "cannot read {}: give a dbio bench --format json result",
                    p.display()
                )
            };
            let b: dbio_schema::bench::BenchResult = match dbio_schema::read::json_file(p) {
                Ok(b) => b,
                Err(dbio_schema::read::FileError::Io(e)) => {
                    return Err(e).with_context(cannot_read)
                }
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("{} is not one dbio bench JSON result", p.display())
                    })
                }
            };
            b.check().with_context(|| {
                format!(
                    "{}: not a result dbio bench wrote; give one it wrote, unedited",
                    p.display()
                )
            })?;
            let (c, m) = dbio_model::bench::demands(&b, &p.display().to_string())
                .with_context(|| format!("no demands in {}", p.display()))?;
            (c, Some(m))
        }
        None => (Vec::new(), None),
    };
    centres.extend(a.demand.iter().map(|(n, d)| dbio_model::queueing(n, *d)));
    centres.extend(a.delay.iter().map(|(n, d)| dbio_model::delay(n, *d)));
    let d = dbio_model::demands(centres, a.think.as_secs_f64()).map_err(model_usage)?;
    if a.step == 0 {
        return Err(usage("--step 0: give 1 (every population) or more"));
    }
    let max = dbio_model::MAX_POPULATION;
    let n = match a.max_n {
        Some(0) => return Err(usage("--max-n 0: give a population of 1 or more")),
        Some(n) if n > max => {
            return Err(usage(format!(
                "--max-n {n}: at most {max} (MVA solves every population from 1 to N, \
                 which takes about a second for {max} and 10 centres)"
            )))
        }
        Some(n) => n,
        None => {
            let at_least = measured.as_ref().map_or(0, |m| m.n.ceil() as u64);
            if at_least > max {
                let m = measured.as_ref().map_or("", |m| m.source.as_str());
                return Err(anyhow::anyhow!(
                    "{m}: spec.threads x spec.iodepth is {at_least}, above the {max} \
                     populations a model solves: give --max-n {max} or less"
                ));
            }
            dbio_model::bounds::default_max_n(&d).max(at_least)
        }
    };
    let rows = dbio_model::Rows {
        max_n: n,
        step: a.step,
        also: measured.as_ref().map(|m| m.n as u64),
    };
    if !rows.within_limit() {
        return Err(usage(format!(
            "--max-n {n} with --step {} shows {} rows: at most {} rows are shown besides N = 1, \
             the last and the measured one (a longer table is read by nobody and is what costs \
             memory and time); give --step {} or more",
            a.step,
            rows.count(),
            dbio_model::MAX_ROWS,
            dbio_model::Rows::smallest_step(n)
        )));
    }
    Ok((d, rows, measured))
}

fn usl(a: UslArgs) -> anyhow::Result<u8> {
    if let Some(n) = a.predict.iter().find(|n| !(n.is_finite() && **n >= 1.0)) {
        return Err(usage(format!(
            "--predict {n}: concurrency must be 1 or more"
        )));
    }
    let (text, source) = if a.file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .context("cannot read the points from stdin")?;
        (s, "stdin".to_string())
    } else {
        // A sweep's directory stands for its sweep.json.
        let file = if a.file.is_dir() {
            a.file.join("sweep.json")
        } else {
            a.file.clone()
        };
        let s = std::fs::read_to_string(&file).with_context(|| {
            format!(
                "cannot read {}: give a CSV or JSON file of N, X[, R] points, bench results or a sweep",
                file.display()
            )
        })?;
        (s, file.display().to_string())
    };
    let parsed = dbio_model::points::parse_with(&text, a.curve)
        .with_context(|| format!("{source}: no points to fit"))?;
    let points = parsed.points;
    let opts = dbio_model::usl::Options {
        source: source.clone(),
        predict: a.predict.clone(),
    };
    let mut r = dbio_model::usl::analyse(&points, &opts)
        .with_context(|| format!("{source}: cannot fit"))?;
    r.notes = parsed.notes;
    emit(&a.out, &r)
}

/// Renders a model result in the format asked for (`X`'s formats, which are `T`'s: bounds and
/// mva share their arguments) and writes it.
fn emit<T: Render, X: Render>(out: &OutputArgs<X>, r: &T) -> anyhow::Result<u8> {
    let mut buf = Vec::new();
    r.render(&Default::default(), out.format, &mut buf)?;
    out.emit(&buf)?;
    Ok(0)
}
