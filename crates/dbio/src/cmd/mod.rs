//! One module per subcommand. Each has `Args` (clap) and `run(Args) -> anyhow::Result<u8>`
//! returning the exit code.

pub mod bench;

use clap::Subcommand;

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// How fast is this storage for a database: database-shaped I/O with exact latency histograms.
    Bench(bench::Args),
}

/// Runs one subcommand and returns its exit code.
pub fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Bench(args) => bench::run(args),
    }
}
