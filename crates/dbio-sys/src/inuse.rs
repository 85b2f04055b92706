//! Whether writing to a block device, or into a directory, would land on something in use
//! anywhere in the device's whole stack.
//!
//! A device stack is a graph. Each block device sits **on** what is below it: a partition on
//! its disk, a dm or md device on its sysfs `slaves/`, a loop device on its backing device or
//! backing file, and a file on the device of the filesystem it lives on. Each carries what is
//! **above** it: its partitions, its sysfs `holders/` (dm, md, LVM), the loop devices backed by
//! it. The *whole stack* of a device is everything below it, plus everything above any of
//! those: writing to a partition writes to its disk, so the disk's other partitions (and
//! whatever is built on them) are part of the partition's stack.
//!
//! Chains name the way from the device asked about to the one in use, with `A -> B` for "A is
//! on B" and `A <- B` for "B is on A": `loop2 -> loop0 (mounted on /mnt, ext4)`,
//! `vdb1 -> vdb <- vdb2 (mounted on /boot, ext4)`, `loop3 -> /srv/disk.img -> vda (...)`.
//!
//! The walk is pure over a [`Sys`] root (fixture trees in the unit tests); only the exclusive
//! open that asks the kernel, and `stat` of backing files and mount sources, touch the live
//! system.

use crate::mounts::{
    block_dev_numbers, mount_for, name_of_dev, parse_swaps, read_mountinfo_in, MountEntry,
    SwapEntry,
};
use crate::sysfs::{parse_major_minor, parse_uevent, read_attr, Sys};
use crate::Error;
use std::collections::VecDeque;
use std::fmt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// One node of a device stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    /// A block device, by kernel name (`vda1`, `dm-0`, `loop2`).
    Device(String),
    /// A regular file backing a loop device, or scanned as a source (absolute path).
    File(String),
    /// A filesystem with no block device under it (tmpfs, ramfs, NFS, overlay), by the
    /// `major:minor` its files report, with its type.
    Filesystem {
        /// `major:minor` (`0:25`).
        dev: String,
        /// Filesystem type (`tmpfs`).
        fstype: String,
    },
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Device(n) => f.write_str(n),
            Node::File(p) => f.write_str(p),
            Node::Filesystem { dev, fstype } => write!(f, "{fstype} {dev}"),
        }
    }
}

/// How a node was reached from the previous one in a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// The previous node is on this one.
    Down,
    /// This one is a partition of the previous one.
    Partition,
    /// This one is in the previous one's `holders/` (dm, md).
    Holder,
    /// This one is a loop device backed by the previous one.
    Loop,
}

struct Reached {
    node: Node,
    from: Option<(usize, Link)>,
    /// Reached only by going up from the start (built on it, or one of its partitions).
    above_start: bool,
}

/// The nodes reached from a start node, in breadth-first order, each with the way back.
struct Walk {
    nodes: Vec<Reached>,
}

impl Walk {
    fn new(start: Node) -> Walk {
        Walk {
            nodes: vec![Reached {
                node: start,
                from: None,
                above_start: false,
            }],
        }
    }

    fn index_of(&self, n: &Node) -> Option<usize> {
        self.nodes.iter().position(|r| &r.node == n)
    }

    /// `loop2 -> loop0 <- loop0p1`: the way from the start to node `i`.
    fn chain(&self, i: usize) -> String {
        let mut steps = Vec::new();
        let mut at = i;
        while let Some((prev, link)) = self.nodes[at].from {
            steps.push((link, at));
            at = prev;
        }
        let mut s = self.nodes[at].node.to_string();
        for (link, n) in steps.into_iter().rev() {
            s.push_str(if link == Link::Down { " -> " } else { " <- " });
            s.push_str(&self.nodes[n].node.to_string());
        }
        s
    }

    fn parent(&self, i: usize) -> Option<(&Node, Link)> {
        self.nodes[i].from.map(|(p, l)| (&self.nodes[p].node, l))
    }
}

/// The stack graph of one system: sysfs under a [`Sys`] root and its mount table.
pub(crate) struct Graph<'a> {
    sys: &'a Sys,
    mounts: &'a [MountEntry],
    /// Every bound loop device and what it is backed by.
    loops: Vec<(String, Node)>,
}

