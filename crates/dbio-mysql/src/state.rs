//! The checkpoint: where the walk is, written atomically (temporary file, fsync, rename: see
//! [`dbio_sys::atomic`]) after every committed chunk, and before the commit of a chunk whose
//! outcome a resumed job must be able to tell (`pending`, see [`crate::job`]).

use crate::key::Key;
use crate::value::KeyValue;
use crate::Error;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The checkpoint format's version. Version 2 records the archive's identity and settles a
/// chunk in flight by the commit marker; a version 1 checkpoint (a probe key) is refused.
pub const VERSION: u32 = 2;

/// A chunk whose transaction was about to commit when the checkpoint was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// The chunk's upper bound.
    pub upper: Vec<KeyValue>,
    /// The archive's length before the chunk's rows.
    pub archive_before: u64,
    /// The archive's length with them.
    pub archive_after: u64,
    /// Rows in the chunk.
    pub rows: u64,
    /// Key rows walked.
    pub walked: u64,
    /// The token the chunk's transaction wrote into the commit marker table: found there on
    /// resume means the chunk committed (see [`crate::marker`]).
    pub token: u64,
    /// [`crate::archive::tail_hash`] of the archive at `archive_after`.
    pub archive_after_tail: Option<String>,
}

/// What a checkpoint records of its archive, so that a resume onto another file (another
/// path, a file replaced since, another format, bytes changed before the checkpoint's length)
/// is refused before anything is touched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveIdentity {
    /// The archive's absolute path.
    pub path: String,
    /// `tsv` or `sql`.
    pub format: String,
    /// st_dev of the file.
    pub device: u64,
    /// st_ino of the file.
    pub inode: u64,
}

/// Totals over the job's runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Chunks committed.
    pub chunks: u64,
    /// Key rows walked.
    pub rows_walked: u64,
    /// Rows deleted or updated.
    pub rows_affected: u64,
    /// Rows archived.
    pub rows_archived: u64,
}

/// A job's checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// [`VERSION`].
    pub version: u32,
    /// The job's identity ([`job_id`]): a resume of another job is refused.
    pub job: String,
    /// `db.table`, for people reading the file.
    pub table: String,
    /// The key walked.
    pub key: Key,
    /// The walk's end (the greatest key when the job began).
    pub end: Vec<KeyValue>,
    /// The last committed chunk's upper bound (none yet: start at the beginning).
    pub last: Option<Vec<KeyValue>>,
    /// A chunk in flight (see [`Pending`]).
    pub pending: Option<Pending>,
    /// The archive's length after the last committed chunk.
    pub archive_bytes: u64,
    /// The archive (none: the job writes none).
    pub archive: Option<ArchiveIdentity>,
    /// [`crate::archive::tail_hash`] of the archive at `archive_bytes`.
    pub archive_tail: Option<String>,
    /// Totals so far.
    pub totals: Totals,
    /// The walk reached the end.
    pub finished: bool,
}

impl Checkpoint {
    /// Writes the checkpoint atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a checkpoint serialises");
        bytes.push(b'\n');
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::State {
                path: path.to_path_buf(),
                what: "cannot create its directory",
                source: Box::new(source),
            })?;
        }
        dbio_sys::atomic::write_atomic(path, &bytes).map_err(|source| Error::State {
            path: path.to_path_buf(),
            what: "cannot write it",
            source: Box::new(source),
        })
    }

    /// Reads a checkpoint.
    pub fn load(path: &Path) -> Result<Checkpoint, Error> {
        let bytes = std::fs::read(path).map_err(|source| Error::State {
            path: path.to_path_buf(),
            what: "cannot read it",
            source: Box::new(source),
        })?;
        let bad = |source| Error::State {
            path: path.to_path_buf(),
            what: "it is not a dbio mysql chunk checkpoint",
            source: Box::new(source),
        };
        // The version first: an older checkpoint lacks fields, and "missing field" would
        // hide why it is refused.
        let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(bad)?;
        if let Some(version) = v.get("version").and_then(serde_json::Value::as_u64) {
            if version != u64::from(VERSION) {
                return Err(Error::StateVersion {
                    path: path.to_path_buf(),
                    version: u32::try_from(version).unwrap_or(u32::MAX),
                });
            }
        }
        let c: Checkpoint = serde_json::from_value(v).map_err(bad)?;
        Ok(c)
    }
}

/// FNV-1a, 64 bits: a hash that stays the same across Rust versions and platforms (the job id
/// names the lock and the default state file of a job run again months later).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The job's identity: the server's host and port, database, table, condition and action.
pub fn job_id(server: &str, database: &str, table: &str, condition: &str, action: &str) -> String {
    format!(
        "{:016x}",
        fnv1a(&[server, database, table, condition, action])
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_stable_and_distinct() {
        let a = job_id("127.0.0.1:3306", "d", "t", "x < 1", "delete");
        // Fixed value: the id must not change between dbio versions.
        assert_eq!(a, job_id("127.0.0.1:3306", "d", "t", "x < 1", "delete"));
        assert_eq!(
            a,
            format!(
                "{:016x}",
                fnv1a(&["127.0.0.1:3306", "d", "t", "x < 1", "delete"])
            )
        );
        assert_eq!(fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(&["a"]), {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in [b'a', 0] {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x100_0000_01b3);
            }
            h
        });
        assert_ne!(a, job_id("127.0.0.1:3306", "d", "t", "x < 2", "delete"));
        // The separator keeps ("ab", "c") and ("a", "bc") apart.
        assert_ne!(
            job_id("s", "ab", "c", "", ""),
            job_id("s", "a", "bc", "", "")
        );
    }

    #[test]
    fn saves_and_loads_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/state.json");
        let c = Checkpoint {
            version: VERSION,
            job: "j".into(),
            table: "d.t".into(),
            key: Key {
                name: "PRIMARY".into(),
                columns: vec!["id".into()],
            },
            end: vec![KeyValue::Int(100)],
            last: Some(vec![KeyValue::Int(10)]),
            pending: None,
            archive_bytes: 7,
            archive: None,
            archive_tail: None,
            totals: Totals {
                chunks: 1,
                rows_walked: 10,
                rows_affected: 5,
                rows_archived: 5,
            },
            finished: false,
        };
        c.save(&p).unwrap();
        assert_eq!(Checkpoint::load(&p).unwrap(), c);
        std::fs::write(&p, "{}").unwrap();
        assert!(matches!(Checkpoint::load(&p), Err(Error::State { .. })));
        let mut v = serde_json::to_value(&c).unwrap();
        v["version"] = 9.into();
        std::fs::write(&p, v.to_string()).unwrap();
        assert!(matches!(
            Checkpoint::load(&p),
            Err(Error::StateVersion { version: 9, .. })
        ));
    }
}
