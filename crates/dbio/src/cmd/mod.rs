//! One module per subcommand. Each has `Args` (clap) and `run(Args) -> anyhow::Result<u8>`
//! returning the exit code.

pub mod align;
pub mod bench;
pub mod check;
pub mod innodb;
pub mod iostat;
pub mod model;
pub mod mysql;
pub mod packaging;
pub mod report;
pub mod stack;
pub mod sweep;

use clap::Subcommand;

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// How fast is this storage for a database: database-shaped I/O with exact latency histograms.
    Bench(bench::Args),
    /// Benchmark curves: one bench run per combination of threads, iodepth, block size, mode,
    /// misalignment and scheduler, on one file set; resumable.
    Sweep(Box<sweep::Args>),
    /// Curves, pictures and verdicts from bench results: knee, stalls, steady state, A/B (HTML, text, JSON, CSV).
    Report(report::Args),
    /// Alignment math (`calc`) and the alignment of a disk or image (`check`).
    Align(align::Args),
    /// Is the storage set up right for a database: an audit with OK/WARN/CRIT rules.
    Check(check::Args),
    /// What the storage is doing now: iostat -x and pt-diskstats figures from /proc/diskstats.
    Iostat(iostat::Args),
    /// The mount, filesystem and device stack (partition, LVM/dm, md) under a path, down to the disks.
    Stack(stack::Args),
    /// Where did my rows go: find InnoDB pages and values on devices, images and tablespaces.
    Innodb(innodb::Args),
    /// How far will it scale: operational-law bounds, mean value analysis, a Universal
    /// Scalability Law fit, and the live elements of response time of a running server.
    Model(model::Args),
    /// Big deletes, archives and updates on a live MySQL/MariaDB without hurting users.
    Mysql(mysql::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(packaging::CompletionsArgs),
    /// Print dbio's manual page (or a subcommand's) in roff, or write them all with --out-dir.
    Man(packaging::ManArgs),
}

/// Runs one subcommand and returns its exit code. `whole` builds the whole command line (for
/// completions and man pages: passed in, so that no subcommand imports the binary's root).
pub fn run(command: Command, whole: fn() -> clap::Command) -> anyhow::Result<u8> {
    match command {
        Command::Bench(args) => bench::run(args),
        Command::Report(args) => report::run(args),
        Command::Align(args) => align::run(args),
        Command::Check(args) => check::run(args),
        Command::Sweep(args) => sweep::run(*args),
        Command::Iostat(args) => iostat::run(args),
        Command::Stack(args) => stack::run(args),
        Command::Innodb(args) => innodb::run(args),
        Command::Model(args) => model::run(args),
        Command::Mysql(args) => mysql::run(args),
        Command::Completions(args) => packaging::completions(args, whole()),
        Command::Man(args) => packaging::man(args, whole()),
    }
}
