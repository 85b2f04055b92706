//! Errors of the benchmark engine. Each names the file, directory, device or value at fault and
//! says what to do; `is_usage` tells the binary which are the user's input (exit code 2).

use std::path::PathBuf;
use thiserror::Error;

/// Something that stops a benchmark phase.
#[derive(Debug, Error)]
pub enum BenchError {
    /// A spec value is out of range.
    #[error("{0}")]
    InvalidSpec(String),
    /// The open-file limit cannot be read or raised.
    #[error("cannot read the open-file limit (getrlimit RLIMIT_NOFILE): {0}")]
    OpenFileLimit(std::io::Error),
    /// The target directory does not exist and cannot be created.
    #[error("directory {path} does not exist (nor its parent): create it or pick another --dir")]
    DirMissing {
        /// The directory.
        path: PathBuf,
    },
    /// The target path exists but is not a directory.
    #[error(
        "{path} is not a directory: --dir needs a directory (use --device for a block device)"
    )]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// The directory cannot be written.
    #[error("cannot write in {path}: {source}; pick a writable --dir")]
    DirNotWritable {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file set does not fit.
    #[error("the file set needs {need} bytes but only {avail} are free on the filesystem of {path}; lower --file-total-size or free space")]
    NotEnoughSpace {
        /// The directory.
        path: PathBuf,
        /// Bytes needed.
        need: u64,
        /// Bytes free.
        avail: u64,
    },
    /// The filesystem refused O_DIRECT.
    #[error("the {fs} filesystem of {path} refuses O_DIRECT (EINVAL); run without --direct (add --buffered) or pick a --dir on another filesystem")]
    DirectUnsupported {
        /// The file.
        path: PathBuf,
        /// Filesystem type.
        fs: String,
    },
    /// An O_DIRECT I/O was refused for its alignment.
    #[error("O_DIRECT refused a {block}-byte I/O at offset {offset} of {path} (EINVAL): {hint}")]
    DirectAlignment {
        /// The file or device.
        path: PathBuf,
        /// Block size.
        block: u64,
        /// Offset tried.
        offset: u64,
        /// What to change.
        hint: String,
    },
    /// `--device` is not a block device.
    #[error("{path} is not a block device: --device takes a block device such as /dev/sdb (use --dir for a directory)")]
    NotBlockDevice {
        /// The path.
        path: PathBuf,
    },
    /// A write mode on a device without the explicit flag.
    #[error("mode {mode} writes to {path} and would destroy its data: add --allow-device-writes if that is what you want")]
    DeviceWritesNotAllowed {
        /// The device.
        path: PathBuf,
        /// The mode.
        mode: String,
    },
    /// A write mode on a device that is in use.
    #[error("refusing to write to {path}: {what}")]
    DeviceInUse {
        /// The device.
        path: PathBuf,
        /// What in its stack is in use, with the chain to it and what to do.
        what: String,
    },
    /// A file with one of dbio's names exists but dbio did not create it.
    #[error("{path} exists but dbio did not create it (no {marker} lists it); dbio will not overwrite or delete it: move it or pick another --dir")]
    ForeignFile {
        /// The file.
        path: PathBuf,
        /// The marker file name.
        marker: &'static str,
    },
    /// A file the marker lists is no longer the file dbio created under that name (its device,
    /// inode or birth time differ, or it is not a regular file now).
    #[error("{path} is not the file dbio created under that name (it was replaced, or is a link now); dbio will not write to or delete it: move it away, then run `dbio bench cleanup` or prepare again")]
    Replaced {
        /// The file.
        path: PathBuf,
    },
    /// A file of the set is missing (an interrupted prepare, or removed by hand).
    #[error("{path} is missing from the dbio file set (an interrupted prepare, or removed since): run `dbio bench prepare` again with the same --dir")]
    Incomplete {
        /// The file.
        path: PathBuf,
    },
    /// A data file of the set is not the size the marker records, or has holes: it was
    /// truncated or punched since prepare wrote it.
    #[error("{path} is {size} bytes with {allocated} bytes allocated on disk{}, but the file set was prepared with files of {expected} bytes, every byte written (see .dbio-fileset.json beside it): it was truncated or had holes punched in it since, so reads would fail mid-run and writes would fill a sparse file; prepare the set again (`dbio bench prepare` with the same --dir, or plain `dbio bench`, which completes it) or remove it (`dbio bench cleanup` with the same --dir)", match .hole { Some(h) => format!(" and a hole at offset {h}"), None => String::new() })]
    NotWhole {
        /// The file.
        path: PathBuf,
        /// Its size now.
        size: u64,
        /// Bytes allocated to it on disk (`st_blocks` x 512).
        allocated: u64,
        /// The offset of its first hole, if it has one.
        hole: Option<u64>,
        /// The size each file of the set was prepared with.
        expected: u64,
    },
    /// A marker written before dbio recorded the identity of the files it creates.
    #[error("{path} was written by dbio {version}, which did not record the identity (device, inode) of the files it created, so dbio cannot tell them from files put there since and will not delete or reuse them: remove the files it lists and the marker by hand, then run `dbio bench prepare` again")]
    OldMarker {
        /// The marker file.
        path: PathBuf,
        /// The dbio version that wrote it.
        version: String,
    },
    /// `run` or `cleanup` found no file set.
    #[error("no dbio file set in {path} (no {marker}): run `dbio bench prepare` with the same --dir first")]
    NoFileSet {
        /// The directory.
        path: PathBuf,
        /// The marker file name.
        marker: &'static str,
    },
    /// The prepared file set does not match the spec.
    #[error("the file set in {path} was prepared with {found}, this run asks for {want}: prepare again with the same --file-num and --file-total-size")]
    FileSetMismatch {
        /// The directory.
        path: PathBuf,
        /// What is there.
        found: String,
        /// What the spec wants.
        want: String,
    },
    /// An I/O error on a file or device.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or device.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A thread of the run could not be created (the workers already started were stopped).
    #[error("cannot start {what}: {source}; the process, its user or its cgroup is at its limit of tasks (pids.max, ulimit -u, kernel.threads-max): lower --threads or raise the limit")]
    ThreadStart {
        /// Which thread.
        what: String,
        /// Why.
        source: std::io::Error,
    },
    /// A run limited by `--time` ended before any I/O was done.
    #[error("the run measured no I/O: --time {time} ended before any I/O was done; give a longer --time (e.g. 1s)")]
    NothingMeasured {
        /// The `--time` given, as people write it.
        time: String,
    },
    /// A step of a sweep failed on the system's side (a result file, a scheduler switch).
    #[error("{0}")]
    Failed(String),
    /// A worker stopped on an I/O error.
    #[error("worker {thread} stopped: {msg}")]
    Worker {
        /// Worker index.
        thread: u32,
        /// What failed.
        msg: String,
    },
}

impl BenchError {
    /// True when the user's input is at fault (exit code 2), false for runtime failures.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            BenchError::InvalidSpec(_)
                | BenchError::DirMissing { .. }
                | BenchError::NotADirectory { .. }
                | BenchError::DirNotWritable { .. }
                | BenchError::NotEnoughSpace { .. }
                | BenchError::DirectUnsupported { .. }
                | BenchError::DirectAlignment { .. }
                | BenchError::NotBlockDevice { .. }
                | BenchError::DeviceWritesNotAllowed { .. }
                | BenchError::DeviceInUse { .. }
                | BenchError::ForeignFile { .. }
                | BenchError::Replaced { .. }
                | BenchError::Incomplete { .. }
                | BenchError::NotWhole { .. }
                | BenchError::OldMarker { .. }
                | BenchError::NoFileSet { .. }
                | BenchError::FileSetMismatch { .. }
        )
    }

    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BenchError::Io {
            what,
            path: path.into(),
            source,
        }
    }
}
