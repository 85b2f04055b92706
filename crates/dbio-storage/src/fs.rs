//! Filesystem superblocks: the geometry fields that decide whether a filesystem matches its
//! RAID. XFS: `sb_blocksize`, `sb_dblocks`, `sb_agblocks`, `sb_agcount`, `sb_unit`, `sb_width`
//! (big-endian, at offset 0). ext2/3/4: block size, block count, `s_raid_stride`,
//! `s_raid_stripe_width` (little-endian, superblock at byte 1024).

use crate::source::ReadAt;

pub use dbio_schema::disk::{ExtSuper, Superblock, XfsSuper};

fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).trim().to_string()
}

/// Parses an XFS superblock from the first 512 bytes of a filesystem.
pub fn parse_xfs(b: &[u8]) -> Option<XfsSuper> {
    if b.len() < 200 || &b[0..4] != b"XFSB" {
        return None;
    }
    let be32 = |at: usize| u32::from_be_bytes(b[at..at + 4].try_into().expect("4"));
    let be64 = |at: usize| u64::from_be_bytes(b[at..at + 8].try_into().expect("8"));
    let block_size = be32(4);
    let data_blocks = be64(8);
    Some(XfsSuper {
        block_size,
        data_blocks,
        ag_blocks: be32(84),
        ag_count: be32(88),
        sunit_blocks: be32(184),
        swidth_blocks: be32(188),
        sector_size: u16::from_be_bytes([b[102], b[103]]),
        size_bytes: data_blocks.saturating_mul(block_size as u64),
        label: cstr(&b[108..120]),
    })
}

/// Parses an ext2/3/4 superblock (the 1024 bytes at byte offset 1024 of the filesystem).
pub fn parse_ext(sb: &[u8]) -> Option<ExtSuper> {
    if sb.len() < 0x180 || u16::from_le_bytes([sb[0x38], sb[0x39]]) != 0xEF53 {
        return None;
    }
    let le32 = |at: usize| u32::from_le_bytes(sb[at..at + 4].try_into().expect("4"));
    let log = le32(0x18);
    if log > 6 {
        return None;
    }
    let block_size = 1024u32 << log;
    let compat = le32(0x5C);
    let incompat = le32(0x60);
    let ro_compat = le32(0x64);
    let mut blocks = le32(0x04) as u64;
    if incompat & 0x80 != 0 {
        blocks |= (le32(0x150) as u64) << 32;
    }
    // extents, 64bit, flex_bg, huge_file, dir_nlink, extra_isize, metadata_csum: ext4.
    let ext4 =
        incompat & (0x40 | 0x80 | 0x200) != 0 || ro_compat & (0x8 | 0x20 | 0x40 | 0x400) != 0;
    let version = if ext4 {
        "ext4"
    } else if compat & 0x4 != 0 {
        "ext3"
    } else {
        "ext2"
    };
    Some(ExtSuper {
        version: version.to_string(),
        block_size,
        blocks,
        raid_stride: u16::from_le_bytes([sb[0x164], sb[0x165]]),
        raid_stripe_width: le32(0x170),
        size_bytes: blocks.saturating_mul(block_size as u64),
        label: cstr(&sb[0x78..0x88]),
    })
}

/// Looks for an XFS or ext superblock or an LVM2 label at the start of `src` (a partition).
/// `Ok(None)` when none is recognised.
pub fn probe(src: &dyn ReadAt) -> std::io::Result<Option<Superblock>> {
    let len = src.size().min(4096) as usize;
    let head = src.read_vec(0, len)?;
    if let Some(x) = parse_xfs(&head) {
        return Ok(Some(Superblock::Xfs(x)));
    }
    if head.len() >= 2048 {
        if let Some(e) = parse_ext(&head[1024..2048]) {
            return Ok(Some(Superblock::Ext(e)));
        }
    }
    if let Some(l) = crate::lvm::parse_label(&head) {
        return Ok(Some(Superblock::Lvm2(l)));
    }
    Ok(None)
}
