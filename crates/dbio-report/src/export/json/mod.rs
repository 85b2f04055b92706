//! JSON output that is not one [`super::Json`] document written at the end: documents
//! streamed as their result is produced. One file per result.

pub mod innodb;
