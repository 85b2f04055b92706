//! Files dbio writes or deletes: `--output` and the innodb manifest never follow a symlink
//! planted at a temporary name and leave no temporary behind when the disk is full; `dbio
//! bench` never truncates, writes through or deletes a file it did not create.

use crate::common::require_root;

use crate::common::dbio;
use std::path::{Path, PathBuf};

fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A directory on tmpfs (fast, and the inode numbers of deleted files are not handed out
/// again at once).
fn shm() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dbio-files-")
        .tempdir_in("/dev/shm")
        .unwrap()
}

/// An 8 MiB image with an MBR partition at sector 2048, for `dbio align check`.
fn mbr_image(dir: &Path) -> PathBuf {
    let img = dir.join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let mut c = std::process::Command::new("sfdisk")
        .arg("-q")
        .arg(&img)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("sfdisk (util-linux) is installed by scripts/setup-test-env.sh");
    use std::io::Write;
    c.stdin
        .take()
        .unwrap()
        .write_all(b"label: dos\nstart=2048\n")
        .unwrap();
    assert!(c.wait().unwrap().success());
    img
}

/// A victim file outside the output directory and a symlink to it at `link`.
fn plant(victim: &Path, link: &Path) {
    std::fs::write(victim, b"precious").unwrap();
    std::os::unix::fs::symlink(victim, link).unwrap();
}

fn untouched(victim: &Path) {
    let now = std::fs::read(victim).unwrap();
    assert!(
        now == b"precious",
        "{} was written through the symlink: {:?}",
        victim.display(),
        String::from_utf8_lossy(&now[..now.len().min(80)])
    );
}

#[test]
fn output_never_follows_a_symlink_at_the_old_temporary_name() {
    let t = shm();
    let img = mbr_image(t.path());
    let c = t.path().join("c");
    std::fs::create_dir(&c).unwrap();
    let victim = t.path().join("victim");
    plant(&victim, &c.join(".res.json.dbio-tmp"));
    dbio()
        .args(["align", "check", "--format", "json", "-o"])
        .arg(c.join("res.json"))
        .arg(&img)
        .assert()
        .success();
    untouched(&victim);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(c.join("res.json")).unwrap()).unwrap();
    assert_eq!(v["schema"], "dbio.align.check/2");
    assert_eq!(entries(&c), [".res.json.dbio-tmp", "res.json"]);

    // The same for bench's --output (written after the run).
    let victim2 = t.path().join("victim2");
    plant(&victim2, &c.join(".bench.json.dbio-tmp"));
    dbio()
        .args([
            "bench", "--engine", "null", "--events", "100", "--format", "json",
        ])
        .args(["--file-num", "1", "--file-total-size", "1M", "--output"])
        .arg(c.join("bench.json"))
        .arg("--dir")
        .arg(t.path().join("set"))
        .assert()
        .success();
    untouched(&victim2);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(c.join("bench.json")).unwrap()).unwrap();
    assert_eq!(v["spec"]["engine"], "null");
}

#[test]
fn innodb_manifest_never_follows_a_symlink_at_the_old_temporary_name() {
    let t = shm();
    let out = t.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let victim = t.path().join("victim");
    plant(&victim, &out.join(".manifest.json.dbio-tmp"));
    let ibd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/innodb/shop_orders.ibd");
    dbio()
        .args([
            "innodb",
            "pages",
            "--format",
            "json",
            "--force",
            "--output-dir",
        ])
        .arg(&out)
        .arg(&ibd)
        .assert()
        .success();
    untouched(&victim);
    let man: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert!(!man["pages"].as_array().unwrap().is_empty());
}