impl<'a> Graph<'a> {
    pub(crate) fn new(sys: &'a Sys, mounts: &'a [MountEntry]) -> Graph<'a> {
        let loops = sys
            .block_devices()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|n| {
                let b = read_attr(&sys.class_block(&n).join("loop/backing_file"))?;
                let b = b
                    .strip_suffix(" (deleted)")
                    .unwrap_or(&b)
                    .trim()
                    .to_string();
                if b.is_empty() {
                    return None;
                }
                let node = match device_at(sys, &b) {
                    Some(d) => Node::Device(d),
                    None => Node::File(b),
                };
                Some((n, node))
            })
            .collect();
        Graph { sys, mounts, loops }
    }

    /// What `n` is on: a partition's disk, `slaves/`, a loop device's backing device or file,
    /// a file's filesystem.
    fn down(&self, n: &Node) -> Vec<Node> {
        match n {
            Node::Device(name) => {
                let dir = self.sys.class_block(name);
                let mut out = Vec::new();
                if dir.join("partition").exists() {
                    if let Some(disk) = std::fs::canonicalize(&dir).ok().and_then(|p| {
                        p.parent()
                            .and_then(|p| p.file_name())
                            .map(|s| s.to_string_lossy().into_owned())
                    }) {
                        out.push(Node::Device(disk));
                    }
                }
                out.extend(entries(&dir.join("slaves")).into_iter().map(Node::Device));
                out.extend(
                    self.loops
                        .iter()
                        .filter(|(l, _)| l == name)
                        .map(|(_, b)| b.clone()),
                );
                out
            }
            Node::File(p) => {
                let entry = mount_for(self.mounts, Path::new(p));
                let (ma, mi) = match std::fs::metadata(self.sys.path(p)) {
                    Ok(m) => crate::dev_major_minor(m.dev()),
                    Err(_) => match entry {
                        Some(e) => (e.major, e.minor),
                        None => return Vec::new(),
                    },
                };
                vec![self.fs_node(ma, mi, entry)]
            }
            Node::Filesystem { .. } => Vec::new(),
        }
    }

    /// What is on `n`: partitions, `holders/`, loop devices backed by it.
    fn up(&self, n: &Node) -> Vec<(Node, Link)> {
        let mut out = Vec::new();
        if let Node::Device(name) = n {
            let dir = self.sys.class_block(name);
            out.extend(
                partitions(&dir)
                    .into_iter()
                    .map(|p| (Node::Device(p), Link::Partition)),
            );
            out.extend(
                entries(&dir.join("holders"))
                    .into_iter()
                    .map(|h| (Node::Device(h), Link::Holder)),
            );
        }
        if matches!(n, Node::Device(_) | Node::File(_)) {
            out.extend(
                self.loops
                    .iter()
                    .filter(|(_, b)| b == n)
                    .map(|(l, _)| (Node::Device(l.clone()), Link::Loop)),
            );
        }
        out
    }

    /// The node for a filesystem whose files report `major:minor`: its block device, else the
    /// device its mount source names (btrfs reports an anonymous `0:xx`), else the filesystem.
    fn fs_node(&self, ma: u32, mi: u32, entry: Option<&MountEntry>) -> Node {
        if ma != 0 {
            if let Some(n) = name_of_dev(self.sys, ma, mi) {
                return Node::Device(n);
            }
        }
        if let Some(n) = entry
            .filter(|e| e.source.starts_with('/'))
            .and_then(|e| device_at(self.sys, &e.source))
        {
            return Node::Device(n);
        }
        let fstype = self
            .mounts
            .iter()
            .find(|e| (e.major, e.minor) == (ma, mi))
            .or(entry)
            .map(|e| e.fstype.clone())
            .unwrap_or_else(|| "filesystem".into());
        Node::Filesystem {
            dev: format!("{ma}:{mi}"),
            fstype,
        }
    }

    /// `start` and everything below it.
    fn below(&self, start: Node) -> Walk {
        let mut w = Walk::new(start);
        let mut i = 0;
        while i < w.nodes.len() {
            for n in self.down(&w.nodes[i].node) {
                if w.index_of(&n).is_none() {
                    w.nodes.push(Reached {
                        node: n,
                        from: Some((i, Link::Down)),
                        above_start: false,
                    });
                }
            }
            i += 1;
        }
        w
    }

    /// The whole stack of `start`: everything below it, and everything above any of those.
    /// What is above `start` itself is explored first, so its chains go through `start`.
    fn whole(&self, start: Node) -> Walk {
        let mut w = self.below(start);
        let lower = w.nodes.len();
        for base in 0..lower {
            let mut todo = VecDeque::from([base]);
            while let Some(i) = todo.pop_front() {
                for (n, link) in self.up(&w.nodes[i].node) {
                    if w.index_of(&n).is_none() {
                        w.nodes.push(Reached {
                            node: n,
                            from: Some((i, link)),
                            above_start: base == 0,
                        });
                        todo.push_back(w.nodes.len() - 1);
                    }
                }
            }
        }
        w
    }

    fn dev_numbers(&self, name: &str) -> Option<(u32, u32)> {
        read_attr(&self.sys.class_block(name).join("dev"))
            .as_deref()
            .and_then(parse_major_minor)
    }

    /// Whether the path (a mount source, a swap file name) is the node of device `name`.
    fn names_device(&self, path: &str, name: &str) -> bool {
        path.starts_with('/') && device_at(self.sys, path).as_deref() == Some(name)
    }
}

