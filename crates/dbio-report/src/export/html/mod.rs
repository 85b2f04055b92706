//! HTML output: one self-contained page per result.

mod charts;
pub mod report;
