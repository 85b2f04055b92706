//! Error reporting and exit codes shared by every subcommand.

use std::io::{ErrorKind, Write};
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
    // A closed stderr must not turn a clean error into a panic (exit 101).
    let _ = writeln!(std::io::stderr(), "dbio: {}", msg.join(": "));
    if err
        .chain()
        .any(|c| c.downcast_ref::<UsageError>().is_some())
    {
        ExitCode::from(EXIT_USAGE)
    } else {
        ExitCode::from(EXIT_FAILURE)
    }
}

/// Parses a size argument for clap (`16k`, `1G`, ...), with the shared units parser.
pub fn parse_size_arg(s: &str) -> Result<u64, String> {
    dbio_schema::units::parse_size(s).map_err(|e| e.to_string())
}

/// Parses a duration argument for clap (`10s`, `500ms`, `0.5`), with the shared parser.
pub fn parse_duration_arg(s: &str) -> Result<std::time::Duration, String> {
    dbio_schema::units::parse_duration(s).map_err(|e| e.to_string())
}

/// Every option that takes a value also takes a negative number as that value, in every
/// subcommand, so `--threads -1` reaches the flag's own parser and is refused naming the flag,
/// instead of clap's `unexpected argument '-1'` (which names no flag and suggests `-- -1`).
/// Options whose value is a number, size or duration take any value that starts with `-`
/// (`--block-size -4k`, `--time -1s`), so their own parser refuses it, naming the flag.
pub fn allow_negative_numbers(cmd: clap::Command) -> clap::Command {
    use std::any::TypeId;
    use std::time::Duration;
    let numeric = [
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<i32>(),
        TypeId::of::<i64>(),
        TypeId::of::<f32>(),
        TypeId::of::<f64>(),
        TypeId::of::<Duration>(),
    ];
    cmd.mut_args(|a| {
        if !a.get_action().takes_values() {
            return a;
        }
        let ty = a.get_value_parser().type_id();
        if numeric.iter().any(|t| ty == *t) {
            a.allow_hyphen_values(true)
        } else {
            a.allow_negative_numbers(true)
        }
    })
    .mut_subcommands(allow_negative_numbers)
}

/// Parses the command line into `T` (exits on a usage error, with code 2, as clap does).
/// `on_usage_error` sees the command line and clap's message (without `error: `) first, and may
/// exit its own way instead: `dbio check --nagios` exits 3 with a Nagios status line.
pub fn parse_command_line<T: clap::Parser>(
    on_usage_error: impl FnOnce(&[std::ffi::OsString], &str),
) -> T {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut cmd = allow_negative_numbers(T::command());
    let parsed = cmd
        .try_get_matches_from_mut(&argv)
        .and_then(|mut m| T::from_arg_matches_mut(&mut m));
    match parsed {
        Ok(t) => t,
        Err(e) => {
            let e = negative_count(&e).unwrap_or_else(|| e.format(&mut cmd));
            // --help and --version are not errors.
            if e.use_stderr() {
                let text = e.to_string();
                on_usage_error(&argv, text.strip_prefix("error: ").unwrap_or(&text));
            }
            e.exit()
        }
    }
}

/// A negative number given to a flag that counts (`--threads -1`): the integer parser's own
/// message ("invalid digit found in string") becomes one that says what is wrong.
fn negative_count(e: &clap::Error) -> Option<clap::Error> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) else {
        return None;
    };
    let negative_integer = value
        .strip_prefix('-')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    negative_integer.then(|| {
        clap::Error::raw(
            ErrorKind::ValueValidation,
            format!(
                "invalid value '{value}' for '{arg}': it must not be negative: give 0 or more\n"
            ),
        )
    })
}

/// A clap parser for a schema enum, by its result names, with their help lines.
pub fn named<T: dbio_schema::bench::Named + Send + Sync>(
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        T::ALL
            .iter()
            .map(|v| PossibleValue::new(v.name()).help(v.help())),
    )
    .map(|s| T::from_name(&s).expect("clap checked the name"))
}

/// A clap parser for a value that parses itself with more spellings than its names (`--raid
/// raid10`, `1+0`, `RAID-5`): `names` (each with its help line) are what `--help`, completions
/// and clap's error (`invalid value 'x' for '--raid <LEVEL>'`, then the possible values) list.
pub fn spelled<T>(names: &'static [(&'static str, &'static str)]) -> Spelled<T> {
    Spelled {
        names,
        _value: std::marker::PhantomData,
    }
}

/// See [`spelled`].
pub struct Spelled<T> {
    names: &'static [(&'static str, &'static str)],
    _value: std::marker::PhantomData<fn() -> T>,
}

impl<T> Clone for Spelled<T> {
    fn clone(&self) -> Self {
        spelled(self.names)
    }
}

impl<T> clap::builder::TypedValueParser for Spelled<T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        if let Some(v) = value.to_str().and_then(|s| s.parse::<T>().ok()) {
            return Ok(v);
        }
        let mut err = clap::Error::new(ErrorKind::InvalidValue).with_cmd(cmd);
        let arg = arg.map_or_else(|| "...".to_string(), |a| a.to_string());
        err.insert(ContextKind::InvalidArg, ContextValue::String(arg));
        err.insert(
            ContextKind::InvalidValue,
            ContextValue::String(value.to_string_lossy().into_owned()),
        );
        err.insert(
            ContextKind::ValidValue,
            ContextValue::Strings(self.names.iter().map(|(n, _)| n.to_string()).collect()),
        );
        Err(err)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(|(n, h)| {
            clap::builder::PossibleValue::new(*n).help(*h)
        })))
    }
}
