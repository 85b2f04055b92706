//! The result document of a run: what the run measured, with its spec, environment and
//! warnings.

use crate::error::BenchError;
use crate::run::{self, RunOutput, Target};
use dbio_schema::bench::{BenchResult, Environment, Interval, Spec, BENCH_SCHEMA};
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

/// Runs `spec` on the opened `target` ([`run::run`], with [`crate::options::engine_spec`]),
/// watching every block device of `environment` (top first) through /proc/diskstats. Also
/// returns the warning of [`crate::warn::direct_ignored`] when file pages entered the page
/// cache during an O_DIRECT run (tmpfs pages always are the page cache: not checked there).
pub fn run_checked(
    spec: &Spec,
    target: &Target,
    environment: &Environment,
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<(RunOutput, Option<String>), BenchError> {
    let check_cache = spec.direct && target.fs != "tmpfs" && !target.files.is_empty();
    let resident = || {
        check_cache
            .then(|| crate::env::resident_bytes(&target.paths))
            .flatten()
    };
    let cached_before = resident();
    let watch: Vec<String> = environment.devices.iter().map(|d| d.name.clone()).collect();
    let spec = crate::options::engine_spec(spec);
    let out = run::run(&spec, target, &watch, stop, on_interval)?;
    let warning = match (cached_before, resident()) {
        (Some(before), Some(after)) => {
            let moved = out.summary.read.bytes + out.summary.write.bytes;
            crate::warn::direct_ignored(&target.fs, before, after, moved)
        }
        _ => None,
    };
    Ok((out, warning))
}

/// A run about to start: the opened target, the environment it runs in and the warnings
/// about it (shown before the run, kept in the result).
pub struct Setup {
    /// The opened files or device.
    pub target: Target,
    /// Where the run happens.
    pub environment: Environment,
    /// What may make the figures misleading.
    pub warnings: Vec<String>,
}

/// Opens the target of `spec` and describes its environment ([`crate::run::open_target`],
/// [`crate::environment::environment`], [`crate::warn::warnings`]).
pub fn setup(
    spec: &Spec,
    allow_device_writes: bool,
    prepared: Option<&crate::fileset::Prepared>,
) -> Result<Setup, BenchError> {
    let target = run::open_target(spec, allow_device_writes)?;
    let environment =
        crate::environment::environment(spec, target.open_flags.clone(), &target.fs, prepared);
    let warnings = crate::warn::warnings(spec, &environment, crate::env::meminfo("MemAvailable"));
    Ok(Setup {
        target,
        environment,
        warnings,
    })
}

/// Runs `spec` on a [`Setup`] and builds its result (a warning that O_DIRECT was ignored is
/// added to the warnings); also returns the worker error that stopped the run early.
pub fn measure(
    spec: &Spec,
    setup: Setup,
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<(BenchResult, Option<BenchError>), BenchError> {
    let (out, direct_ignored) =
        run_checked(spec, &setup.target, &setup.environment, stop, on_interval)?;
    let mut warnings = setup.warnings;
    warnings.extend(direct_ignored);
    let interrupted = stop.load(std::sync::atomic::Ordering::SeqCst);
    Ok(bench_result(
        out,
        spec,
        setup.environment,
        warnings,
        interrupted,
    ))
}

/// Formats a wall-clock time as RFC 3339 UTC to the second (`2026-11-22T07:55:43Z`); a clock
/// set before 1970 prints as the epoch.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    jiff::Timestamp::from_second(i64::try_from(secs).unwrap_or(i64::MAX))
        .unwrap_or(jiff::Timestamp::MAX)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The result of run `out` of `spec` in `environment` (its clock and engine filled from the
/// run), and the worker error that stopped the run early, if one did.
pub fn bench_result(
    out: RunOutput,
    spec: &Spec,
    mut environment: Environment,
    warnings: Vec<String>,
    interrupted: bool,
) -> (BenchResult, Option<BenchError>) {
    environment.clock = Some(out.clock);
    environment.engine = out.engine;
    let result = BenchResult {
        schema: BENCH_SCHEMA.into(),
        dbio_version: dbio_schema::doc::DBIO_VERSION.into(),
        started_at: rfc3339(out.started_at),
        spec: spec.clone(),
        environment,
        warnings,
        interrupted,
        intervals: out.intervals,
        summary: out.summary,
        default_run: None,
    };
    (result, out.error)
}

/// The error of a run of `spec` that was not interrupted, was limited by `--time` and yet
/// did no I/O (`ios`: reads, writes and syncs it completed).
pub fn nothing_measured(spec: &Spec, ios: u64, interrupted: bool) -> Option<BenchError> {
    match (spec.time_s, ios, interrupted) {
        (Some(t), 0, false) => Some(BenchError::NothingMeasured {
            time: dbio_schema::units::format_duration(t),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_formats_utc() {
        let t = std::time::UNIX_EPOCH + Duration::from_secs(1_795_334_143);
        assert_eq!(rfc3339(t), "2026-11-22T07:55:43Z");
        assert_eq!(rfc3339(std::time::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap = std::time::UNIX_EPOCH + Duration::from_millis(951_782_399_999);
        assert_eq!(rfc3339(leap), "2000-02-28T23:59:59Z");
    }

    #[test]
    fn a_timed_run_without_io_is_an_error() {
        let mut o = crate::plan::tests::options(std::path::Path::new("/x"));
        o.time = Some(Duration::from_micros(1500));
        let spec = o.spec();
        let e = nothing_measured(&spec, 0, false).unwrap();
        assert!(!e.is_usage());
        assert!(
            e.to_string()
                .starts_with("the run measured no I/O: --time "),
            "{e}"
        );
        assert!(nothing_measured(&spec, 1, false).is_none());
        assert!(nothing_measured(&spec, 0, true).is_none(), "interrupted");
        o.time = None;
        o.events = 10;
        assert!(nothing_measured(&o.spec(), 0, false).is_none(), "--events");
    }
}
