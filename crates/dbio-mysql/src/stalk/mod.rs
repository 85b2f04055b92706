//! `dbio mysql stalk`: watch a server with a cheap check every `--interval`, keep the last
//! `--pre` seconds of samples in a bounded ring ([`ring`]), and when the trigger
//! ([`trigger`]) holds for `--cycles` consecutive checks, write the lead-up and collect for
//! `--collect` seconds into `DIR/<prefix>/` in pt-stalk's file formats ([`format`]), indexed by
//! `capture.json`; [`report`] reads a capture (dbio's or pt-stalk's) back and ranks who did it
//! ([`attrib`]). [`run`] is the loop, read-only on the server (SELECT and SHOW only).

pub mod attrib;
pub mod digests;
pub mod format;
pub mod report;
pub mod ring;
pub mod run;

pub mod trigger;

use std::path::PathBuf;

/// What can go wrong in the stalker or reading a capture.
#[derive(Debug, thiserror::Error)]
pub enum StalkError {
    /// A file or directory.
    #[error("{path}: {what}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// capture.json does not read.
    #[error("{path}: not a dbio capture index: {message}")]
    CaptureJson {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The directory holds no capture.
    #[error("{0}: no capture here (neither a capture.json nor pt-stalk's PREFIX-processlist / PREFIX-diskstats files)")]
    NotACapture(PathBuf),
    /// Another stalker holds the directory.
    #[error(
        "{dir}: another stalker holds its lock {lock} ({holder}): one stalker per --dest directory"
    )]
    Locked {
        /// The --dest directory.
        dir: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// Who holds it, as its file says.
        holder: String,
    },
    /// The trigger does not parse.
    #[error(transparent)]
    Trigger(#[from] trigger::ParseError),
    /// The server.
    #[error(transparent)]
    Mysql(#[from] crate::Error),
}
