//! `/proc/self/mountinfo` and `/proc/swaps` text, and the mount lookup done on the result.
#![no_main]
use dbio_sys::mounts;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(entries) = mounts::parse_mountinfo(&text) {
        let _ = mounts::mount_for(&entries, Path::new("/var/lib/mysql/ibdata1"));
        for e in &entries {
            let _ = mounts::mount_for(&entries, Path::new(&e.mountpoint));
        }
    }
    let _ = mounts::parse_swaps(&text);
    let _ = mounts::unescape(&text);
});
