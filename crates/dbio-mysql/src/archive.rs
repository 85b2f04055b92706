//! The archive file: rows written as TSV (a header of column names, then `SELECT ... INTO
//! OUTFILE`'s escaping) or SQL `INSERT`s, and flushed to disk (fdatasync) before the DELETE
//! of the same chunk commits. A new archive is created O_EXCL|O_NOFOLLOW (an existing file is
//! never overwritten); a resumed job reopens it and cuts it back to the length its checkpoint
//! recorded, dropping the rows of a chunk that never committed, but only once the file is
//! shown to be the one the checkpoint describes ([`ArchiveIdentity`]: the same path, format,
//! device and inode, at least as long, and the same hash of its last checkpointed bytes).

use crate::state::ArchiveIdentity;
use crate::value::{push_sql, push_tsv, ColumnKind};
use crate::Error;
use mysql::Value;
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How many bytes before a checkpointed length [`tail_hash`] covers.
pub const TAIL_BYTES: u64 = 64 * 1024;

/// SHA-256 of the `TAIL_BYTES` (or fewer) bytes of `file` that end at `len`, and of `len`
/// itself, as hex: what a checkpoint records of the archive's content.
pub fn tail_hash(file: &File, len: u64) -> std::io::Result<String> {
    let start = len.saturating_sub(TAIL_BYTES);
    let mut buf = vec![0u8; (len - start) as usize];
    file.read_exact_at(&mut buf, start)?;
    let mut h = Sha256::new();
    h.update(len.to_le_bytes());
    h.update(&buf);
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// `path` made absolute (not resolving symlinks: the path as the user gave it).
fn absolute(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// The archive's format: one of the row formats, `tsv` (tab-separated values with a header
/// line) or `sql` (one `INSERT INTO ... VALUES (...), (...);` per chunk); its name is what a
/// checkpoint records. JSON Lines is refused ([`Layout::of`]).
pub use dbio_schema::rows::RowFormat as Format;

/// How the rows of an archive are laid out: the row formats an archive can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Tsv,
    Sql,
}

impl Layout {
    /// The layout of `format`; an error naming the formats an archive takes for JSON Lines
    /// (an archive is loaded back into the server, with LOAD DATA or as SQL).
    fn of(format: Format, path: &Path) -> Result<Layout, Error> {
        match format {
            Format::Tsv => Ok(Layout::Tsv),
            Format::Sql => Ok(Layout::Sql),
            Format::Jsonl => Err(Error::Archive {
                path: path.to_path_buf(),
                what: "an archive is written as tsv or sql (the formats a server loads back), not jsonl",
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "give --archive-format tsv or sql",
                ),
            }),
        }
    }
}

/// An open archive.
pub struct Archive {
    file: File,
    path: PathBuf,
    format: Format,
    layout: Layout,
    table: String,
    len: u64,
}

fn io<'a>(path: &'a Path, what: &'static str) -> impl Fn(std::io::Error) -> Error + 'a {
    move |source| Error::Archive {
        path: path.to_path_buf(),
        what,
        source,
    }
}

