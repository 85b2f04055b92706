//! The file set: `dbio-file.N` data files (and `dbio-log.T` commit logs) in the target
//! directory, listed in a marker file `.dbio-fileset.json`. Every file is created with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` (so a file or symlink already there is never truncated or
//! written through) and listed in the marker with its identity (device, inode, and birth time
//! where the filesystem keeps one) only once it exists. Opening a file of the set and cleanup
//! check that identity: dbio writes to and deletes only files it created, and leaves a file
//! that has been replaced since (and names it).

use crate::error::BenchError;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
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

/// A file dbio created, as the marker records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owned {
    /// File name in the directory.
    pub name: String,
    /// `st_dev` of the file when dbio created it.
    pub dev: u64,
    /// `st_ino` of the file when dbio created it.
    pub ino: u64,
    /// Birth time (ns since the epoch) when the filesystem keeps one: it tells a new file from
    /// an old one that got the same inode number after dbio's file was deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub btime_ns: Option<u64>,
}

impl Owned {
    fn of(name: &str, md: &Metadata) -> Owned {
        Owned {
            name: name.to_string(),
            dev: md.dev(),
            ino: md.ino(),
            btime_ns: md
                .created()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .and_then(|d| u64::try_from(d.as_nanos()).ok()),
        }
    }

    /// Whether `md` (from `lstat` or `fstat`) is this very file: a regular file with the same
    /// identity (see [`Owned::same`]).
    pub fn is(&self, md: &Metadata) -> bool {
        md.is_file() && self.same(&Owned::of(&self.name, md))
    }

    /// Whether `now` is the file recorded here: the same inode, and the same birth time when
    /// both are known (then the device number may differ: btrfs numbers its subvolumes anew at
    /// each mount, and dm or NVMe minor numbers can change across boots), else the same device.
    pub fn same(&self, now: &Owned) -> bool {
        now.ino == self.ino
            && match (now.btime_ns, self.btime_ns) {
                (Some(a), Some(b)) => a == b,
                _ => now.dev == self.dev,
            }
    }
}

/// The marker's content.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
    /// The `dbio sweep` (its `--output-dir`, absolute) that prepared this set and removes it at
    /// its end: a sweep killed (`kill -9`) and resumed still removes the set it made. `None`
    /// for a set `dbio bench` prepared (the user's, kept by a sweep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepared_by_sweep: Option<PathBuf>,
    /// Every file dbio created here (data files and logs, also of earlier sets), each listed
    /// after it was created.
    pub files: Vec<Owned>,
    /// Position of each name in `files` (built on first lookup: sets have thousands of files).
    #[serde(skip)]
    index: std::sync::OnceLock<HashMap<String, usize>>,
}

impl Marker {
    /// The entry of file `name`, if dbio created it.
    pub fn entry(&self, name: &str) -> Option<&Owned> {
        let index = self.index.get_or_init(|| {
            self.files
                .iter()
                .enumerate()
                .map(|(i, o)| (o.name.clone(), i))
                .collect()
        });
        index.get(name).map(|&i| &self.files[i])
    }

    fn record(&mut self, o: Owned) {
        self.entry(&o.name); // builds the index
        let index = self.index.get_mut().expect("built by entry()");
        match index.get(&o.name) {
            Some(&i) => self.files[i] = o,
            None => {
                index.insert(o.name.clone(), self.files.len());
                self.files.push(o);
            }
        }
    }
}

impl Marker {
    /// Whether every data file of the current set is there, is the file dbio created, and has
    /// its full size with no hole: false after an interrupted prepare, or when a file was
    /// removed, truncated or punched with holes since.
    pub fn is_complete(&self, dir: &Path) -> bool {
        (0..self.file_num).all(|i| {
            let name = data_file(i);
            let p = dir.join(&name);
            match (self.entry(&name), fs::symlink_metadata(&p)) {
                (Some(o), Ok(md)) if o.is(&md) => File::options()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(&p)
                    .is_ok_and(|f| check_whole(&p, &f, self.file_size_bytes).is_ok()),
                _ => false,
            }
        })
    }
}