/// Sorted entry names of a directory (empty when it does not exist).
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Partitions of the device whose sysfs directory is `dir` (subdirectories with a
/// `partition` file), sorted.
fn partitions(dir: &Path) -> Vec<String> {
    entries(dir)
        .into_iter()
        .filter(|e| dir.join(e).join("partition").exists())
        .collect()
}

/// The kernel name of the block device whose node is `path` (`/dev/loop0`): its `st_rdev`
/// when it exists under the root; else, for a fixture root without device nodes, a bare
/// `/dev/NAME` that sysfs knows.
fn device_at(sys: &Sys, path: &str) -> Option<String> {
    match std::fs::metadata(sys.path(path)) {
        Ok(m) if m.file_type().is_block_device() => {
            let (ma, mi) = crate::dev_major_minor(m.rdev());
            name_of_dev(sys, ma, mi)
        }
        Ok(_) => None,
        Err(_) => {
            let p = Path::new(path);
            let name = p.file_name()?.to_string_lossy().into_owned();
            (p.parent() == Some(Path::new("/dev")) && sys.class_block(&name).exists())
                .then_some(name)
        }
    }
}

/// Why a write target cannot be written: one or more chains from it to what is in use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InUse {
    /// What is in use, each with the chain that leads to it.
    pub findings: Vec<Finding>,
}

impl fmt::Display for InUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, x) in self.findings.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{x}")?;
        }
        Ok(())
    }
}

/// One thing in use in a device's stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The way from the target to it: `loop2 -> loop0`, `vdb1 -> vdb <- vdb2`.
    pub chain: String,
    /// What it is used for.
    pub reason: Reason,
}

/// How a device in a stack is in use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A filesystem on it is mounted.
    Mounted {
        /// Mount source (`/dev/loop0`).
        source: String,
        /// Where.
        mountpoint: String,
        /// Filesystem type.
        fstype: String,
        /// When the chain reached this filesystem through a loop device's backing file: the
        /// loop device and the file (writes land in that file, not on the raw device).
        through_file: Option<(String, String)>,
    },
    /// It is an active swap area.
    Swap {
        /// The swap device or file as `/proc/swaps` names it.
        filename: String,
    },
    /// Something is built on the target (dm, md, LVM, a loop device), mounted or not.
    BuiltOn {
        /// What is built on it (`dm-0`, `md0`, `loop2`).
        holder: String,
        /// Its device-mapper name (`vg-data`).
        dm_name: Option<String>,
        /// What it is built on (the target or one of its partitions).
        on: String,
    },
    /// The kernel refuses an exclusive open.
    Busy {
        /// The device node that was tried.
        node: String,
    },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.chain;
        match &self.reason {
            Reason::Mounted {
                mountpoint,
                fstype,
                through_file: Some((lo, file)),
                ..
            } => write!(
                f,
                "{c} (mounted on {mountpoint}, {fstype}): {lo} is backed by {file}, a file on \
                 that mounted filesystem, and writes to {lo} land in it; dbio writes only into \
                 files it created: detach {lo} (losetup -d) and give a directory to --dir instead"
            ),
            Reason::Mounted {
                mountpoint, fstype, ..
            } => write!(
                f,
                "{c} (mounted on {mountpoint}, {fstype}): unmount {mountpoint} first (writes \
                 would destroy a live filesystem)"
            ),
            Reason::Swap { filename } => write!(
                f,
                "{c} (active swap): swapoff {filename} first (writes would corrupt the memory \
                 swapped out to it)"
            ),
            Reason::BuiltOn {
                holder,
                dm_name,
                on,
            } => {
                let dm = dm_name
                    .as_ref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                write!(
                    f,
                    "{c} ({holder}{dm} is built on {on}): take {holder} down first (umount, \
                     vgchange -an, mdadm --stop, dmsetup remove or losetup -d, as it applies)"
                )
            }
            Reason::Busy { node } => write!(
                f,
                "{c} (busy: the kernel refuses an exclusive open of {node}): it is mounted in \
                 another mount namespace, used as swap, part of md/dm, or opened exclusively by \
                 another program; free it first"
            ),
        }
    }
}

