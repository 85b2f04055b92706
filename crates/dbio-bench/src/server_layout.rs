//! `--like-server`: the page layout of a running MariaDB/MySQL server's buffer pool, read from
//! its process's memory map (/proc/PID/smaps), so `dbio bench` can lay its I/O buffers out the
//! same way (4 KiB pages, or huge pages).
//!
//! The buffer pool is one large anonymous mapping: with `large_pages=ON` a hugetlb mapping
//! (smaps shows it as `/anon_hugepage (deleted)` with `KernelPageSize: 2048 kB`), without it
//! ordinary pages, which transparent huge pages may back (`AnonHugePages`) when THP is
//! `always` or the server advised it.

use crate::error::BenchError;
use dbio_schema::bench::BufferLayout;

/// One mapping of a process, as /proc/PID/smaps describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    /// Start address.
    pub start: u64,
    /// End address (exclusive).
    pub end: u64,
    /// Permissions (`rw-p`).
    pub perms: String,
    /// Path (empty for an anonymous mapping).
    pub path: String,
    /// Size, KiB.
    pub size_kb: u64,
    /// Resident, KiB.
    pub rss_kb: u64,
    /// Resident in transparent huge pages, KiB.
    pub anon_huge_kb: u64,
    /// In hugetlb pages (private and shared), KiB.
    pub hugetlb_kb: u64,
    /// Page size of the mapping, KiB.
    pub kernel_page_kb: u64,
}

impl Mapping {
    /// Anonymous (or hugetlb) memory the process can write: where a buffer pool can live.
    fn pool_candidate(&self) -> bool {
        self.perms.starts_with("rw")
            && (self.path.is_empty() || self.path.starts_with("/anon_hugepage"))
    }
    /// The layout this mapping gives the pages in it: huge when it is a hugetlb mapping or
    /// when most of what is resident lies in transparent huge pages.
    pub fn layout(&self) -> BufferLayout {
        let hugetlb = self.hugetlb_kb > 0 || self.kernel_page_kb >= 2048;
        let mostly_thp = self.anon_huge_kb > 0 && self.anon_huge_kb * 2 >= self.rss_kb;
        if hugetlb || mostly_thp {
            BufferLayout::Huge
        } else {
            BufferLayout::Pages4k
        }
    }
    /// What was read, in words: `AnonHugePages 0 kB, KernelPageSize 4 kB in the 160 MiB
    /// mapping at 0x77c3fe000000`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "AnonHugePages {} kB, Hugetlb {} kB, KernelPageSize {} kB in the {} MiB {}mapping at {:#x}",
            self.anon_huge_kb,
            self.hugetlb_kb,
            self.kernel_page_kb,
            self.size_kb / 1024,
            if self.path.is_empty() { "anonymous " } else { "hugetlb " },
            self.start
        );
        if self.rss_kb < self.size_kb {
            s.push_str(&format!(" ({} MiB resident)", self.rss_kb / 1024));
        }
        s
    }
}

/// Every mapping in an smaps text.
pub fn parse_smaps(text: &str) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let first = f.next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
                let perms = f.next().unwrap_or("").to_string();
                // offset, device, inode, then the path (which may contain spaces).
                let path = f.skip(3).collect::<Vec<_>>().join(" ");
                out.push(Mapping {
                    start: a,
                    end: b,
                    perms,
                    path,
                    ..Mapping::default()
                });
                continue;
            }
        }
        let Some(m) = out.last_mut() else { continue };
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let kb = || {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .unwrap_or(0)
        };
        match key {
            "Size" => m.size_kb = kb(),
            "Rss" => m.rss_kb = kb(),
            "AnonHugePages" => m.anon_huge_kb = kb(),
            "Private_Hugetlb" | "Shared_Hugetlb" => m.hugetlb_kb += kb(),
            "KernelPageSize" => m.kernel_page_kb = kb(),
            _ => {}
        }
    }
    out
}

/// The mapping that holds the buffer pool: of the writable anonymous or hugetlb mappings at
/// least `pool_bytes` large when the pool's size is known (from the server), the one with most
/// resident; else the largest.
pub fn buffer_pool_mapping(maps: &[Mapping], pool_bytes: Option<u64>) -> Option<&Mapping> {
    let cands = maps.iter().filter(|m| m.pool_candidate());
    match pool_bytes {
        // Of the mappings large enough to hold the pool, the one with most resident: a
        // server's other large reservations (thread stacks, arenas) hold little of theirs.
        Some(b) => cands
            .filter(|m| m.size_kb * 1024 >= b)
            .max_by_key(|m| (m.rss_kb, std::cmp::Reverse(m.size_kb))),
        None => cands.max_by_key(|m| m.size_kb),
    }
}

