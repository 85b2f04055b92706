//! `dbio stack PATH`: the mount, filesystem and device stack under a path or block device,
//! down to the physical disks, with each level's queue attributes.

use crate::output::{to_stderr, OutputArgs};
use anyhow::Context;
use dbio_schema::stack::Stack;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Arguments of `dbio stack`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A file or directory (a datadir, a log directory), or a block device (/dev/vda,
    /// /dev/mapper/vg-lv, or a bare kernel name such as vda or dm-0).
    pub path: PathBuf,
    #[command(flatten)]
    pub out: OutputArgs<Stack>,
}

/// Runs `dbio stack`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let p = &args.path;
    let is_dev = std::fs::metadata(p)
        .map(|m| m.file_type().is_block_device())
        .unwrap_or(false)
        // A bare word that is not a path here: a kernel device name (or an unknown one,
        // answered with the list of devices that exist).
        || (!p.exists() && !p.to_string_lossy().contains('/'));
    let stack = if is_dev {
        dbio_sys::stack::resolve_device(p).with_context(|| {
            if p.exists() {
                format!("cannot resolve block device {}", p.display())
            } else {
                format!(
                    "{} is not an existing path, so it was taken as a block device name",
                    p.display()
                )
            }
        })?
    } else {
        dbio_sys::stack::resolve(p).with_context(|| {
            format!(
                "cannot resolve {}: give an existing file, directory or block device",
                p.display()
            )
        })?
    };
    args.out.emit_result(&stack)?;
    let missing = stack
        .resolved_path
        .as_deref()
        .is_some_and(|r| !p.exists() && Path::new(r) != p);
    if missing {
        to_stderr(&format!(
            "dbio: {} does not exist; the stack shown is its nearest existing parent's\n",
            p.display()
        ));
        return Ok(crate::cli::EXIT_FAILURE);
    }
    Ok(0)
}
