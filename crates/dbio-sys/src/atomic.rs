//! Whole-file writes that a reader never sees half done and that never follow a planted
//! symlink: the bytes go to a new temporary file in the target's directory, created with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` under an unpredictable name (`.NAME.XXXXXXXXXX.dbio-tmp`), are
//! flushed to disk, and the temporary is renamed over the target. On every error the
//! temporary is removed, so a failed write (a full disk, say) leaves the target as it was and
//! no stray file behind.

use std::fs::{File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The step of [`write_atomic`] that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Creating the temporary file in the target's directory.
    Create,
    /// Writing the bytes into the temporary file.
    Write,
    /// Flushing the temporary file to disk (fsync).
    Sync,
    /// Renaming the temporary file over the target.
    Rename,
}

/// A failed [`write_atomic`]: the target is unchanged and the temporary file is gone.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {}", match .step {
    Step::Create => "cannot create a temporary file in its directory",
    Step::Write => "writing the temporary file failed",
    Step::Sync => "flushing the temporary file to disk failed",
    Step::Rename => "renaming the temporary file into place failed",
})]
pub struct WriteError {
    /// The file that was to be written.
    pub path: PathBuf,
    /// What failed.
    pub step: Step,
    /// The OS error.
    #[source]
    pub source: std::io::Error,
}

/// A file being written in place of `path`: a temporary in `path`'s directory (see the module
/// documentation) that [`AtomicFile::commit`] flushes and renames over `path`. Dropped without
/// a commit (an error, a panic), the temporary is removed and `path` is left as it was. For
/// output written as it is produced (a stream of hits); [`write_atomic`] writes a whole buffer.
pub struct AtomicFile {
    target: Target,
    path: PathBuf,
}

/// Where the bytes go: a temporary renamed over the path, or, for a path that names a
/// character device, a FIFO or a socket (`-o /dev/null`, `-o /dev/stdout`, `-o >(gzip > f)`),
/// that file itself: renaming a temporary over `/dev/null` would replace the device with a
/// regular file.
enum Target {
    Temp(tempfile::NamedTempFile),
    Special(File),
}

/// `path` (symlinks followed) when it names a character device, a FIFO or a socket: opened for
/// writing. `None` for anything else (a regular file, nothing); a block device is an error
/// (a result written onto a disk would overwrite what is on it).
pub fn open_special(path: &Path) -> std::io::Result<Option<File>> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    let t = meta.file_type();
    if t.is_block_device() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is a block device: dbio does not write a result onto a disk (give a file name)",
        ));
    }
    if t.is_char_device() || t.is_fifo() || t.is_socket() {
        return OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)
            .map(Some);
    }
    Ok(None)
}

impl AtomicFile {
    /// Creates the temporary for `path`. A new file gets mode 0666 less the umask, as
    /// `open(2)` would give it.
    pub fn create(path: &Path) -> Result<AtomicFile, WriteError> {
        let err = |source| WriteError {
            path: path.to_path_buf(),
            step: Step::Create,
            source,
        };
        if let Some(f) = open_special(path).map_err(err)? {
            return Ok(AtomicFile {
                target: Target::Special(f),
                path: path.to_path_buf(),
            });
        }
        let name = path.file_name().ok_or_else(|| {
            err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the path names no file",
            ))
        })?;
        let prefix = format!(".{}.", name.to_string_lossy());
        let tmp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".dbio-tmp")
            .rand_bytes(10)
            .permissions(Permissions::from_mode(0o666))
            .make_in(dir_of(path), |p| {
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o666)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                    .open(p)
            })
            .map_err(err)?;
        Ok(AtomicFile {
            target: Target::Temp(tmp),
            path: path.to_path_buf(),
        })
    }

    /// The file the temporary will replace.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes what was written so far to disk (fsync), without renaming: a filesystem that
    /// accepts writes into its cache and reports a full disk only then (NFS) reports it here.
    pub fn sync(&self) -> std::io::Result<()> {
        match &self.target {
            Target::Temp(t) => t.as_file().sync_all(),
            // A device or a pipe has nothing to flush to disk.
            Target::Special(_) => Ok(()),
        }
    }

    /// Flushes the temporary to disk and renames it over the target; the target may be a
    /// symlink, which is replaced, not followed. The directory is flushed too, so the rename
    /// survives a crash. On error the temporary is removed.
    pub fn commit(self) -> Result<(), WriteError> {
        let AtomicFile { target, path } = self;
        let err = |step, source| WriteError {
            path: path.clone(),
            step,
            source,
        };
        let tmp = match target {
            Target::Temp(t) => t,
            Target::Special(mut f) => return f.flush().map_err(|e| err(Step::Write, e)),
        };
        tmp.as_file().sync_all().map_err(|e| err(Step::Sync, e))?;
        tmp.persist(&path).map_err(|e| err(Step::Rename, e.error))?;
        // Best effort: the data is safe in the file already; a directory that cannot be opened
        // or synced (some FUSE filesystems) does not make the write fail.
        if let Ok(d) = File::open(dir_of(&path)) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.target {
            Target::Temp(t) => t.as_file_mut().write(buf),
            Target::Special(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.target {
            Target::Temp(t) => t.as_file_mut().flush(),
            Target::Special(f) => f.flush(),
        }
    }
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Writes `bytes` to `path` as a whole (see the module documentation and [`AtomicFile`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes).map_err(|source| WriteError {
        path: path.to_path_buf(),
        step: Step::Write,
        source,
    })?;
    f.commit()
}

/// Removes the temporaries that writes of `path` left when their process was killed between
/// creating and renaming them (`.NAME.XXXXXXXXXX.dbio-tmp`, ten letters or digits, in `path`'s
/// directory): regular files only, never a symlink or anything of another name. Call it only
/// while no other process writes `path` (a job holding its lock). Returns how many went; a
/// missing directory has none.
pub fn remove_stale_temporaries(path: &Path) -> std::io::Result<usize> {
    let Some(name) = path.file_name() else {
        return Ok(0);
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let entries = match std::fs::read_dir(dir_of(path)) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        let file = entry.file_name();
        let Some(f) = file.to_str() else { continue };
        let Some(middle) = f
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".dbio-tmp"))
        else {
            continue;
        };
        if middle.len() != 10 || !middle.bytes().all(|b| b.is_ascii_alphanumeric()) {
            continue;
        }
        if !std::fs::symlink_metadata(entry.path())?
            .file_type()
            .is_file()
        {
            continue;
        }
        std::fs::remove_file(entry.path())?;
        removed += 1;
    }
    Ok(removed)
}

