//! `dbio bench` (being built in this branch).

/// Arguments of `dbio bench`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `dbio bench`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    Err(crate::cli::usage("dbio bench is not built yet"))
}
