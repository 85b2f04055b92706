//! Mounts: `/proc/self/mountinfo` and `/proc/swaps` parsing (pure) and the mount a path lives
//! on. Whether a device is in use is [`crate::inuse`].

use crate::sysfs::{parse_major_minor, Sys};
use crate::Error;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// One line of `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountEntry {
    /// Mount id.
    pub mount_id: u64,
    /// Parent mount id.
    pub parent_id: u64,
    /// Major number of the device the filesystem is on (0 for tmpfs, overlay, NFS, btrfs...).
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Root of the mount within the filesystem (`/` unless a bind mount of a subdirectory).
    pub root: String,
    /// Where it is mounted (octal escapes such as `\040` decoded).
    pub mountpoint: String,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// Filesystem type (`ext4`, `xfs`, `tmpfs`).
    pub fstype: String,
    /// Mount source (`/dev/vda`, `tmpfs`, `server:/export`).
    pub source: String,
    /// Per-superblock options (`rw,discard,data=ordered`).
    pub super_options: String,
}

/// Decodes the octal escapes the kernel writes in mountinfo (`\040` space, `\011` tab,
/// `\012` newline, `\134` backslash).
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if v <= 255 {
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `/proc/self/mountinfo` text. A malformed line is an error naming its line number.
pub fn parse_mountinfo(text: &str) -> Result<Vec<MountEntry>, Error> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |msg: &str| Error::Parse {
            what: "mountinfo".into(),
            line: i + 1,
            msg: format!("{msg}: {line:?}"),
        };
        let toks: Vec<&str> = line.split(' ').collect();
        let sep = toks
            .iter()
            .position(|t| *t == "-")
            .ok_or_else(|| err("no ' - ' separator"))?;
        if sep < 6 || toks.len() < sep + 3 {
            return Err(err("too few fields"));
        }
        let (major, minor) = parse_major_minor(toks[2]).ok_or_else(|| err("bad major:minor"))?;
        out.push(MountEntry {
            mount_id: toks[0].parse().map_err(|_| err("bad mount id"))?,
            parent_id: toks[1].parse().map_err(|_| err("bad parent id"))?,
            major,
            minor,
            root: unescape(toks[3]),
            mountpoint: unescape(toks[4]),
            mount_options: toks[5].to_string(),
            fstype: unescape(toks[sep + 1]),
            source: unescape(toks[sep + 2]),
            super_options: toks.get(sep + 3).map(|s| s.to_string()).unwrap_or_default(),
        });
    }
    Ok(out)
}

/// The mount that holds `path` (already canonical): the longest mountpoint that is a
/// path-prefix of it; among equal mountpoints (one mounted over another) the last one wins,
/// as it is the one visible.
pub fn mount_for<'a>(entries: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for e in entries {
        if path.starts_with(Path::new(&e.mountpoint)) {
            let longer = match best {
                None => true,
                Some(b) => e.mountpoint.len() >= b.mountpoint.len(),
            };
            if longer {
                best = Some(e);
            }
        }
    }
    best
}

/// One active swap area from `/proc/swaps`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapEntry {
    /// The swap file or device (escapes decoded).
    pub filename: String,
    /// `partition` or `file`.
    pub kind: String,
}

/// Parses `/proc/swaps` (header line, then one line per swap area).
pub fn parse_swaps(text: &str) -> Vec<SwapEntry> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let mut t = l.split_whitespace();
            Some(SwapEntry {
                filename: unescape(t.next()?),
                kind: t.next()?.to_string(),
            })
        })
        .collect()
}

/// Reads and parses `/proc/self/mountinfo`.
pub fn read_mountinfo() -> Result<Vec<MountEntry>, Error> {
    read_mountinfo_in(&Sys::live())
}

pub(crate) fn read_mountinfo_in(sys: &Sys) -> Result<Vec<MountEntry>, Error> {
    parse_mountinfo(&sys.read("proc/self/mountinfo")?)
}