/// The offset of the first hole in `f` (`lseek(SEEK_HOLE)`), `None` when it has none (the
/// first hole is the implicit one at its end). Every filesystem answers SEEK_HOLE: those that
/// do not track holes report the whole file as data. Unlike `st_blocks`, it is not fooled by
/// compression, RAID-Z parity or allocation the filesystem accounts for late (ZFS).
fn first_hole(f: &File, size: u64) -> Option<u64> {
    // The seek moves the file offset, which no one else uses (the engines use pread/pwrite
    // and io_uring with explicit offsets). An error (ENXIO: the file is empty) means there is
    // no byte, so no hole either.
    dbio_sys::os::seek_hole(f).ok().filter(|&h| h < size)
}

/// Checks that data file `path`, opened as `f`, is whole: `expected` bytes (the size of each
/// file in the set's marker), all of them written (no hole). A file someone truncated
/// (`truncate -s 1M`) or punched holes in would make reads fail mid-run and writes fill a
/// sparse file, whose figures are not those of the set: [`BenchError::NotWhole`].
pub fn check_whole(path: &Path, f: &File, expected: u64) -> Result<(), BenchError> {
    let md = f
        .metadata()
        .map_err(|e| BenchError::io("cannot stat", path, e))?;
    let hole = first_hole(f, md.len());
    if md.len() == expected && hole.is_none() {
        return Ok(());
    }
    Err(BenchError::NotWhole {
        path: path.to_path_buf(),
        size: md.len(),
        allocated: md.blocks().saturating_mul(512),
        hole,
        expected,
    })
}

/// Reads the marker of `dir`, if there is one. A marker of a dbio that did not record file
/// identities (its `files` are bare names) is refused with [`BenchError::OldMarker`].
pub fn read_marker(dir: &Path) -> Result<Option<Marker>, BenchError> {
    let p = dir.join(MARKER);
    let bad = |p: PathBuf, e: serde_json::Error| {
        BenchError::io(
            "cannot parse the dbio marker",
            p,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    };
    match fs::read(&p) {
        Ok(b) => {
            let v: serde_json::Value = serde_json::from_slice(&b).map_err(|e| bad(p.clone(), e))?;
            let old = v["files"]
                .as_array()
                .is_some_and(|a| a.iter().any(|f| f.is_string()));
            if old {
                return Err(BenchError::OldMarker {
                    version: v["version"].as_str().unwrap_or("?").to_string(),
                    path: p,
                });
            }
            serde_json::from_value(v).map(Some).map_err(|e| bad(p, e))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(BenchError::io("cannot read", p, e)),
    }
}

fn write_marker(dir: &Path, m: &Marker) -> Result<(), BenchError> {
    let p = dir.join(MARKER);
    let body = serde_json::to_vec_pretty(m).expect("marker serialises");
    dbio_sys::atomic::write_atomic(&p, &body).map_err(|e| match e.step {
        dbio_sys::atomic::Step::Create => BenchError::DirNotWritable {
            path: dir.to_path_buf(),
            source: e.source,
        },
        _ => BenchError::io("cannot write", &p, e.source),
    })
}

/// Creates file `name` in `dir`: O_CREAT|O_EXCL|O_NOFOLLOW, so whatever is there already (a
/// file, a symlink, even a dangling one) makes it fail with [`BenchError::ForeignFile`].
fn create_new(dir: &Path, name: &str) -> Result<Owned, BenchError> {
    let p = dir.join(name);
    let f = dbio_sys::atomic::create_new(&p).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => BenchError::ForeignFile {
            path: p.clone(),
            marker: MARKER,
        },
        _ => BenchError::io("cannot create", &p, e),
    })?;
    let md = f
        .metadata()
        .map_err(|e| BenchError::io("cannot stat", &p, e))?;
    Ok(Owned::of(name, &md))
}

