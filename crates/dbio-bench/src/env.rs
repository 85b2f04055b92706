//! Facts about the machine for the result's environment block, and the process's own I/O
//! accounting (/proc/self/io) used to cross-check the engine.

use dbio_schema::bench::ProcessIo;

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Raises this process's soft limit on open files (RLIMIT_NOFILE) to its hard limit, as a
/// run opens every data file at once; returns the (soft, hard) limits now in force.
pub fn raise_open_file_limit() -> std::io::Result<(u64, u64)> {
    dbio_sys::os::raise_open_file_limit()
}

/// Room left under the memory limits of a cgroup and its ancestors: the smallest
/// limit minus usage, and the directory that sets it. `root` is the cgroup mount point
/// (`/sys/fs/cgroup`), `proc_cgroup` the text of `/proc/self/cgroup`. Reads cgroup v2
/// (`memory.max`, `memory.current`) and v1 (`memory/.../memory.limit_in_bytes`,
/// `memory.usage_in_bytes`); `None` when no limit is set.
pub fn cgroup_memory_room(
    root: &std::path::Path,
    proc_cgroup: &str,
) -> Option<(u64, std::path::PathBuf)> {
    let read = |p: std::path::PathBuf| -> Option<u64> {
        std::fs::read_to_string(p).ok()?.trim().parse().ok()
    };
    let mut best: Option<(u64, std::path::PathBuf)> = None;
    for line in proc_cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(ctrl), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let (base, limit_file, usage_file) = if ctrl.is_empty() {
            (root.to_path_buf(), "memory.max", "memory.current")
        } else if ctrl.split(',').any(|c| c == "memory") {
            (
                root.join("memory"),
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        let mut dir = base.join(path.trim_start_matches('/'));
        loop {
            // "max" (v2) does not parse; v1 says "no limit" with a number near 2^63.
            if let Some(limit) = read(dir.join(limit_file)).filter(|&l| l < 1 << 62) {
                let used = read(dir.join(usage_file)).unwrap_or(0);
                let room = limit.saturating_sub(used);
                if best.as_ref().is_none_or(|(b, _)| room < *b) {
                    best = Some((room, dir.clone()));
                }
            }
            if dir == base || !dir.pop() {
                break;
            }
        }
    }
    best
}

/// Memory a run can still take: /proc/meminfo's MemAvailable, or less when this process's
/// cgroup leaves less room; with where that figure comes from (for messages).
pub fn memory_available() -> Option<(u64, String)> {
    let mem = meminfo("MemAvailable").map(|m| (m, "MemAvailable in /proc/meminfo".to_string()));
    let cg = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| cgroup_memory_room(std::path::Path::new("/sys/fs/cgroup"), &t))
        .map(|(room, dir)| {
            (
                room,
                format!("left under the memory limit of cgroup {}", dir.display()),
            )
        });
    match (mem, cg) {
        (Some(m), Some(c)) => Some(if c.0 < m.0 { c } else { m }),
        (m, c) => m.or(c),
    }
}

/// Host name.
pub fn hostname() -> String {
    read_trim("/proc/sys/kernel/hostname").unwrap_or_default()
}

/// Kernel release (`uname -r`).
pub fn kernel() -> String {
    read_trim("/proc/sys/kernel/osrelease").unwrap_or_default()
}

/// Online CPUs.
pub fn cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// A field of /proc/meminfo in bytes.
pub fn meminfo(field: &str) -> Option<u64> {
    parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?, field)
}

/// Parses one `Name:   123 kB` field of /proc/meminfo text.
pub fn parse_meminfo(text: &str, field: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k != field {
            return None;
        }
        let mut it = v.split_whitespace();
        let n: u64 = it.next()?.parse().ok()?;
        if it.next() == Some("kB") {
            n.checked_mul(1024)
        } else {
            Some(n)
        }
    })
}

/// Parses /proc/<pid>/io text.
pub fn parse_proc_io(text: &str) -> ProcessIo {
    let mut io = ProcessIo::default();
    for l in text.lines() {
        if let Some((k, v)) = l.split_once(':') {
            let v: u64 = v.trim().parse().unwrap_or(0);
            match k {
                "rchar" => io.rchar = v,
                "wchar" => io.wchar = v,
                "syscr" => io.syscr = v,
                "syscw" => io.syscw = v,
                "read_bytes" => io.read_bytes = v,
                "write_bytes" => io.write_bytes = v,
                _ => {}
            }
        }
    }
    io
}

/// This process's I/O counters, if the kernel exposes them.
pub fn proc_self_io() -> Option<ProcessIo> {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .map(|t| parse_proc_io(&t))
}

/// `after - before`, counter by counter.
pub fn io_delta(before: &ProcessIo, after: &ProcessIo) -> ProcessIo {
    ProcessIo {
        rchar: after.rchar.saturating_sub(before.rchar),
        wchar: after.wchar.saturating_sub(before.wchar),
        syscr: after.syscr.saturating_sub(before.syscr),
        syscw: after.syscw.saturating_sub(before.syscw),
        read_bytes: after.read_bytes.saturating_sub(before.read_bytes),
        write_bytes: after.write_bytes.saturating_sub(before.write_bytes),
    }
}