/// Creates a new file at `path` for writing (and reading back), `O_CREAT|O_EXCL|O_NOFOLLOW`: whatever is there
/// already (a file, a symlink, even a dangling one) makes it fail with `AlreadyExists`, so
/// nothing that dbio did not create is truncated, written through or followed.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_device_or_a_fifo_is_written_into_never_replaced() {
        // `-o /dev/null` renamed a temporary over the device node: /dev/null became a regular
        // file holding the result, and every later `> /dev/null` of the machine wrote into it.
        let t = tempfile::tempdir().unwrap();
        let null = t.path().join("null");
        let c = std::ffi::CString::new(null.to_str().unwrap()).unwrap();
        // SAFETY: mknod on a NUL-terminated path in our own temporary directory.
        let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        if made == 0 {
            write_atomic(&null, b"result").unwrap();
            let m = std::fs::symlink_metadata(&null).unwrap();
            assert!(
                std::os::unix::fs::FileTypeExt::is_char_device(&m.file_type()),
                "the device node was replaced"
            );
        } else {
            // Not root (mknod needs CAP_MKNOD): the machine's own /dev/null, through a link.
            let link = t.path().join("to-null");
            std::os::unix::fs::symlink("/dev/null", &link).unwrap();
            write_atomic(&link, b"result").unwrap();
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert!(std::os::unix::fs::FileTypeExt::is_char_device(
                &std::fs::metadata("/dev/null").unwrap().file_type()
            ));
        }
        // A FIFO: the reader gets the bytes, the FIFO stays.
        let fifo = t.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path in our own temporary directory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let f2 = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(f2).unwrap());
        write_atomic(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(
            &std::fs::symlink_metadata(&fifo).unwrap().file_type()
        ));
        assert_eq!(entries(t.path()).len(), 2);
    }

    #[test]
    fn stale_temporaries_of_one_file_are_removed_and_nothing_else() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let p = d.join("s.json");
        write_atomic(&p, b"{}").unwrap();
        for f in [
            ".s.json.Ab3dE6gH9k.dbio-tmp",
            ".s.json.0123456789.dbio-tmp",
            ".s.json.short.dbio-tmp",
            ".other.json.Ab3dE6gH9k.dbio-tmp",
            "s.json.Ab3dE6gH9k.dbio-tmp",
            ".s.json.Ab3dE6gH9k.dbio-tmp.keep",
        ] {
            std::fs::write(d.join(f), b"x").unwrap();
        }
        let victim = d.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.join(".s.json.SyMlInK123.dbio-tmp")).unwrap();
        assert_eq!(remove_stale_temporaries(&p).unwrap(), 2);
        assert_eq!(
            entries(d),
            [
                ".other.json.Ab3dE6gH9k.dbio-tmp",
                ".s.json.Ab3dE6gH9k.dbio-tmp.keep",
                ".s.json.SyMlInK123.dbio-tmp",
                ".s.json.short.dbio-tmp",
                "s.json",
                "s.json.Ab3dE6gH9k.dbio-tmp",
                "victim"
            ]
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(remove_stale_temporaries(&d.join("none/x.json")).unwrap(), 0);
    }

    #[test]
    fn writes_the_whole_file_and_leaves_no_temporary() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("res.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two, longer").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two, longer");
        assert_eq!(entries(t.path()), ["res.json"]);
    }

    #[test]
    fn a_symlink_at_the_old_temporary_name_is_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let d = t.path().join("c");
        std::fs::create_dir(&d).unwrap();
        std::os::unix::fs::symlink(&victim, d.join(".res.json.dbio-tmp")).unwrap();
        write_atomic(&d.join("res.json"), b"result").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(d.join("res.json")).unwrap(), b"result");
        assert!(std::fs::symlink_metadata(d.join(".res.json.dbio-tmp"))
            .unwrap()
            .is_symlink());
    }

    #[test]
    fn a_symlink_target_is_replaced_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let p = t.path().join("out");
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        write_atomic(&p, b"result").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&p).unwrap().is_file());
    }

    #[test]
    fn new_files_get_the_usual_mode() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        write_atomic(&p, b"x").unwrap();
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let mask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
            .unwrap();
        let mode = std::fs::metadata(&p).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o666 & !mask);
    }

    #[test]
    fn a_missing_directory_is_named_and_nothing_is_left() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("nope").join("res.json");
        let e = write_atomic(&p, b"x").unwrap_err();
        assert_eq!(e.step, Step::Create);
        assert!(e.to_string().contains("nope/res.json"), "{e}");
        assert_eq!(entries(t.path()), Vec::<String>::new());
    }
}
