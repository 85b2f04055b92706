//! `dbio stack`: the root filesystem (ext4 on a virtio disk here), /dev/shm (tmpfs: no block
//! device), a path that does not exist, device nodes, and a real partitioned loop device with
//! ext4 mounted on its first partition.

use crate::common::{require_root, require_tool};

use assert_cmd::Command;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

struct Out {
    stdout: String,
    stderr: String,
    code: i32,
}

fn dbio(args: &[&str]) -> Out {
    let o = Command::cargo_bin("dbio")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    Out {
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
        code: o.status.code().unwrap_or(-1),
    }
}

fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let o = dbio(&a);
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap()
}

fn major_minor(dev: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major}:{minor}")
}

#[test]
fn root_filesystem_mount() {
    let v = json(&["stack", "/"]);
    assert_eq!(v["mount"]["mountpoint"], "/");
}

#[test]
#[ignore = "needs / on a block device (a machine fact); scripts/test.sh runs it"]
fn root_filesystem_devices() {
    let v = json(&["stack", "/"]);
    assert_eq!(v["mount"]["mountpoint"], "/");
    let st_dev = std::fs::metadata("/").unwrap().dev();
    assert_ne!(
        st_dev >> 8,
        0,
        "needs / on a block device (it is on {st_dev:#x})"
    );
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs[0]["dev"], major_minor(st_dev).as_str());
    let leaves = v["leaf_disks"].as_array().unwrap();
    assert!(!leaves.is_empty());
    for leaf in leaves {
        let name = leaf.as_str().unwrap();
        let d = devs.iter().find(|d| d["name"] == name).unwrap();
        let q = Path::new("/sys/block").join(name).join("queue");
        let want: u64 = std::fs::read_to_string(q.join("logical_block_size"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(d["queue"]["logical_block_size_bytes"], want);
        let sched = std::fs::read_to_string(q.join("scheduler")).unwrap();
        let active = d["queue"]["scheduler"].as_str().unwrap();
        assert!(
            sched.contains(&format!("[{active}]")) || sched.trim() == active,
            "{sched}"
        );
        let nr: u64 = std::fs::read_to_string(q.join("nr_requests"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(d["queue"]["nr_requests"], nr);
    }
    // The fstype and options come from mountinfo.
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let line = mi
        .lines()
        .rev()
        .find(|l| l.split(' ').nth(4) == Some("/"))
        .unwrap();
    let fstype = line.split(" - ").nth(1).unwrap().split(' ').next().unwrap();
    assert_eq!(v["mount"]["fstype"], fstype);
    // A file below / resolves to the same device, and the text tree names it.
    let t = dbio(&["stack", "/etc/hostname"]);
    assert_eq!(t.code, 0);
    assert!(
        t.stdout.contains(&format!(
            "{}  {}",
            devs[0]["name"].as_str().unwrap(),
            devs[0]["dev"].as_str().unwrap()
        )),
        "{}",
        t.stdout
    );
    assert!(t.stdout.contains("scheduler "), "{}", t.stdout);
    assert!(t.stdout.contains("leaf disks: "), "{}", t.stdout);
}

#[test]
fn dev_shm_has_no_block_device() {
    let v = json(&["stack", "/dev/shm"]);
    assert_eq!(v["mount"]["fstype"], "tmpfs");
    assert_eq!(v["devices"].as_array().unwrap().len(), 0);
    assert!(v["notes"][0].as_str().unwrap().contains("no block device"));
    let t = dbio(&["stack", "/dev/shm"]);
    assert_eq!(t.code, 0);
    // Redact what depends on the machine: kernel, tmpfs size, anonymous device number.
    let redacted: String = t
        .stdout
        .lines()
        .map(|l| {
            if l.starts_with("kernel ") {
                "kernel    [redacted]".to_string()
            } else if let Some(i) = l.find("size=") {
                format!("{}size=[redacted]", &l[..i])
            } else if let Some(i) = l.find(" dev 0:") {
                format!("{} dev 0:[minor]", &l[..i])
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(redacted);
}

#[test]
fn missing_path_shows_its_parent_and_fails() {
    let o = dbio(&["stack", "/var/lib/no-such-dir/ibdata1"]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("does not exist"), "{}", o.stderr);
    assert!(o.stdout.contains("nearest existing parent"), "{}", o.stdout);
    assert!(o.stdout.contains("mount "), "{}", o.stdout);
}

#[test]
fn device_nodes_and_names() {
    let o = dbio(&["stack", "no-such-disk"]);
    assert_eq!(o.code, 1);
    let first = std::fs::read_dir("/sys/class/block")
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert!(o.stderr.contains("devices that exist"), "{}", o.stderr);
    assert!(
        o.stderr.contains(first.file_name().to_str().unwrap()),
        "{}",
        o.stderr
    );
    let v = json(&["stack", "/"]);
    if let Some(src) = v["mount"]["source"]
        .as_str()
        .filter(|s| s.starts_with("/dev/") && Path::new(s).exists())
    {
        let d = json(&["stack", src]);
        assert!(d["mount"].is_null());
        assert_eq!(d["devices"][0]["name"], v["devices"][0]["name"]);
    }
}

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

struct Loop {
    dev: String,
    mnt: Option<PathBuf>,
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = &self.mnt {
            let _ = std::process::Command::new("umount").arg(m).status();
        }
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.dev])
            .status();
    }
}

#[test]
#[ignore = "needs root, losetup, sfdisk and mkfs.ext4; scripts/test.sh runs it"]
fn partitioned_loop_device_with_ext4() {
    require_root("loop devices, mounts");
    require_tool("sfdisk", &["--version"], "util-linux");
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let mut sf = std::process::Command::new("sfdisk")
        .args(["-q", img.to_str().unwrap()])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    sf.stdin
        .take()
        .unwrap()
        .write_all(b"label: gpt\nstart=2048, size=65536\nstart=69632, size=40960\n")
        .unwrap();
    assert!(sf.wait().unwrap().success());
    let dev = run("losetup", &["-f", "--show", "-P", img.to_str().unwrap()]).expect("losetup");
    let mut lp = Loop {
        dev: dev.clone(),
        mnt: None,
    };
    let p2 = format!("{dev}p2");
    for i in 0..50 {
        if Path::new(&p2).exists() {
            break;
        }
        if i == 5 {
            run("partx", &["-a", &dev]);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(Path::new(&p2).exists());
    run("mkfs.ext4", &["-q", "-F", &p2]).expect("mkfs.ext4");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    run("mount", &["-o", "noatime", &p2, mnt.to_str().unwrap()]).expect("mount");
    lp.mnt = Some(mnt.clone());
    std::fs::create_dir(mnt.join("mysql")).unwrap();

    let v = json(&["stack", mnt.join("mysql").to_str().unwrap()]);
    let name = dev.trim_start_matches("/dev/");
    assert_eq!(v["devices"][0]["name"], format!("{name}p2"));
    assert_eq!(v["devices"][0]["start_sectors"], 69632);
    assert_eq!(v["devices"][0]["size_bytes"], 40960 * 512);
    assert_eq!(v["devices"][1]["name"], name);
    assert_eq!(
        v["devices"][1]["loop_backing_file"],
        img.canonicalize().unwrap().to_str().unwrap()
    );
    assert_eq!(v["leaf_disks"], serde_json::json!([name]));
    assert!(v["mount"]["mount_options"]
        .as_str()
        .unwrap()
        .contains("noatime"));
    // Redact what changes between runs and machines (loop numbers, temp paths, kernel), but
    // only where there is a value, so nulls stay visible.
    let mut r = v.clone();
    let set = |x: &mut Value, to: &str| {
        if !x.is_null() {
            *x = Value::String(to.to_string());
        }
    };
    set(&mut r["query"], "[tmp]/mnt/mysql");
    set(&mut r["resolved_path"], "[tmp]/mnt/mysql");
    set(&mut r["kernel_release"], "[kernel]");
    set(&mut r["mount"]["source"], "/dev/loopNp2");
    set(&mut r["mount"]["mountpoint"], "[tmp]/mnt");
    set(&mut r["mount"]["dev"], "[major:minor]");
    r["leaf_disks"] = serde_json::json!(["loopN"]);
    for d in r["devices"].as_array_mut().unwrap() {
        set(&mut d["name"], "[name]");
        set(&mut d["node"], "[node]");
        set(&mut d["dev"], "[major:minor]");
        set(&mut d["loop_backing_file"], "[tmp]/disk.img");
        set(
            &mut d["queue"],
            "[queue attributes of this kernel's loop driver]",
        );
        for sl in d["slaves"].as_array_mut().unwrap() {
            set(sl, "[name]");
        }
    }
    insta::assert_json_snapshot!(r);
    let t = dbio(&["stack", mnt.to_str().unwrap()]);
    assert!(
        t.stdout.contains("partition 2  start sector 69632 (34MiB)"),
        "{}",
        t.stdout
    );
    assert!(
        t.stdout.contains("(queue attributes: see its disk below)"),
        "{}",
        t.stdout
    );
}

#[test]
#[ignore = "needs root to mount an overlay; scripts/test.sh runs it"]
fn overlay_has_no_block_device_but_names_its_upper_layer() {
    require_root("mounting an overlay");
    let dir = tempfile::tempdir().unwrap();
    for d in ["lower", "upper", "work", "merged"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    let p = |d: &str| dir.path().join(d).to_str().unwrap().to_string();
    let opts = format!(
        "lowerdir={},upperdir={},workdir={}",
        p("lower"),
        p("upper"),
        p("work")
    );
    assert!(
        run(
            "mount",
            &["-t", "overlay", "overlay", "-o", &opts, &p("merged")],
        )
        .is_some(),
        "needs an overlay mount (mount -t overlay -o {opts})"
    );
    struct Umount(String);
    impl Drop for Umount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Umount(p("merged"));
    let o = dbio(&["stack", &p("merged"), "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["mount"]["fstype"], "overlay");
    assert!(v["devices"].as_array().unwrap().is_empty());
    let notes = v["notes"].to_string();
    assert!(notes.contains("no block device"), "{notes}");
    let upper = dbio(&["stack", &p("upper"), "--format", "json"]);
    let u: Value = serde_json::from_str(&upper.stdout).unwrap();
    if let Some(top) = u["devices"][0]["name"].as_str() {
        assert!(
            notes.contains(&format!("upper (writable) layer {}", p("upper"))),
            "{notes}"
        );
        assert!(notes.contains(&format!("device {top}")), "{notes}");
    }
}
