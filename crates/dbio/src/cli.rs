//! Error reporting and exit codes shared by every subcommand.

use std::io::ErrorKind;
use std::process::ExitCode;

/// Exit code: the work failed.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code: the command line or an input value is wrong.
pub const EXIT_USAGE: u8 = 2;

/// A mistake in the command line or an input value: exits with code 2.
/// Build it with [`usage`] and return it through `anyhow`.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A usage error (exit code 2) with a message that names the value and says what to do.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Prints `err` as one line (`dbio: outer: inner: ...`) on stderr and picks the exit code:
/// 0 for a broken pipe (the reader went away: not our failure), 2 for usage errors, else 1.
pub fn report_error(err: &anyhow::Error) -> ExitCode {
    for cause in err.chain() {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
        }
    }
    let msg: Vec<String> = err.chain().map(|c| c.to_string()).collect();
    eprintln!("dbio: {}", msg.join(": "));
    if err.chain().any(|c| c.downcast_ref::<UsageError>().is_some()) {
        ExitCode::from(EXIT_USAGE)
    } else {
        ExitCode::from(EXIT_FAILURE)
    }
}

/// Parses a size argument for clap (`16k`, `1G`, ...), with the shared units parser.
pub fn parse_size_arg(s: &str) -> Result<u64, String> {
    dbio_report::units::parse_size(s).map_err(|e| e.to_string())
}

/// Parses a duration argument for clap (`10s`, `500ms`, `0.5`), with the shared parser.
pub fn parse_duration_arg(s: &str) -> Result<std::time::Duration, String> {
    dbio_report::units::parse_duration(s).map_err(|e| e.to_string())
}