#[test]
fn innodb_page_files_never_follow_a_symlink_planted_at_their_names() {
    let t = shm();
    let ibd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/innodb/shop_orders.ibd");
    // A first run tells the names of the page files.
    let first = t.path().join("first");
    dbio()
        .args(["innodb", "pages", "--format", "json", "--output-dir"])
        .arg(&first)
        .arg(&ibd)
        .assert()
        .success();
    let man: serde_json::Value =
        serde_json::from_slice(&std::fs::read(first.join("manifest.json")).unwrap()).unwrap();
    let mut files: Vec<String> = man["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["file"].as_str().unwrap().to_string())
        .collect();
    files.sort();
    files.dedup();
    assert!(!files.is_empty());
    // Into a second directory where each of those names is a symlink to a victim.
    let out = t.path().join("out");
    let victim = t.path().join("victim");
    for f in &files {
        let link = out.join(f);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        plant(&victim, &link);
    }
    dbio()
        .args([
            "innodb",
            "pages",
            "--format",
            "json",
            "--force",
            "--output-dir",
        ])
        .arg(&out)
        .arg(&ibd)
        .assert()
        .success();
    untouched(&victim);
    for f in &files {
        let md = std::fs::symlink_metadata(out.join(f)).unwrap();
        assert!(md.file_type().is_file(), "{f} is a file of dbio's now");
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(first.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        Tmpfs::mount_with(&format!("size={size}"))
    }

    /// A tmpfs mounted with `-o opts` (`size=64k`, `ro`).
    fn mount_with(opts: &str) -> Tmpfs {
        require_root("mounting a tmpfs");
        let dir = tempfile::Builder::new()
            .prefix("dbio-files-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let st = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(&mnt)
            .status()
            .unwrap();
        assert!(st.success(), "mount -t tmpfs -o {opts} failed");
        Tmpfs { _dir: dir, mnt }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let st = std::process::Command::new("umount")
            .arg(&self.mnt)
            .status()
            .unwrap();
        assert!(st.success(), "cannot unmount {}", self.mnt.display());
    }
}

#[test]
#[ignore = "needs root to mount a tmpfs of a fixed size; scripts/test.sh runs it"]
fn a_full_disk_leaves_no_temporary_and_names_the_output() {
    let fs = Tmpfs::mount("64k");
    let t = shm();
    let img = mbr_image(t.path());
    // Fill the filesystem: the result (a few KiB) is bigger than what is left (nothing).
    {
        use std::io::Write;
        let mut f = std::fs::File::create(fs.mnt.join("filler")).unwrap();
        let chunk = vec![0xA5u8; 4096];
        while f.write_all(&chunk).is_ok() {}
    }
    let out = fs.mnt.join("res.json");
    let o = dbio()
        .args(["align", "check", "--format", "json", "-o"])
        .arg(&out)
        .arg(&img)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&out.display().to_string()), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(entries(&fs.mnt), ["filler"]);
}

/// Runs `dbio args -o out` and checks that it is refused before anything runs: exit 1 within a
/// few seconds (the benchmark would take 60), the message names `out` and says `why`, and
/// nothing was prepared in `work` (the bench --dir, or the sweep's --output-dir).
fn refused_before_the_run(args: &[&str], work: &Path, out: &Path, why: &str) {
    let t0 = std::time::Instant::now();
    let o = dbio().args(args).arg("-o").arg(out).output().unwrap();
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("--output {}: ", out.display()))
            && err.contains(why)
            && err.contains("nothing was run"),
        "{err}"
    );
    assert!(!work.exists(), "nothing was prepared: {err}");
    assert!(
        took < std::time::Duration::from_secs(10),
        "refused after {took:?}, not at once"
    );
}

/// A benchmark of 60 s in `dir` and a sweep of 60 s a point, for [`refused_before_the_run`].
fn long_runs(t: &Path) -> [Vec<String>; 2] {
    let set = t.join("set").display().to_string();
    let bench = ["bench", "--time", "60s", "--format", "json", "--dir", &set];
    let sweep_out = t.join("sweep").display().to_string();
    let sweep = [
        "sweep",
        "--time",
        "60s",
        "--threads",
        "1",
        "--dir",
        &set,
        "--output-dir",
        &sweep_out,
    ];
    [
        bench.iter().map(|s| s.to_string()).collect(),
        sweep.iter().map(|s| s.to_string()).collect(),
    ]
}

fn check_long_runs(t: &Path, out: &Path, why: &str) {
    for (args, work) in long_runs(t).iter().zip(["set", "sweep"]) {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        refused_before_the_run(&args, &t.join(work), out, why);
    }
}

