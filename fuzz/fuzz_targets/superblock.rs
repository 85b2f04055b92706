//! Filesystem superblocks (XFS, ext2/3/4) and the LVM2 physical-volume label at the start of
//! a partition, then the geometry figures `dbio align check` derives from them.
#![no_main]
use dbio_storage::fs::{self, Superblock};
use dbio_storage::{align, lvm};
use libfuzzer_sys::fuzz_target;

fn geometry(sb: &Superblock) {
    let (su, sw) = match sb {
        Superblock::Xfs(x) => (x.su_bytes(), x.sw_bytes()),
        Superblock::Ext(e) => (e.su_bytes(), e.sw_bytes()),
        Superblock::Lvm2(l) => {
            // A PV in a partition that starts at 1 MiB: where its data area starts.
            let abs = (1u64 << 20).saturating_add(l.pe_start_bytes);
            let _ = abs.is_multiple_of(65536);
            return;
        }
    };
    let _ = align::check_geometry(su, sw, 65536, Some(4));
    let _ = align::check_geometry(su, sw, 65536, None);
}

fuzz_target!(|data: &[u8]| {
    let src = data.to_vec();
    if let Ok(Some(sb)) = fs::probe(&src) {
        let _ = sb.name();
        let _ = serde_json::to_string(&sb);
        geometry(&sb);
    }
    if let Some(x) = fs::parse_xfs(data) {
        geometry(&Superblock::Xfs(x));
    }
    if let Some(e) = fs::parse_ext(data) {
        geometry(&Superblock::Ext(e));
    }
    if let Some(l) = lvm::parse_label(data) {
        geometry(&Superblock::Lvm2(l));
    }
});
