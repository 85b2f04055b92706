//! `dbio innodb frm`: the CREATE TABLE statement a MySQL 5.x / MariaDB `.frm` file describes
//! (as `innodb rows --frm` reads it), to compare with `mysqlfrm --diagnostic` or
//! `dbsake frmdump`, or to hand to `innodb rows --table-def`.

use crate::cli::usage;
use dbio_innodb::rows::frm::{self, FrmError};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `dbio innodb frm`.
#[derive(clap::Args, Debug)]
pub struct FrmArgs {
    /// .frm files.
    #[arg(required = true, value_name = "FILE.frm")]
    files: Vec<PathBuf>,
    /// Add a comment to each column with its MYSQL_TYPE_* code (DATETIME vs DATETIME2, ...).
    #[arg(long)]
    type_codes: bool,
}

/// Runs `dbio innodb frm`.
pub fn run(a: FrmArgs) -> anyhow::Result<u8> {
    let mut out = String::new();
    for path in &a.files {
        let f = frm::read(path).map_err(|e| match e {
            FrmError::Io(_) => anyhow::anyhow!("{}: {e}", path.display()),
            e => usage(format!(
                "{}: {e}; is it the .frm of a table?",
                path.display()
            )),
        })?;
        out.push_str(&format!(
            "-- {}: written by MySQL {}, engine {}\n",
            path.display(),
            f.version(),
            f.engine
        ));
        if a.type_codes {
            out.push_str("-- column types:");
            for (c, i) in f.def.columns.iter().zip(&f.columns) {
                out.push_str(&format!(" {} MYSQL_TYPE_{};", c.name, i.type_name));
            }
            out.push('\n');
        }
        out.push_str(&f.def.create_sql);
        out.push_str(";\n\n");
    }
    let mut so = std::io::stdout().lock();
    match so.write_all(out.as_bytes()).and_then(|_| so.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        r => r.map(|_| 0).map_err(Into::into),
    }
}
