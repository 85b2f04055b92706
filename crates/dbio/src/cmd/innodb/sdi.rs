//! `dbio innodb sdi`: the table definition a MySQL 8 tablespace carries (its SDI), as
//! `ibd2sdi` prints it (`--format json`, the default) or as a CREATE TABLE statement
//! (`--format sql`). The reading is `dbio_innodb::sdi`, the statement
//! `dbio_innodb::rows::sdi_def`; this file maps the flags and writes the bytes.
//!
//! The JSON is ibd2sdi's document, not a dbio result: the JSON texts the server stored,
//! pretty-printed as ibd2sdi prints them (byte for byte), so tools written for ibd2sdi read it.
//! It therefore has no `schema`/`dbio_version` keys and does not go through the exporters.

use crate::cli::usage;
use dbio_innodb::rows::sdi_def::{self, SdiDefError};
use dbio_innodb::sdi::{self, SdiError};
use std::path::PathBuf;

/// What `--format` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SdiFormat {
    /// What `ibd2sdi FILE` prints: ["ibd2sdi", {"type": 1, "id": .., "object": {..}}, ..].
    Json,
    /// The table's CREATE TABLE statement, built from the SDI.
    Sql,
}

/// Arguments of `dbio innodb sdi`.
#[derive(clap::Args, Debug)]
pub struct SdiArgs {
    /// A MySQL 8 tablespace (.ibd, or mysql.ibd / a general tablespace), read-only.
    #[arg(value_name = "FILE.ibd")]
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SdiFormat::Json)]
    format: SdiFormat,
    /// With --format sql: the table (`db/name` or `name`) when the tablespace holds several.
    #[arg(long, value_name = "NAME")]
    table: Option<String>,
    /// Write to FILE instead of stdout (atomically; `-` is stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Runs `dbio innodb sdi`.
pub fn run(a: SdiArgs) -> anyhow::Result<u8> {
    let file = a.file.display().to_string();
    let records = sdi::read_file(&a.file).map_err(|e| match e {
        e @ SdiError::Io { .. } => anyhow::anyhow!("{e}"),
        e => anyhow::anyhow!("{file}: {e}"),
    })?;
    let text = match a.format {
        SdiFormat::Json => sdi::ibd2sdi(&records),
        SdiFormat::Sql => {
            let d =
                sdi_def::table_def(&records, a.table.as_deref(), &file).map_err(|e| match e {
                    SdiDefError::TableNeeded(_) | SdiDefError::NotFound(..) => {
                        usage(format!("{file}: {e}"))
                    }
                    e => anyhow::anyhow!("{file}: {e}"),
                })?;
            format!("{};\n", d.def.create_sql)
        }
    };
    crate::output::emit(a.output.as_deref(), text.as_bytes())?;
    Ok(0)
}
