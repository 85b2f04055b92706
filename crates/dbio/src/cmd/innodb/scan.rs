//! The flags and helpers every `dbio innodb` subcommand that reads sources shares: how
//! sources are opened and scanned, the SIGBUS guard of a mapped source, the exit code of a run
//! a signal may have stopped. A leaf: `innodb.rs` and each subcommand beside it import it, it
//! imports none of them.

use crate::cli::usage;
use dbio_innodb::crypt::Keys;
use dbio_innodb::recover::Source;
use dbio_innodb::scan::ScanOptions;
use std::path::Path;

/// How sources are scanned for pages (every subcommand that reads sources).
#[derive(clap::Args, Debug)]
pub(super) struct ScanFlags {
    /// Candidate page starts are multiples of this many bytes.
    #[arg(long, default_value = "512", value_parser = crate::cli::parse_size_arg)]
    step: u64,
    /// Page size (4k, 8k, 16k, 32k, 64k); default: auto (FSP flags of page 0, else checksums).
    #[arg(long, value_parser = crate::cli::parse_size_arg)]
    page_size: Option<u64>,
    /// Worker threads (default: all CPUs).
    #[arg(long)]
    threads: Option<usize>,
    /// Read regular files with pread instead of a read-only memory map (block devices, and
    /// files some process has open for writing, are always read with pread). Use it when
    /// another process may truncate a file while it is read: a mapped read of a truncated
    /// file stops dbio with an error.
    #[arg(long)]
    pub(super) no_mmap: bool,
}

impl ScanFlags {
    pub(super) fn options(&self) -> anyhow::Result<ScanOptions> {
        ScanOptions::new(self.step, self.page_size).map_err(|e| usage(e.to_string()))
    }

    pub(super) fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max(1)
    }

    pub(super) fn open<P: AsRef<Path>>(&self, paths: &[P]) -> anyhow::Result<Vec<Source>> {
        let open = |p: &P| Source::open(p.as_ref(), self.no_mmap).map_err(anyhow::Error::from);
        paths.iter().map(open).collect()
    }
}

/// Keys of encrypted tablespaces (`innodb pages`, `innodb rows`).
#[derive(clap::Args, Debug)]
pub(super) struct KeyFlags {
    /// A MySQL 8 / Percona Server keyring_file keyring (the file of keyring_file_data): its
    /// master keys decrypt the tablespace keys on page 0, which decrypt the pages.
    #[arg(long, value_name = "FILE")]
    keyring: Option<std::path::PathBuf>,
    /// A MariaDB file_key_management key file (`id;hexkey` lines): decrypts tablespaces made
    /// with ENCRYPTED=YES or innodb_encrypt_tables (AES_CBC or AES_CTR, told apart per page).
    #[arg(long, value_name = "FILE")]
    key_file: Option<std::path::PathBuf>,
    /// The password of an encrypted --key-file (MariaDB's file_key_management_filekey; OpenSSL
    /// `enc -aes-256-cbc -md sha1` format). `FILE:PATH` reads it from the first line of PATH.
    #[arg(long, value_name = "PASSWORD", requires = "key_file")]
    key_file_key: Option<String>,
}

impl KeyFlags {
    /// The keys given, read and checked (a bad file is an error naming it, exit 1).
    pub(super) fn keys(&self) -> anyhow::Result<Option<std::sync::Arc<Keys>>> {
        if self.keyring.is_none() && self.key_file.is_none() {
            return Ok(None);
        }
        let mut keys = Keys::default();
        if let Some(p) = &self.keyring {
            keys.read_keyring(p)?;
        }
        if let Some(p) = &self.key_file {
            let password = match self.key_file_key.as_deref() {
                Some(k) => Some(match k.strip_prefix("FILE:") {
                    Some(path) => {
                        let text = std::fs::read_to_string(path).map_err(|e| {
                            anyhow::anyhow!("cannot read the --key-file-key file {path}: {e}")
                        })?;
                        text.lines().next().unwrap_or("").to_string()
                    }
                    None => k.to_string(),
                }),
                None => None,
            };
            keys.read_key_file(p, password.as_deref().map(str::as_bytes))?;
        }
        Ok(Some(std::sync::Arc::new(keys)))
    }
}

/// A mapped source is read with a SIGBUS handler naming it.
pub(super) fn map_guard(s: &Source) -> Option<crate::signals::MapFaultGuard> {
    s.mmap.then(|| crate::signals::catch_map_faults(&s.path))
}

/// The exit code of a run a signal may have stopped.
pub(super) fn exit_code(interrupted: bool) -> u8 {
    if interrupted {
        crate::signals::EXIT_INTERRUPTED
    } else {
        0
    }
}
