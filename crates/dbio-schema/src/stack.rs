//! The result of `dbio stack` (schema `dbio.stack/1`): what a path or device sits on, from its
//! mount down to the physical disks, with each level's queue attributes. dbio-sys resolves it.

use serde::{Deserialize, Serialize};

/// What a path or device sits on, top (the device the filesystem is on) to bottom (the disks).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stack {
    /// The path or device as given.
    pub query: String,
    /// The canonical path that was resolved (symlinks followed); for a path that does not
    /// exist, its nearest existing parent.
    pub resolved_path: Option<String>,
    /// The mount the path lives on (`None` for a device query).
    pub mount: Option<Mount>,
    /// Every block device in the stack, depth first from the top; a device reached twice
    /// (e.g. two partitions of one disk in one RAID) is listed once.
    pub devices: Vec<Device>,
    /// Names of the leaf devices: the physical (or virtual: virtio, loop) disks at the bottom.
    pub leaf_disks: Vec<String>,
    /// Facts worth knowing that are not errors (no block device under tmpfs, missing path...).
    pub notes: Vec<String>,
    /// `uname -r` of the machine that resolved the stack.
    pub kernel_release: Option<String>,
}

impl Stack {
    /// The leaf (physical) disks at the bottom of the stack.
    pub fn leaves(&self) -> Vec<&Device> {
        self.devices
            .iter()
            .filter(|d| self.leaf_disks.contains(&d.name))
            .collect()
    }

    /// The device at the top of the stack (what the filesystem is on), if any.
    pub fn top(&self) -> Option<&Device> {
        self.devices.first()
    }

    /// A device by kernel name.
    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name)
    }
}

/// The mount a path lives on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    /// Mount source (`/dev/vda`, `tmpfs`, `server:/export`).
    pub source: String,
    /// Where it is mounted.
    pub mountpoint: String,
    /// Filesystem type.
    pub fstype: String,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: String,
    /// Filesystem (superblock) options (`rw,discard,data=ordered`).
    pub super_options: String,
    /// `major:minor` of the filesystem's device (`0:xx` when it has none).
    pub dev: String,
    /// Root of the mount within the filesystem (not `/` for bind mounts).
    pub root: String,
}

/// What kind of block device a level is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// A whole disk (physical, virtio, NVMe namespace, zram...).
    Disk,
    /// A partition of a disk.
    Partition,
    /// A device-mapper device (LVM logical volume, dm-crypt, multipath...).
    Dm,
    /// An md software RAID array.
    Md,
    /// A loop device (backed by a file).
    Loop,
}

/// One level of the stack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Kernel name (`vda`, `vda1`, `dm-0`, `md0`, `loop3`).
    pub name: String,
    /// `major:minor`.
    pub dev: String,
    /// What it is.
    pub kind: DeviceKind,
    /// Depth in the tree: 0 for the top, +1 per level down.
    pub depth: usize,
    /// Device node (`/dev/vda`, `/dev/mapper/vg-lv`).
    pub node: String,
    /// Size.
    pub size_bytes: Option<u64>,
    /// Names of the devices this one is built on (sysfs `slaves/`; a partition's disk).
    pub slaves: Vec<String>,
    /// Model string the disk reports, if any.
    pub model: Option<String>,
    /// Device-mapper name (`vg-lv`).
    pub dm_name: Option<String>,
    /// Device-mapper UUID (`LVM-...`, `CRYPT-...`).
    pub dm_uuid: Option<String>,
    /// Who made the dm device, from the UUID prefix (`LVM`, `CRYPT`, `mpath`).
    pub dm_subsystem: Option<String>,
    /// md RAID level (`raid1`, `raid10`).
    pub md_level: Option<String>,
    /// md chunk size.
    pub md_chunk_bytes: Option<u64>,
    /// The file behind a loop device.
    pub loop_backing_file: Option<String>,
    /// Partition number.
    pub partition_number: Option<u32>,
    /// Partition start, in 512-byte sectors.
    pub start_sectors: Option<u64>,
    /// Bytes by which the device's start is off the physical block boundary (0 = aligned).
    pub alignment_offset_bytes: Option<u64>,
    /// Read-only flag.
    pub read_only: Option<bool>,
    /// Queue attributes; `None` for partitions (they use their disk's queue).
    pub queue: Option<QueueAttrs>,
}

/// The I/O queue attributes of one block device (`/sys/block/<dev>/queue/*`). Each is `None`
/// when the kernel does not expose it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueAttrs {
    /// The active I/O scheduler (`none`, `mq-deadline`, `bfq`, `kyber`).
    pub scheduler: Option<String>,
    /// Every scheduler the device offers.
    pub schedulers: Vec<String>,
    /// Requests the scheduler queues per hardware queue (`nr_requests`).
    pub nr_requests: Option<u64>,
    /// Read-ahead in KiB.
    pub read_ahead_kb: Option<u64>,
    /// Largest request the block layer builds, in KiB (`max_sectors_kb`).
    pub max_sectors_kb: Option<u64>,
    /// `true` for spinning disks (as the kernel believes; virtual disks often claim 1).
    pub rotational: Option<bool>,
    /// `write back` (a volatile cache: flushes matter) or `write through`.
    pub write_cache: Option<String>,
    /// Smallest addressable unit.
    pub logical_block_size_bytes: Option<u64>,
    /// Smallest unit written without read-modify-write.
    pub physical_block_size_bytes: Option<u64>,
    /// Preferred minimum request size (RAID chunk, physical block).
    pub minimum_io_size_bytes: Option<u64>,
    /// Preferred request size for streaming (RAID stripe width); 0 when not reported.
    pub optimal_io_size_bytes: Option<u64>,
    /// Largest discard the device accepts; 0 means no discard (TRIM/UNMAP) support.
    pub discard_max_bytes: Option<u64>,
    /// Discard granularity.
    pub discard_granularity_bytes: Option<u64>,
}

impl QueueAttrs {
    /// Whether the device accepts discards (`discard_max_bytes > 0`); `None` when unknown.
    pub fn discard_supported(&self) -> Option<bool> {
        self.discard_max_bytes.map(|b| b > 0)
    }
}
