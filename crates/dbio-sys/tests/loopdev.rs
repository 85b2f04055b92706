//! Real block devices: a loop device with a partition table (sfdisk) and an ext4 filesystem on
//! its first partition, mounted. Needs root and losetup/sfdisk/mkfs.ext4: ignored by a plain
//! `cargo test`, run (and failing when a prerequisite is missing) by scripts/test.sh.

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    if !out.status.success() {
        eprintln!("{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Detaches the loop device and unmounts on drop, even when an assertion fails.
struct Loop {
    dev: String,
    mnt: Option<PathBuf>,
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = &self.mnt {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
#[ignore = "needs root, losetup, sfdisk, mkfs.ext4 and unshare; scripts/test.sh runs it"]
fn partitioned_loop_device_mounted_and_not() {
    let uid = run("id", &["-u"]).unwrap_or_default();
    assert_eq!(uid, "0", "needs root (loop devices, mounts)");
    assert!(
        run("sfdisk", &["--version"]).is_some(),
        "needs sfdisk (util-linux; scripts/setup-test-env.sh installs it)"
    );
    // On tmpfs (no block device under it): a loop device over a file on a mounted block
    // filesystem counts as that filesystem's device, which is always in use.
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let img = dir.path().join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let img_s = img.to_str().unwrap();
    let mut child = Command::new("sfdisk")
        .args(["-q", img_s])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"label: dos\nstart=2048, size=40960, type=83\n")
        .unwrap();
    assert!(child.wait().unwrap().success());
    let dev = run("losetup", &["-f", "--show", "-P", img_s]).expect("losetup");
    let mut lp = Loop {
        dev: dev.clone(),
        mnt: None,
    };
    let part = format!("{dev}p1");
    for i in 0..50 {
        if Path::new(&part).exists() {
            break;
        }
        if i == 5 {
            // Some kernels/containers do not scan at attach time: ask explicitly.
            run("partx", &["-a", &dev]);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(Path::new(&part).exists(), "{part} did not appear");
    let name = dev.trim_start_matches("/dev/").to_string();

    // Not mounted: free.
    assert_eq!(in_use(Path::new(&dev)).unwrap(), None);

    // Device stack of the bare loop device: loop (leaf).
    let st = dbio_sys::stack::resolve_device(Path::new(&dev)).unwrap();
    assert_eq!(st.devices[0].name, name);
    assert_eq!(st.devices[0].kind, dbio_schema::stack::DeviceKind::Loop);
    assert_eq!(
        st.devices[0].loop_backing_file.as_deref(),
        Some(img.canonicalize().unwrap().to_str().unwrap())
    );

    run("mkfs.ext4", &["-q", "-F", &part]).expect("mkfs.ext4");
    let mnt = dir.path().join("mnt dir");
    std::fs::create_dir(&mnt).unwrap();
    run("mount", &[&part, mnt.to_str().unwrap()]).expect("mount");
    lp.mnt = Some(mnt.clone());
    std::fs::create_dir(mnt.join("datadir")).unwrap();

    // Mounted through its partition: in use, and the message says where.
    let used = in_use(Path::new(&dev)).unwrap();
    let used = used.expect("mounted partition must make the disk in use");
    assert!(used.contains(mnt.to_str().unwrap()), "{used}");
    assert!(in_use(Path::new(&part)).unwrap().is_some());

    // A directory inside: mount (with the space in its name decoded), partition, loop disk.
    let st = dbio_sys::stack::resolve(&mnt.join("datadir")).unwrap();
    let m = st.mount.as_ref().unwrap();
    assert_eq!(Path::new(&m.mountpoint), mnt.canonicalize().unwrap());
    assert_eq!(m.fstype, "ext4");
    let names: Vec<&str> = st.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, vec![format!("{name}p1").as_str(), name.as_str()]);
    assert_eq!(st.devices[0].start_sectors, Some(2048));
    assert_eq!(st.devices[0].partition_number, Some(1));
    assert_eq!(st.devices[0].size_bytes, Some(40960 * 512));
    assert_eq!(st.leaf_disks, vec![name.clone()]);
    assert!(st.leaves()[0]
        .queue
        .as_ref()
        .unwrap()
        .logical_block_size_bytes
        .is_some());

    run("umount", &[mnt.to_str().unwrap()]).expect("umount");
    lp.mnt = None;
    assert_eq!(in_use(Path::new(&dev)).unwrap(), None);

    // Mounted in another mount namespace: invisible in our mountinfo, but the kernel's
    // exclusive-open check still sees it.
    assert!(
        run("unshare", &["--version"]).is_some(),
        "needs unshare (util-linux)"
    );
    let mut child = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &format!("mount {part} '{}' && exec sleep 30", mnt.display()),
        ])
        .spawn()
        .unwrap();
    let mut seen = None;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        seen = in_use(Path::new(&dev)).unwrap();
        if seen.is_some() {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let seen = seen.expect("a mount in another namespace must make the device busy");
    assert!(seen.contains("busy"), "{seen}");
    assert!(!dbio_sys::mounts::read_mountinfo()
        .unwrap()
        .iter()
        .any(|m| m.source == part));
}

/// `device_in_use` as text (what the user reads).
fn in_use(dev: &Path) -> Result<Option<String>, dbio_sys::Error> {
    dbio_sys::inuse::device_in_use(dev).map(|u| u.map(|u| u.to_string()))
}