/// Reads /proc/PID/smaps and finds the buffer pool's mapping in it.
pub fn read_pool_mapping(pid: u32, pool_bytes: Option<u64>) -> Result<Mapping, BenchError> {
    let path = format!("/proc/{pid}/smaps");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        BenchError::InvalidSpec(format!(
            "--like-server: cannot read {path} ({e}): give the PID of a running server (as root, or as the server's user)"
        ))
    })?;
    let maps = parse_smaps(&text);
    buffer_pool_mapping(&maps, pool_bytes).cloned().ok_or_else(|| {
        BenchError::InvalidSpec(format!(
            "--like-server: pid {pid} has no writable anonymous mapping{} in {path}: is it a MariaDB/MySQL server?",
            pool_bytes.map_or(String::new(), |b| format!(" of {} MiB or more (its buffer pool)", b >> 20))
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cut from /proc/PID/smaps of MariaDB 10.11.19 on this machine (large_pages=OFF,
    /// innodb_buffer_pool_size=128M, THP madvise): the 8 TiB PROT_NONE reservation of
    /// innodb_buffer_pool_size_max, the committed 160 MiB in front of it, and a thread arena.
    const OFF: &str = "\
55d0a1c00000-55d0a1e00000 r--p 00000000 fe:01 1049123                    /usr/sbin/mariadbd
Size:               2048 kB
Rss:                2048 kB
AnonHugePages:         0 kB
KernelPageSize:        4 kB
77c3fe000000-77c408000000 rw-p 00000000 00:00 0 
Size:             163840 kB
Rss:              131200 kB
AnonHugePages:         0 kB
Private_Hugetlb:       0 kB
KernelPageSize:        4 kB
77c408000000-7fc400000000 ---p 00000000 00:00 0 
Size:           8589803520 kB
Rss:                   0 kB
AnonHugePages:         0 kB
KernelPageSize:        4 kB
7fc4122c5000-7fc41abea000 rw-p 00000000 00:00 0 
Size:             140436 kB
Rss:                2400 kB
AnonHugePages:         0 kB
KernelPageSize:        4 kB
";

    #[test]
    fn a_server_without_large_pages_has_its_pool_in_4k_pages() {
        let maps = parse_smaps(OFF);
        assert_eq!(maps.len(), 4);
        assert_eq!(maps[0].path, "/usr/sbin/mariadbd");
        let m = buffer_pool_mapping(&maps, None).unwrap();
        assert_eq!(
            (m.start, m.size_kb, m.rss_kb),
            (0x77c3fe000000, 163840, 131200)
        );
        assert_eq!(m.layout(), BufferLayout::Pages4k);
        // Knowing the pool is 128 MiB picks the same mapping, not the larger PROT_NONE one.
        let m = buffer_pool_mapping(&maps, Some(128 << 20)).unwrap();
        assert_eq!(m.start, 0x77c3fe000000);
        assert!(
            m.describe().contains("AnonHugePages 0 kB"),
            "{}",
            m.describe()
        );
        assert!(buffer_pool_mapping(&maps, Some(1 << 40)).is_none());
    }

    #[test]
    fn hugetlb_and_thp_backed_pools_are_huge() {
        let hugetlb = "\
7f0000000000-7f0008000000 rw-s 00000000 00:0f 1234                       /anon_hugepage (deleted)
Size:             131072 kB
Rss:                   0 kB
AnonHugePages:         0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:  131072 kB
KernelPageSize:     2048 kB
";
        let maps = parse_smaps(hugetlb);
        assert_eq!(maps[0].path, "/anon_hugepage (deleted)");
        let m = buffer_pool_mapping(&maps, Some(128 << 20)).unwrap();
        assert_eq!(m.layout(), BufferLayout::Huge);
        let thp = "\
7f0000000000-7f0008000000 rw-p 00000000 00:00 0 
Size:             131072 kB
Rss:              131072 kB
AnonHugePages:    126976 kB
KernelPageSize:        4 kB
";
        assert_eq!(parse_smaps(thp)[0].layout(), BufferLayout::Huge);
    }

    #[test]
    fn this_process_reads_as_4k() {
        // A process of ours: the test harness's own largest anonymous mapping is not in
        // hugetlb pages (nothing here reserved any).
        let m = read_pool_mapping(std::process::id(), None).unwrap();
        assert_eq!(m.hugetlb_kb, 0);
        let e = read_pool_mapping(u32::MAX, None).unwrap_err().to_string();
        assert!(e.contains("/proc/4294967295/smaps"), "{e}");
    }
}
