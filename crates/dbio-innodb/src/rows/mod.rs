//! `innodb rows`: recovered InnoDB pages decoded back into rows, given a table definition.
//!
//! [`def`] reads the definition from a CREATE TABLE statement.

pub mod def;
pub mod value;
