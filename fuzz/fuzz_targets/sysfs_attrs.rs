//! Small texts read from sysfs and tools: queue attributes (scheduler, numbers, booleans),
//! `uevent`, `dev` (major:minor), `lvs` output, LVM dm names and the kernel release.
#![no_main]
use dbio_storage::rules;
use dbio_sys::sysfs;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = sysfs::parse_u64(&text);
    let _ = sysfs::parse_bool(&text);
    let _ = sysfs::parse_scheduler(&text);
    let _ = sysfs::parse_uevent(&text);
    let _ = sysfs::parse_major_minor(&text);
    let _ = rules::active_scheduler(&text);
    let _ = rules::kernel_before(&text, 5, 4);
    let _ = rules::split_dm_lvm_name(&text);
    let lvs = rules::parse_lvs(&text);
    if let Some(first) = lvs.first() {
        let (vg, lv) = (first.vg.clone(), first.lv.clone());
        let _ = rules::lvm_snapshots("/data", &vg, &lv, &lvs);
    }
});