#[test]
fn output_into_a_missing_directory_or_a_file_is_refused_before_the_run() {
    let t = shm();
    // The directory does not exist.
    let out = t.path().join("no-such-dir/res.json");
    check_long_runs(t.path(), &out, "No such file or directory");
    // A file where the directory should be.
    std::fs::write(t.path().join("plain"), b"x").unwrap();
    check_long_runs(
        t.path(),
        &t.path().join("plain/res.json"),
        "Not a directory",
    );
    // FILE is a directory: the rename at the end would fail.
    std::fs::create_dir(t.path().join("d")).unwrap();
    check_long_runs(t.path(), &t.path().join("d"), "it is a directory");
    // Nothing was left behind by the check.
    assert_eq!(entries(t.path()), ["d", "plain"]);
    assert!(entries(&t.path().join("d")).is_empty());
    // Where the output can go, the check leaves no trace and the run writes it.
    let out = t.path().join("res.json");
    dbio()
        .args([
            "bench", "--engine", "null", "--time", "100ms", "--format", "json",
        ])
        .arg("--dir")
        .arg(t.path().join("set"))
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["schema"], "dbio.bench/1");
    assert_eq!(entries(t.path()), ["d", "plain", "res.json"]);
    // -o may name a file in the --dir bench prepares, or in the --output-dir a sweep makes.
    let set = t.path().join("set2");
    dbio()
        .args([
            "bench",
            "--time",
            "100ms",
            "--file-num",
            "2",
            "--file-total-size",
            "1M",
        ])
        .arg("--dir")
        .arg(&set)
        .arg("-o")
        .arg(set.join("res.txt"))
        .assert()
        .success();
    assert_eq!(entries(&set), ["res.txt"]);
    let sw = t.path().join("sw");
    dbio()
        .args([
            "sweep",
            "--engine",
            "null",
            "--time",
            "100ms",
            "--threads",
            "1,2",
        ])
        .arg("--output-dir")
        .arg(&sw)
        .arg("-o")
        .arg(sw.join("table.txt"))
        .assert()
        .success();
    assert_eq!(entries(&sw), ["points", "sweep.json", "table.txt"]);
}

#[test]
#[ignore = "needs root to mount a read-only tmpfs (root ignores mode bits); scripts/test.sh runs it"]
fn output_into_a_read_only_directory_is_refused_before_the_run() {
    let fs = Tmpfs::mount_with("ro");
    let t = shm();
    check_long_runs(t.path(), &fs.mnt.join("res.json"), "Read-only file system");
}

#[test]
#[ignore = "needs root to mount a tmpfs of a fixed size; scripts/test.sh runs it"]
fn output_onto_a_full_filesystem_is_refused_before_the_run() {
    let fs = Tmpfs::mount("64k");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(fs.mnt.join("filler")).unwrap();
        let chunk = vec![0xA5u8; 4096];
        while f.write_all(&chunk).is_ok() {}
    }
    let t = shm();
    check_long_runs(
        t.path(),
        &fs.mnt.join("res.json"),
        "No space left on device",
    );
    assert_eq!(entries(&fs.mnt), ["filler"], "the probe is removed");
}

const SMALL: [&str; 6] = [
    "--file-num",
    "4",
    "--file-total-size",
    "4M",
    "--block-size",
    "4k",
];

#[test]
fn prepare_leaves_a_foreign_marker_temporary_alone() {
    let t = shm();
    let d = t.path().join("set");
    std::fs::create_dir(&d).unwrap();
    let tmp = d.join(".dbio-fileset.json.tmp");
    std::fs::write(&tmp, b"precious").unwrap();
    dbio()
        .args(["bench", "prepare"])
        .args(SMALL)
        .arg("--dir")
        .arg(&d)
        .assert()
        .success();
    assert_eq!(std::fs::read(&tmp).unwrap(), b"precious");
    dbio()
        .args(["bench", "cleanup", "--dir"])
        .arg(&d)
        .assert()
        .success();
    assert_eq!(entries(&d), [".dbio-fileset.json.tmp"]);
    assert_eq!(std::fs::read(&tmp).unwrap(), b"precious");

    // A symlink there is not followed either.
    std::fs::remove_file(&tmp).unwrap();
    let victim = t.path().join("victim");
    plant(&victim, &tmp);
    dbio()
        .args(["bench", "prepare"])
        .args(SMALL)
        .arg("--dir")
        .arg(&d)
        .assert()
        .success();
    untouched(&victim);
    assert!(std::fs::symlink_metadata(d.join(".dbio-fileset.json"))
        .unwrap()
        .is_file());
}

