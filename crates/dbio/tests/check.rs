//! `dbio check`: RAID fixtures for every tool and state through the real binary, a snapshot
//! of each output format, the Nagios exit codes, and live audits of real mounts (the root
//! filesystem, and loop-mounted ext4/XFS images when running as root).

use crate::common::{promtool_check, require_root, require_tool};

use crate::common::dbio;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command as Std;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/raid")
        .join(name)
        .display()
        .to_string()
}

fn raid_args(files: &[&str]) -> Vec<String> {
    files
        .iter()
        .flat_map(|f| ["--raid-output".to_string(), fixture(f)])
        .collect()
}

/// Runs `dbio check --nagios` on fixtures; returns (exit code, stdout).
fn nagios(files: &[&str]) -> (i32, String) {
    let out = dbio()
        .arg("check")
        .arg("--nagios")
        .args(raid_args(files))
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn check_json(args: &[String]) -> Value {
    let out = dbio()
        .arg("check")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn rule_statuses(v: &Value, rule: &str) -> Vec<String> {
    v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["findings"].as_array().unwrap().iter())
        .filter(|f| f["rule"] == rule)
        .map(|f| f["status"].as_str().unwrap().to_string())
        .collect()
}

/// Short names keep snapshots independent of the checkout path.
fn relative(s: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/raid/")
        .display()
        .to_string();
    s.replace(&dir, "testdata/raid/")
}

/// Every real capture in testdata/raid/real through the binary, `dbio check --raid-output
/// FILE --nagios`: its exit code is the verdict testdata/raid/expected.tsv gives (written
/// before the code), and its long output names a non-OK finding unless the verdict is OK.
#[test]
fn nagios_verdict_of_every_real_capture() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/raid");
    let table = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
    let mut wrong = Vec::new();
    let mut n = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, want) = (cols[0], cols[2]);
        let (code, out) = nagios(&[&format!("real/{file}")]);
        let got = match code {
            0 => "OK",
            1 => "WARN",
            2 => "CRIT",
            _ => "UNKNOWN",
        };
        let head = ["OK", "WARNING", "CRITICAL", "UNKNOWN"][code.clamp(0, 3) as usize];
        if got != want || !out.starts_with(&format!("DBIO STORAGE {head} - ")) {
            wrong.push(format!("{file}: want {want}, got {got}\n{out}"));
        }
        if want != "OK" && out.lines().count() < 2 {
            wrong.push(format!(
                "{file}: {want} without a finding in the long output\n{out}"
            ));
        }
        n += 1;
    }
    assert!(n >= 79, "{n} captures");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn nagios_exit_codes() {
    let (code, out) = nagios(&[
        "real/megacli-ldinfo-seven-vds-wb.txt",
        "real/megacli-adpbbucmd-ibbu08-optimal.txt",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("DBIO STORAGE OK - "), "{out}");
    // cciss_vol_status reports volume health only: a healthy array is OK, not UNKNOWN.
    let (code, out) = nagios(&["real/cciss_vol_status-p410i-flash.txt"]);
    assert_eq!(code, 0, "{out}");
    // Interim recovery mode is a degraded array: CRITICAL, as check_raid says (issue 28).
    let (code, out) = nagios(&["cciss_vol_status-degraded.txt"]);
    assert_eq!(code, 2, "{out}");
    let (code, out) = nagios(&["megacli-always-writeback.txt"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with(
            "DBIO STORAGE WARNING - 2 warning: MegaCli c0 vd 0 raid.write_back_on_bad_battery | "
        ),
        "{out}"
    );
    assert!(
        out.contains("\nADVICE MegaCli c0 vd 0 raid.read_ahead: controller read-ahead is on"),
        "{out}"
    );
    let (code, out) = nagios(&["megacli-learn-cycle.txt"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.starts_with("DBIO STORAGE CRITICAL - 1 critical"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.txt");
    std::fs::write(
        &junk,
        "Welcome to some other RAID tool v1.0\nno controllers here\n",
    )
    .unwrap();
    let out = dbio()
        .args(["check", "--nagios", "--raid-output"])
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("DBIO STORAGE UNKNOWN - 1 unknown: RAID output "),
        "{text}"
    );
    assert!(
        text.contains("\"Welcome to some other RAID tool v1.0\" / \"no controllers here\""),
        "{text}"
    );
    // Without --nagios the audit itself succeeded: exit 0.
    let out = dbio()
        .args([
            "check",
            "--raid-output",
            &fixture("megacli-learn-cycle.txt"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn every_tool_and_state_through_the_binary() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &[
                "real/megacli-ldinfo-seven-vds-wb.txt",
                "real/megacli-adpbbucmd-ibbu08-optimal.txt",
            ],
            "raid.write_policy",
            "OK",
        ),
        (&["megacli-learn-cycle.txt"], "raid.write_policy", "CRIT"),
        (&["megacli-failed-battery.txt"], "raid.battery", "CRIT"),
        (
            &["megacli-always-writeback.txt"],
            "raid.write_back_on_bad_battery",
            "WARN",
        ),
        (
            &[
                "megacli-no-cache-adpallinfo.txt",
                "megacli-no-cache-ldinfo.txt",
            ],
            "raid.write_policy",
            "OK",
        ),
        (&["storcli-healthy.txt"], "raid.write_policy", "OK"),
        (&["storcli-learn-cycle.txt"], "raid.write_policy", "CRIT"),
        (&["storcli-failed-battery.txt"], "raid.battery", "CRIT"),
        (
            &["storcli-always-writeback.txt"],
            "raid.write_back_on_bad_battery",
            "WARN",
        ),
        (&["perccli-charging.txt"], "raid.write_policy", "CRIT"),
        (&["storcli-healthy.json"], "raid.write_policy", "OK"),
        (&["storcli-learn-cycle.json"], "raid.write_policy", "CRIT"),
        (&["ssacli-healthy.txt"], "raid.write_policy", "OK"),
        (&["ssacli-recharging.txt"], "raid.write_policy", "CRIT"),
        (
            &["ssacli-failed-nobattery-writecache.txt"],
            "raid.write_back_on_bad_battery",
            "CRIT",
        ),
        (&["hpacucli-no-cache-board.txt"], "raid.write_policy", "OK"),
        (
            &["real/cciss_vol_status-p410i-flash.txt"],
            "raid.vd_state",
            "OK",
        ),
        (&["cciss_vol_status-degraded.txt"], "raid.vd_state", "CRIT"),
        (
            &["real/arcconf-getconfig-serveraid8k-battery.txt"],
            "raid.write_policy",
            "OK",
        ),
        (
            &["arcconf-battery-charging.txt"],
            "raid.write_policy",
            "CRIT",
        ),
        (
            &["arcconf-writeback-failed-battery.txt"],
            "raid.write_back_on_bad_battery",
            "CRIT",
        ),
        (
            &["real/tw_cli-c0-show-all-9750-verifying.txt"],
            "raid.write_policy",
            "OK",
        ),
        (&["tw_cli-bbu-testing.txt"], "raid.battery", "WARN"),
        (&["tw_cli-no-bbu.txt"], "raid.write_policy", "OK"),
        (&["omreport-healthy.txt"], "raid.write_policy", "OK"),
        (
            &[
                "omreport-vdisk-charging.txt",
                "omreport-battery-charging.txt",
            ],
            "raid.write_policy",
            "CRIT",
        ),
        (&["omreport-learning.txt"], "raid.write_policy", "CRIT"),
        (&["omreport-failed-battery.txt"], "raid.battery", "CRIT"),
        (
            &["omreport-force-writeback.txt"],
            "raid.write_back_on_bad_battery",
            "WARN",
        ),
    ];
    for (files, rule, want) in cases {
        let v = check_json(&raid_args(files));
        let got = rule_statuses(&v, rule);
        let rank = |s: &str| {
            ["OK", "UNKNOWN", "WARN", "CRIT"]
                .iter()
                .position(|x| *x == s)
                .unwrap()
        };
        let worst = got.iter().max_by_key(|s| rank(s));
        assert_eq!(
            worst.map(String::as_str),
            Some(*want),
            "{files:?} {rule}: got {got:?}"
        );
        // RAID-only audits: no PATH given, so no mount or disk rules ran.
        assert!(rule_statuses(&v, "io.scheduler").is_empty());
    }
}

/// A real 3ware unit table with a verify running and read cache on: advice, exit 0; with
/// --advice-warns the same output is a WARNING.
#[test]
fn advice_does_not_change_the_exit_code_unless_asked() {
    let real = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/raid/real/tw_cli-unitstatus-raid5-verifying.txt");
    let out = dbio()
        .args(["check", "--nagios", "--raid-output"])
        .arg(&real)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.starts_with("DBIO STORAGE OK - "), "{text}");
    assert!(
        text.contains("ADVICE tw_cli c0 u0 raid.vd_state: state VERIFYING"),
        "{text}"
    );
    let out = dbio()
        .args(["check", "--nagios", "--advice-warns", "--raid-output"])
        .arg(&real)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.starts_with("DBIO STORAGE WARNING - 2 advice: tw_cli c0 u0 raid.vd_state | "),
        "{text}"
    );
    let out = dbio()
        .args(["check", "--format", "json", "--raid-output"])
        .arg(&real)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "ADVICE", "{v}");
    assert_eq!(v["counts"]["advice"], 2, "{v}");
    let out = dbio()
        .args(["check", "--format", "prometheus", "--raid-output"])
        .arg(&real)
        .output()
        .unwrap();
    let p = String::from_utf8(out.stdout).unwrap();
    assert!(
        p.contains(
            "dbio_check_advice{tool=\"tw_cli\",controller=\"c0\",volume=\"u0\",rule=\"raid.vd_state\"} 1"
        ),
        "{p}"
    );
}

#[test]
fn output_format_snapshots() {
    let files = ["megacli-learn-cycle.txt", "storcli-always-writeback.txt"];
    for (name, extra) in [
        ("text", vec![]),
        ("json", vec!["--format", "json"]),
        ("prometheus", vec!["--format", "prometheus"]),
        ("nagios", vec!["--nagios"]),
    ] {
        let out = dbio()
            .arg("check")
            .args(raid_args(&files))
            .args(&extra)
            .output()
            .unwrap();
        let text = relative(&String::from_utf8(out.stdout).unwrap());
        insta::assert_snapshot!(format!("check_{name}"), text);
    }
}

#[test]
fn unreadable_raid_output_is_unknown_not_fatal() {
    let out = dbio()
        .args([
            "check",
            "--format",
            "json",
            "--raid-output",
            "/nonexistent/megacli.txt",
            "--raid-output",
            &fixture("real/megacli-ldinfo-raid5-wb-readahead.txt"),
            "--raid-output",
            &fixture("real/megacli-bbucmd-ibbu-ok.txt"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rule_statuses(&v, "raid.parse"), ["UNKNOWN"]);
    assert_eq!(rule_statuses(&v, "raid.write_policy"), ["OK"]);
}

/// (device, rule, status) of every finding, sorted.
fn verdicts(v: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["findings"].as_array().unwrap().iter())
        .map(|f| {
            (
                f["device"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A stray non-UTF-8 byte (a Latin-1 vendor string, a flipped bit in a saved capture) is read
/// lossily: every real fixture with one 0xFF byte at the end of its first non-empty line gives
/// the same findings as the clean file, not a whole-file UNKNOWN.
#[test]
fn non_utf8_byte_in_raid_output_keeps_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let raid_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/raid");
    // Hand-made fixtures and the real captures (real/): every text one.
    let mut names: Vec<String> = ["", "real/"]
        .iter()
        .flat_map(|sub| {
            std::fs::read_dir(raid_dir.join(sub))
                .unwrap()
                .map(move |e| format!("{sub}{}", e.unwrap().file_name().to_string_lossy()))
        })
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    assert!(names.len() >= 30, "{names:?}");
    for name in names {
        let clean = std::fs::read(raid_dir.join(&name)).unwrap();
        let first = clean
            .split(|&b| b == b'\n')
            .scan(0usize, |at, l| {
                let start = *at;
                *at += l.len() + 1;
                Some((start, l))
            })
            .find(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()))
            .map(|(start, l)| start + l.len())
            .unwrap();
        let mut dirty = clean[..first].to_vec();
        dirty.push(0xFF);
        dirty.extend_from_slice(&clean[first..]);
        assert!(std::str::from_utf8(&dirty).is_err());
        let path = dir.path().join(name.replace('/', "_"));
        std::fs::write(&path, &dirty).unwrap();
        let want = check_json(&["--raid-output".to_string(), fixture(&name)]);
        let got = check_json(&["--raid-output".to_string(), path.display().to_string()]);
        // The byte reads as U+FFFD: where it lands in a name (a slot's text), the name shows it.
        let got_verdicts: Vec<_> = verdicts(&got)
            .into_iter()
            .map(|(d, r, st)| (d.replace('\u{FFFD}', ""), r, st))
            .collect();
        assert_eq!(got_verdicts, verdicts(&want), "{name} with one 0xFF byte");
        assert_eq!(got["status"], want["status"], "{name}");
    }
}

#[test]
fn live_root_filesystem() {
    let out = dbio()
        .args(["check", "/", "--no-raid-tools", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "dbio.check/1");
    for rule in [
        "mount.atime",
        "mount.barrier",
        "part.alignment",
        "io.scheduler",
        "io.nr_requests",
        "io.read_ahead",
        "io.write_cache",
    ] {
        assert_eq!(rule_statuses(&v, rule).len(), 1, "{rule}: {v}");
    }
    // The queue rules name the disk under / as sysfs does.
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let root = mi
        .lines()
        .find(|l| l.split_whitespace().nth(4) == Some("/"))
        .unwrap();
    let devs: Vec<&str> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["device"].as_str().unwrap())
        .collect();
    assert!(devs.contains(&"/"), "{devs:?} {root}");
    let out = dbio()
        .args(["check", "/no/such/path", "--no-raid-tools"])
        .output()
        .unwrap();
    // A missing path is the system saying no (exit 1), not a usage error.
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/path"));
}

/// A loop-mounted image, unmounted and detached on drop.
struct LoopMount {
    dev: String,
    mnt: PathBuf,
}

impl LoopMount {
    fn new(img: &Path, mnt: &Path, opts: &str) -> LoopMount {
        let out = Std::new("losetup")
            .args(["-f", "--show"])
            .arg(img)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        std::fs::create_dir_all(mnt).unwrap();
        let lm = LoopMount {
            dev,
            mnt: mnt.to_path_buf(),
        };
        let m = Std::new("mount")
            .args(["-o", opts, &lm.dev])
            .arg(mnt)
            .output()
            .unwrap();
        assert!(
            m.status.success(),
            "mount: {}",
            String::from_utf8_lossy(&m.stderr)
        );
        lm
    }
    fn name(&self) -> String {
        self.dev.trim_start_matches("/dev/").to_string()
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let _ = Std::new("umount").arg(&self.mnt).output();
        let _ = Std::new("losetup").args(["-d", &self.dev]).output();
    }
}

#[test]
#[ignore = "needs root, loop devices, mkfs.ext4, mkfs.xfs and promtool; scripts/test.sh runs it"]
fn live_loop_mounts_with_bad_options_and_geometry() {
    require_root("mounting loop images");
    require_tool(
        "mkfs.xfs",
        &["-V"],
        "xfsprogs; scripts/setup-test-env.sh installs it",
    );
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("e.img");
    let xfs = dir.path().join("x.img");
    let sh = |s: &str| {
        assert!(
            Std::new("bash")
                .args(["-c", s])
                .current_dir(dir.path())
                .status()
                .unwrap()
                .success(),
            "{s}"
        )
    };
    sh("truncate -s 64M e.img && mkfs.ext4 -q -F -b 1024 -E stride=64,stripe_width=128 e.img");
    sh("truncate -s 1G x.img && mkfs.xfs -q -d su=64k,sw=4 x.img");
    let e = LoopMount::new(
        &ext,
        &dir.path().join("e"),
        "barrier=0,data=writeback,strictatime",
    );
    let x = LoopMount::new(&xfs, &dir.path().join("x"), "noatime");
    // The kernel cache mode of our own loop device: volatile, so barrier=0 is dangerous.
    // Loop devices outlive their attachment: put the old mode back afterwards (declared after
    // the mounts, so it is dropped before they are detached).
    let wc_path = format!("/sys/block/{}/queue/write_cache", e.name());
    let old_wc = std::fs::read_to_string(&wc_path).unwrap();
    struct Restore(String, String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.0, self.1.trim());
        }
    }
    let restore = Restore(wc_path.clone(), old_wc);
    std::fs::write(&wc_path, "write back").unwrap();
    let out = dbio()
        .args([
            "check",
            "--no-raid-tools",
            "--format",
            "json",
            "--stripe",
            "64k",
            "--disks",
            "8",
            "--raid",
            "10",
        ])
        .arg(dir.path().join("e/lost+found"))
        .arg(dir.path().join("x"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let find = |dev: &str, rule: &str| -> Value {
        v["devices"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["findings"].as_array().unwrap().iter())
            .find(|f| f["device"] == dev && f["rule"] == rule)
            .cloned()
            .unwrap_or_else(|| panic!("{dev} {rule}: {v}"))
    };
    let emnt = dir.path().join("e").display().to_string();
    let xmnt = dir.path().join("x").display().to_string();
    assert_eq!(find(&emnt, "mount.barrier")["status"], "CRIT");
    // Findings list the path given, not only the mount point it lives on.
    assert_eq!(
        find(&emnt, "mount.barrier")["paths"],
        serde_json::json!([dir.path().join("e/lost+found").display().to_string()])
    );
    assert_eq!(
        find(&e.name(), "io.scheduler")["labels"]["device"],
        e.name()
    );
    // The same audit in Prometheus form: loop device names in `device`, mount points apart.
    let out = dbio()
        .args(["check", "--no-raid-tools", "--format", "prometheus"])
        .arg(dir.path().join("e/lost+found"))
        .arg(dir.path().join("x"))
        .output()
        .unwrap();
    let prom = String::from_utf8(out.stdout).unwrap();
    assert!(
        prom.contains(&format!(
            "dbio_check_status{{device=\"{}\",mountpoint=\"{emnt}\",rule=\"mount.barrier\"}} 2\n",
            e.name()
        )),
        "{prom}"
    );
    promtool_check(&prom);
    assert_eq!(find(&emnt, "mount.ext4_data")["status"], "WARN");
    assert_eq!(find(&emnt, "mount.atime")["status"], "WARN");
    // ext4 with 1 KiB blocks made with stride=64,stripe_width=128 (2 data disks of 64 KiB)
    // against an 8-disk RAID10 (4 data disks): the fix counts in the filesystem's blocks.
    let g = find(&emnt, "fs.geometry");
    assert_eq!(g["status"], "WARN", "{g}");
    assert!(
        g["fix"].as_str().unwrap().contains(&format!(
            "tune2fs -E stride=64,stripe_width=256 {} (in 1024-byte blocks)",
            e.dev
        )),
        "{g}"
    );
    assert_eq!(find(&xmnt, "fs.geometry")["status"], "OK");
    assert_eq!(find(&xmnt, "mount.atime")["status"], "OK");
    assert_eq!(find(&xmnt, "mount.xfs_inode64")["status"], "OK");
    assert_eq!(
        find(&e.name(), "io.write_cache")["summary"],
        "volatile write cache: the kernel sends flushes"
    );
    assert_eq!(find(&e.name(), "part.alignment")["status"], "OK");
    // Nagios mode on the same mounts: CRITICAL, exit 2.
    let out = dbio()
        .args(["check", "--no-raid-tools", "--nagios"])
        .arg(dir.path().join("e"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        line.starts_with("DBIO STORAGE CRITICAL - 1 critical"),
        "{line}"
    );
    drop(restore);
    drop(x);
    drop(e);
}

/// A RAID tool that is installed but fails: one UNKNOWN finding, the rest of the audit runs.
#[test]
fn installed_tool_that_fails_is_unknown() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tool = dir.path().join("arcconf");
    std::fs::write(
        &tool,
        "#!/bin/sh\necho 'Controllers found: 0'\necho 'Invalid controller number.' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = dbio()
        .env("PATH", path)
        .args(["check", "/", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f: Vec<&Value> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["findings"].as_array().unwrap().iter())
        .filter(|f| f["rule"] == "raid.tool")
        .collect();
    assert_eq!(f.len(), 1, "{v}");
    assert_eq!(f[0]["status"], "UNKNOWN");
    let s = f[0]["summary"].as_str().unwrap();
    assert!(
        s.contains("arcconf GETCONFIG 1 AL exited with exit status: 1"),
        "{s}"
    );
    assert!(s.contains("stderr: \"Invalid controller number.\""), "{s}");
    assert_eq!(rule_statuses(&v, "mount.atime").len(), 1);
}

/// `dbio check` of several paths on one filesystem (issue 10): each (device, rule) finding is
/// counted once, as for one path, in JSON counts, Nagios perfdata and Prometheus totals, and
/// the finding lists every given path it applies to.
#[test]
fn paths_on_one_filesystem_count_each_finding_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let run = |paths: &[&Path], extra: &[&str]| -> String {
        let out = dbio()
            .args(["check", "--no-raid-tools"])
            .args(paths)
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let one: Value = serde_json::from_str(&run(&[&a], &["--format", "json"])).unwrap();
    let three: Value = serde_json::from_str(&run(&[&a, &b, &a], &["--format", "json"])).unwrap();
    assert_eq!(one["counts"], three["counts"], "{three}");
    assert_eq!(verdicts(&one), verdicts(&three));
    let (a_s, b_s) = (a.display().to_string(), b.display().to_string());
    let findings: Vec<&Value> = three["devices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["findings"].as_array().unwrap().iter())
        .collect();
    assert!(!findings.is_empty());
    for f in findings {
        assert_eq!(f["paths"], serde_json::json!([a_s, b_s]), "{f}");
    }
    let perf = |s: &str| {
        s.lines()
            .next()
            .unwrap()
            .split(" | ")
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert_eq!(
        perf(&run(&[&a], &["--nagios"])),
        perf(&run(&[&a, &b], &["--nagios"]))
    );
    let totals = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("dbio_check_findings"))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        totals(&run(&[&a], &["--format", "prometheus"])),
        totals(&run(&[&a, &b], &["--format", "prometheus"]))
    );
}

/// Runs `dbio check ARGS`; returns (exit code, stdout, stderr).
fn check_raw(args: &[&str]) -> (i32, String, String) {
    let out = dbio().arg("check").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Under --nagios every usage error (clap's own, and dbio's) exits 3 (UNKNOWN) with one short
/// status line on stdout, never 2 (which pages as CRITICAL) with an empty stdout.
#[test]
fn nagios_usage_errors_are_unknown() {
    for args in [
        &["--nagios", "--no-such-flag"][..],
        &["--no-such-flag", "--nagios"],
        &["--nagios", "--format", "json"],
        &["--nagios", "--stripe", "abc"],
        &[
            "--nagios", "--stripe", "64k", "--disks", "0", "--raid", "10",
        ],
        &["--nagios", "/no/such/path"],
        &["--format", "nagios", "--no-such-flag"],
        &["--no-such-flag", "--format=nagios"],
        &["--format", "nagios", "/no/such/path"],
        &["--format", "nagios", "--nagios"],
        &[
            "--nagios",
            "--no-raid-tools",
            "/",
            "-o",
            "/no/such/dir/out.txt",
        ],
    ] {
        let (code, out, err) = check_raw(args);
        assert_eq!(code, 3, "{args:?}: stdout {out:?} stderr {err:?}");
        let first = out.lines().next().unwrap_or("");
        assert!(
            first.starts_with("DBIO STORAGE UNKNOWN - "),
            "{args:?}: {out:?}"
        );
        assert!(
            first.chars().count() <= 80,
            "{args:?}: {} chars: {first}",
            first.len()
        );
    }
    // Help is not an error; without --nagios a usage error stays exit 2.
    assert_eq!(check_raw(&["--nagios", "--help"]).0, 0);
    assert_eq!(check_raw(&["--no-such-flag"]).0, 2);
    // A missing path is exit 1 (the system said no), 3 only under Nagios.
    let (code, out, err) = check_raw(&["/no/such/path"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert_eq!(
        err,
        "dbio: /no/such/path: No such file or directory (os error 2): give an existing file or directory on the filesystem to check\n"
    );
    // --advice-warns is for Nagios output only.
    let (code, _, err) = check_raw(&["--advice-warns", "--no-raid-tools", "/"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--advice-warns") && err.contains("--nagios"),
        "{err}"
    );
    // `--nagios` after `--` is a path, not the flag.
    let (code, out, _) = check_raw(&["--no-such-flag", "--", "--nagios"]);
    assert_eq!((code, out.as_str()), (2, ""));
}

/// The Nagios status line stays short (counts and the worst finding), whatever the findings;
/// the details are in the long output.
#[test]
fn nagios_status_line_is_short() {
    for files in [
        &["megacli-learn-cycle.txt", "storcli-always-writeback.txt"][..],
        &["real/tw_cli-unitstatus-raid5-verifying.txt"],
        &["real/megacli-ldinfo-seven-vds-wb.txt"],
        &["storcli-failed-battery.txt"],
    ] {
        let (_, out) = nagios(files);
        let first = out.lines().next().unwrap();
        let text = first.split(" | ").next().unwrap();
        assert!(text.chars().count() <= 80, "{} chars: {text}", text.len());
        assert!(first.contains(" | crit="), "{first}");
    }
}

/// Prometheus output of check: the `device` label holds a kernel device name only (mount
/// points, controllers and files have labels of their own), and promtool accepts it.
#[test]
fn prometheus_device_label_is_a_device_name() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "no controllers here\n").unwrap();
    let mut args: Vec<String> = ["--no-raid-tools", "/", "--format", "prometheus"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(raid_args(&[
        "megacli-learn-cycle.txt",
        "storcli-always-writeback.txt",
    ]));
    args.extend(["--raid-output".to_string(), junk.display().to_string()]);
    let out = dbio().arg("check").args(&args).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut devices = Vec::new();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        if let Some(i) = l.find("device=\"") {
            let v = &l[i + 8..];
            devices.push(v[..v.find('"').unwrap()].to_string());
        }
    }
    assert!(devices.contains(&"sda".to_string()), "{text}");
    for d in &devices {
        assert!(
            !d.is_empty()
                && d.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)),
            "device label {d:?} is not a device name:\n{text}"
        );
    }
    assert!(text.contains("mountpoint=\"/\""), "{text}");
    assert!(text.contains("controller=\"c0\""), "{text}");
    assert!(
        text.contains(&format!("source=\"{}\"", junk.display())),
        "{text}"
    );
}

/// `promtool check metrics` accepts check's Prometheus output: a live audit of / with RAID
/// fixtures (advice, warnings, criticals), an unparsable file, and fixtures alone.
#[test]
#[ignore = "needs promtool (scripts/setup-test-env.sh installs it; scripts/test.sh runs ignored tests)"]
fn promtool_accepts_check_prometheus() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk \"q\".txt");
    std::fs::write(&junk, "no controllers here\n").unwrap();
    let fixtures = raid_args(&[
        "megacli-learn-cycle.txt",
        "storcli-always-writeback.txt",
        "real/tw_cli-unitstatus-raid5-verifying.txt",
    ]);
    for live in [true, false] {
        let mut cmd = dbio();
        cmd.args(["check", "--no-raid-tools", "--format", "prometheus"]);
        if live {
            cmd.args(["/", "/tmp"]);
        }
        let out = cmd
            .args(&fixtures)
            .arg("--raid-output")
            .arg(&junk)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("dbio_check_advice{"), "{text}");
        promtool_check(&text);
    }
}
