//! The columns `dbio iostat --format text` can show (`--columns`): the one option of the
//! [`Text`](crate::export::Text) exporter.

use dbio_schema::iostat::Figures;

/// Every column of the table, in the default order (iostat -x's, then pt-diskstats').
pub const COLUMNS: [&str; 27] = [
    "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "%wrqm",
    "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz", "f/s",
    "f_await", "aqu-sz", "%util", "rd_cnc", "wr_cnc", "in_prg", "qtime", "stime",
];

/// The figures in [`COLUMNS`] order.
pub fn column_values(f: &Figures) -> [f64; 27] {
    [
        f.r_per_s,
        f.rkb_per_s,
        f.rrqm_per_s,
        f.rrqm_pct,
        f.r_await_ms,
        f.rareq_sz_kb,
        f.w_per_s,
        f.wkb_per_s,
        f.wrqm_per_s,
        f.wrqm_pct,
        f.w_await_ms,
        f.wareq_sz_kb,
        f.d_per_s,
        f.dkb_per_s,
        f.drqm_per_s,
        f.drqm_pct,
        f.d_await_ms,
        f.dareq_sz_kb,
        f.f_per_s,
        f.f_await_ms,
        f.aqu_sz,
        f.util_pct,
        f.rd_cnc,
        f.wr_cnc,
        f.in_flight as f64,
        f.qtime_ms,
        f.stime_ms,
    ]
}

/// A `--columns` list that names no column or one twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ColumnsError {
    /// A name that is not a column of the table.
    #[error("--columns: no column {name:?}; the columns are: {valid}")]
    Unknown {
        /// The name as given.
        name: String,
        /// Every column name, comma separated.
        valid: String,
    },
    /// A name given twice.
    #[error("--columns: {name} is given twice; name each column once")]
    Duplicate {
        /// The name.
        name: String,
    },
}

/// The columns a table shows, in order (indexes into [`COLUMNS`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns(pub(crate) Vec<usize>);

impl Default for Columns {
    fn default() -> Self {
        Columns((0..COLUMNS.len()).collect())
    }
}

impl Columns {
    /// Parses a comma-separated list of column names as the header prints them (`r/s,w_await,
    /// %util`), in the order given. An unknown name is refused with every valid one listed.
    pub fn parse(list: &str) -> Result<Self, ColumnsError> {
        let mut out = Vec::new();
        for name in list.split(',') {
            let i =
                COLUMNS
                    .iter()
                    .position(|c| *c == name)
                    .ok_or_else(|| ColumnsError::Unknown {
                        name: name.to_string(),
                        valid: COLUMNS.join(", "),
                    })?;
            if out.contains(&i) {
                return Err(ColumnsError::Duplicate {
                    name: name.to_string(),
                });
            }
            out.push(i);
        }
        Ok(Columns(out))
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|&i| COLUMNS[i]).collect()
    }
}
