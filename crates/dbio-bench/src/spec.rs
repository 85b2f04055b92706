//! Spec validation and derived sizes.

use crate::error::BenchError;
use dbio_schema::bench::{Distribution, EngineKind, Mode, Spec, Target};
use dbio_schema::units::{format_duration, format_size, format_size_approx, MAX_DURATION};
use std::time::Duration;

/// Largest block size accepted (64 MiB).
pub const MAX_BLOCK: u64 = 64 << 20;

/// Largest `--misalign` accepted (1 GiB): a shift of every offset, not a place in the file.
pub const MAX_MISALIGN: u64 = 1 << 30;

/// Shortest `--time` accepted: shorter runs end before their first I/O.
pub const MIN_TIME: Duration = Duration::from_millis(1);

/// Bytes per data file: the total divided by the file count, rounded down to 4 KiB.
pub fn file_size(spec: &Spec) -> u64 {
    (spec.file_total_size_bytes / spec.file_num.max(1)) / 4096 * 4096
}

/// Descriptors a run holds open at once besides its files: stdio, the marker, /proc and
/// /sys reads, the reporter's channels.
const SPARE_FDS: u64 = 64;

/// Open files a run needs at once: every data file (or the device), one commit log and one
/// io_uring per thread, and some spare.
pub fn open_files_needed(spec: &Spec) -> u64 {
    if spec.engine == EngineKind::Null {
        return SPARE_FDS;
    }
    let threads = u64::from(spec.threads);
    let files = match (&spec.target, spec.mode) {
        (Target::Device(_), _) => 1,
        (Target::Dir(_), Mode::Commit) => threads,
        (Target::Dir(_), _) => spec.file_num,
    };
    let rings = if spec.engine == EngineKind::Uring {
        threads
    } else {
        0
    };
    files.saturating_add(rings).saturating_add(SPARE_FDS)
}

/// Refuses, before anything is prepared, a run that would need more open files than the
/// process may have (`soft`, after raising it to `hard`).
pub fn check_open_files(spec: &Spec, soft: u64, hard: u64) -> Result<(), BenchError> {
    let need = open_files_needed(spec);
    if need <= soft {
        return Ok(());
    }
    Err(BenchError::InvalidSpec(format!(
        "--file-num {} needs {need} open files at once, but this process may open only {soft} (open-file limit, hard limit {hard}): lower --file-num to {} or less, or raise the limit (ulimit -n {need}, or LimitNOFILE={need} for a service)",
        spec.file_num,
        soft.saturating_sub(need - spec.file_num.min(need)),
    )))
}

/// Bytes of I/O buffers a run allocates: each thread holds `--iodepth` buffers of
/// `--block-size` bytes.
pub fn buffer_bytes(spec: &Spec) -> u64 {
    u64::from(spec.threads)
        .saturating_mul(u64::from(spec.iodepth.max(1)))
        .saturating_mul(spec.block_size_bytes)
}

/// Refuses, before anything is prepared or allocated, buffers that do not fit in the memory
/// available (`available` bytes, per `source`).
pub fn check_memory(spec: &Spec, available: u64, source: &str) -> Result<(), BenchError> {
    let need = buffer_bytes(spec);
    if need <= available {
        return Ok(());
    }
    Err(BenchError::InvalidSpec(format!(
        "--threads {} x --iodepth {} x --block-size {} = {} of I/O buffers, more than the {} of memory available ({source}): lower --threads, --iodepth or --block-size",
        spec.threads,
        spec.iodepth,
        format_size(spec.block_size_bytes),
        format_size_approx(need as f64),
        format_size_approx(available as f64),
    )))
}

/// Refuses, before anything is prepared, a run that needs more open files or more memory for
/// its buffers than this process may have. A run opens every data file at once: the open-file
/// limit is raised to all the system allows first.
pub fn check_resources(spec: &Spec) -> Result<(), BenchError> {
    let (soft, hard) = crate::env::raise_open_file_limit().map_err(BenchError::OpenFileLimit)?;
    check_open_files(spec, soft, hard)?;
    if let Some((available, source)) = crate::env::memory_available() {
        check_memory(spec, available, &source)?;
    }
    Ok(())
}

