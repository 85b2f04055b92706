//! Text output for people, one file per result. Tables go through [`super::table`].

pub mod bench;
pub mod bench_fileset;
pub mod stack;
