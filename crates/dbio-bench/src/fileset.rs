//! The file set: `dbio-file.N` data files (and `dbio-log.T` commit logs) in the target
//! directory, listed in a marker file `.dbio-fileset.json`. The marker is written *before* any
//! file, so an interrupted prepare can still be cleaned up; cleanup removes only the files the
//! marker lists (and the directory only if dbio created it and it is empty): dbio never deletes
//! a file it did not create.

use crate::error::BenchError;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Name of the marker file.
pub const MARKER: &str = ".dbio-fileset.json";

/// Name of data file `i`.
pub fn data_file(i: u64) -> String {
    format!("dbio-file.{i}")
}

/// Name of worker `t`'s commit log.
pub fn log_file(t: u32) -> String {
    format!("dbio-log.{t}")
}

/// The marker's content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    /// Always "dbio".
    pub created_by: String,
    /// dbio version that wrote it.
    pub version: String,
    /// Whether dbio created the directory (then cleanup removes it when empty).
    pub created_dir: bool,
    /// Size of each data file.
    pub file_size_bytes: u64,
    /// Number of data files of the current set.
    pub file_num: u64,
    /// Every file dbio created here (data files and logs, also of earlier sets).
    pub files: Vec<String>,
}

/// Reads the marker of `dir`, if there is one.
pub fn read_marker(dir: &Path) -> Result<Option<Marker>, BenchError> {
    let p = dir.join(MARKER);
    match fs::read(&p) {
        Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|e| {
            BenchError::io(
                "cannot parse the dbio marker",
                p,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(BenchError::io("cannot read", p, e)),
    }
}

fn write_marker(dir: &Path, m: &Marker) -> Result<(), BenchError> {
    let p = dir.join(MARKER);
    let tmp = dir.join(format!("{MARKER}.tmp"));
    let body = serde_json::to_vec_pretty(m).expect("marker serialises");
    let mut f = File::create(&tmp).map_err(|e| BenchError::DirNotWritable {
        path: dir.to_path_buf(),
        source: e,
    })?;
    f.write_all(&body)
        .and_then(|_| f.sync_all())
        .map_err(|e| BenchError::io("cannot write", &tmp, e))?;
    fs::rename(&tmp, &p).map_err(|e| BenchError::io("cannot write", &p, e))
}

/// Adds `names` to the marker of `dir` (before creating those files).
pub fn register(dir: &Path, names: &[String]) -> Result<(), BenchError> {
    let mut m = read_marker(dir)?.ok_or(BenchError::NoFileSet {
        path: dir.to_path_buf(),
        marker: MARKER,
    })?;
    let mut changed = false;
    for n in names {
        if !m.files.contains(n) {
            let p = dir.join(n);
            if p.exists() {
                return Err(BenchError::ForeignFile {
                    path: p,
                    marker: MARKER,
                });
            }
            m.files.push(n.clone());
            changed = true;
        }
    }
    if changed {
        write_marker(dir, &m)?;
    }
    Ok(())
}

/// Bytes free for an unprivileged writer on the filesystem of `dir`; `u64::MAX` when the
/// filesystem keeps no block count (ramfs and friends report 0 blocks in total).
pub fn free_bytes(dir: &Path) -> Result<u64, BenchError> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| BenchError::InvalidSpec(format!("{} contains a NUL byte", dir.display())))?;
    // SAFETY: statvfs only writes into the zeroed struct we pass; the path is NUL-terminated.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::statvfs(c.as_ptr(), &mut s) };
    if r != 0 {
        return Err(BenchError::io(
            "cannot stat filesystem of",
            dir,
            std::io::Error::last_os_error(),
        ));
    }
    if s.f_blocks == 0 {
        return Ok(u64::MAX);
    }
    Ok(s.f_bavail as u64 * s.f_frsize as u64)
}

/// What prepare did.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// The directory.
    pub dir: PathBuf,
    /// Files written.
    pub files: u64,
    /// Bytes per file.
    pub file_size_bytes: u64,
    /// Bytes written.
    pub bytes: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// Whether the files were dropped from the page cache afterwards.
    pub dropped_cache: bool,
    /// Prepare was interrupted before it finished.
    pub interrupted: bool,
}