impl Archive {
    /// Creates a new archive at `path` (refused if anything is there) with its header.
    pub fn create(
        path: &Path,
        format: Format,
        table: &str,
        columns: &[String],
    ) -> Result<Archive, Error> {
        let layout = Layout::of(format, path)?;
        let file = dbio_sys::atomic::create_new(path)
            .map_err(io(path, "cannot create it (it must not exist yet)"))?;
        let mut a = Archive {
            file,
            path: path.to_path_buf(),
            format,
            layout,
            table: table.to_string(),
            len: 0,
        };
        let header = match layout {
            Layout::Tsv => format!("{}\n", columns.join("\t")),
            Layout::Sql => format!("-- dbio mysql chunk archive of {table}\n"),
        };
        a.append(header.as_bytes())?;
        // The new name must survive a crash too, before any DELETE commits: flush the directory.
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io(path, "cannot flush its directory to disk"))?;
        Ok(a)
    }

    /// Reopens an archive for a resumed job and cuts it to `len` bytes (the length after the
    /// last committed chunk). Refused, with nothing changed, unless the file is the one
    /// `identity` describes (same absolute path, format, device and inode), holds at least
    /// `len` bytes, and its bytes before `len` hash to `tail` ([`tail_hash`]).
    pub fn reopen(
        path: &Path,
        format: Format,
        table: &str,
        len: u64,
        identity: &ArchiveIdentity,
        tail: &str,
    ) -> Result<Archive, Error> {
        let layout = Layout::of(format, path)?;
        let refuse = |reason: String| Error::ArchiveIdentity {
            path: path.to_path_buf(),
            reason,
        };
        let abs = absolute(path);
        if abs != identity.path {
            return Err(refuse(format!(
                "the checkpoint's archive is {}, this run names {abs}: resume with --archive {}",
                identity.path, identity.path
            )));
        }
        if format.name() != identity.format {
            return Err(refuse(format!(
                "the archive is in {} format, this run asks for --archive-format {}: one file never mixes formats; resume with --archive-format {}",
                identity.format,
                format.name(),
                identity.format
            )));
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(io(path, "cannot reopen it to resume"))?;
        let meta = file.metadata().map_err(io(path, "cannot stat it"))?;
        if (meta.dev(), meta.ino()) != (identity.device, identity.inode) {
            return Err(refuse(format!(
                "it is not the file this job wrote (device {} inode {}, the checkpoint recorded device {} inode {}): it was replaced, copied or restored since",
                meta.dev(),
                meta.ino(),
                identity.device,
                identity.inode
            )));
        }
        let have = meta.len();
        if have < len {
            return Err(Error::ArchiveShort {
                path: path.to_path_buf(),
                have,
                want: len,
            });
        }
        let now = tail_hash(&file, len).map_err(io(path, "cannot read it"))?;
        if now != tail {
            return Err(refuse(format!(
                "its bytes before offset {len} (the checkpoint's length) are not those the job wrote: it was changed since"
            )));
        }
        file.set_len(len)
            .map_err(io(path, "cannot cut it back to the checkpoint"))?;
        file.seek(SeekFrom::Start(len))
            .map_err(io(path, "cannot seek"))?;
        file.sync_data()
            .map_err(io(path, "cannot flush it to disk"))?;
        Ok(Archive {
            file,
            path: path.to_path_buf(),
            format,
            layout,
            table: table.to_string(),
            len,
        })
    }

    /// What a checkpoint records of this archive.
    pub fn identity(&self) -> Result<ArchiveIdentity, Error> {
        let meta = self
            .file
            .metadata()
            .map_err(io(&self.path, "cannot stat it"))?;
        Ok(ArchiveIdentity {
            path: absolute(&self.path),
            format: self.format.name().to_string(),
            device: meta.dev(),
            inode: meta.ino(),
        })
    }

    /// [`tail_hash`] of the archive as written so far.
    pub fn tail(&self) -> Result<String, Error> {
        tail_hash(&self.file, self.len).map_err(io(&self.path, "cannot read it back"))
    }

    /// The length written and flushed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing (not even the header) is written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes of one chunk's rows in this archive's format.
    pub fn render(&self, columns: &[String], kinds: &[ColumnKind], rows: &[Vec<Value>]) -> Vec<u8> {
        self.render_for(&self.table, columns, kinds, rows)
    }

    /// [`Archive::render`] for rows of another table (`--archive-children`, SQL only: the
    /// INSERT names that table).
    pub fn render_for(
        &self,
        table: &str,
        columns: &[String],
        kinds: &[ColumnKind],
        rows: &[Vec<Value>],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        if rows.is_empty() {
            return out;
        }
        match self.layout {
            Layout::Tsv => {
                for row in rows {
                    for (i, v) in row.iter().enumerate() {
                        if i > 0 {
                            out.push(b'\t');
                        }
                        push_tsv(&mut out, v, &kinds[i]);
                    }
                    out.push(b'\n');
                }
            }
            Layout::Sql => {
                let cols: Vec<String> =
                    columns.iter().map(|c| crate::key::quote_ident(c)).collect();
                out.extend_from_slice(
                    format!("INSERT INTO {table} ({}) VALUES\n", cols.join(", ")).as_bytes(),
                );
                for (r, row) in rows.iter().enumerate() {
                    out.push(b'(');
                    for (i, v) in row.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        push_sql(&mut out, v, &kinds[i]);
                    }
                    out.extend_from_slice(if r + 1 == rows.len() {
                        b");\n"
                    } else {
                        b"),\n"
                    });
                }
            }
        }
        out
    }

    /// Appends `bytes` and flushes them to disk (fdatasync) before returning.
    pub fn append(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.file
            .write_all(bytes)
            .map_err(io(&self.path, "cannot write"))?;
        self.file
            .sync_data()
            .map_err(io(&self.path, "cannot flush it to disk (fdatasync)"))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Cuts the archive back to `len` (a chunk that rolled back).
    pub fn truncate(&mut self, len: u64) -> Result<(), Error> {
        self.file
            .set_len(len)
            .map_err(io(&self.path, "cannot cut it back"))?;
        self.file
            .seek(SeekFrom::Start(len))
            .map_err(io(&self.path, "cannot seek"))?;
        self.file
            .sync_data()
            .map_err(io(&self.path, "cannot flush it to disk"))?;
        self.len = len;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_is_refused_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        let e = Archive::create(&p, Format::Jsonl, "t", &["id".to_string()])
            .err()
            .expect("jsonl refused");
        assert!(e.to_string().contains("tsv or sql"), "{e}");
        assert!(!p.exists());
        // Checkpoints record the names of the formats written before the row formats were
        // one enum: they must read the same.
        assert_eq!((Format::Tsv.name(), Format::Sql.name()), ("tsv", "sql"));
        let a = Archive::create(&p, Format::Sql, "t", &["id".to_string()]).unwrap();
        assert_eq!(a.identity().unwrap().format, "sql");
    }

    #[test]
    fn create_refuses_an_existing_file_and_reopen_cuts_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.tsv");
        let cols = vec!["id".to_string(), "note".to_string()];
        let kinds = vec![ColumnKind::Other, ColumnKind::Other];
        let mut a = Archive::create(&p, Format::Tsv, "`d`.`t`", &cols).unwrap();
        let rows = vec![
            vec![Value::Int(1), Value::Bytes(b"x\ty".to_vec())],
            vec![Value::Int(2), Value::NULL],
        ];
        let b = a.render(&cols, &kinds, &rows);
        a.append(&b).unwrap();
        let committed = a.len();
        let id = a.identity().unwrap();
        let tail = a.tail().unwrap();
        a.append(&a.render(&cols, &kinds, &rows[..1])).unwrap();
        drop(a);
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "id\tnote\n1\tx\\ty\n2\t\\N\n1\tx\\ty\n"
        );
        assert!(matches!(
            Archive::create(&p, Format::Tsv, "t", &cols),
            Err(Error::Archive { .. })
        ));
        let full = std::fs::read(&p).unwrap();
        // Another format, another path, a longer length or another hash: refused, untouched.
        let other = dir.path().join("other.tsv");
        std::fs::write(&other, &full).unwrap();
        for (path, format, len) in [
            (&p, Format::Sql, committed),
            (&other, Format::Tsv, committed),
            (&p, Format::Tsv, committed + 1),
            (&p, Format::Tsv, committed - 1),
        ] {
            let e = Archive::reopen(path, format, "t", len, &id, &tail)
                .err()
                .unwrap();
            assert!(
                matches!(
                    e,
                    Error::ArchiveIdentity { .. } | Error::ArchiveShort { .. }
                ),
                "{e}"
            );
            assert_eq!(std::fs::read(&p).unwrap(), full);
        }
        // The same path replaced by a copy with the same bytes: another inode, refused.
        let moved = dir.path().join("moved.tsv");
        std::fs::rename(&p, &moved).unwrap();
        std::fs::write(&p, &full).unwrap();
        let e = Archive::reopen(&p, Format::Tsv, "t", committed, &id, &tail)
            .err()
            .unwrap();
        assert!(e.to_string().contains("not the file this job wrote"), "{e}");
        std::fs::remove_file(&p).unwrap();
        std::fs::rename(&moved, &p).unwrap();
        let a = Archive::reopen(&p, Format::Tsv, "t", committed, &id, &tail).unwrap();
        assert_eq!(a.len(), committed);
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "id\tnote\n1\tx\\ty\n2\t\\N\n"
        );
    }

    #[test]
    fn sql_format_is_one_insert_per_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.sql");
        let cols = vec!["id".to_string(), "n".to_string()];
        let kinds = vec![ColumnKind::Other, ColumnKind::Other];
        let a = Archive::create(&p, Format::Sql, "`d`.`t`", &cols).unwrap();
        let b = a.render(
            &cols,
            &kinds,
            &[
                vec![Value::Int(1), Value::Bytes(b"it's".to_vec())],
                vec![Value::Int(2), Value::NULL],
            ],
        );
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "INSERT INTO `d`.`t` (`id`, `n`) VALUES\n(1,'it\\'s'),\n(2,NULL);\n"
        );
        assert!(a.render(&cols, &kinds, &[]).is_empty());
    }
}