/// Filesystem type name from statfs(2)'s magic number, for error messages.
pub fn fs_type_name(path: &std::path::Path) -> String {
    let Ok(magic) = dbio_sys::os::fs_magic(path) else {
        return "unknown".into();
    };
    match magic {
        0xEF53 => "ext4".into(),
        0x5846_5342 => "xfs".into(),
        0x0102_1994 => "tmpfs".into(),
        0x8584_58F6 => "ramfs".into(),
        0x9123_683E => "btrfs".into(),
        0x6969 => "nfs".into(),
        0x794C_7630 => "overlay".into(),
        0x2FC1_2FC1 => "zfs".into(),
        0x6573_5546 => "fuse".into(),
        0xF2F5_2010 => "f2fs".into(),
        0x6264_6576 => "devtmpfs".into(),
        m => format!("filesystem with magic {m:#x}"),
    }
}

/// True for a filesystem whose files live in memory ([`fs_type_name`]'s `tmpfs`, `ramfs`): no
/// read or write on it ever waits for a device.
pub fn is_memory_fs(name: &str) -> bool {
    matches!(name, "tmpfs" | "ramfs")
}

/// Bytes of these files that sit in the page cache now (mmap + mincore), or `None` when it
/// cannot be told. Used to catch filesystems that accept O_DIRECT but cache anyway.
pub fn resident_bytes(paths: &[std::path::PathBuf]) -> Option<u64> {
    let page = dbio_sys::os::page_size();
    let mut total = 0u64;
    for p in paths {
        // O_NOATIME: mapping a file counts as an access; this look must not change atimes.
        let f = {
            use std::os::unix::fs::OpenOptionsExt;
            let mut o = std::fs::OpenOptions::new();
            o.read(true).custom_flags(libc::O_NOATIME);
            o.open(p).or_else(|_| std::fs::File::open(p)).ok()?
        };
        let len = f.metadata().ok()?.len();
        if len == 0 {
            continue;
        }
        // SAFETY: the mapped bytes are never read, only the mapping's address range is passed
        // to mincore, so a file truncated or written meanwhile cannot fault or change what
        // this code reads. The map is read-only and unmapped when dropped.
        let map = unsafe { memmap2::MmapOptions::new().len(len as usize).map(&f) }.ok()?;
        let pages = len.div_ceil(page) as usize;
        let mut vec = vec![0u8; pages];
        // SAFETY: the address range is exactly the live mapping above; vec has one byte per
        // page of it, as mincore requires.
        let r = unsafe {
            libc::mincore(
                map.as_ptr() as *mut libc::c_void,
                map.len(),
                vec.as_mut_ptr(),
            )
        };
        drop(map);
        if r != 0 {
            return None;
        }
        total += vec.iter().filter(|&&b| b & 1 == 1).count() as u64 * page;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_memory_room_takes_the_tightest_limit_up_the_tree() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let w = |p: &str, v: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, v).unwrap();
        };
        // v2: the parent's limit is the tighter one.
        w("a/memory.max", "1000000\n");
        w("a/memory.current", "600000\n");
        w("a/b/memory.max", "max\n");
        w("a/b/memory.current", "100\n");
        assert_eq!(
            cgroup_memory_room(root, "0::/a/b\n"),
            Some((400_000, root.join("a")))
        );
        // v1 (hybrid): the memory hierarchy, its "no limit" value ignored.
        w("memory/x/memory.limit_in_bytes", "9223372036854771712\n");
        w("memory/x/y/memory.limit_in_bytes", "65536\n");
        w("memory/x/y/memory.usage_in_bytes", "4096\n");
        assert_eq!(
            cgroup_memory_room(root, "4:memory:/x/y\n0::/\n"),
            Some((61_440, root.join("memory/x/y")))
        );
        assert_eq!(cgroup_memory_room(root, "4:memory:/x\n"), None);
        assert_eq!(cgroup_memory_room(root, "8:pids:/a/b\n"), None);
    }

    #[test]
    fn parses_meminfo_and_proc_io() {
        let m = "MemTotal:       24598512 kB\nMemFree:  1 kB\nHugePages_Total:       0\n";
        assert_eq!(parse_meminfo(m, "MemTotal"), Some(24598512 * 1024));
        // A value whose bytes do not fit in 64 bits is unknown, not wrapped.
        assert_eq!(
            parse_meminfo("MemTotal: 18014398509481985 kB\n", "MemTotal"),
            None
        );
        assert_eq!(parse_meminfo(m, "HugePages_Total"), Some(0));
        assert_eq!(parse_meminfo(m, "Nope"), None);
        let io = parse_proc_io("rchar: 10\nwchar: 20\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n");
        assert_eq!((io.rchar, io.wchar, io.syscr, io.syscw), (10, 20, 3, 4));
        assert_eq!((io.read_bytes, io.write_bytes), (4096, 8192));
        let d = io_delta(
            &ProcessIo {
                rchar: 4,
                ..Default::default()
            },
            &io,
        );
        assert_eq!(d.rchar, 6);
    }

    #[test]
    fn resident_bytes_sees_the_page_cache_fill_and_drop() {
        // /tmp is on the disk here (ext4), where dropping cached pages is observable.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
        let paths = vec![p.clone()];
        assert!(
            resident_bytes(&paths).unwrap() >= 1 << 20,
            "freshly written pages are cached"
        );
        let f = std::fs::File::open(&p).unwrap();
        f.sync_all().unwrap();
        dbio_sys::os::drop_cache(&f);
        assert!(
            resident_bytes(&paths).unwrap() <= 64 << 10,
            "dropped pages are gone"
        );
    }

    #[test]
    fn names_tmpfs() {
        assert_eq!(fs_type_name(std::path::Path::new("/dev/shm")), "tmpfs");
    }
}
