//! Text output for people, one file per result. Tables go through [`super::table`].

pub mod advise;
pub mod align;
pub mod bench;
pub mod bench_fileset;
pub mod check;
pub mod columns;
pub mod innodb;
pub mod iostat;
pub mod model;
pub mod mysql_chunk;
pub mod report;
pub mod rows;
pub mod stack;
pub mod stalk;
pub mod sweep;
