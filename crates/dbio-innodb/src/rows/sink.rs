//! What the decoder writes rows into: a [`RowSink`] gets the summary before the first row,
//! then the rows (or lines its encoder made on the decoding threads) in page order, then the
//! summary again. `write::RowWriter` is the sink that writes SQL, TSV or JSON Lines.

use super::line::LineEncoder;
use super::record::Row;
pub use super::record::RowMeta;
use dbio_schema::rows::RowsSummary;

/// Receives the rows of a run.
pub trait RowSink {
    /// Called once the index is chosen, before the first row.
    fn begin(&mut self, summary: &RowsSummary) -> std::io::Result<()>;
    /// One row.
    fn row(&mut self, row: &Row, meta: &RowMeta) -> std::io::Result<()>;
    /// After the last row.
    fn end(&mut self, summary: &RowsSummary) -> std::io::Result<()>;
    /// An encoder the decoding threads share: when given, rows arrive already formatted,
    /// in order, through [`RowSink::lines`] instead of [`RowSink::row`].
    fn encoder(&self) -> Option<LineEncoder> {
        None
    }
    /// Lines made by [`RowSink::encoder`]'s encoder, whole lines in row order.
    fn lines(&mut self, lines: &[u8]) -> std::io::Result<()> {
        let _ = lines;
        Err(std::io::Error::other(
            "this row sink has no encoder: it takes rows, not lines",
        ))
    }
}
