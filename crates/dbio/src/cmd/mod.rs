//! One module per subcommand. Each has `Args` (clap) and `run(Args) -> anyhow::Result<u8>`
//! returning the exit code.

pub mod bench;
pub mod innodb;

use clap::Subcommand;

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// How fast is this storage for a database: database-shaped I/O with exact latency histograms.
    Bench(bench::Args),
    /// Where did my rows go: find InnoDB pages and values on devices, images and tablespaces.
    Innodb(innodb::Args),
}

/// Runs one subcommand and returns its exit code.
pub fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Bench(args) => bench::run(args),
        Command::Innodb(args) => innodb::run(args),
    }
}
