//! sysfs values: pure parsers for the formats of `/sys/block/*/queue/*` files, and [`Sys`],
//! the root under which `/sys` and `/proc` are read (the real `/` in production, a fixture tree
//! in tests).

use crate::Error;
use dbio_schema::stack::QueueAttrs;
use std::path::{Path, PathBuf};

/// Where `/sys` and `/proc` live: `/` on a live system, a fixture directory in tests.
#[derive(Clone, Debug)]
pub struct Sys {
    root: PathBuf,
}

impl Default for Sys {
    fn default() -> Self {
        Sys::live()
    }
}

impl Sys {
    /// The live system (`/sys`, `/proc`).
    pub fn live() -> Self {
        Sys {
            root: PathBuf::from("/"),
        }
    }

    /// A tree laid out like `/` (with `sys/` and `proc/` under `root`).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Sys { root: root.into() }
    }

    /// `rel` (e.g. `sys/class/block`) under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// `/sys/class/block/<name>` under the root.
    pub fn class_block(&self, name: &str) -> PathBuf {
        self.path("sys/class/block").join(name)
    }

    /// `/sys/dev/block/<major>:<minor>` under the root.
    pub fn dev_block(&self, major: u32, minor: u32) -> PathBuf {
        self.path("sys/dev/block").join(format!("{major}:{minor}"))
    }

    /// Reads a file under the root as text.
    pub fn read(&self, rel: &str) -> Result<String, Error> {
        let p = self.path(rel);
        std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))
    }

    /// Names of all block devices (entries of `/sys/class/block`), sorted.
    pub fn block_devices(&self) -> Result<Vec<String>, Error> {
        let dir = self.path("sys/class/block");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| Error::io(&dir, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }
}

/// Reads a sysfs attribute file, `None` when it does not exist or cannot be read (attributes
/// come and go between kernel versions; a missing one is not an error).
pub fn read_attr(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim_end_matches(['\n', ' ']).to_string())
}

/// Parses an unsigned integer attribute (`"128\n"`).
pub fn parse_u64(s: &str) -> Option<u64> {
    s.trim().parse().ok()
}

/// Parses a 0/1 attribute (`rotational`, `partition`-style flags).
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// Parses `queue/scheduler`: `"none [mq-deadline] kyber bfq"` gives the active one (in
/// brackets) and the list. A single entry without brackets (`"none"` on dm devices) is active.
pub fn parse_scheduler(s: &str) -> (Option<String>, Vec<String>) {
    let mut active = None;
    let mut all = Vec::new();
    for tok in s.split_whitespace() {
        if let Some(inner) = tok.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            active = Some(inner.to_string());
            all.push(inner.to_string());
        } else {
            all.push(tok.to_string());
        }
    }
    if active.is_none() && all.len() == 1 {
        active = Some(all[0].clone());
    }
    (active, all)
}

/// Reads the attributes from a `queue/` directory.
pub fn read_queue(queue_dir: &Path) -> QueueAttrs {
    let get = |n: &str| read_attr(&queue_dir.join(n));
    let num = |n: &str| get(n).as_deref().and_then(parse_u64);
    let (scheduler, schedulers) = get("scheduler")
        .as_deref()
        .map(parse_scheduler)
        .unwrap_or_default();
    QueueAttrs {
        scheduler,
        schedulers,
        nr_requests: num("nr_requests"),
        read_ahead_kb: num("read_ahead_kb"),
        max_sectors_kb: num("max_sectors_kb"),
        rotational: get("rotational").as_deref().and_then(parse_bool),
        write_cache: get("write_cache").map(|s| s.trim().to_string()),
        logical_block_size_bytes: num("logical_block_size"),
        physical_block_size_bytes: num("physical_block_size"),
        minimum_io_size_bytes: num("minimum_io_size"),
        optimal_io_size_bytes: num("optimal_io_size"),
        discard_max_bytes: num("discard_max_bytes"),
        discard_granularity_bytes: num("discard_granularity"),
    }
}

/// Parses a `key=value` per line file (`uevent`).
pub fn parse_uevent(s: &str) -> Vec<(String, String)> {
    s.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Parses `major:minor` (`dev` files, mountinfo).
pub fn parse_major_minor(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_active_and_list() {
        let (a, all) = parse_scheduler("none [mq-deadline] kyber bfq \n");
        assert_eq!(a.as_deref(), Some("mq-deadline"));
        assert_eq!(all, vec!["none", "mq-deadline", "kyber", "bfq"]);
        let (a, all) = parse_scheduler("none\n");
        assert_eq!(a.as_deref(), Some("none"));
        assert_eq!(all, vec!["none"]);
        let (a, all) = parse_scheduler("");
        assert_eq!(a, None);
        assert!(all.is_empty());
    }

    #[test]
    fn numbers_and_flags() {
        assert_eq!(parse_u64("128\n"), Some(128));
        assert_eq!(parse_u64("x"), None);
        assert_eq!(parse_bool("1\n"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("2"), None);
        assert_eq!(parse_major_minor("254:0\n"), Some((254, 0)));
        assert_eq!(parse_major_minor("254"), None);
        let u = parse_uevent("MAJOR=254\nMINOR=0\nDEVNAME=vda\n");
        assert_eq!(u[2], ("DEVNAME".to_string(), "vda".to_string()));
    }

    #[test]
    fn queue_attrs_from_a_directory() {
        let d = tempfile::tempdir().unwrap();
        for (n, v) in [
            ("scheduler", "[none] mq-deadline\n"),
            ("nr_requests", "256\n"),
            ("read_ahead_kb", "128\n"),
            ("rotational", "0\n"),
            ("write_cache", "write back\n"),
            ("logical_block_size", "512\n"),
            ("physical_block_size", "4096\n"),
            ("minimum_io_size", "4096\n"),
            ("optimal_io_size", "0\n"),
            ("discard_max_bytes", "2147483136\n"),
        ] {
            std::fs::write(d.path().join(n), v).unwrap();
        }
        let q = read_queue(d.path());
        assert_eq!(q.scheduler.as_deref(), Some("none"));
        assert_eq!(q.nr_requests, Some(256));
        assert_eq!(q.rotational, Some(false));
        assert_eq!(q.write_cache.as_deref(), Some("write back"));
        assert_eq!(q.physical_block_size_bytes, Some(4096));
        assert_eq!(q.discard_supported(), Some(true));
        assert_eq!(q.discard_granularity_bytes, None);
        assert_eq!(q.max_sectors_kb, None);
    }

    #[test]
    #[ignore = "needs /sys/block/vda (the test machine's virtio root disk); scripts/test.sh runs it"]
    fn live_vda_queue() {
        let q = Path::new("/sys/block/vda/queue");
        assert!(q.exists(), "no /sys/block/vda on this machine");
        let a = read_queue(q);
        let want = std::fs::read_to_string(q.join("logical_block_size")).unwrap();
        assert_eq!(a.logical_block_size_bytes, parse_u64(&want));
        assert!(a.scheduler.is_some());
        assert!(!a.schedulers.is_empty());
    }
}
