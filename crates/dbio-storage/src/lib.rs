//! Is this storage set up right for a database? Partition tables (MBR with extended and
//! logical partitions, GPT with its backup header), filesystem superblocks (XFS, ext4), the
//! LVM2 physical-volume label, alignment math, parsers for RAID-controller tool output and the
//! audit rules of `dbio check`.
//!
//! Everything here is pure: parsers take bytes or text, rules take plain input structs. The
//! only I/O is through the [`source::ReadAt`] trait (implemented for byte slices and files).
//! Live system reads (mountinfo, the sysfs device stack) come from `dbio-sys`.
//! This crate never prints and never exits.
#![deny(missing_docs)]

pub mod align;
pub mod crc32;
pub mod fs;
pub mod lvm;
pub mod raid;
pub mod report;
pub mod rules;
pub mod source;
pub mod table;
