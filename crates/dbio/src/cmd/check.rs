//! `dbio check`: is the storage under each PATH set up right for a database? The flags
//! become [`Options`]; `dbio_storage::check` gathers the facts and runs the rules; this file
//! renders text, JSON, Nagios or Prometheus output and picks the exit code. Under `--nagios`
//! every error, a usage error included, is one UNKNOWN status line and exit code 3.

use crate::cli::{parse_size_arg, usage};
use crate::cmd::align::Geometry;
use dbio_report::{Document, Exporter, JsonExporter};
use dbio_storage::check::{self as gather, Options};
use dbio_storage::report::{self, CheckReport};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Output formats of `dbio check`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Grouped by device, worst first.
    Text,
    /// The whole report as JSON (schema dbio.check/1).
    Json,
    /// Prometheus text format for the node_exporter textfile collector.
    Prometheus,
}

/// Arguments of `dbio check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Paths whose storage to audit (default: every mounted block filesystem). With only
    /// --raid-output and no PATH, only the RAID rules run.
    paths: Vec<PathBuf>,
    /// Saved output of MegaCli, storcli/perccli (text or J), ssacli/hpacucli,
    /// cciss_vol_status, arcconf, tw_cli or omreport (repeatable; the tool is detected).
    #[arg(long = "raid-output", value_name = "FILE")]
    raid_output: Vec<PathBuf>,
    /// Do not run installed RAID tools.
    #[arg(long)]
    no_raid_tools: bool,
    /// RAID stripe unit, to check partition alignment and filesystem geometry against.
    #[arg(long, value_parser = parse_size_arg)]
    stripe: Option<u64>,
    #[command(flatten)]
    geometry: Geometry,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Nagios/Icinga plugin mode: one short status line with perfdata, details as long
    /// output; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (also for any error, a usage
    /// error included).
    #[arg(long, conflicts_with = "format")]
    nagios: bool,
    /// With --nagios, count tuning advice (controller read-ahead, a verify running, a learn
    /// cycle due) as WARNING; by default advice is shown but exits 0.
    #[arg(long, requires = "nagios")]
    advice_warns: bool,
    /// Write the result to FILE instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
}

/// Runs `dbio check`. Returns the Nagios code with --nagios, else 0.
pub fn run(a: Args) -> anyhow::Result<u8> {
    match audit_and_render(&a) {
        Err(e) if a.nagios && !broken_pipe(&e) => {
            let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            Ok(nagios_unknown(a.output.as_deref(), &msg.join(": ")))
        }
        r => r,
    }
}

fn audit_and_render(a: &Args) -> anyhow::Result<u8> {
    let opts = Options {
        paths: a.paths.clone(),
        raid_outputs: a.raid_output.clone(),
        run_raid_tools: !a.no_raid_tools,
        stripe: a.stripe,
        data_disks: a.geometry.data_disks()?,
    };
    let findings = gather::audit(&opts).map_err(|e| match e {
        gather::Error::Path { .. } => usage(e.to_string()),
        e => anyhow::Error::new(e),
    })?;
    let r = CheckReport::new(findings);
    let bytes = if a.nagios {
        report::render_nagios_with(&r, a.advice_warns)
    } else {
        match a.format {
            Format::Text => report::render_text(&r),
            Format::Json => JsonExporter.to_string(&Document::new(dbio_report::doc::CHECK, &r))?,
            Format::Prometheus => report::render_prometheus(&r),
        }
    };
    crate::output::emit(a.output.as_deref(), bytes.as_bytes())?;
    Ok(if a.nagios {
        r.nagios_status(a.advice_warns).nagios_code()
    } else {
        0
    })
}

fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Under --nagios, reports an error as the UNKNOWN status line (to `output`, or stdout when
/// there is none or it cannot be written: the monitoring system reads stdout) and returns
/// the Nagios code 3.
pub fn nagios_unknown(output: Option<&Path>, message: &str) -> u8 {
    let text = report::render_nagios_error(message);
    if output.is_none() || crate::output::emit(output, text.as_bytes()).is_err() {
        let _ = crate::output::emit(None, text.as_bytes());
    }
    3
}

/// Whether a command line is `dbio check ... --nagios ...` (before any `--`): looked at
/// before clap parses it, so that clap's own usage errors are reported the Nagios way.
pub fn nagios_requested(argv: &[OsString]) -> bool {
    argv.get(1).is_some_and(|s| s == "check")
        && argv
            .iter()
            .skip(2)
            .take_while(|s| *s != "--")
            .any(|s| s == "--nagios" || s.to_string_lossy().starts_with("--nagios="))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nagios_in_argv() {
        let argv = |s: &str| -> Vec<OsString> { s.split(' ').map(OsString::from).collect() };
        assert!(nagios_requested(&argv("dbio check --nagios --bogus")));
        assert!(nagios_requested(&argv("dbio check / --bogus --nagios")));
        assert!(!nagios_requested(&argv("dbio check --bogus -- --nagios")));
        assert!(!nagios_requested(&argv("dbio stack --nagios")));
        assert!(!nagios_requested(&argv("dbio")));
    }
}
