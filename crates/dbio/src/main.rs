//! `dbio`: the command line. Parses flags into plain values, calls the library crates, renders
//! their results, and chooses exit codes: 0 success, 1 the work failed, 2 usage error
//! (`check --nagios` uses the Nagios codes). A broken pipe ends the program quietly with 0.

mod cli;
mod cmd;
mod output;
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cmd::run(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(err) => cli::report_error(&err),
    }
}