/// Makes sure each of `names` exists in `dir` as a file dbio created: a listed file must still
/// be the one dbio created ([`BenchError::Replaced`] if not); a missing one is created
/// (O_EXCL|O_NOFOLLOW) and recorded in the marker; an unlisted name that exists is refused
/// ([`BenchError::ForeignFile`]). Returns the updated marker.
pub fn claim(dir: &Path, names: &[String]) -> Result<Marker, BenchError> {
    let mut m = read_marker(dir)?.ok_or(BenchError::NoFileSet {
        path: dir.to_path_buf(),
        marker: MARKER,
    })?;
    let mut changed = false;
    let mut result = Ok(());
    for n in names {
        let p = dir.join(n);
        let listed = m.entry(n).cloned();
        match (fs::symlink_metadata(&p), listed) {
            (Ok(md), Some(o)) if o.is(&md) => continue,
            (Ok(_), Some(_)) => result = Err(BenchError::Replaced { path: p }),
            (Ok(_), None) => {
                result = Err(BenchError::ForeignFile {
                    path: p,
                    marker: MARKER,
                })
            }
            (Err(_), _) => match create_new(dir, n) {
                Ok(o) => {
                    m.record(o);
                    changed = true;
                    continue;
                }
                Err(e) => result = Err(e),
            },
        }
        break;
    }
    if changed {
        write_marker(dir, &m)?;
    }
    result.map(|_| m)
}

/// Opens file `name` of the set with `open` (which must not follow symlinks: add
/// O_NOFOLLOW) and checks that it is the file the marker lists: dbio writes only to files it
/// created.
pub fn open_owned(
    dir: &Path,
    marker: &Marker,
    name: &str,
    open: impl FnOnce(&Path) -> Result<File, BenchError>,
) -> Result<File, BenchError> {
    let p = dir.join(name);
    let lstat = fs::symlink_metadata(&p);
    let Some(o) = marker.entry(name) else {
        return Err(match lstat {
            Ok(_) => BenchError::ForeignFile {
                path: p,
                marker: MARKER,
            },
            Err(_) => BenchError::Incomplete { path: p },
        });
    };
    match lstat {
        Ok(md) if o.is(&md) => {}
        Ok(_) => return Err(BenchError::Replaced { path: p }),
        Err(_) => return Err(BenchError::Incomplete { path: p }),
    }
    let f = open(&p)?;
    // The name may have been swapped between the check above and the open: check what was
    // opened.
    let md = f
        .metadata()
        .map_err(|e| BenchError::io("cannot stat", &p, e))?;
    if !o.is(&md) {
        return Err(BenchError::Replaced { path: p });
    }
    Ok(f)
}

