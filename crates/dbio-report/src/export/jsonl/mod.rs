//! JSON Lines output of results that stream more than one kind of line. One file per result.

pub mod innodb;
