//! The result's environment block: the mount and device stack under the target, the machine,
//! the open flags and what is known of the page cache.

use crate::env;
use crate::fileset::Prepared;
use dbio_schema::bench::{DeviceEnv, EngineKind, Environment, Mode, Spec, Target};
use dbio_schema::units::format_size_approx;

/// The device stack under the target, as far as a benchmark result needs it.
fn stack_env(spec: &Spec) -> (Option<dbio_schema::stack::Mount>, Vec<DeviceEnv>) {
    let stack = match &spec.target {
        Target::Dir(d) => dbio_sys::stack::resolve(d),
        Target::Device(d) => dbio_sys::stack::resolve_device(d),
    };
    let Ok(stack) = stack else {
        return (None, Vec::new());
    };
    let devices = stack
        .devices
        .iter()
        .map(|d| {
            let q = d.queue.as_ref();
            DeviceEnv {
                name: d.name.clone(),
                kind: serde_json::to_value(d.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                scheduler: q.and_then(|q| q.scheduler.clone()),
                rotational: q.and_then(|q| q.rotational),
                write_cache: q.and_then(|q| q.write_cache.clone()),
                logical_block_size_bytes: q.and_then(|q| q.logical_block_size_bytes),
                physical_block_size_bytes: q.and_then(|q| q.physical_block_size_bytes),
            }
        })
        .collect();
    (stack.mount, devices)
}

/// Per-mount options, then the filesystem's own (super) options, each once.
pub fn mount_options(mount_options: &str, super_options: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for o in mount_options.split(',').chain(super_options.split(',')) {
        if !o.is_empty() && !seen.contains(&o) {
            seen.push(o);
        }
    }
    seen.join(",")
}

/// What the run can say about the page cache: tmpfs/ramfs files always live in it; elsewhere,
/// how prepare left it (when it ran just before).
pub fn page_cache(spec: &Spec, fs: &str, prepared: Option<&Prepared>) -> Option<String> {
    if spec.engine == EngineKind::Null {
        return None;
    }
    if matches!(spec.target, Target::Dir(_)) && env::is_memory_fs(fs) {
        return Some(format!("in memory: {fs} files live in the page cache"));
    }
    if spec.mode == Mode::Commit {
        return None;
    }
    prepared.map(|p| match p.resident_bytes {
        Some(0) => "dropped after prepare: the run started cold".into(),
        Some(r) => format!(
            "dropped after prepare, but {} stayed cached: the run started partly warm",
            format_size_approx(r as f64)
        ),
        None => "dropped after prepare (not verified)".into(),
    })
}

/// The environment of a run of `spec` on a target opened with `open_flags` on filesystem
/// `fs`; `prepared` is what prepare did when it ran just before. `clock` and `engine` are
/// left for the run to fill.
pub fn environment(
    spec: &Spec,
    open_flags: Vec<String>,
    fs: &str,
    prepared: Option<&Prepared>,
) -> Environment {
    // The null engine touches no file and no device: their filesystem, devices and the
    // device check do not apply.
    let null = spec.engine == EngineKind::Null;
    let (mount, devices) = if null {
        (None, Vec::new())
    } else {
        stack_env(spec)
    };
    Environment {
        mount_point: mount.as_ref().map(|m| m.mountpoint.clone()),
        mount_options: mount
            .as_ref()
            .map(|m| mount_options(&m.mount_options, &m.super_options)),
        devices,
        hostname: env::hostname(),
        kernel: env::kernel(),
        cpus: env::cpus(),
        mem_total_bytes: env::meminfo("MemTotal").unwrap_or(0),
        filesystem: match spec.target {
            Target::Dir(_) if null => None,
            Target::Dir(_) => Some(
                mount
                    .as_ref()
                    .map_or_else(|| fs.to_string(), |m| m.fstype.clone()),
            ),
            Target::Device(_) => None,
        },
        open_flags,
        page_cache: page_cache(spec, fs, prepared),
        clock: None,
        engine: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec(mode: Mode, engine: EngineKind) -> Spec {
        let mut o = crate::options::tests::opts();
        o.mode = mode;
        o.engine = engine;
        o.spec()
    }

    fn prepared(resident_bytes: Option<u64>) -> Prepared {
        Prepared {
            dir: "/x".into(),
            files: 1,
            file_size_bytes: 4096,
            bytes: 4096,
            elapsed: Duration::from_secs(1),
            fs: "ext4".into(),
            in_memory: false,
            dropped_cache: true,
            resident_bytes,
            interrupted: false,
        }
    }

    #[test]
    fn mount_options_are_listed_once() {
        assert_eq!(
            mount_options("rw,noatime", "rw,discard,,data=ordered"),
            "rw,noatime,discard,data=ordered"
        );
        assert_eq!(mount_options("", ""), "");
    }

    #[test]
    fn page_cache_says_what_is_known() {
        let s = spec(Mode::Rndrd, EngineKind::Sync);
        assert_eq!(
            page_cache(&s, "tmpfs", None).as_deref(),
            Some("in memory: tmpfs files live in the page cache")
        );
        assert_eq!(page_cache(&s, "ext4", None), None);
        assert_eq!(
            page_cache(&s, "ext4", Some(&prepared(Some(0)))).as_deref(),
            Some("dropped after prepare: the run started cold")
        );
        assert_eq!(
            page_cache(&s, "ext4", Some(&prepared(None))).as_deref(),
            Some("dropped after prepare (not verified)")
        );
        assert!(page_cache(&s, "ext4", Some(&prepared(Some(1 << 20))))
            .unwrap()
            .contains("stayed cached: the run started partly warm"));
        let commit = spec(Mode::Commit, EngineKind::Sync);
        assert_eq!(page_cache(&commit, "ext4", Some(&prepared(Some(0)))), None);
        let null = spec(Mode::Rndrd, EngineKind::Null);
        assert_eq!(page_cache(&null, "tmpfs", None), None);
    }
}
