//! Is this storage set up right for a database? Partition tables (MBR with extended and
//! logical partitions, GPT with its backup header), filesystem superblocks (XFS, ext4), the
//! LVM2 physical-volume label, alignment math, parsers for RAID-controller tool output and the
//! audit rules of `dbio check`.
//!
//! Parsers and rules are pure: parsers take bytes or text, rules take plain input structs,
//! and their only I/O is through the [`source::ReadAt`] trait (implemented for byte slices
//! and files). [`check`] is the thin live layer of `dbio check`: it gathers the facts (the
//! mount and device stack from `dbio-sys`, superblocks, `lvs`, RAID tools) for the rules.
//! This crate never prints and never exits.
#![deny(missing_docs)]

pub mod align;
pub mod check;
pub mod crc32;
pub mod fs;
pub mod lvm;
pub mod raid;
pub mod rules;
pub mod source;
pub mod table;
