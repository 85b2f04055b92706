//! InnoDB on-disk structures for recovery: page format, checksums (MariaDB full_crc32 first,
//! then crc32, innodb, none), a page scanner that finds pages of any size at any 512-byte
//! step of a device or image, value encoders that turn typed values into the bytes InnoDB
//! stores, a page-aware binary grep, the SYS_TABLES/SYS_INDEXES dictionary reader, and the
//! drivers of `innodb pages` ([`recover`]: pages to page files and a manifest) and
//! `innodb grep` ([`search`]: hits located, filtered and streamed to a sink).
//!
//! This crate never prints and never exits: it returns typed results and [`Error`]s.
#![deny(missing_docs)]

pub mod checksum;
pub mod crypt;
pub mod dict;
pub mod encode;
pub mod grep;
pub mod io;
pub mod page;
pub mod recover;
pub mod rows;
pub mod scan;
pub mod sdi;
pub mod search;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A typed value cannot be turned into stored bytes.
    #[error("cannot encode {value:?}: {reason}")]
    Encode {
        /// The value given.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// A hex pattern is malformed.
    #[error("bad hex pattern {pattern:?}: {reason}")]
    Pattern {
        /// The pattern given.
        pattern: String,
        /// What is wrong.
        reason: String,
    },
    /// A time zone is unknown or malformed.
    #[error("time zone {tz:?}: {reason}")]
    TimeZone {
        /// The zone given.
        tz: String,
        /// What is wrong and what to give instead.
        reason: String,
    },
    /// An option value is out of range: the message names the option and the values allowed.
    #[error("{0}")]
    Option(String),
    /// Reading a source failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
