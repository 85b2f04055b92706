//! `dbio innodb pages --output-dir` on a filesystem that fills up (a real tmpfs of 256 KiB),
//! then the same command again once there is room: it continues into the same directory.

use crate::common::{dbio, require_root};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every .ibd of testdata/innodb, in name order (about 1.5 MiB; 47 pages to write today).
fn sources() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/innodb");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ibd"))
        .collect();
    v.sort();
    v
}

/// A tmpfs mounted by the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount -t tmpfs on {}", at.display());
        Tmpfs(at.to_path_buf())
    }

    fn resize(&self, size: &str) {
        let ok = std::process::Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

fn pages(out: &Path, extra: &[&str]) -> std::process::Output {
    dbio()
        .args(["innodb", "pages", "--allow-same-device", "--output-dir"])
        .arg(out)
        .args(extra)
        .args(sources())
        .output()
        .unwrap()
}

fn manifest(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap()
}

/// Every file under `dir` (relative path -> bytes).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The filesystem fills: exit 1 with a message saying what is kept and what to do, no part
/// of a page left, and a manifest listing exactly the whole pages that are there (before, the
/// last page file was left cut short and no manifest was written). Once there is room, the
/// same command continues into the directory (before: refused as not empty) and ends with
/// what a run into an empty directory writes, byte for byte.
#[test]
#[ignore = "needs root (mounts a small tmpfs)"]
fn a_full_filesystem_keeps_whole_pages_and_a_rerun_continues() {
    require_root("mounts a small tmpfs");
    let tmp = tempfile::tempdir().unwrap();
    // What a run into an empty directory with room writes.
    let fresh = tmp.path().join("fresh");
    assert!(pages(&fresh, &[]).status.success());
    let total = manifest(&fresh)["pages"].as_array().unwrap().len();
    let fs = Tmpfs::mount(&tmp.path().join("small"), "256k");
    let out = fs.0.join("out");
    let o = pages(&out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(
        err.contains(
            "pages are there, each whole and listed in manifest.json (no part of a page is left)"
        ) && err.contains("run the same command again: it keeps those pages and writes the rest"),
        "{err}"
    );
    let m = manifest(&out);
    assert!(
        m["stopped_by"]
            .as_str()
            .is_some_and(|s| s.contains("No space left on device")),
        "{m}"
    );
    assert_eq!(m["written_by"], "dbio innodb pages");
    let listed = m["pages"].as_array().unwrap();
    assert!(
        !listed.is_empty() && listed.len() < total,
        "{} pages",
        listed.len()
    );
    // Each file is exactly its listed pages, one after the other; nothing else is there.
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for p in listed {
        let f = p["file"].as_str().unwrap().to_string();
        let end = want.entry(f).or_default();
        assert_eq!(p["file_offset"].as_u64().unwrap(), *end, "{p}");
        *end += p["page_size"].as_u64().unwrap();
    }
    let mut on_disk: BTreeMap<String, u64> = files(&out)
        .into_iter()
        .map(|(k, v)| (k, v.len() as u64))
        .collect();
    assert!(on_disk.remove("manifest.json").is_some());
    assert_eq!(on_disk, want);
    // Still full: refused again the same way, nothing lost.
    let o = pages(&out, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        manifest(&out)["pages"].as_array().unwrap().len(),
        listed.len()
    );
    // Room now: the rerun keeps the pages and writes the rest.
    fs.resize("8m");
    let o = pages(&out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains(&format!(
            "{total} ({} kept from the previous run) written to",
            listed.len()
        )),
        "{report}"
    );
    assert_eq!(manifest(&out), manifest(&fresh));
    assert!(files(&out) == files(&fresh), "the continued run differs");
}

/// A directory holding a manifest.json that `innodb pages` did not write is still refused
/// without --force (as any non-empty directory); one it wrote is continued.
#[test]
fn only_a_directory_innodb_pages_wrote_is_continued() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("manifest.json"), br#"{"pages": []}"#).unwrap();
    let o = pages(&out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not empty and its manifest.json is not one `innodb pages` wrote"),
        "{err}"
    );
    let done = tmp.path().join("done");
    assert!(pages(&done, &[]).status.success());
    let total = manifest(&done)["pages"].as_array().unwrap().len();
    let before = files(&done);
    let o = pages(&done, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains(&format!("{total} ({total} kept from the previous run)")),
        "{err}"
    );
    assert!(files(&done) == before);
}