/// Checks every value of the spec; the error names the flag and says what is allowed.
pub fn validate(spec: &Spec) -> Result<(), BenchError> {
    let bad = |m: String| Err(BenchError::InvalidSpec(m));
    let bs = spec.block_size_bytes;
    if bs == 0 || bs > MAX_BLOCK {
        return bad(format!(
            "--block-size {bs} is out of range: use 1 byte to 64MiB (a multiple of 512 with O_DIRECT), e.g. 16k"
        ));
    }
    if spec.threads == 0 || spec.threads > 4096 {
        return bad(format!(
            "--threads {} is out of range: use 1 to 4096",
            spec.threads
        ));
    }
    if spec.iodepth == 0 || spec.iodepth > 4096 {
        return bad(format!(
            "--iodepth {} is out of range: use 1 to 4096",
            spec.iodepth
        ));
    }
    if spec.submit_batch == 0 || spec.submit_batch > spec.iodepth.max(1) {
        return bad(format!(
            "--submit-batch {} is out of range: use 1 to --iodepth ({})",
            spec.submit_batch, spec.iodepth
        ));
    }
    if spec.reap_batch == 0 || spec.reap_batch > spec.iodepth.max(1) {
        return bad(format!(
            "--reap-batch {} is out of range: use 1 to --iodepth ({})",
            spec.reap_batch, spec.iodepth
        ));
    }
    if spec.engine != EngineKind::Uring {
        for (on, flag) in [
            (spec.fixed_buffers, "--fixed-buffers"),
            (spec.register_files, "--register-files"),
        ] {
            if on {
                return bad(format!(
                    "{flag} applies to --engine uring only (the {} engine registers nothing with the kernel): drop it or use --engine uring",
                    spec.engine.name()
                ));
            }
        }
    }
    if spec.misalign_bytes > MAX_MISALIGN {
        return bad(format!(
            "--misalign {} is out of range: use 0 to 1GiB (a misaligned partition is off by less than its alignment unit, e.g. 512 or 3584)",
            spec.misalign_bytes
        ));
    }
    if spec.iodepth > 1 && spec.engine == EngineKind::Sync {
        return bad(format!("--iodepth {} needs an async engine: add --engine uring (the sync engine has one I/O in flight per thread; use --threads for more)", spec.iodepth));
    }
    if let Some(t) = spec.time_s {
        if t.is_zero() {
            return bad(
                "--time 0 would measure nothing: give a duration such as 10s, or use --events"
                    .into(),
            );
        }
        if t < MIN_TIME {
            return bad(format!(
                "--time {} is shorter than 1ms, too short to measure anything: give at least 1ms (e.g. 10s), or use --events",
                format_duration(t)
            ));
        }
    }
    for (flag, d) in [
        ("--time", spec.time_s.unwrap_or_default()),
        ("--warmup", spec.warmup_s),
        ("--report-interval", spec.report_interval_s),
    ] {
        if d > MAX_DURATION {
            return bad(format!(
                "{flag} {} is longer than the 366 days dbio accepts: give a shorter duration",
                format_duration(d)
            ));
        }
    }
    if spec.time_s.is_none() && spec.events == 0 {
        return bad("nothing limits the run: give --time or --events".into());
    }
    if spec.report_interval_s.as_micros() < 1000 {
        return bad("--report-interval must be at least 1ms".into());
    }
    if let Some(r) = spec.rate_iops {
        if !(r > 0.0 && r.is_finite()) {
            return bad(format!(
                "--rate {r} must be a positive number of I/Os per second"
            ));
        }
    }
    if !(spec.rw_ratio > 0.0 && spec.rw_ratio.is_finite()) {
        return bad(format!(
            "--rw-ratio {} must be a positive number of reads per write, e.g. 1.5",
            spec.rw_ratio
        ));
    }
    for &p in &spec.percentiles {
        if !(p > 0.0 && p <= 100.0) {
            return bad(format!(
                "percentile {p} is out of range: use numbers in (0, 100], e.g. 50,99,99.9"
            ));
        }
    }
    match spec.distribution {
        Distribution::Zipf { theta } if !(theta > 0.0 && theta.is_finite()) => {
            return bad(format!("zipf:{theta}: theta must be a positive number, e.g. zipf:1.2"))
        }
        Distribution::Hotspot { io_pct, data_pct }
            if !((0.0..=100.0).contains(&io_pct) && data_pct > 0.0 && data_pct <= 100.0) =>
        {
            return bad(format!("hotspot:{io_pct}/{data_pct}: both are percentages, e.g. hotspot:90/10 (90% of I/Os to 10% of the data)"))
        }
        _ => {}
    }
    if let Target::Dir(_) = spec.target {
        if spec.file_num == 0 || spec.file_num > 1_000_000 {
            return bad(format!(
                "--file-num {} is out of range: use 1 to 1000000",
                spec.file_num
            ));
        }
        if spec.mode != Mode::Commit {
            let fs = file_size(spec);
            if fs < bs + spec.misalign_bytes {
                return bad(format!(
                    "--file-total-size {} over {} files gives {} bytes per file, less than one {}-byte block{}: raise --file-total-size or lower --file-num",
                    spec.file_total_size_bytes,
                    spec.file_num,
                    fs,
                    bs,
                    if spec.misalign_bytes > 0 { " plus --misalign" } else { "" }
                ));
            }
        } else if spec.file_total_size_bytes / (spec.threads as u64) < bs {
            return bad(format!(
                "--file-total-size {} leaves less than one block per commit log: raise it",
                spec.file_total_size_bytes
            ));
        }
    }
    if spec.direct && !spec.misalign_bytes.is_multiple_of(512) {
        return bad(format!(
            "--misalign {} breaks O_DIRECT alignment (offsets must be multiples of the logical block size, at least 512): use a multiple of 512, or drop --direct (add --buffered) to measure misalignment through the page cache",
            spec.misalign_bytes
        ));
    }
    if spec.direct && !bs.is_multiple_of(512) {
        return bad(format!("--block-size {bs} is not a multiple of 512, which O_DIRECT requires: use a multiple of the logical block size (512 or 4096)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbio_schema::bench::FsyncMode;

    fn spec(file_num: u64, engine: EngineKind, threads: u32) -> Spec {
        Spec {
            target: Target::Dir("/x".into()),
            mode: Mode::Rndrd,
            engine,
            block_size_bytes: 4096,
            file_num,
            file_total_size_bytes: file_num << 12,
            threads,
            iodepth: 1,
            submit_batch: 1,
            reap_batch: 1,
            fixed_buffers: false,
            register_files: false,
            huge_pages: false,
            buffers: None,
            spin_polls: 0,
            time_s: Some(Duration::from_secs(1)),
            events: 0,
            warmup_s: Duration::ZERO,
            direct: true,
            dsync: false,
            sync: false,
            noatime: true,
            fsync_every: 0,
            fsync_mode: FsyncMode::Fdatasync,
            fsync_end: false,
            misalign_bytes: 0,
            distribution: Distribution::Uniform,
            rate_iops: None,
            rw_ratio: 1.5,
            seed: 1,
            report_interval_s: Duration::from_secs(1),
            percentiles: vec![50.0],
        }
    }

    #[test]
    fn open_files_cover_every_file_each_ring_and_spare() {
        assert_eq!(open_files_needed(&spec(30000, EngineKind::Sync, 4)), 30064);
        assert_eq!(open_files_needed(&spec(64, EngineKind::Uring, 4)), 132);
        assert_eq!(open_files_needed(&spec(30000, EngineKind::Null, 4)), 64);
        assert!(check_open_files(&spec(960, EngineKind::Sync, 1), 1024, 1024).is_ok());
        let e = check_open_files(&spec(30000, EngineKind::Sync, 1), 1024, 4096)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--file-num 30000 needs 30064 open files"), "{e}");
        assert!(
            e.contains("only 1024 (open-file limit, hard limit 4096)"),
            "{e}"
        );
        assert!(e.contains("lower --file-num to 960 or less"), "{e}");
    }

    #[test]
    fn buffers_must_fit_in_the_memory_available() {
        let mut s = spec(64, EngineKind::Uring, 4096);
        s.iodepth = 4096;
        s.block_size_bytes = 16384;
        assert_eq!(buffer_bytes(&s), 256 << 30);
        let e = check_memory(&s, 8 << 30, "MemAvailable")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--threads 4096 x --iodepth 4096 x --block-size 16KiB = 256.00 GiB of I/O buffers, more than the 8.00 GiB of memory available (MemAvailable)"),
            "{e}"
        );
        assert!(check_memory(&s, 256 << 30, "MemAvailable").is_ok());
    }
}
