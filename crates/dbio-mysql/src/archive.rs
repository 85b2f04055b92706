//! The archive file: rows written as TSV (a header of column names, then `SELECT ... INTO
//! OUTFILE`'s escaping) or SQL `INSERT`s, and flushed to disk (fdatasync) before the DELETE
//! of the same chunk commits. A new archive is created O_EXCL|O_NOFOLLOW (an existing file is
//! never overwritten); a resumed job reopens it and cuts it back to the length its checkpoint
//! recorded, dropping the rows of a chunk that never committed.

use crate::value::{push_sql, push_tsv, ColumnKind};
use crate::Error;
use mysql::Value;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The archive's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Tab-separated values with a header line.
    Tsv,
    /// One `INSERT INTO ... VALUES (...), (...);` per chunk.
    Sql,
}

/// An open archive.
pub struct Archive {
    file: File,
    path: PathBuf,
    format: Format,
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
        let file = dbio_sys::atomic::create_new(path)
            .map_err(io(path, "cannot create it (it must not exist yet)"))?;
        let mut a = Archive {
            file,
            path: path.to_path_buf(),
            format,
            table: table.to_string(),
            len: 0,
        };
        let header = match format {
            Format::Tsv => format!("{}\n", columns.join("\t")),
            Format::Sql => format!("-- dbio mysql chunk archive of {table}\n"),
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
    /// last committed chunk). Refused when the file is shorter than that: it is not this
    /// job's archive, or it lost data.
    pub fn reopen(path: &Path, format: Format, table: &str, len: u64) -> Result<Archive, Error> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(io(path, "cannot reopen it to resume"))?;
        let have = file.metadata().map_err(io(path, "cannot stat it"))?.len();
        if have < len {
            return Err(Error::ArchiveShort {
                path: path.to_path_buf(),
                have,
                want: len,
            });
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
            table: table.to_string(),
            len,
        })
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
        let mut out = Vec::new();
        if rows.is_empty() {
            return out;
        }
        match self.format {
            Format::Tsv => {
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
            Format::Sql => {
                let cols: Vec<String> =
                    columns.iter().map(|c| crate::key::quote_ident(c)).collect();
                out.extend_from_slice(
                    format!("INSERT INTO {} ({}) VALUES\n", self.table, cols.join(", ")).as_bytes(),
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
        let a = Archive::reopen(&p, Format::Tsv, "t", committed).unwrap();
        assert_eq!(a.len(), committed);
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "id\tnote\n1\tx\\ty\n2\t\\N\n"
        );
        assert!(matches!(
            Archive::reopen(&p, Format::Tsv, "t", committed + 1),
            Err(Error::ArchiveShort { .. })
        ));
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