/// Bytes free for an unprivileged writer on the filesystem of `dir`; `u64::MAX` when the
/// filesystem keeps no block count (ramfs and friends report 0 blocks in total).
pub fn free_bytes(dir: &Path) -> Result<u64, BenchError> {
    let s = dbio_sys::os::statvfs(dir).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidInput {
            BenchError::InvalidSpec(format!("{} contains a NUL byte", dir.display()))
        } else {
            BenchError::io("cannot stat filesystem of", dir, e)
        }
    })?;
    if s.total_bytes == 0 {
        return Ok(u64::MAX);
    }
    Ok(s.avail_bytes)
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
    /// Filesystem type of the directory ([`crate::env::fs_type_name`]).
    pub fs: String,
    /// The filesystem keeps its files in memory (tmpfs, ramfs): the page cache is where they
    /// live, so nothing was dropped.
    pub in_memory: bool,
    /// Whether the files were dropped from the page cache afterwards.
    pub dropped_cache: bool,
    /// Bytes of the files still in the page cache after the drop (mincore), `None` when that
    /// could not be told or prepare was interrupted.
    pub resident_bytes: Option<u64>,
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
/// so the run starts cold, except on tmpfs and ramfs, whose files live in the page cache; then
/// counts what is still cached. Refuses when the set does not fit in the free space, and refuses to
/// touch a file with one of its names that dbio did not create. The files are created first
/// (empty, O_EXCL|O_NOFOLLOW) and recorded in the marker, then filled; files of an earlier set
/// are reused only while they are the very files dbio created. `progress` gets bytes written.
pub fn prepare(
    dir: &Path,
    file_num: u64,
    file_size: u64,
    seed: u64,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Prepared, BenchError> {
    prepare_for(dir, file_num, file_size, seed, None, stop, progress)
}

/// [`prepare`] for the sweep whose `--output-dir` is `sweep` (absolute): the marker names it
/// ([`Marker::prepared_by_sweep`]) from its first write, before any data file exists, so the
/// sweep resumed after a `kill -9` (even one in prepare) knows the set is its own to remove.
/// `None` (what [`prepare`] passes) makes the set nobody's sweep: the user's.
pub fn prepare_for(
    dir: &Path,
    file_num: u64,
    file_size: u64,
    seed: u64,
    sweep: Option<&Path>,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Prepared, BenchError> {
    let t0 = Instant::now();
    let created_dir = ensure_dir(dir)?;
    let fs = crate::env::fs_type_name(dir);
    let in_memory = crate::env::is_memory_fs(&fs);
    let old = read_marker(dir)?;
    let names: Vec<String> = (0..file_num).map(data_file).collect();
    let mut reclaim = 0u64;
    for n in &names {
        let p = dir.join(n);
        if let Ok(md) = fs::symlink_metadata(&p) {
            match old.as_ref().and_then(|m| m.entry(n)) {
                Some(o) if o.is(&md) => reclaim += md.len(),
                Some(_) => return Err(BenchError::Replaced { path: p }),
                None => {
                    return Err(BenchError::ForeignFile {
                        path: p,
                        marker: MARKER,
                    })
                }
            }
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
    marker.prepared_by_sweep = sweep.map(Path::to_path_buf);
    // The marker goes first (it says whether dbio created the directory), then each file is
    // created and recorded: the marker never lists a file dbio did not create.
    write_marker(dir, &marker)?;
    let mut created = Ok(());
    for n in &names {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if fs::symlink_metadata(dir.join(n)).is_ok() {
            continue; // ours, checked above
        }
        match create_new(dir, n) {
            Ok(o) => marker.record(o),
            Err(e) => {
                created = Err(e);
                break;
            }
        }
    }
    write_marker(dir, &marker)?;
    created?;

    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(file_num as usize)
        .max(1);
    let next = AtomicU64::new(0);
    let written = AtomicU64::new(0);
    let marker = &marker;
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
                        let n = &names[i as usize];
                        let p = dir.join(n);
                        let mut f = open_owned(dir, marker, n, |p| {
                            OpenOptions::new()
                                .write(true)
                                .custom_flags(libc::O_NOFOLLOW)
                                .open(p)
                                .map_err(|e| BenchError::io("cannot open", p, e))
                        })?;
                        f.set_len(0)
                            .map_err(|e| BenchError::io("cannot truncate", &p, e))?;
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
                        if !in_memory {
                            drop_cache(&f);
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("prepare worker panicked"))
    });
    result?;
    let elapsed = t0.elapsed();
    let interrupted = stop.load(Ordering::Relaxed);
    let resident_bytes = if interrupted {
        None
    } else {
        let paths: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
        crate::env::resident_bytes(&paths)
    };
    Ok(Prepared {
        dir: dir.to_path_buf(),
        files: file_num,
        file_size_bytes: file_size,
        bytes: written.load(Ordering::Relaxed),
        elapsed,
        fs,
        in_memory,
        dropped_cache: !in_memory,
        resident_bytes,
        interrupted,
    })
}

/// Drops a file's pages from the page cache (after they were written back).
pub fn drop_cache(f: &File) {
    dbio_sys::os::drop_cache(f);
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
    /// Files listed in the marker that are not the files dbio created any more (replaced since,
    /// or a link now): left in place.
    pub replaced: Vec<PathBuf>,
    /// Whether the directory was removed (dbio created it and it was empty).
    pub removed_dir: bool,
    /// Entries left in the directory (files dbio did not create, including `replaced`).
    pub foreign_left: u64,
}

/// Removes the files the marker lists that are still the files dbio created (same device,
/// inode and birth time), the marker, and the directory if dbio created it and nothing else
/// is in it. A listed name that now holds another file is left in place and reported in
/// [`Cleaned::replaced`].
pub fn cleanup(dir: &Path) -> Result<Cleaned, BenchError> {
    let marker = read_marker(dir)?.ok_or(BenchError::NoFileSet {
        path: dir.to_path_buf(),
        marker: MARKER,
    })?;
    let mut out = Cleaned::default();
    for o in &marker.files {
        // Names come from our own marker, but never follow a path out of the directory.
        if o.name.contains('/') || o.name == ".." || o.name == "." {
            continue;
        }
        let p = dir.join(&o.name);
        match fs::symlink_metadata(&p) {
            Ok(md) if o.is(&md) => {
                fs::remove_file(&p).map_err(|e| BenchError::io("cannot remove", &p, e))?;
                out.bytes += md.len();
                out.removed.push(p);
            }
            Ok(_) => out.replaced.push(p),
            Err(_) => out.missing += 1,
        }
    }
    let mp = dir.join(MARKER);
    fs::remove_file(&mp).map_err(|e| BenchError::io("cannot remove", &mp, e))?;
    let left = fs::read_dir(dir)
        .map_err(|e| BenchError::io("cannot list", dir, e))?
        .count() as u64;
    out.foreign_left = left;
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
        let m = claim(&dir, &[log_file(0)]).unwrap();
        assert!(m.entry(&log_file(0)).is_some());
        fs::write(dir.join(log_file(0)), b"log").unwrap();
        let c = cleanup(&dir).unwrap();
        assert_eq!(c.removed.len(), 2);
        assert!(c.removed_dir);
        assert!(!dir.exists());
    }

    #[test]
    fn a_file_put_under_a_listed_name_after_an_interrupted_prepare_survives_cleanup() {
        let tmp = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(true);
        let p = prepare(tmp.path(), 32, 4096, 1, &stop, &|_| {}).unwrap();
        assert!(p.interrupted);
        fs::write(tmp.path().join("dbio-file.20"), b"theirs").unwrap();
        let c = cleanup(tmp.path()).unwrap();
        assert_eq!(
            fs::read(tmp.path().join("dbio-file.20")).unwrap(),
            b"theirs"
        );
        assert_eq!(c.foreign_left, 1);
        assert!(!tmp.path().join(MARKER).exists());
    }

    #[test]
    fn a_replaced_file_is_neither_opened_nor_deleted() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let stop = AtomicBool::new(false);
        prepare(d, 2, 4096, 1, &stop, &|_| {}).unwrap();
        let m = read_marker(d).unwrap().unwrap();
        // A new file renamed over dbio-file.1: another inode for certain.
        fs::write(d.join("theirs"), b"theirs").unwrap();
        fs::rename(d.join("theirs"), d.join("dbio-file.1")).unwrap();
        let open = |p: &Path| File::open(p).map_err(|e| BenchError::io("cannot open", p, e));
        assert!(open_owned(d, &m, "dbio-file.0", open).is_ok());
        let e = open_owned(d, &m, "dbio-file.1", open).unwrap_err();
        assert!(matches!(e, BenchError::Replaced { .. }), "{e}");
        // Prepare again refuses it too.
        let e = prepare(d, 2, 4096, 1, &stop, &|_| {}).unwrap_err();
        assert!(matches!(e, BenchError::Replaced { .. }), "{e}");
        let c = cleanup(d).unwrap();
        assert_eq!(c.removed, [d.join("dbio-file.0")]);
        assert_eq!(c.replaced, [d.join("dbio-file.1")]);
        assert_eq!(fs::read(d.join("dbio-file.1")).unwrap(), b"theirs");
    }

    #[test]
    fn claim_never_follows_a_symlink_and_leaves_unlisted_files() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("set");
        let stop = AtomicBool::new(false);
        prepare(&d, 0, 4096, 1, &stop, &|_| {}).unwrap();
        let target = tmp.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, d.join(log_file(0))).unwrap();
        let e = claim(&d, &[log_file(0)]).unwrap_err();
        assert!(matches!(e, BenchError::ForeignFile { .. }), "{e}");
        assert!(!target.exists());
        // A listed log that became a symlink is refused as replaced.
        claim(&d, &[log_file(1)]).unwrap();
        fs::remove_file(d.join(log_file(1))).unwrap();
        std::os::unix::fs::symlink(&target, d.join(log_file(1))).unwrap();
        let e = claim(&d, &[log_file(1)]).unwrap_err();
        assert!(matches!(e, BenchError::Replaced { .. }), "{e}");
        assert!(!target.exists());
    }

    #[test]
    fn a_foreign_marker_temporary_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().join(format!("{MARKER}.tmp"));
        fs::write(&t, b"precious").unwrap();
        let stop = AtomicBool::new(false);
        prepare(tmp.path(), 1, 4096, 1, &stop, &|_| {}).unwrap();
        cleanup(tmp.path()).unwrap();
        assert_eq!(fs::read(&t).unwrap(), b"precious");
    }

    #[test]
    fn an_old_marker_without_identities_is_refused_with_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(
            tmp.path().join(MARKER),
            r#"{"created_by":"dbio","version":"0.0.9","created_dir":false,
               "file_size_bytes":4096,"file_num":1,"files":["dbio-file.0"]}"#,
        )
        .unwrap();
        fs::write(tmp.path().join("dbio-file.0"), b"?").unwrap();
        let e = cleanup(tmp.path()).unwrap_err();
        assert!(matches!(e, BenchError::OldMarker { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("0.0.9") && msg.contains("by hand"), "{msg}");
        assert!(tmp.path().join("dbio-file.0").exists());
    }

    #[test]
    fn prepare_again_reuses_its_files_and_recreates_a_missing_one() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let stop = AtomicBool::new(false);
        prepare(d, 3, 4096, 1, &stop, &|_| {}).unwrap();
        let first = read_marker(d).unwrap().unwrap();
        fs::remove_file(d.join("dbio-file.1")).unwrap();
        prepare(d, 3, 8192, 2, &stop, &|_| {}).unwrap();
        let m = read_marker(d).unwrap().unwrap();
        assert_eq!(m.files.len(), 3);
        assert_eq!(m.entry("dbio-file.0"), first.entry("dbio-file.0"));
        assert_eq!(m.entry("dbio-file.2"), first.entry("dbio-file.2"));
        let md = fs::symlink_metadata(d.join("dbio-file.1")).unwrap();
        assert!(m.entry("dbio-file.1").unwrap().is(&md));
        assert_eq!(md.len(), 8192);
        assert_eq!(cleanup(d).unwrap().removed.len(), 3);
    }

    #[test]
    fn a_set_is_complete_only_with_every_file_whole_and_ours() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let stop = AtomicBool::new(false);
        prepare(d, 3, 8192, 1, &stop, &|_| {}).unwrap();
        let m = read_marker(d).unwrap().unwrap();
        assert_eq!((m.file_num, m.file_size_bytes), (3, 8192));
        assert!(m.is_complete(d));
        // short (an interrupted prepare), missing, or replaced: not complete
        let f = OpenOptions::new()
            .write(true)
            .open(d.join("dbio-file.1"))
            .unwrap();
        f.set_len(4096).unwrap();
        assert!(!m.is_complete(d));
        // grown back to its size, it has a hole where the data was cut: still not complete
        f.set_len(8192).unwrap();
        assert!(!m.is_complete(d));
        prepare(d, 3, 8192, 1, &stop, &|_| {}).unwrap();
        assert!(m.is_complete(d));
        fs::remove_file(d.join("dbio-file.2")).unwrap();
        assert!(!m.is_complete(d));
        let stopped = AtomicBool::new(true);
        let p = prepare(&d.join("new"), 4, 8192, 1, &stopped, &|_| {}).unwrap();
        assert!(p.interrupted);
        let m = read_marker(&d.join("new")).unwrap().unwrap();
        assert!(!m.is_complete(&d.join("new")));
    }

    #[test]
    fn a_truncated_or_holed_file_is_not_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let stop = AtomicBool::new(false);
        prepare(d, 3, 64 * 1024, 1, &stop, &|_| {}).unwrap();
        let m = read_marker(d).unwrap().unwrap();
        let open = |n: &str| File::open(d.join(n)).unwrap();
        check_whole(&d.join("dbio-file.0"), &open("dbio-file.0"), 64 * 1024).unwrap();
        // Truncated (`truncate -s 16K`): short.
        open_rw(&d.join("dbio-file.1")).set_len(16 * 1024).unwrap();
        let e = check_whole(&d.join("dbio-file.1"), &open("dbio-file.1"), 64 * 1024).unwrap_err();
        match &e {
            BenchError::NotWhole { size, expected, .. } => {
                assert_eq!((*size, *expected), (16 * 1024, 64 * 1024))
            }
            e => panic!("{e}"),
        }
        assert!(e.is_usage());
        // Truncated and grown back to its size (`truncate -s 16K; truncate -s 64K`): the size
        // is right, but the last 48 KiB are a hole.
        open_rw(&d.join("dbio-file.2")).set_len(16 * 1024).unwrap();
        open_rw(&d.join("dbio-file.2")).set_len(64 * 1024).unwrap();
        let e = check_whole(&d.join("dbio-file.2"), &open("dbio-file.2"), 64 * 1024).unwrap_err();
        match &e {
            BenchError::NotWhole {
                size,
                hole,
                allocated,
                ..
            } => {
                assert_eq!((*size, *hole), (64 * 1024, Some(16 * 1024)), "{e}");
                assert!(*allocated < 64 * 1024, "{e}");
            }
            e => panic!("{e}"),
        }
        let msg = e.to_string();
        assert!(
            msg.contains("dbio-file.2")
                && msg.contains("a hole at offset 16384")
                && msg.contains("65536 bytes")
                && msg.contains("dbio bench prepare"),
            "{msg}"
        );
        // Neither counts as a complete set, so plain `dbio bench` prepares it again.
        assert!(!m.is_complete(d));
        prepare(d, 3, 64 * 1024, 1, &stop, &|_| {}).unwrap();
        assert!(m.is_complete(d));
    }

    #[test]
    fn the_marker_names_the_sweep_that_prepared_the_set_until_bench_prepares_it() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let stop = AtomicBool::new(true); // interrupted at once: the marker is written first
        let sweep = Path::new("/srv/sweeps/a");
        prepare_for(d, 2, 4096, 1, Some(sweep), &stop, &|_| {}).unwrap();
        let m = read_marker(d).unwrap().unwrap();
        assert_eq!(m.prepared_by_sweep.as_deref(), Some(sweep));
        let stop = AtomicBool::new(false);
        prepare(d, 2, 4096, 1, &stop, &|_| {}).unwrap();
        let m = read_marker(d).unwrap().unwrap();
        assert_eq!(
            m.prepared_by_sweep, None,
            "bench prepare makes it the user's"
        );
    }

    fn open_rw(p: &Path) -> File {
        OpenOptions::new().write(true).open(p).unwrap()
    }

    #[test]
    fn identity_is_inode_and_birth_time_or_inode_and_device() {
        let o = |dev, ino, btime_ns| Owned {
            name: "dbio-file.0".into(),
            dev,
            ino,
            btime_ns,
        };
        let rec = o(1, 10, Some(5));
        assert!(rec.same(&o(1, 10, Some(5))));
        assert!(rec.same(&o(2, 10, Some(5))), "device renumbered, same file");
        assert!(!rec.same(&o(1, 11, Some(5))));
        assert!(
            !rec.same(&o(1, 10, Some(6))),
            "inode number reused by a new file"
        );
        let no_btime = o(1, 10, None);
        assert!(no_btime.same(&o(1, 10, None)));
        assert!(no_btime.same(&o(1, 10, Some(5))));
        assert!(!no_btime.same(&o(2, 10, None)));
        assert!(!rec.same(&o(2, 10, None)));
    }
}