/// Creates the target directory if needed (only its last component) and checks it.
fn ensure_dir(dir: &Path) -> Result<bool, BenchError> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(false),
        Ok(_) => Err(BenchError::NotADirectory {
            path: dir.to_path_buf(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match fs::create_dir(dir) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(BenchError::DirMissing {
                path: dir.to_path_buf(),
            }),
            Err(e) => Err(BenchError::DirNotWritable {
                path: dir.to_path_buf(),
                source: e,
            }),
        },
        Err(e) => Err(BenchError::io("cannot stat", dir, e)),
    }
}

/// Writes the file set: `file_num` files of `file_size` bytes of random (incompressible) data,
/// several files at once, then fdatasync and drop each from the page cache (POSIX_FADV_DONTNEED)
/// so the run starts cold. Refuses when the set does not fit in the free space, and refuses to
/// touch a file with one of its names that dbio did not create. `progress` gets bytes written.
pub fn prepare(
    dir: &Path,
    file_num: u64,
    file_size: u64,
    seed: u64,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Prepared, BenchError> {
    let t0 = Instant::now();
    let created_dir = ensure_dir(dir)?;
    let old = read_marker(dir)?;
    let names: Vec<String> = (0..file_num).map(data_file).collect();
    let ours = |n: &String| old.as_ref().is_some_and(|m| m.files.contains(n));
    let mut reclaim = 0u64;
    for n in &names {
        let p = dir.join(n);
        if let Ok(md) = fs::symlink_metadata(&p) {
            if !ours(n) || !md.is_file() {
                return Err(BenchError::ForeignFile {
                    path: p,
                    marker: MARKER,
                });
            }
            reclaim += md.len();
        }
    }
    let need = file_num * file_size;
    let avail = free_bytes(dir)?.saturating_add(reclaim);
    if need > avail {
        if created_dir {
            let _ = fs::remove_dir(dir);
        }
        return Err(BenchError::NotEnoughSpace {
            path: dir.to_path_buf(),
            need,
            avail,
        });
    }
    let mut marker = old.unwrap_or_else(|| Marker {
        created_by: "dbio".into(),
        created_dir,
        ..Default::default()
    });
    marker.version = env!("CARGO_PKG_VERSION").into();
    marker.file_size_bytes = file_size;
    marker.file_num = file_num;
    for n in &names {
        if !marker.files.contains(n) {
            marker.files.push(n.clone());
        }
    }
    write_marker(dir, &marker)?;

    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(file_num as usize)
        .max(1);
    let next = AtomicU64::new(0);
    let written = AtomicU64::new(0);
    let result: Result<(), BenchError> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (next, written, names) = (&next, &written, &names);
                s.spawn(move || -> Result<(), BenchError> {
                    let mut rng = Rng::new(seed ^ 0x5EED_F11E, w as u64);
                    let mut buf = vec![0u8; 1 << 20];
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= file_num || stop.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        let p = dir.join(&names[i as usize]);
                        let mut f = OpenOptions::new()
                            .write(true)
                            .create(true)
                            .truncate(true)
                            .open(&p)
                            .map_err(|e| BenchError::io("cannot create", &p, e))?;
                        let mut left = file_size;
                        while left > 0 && !stop.load(Ordering::Relaxed) {
                            let n = left.min(buf.len() as u64) as usize;
                            rng.fill(&mut buf[..n]);
                            f.write_all(&buf[..n])
                                .map_err(|e| BenchError::io("cannot write", &p, e))?;
                            left -= n as u64;
                            let total = written.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
                            progress(total);
                        }
                        f.sync_data()
                            .map_err(|e| BenchError::io("cannot fdatasync", &p, e))?;
                        drop_cache(&f);
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("prepare worker panicked"))
    });
    result?;
    Ok(Prepared {
        dir: dir.to_path_buf(),
        files: file_num,
        file_size_bytes: file_size,
        bytes: written.load(Ordering::Relaxed),
        elapsed: t0.elapsed(),
        dropped_cache: true,
        interrupted: stop.load(Ordering::Relaxed),
    })
}

