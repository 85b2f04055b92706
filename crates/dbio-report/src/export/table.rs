//! The one table renderer of text output: columns padded to their widest cell (or a minimum
//! width), left- or right-aligned, a separator between them, trailing blanks trimmed. Widths
//! count characters, not bytes, so a UTF-8 device model or path keeps the columns straight.

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Numbers: padded on the left.
    Right,
}

/// One column: its header, alignment and minimum width.
#[derive(Clone, Debug)]
pub struct Column {
    /// The header cell.
    pub header: String,
    /// How the cells line up.
    pub align: Align,
    /// The narrowest the column may be.
    pub min_width: usize,
}

impl Column {
    /// A left-aligned column.
    pub fn left(header: &str) -> Self {
        Column {
            header: header.to_string(),
            align: Align::Left,
            min_width: 0,
        }
    }

    /// A right-aligned column.
    pub fn right(header: &str) -> Self {
        Column {
            align: Align::Right,
            ..Column::left(header)
        }
    }

    /// The same column, at least `w` characters wide.
    pub fn min(mut self, w: usize) -> Self {
        self.min_width = w;
        self
    }
}

/// A table being built: columns, then rows of cells.
#[derive(Clone, Debug)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
    separator: &'static str,
    header: bool,
}

impl Table {
    /// A table with these columns, cells two spaces apart, with a header line.
    pub fn new(columns: Vec<Column>) -> Self {
        Table {
            columns,
            rows: Vec::new(),
            separator: "  ",
            header: true,
        }
    }

    /// Cells `sep` apart instead of two spaces.
    pub fn separator(mut self, sep: &'static str) -> Self {
        self.separator = sep;
        self
    }

    /// No header line.
    pub fn without_header(mut self) -> Self {
        self.header = false;
        self
    }

    /// Adds a row. Missing cells are blank; extra cells are an error of the caller and
    /// are dropped.
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut r: Vec<String> = cells.into_iter().map(Into::into).collect();
        r.resize(self.columns.len(), String::new());
        self.rows.push(r);
    }

    /// The number of rows added.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn widths(&self) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let head = if self.header {
                    c.header.chars().count()
                } else {
                    0
                };
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([head, c.min_width])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    fn line(&self, cells: &[String], widths: &[usize]) -> String {
        let mut s = String::new();
        for (i, (cell, c)) in cells.iter().zip(&self.columns).enumerate() {
            if i > 0 {
                s.push_str(self.separator);
            }
            let pad = widths[i].saturating_sub(cell.chars().count());
            match c.align {
                Align::Left => {
                    s.push_str(cell);
                    s.extend(std::iter::repeat_n(' ', pad));
                }
                Align::Right => {
                    s.extend(std::iter::repeat_n(' ', pad));
                    s.push_str(cell);
                }
            }
        }
        s.truncate(s.trim_end().len());
        s
    }

    /// The header line (when there is one) and one line per row, without newlines, so a
    /// caller can put notes between rows.
    pub fn lines(&self) -> Vec<String> {
        let w = self.widths();
        let head: Vec<String> = self.columns.iter().map(|c| c.header.clone()).collect();
        let mut out = Vec::with_capacity(self.rows.len() + 1);
        if self.header {
            out.push(self.line(&head, &w));
        }
        out.extend(self.rows.iter().map(|r| self.line(r, &w)));
        out
    }

    /// The whole table, each line ending in a newline.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for l in self.lines() {
            s.push_str(&l);
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_aligns_and_trims() {
        let mut t = Table::new(vec![Column::left("Device").min(8), Column::right("r/s")]);
        t.row(["vda", "1.50"]);
        t.row(["nvme0n1p1", "1234.00"]);
        assert_eq!(
            t.render(),
            "Device         r/s\nvda           1.50\nnvme0n1p1  1234.00\n"
        );
        let mut t = Table::new(vec![Column::left("a"), Column::left("b")])
            .separator(" ")
            .without_header();
        t.row(["é", "x"]);
        t.row(["ab", ""]);
        assert_eq!(t.lines(), ["é  x", "ab"]);
    }
}