/// What in the whole stack of device `target` is in use, pure over the graph: mounts and
/// swap anywhere in the stack first; else anything built on the target; else devices the
/// kernel refuses to open exclusively (`busy` answers that question for a device node name;
/// it is asked only for the target and for devices that nothing in sysfs claims, as md/dm
/// members are claimed by their own array).
pub(crate) fn write_target_findings(
    g: &Graph,
    swaps: &[SwapEntry],
    target: &str,
    busy: &dyn Fn(&str) -> Option<String>,
) -> Vec<Finding> {
    let w = g.whole(Node::Device(target.to_string()));
    let mut found = Vec::new();
    for (i, r) in w.nodes.iter().enumerate() {
        let chain = || w.chain(i);
        match &r.node {
            Node::Device(name) => {
                let mm = g.dev_numbers(name);
                if let Some(m) = g
                    .mounts
                    .iter()
                    .find(|m| Some((m.major, m.minor)) == mm || g.names_device(&m.source, name))
                {
                    let through_file = match w.parent(i) {
                        Some((Node::File(file), Link::Down)) => {
                            let pi = w.nodes[i].from.map(|(p, _)| p).unwrap_or(0);
                            w.parent(pi).map(|(lo, _)| (lo.to_string(), file.clone()))
                        }
                        _ => None,
                    };
                    found.push(Finding {
                        chain: chain(),
                        reason: Reason::Mounted {
                            source: m.source.clone(),
                            mountpoint: m.mountpoint.clone(),
                            fstype: m.fstype.clone(),
                            through_file,
                        },
                    });
                }
                if let Some(s) = swaps.iter().find(|s| g.names_device(&s.filename, name)) {
                    found.push(Finding {
                        chain: chain(),
                        reason: Reason::Swap {
                            filename: s.filename.clone(),
                        },
                    });
                }
            }
            Node::File(p) => {
                if let Some(s) = swaps.iter().find(|s| &s.filename == p) {
                    found.push(Finding {
                        chain: chain(),
                        reason: Reason::Swap {
                            filename: s.filename.clone(),
                        },
                    });
                }
            }
            Node::Filesystem { .. } => {}
        }
    }
    if !found.is_empty() {
        return found;
    }
    for (i, r) in w.nodes.iter().enumerate() {
        let (Node::Device(holder), Some((on, link))) = (&r.node, w.parent(i)) else {
            continue;
        };
        if r.above_start && matches!(link, Link::Holder | Link::Loop) {
            found.push(Finding {
                chain: w.chain(i),
                reason: Reason::BuiltOn {
                    holder: holder.clone(),
                    dm_name: read_attr(&g.sys.class_block(holder).join("dm/name")),
                    on: on.to_string(),
                },
            });
        }
    }
    if !found.is_empty() {
        return found;
    }
    for (i, r) in w.nodes.iter().enumerate() {
        let Node::Device(name) = &r.node else {
            continue;
        };
        let dir = g.sys.class_block(name);
        let claimed = !entries(&dir.join("holders")).is_empty()
            || partitions(&dir)
                .iter()
                .any(|p| !entries(&dir.join(p).join("holders")).is_empty());
        if i > 0 && claimed {
            continue;
        }
        if let Some(node) = busy(name) {
            found.push(Finding {
                chain: w.chain(i),
                reason: Reason::Busy { node },
            });
        }
    }
    found
}

/// Whether `dev` (a block device node) can be written without destroying data in use: `None`
/// when nothing in its whole stack is in use, else what is, with the chain to it.
///
/// In use means: a filesystem mounted, or swap, on any device of the stack (the devices
/// below it: a partition's disk, dm/md `slaves/`, a loop device's backing device, or for a
/// loop device over a file, the device of the filesystem that file lives on; and everything
/// above any of those: partitions, `holders/`, loop devices backed by them); or anything built
/// on the device or its partitions (dm, md, LVM, a loop device), mounted or not; or the kernel
/// refusing an exclusive open of the device or of a device of its stack that nothing in sysfs
/// claims (a mount in another mount namespace, swap, another exclusive opener).
pub fn device_in_use(dev: &Path) -> Result<Option<InUse>, Error> {
    let (major, minor) = block_dev_numbers(dev)?;
    let sys = Sys::live();
    let name = name_of_dev(&sys, major, minor).ok_or_else(|| Error::UnknownDevice {
        name: format!("{} ({major}:{minor})", dev.display()),
        known: sys.block_devices().unwrap_or_default().join(", "),
    })?;
    let mounts = read_mountinfo_in(&sys)?;
    let swaps = parse_swaps(&sys.read("proc/swaps").unwrap_or_default());
    let g = Graph::new(&sys, &mounts);
    let busy = |n: &str| -> Option<String> {
        let node = if n == name {
            dev.to_path_buf()
        } else {
            let devname = read_attr(&sys.class_block(n).join("uevent"))
                .map(|u| parse_uevent(&u))
                .and_then(|u| u.into_iter().find(|(k, _)| k == "DEVNAME").map(|(_, v)| v))
                .unwrap_or_else(|| n.to_string());
            sys.path("dev").join(devname)
        };
        match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
            .open(&node)
        {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Some(node.display().to_string()),
            _ => None,
        }
    };
    let findings = write_target_findings(&g, &swaps, &name, &busy);
    Ok((!findings.is_empty()).then_some(InUse { findings }))
}