/// Drops a file's pages from the page cache (after they were written back).
pub fn drop_cache(f: &File) {
    // SAFETY: plain advisory call on an open descriptor.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

/// What cleanup removed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cleaned {
    /// Files removed.
    pub removed: Vec<PathBuf>,
    /// Bytes freed.
    pub bytes: u64,
    /// Files listed in the marker that were already gone.
    pub missing: u64,
    /// Whether the directory was removed (dbio created it and it was empty).
    pub removed_dir: bool,
    /// Files left in the directory that dbio did not create.
    pub foreign_left: u64,
}

/// Removes the files the marker lists (regular files only), the marker, and the directory if
/// dbio created it and nothing else is in it.
pub fn cleanup(dir: &Path) -> Result<Cleaned, BenchError> {
    let marker = read_marker(dir)?.ok_or(BenchError::NoFileSet {
        path: dir.to_path_buf(),
        marker: MARKER,
    })?;
    let mut out = Cleaned::default();
    for n in &marker.files {
        // Names come from our own marker, but never follow a path out of the directory.
        if n.contains('/') || n == ".." {
            continue;
        }
        let p = dir.join(n);
        match fs::symlink_metadata(&p) {
            Ok(md) if md.is_file() => {
                fs::remove_file(&p).map_err(|e| BenchError::io("cannot remove", &p, e))?;
                out.bytes += md.len();
                out.removed.push(p);
            }
            Ok(_) => out.foreign_left += 1,
            Err(_) => out.missing += 1,
        }
    }
    let mp = dir.join(MARKER);
    fs::remove_file(&mp).map_err(|e| BenchError::io("cannot remove", &mp, e))?;
    let left = fs::read_dir(dir)
        .map_err(|e| BenchError::io("cannot list", dir, e))?
        .count() as u64;
    out.foreign_left += left;
    if marker.created_dir && left == 0 {
        out.removed_dir = fs::remove_dir(dir).is_ok();
    }
    Ok(out)
}

/// Whether `path` is a block device.
pub fn is_block_device(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_writes_random_data_and_cleanup_removes_only_ours() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("set");
        let stop = AtomicBool::new(false);
        let p = prepare(&dir, 3, 256 * 1024, 1, &stop, &|_| {}).unwrap();
        assert_eq!((p.files, p.bytes), (3, 3 * 256 * 1024));
        let data = fs::read(dir.join("dbio-file.1")).unwrap();
        assert_eq!(data.len(), 256 * 1024);
        let zeros = data.iter().filter(|&&b| b == 0).count();
        assert!(zeros < data.len() / 100, "data is random, not zeros");
        assert_ne!(data, fs::read(dir.join("dbio-file.0")).unwrap());
        fs::write(dir.join("notes.txt"), b"mine").unwrap();
        let c = cleanup(&dir).unwrap();
        assert_eq!(c.removed.len(), 3);
        assert_eq!(c.foreign_left, 1);
        assert!(!c.removed_dir);
        assert!(dir.join("notes.txt").exists());
        assert!(!dir.join(MARKER).exists());
    }

    #[test]
    fn prepare_refuses_a_file_it_did_not_create() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("dbio-file.0"), b"precious").unwrap();
        let stop = AtomicBool::new(false);
        let e = prepare(tmp.path(), 2, 4096, 1, &stop, &|_| {}).unwrap_err();
        assert!(matches!(e, BenchError::ForeignFile { .. }), "{e}");
        assert_eq!(
            fs::read(tmp.path().join("dbio-file.0")).unwrap(),
            b"precious"
        );
    }

    #[test]
    fn prepare_refuses_what_does_not_fit() {
        let tmp = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let e = prepare(tmp.path(), 2, 1 << 60, 1, &stop, &|_| {}).unwrap_err();
        assert!(matches!(e, BenchError::NotEnoughSpace { .. }), "{e}");
        assert!(!tmp.path().join(MARKER).exists());
    }

    #[test]
    fn cleanup_removes_the_directory_it_created() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("new");
        let stop = AtomicBool::new(false);
        prepare(&dir, 1, 4096, 1, &stop, &|_| {}).unwrap();
        register(&dir, &[log_file(0)]).unwrap();
        fs::write(dir.join(log_file(0)), b"log").unwrap();
        let c = cleanup(&dir).unwrap();
        assert_eq!(c.removed.len(), 2);
        assert!(c.removed_dir);
        assert!(!dir.exists());
    }
}
