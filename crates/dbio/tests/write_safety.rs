//! Writes refused anywhere in a device's whole stack: `dbio bench --device X
//! --allow-device-writes` and `dbio innodb pages --output-dir DIR` against real loop devices, a real
//! mounted ext4, a partition table (sfdisk, `losetup -P`) and a real swap area. Every
//! filesystem the refused commands could have destroyed is checked with `e2fsck -fn` after.
//!
//! Images live on /dev/shm (tmpfs, which has no block device), so the only thing in use in
//! each stack is what the test mounts or swaps on.

use crate::common::{require_root, LoopDev};

use crate::common::dbio;
use std::path::{Path, PathBuf};

/// Runs a tool and fails the test (with its stderr) if it fails.
fn sh(cmd: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn have(tool: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Fails the test unless it runs as root with `tools` on PATH.
fn require(tools: &[&str]) {
    require_root("loop devices, mounts");
    for t in tools {
        assert!(have(t), "needs {t} (scripts/setup-test-env.sh installs it)");
    }
}

/// A scratch directory on tmpfs.
fn shm() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dbio-stack-")
        .tempdir_in("/dev/shm")
        .unwrap()
}

fn name(dev: &str) -> &str {
    dev.trim_start_matches("/dev/")
}

/// A mount, unmounted on drop (retrying while busy, lazily as a last resort).
struct Mounted(PathBuf);

impl Mounted {
    fn new(dev: &str, at: &Path) -> Mounted {
        std::fs::create_dir_all(at).unwrap();
        sh("mount", &[dev, at.to_str().unwrap()]);
        Mounted(at.to_path_buf())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        for _ in 0..50 {
            let st = std::process::Command::new("umount")
                .arg(&self.0)
                .stderr(std::process::Stdio::null())
                .status();
            if st.map(|s| s.success()).unwrap_or(false) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// An active swap area, swapped off on drop.
struct Swap(String);

impl Drop for Swap {
    fn drop(&mut self) {
        let _ = std::process::Command::new("swapoff").arg(&self.0).status();
    }
}

fn blank(dir: &Path, file: &str, mb: u64) -> PathBuf {
    let p = dir.join(file);
    std::fs::File::create(&p)
        .unwrap()
        .set_len(mb << 20)
        .unwrap();
    p
}

/// A 64 MiB image with two partitions (16 MiB at 1 MiB, 16 MiB at 20 MiB).
fn partitioned(dir: &Path) -> PathBuf {
    let img = blank(dir, "disk.img", 64);
    let mut sf = std::process::Command::new("sfdisk")
        .args(["-q", img.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    sf.stdin
        .take()
        .unwrap()
        .write_all(
            b"label: dos\nstart=2048, size=32768, type=83\nstart=40960, size=32768, type=83\n",
        )
        .unwrap();
    assert!(sf.wait().unwrap().success());
    img
}

/// `losetup -P` and wait until both partition nodes exist.
fn attach_partitioned(img: &Path) -> (LoopDev, String, String) {
    let lo = LoopDev::attach(img, &["-P"]);
    let (p1, p2) = (format!("{}p1", lo.dev), format!("{}p2", lo.dev));
    for i in 0..50 {
        if Path::new(&p1).exists() && Path::new(&p2).exists() {
            break;
        }
        if i == 5 {
            let _ = std::process::Command::new("partx")
                .args(["-a", &lo.dev])
                .status();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(Path::new(&p2).exists(), "{p2} did not appear");
    (lo, p1, p2)
}

/// `dbio bench --device DEV --mode rndwr --allow-device-writes`: must be refused (exit 2).
/// Returns stderr.
fn bench_write_refused(dev: &str) -> String {
    let out = dbio()
        .args([
            "bench",
            "--device",
            dev,
            "--mode",
            "rndwr",
            "--allow-device-writes",
            "--time",
            "1",
            "--file-total-size",
            "8M",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "writing to {dev} must be refused: {err}"
    );
    assert!(err.contains("refusing to write to"), "{err}");
    assert!(err.contains(dev), "{err}");
    err
}

/// `e2fsck -fn` passes: the filesystem was not touched.
fn fsck_clean(dev: &str) {
    let out = std::process::Command::new("e2fsck")
        .args(["-fn", dev])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the ext4 on {dev} was damaged: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// loop2 over loop0, loop0 mounted: the reproduction of the issue. Also a second loop
/// over the same image file, and a loop over a file that lives on the mounted filesystem.
#[test]
#[ignore = "needs root, loop devices, mkfs.ext4, e2fsck; scripts/test.sh runs it"]
fn bench_refuses_devices_stacked_on_a_mounted_one() {
    require(&["mkfs.ext4", "e2fsck"]);
    let dir = shm();
    let img = blank(dir.path(), "fs.img", 64);
    sh("mkfs.ext4", &["-q", "-F", img.to_str().unwrap()]);
    let l0 = LoopDev::attach(&img, &[]);
    let mnt = dir.path().join("mnt");
    let m = Mounted::new(&l0.dev, &mnt);
    let inner = blank(&mnt, "inner.img", 16);
    let l2 = LoopDev::attach(Path::new(&l0.dev), &[]);
    let same = LoopDev::attach(&img, &[]);
    let l3 = LoopDev::attach(&inner, &[]);
    let mp = mnt.display().to_string();

    // Over the mounted device itself.
    let e = bench_write_refused(&l2.dev);
    let chain = format!("{} -> {} (", name(&l2.dev), name(&l0.dev));
    assert!(e.contains(&chain), "want {chain:?} in: {e}");
    assert!(e.contains(&format!("mounted on {mp}")), "{e}");
    assert!(e.contains(&format!("unmount {mp}")), "{e}");

    // A second loop device over the same image file.
    let e = bench_write_refused(&same.dev);
    let chain = format!(
        "{} -> {} <- {} (",
        name(&same.dev),
        img.display(),
        name(&l0.dev)
    );
    assert!(e.contains(&chain), "want {chain:?} in: {e}");

    // Over a file that lives on the mounted filesystem: it counts as that filesystem's device.
    let e = bench_write_refused(&l3.dev);
    let chain = format!(
        "{} -> {} -> {} (",
        name(&l3.dev),
        inner.display(),
        name(&l0.dev)
    );
    assert!(e.contains(&chain), "want {chain:?} in: {e}");
    assert!(e.contains(&format!("mounted on {mp}")), "{e}");

    // The bottom of the stack, with something built on it but nothing mounted there: loop2 is
    // a loop device over it.
    drop(l3);
    drop(m);
    drop(same);
    let e = bench_write_refused(&l0.dev);
    let chain = format!("{} <- {} (", name(&l0.dev), name(&l2.dev));
    assert!(e.contains(&chain), "want {chain:?} in: {e}");
    fsck_clean(&l0.dev);
}

/// A partitioned disk with its first partition mounted: the disk and the other partition are
/// refused too.
#[test]
#[ignore = "needs root, loop devices, sfdisk, mkfs.ext4, e2fsck; scripts/test.sh runs it"]
fn bench_refuses_the_disk_and_sibling_partitions_of_a_mounted_partition() {
    require(&["sfdisk", "mkfs.ext4", "e2fsck"]);
    let dir = shm();
    let img = partitioned(dir.path());
    let (lo, p1, p2) = attach_partitioned(&img);
    sh("mkfs.ext4", &["-q", "-F", &p1]);
    let mnt = dir.path().join("mnt");
    let m = Mounted::new(&p1, &mnt);
    let mp = mnt.display().to_string();

    let e = bench_write_refused(&p2);
    let chain = format!("{} -> {} <- {} (", name(&p2), name(&lo.dev), name(&p1));
    assert!(e.contains(&chain), "want {chain:?} in: {e}");
    assert!(e.contains(&format!("mounted on {mp}")), "{e}");

    let e = bench_write_refused(&lo.dev);
    let chain = format!("{} <- {} (", name(&lo.dev), name(&p1));
    assert!(e.contains(&chain), "want {chain:?} in: {e}");

    // A loop device over the partitioned one: three levels down to the mount.
    let top = LoopDev::attach(Path::new(&lo.dev), &[]);
    let e = bench_write_refused(&top.dev);
    let chain = format!("{} -> {} <- {} (", name(&top.dev), name(&lo.dev), name(&p1));
    assert!(e.contains(&chain), "want {chain:?} in: {e}");
    drop(top);
    drop(m);
    fsck_clean(&p1);
}

/// A device used as swap: the message says swapoff, not unmount.
#[test]
#[ignore = "needs root, loop devices, mkswap, swapon, swapoff; scripts/test.sh runs it"]
fn bench_refuses_swap_and_says_swapoff() {
    require(&["mkswap", "swapon", "swapoff"]);
    let dir = shm();
    let img = blank(dir.path(), "swap.img", 16);
    let lo = LoopDev::attach(&img, &[]);
    sh("mkswap", &[&lo.dev]);
    sh("swapon", &[&lo.dev]);
    let sw = Swap(lo.dev.clone());
    let top = LoopDev::attach(Path::new(&lo.dev), &[]);

    let e = bench_write_refused(&lo.dev);
    assert!(e.contains("swapoff"), "{e}");
    assert!(!e.contains("unmount"), "{e}");
    let e = bench_write_refused(&top.dev);
    let chain = format!("{} -> {} (", name(&top.dev), name(&lo.dev));
    assert!(e.contains(&chain), "want {chain:?} in: {e}");
    assert!(e.contains(&format!("swapoff {}", lo.dev)), "{e}");
    drop(top);
    drop(sw);
    // The swap signature survived.
    let blkid = std::process::Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "TYPE", &lo.dev])
        .output()
        .unwrap();
    if blkid.status.success() {
        assert_eq!(String::from_utf8_lossy(&blkid.stdout).trim(), "swap");
    }
}

/// `innodb pages` of a loop device over a disk (and over its image) whose partition is
/// mounted, with --output-dir on that partition: refused, nothing written.
#[test]
#[ignore = "needs root, loop devices, sfdisk, mkfs.ext4, e2fsck; scripts/test.sh runs it"]
fn innodb_pages_refuses_out_on_a_partition_of_the_scanned_disk() {
    require(&["sfdisk", "mkfs.ext4", "e2fsck"]);
    let dir = shm();
    let img = partitioned(dir.path());
    let (lo, p1, _p2) = attach_partitioned(&img);
    sh("mkfs.ext4", &["-q", "-F", &p1]);
    let mnt = dir.path().join("mnt");
    let m = Mounted::new(&p1, &mnt);
    let over_dev = LoopDev::attach(Path::new(&lo.dev), &["-r"]);
    let over_img = LoopDev::attach(&img, &["-r"]);

    for (src, chain) in [
        (
            &over_dev.dev,
            format!("{} -> {}", name(&over_dev.dev), name(&lo.dev)),
        ),
        (
            &over_img.dev,
            format!(
                "{} -> {} <- {}",
                name(&over_img.dev),
                img.display(),
                name(&lo.dev)
            ),
        ),
    ] {
        let out = mnt.join("recovered");
        let o = dbio()
            .args(["innodb", "pages", src, "--output-dir"])
            .arg(&out)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{src}: {e}");
        assert!(e.contains("--allow-same-device"), "{e}");
        assert!(e.contains(&chain), "want {chain:?} in: {e}");
        assert!(e.contains(&format!("<- {}", name(&p1))), "{e}");
        assert!(!out.exists(), "nothing may be written when refused");
    }
    drop(over_img);
    drop(over_dev);
    drop(m);
    fsck_clean(&p1);
}

/// A process in its own mount namespace, killed on drop (which unmounts what it mounted).
struct Namespace(std::process::Child);

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the kernel refuses an exclusive open of `dev` (it is mounted somewhere).
fn excl_busy(dev: &str) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    matches!(
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(dev),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY)
    )
}

/// loop0 mounted in another mount namespace (invisible in our mountinfo), loop2 over it: the
/// kernel's exclusive-open check on loop0 still refuses the write to loop2.
#[test]
#[ignore = "needs root, loop devices, mkfs.ext4, e2fsck, unshare; scripts/test.sh runs it"]
fn bench_refuses_a_device_over_one_mounted_in_another_namespace() {
    require(&["mkfs.ext4", "e2fsck", "unshare"]);
    let dir = shm();
    let img = blank(dir.path(), "fs.img", 64);
    sh("mkfs.ext4", &["-q", "-F", img.to_str().unwrap()]);
    let l0 = LoopDev::attach(&img, &[]);
    let l2 = LoopDev::attach(Path::new(&l0.dev), &[]);
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ns = Namespace(
        std::process::Command::new("unshare")
            .args([
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                &format!("mount {} '{}' && exec sleep 60", l0.dev, mnt.display()),
            ])
            .spawn()
            .unwrap(),
    );
    let mut busy = false;
    for _ in 0..100 {
        if excl_busy(&l0.dev) {
            busy = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(busy, "the mount in the other namespace did not happen");
    let e = bench_write_refused(&l2.dev);
    let chain = format!("{} -> {} (busy", name(&l2.dev), name(&l0.dev));
    assert!(e.contains(&chain), "want {chain:?} in: {e}");
    assert!(e.contains("another mount namespace"), "{e}");
    drop(ns);
    drop(l2);
    fsck_clean(&l0.dev);
}
