//! The audit rules of `dbio check`, as pure functions over plain input structs: each returns
//! [`Finding`]s with a rule id, a status, the evidence, why it matters for a database and
//! the command that fixes it. [`crate::check`] gathers the inputs (sysfs, mountinfo, superblocks,
//! `lvs`, RAID tools) and never lets one failed rule abort the audit.
//!
//! One file per topic: [`queue`] (block-queue settings), [`partition`] (partition alignment),
//! [`fs`] (filesystem stripe geometry), [`mount`] (mount options), [`lvm`] (snapshots and PV
//! alignment) and [`raid`] (RAID controllers). The result types ([`Finding`], [`Status`],
//! [`Labels`]) live in [`dbio_schema::check`], where the exporters read them.

pub mod fs;
pub mod lvm;
pub mod mount;
pub mod partition;
pub mod queue;
pub mod raid;

pub use dbio_schema::check::{Finding, Labels, Status};
pub use fs::*;
pub use lvm::*;
pub use mount::*;
pub use partition::*;
pub use queue::*;
pub use raid::*;
