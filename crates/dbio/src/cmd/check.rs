//! `dbio check`: is the storage under each PATH set up right for a database? The flags
//! become [`Options`]; `dbio_storage::check::report` gathers the facts and runs the rules
//! into a `CheckReport`; the exporter of the chosen `--format` renders it; this file picks
//! the exit code. Under `--format nagios` (`--nagios`) every error, a usage error included,
//! is one UNKNOWN status line and exit code 3.

use crate::cli::{parse_size_arg, usage};
use crate::cmd::align::Geometry;
use crate::output::OutputArgs;
use dbio_report::export::{Exporter, Exporters, Format, Nagios, Render};
use dbio_schema::check::{CheckFailure, CheckReport};
use dbio_storage::check::{self as gather, Options};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

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
    #[command(flatten)]
    out: OutputArgs<CheckReport>,
    /// Shorthand for --format nagios: the Nagios/Icinga plugin's short status line with
    /// perfdata, details as long output; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (also
    /// for any error, a usage error included).
    #[arg(long, conflicts_with = "format")]
    nagios: bool,
    /// With --format nagios (--nagios), count tuning advice (controller read-ahead, a verify
    /// running, a learn cycle due) as WARNING; by default advice is shown but exits 0.
    #[arg(long)]
    advice_warns: bool,
}

impl Args {
    /// The chosen format: `--nagios` is `--format nagios`.
    fn format(&self) -> Format {
        if self.nagios {
            Format::Nagios
        } else {
            self.out.format
        }
    }
}

/// Runs `dbio check`. Returns the Nagios code with --format nagios, else 0.
pub fn run(a: Args) -> anyhow::Result<u8> {
    match audit_and_render(&a) {
        Err(e) if a.format() == Format::Nagios && !broken_pipe(&e) => {
            let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            Ok(nagios_unknown(a.out.file(), &msg.join(": ")))
        }
        r => r,
    }
}

fn audit_and_render(a: &Args) -> anyhow::Result<u8> {
    let format = a.format();
    if a.advice_warns && format != Format::Nagios {
        return Err(usage(
            "--advice-warns counts advice as a warning in Nagios output: give it with --nagios (or --format nagios)",
        ));
    }
    let opts = Options {
        paths: a.paths.clone(),
        raid_outputs: a.raid_output.clone(),
        run_raid_tools: !a.no_raid_tools,
        stripe: a.stripe,
        data_disks: a.geometry.data_disks()?,
    };
    // A missing path is exit 1 (the system said no), like every failure that is not a usage
    // error.
    let r = gather::report(&opts)?;
    let with = Exporters {
        nagios: Nagios {
            advice_warns: a.advice_warns,
        },
        ..Exporters::default()
    };
    let mut bytes = Vec::new();
    r.render(&with, format, &mut bytes)?;
    a.out.emit(&bytes)?;
    Ok(if format == Format::Nagios {
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

/// Under Nagios output, reports an error as the UNKNOWN status line (to `output`, or stdout
/// when there is none or it cannot be written: the monitoring system reads stdout) and returns
/// the Nagios code 3.
pub fn nagios_unknown(output: Option<&Path>, message: &str) -> u8 {
    let failure = CheckFailure {
        message: message.to_string(),
    };
    let text = Nagios::default()
        .to_string(&failure)
        .unwrap_or_else(|_| "DBIO STORAGE UNKNOWN\n".to_string());
    if output.is_none() || crate::output::emit(output, text.as_bytes()).is_err() {
        let _ = crate::output::emit(None, text.as_bytes());
    }
    3
}

/// For `dbio check --nagios` (or `--format nagios`), a command line clap refused (`message`)
/// is the UNKNOWN status line on stdout and exit code 3; other command lines return.
pub fn exit_on_usage_error(argv: &[OsString], message: &str) {
    if nagios_requested(argv) {
        std::process::exit(nagios_unknown(None, message).into());
    }
}

/// Whether a command line is `dbio check ... --nagios ...` or `... --format nagios ...`
/// (before any `--`): looked at before clap parses it, so that clap's own usage errors are
/// reported the Nagios way.
pub fn nagios_requested(argv: &[OsString]) -> bool {
    if argv.get(1).is_none_or(|s| s != "check") {
        return false;
    }
    let args: Vec<&OsString> = argv.iter().skip(2).take_while(|s| *s != "--").collect();
    args.iter().enumerate().any(|(i, s)| {
        s.as_os_str() == "--nagios"
            || s.to_string_lossy().starts_with("--nagios=")
            || s.as_os_str() == "--format=nagios"
            || (s.as_os_str() == "--format" && args.get(i + 1).is_some_and(|v| *v == "nagios"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nagios_in_argv() {
        let argv = |s: &str| -> Vec<OsString> { s.split(' ').map(OsString::from).collect() };
        assert!(nagios_requested(&argv("dbio check --nagios --bogus")));
        assert!(nagios_requested(&argv("dbio check / --bogus --nagios")));
        assert!(nagios_requested(&argv(
            "dbio check --format nagios --bogus"
        )));
        assert!(nagios_requested(&argv(
            "dbio check --bogus --format=nagios"
        )));
        assert!(!nagios_requested(&argv("dbio check --format json --bogus")));
        assert!(!nagios_requested(&argv("dbio check --bogus -- --nagios")));
        assert!(!nagios_requested(&argv("dbio stack --nagios")));
        assert!(!nagios_requested(&argv("dbio")));
    }
}