/// `major:minor` of a block device node, or an error naming the path.
pub fn block_dev_numbers(dev: &Path) -> Result<(u32, u32), Error> {
    let md = std::fs::metadata(dev).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound {
                path: dev.to_path_buf(),
            }
        } else {
            Error::io(dev, e)
        }
    })?;
    if !md.file_type().is_block_device() {
        return Err(Error::NotBlockDevice {
            path: dev.to_path_buf(),
        });
    }
    Ok(crate::dev_major_minor(md.rdev()))
}

pub(crate) fn name_of_dev(sys: &Sys, major: u32, minor: u32) -> Option<String> {
    let p = std::fs::canonicalize(sys.dev_block(major, minor)).ok()?;
    Some(p.file_name()?.to_string_lossy().into_owned())
}

/// `path` made absolute and canonical, or, when it does not exist (yet), its nearest existing
/// ancestor: where a file or directory to be made there would live.
pub(crate) fn nearest_existing(path: &Path) -> Result<std::path::PathBuf, Error> {
    let mut probe: std::path::PathBuf = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| Error::io(".", e))?
            .join(path)
    };
    let canon = loop {
        match std::fs::canonicalize(&probe) {
            Ok(c) => break c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match probe.parent() {
                Some(p) => probe = p.to_path_buf(),
                None => {
                    return Err(Error::NotFound {
                        path: path.to_path_buf(),
                    })
                }
            },
            Err(e) => return Err(Error::io(&probe, e)),
        }
    };
    Ok(canon)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MI: &str = "22 27 0:21 / /proc rw,relatime - proc proc rw
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=1k
40 27 253:3 /sub /srv/my\\040data rw,noatime shared:5 master:1 - xfs /dev/mapper/vg-my\\134lv rw,attr2,inode64
";

    #[test]
    fn parses_fields_optional_tags_and_escapes() {
        let m = parse_mountinfo(MI).unwrap();
        assert_eq!(m.len(), 5);
        assert_eq!(m[2].mountpoint, "/");
        assert_eq!(m[2].fstype, "ext4");
        assert_eq!(m[2].source, "/dev/vda");
        assert_eq!((m[2].major, m[2].minor), (254, 0));
        assert_eq!(m[2].super_options, "rw,discard,resv_strict");
        let x = &m[4];
        assert_eq!(x.mountpoint, "/srv/my data");
        assert_eq!(x.root, "/sub");
        assert_eq!(x.source, "/dev/mapper/vg-my\\lv");
        assert_eq!(x.fstype, "xfs");
        assert_eq!(x.mount_options, "rw,noatime");
        assert_eq!(x.super_options, "rw,attr2,inode64");
    }

    #[test]
    fn malformed_line_names_its_number() {
        let e = parse_mountinfo("22 27 0:21 / /proc rw - proc proc rw\nbroken line\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(parse_mountinfo("1 2 x:y / / rw - ext4 /dev/a rw").is_err());
    }

    #[test]
    fn unescape_octal() {
        assert_eq!(unescape("a\\040b\\011c\\012d\\134e"), "a b\tc\nd\\e");
        assert_eq!(unescape("trailing\\04"), "trailing\\04");
        assert_eq!(unescape("\\999"), "\\999");
    }

    #[test]
    fn longest_prefix_and_overmount() {
        let m = parse_mountinfo(MI).unwrap();
        let f = |p: &str| mount_for(&m, Path::new(p)).unwrap().mount_id;
        assert_eq!(f("/var/lib/mysql"), 27);
        assert_eq!(f("/"), 27);
        assert_eq!(f("/dev/shm/x"), 30); // mounted over 25: the last one is visible
        assert_eq!(f("/dev/shmx"), 27); // path components, not string prefix
        assert_eq!(f("/srv/my data/ibdata1"), 40);
    }

    #[test]
    fn swaps() {
        let s = parse_swaps(
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/vdb2 partition 1 0 -2\n/swap\\040file file 2 0 -3\n",
        );
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].filename, "/dev/vdb2");
        assert_eq!(s[1].filename, "/swap file");
        assert_eq!(s[1].kind, "file");
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
    }
}
