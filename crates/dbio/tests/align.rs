//! `dbio align`: the articles' worked examples as tests, and real disk images made with
//! sfdisk, parted, sgdisk, mkfs.xfs and mkfs.ext4 (cross-checked with `sfdisk --json` and
//! `parted -m unit s print`).

use crate::common::{is_root, LoopDev};

use crate::common::dbio;
use serde_json::Value;
use std::path::Path;
use std::process::Command as Std;

fn sh(dir: &Path, script: &str) {
    let out = Std::new("bash")
        .arg("-euo")
        .arg("pipefail")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn json(args: &[&str], dir: &Path) -> Value {
    json_exit(args, dir, 0)
}

/// `json` for a check that finds a misaligned start or a geometry that does not match the
/// RAID: the whole report on stdout, and exit code 1 (as parted's align-check fails).
fn json_failed(args: &[&str], dir: &Path) -> Value {
    json_exit(args, dir, 1)
}

fn json_exit(args: &[&str], dir: &Path, code: i32) -> Value {
    let out = dbio()
        .args(args)
        .arg("--format")
        .arg("json")
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Partition starts as sfdisk sees them.
fn sfdisk_starts(dir: &Path, img: &str) -> Vec<u64> {
    let out = Std::new("sfdisk")
        .arg("--json")
        .arg(img)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["partitiontable"]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["start"].as_u64().unwrap())
        .collect()
}

/// Partition starts as parted sees them (`parted -m unit s print`).
fn parted_starts(dir: &Path, img: &str) -> Vec<u64> {
    let out = Std::new("parted")
        .args(["-s", "-m", img, "unit", "s", "print"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| {
            l.split(':')
                .nth(1)
                .unwrap()
                .trim_end_matches('s')
                .parse()
                .unwrap()
        })
        .collect()
}

fn starts(v: &Value) -> Vec<u64> {
    v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["start_sectors"].as_u64().unwrap())
        .collect()
}

#[test]
fn calc_article_examples() {
    let dir = tempfile::tempdir().unwrap();
    // 64 KiB stripe with 512-byte sectors = 128 sectors; 8-disk RAID10 64k -> su=64k,sw=4,
    // sunit=16 swidth=64 blocks; mount sunit=128,swidth=512 (512-byte units).
    let v = json(
        &[
            "align", "calc", "--stripe", "64k", "--disks", "8", "--raid", "10",
        ],
        dir.path(),
    );
    assert_eq!(v["schema"], "dbio.align.calc/2");
    assert_eq!(v["sectors_per_stripe_unit"], 128);
    assert_eq!(v["data_disks"], 4);
    assert_eq!(v["recommended_start_sectors"], 2048);
    assert_eq!(v["xfs"]["mkfs"], "mkfs.xfs -d su=64k,sw=4");
    assert_eq!(v["xfs"]["sunit_blocks"], 16);
    assert_eq!(v["xfs"]["swidth_blocks"], 64);
    assert_eq!(v["xfs"]["mount_options"], "sunit=128,swidth=512");
    assert_eq!(v["ext4"]["stride_blocks"], 16);
    assert_eq!(v["ext4"]["stripe_width_blocks"], 64);
    assert_eq!(
        v["diskpart"],
        "diskpart: select disk N, then: create partition primary align=1024"
    );
    // 255 heads x 63 sectors with 8 KiB volume blocks -> LCM 257040 -> cylinder 16.
    let v = json(
        &[
            "align",
            "calc",
            "--stripe",
            "8k",
            "--heads",
            "255",
            "--sectors-per-track",
            "63",
        ],
        dir.path(),
    );
    assert_eq!(v["cylinder"]["sectors_per_cylinder"], 16065);
    assert_eq!(v["cylinder"]["lcm_sectors"], 257040);
    assert_eq!(v["cylinder"]["first_aligned_cylinder"], 16);
    // RAID 5/6/50/60 data disks; a stripe that is not a power of two.
    assert_eq!(
        json(
            &["align", "calc", "--stripe", "128k", "--disks", "5", "--raid", "5"],
            dir.path()
        )["data_disks"],
        4
    );
    assert_eq!(
        json(
            &["align", "calc", "--stripe", "128k", "--disks", "6", "--raid", "6"],
            dir.path()
        )["data_disks"],
        4
    );
    assert_eq!(
        json(
            &["align", "calc", "--stripe", "64k", "--disks", "12", "--raid", "60", "--spans", "2"],
            dir.path()
        )["data_disks"],
        8
    );
    let v = json(
        &[
            "align", "calc", "--stripe", "96k", "--disks", "4", "--raid", "5",
        ],
        dir.path(),
    );
    assert_eq!(v["sectors_per_stripe_unit"], 192);
    assert_eq!(v["recommended_start_sectors"], 6144);
    assert_eq!(v["xfs"]["mkfs"], "mkfs.xfs -d su=96k,sw=3");
}

#[test]
fn calc_text_snapshot() {
    let out = dbio()
        .args([
            "align",
            "calc",
            "--stripe",
            "64k",
            "--disks",
            "8",
            "--raid",
            "10",
            "--heads",
            "255",
            "--sectors-per-track",
            "63",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!("align_calc_text", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn calc_bad_input_is_a_usage_error() {
    let out = dbio()
        .args([
            "align", "calc", "--stripe", "64k", "--disks", "5", "--raid", "10",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("RAID 10 cannot have 5 disks: it needs an even number of at least 4"));
    let out = dbio()
        .args(["align", "calc", "--stripe", "1000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("stripe unit of 1000 bytes is not a positive multiple of the 512-byte sector"));
    let out = dbio()
        .args(["align", "calc", "--stripe", "64k", "--raid", "7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A negative number is refused naming its flag (clap used to say "unexpected argument
    // '-1'", naming no flag).
    for (flag, value) in [("--disks", "-1"), ("--stripe", "-64k"), ("--spans", "-2")] {
        let out = dbio()
            .args(["align", "calc", flag, value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("invalid value '{value}' for '{flag}")),
            "{err}"
        );
    }
}

#[test]
fn mbr_at_63_2048_and_odd_sector() {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M mbr.img && printf 'label: dos\\nlabel-id: 0x1234abcd\\nstart=63, size=20000, type=83\\nstart=22528, size=20480, type=8e\\nstart=45057, size=10000, type=83\\n' | sfdisk -q mbr.img");
    let v = json_failed(
        &["align", "check", "mbr.img", "--stripe", "64k"],
        dir.path(),
    );
    assert_eq!(starts(&v), vec![63, 22528, 45057]);
    assert_eq!(starts(&v), sfdisk_starts(dir.path(), "mbr.img"));
    assert_eq!(starts(&v), parted_starts(dir.path(), "mbr.img"));
    let p = &v["partitions"];
    assert_eq!(p[0]["alignment"]["stripe_aligned"], false);
    assert_eq!(p[0]["alignment"]["stripe_remainder_bytes"], 32256);
    assert_eq!(p[0]["alignment"]["aligned_4k"], false);
    assert_eq!(p[1]["alignment"]["stripe_aligned"], true);
    assert_eq!(p[1]["alignment"]["aligned_1m"], true);
    assert_eq!(p[1]["type_name"], "Linux LVM");
    assert_eq!(p[2]["alignment"]["stripe_remainder_bytes"], 512);
    assert_eq!(v["table"]["disk_id"], "0x1234abcd");
    let out = dbio()
        .args(["align", "check", "mbr.img", "--stripe", "64k"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    insta::assert_snapshot!(
        "align_check_mbr_text",
        String::from_utf8(out.stdout).unwrap()
    );
}

#[test]
fn mbr_extended_and_logical_partitions() {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M ext.img && printf 'label: dos\\nstart=2048, size=20480, type=83\\nstart=22528, type=5\\nstart=24576, size=10240, type=83\\nstart=36864, size=8192, type=82\\nstart=47105, size=4096, type=83\\n' | sfdisk -q ext.img");
    let v = json_failed(&["align", "check", "ext.img"], dir.path());
    assert_eq!(starts(&v), sfdisk_starts(dir.path(), "ext.img"));
    assert_eq!(starts(&v), parted_starts(dir.path(), "ext.img"));
    let kinds: Vec<&str> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["primary", "extended", "logical", "logical", "logical"]
    );
    let numbers: Vec<u64> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 5, 6, 7]);
    assert_eq!(v["partitions"][4]["alignment"]["aligned_4k"], false);
}

/// A GPT image with an XFS (mkfs.xfs -d su=64k,sw=4) and an ext4 (-E stride=16,stripe_width=64)
/// partition; GUIDs fixed so the output is stable.
fn gpt_image(dir: &Path) {
    sh(
        dir,
        "truncate -s 1200M gpt.img
         sgdisk -U 11111111-2222-3333-4444-555555555555 \
           -n 1:2048:+1G -t 1:8300 -u 1:11111111-0000-0000-0000-000000000001 -c 1:data \
           -n 2:0:+64M -t 2:8300 -u 2:11111111-0000-0000-0000-000000000002 -c 2:logs \
           -n 3:0:+16M -t 3:8e00 -u 3:11111111-0000-0000-0000-000000000003 gpt.img >/dev/null
         truncate -s 1G xfs.img
         mkfs.xfs -q -d su=64k,sw=4 xfs.img
         dd if=xfs.img of=gpt.img bs=1M seek=1 conv=notrunc,sparse status=none
         rm xfs.img
         mkfs.ext4 -q -F -b 4096 -E offset=$((2099200*512)),stride=16,stripe_width=64,nodiscard gpt.img 16384",
    );
}

#[test]
fn gpt_with_xfs_and_ext4_geometry() {
    let dir = tempfile::tempdir().unwrap();
    gpt_image(dir.path());
    let v = json(
        &[
            "align", "check", "gpt.img", "--stripe", "64k", "--disks", "8", "--raid", "10",
        ],
        dir.path(),
    );
    assert_eq!(v["table"]["kind"], "gpt");
    assert_eq!(v["table"]["gpt"]["header_used"], "primary");
    assert_eq!(v["table"]["gpt"]["backup_ok"], true);
    assert_eq!(starts(&v), vec![2048, 2099200, 2230272]);
    assert_eq!(starts(&v), sfdisk_starts(dir.path(), "gpt.img"));
    assert_eq!(starts(&v), parted_starts(dir.path(), "gpt.img"));
    let p = &v["partitions"];
    assert_eq!(p[0]["filesystem"]["type"], "xfs");
    assert_eq!(p[0]["filesystem"]["sunit_blocks"], 16);
    assert_eq!(p[0]["filesystem"]["swidth_blocks"], 64);
    assert_eq!(p[0]["filesystem"]["block_size_bytes"], 4096);
    assert_eq!(p[0]["geometry"]["verdict"], "match");
    assert_eq!(p[1]["filesystem"]["type"], "ext");
    assert_eq!(p[1]["filesystem"]["version"], "ext4");
    assert_eq!(p[1]["filesystem"]["raid_stride_blocks"], 16);
    assert_eq!(p[1]["filesystem"]["raid_stripe_width_blocks"], 64);
    assert_eq!(p[1]["geometry"]["verdict"], "match");
    assert_eq!(p[0]["name"], "data");
    // The same filesystems against a 4-disk RAID10: sw does not match.
    let v = json_failed(
        &[
            "align", "check", "gpt.img", "--stripe", "64k", "--disks", "4", "--raid", "10",
        ],
        dir.path(),
    );
    assert_eq!(v["partitions"][0]["geometry"]["verdict"], "mismatch");
    assert_eq!(v["partitions"][1]["geometry"]["verdict"], "mismatch");
    let out = dbio()
        .args([
            "align", "check", "gpt.img", "--stripe", "64k", "--disks", "8", "--raid", "10",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    insta::assert_snapshot!(
        "align_check_gpt_text",
        String::from_utf8(out.stdout).unwrap()
    );
    let out = dbio()
        .args([
            "align", "check", "gpt.img", "--stripe", "64k", "--disks", "8", "--raid", "10",
            "--format", "json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    insta::assert_snapshot!(
        "align_check_gpt_json",
        String::from_utf8(out.stdout).unwrap()
    );
}

#[test]
fn gpt_damaged_primary_uses_backup() {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M g.img && sgdisk -n 1:2048:+16M -t 1:8300 -n 2:0:+8M -t 2:8e00 g.img >/dev/null && printf '\\377' | dd of=g.img bs=1 seek=600 conv=notrunc status=none");
    let v = json(&["align", "check", "g.img"], dir.path());
    assert_eq!(v["table"]["gpt"]["header_used"], "backup");
    assert_eq!(v["table"]["gpt"]["primary_ok"], false);
    assert_eq!(starts(&v), vec![2048, 34816]);
    let w = v["warnings"][0].as_str().unwrap();
    assert!(
        w.starts_with("primary GPT is damaged (header CRC mismatch at sector 1: stored 0x"),
        "{w}"
    );
    assert!(
        w.contains("using the backup header at sector 131071"),
        "{w}"
    );
    // Damage the primary entry array instead: its CRC fails too.
    sh(dir.path(), "sgdisk -n 1:2048:+16M -t 1:8300 -n 2:0:+8M -t 2:8e00 -o h.img >/dev/null 2>&1 || true; truncate -s 64M h.img && sgdisk -o -n 1:2048:+16M h.img >/dev/null && printf 'X' | dd of=h.img bs=1 seek=1100 conv=notrunc status=none");
    let v = json(&["align", "check", "h.img"], dir.path());
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("partition entry array at sector 2 has a CRC mismatch"),
        "{}",
        v["warnings"]
    );
    assert_eq!(starts(&v), vec![2048]);
    // Both copies damaged: a clear error naming the image.
    sh(
        dir.path(),
        "printf '\\377' | dd of=h.img bs=1 seek=$((64*1024*1024-512+20)) conv=notrunc status=none",
    );
    let out = dbio()
        .args(["align", "check", "h.img"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read the partition table of h.img: GPT is damaged beyond use: primary: partition entry array"), "{err}");
}

#[test]
fn short_image_and_unknown_type() {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M big.img && printf 'label: dos\\nstart=2048, size=40960, type=83\\nstart=43008, size=60000, type=c2\\n' | sfdisk -q big.img && head -c 20M big.img > short.img");
    let v = json(&["align", "check", "short.img"], dir.path());
    let w: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(w.iter().any(|w| w.contains("partition 2 ends at sector 103007 but the disk/image has only 40960 sectors: the image is shorter than its partition table claims")), "{w:?}");
    assert!(
        w.iter()
            .any(|w| w.contains("partition 2: unknown partition type 0xc2")),
        "{w:?}"
    );
    assert_eq!(v["partitions"][1]["type_name"], "unknown");
    assert!(v["partitions"][1]["notes"][0]
        .as_str()
        .unwrap()
        .contains("beyond the end of the image"));
    // Not a disk at all.
    sh(dir.path(), "head -c 1M /dev/zero > zero.img");
    let out = dbio()
        .args(["align", "check", "zero.img"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("zero.img: no partition table"));
    let out = dbio()
        .args(["align", "check", "missing.img"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open missing.img read-only"));
}

#[test]
fn parted_made_table_with_4k_sector_aligned_partition() {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M p.img && parted -s -a none p.img mklabel gpt unit s mkpart primary 2048s 34815s mkpart primary 34817s 50000s");
    let v = json_failed(&["align", "check", "p.img", "--stripe", "256k"], dir.path());
    assert_eq!(starts(&v), parted_starts(dir.path(), "p.img"));
    assert_eq!(v["partitions"][0]["alignment"]["stripe_aligned"], true);
    assert_eq!(v["partitions"][1]["alignment"]["stripe_aligned"], false);
    assert_eq!(
        v["partitions"][1]["alignment"]["stripe_remainder_bytes"],
        512
    );
}

/// LVM2 PV label: pvcreate needs a block device, so this one uses a loop device (root only).
#[test]
#[ignore = "needs root and a loop device (pvcreate); scripts/test.sh runs it"]
fn lvm_pv_data_area_alignment() {
    assert!(is_root(), "pvcreate needs root and a loop device");
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M pv.img");
    // Detached on drop, also when an assertion below fails.
    let lo = LoopDev::attach(&dir.path().join("pv.img"), &[]);
    let dev = lo.dev.clone();
    let created = Std::new("pvcreate")
        .args(["-q", "-y", "--dataalignment", "192k", &dev])
        .env("LVM_SUPPRESS_FD_WARNINGS", "1")
        .output()
        .unwrap();
    let v = if created.status.success() {
        let v = json(&["align", "check", &dev, "--stripe", "64k"], dir.path());
        let _ = Std::new("pvremove")
            .args(["-q", "-y", &dev])
            .env("LVM_SUPPRESS_FD_WARNINGS", "1")
            .output();
        Some(v)
    } else {
        None
    };
    drop(lo);
    assert!(
        created.status.success(),
        "pvcreate: {}",
        String::from_utf8_lossy(&created.stderr)
    );
    let v = v.unwrap();
    let p = &v["partitions"][0];
    assert_eq!(p["filesystem"]["type"], "lvm2");
    // --dataalignment 192k puts pe_start at a multiple of 192 KiB: 64k-aligned, not 1 MiB-aligned.
    let pe = p["lvm"]["pe_start_bytes"].as_u64().unwrap();
    assert_eq!(pe % (192 * 1024), 0, "{pe}");
    assert_eq!(p["lvm"]["pe_start_aligned_to_stripe"], true);
    assert_eq!(p["lvm"]["pe_start_aligned_1m"], pe % (1 << 20) == 0);
    assert_eq!(v["block_device"], true);
    assert!(v["kernel"]["logical_block_size_bytes"].as_u64().is_some());
}

/// Found by the superblock fuzz target: a damaged PV label whose data area starts near 2^64
/// bytes, in a partition that starts at 1 MiB, overflowed the absolute data-area offset
/// (a panic in debug builds, a wrapped and wrong figure in release). Inline image: an MBR
/// with one LVM partition at sector 2048 and a PV label in its sector 1.
#[test]
fn damaged_pv_label_data_area_does_not_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let mut img = vec![0u8; 4096 * 512];
    img[446 + 4] = 0x8e;
    img[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    img[446 + 12..446 + 16].copy_from_slice(&2048u32.to_le_bytes());
    img[510] = 0x55;
    img[511] = 0xAA;
    let l = 2048 * 512 + 512;
    img[l..l + 8].copy_from_slice(b"LABELONE");
    img[l + 8..l + 16].copy_from_slice(&1u64.to_le_bytes());
    img[l + 20..l + 24].copy_from_slice(&32u32.to_le_bytes());
    img[l + 24..l + 32].copy_from_slice(b"LVM2 001");
    let pv = l + 32;
    img[pv..pv + 32].copy_from_slice(b"abcdefghijklmnopqrstuvwxyz012345");
    img[pv + 32..pv + 40].copy_from_slice(&(1u64 << 20).to_le_bytes());
    let pe_start = u64::MAX - 4095;
    img[pv + 40..pv + 48].copy_from_slice(&pe_start.to_le_bytes());
    std::fs::write(dir.path().join("pv.img"), &img).unwrap();
    let v = json_failed(&["align", "check", "pv.img", "--stripe", "64k"], dir.path());
    let p = &v["partitions"][0];
    assert_eq!(p["filesystem"]["type"], "lvm2", "{v}");
    assert_eq!(p["lvm"]["pe_start_bytes"].as_u64(), Some(pe_start));
    assert_eq!(p["lvm"]["pe_start_aligned_to_stripe"], false);
    assert_eq!(p["lvm"]["pe_start_aligned_1m"], false);
}

/// On a live block device dbio also reads the kernel's view of each partition and says when
/// it disagrees with the table (a table rewritten without re-reading it). Root only.
#[test]
#[ignore = "needs root and a loop device; scripts/test.sh runs it"]
fn live_device_kernel_view_and_disagreement() {
    assert!(is_root(), "needs root and a loop device");
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M k.img && printf 'label: dos\\nstart=2048, size=20480, type=83\\nstart=22528, size=20480, type=83\\n' | sfdisk -q k.img");
    // Detached on drop, also when an assertion below fails.
    let lo = LoopDev::attach(&dir.path().join("k.img"), &["-P"]);
    let dev = lo.dev.clone();
    // Some containers do not scan partitions on attach: ask for it, then wait for sysfs.
    let _ = Std::new("partx").args(["-a", &dev]).output();
    let name = dev.trim_start_matches("/dev/").to_string();
    for _ in 0..50 {
        if Path::new(&format!("/sys/block/{name}/{name}p2")).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let first = json(&["align", "check", &dev, "--stripe", "64k"], dir.path());
    // Move partition 2 in the table only: the kernel keeps the old start until a re-read.
    let moved = Std::new("bash")
        .args(["-c", &format!("printf 'label: dos\\nstart=2048, size=20480, type=83\\nstart=22529, size=20480, type=83\\n' | sfdisk -q --no-reread --no-tell-kernel {dev}")])
        .output()
        .unwrap();
    let second = json_failed(&["align", "check", &dev, "--stripe", "64k"], dir.path());
    drop(lo);
    assert!(
        moved.status.success(),
        "{}",
        String::from_utf8_lossy(&moved.stderr)
    );
    assert_eq!(first["block_device"], true);
    assert_eq!(first["partitions"][0]["kernel"]["start_512_sectors"], 2048);
    assert_eq!(first["partitions"][1]["kernel"]["agrees_with_table"], true);
    assert_eq!(second["partitions"][1]["start_sectors"], 22529);
    assert_eq!(
        second["partitions"][1]["kernel"]["start_512_sectors"],
        22528
    );
    assert_eq!(
        second["partitions"][1]["kernel"]["agrees_with_table"],
        false
    );
    let note = second["partitions"][1]["notes"][0].as_str().unwrap();
    assert!(note.contains("the kernel has this partition at sector 22528 (512-byte units) but the table says 22529"), "{note}");
}

/// The article's partition at sector 27344896 on a 438.5 GB disk (a sparse image): aligned
/// to a 64 KiB stripe (27344896 / 128 = 213632).
#[test]
fn article_partition_start_27344896() {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 438489317376 big.img && printf 'label: dos\\nstart=2048, size=7811072, type=82\\nstart=7813120, size=19531776, type=83\\nstart=27344896, size=829077504, type=83\\n' | sfdisk -q big.img");
    let v = json(
        &["align", "check", "big.img", "--stripe", "64k"],
        dir.path(),
    );
    assert_eq!(starts(&v), vec![2048, 7813120, 27344896]);
    assert_eq!(starts(&v), sfdisk_starts(dir.path(), "big.img"));
    for p in v["partitions"].as_array().unwrap() {
        assert_eq!(p["alignment"]["stripe_aligned"], true, "{p}");
    }
    assert_eq!(
        v["partitions"][2]["alignment"]["start_bytes"],
        27344896u64 * 512
    );
    assert_eq!(v["table"]["disk_sectors"], 856424448);
}

/// A GPT written with 4 KiB logical sectors (sgdisk on a loop device with --sector-size
/// 4096), read back from the plain image file: dbio finds the header at byte 4096.
#[test]
#[ignore = "needs root for a 4 KiB-sector loop device; scripts/test.sh runs it"]
fn gpt_with_4k_sectors_from_an_image() {
    assert!(is_root(), "needs root for a 4 KiB-sector loop device");
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M s4k.img");
    // Detached on drop, also when an assertion below fails.
    let lo = LoopDev::attach(&dir.path().join("s4k.img"), &["--sector-size", "4096"]);
    let dev = lo.dev.clone();
    let made = Std::new("sgdisk")
        .args([
            "-a",
            "1",
            "-n",
            "1:256:+16M",
            "-t",
            "1:8300",
            "-n",
            "2:4353:+8M",
            &dev,
        ])
        .output()
        .unwrap();
    drop(lo);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let v = json_failed(
        &["align", "check", "s4k.img", "--stripe", "64k"],
        dir.path(),
    );
    assert_eq!(v["table"]["sector_size_bytes"], 4096);
    assert_eq!(v["table"]["gpt"]["first_usable_sectors"], 6);
    assert_eq!(starts(&v), vec![256, 4353]);
    assert_eq!(v["partitions"][0]["alignment"]["start_bytes"], 1048576);
    assert_eq!(v["partitions"][0]["alignment"]["stripe_aligned"], true);
    assert_eq!(
        v["partitions"][1]["alignment"]["stripe_remainder_bytes"],
        4096
    );
    assert_eq!(v["partitions"][1]["alignment"]["aligned_4k"], true);
}

/// `align check` exits 1 when a partition start is misaligned (to 4 KiB, or to --stripe) or a
/// filesystem's geometry does not match the RAID, as parted's `align-check` does; the report
/// is printed all the same. It exited 0.
#[test]
fn check_exits_1_when_misaligned() {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M a.img && printf 'label: dos\\nstart=2048, size=20480, type=83\\nstart=24576, size=20480, type=83\\n' | sfdisk -q a.img");
    sh(dir.path(), "truncate -s 64M b.img && printf 'label: dos\\nstart=2048, size=20480, type=83\\nstart=24577, size=20480, type=83\\n' | sfdisk -q b.img");
    let code = |args: &[&str]| {
        let out = dbio().args(args).current_dir(dir.path()).output().unwrap();
        assert!(!out.stdout.is_empty(), "{args:?}");
        out.status.code()
    };
    assert_eq!(
        code(&["align", "check", "a.img", "--stripe", "64k"]),
        Some(0)
    );
    assert_eq!(code(&["align", "check", "a.img"]), Some(0));
    // 24576 sectors = 12 MiB: aligned to 4 KiB but not to a 8 MiB stripe.
    assert_eq!(
        code(&["align", "check", "a.img", "--stripe", "8m"]),
        Some(1)
    );
    // 24577: off 4 KiB, with or without a stripe, text or JSON.
    assert_eq!(code(&["align", "check", "b.img"]), Some(1));
    assert_eq!(
        code(&["align", "check", "b.img", "--stripe", "64k"]),
        Some(1)
    );
    let v = json_failed(&["align", "check", "b.img", "--stripe", "64k"], dir.path());
    assert_eq!(v["partitions"][1]["alignment"]["aligned_4k"], false);
    // The report goes to --output as well.
    assert_eq!(code(&["align", "check", "b.img", "-o", "-"]), Some(1));
}

/// `align check --format csv`: the partition list, one row per partition, written to `-o FILE`
/// instead of stdout; the exit code still says whether the check failed. `align calc` has no
/// table, so no CSV: asking for it is a usage error.
#[test]
fn check_csv_to_a_file_and_formats_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), "truncate -s 64M b.img && printf 'label: dos\\nstart=2048, size=20480, type=83\\nstart=24577, size=20480, type=83\\n' | sfdisk -q b.img");
    let out = dbio()
        .args([
            "align", "check", "b.img", "--stripe", "64k", "--format", "csv",
        ])
        .args(["-o", "parts.csv"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "the result went to the file");
    let csv = std::fs::read_to_string(dir.path().join("parts.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[0].starts_with("target,number,kind,type_name,type_code,name,sector_size_bytes,start_sectors,end_sectors,size_bytes,start_bytes,stripe_bytes,stripe_aligned,"), "{csv}");
    assert!(
        rows[1].starts_with(
            "b.img,1,primary,Linux,0x83,,512,2048,22527,10485760,1048576,65536,true,0,true,"
        ),
        "{csv}"
    );
    assert!(
        rows[2].starts_with(
            "b.img,2,primary,Linux,0x83,,512,24577,45056,10485760,12583424,65536,false,512,false,"
        ),
        "{csv}"
    );
    for (args, flag) in [
        (
            &["align", "calc", "--stripe", "64k", "--format", "csv"][..],
            "csv",
        ),
        (
            &["align", "check", "b.img", "--format", "prometheus"],
            "prometheus",
        ),
    ] {
        let out = dbio().args(args).current_dir(dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("invalid value '{flag}' for '--format")),
            "{err}"
        );
    }
}
