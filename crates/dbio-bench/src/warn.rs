//! Warnings for runs that measure something other than what the user probably thinks.

use dbio_schema::bench::{Environment, Mode, Spec, Target};
use dbio_schema::units::format_size_approx;

/// Everything about this spec in this environment that deserves a warning.
pub fn warnings(spec: &Spec, env: &Environment, mem_available: Option<u64>) -> Vec<String> {
    let mut w = Vec::new();
    if spec.engine == dbio_schema::bench::EngineKind::Null {
        w.push("the null engine does no I/O: the figures measure dbio itself, not storage; no file set is prepared or removed, and no filesystem, device or device check applies".into());
        return w;
    }
    if let Some(fs) = env
        .filesystem
        .as_deref()
        .filter(|fs| crate::env::is_memory_fs(fs))
    {
        w.push(format!("the target is on {fs}: no disk is involved, this measures the kernel and dbio's engine, not storage"));
    }
    let buffered = !spec.direct;
    if buffered && spec.mode.reads() {
        let fits = match mem_available.or((env.mem_total_bytes > 0).then_some(env.mem_total_bytes))
        {
            Some(m) => spec.file_total_size_bytes <= m,
            None => false,
        };
        if fits {
            w.push(format!(
                "buffered reads (no O_DIRECT) from a {}-byte file set that fits in RAM: after the first touch, reads come from the page cache, not the storage; add --direct or use a file set larger than RAM",
                spec.file_total_size_bytes
            ));
        }
    }
    let durable = spec.dsync || spec.sync || spec.fsync_every > 0 || spec.mode == Mode::Commit;
    if spec.mode.writes() && !durable {
        let volatile = env
            .devices
            .iter()
            .any(|d| d.write_cache.as_deref() == Some("write back"));
        if buffered {
            w.push("buffered writes with no fsync, O_DSYNC or O_SYNC: writes land in the page cache and this measures memory, not storage; add --direct and --fsync-every N, or --dsync".into());
        } else if volatile {
            w.push(VOLATILE_CACHE.into());
        }
    }
    if let Target::Device(_) = spec.target {
        if buffered {
            w.push(
                "buffered I/O on a block device goes through the page cache: add --direct".into(),
            );
        }
    }
    w
}

/// The warning of O_DIRECT writes that nothing makes durable, on a device whose write cache
/// is volatile.
pub const VOLATILE_CACHE: &str = "O_DIRECT writes without fsync/O_DSYNC on a device with a volatile write cache (write_cache = write back): they may sit in the device cache, so nothing here is durable; add --fsync-every N or --dsync to measure durable writes";

/// [`VOLATILE_CACHE`] in the default run, whose commit phase measures durable writes.
pub const VOLATILE_CACHE_DEFAULT_RUN: &str = "O_DIRECT page writes without fsync on a device with a volatile write cache (write_cache = write back): they may sit in the device cache, so the page writes of this phase are not durable; the commit phase after it measures durable writes (each record written and synced)";

/// The warnings of the default run's data-page phase: the same, except that the one about
/// writes nothing makes durable points to the commit phase instead of to flags.
pub fn for_default_run(warnings: Vec<String>) -> Vec<String> {
    warnings
        .into_iter()
        .map(|w| {
            if w == VOLATILE_CACHE {
                VOLATILE_CACHE_DEFAULT_RUN.into()
            } else {
                w
            }
        })
        .collect()
}

/// The warning for O_DIRECT that a filesystem silently ignores: more than a tenth of the
/// `moved` bytes of an O_DIRECT run entered the page cache (`before`/`after`: resident bytes
/// of the file set, per mincore) on filesystem `fs`.
pub fn direct_ignored(fs: &str, before: u64, after: u64, moved: u64) -> Option<String> {
    let grew = after.saturating_sub(before);
    (moved > 0 && grew > moved / 10).then(|| {
        format!(
            "O_DIRECT looks silently unsupported on this {fs} filesystem: {} of the file set entered the page cache during an O_DIRECT run that moved {}; the figures may be page-cache speed",
            format_size_approx(grew as f64),
            format_size_approx(moved as f64)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbio_schema::bench::{DeviceEnv, Distribution, EngineKind, FsyncMode};
    use std::time::Duration;

    fn spec(mode: Mode, direct: bool) -> Spec {
        Spec {
            target: Target::Dir("/x".into()),
            mode,
            engine: EngineKind::Sync,
            block_size_bytes: 16384,
            file_num: 4,
            file_total_size_bytes: 1 << 30,
            threads: 1,
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
            direct,
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
    fn warns_about_cached_reads_and_volatile_writes() {
        let mut env = Environment {
            mem_total_bytes: 8 << 30,
            ..Default::default()
        };
        let w = warnings(&spec(Mode::Rndrd, false), &env, None);
        assert!(w.iter().any(|m| m.contains("fits in RAM")), "{w:?}");
        assert!(warnings(&spec(Mode::Rndrd, true), &env, None).is_empty());
        let w = warnings(&spec(Mode::Rndrd, false), &env, Some(512 << 20));
        assert!(
            w.is_empty(),
            "1 GiB does not fit in 512 MiB available: {w:?}"
        );

        env.devices.push(DeviceEnv {
            name: "sda".into(),
            write_cache: Some("write back".into()),
            ..Default::default()
        });
        let w = warnings(&spec(Mode::Rndwr, true), &env, None);
        assert!(
            w.iter().any(|m| m.contains("volatile write cache")),
            "{w:?}"
        );
        let mut durable = spec(Mode::Rndwr, true);
        durable.fsync_every = 1;
        assert!(warnings(&durable, &env, None).is_empty());
        let w = warnings(&spec(Mode::Rndwr, false), &env, None);
        assert!(w.iter().any(|m| m.contains("page cache")), "{w:?}");
        env.filesystem = Some("tmpfs".into());
        assert!(warnings(&durable, &env, None)[0].contains("tmpfs"));
    }

    #[test]
    fn direct_ignored_when_a_tenth_of_the_io_entered_the_cache() {
        assert_eq!(direct_ignored("zfs", 0, 100 << 20, 0), None, "no I/O");
        assert_eq!(direct_ignored("zfs", 0, 1 << 20, 100 << 20), None);
        assert_eq!(direct_ignored("zfs", 5 << 20, 1 << 20, 100 << 20), None);
        let w = direct_ignored("zfs", 0, 50 << 20, 100 << 20).unwrap();
        assert!(
            w.starts_with("O_DIRECT looks silently unsupported on this zfs filesystem: "),
            "{w}"
        );
    }
}