#[test]
fn cleanup_spares_a_file_put_under_a_listed_name_after_a_failed_prepare() {
    use std::os::unix::process::CommandExt;
    let t = shm();
    let d = t.path().join("set");
    // Prepare dies half way: files may grow to 1 MiB only (RLIMIT_FSIZE; SIGXFSZ ignored, so
    // the write that crosses it fails with EFBIG), each file is to have 2 MiB.
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    c.args([
        "bench",
        "prepare",
        "--file-num",
        "32",
        "--file-total-size",
        "64M",
    ])
    .arg("--dir")
    .arg(&d);
    // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: 1 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("File too large"), "{err}");
    assert!(d.join(".dbio-fileset.json").exists());
    // Someone puts their own file under a name dbio meant to use (replacing what dbio left
    // there, if anything).
    let theirs = d.join("dbio-file.20");
    let _ = std::fs::remove_file(&theirs);
    std::fs::write(&theirs, b"not dbio's").unwrap();
    let o = dbio()
        .args(["bench", "cleanup", "--dir"])
        .arg(&d)
        .output()
        .unwrap();
    let all = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{all}");
    assert_eq!(std::fs::read(&theirs).unwrap(), b"not dbio's");
    assert_eq!(entries(&d), ["dbio-file.20"]);
    assert!(all.contains("dbio-file.20"), "{all}");
}

#[test]
fn commit_mode_never_follows_a_dangling_log_symlink() {
    let t = shm();
    let d = t.path().join("set");
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&d).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("x"), d.join("dbio-log.0")).unwrap();
    let o = dbio()
        .args([
            "bench",
            "--mode",
            "commit",
            "--threads",
            "1",
            "--events",
            "100",
        ])
        .args(["--file-total-size", "16M", "--dir"])
        .arg(&d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("dbio-log.0"), "{err}");
    assert!(err.contains("dbio did not create it"), "{err}");
    assert_eq!(entries(&elsewhere), Vec::<String>::new());
    assert_eq!(entries(&d), ["dbio-log.0"]);
    assert!(std::fs::symlink_metadata(d.join("dbio-log.0"))
        .unwrap()
        .is_symlink());
}

/// `-o /dev/null` (or a link to it, as /dev/stdout is to a terminal or a pipe) renamed a
/// temporary over the device node: /dev/null became a regular file holding the result, and
/// everything the machine sent to /dev/null afterwards landed in it (cargo's compiler probe
/// then read garbage from it). A device or a FIFO is written into, never replaced.
#[test]
#[ignore = "needs root (mknod of a character device)"]
fn output_to_a_device_or_a_fifo_writes_into_it_and_never_replaces_it() {
    require_root("mknod of a character device");
    use std::os::unix::fs::FileTypeExt;
    let t = tempfile::tempdir().unwrap();
    let null = t.path().join("null");
    let st = std::process::Command::new("mknod")
        .args(["-m", "666"])
        .arg(&null)
        .args(["c", "1", "3"])
        .status()
        .unwrap();
    assert!(st.success());
    dbio()
        .args(["stack", "/", "--format", "json", "-o"])
        .arg(&null)
        .assert()
        .success();
    let m = std::fs::symlink_metadata(&null).unwrap();
    assert!(
        m.file_type().is_char_device(),
        "the device node was replaced"
    );
    // A FIFO (what `-o >(gzip > f)` names): its reader gets the result.
    let fifo = t.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let f2 = fifo.clone();
    let reader = std::thread::spawn(move || std::fs::read_to_string(f2).unwrap());
    dbio()
        .args(["stack", "/", "--format", "json", "-o"])
        .arg(&fifo)
        .assert()
        .success();
    let got = reader.join().unwrap();
    assert!(got.contains("\"schema\""), "{got}");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(entries(t.path()), ["fifo", "null"]);
}
