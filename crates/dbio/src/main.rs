//! `dbio`: the command line. Parses flags into plain values, calls the library crates, renders
//! their results, and chooses exit codes: 0 success, 1 the work failed, 2 usage error
//! (`check --nagios` uses the Nagios codes). A broken pipe ends the program quietly with 0.

mod cli;
mod cmd;
mod output;
mod progress;
mod signals;

use clap::Parser;
use std::process::ExitCode;

/// dbio: how fast is this storage for a database, what is it doing, is it set up right,
/// and where did my rows go.
#[derive(Parser, Debug)]
#[command(name = "dbio", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: cmd::Command,
}

/// The whole command line as [`main`] parses it (for completions and man pages).
fn command() -> clap::Command {
    use clap::CommandFactory;
    cli::allow_negative_numbers(Cli::command())
}

fn main() -> ExitCode {
    let cli: Cli = cli::parse_command_line(cmd::check::exit_on_usage_error);
    match cmd::run(cli.command, command) {
        Ok(code) => ExitCode::from(signals::exit_code(code)),
        Err(err) => cli::report_error(&err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::CommandFactory;

    /// Every option of every subcommand whose value is a number, size or duration, with the
    /// subcommand path that reaches it.
    fn numeric_options(
        cmd: &clap::Command,
        path: Vec<String>,
        out: &mut Vec<(Vec<String>, String)>,
    ) {
        for a in cmd.get_arguments() {
            let Some(long) = a.get_long() else { continue };
            if a.is_allow_hyphen_values_set() && a.get_action().takes_values() {
                out.push((path.clone(), format!("--{long}")));
            }
        }
        for s in cmd.get_subcommands() {
            let mut p = path.clone();
            p.push(s.get_name().to_string());
            numeric_options(s, p, out);
        }
    }

    #[test]
    fn a_negative_number_is_refused_naming_its_flag_in_every_command() {
        let cmd = cli::allow_negative_numbers(Cli::command());
        let mut opts = Vec::new();
        numeric_options(&cmd, Vec::new(), &mut opts);
        // At least bench's counts, sizes and durations and iostat's, align's, innodb's.
        for want in [
            "--threads",
            "--iodepth",
            "--time",
            "--count",
            "--disks",
            "--page-size",
        ] {
            assert!(
                opts.iter().any(|(_, f)| f == want),
                "{want} missing: {opts:?}"
            );
        }
        for (path, flag) in &opts {
            let mut argv = vec!["dbio".to_string()];
            argv.extend(path.iter().cloned());
            argv.push(flag.clone());
            argv.push("-1".into());
            // A flag whose type takes -1 (a float) gets it, and the command's own checks
            // refuse it (tested with each command); every other one refuses it itself.
            let Err(e) = cmd.clone().try_get_matches_from(&argv) else {
                eprintln!("{argv:?}: -1 parsed");
                continue;
            };
            // A command with a required flag (sweep's --output-dir) that took -1 then
            // misses that flag: the value itself parsed.
            if e.kind() == ErrorKind::MissingRequiredArgument {
                continue;
            }
            assert_eq!(e.kind(), ErrorKind::ValueValidation, "{argv:?}: {e}");
            let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
                panic!("{argv:?}: no flag named: {e}");
            };
            assert!(arg.starts_with(flag.as_str()), "{argv:?}: {arg}");
        }
    }
}
