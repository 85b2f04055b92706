//! Reads of the live Linux system for dbio: `/proc/diskstats`, sysfs queue attributes,
//! `/proc/self/mountinfo`, and the device stack from a path down to the physical disks; and
//! [`atomic::write_atomic`], the one way dbio writes a whole file in place.
//!
//! The parsers are pure functions over `&str` and are unit-tested on fixtures; the code that
//! opens `/proc` and `/sys` is thin and takes its root as a parameter internally ([`sysfs::Sys`]),
//! so tests can point it at a fixture tree. This crate never prints and never exits.
#![deny(missing_docs)]

pub mod atomic;
pub mod cpustat;
pub mod diskstats;
pub mod inuse;
pub mod iostat;
pub mod mounts;
pub mod netdev;
pub mod os;
pub mod stack;
pub mod sysfs;

use std::path::{Path, PathBuf};

/// Everything that can go wrong reading the system.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file under /proc, /sys or /dev could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The path given does not exist.
    #[error("{path} does not exist: check the path")]
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// A path was expected to be a block device node and is not.
    #[error("{path} is not a block device: give a node such as /dev/vda or /dev/mapper/vg-lv")]
    NotBlockDevice {
        /// The path as given.
        path: PathBuf,
    },
    /// A device name that sysfs does not know.
    #[error("no block device {name} in /sys/class/block; devices that exist: {known}")]
    UnknownDevice {
        /// The name asked for.
        name: String,
        /// The devices that exist, comma separated.
        known: String,
    },
    /// A line of a /proc or /sys file (or a saved copy) that does not parse.
    #[error("{what} line {line}: {msg}")]
    Parse {
        /// Which file or text.
        what: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        msg: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }
}

/// The running kernel's release, as `uname -r` prints it (read from
/// `/proc/sys/kernel/osrelease`, the same string).
pub fn kernel_release() -> Result<String, Error> {
    let p = "/proc/sys/kernel/osrelease";
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .map_err(|e| Error::io(p, e))
}

/// Splits a Linux `dev_t` (as `st_dev`/`st_rdev` return it) into major and minor numbers.
pub fn dev_major_minor(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major as u32, minor as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_t_split_matches_glibc_encoding() {
        // makedev(254, 0) and makedev(259, 65537) as glibc encodes them.
        assert_eq!(dev_major_minor(0xfe00), (254, 0));
        let (ma, mi): (u64, u64) = (259, 65537);
        let dev = ((ma & 0xfff) << 8) | ((ma & !0xfff) << 32) | (mi & 0xff) | ((mi & !0xff) << 12);
        assert_eq!(dev_major_minor(dev), (259, 65537));
    }

    #[test]
    fn kernel_release_is_uname_r() {
        let out = std::process::Command::new("uname")
            .arg("-r")
            .output()
            .unwrap();
        let want = String::from_utf8(out.stdout).unwrap();
        assert_eq!(kernel_release().unwrap(), want.trim());
    }
}
