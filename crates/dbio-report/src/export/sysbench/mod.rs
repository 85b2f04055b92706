//! The text layouts of sysbench, for scripts written against sysbench's output.

pub mod bench;