/// Where a directory's filesystem and a scanned source share a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlap {
    /// The shared node (`loop0p1`, `vda`, `tmpfs 0:25`).
    pub shared: String,
    /// From the directory's filesystem down to the shared node: `loop0p1`,
    /// `loop7 -> /srv/x.img -> vda`.
    pub out_chain: String,
    /// From the source to the shared node through its whole stack: `loop2 -> loop0 <- loop0p1`.
    pub source_chain: String,
}

/// The first node of `out`'s filesystem or anything below it that is in the whole stack of
/// `source` (pure over the graph).
pub(crate) fn overlap_in(g: &Graph, out: Node, source: Node) -> Option<Overlap> {
    let o = g.below(out);
    let s = g.whole(source);
    o.nodes.iter().enumerate().find_map(|(i, r)| {
        s.index_of(&r.node).map(|j| Overlap {
            shared: r.node.to_string(),
            out_chain: o.chain(i),
            source_chain: s.chain(j),
        })
    })
}

/// Whether writing into directory `out` (or, when it does not exist yet, its nearest existing
/// parent) could overwrite the data of `source` (a block device or a file being scanned):
/// `Some` when the filesystem `out` is on, or any device below it, is in the whole stack of
/// `source` (see [`device_in_use`] for what the stack holds; a regular file's stack starts at
/// the file, with the loop devices backed by it above and its filesystem below).
pub fn output_overlap(out: &Path, source: &Path) -> Result<Option<Overlap>, Error> {
    let sys = Sys::live();
    let mounts = read_mountinfo_in(&sys)?;
    let g = Graph::new(&sys, &mounts);
    let canon = crate::mounts::nearest_existing(out)?;
    let md = std::fs::metadata(&canon).map_err(|e| Error::io(&canon, e))?;
    let (ma, mi) = crate::dev_major_minor(md.dev());
    let out_node = g.fs_node(ma, mi, mount_for(&mounts, &canon));
    let sm = std::fs::metadata(source).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound {
                path: source.to_path_buf(),
            }
        } else {
            Error::io(source, e)
        }
    })?;
    let src_node = if sm.file_type().is_block_device() {
        let (ma, mi) = crate::dev_major_minor(sm.rdev());
        Node::Device(
            name_of_dev(&sys, ma, mi).ok_or_else(|| Error::UnknownDevice {
                name: format!("{} ({ma}:{mi})", source.display()),
                known: sys.block_devices().unwrap_or_default().join(", "),
            })?,
        )
    } else {
        let c = std::fs::canonicalize(source).map_err(|e| Error::io(source, e))?;
        Node::File(c.to_string_lossy().into_owned())
    };
    Ok(overlap_in(&g, out_node, src_node))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    /// A fixture sysfs and mount table:
    /// - vda (254:0) holds `/`; /dev/shm is tmpfs (0:25);
    /// - loop0 over /dev/shm/fs.img, mounted on /mnt; loop2 over /dev/loop0; loop3 over
    ///   /mnt/inner.img (a file on loop0's filesystem); loop4 over the same fs.img as loop0;
    /// - loop5 over /dev/shm/free.img, loop6 over /dev/loop5 (nothing mounted);
    /// - loop7 over /dev/shm/swap.img, active swap; loop8 over /dev/loop7;
    /// - loop9 over /var/tmp/x.img (on the root filesystem), deleted;
    /// - vdb with partitions vdb1 (mounted on /boot) and vdb2.
    fn fixture() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let class = r.join("sys/class/block");
        let devblock = r.join("sys/dev/block");
        fs::create_dir_all(&class).unwrap();
        fs::create_dir_all(&devblock).unwrap();
        let mk = |rel: &str, name: &str, dev: &str, files: &[(&str, &str)]| {
            let d = r.join("sys/devices").join(rel);
            fs::create_dir_all(d.join("holders")).unwrap();
            fs::write(d.join("dev"), format!("{dev}\n")).unwrap();
            fs::write(d.join("uevent"), format!("DEVNAME={name}\n")).unwrap();
            for (f, v) in files {
                let p = d.join(f);
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(p, format!("{v}\n")).unwrap();
            }
            symlink(&d, class.join(name)).unwrap();
            symlink(&d, devblock.join(dev)).unwrap();
        };
        mk("pci/vda", "vda", "254:0", &[]);
        mk("pci/vdb", "vdb", "252:16", &[]);
        mk("pci/vdb/vdb1", "vdb1", "252:17", &[("partition", "1")]);
        mk("pci/vdb/vdb2", "vdb2", "252:18", &[("partition", "2")]);
        for (n, backing) in [
            (0, "/dev/shm/fs.img"),
            (2, "/dev/loop0"),
            (3, "/mnt/inner.img"),
            (4, "/dev/shm/fs.img"),
            (5, "/dev/shm/free.img"),
            (6, "/dev/loop5"),
            (7, "/dev/shm/swap.img"),
            (8, "/dev/loop7"),
            (9, "/var/tmp/x.img (deleted)"),
        ] {
            mk(
                &format!("virtual/block/loop{n}"),
                &format!("loop{n}"),
                &format!("7:{n}"),
                &[("loop/backing_file", backing)],
            );
        }
        mk("virtual/block/loop1", "loop1", "7:1", &[]);
        fs::create_dir_all(r.join("proc/self")).unwrap();
        fs::write(
            r.join("proc/self/mountinfo"),
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n\
             30 27 0:25 / /dev/shm rw - tmpfs tmpfs rw\n\
             60 27 7:0 / /mnt rw - ext4 /dev/loop0 rw\n\
             61 27 252:17 / /boot rw - ext4 /dev/vdb1 rw\n",
        )
        .unwrap();
        t
    }

    fn swaps() -> Vec<SwapEntry> {
        parse_swaps("Filename Type Size Used Priority\n/dev/loop7 partition 1 0 -2\n")
    }

    fn findings(sys: &Sys, target: &str, busy: &dyn Fn(&str) -> Option<String>) -> Vec<Finding> {
        let mi = read_mountinfo_in(sys).unwrap();
        let g = Graph::new(sys, &mi);
        write_target_findings(&g, &swaps(), target, busy)
    }

    fn never(_: &str) -> Option<String> {
        None
    }

    fn one(sys: &Sys, target: &str) -> Finding {
        let f = findings(sys, target, &never);
        assert_eq!(f.len(), 1, "{target}: {f:?}");
        f.into_iter().next().unwrap()
    }

    fn mounted_on(f: &Finding) -> &str {
        match &f.reason {
            Reason::Mounted { mountpoint, .. } => mountpoint,
            r => panic!("not a mount: {r:?}"),
        }
    }

    #[test]
    fn a_loop_device_over_a_mounted_one() {
        let t = fixture();
        let sys = Sys::at(t.path());
        let f = one(&sys, "loop2");
        assert_eq!(f.chain, "loop2 -> loop0");
        assert_eq!(mounted_on(&f), "/mnt");
        assert_eq!(
            f.to_string(),
            "loop2 -> loop0 (mounted on /mnt, ext4): unmount /mnt first (writes would destroy \
             a live filesystem)"
        );
        // The mounted device itself.
        let f = one(&sys, "loop0");
        assert_eq!(f.chain, "loop0");
        assert_eq!(mounted_on(&f), "/mnt");
    }

    #[test]
    fn loop_devices_over_files() {
        let t = fixture();
        let sys = Sys::at(t.path());
        // A second loop device over the mounted one's image file.
        let f = one(&sys, "loop4");
        assert_eq!(f.chain, "loop4 -> /dev/shm/fs.img <- loop0");
        assert_eq!(mounted_on(&f), "/mnt");
        // A file on the mounted filesystem counts as that filesystem's device.
        let f = one(&sys, "loop3");
        assert_eq!(f.chain, "loop3 -> /mnt/inner.img -> loop0");
        match &f.reason {
            Reason::Mounted { through_file, .. } => assert_eq!(
                through_file,
                &Some(("loop3".to_string(), "/mnt/inner.img".to_string()))
            ),
            r => panic!("{r:?}"),
        }
        assert!(f.to_string().contains("detach loop3 (losetup -d)"), "{f}");
        // So does a (deleted) file on the root filesystem.
        let f = one(&sys, "loop9");
        assert_eq!(f.chain, "loop9 -> /var/tmp/x.img -> vda");
        assert_eq!(mounted_on(&f), "/");
        // A file on tmpfs, which has no block device: nothing under it is in use.
        assert_eq!(findings(&sys, "loop6", &never), vec![]);
    }

    #[test]
    fn what_is_built_on_the_target_counts_mounted_or_not() {
        let t = fixture();
        let sys = Sys::at(t.path());
        let f = one(&sys, "loop5");
        assert_eq!(f.chain, "loop5 <- loop6");
        assert_eq!(
            f.reason,
            Reason::BuiltOn {
                holder: "loop6".into(),
                dm_name: None,
                on: "loop5".into()
            }
        );
        assert!(f.to_string().contains("take loop6 down first"), "{f}");
    }

    #[test]
    fn partitions_of_the_same_disk() {
        let t = fixture();
        let sys = Sys::at(t.path());
        let f = one(&sys, "vdb2");
        assert_eq!(f.chain, "vdb2 -> vdb <- vdb1");
        assert_eq!(mounted_on(&f), "/boot");
        assert_eq!(one(&sys, "vdb").chain, "vdb <- vdb1");
        assert_eq!(one(&sys, "vdb1").chain, "vdb1");
    }

    #[test]
    fn swap_says_swapoff() {
        let t = fixture();
        let sys = Sys::at(t.path());
        let f = one(&sys, "loop8");
        assert_eq!(f.chain, "loop8 -> loop7");
        assert_eq!(
            f.to_string(),
            "loop8 -> loop7 (active swap): swapoff /dev/loop7 first (writes would corrupt the \
             memory swapped out to it)"
        );
        assert!(!one(&sys, "loop7").to_string().contains("unmount"));
    }

    #[test]
    fn busy_is_asked_only_where_nothing_in_sysfs_explains_it() {
        let t = fixture();
        let sys = Sys::at(t.path());
        let asked = std::cell::RefCell::new(Vec::new());
        let busy = |n: &str| {
            asked.borrow_mut().push(n.to_string());
            (n == "loop5").then(|| "/dev/loop5".to_string())
        };
        let f = findings(&sys, "loop6", &busy);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].chain, "loop6 -> loop5");
        assert!(f[0]
            .to_string()
            .contains("mounted in another mount namespace"));
        assert_eq!(*asked.borrow(), vec!["loop6", "loop5"]);
        // A device an md array claims is not asked: the array is (it is in the stack).
        let r = t.path();
        let md = r.join("sys/devices/virtual/block/md0");
        fs::create_dir_all(md.join("slaves")).unwrap();
        fs::create_dir_all(md.join("holders")).unwrap();
        fs::write(md.join("dev"), "9:0\n").unwrap();
        symlink(&md, r.join("sys/class/block/md0")).unwrap();
        symlink(&md, r.join("sys/dev/block/9:0")).unwrap();
        let vdb2 = r.join("sys/devices/pci/vdb/vdb2");
        symlink(&md, vdb2.join("holders/md0")).unwrap();
        symlink(&vdb2, md.join("slaves/vdb2")).unwrap();
        fs::write(r.join("proc/self/mountinfo"), "").unwrap();
        asked.borrow_mut().clear();
        assert_eq!(findings(&sys, "md0", &busy), vec![]);
        assert_eq!(*asked.borrow(), vec!["md0", "vdb1"]);
    }

    #[test]
    fn overlap_of_an_output_directory_and_a_source() {
        let t = fixture();
        let sys = Sys::at(t.path());
        let mi = read_mountinfo_in(&sys).unwrap();
        let g = Graph::new(&sys, &mi);
        let dev = |n: &str| Node::Device(n.to_string());
        let shm = Node::Filesystem {
            dev: "0:25".into(),
            fstype: "tmpfs".into(),
        };
        // Out on loop0's filesystem, scanning loop2 (a loop device over loop0).
        let o = overlap_in(&g, dev("loop0"), dev("loop2")).unwrap();
        assert_eq!(
            (
                o.shared.as_str(),
                o.out_chain.as_str(),
                o.source_chain.as_str()
            ),
            ("loop0", "loop0", "loop2 -> loop0")
        );
        // Out on a sibling partition of the scanned one.
        let o = overlap_in(&g, dev("vdb1"), dev("vdb2")).unwrap();
        assert_eq!(o.source_chain, "vdb2 -> vdb <- vdb1");
        // Out on tmpfs, scanning a loop device over a file on that tmpfs.
        let o = overlap_in(&g, shm.clone(), dev("loop6")).unwrap();
        assert_eq!(o.shared, "tmpfs 0:25");
        assert_eq!(
            o.source_chain,
            "loop6 -> loop5 -> /dev/shm/free.img -> tmpfs 0:25"
        );
        // Out on a loop device whose image lives on the scanned disk's filesystem.
        let o = overlap_in(&g, dev("loop9"), dev("vda")).unwrap();
        assert_eq!(o.out_chain, "loop9 -> /var/tmp/x.img -> vda");
        assert_eq!(o.source_chain, "vda");
        // A scanned file, with out on a loop device over that very file.
        let o = overlap_in(&g, dev("loop4"), Node::File("/dev/shm/fs.img".into())).unwrap();
        assert_eq!(o.shared, "loop4");
        assert_eq!(o.source_chain, "/dev/shm/fs.img <- loop4");
        // Nothing shared.
        assert_eq!(overlap_in(&g, shm, dev("vdb2")), None);
        assert_eq!(overlap_in(&g, dev("vdb1"), dev("loop5")), None);
    }

    #[test]
    fn in_use_through_partition_and_holders() {
        let t = crate::stack::tests::fixture();
        let sys = Sys::at(t.path());
        let mi = read_mountinfo_in(&sys).unwrap();
        let never = |_: &str| None;
        let g = crate::inuse::Graph::new(&sys, &mi);
        let chains = |name: &str| -> Vec<String> {
            crate::inuse::write_target_findings(&g, &[], name, &never)
                .iter()
                .map(|f| f.to_string())
                .collect()
        };
        // vdb -> vdb1 -> md0 -> dm-0, mounted on /var/lib/mysql.
        let u = chains("vdb");
        assert_eq!(u.len(), 1, "{u:?}");
        assert!(
            u[0].starts_with("vdb <- vdb1 <- md0 <- dm-0 (mounted on /var/lib/mysql, xfs)"),
            "{u:?}"
        );
        assert!(chains("vdc1")[0].starts_with("vdc1 <- md0 <- dm-0 (mounted"));
        // vdb2 is on vdb, whose other partition carries the mounted volume.
        assert!(chains("vdb2")[0].starts_with("vdb2 -> vdb <- vdb1 <- md0 <- dm-0 (mounted"));
        // dm-0 itself, and md0 under it.
        assert!(chains("dm-0")[0].starts_with("dm-0 (mounted on /var/lib/mysql"));
        assert!(chains("md0")[0].starts_with("md0 <- dm-0 (mounted"));
        // Not mounted: what is built on the target still makes it in use.
        let mi2: Vec<_> = mi.into_iter().filter(|m| m.major != 253).collect();
        let g = crate::inuse::Graph::new(&sys, &mi2);
        let chains = |name: &str| -> Vec<String> {
            crate::inuse::write_target_findings(&g, &[], name, &never)
                .iter()
                .map(|f| f.to_string())
                .collect()
        };
        assert!(
            chains("vdc")[0].starts_with("vdc <- vdc1 <- md0 (md0 is built on vdc1)"),
            "{:?}",
            chains("vdc")
        );
        let h = chains("md0");
        assert!(
            h[0].contains("md0 <- dm-0 (dm-0 (vg-mysql) is built on md0)"),
            "{h:?}"
        );
        // vdb2: nothing mounted in its stack, nothing built on it.
        assert!(chains("vdb2").is_empty());
        assert!(chains("dm-0").is_empty());
    }

    #[test]
    #[ignore = "needs / on a block device node (the test machine's root disk); scripts/test.sh runs it"]
    fn live_root_disk_is_in_use() {
        let mi = crate::mounts::read_mountinfo().unwrap();
        let root = mount_for(&mi, Path::new("/")).unwrap();
        assert!(
            root.source.starts_with("/dev/") && Path::new(&root.source).exists(),
            "root is not on a block device node here: {}",
            root.source
        );
        let used = crate::inuse::device_in_use(Path::new(&root.source))
            .unwrap()
            .map(|u| u.to_string());
        assert!(
            used.as_deref().unwrap_or("").contains("mounted on /"),
            "{used:?}"
        );
        assert!(matches!(
            crate::inuse::device_in_use(Path::new("/dev/null")),
            Err(Error::NotBlockDevice { .. })
        ));
        assert!(matches!(
            crate::inuse::device_in_use(Path::new("/dev/does-not-exist")),
            Err(Error::NotFound { .. })
        ));
    }
}
