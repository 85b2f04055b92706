//! The LVM2 physical-volume label: `LABELONE` in one of the first four 512-byte sectors,
//! followed by the PV header whose first data area starts at `pe_start` — where the first
//! physical extent, and so every logical volume's data, begins.

pub use dbio_schema::disk::{MetadataArea, PvLabel};

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4"))
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8"))
}

/// LVM's label CRC: the CRC-32 update with initial value 0xf597a6cf and no final inversion.
fn lvm_crc(data: &[u8]) -> u32 {
    let mut c = 0xf597_a6cfu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    c
}

/// Parses a PV label from the first 2048 bytes (or more) of a partition.
pub fn parse_label(head: &[u8]) -> Option<PvLabel> {
    for sector in 0..4usize {
        let o = sector * 512;
        if head.len() < o + 512 {
            return None;
        }
        let s = &head[o..o + 512];
        if &s[0..8] != b"LABELONE" || &s[24..32] != b"LVM2 001" {
            continue;
        }
        let crc_ok = lvm_crc(&s[20..512]) == le32(s, 16);
        let off = le32(s, 20) as usize;
        if off < 32 || off + 40 + 16 > 512 {
            return None;
        }
        let pv = &s[off..];
        let raw = String::from_utf8_lossy(&pv[0..32]).to_string();
        let pv_uuid = if raw.len() == 32 && raw.is_ascii() {
            format!(
                "{}-{}-{}-{}-{}-{}-{}",
                &raw[0..6],
                &raw[6..10],
                &raw[10..14],
                &raw[14..18],
                &raw[18..22],
                &raw[22..26],
                &raw[26..32]
            )
        } else {
            raw
        };
        let device_size_bytes = le64(pv, 32);
        let mut at = 40;
        let mut data = Vec::new();
        while at + 16 <= pv.len() {
            let (offset, size) = (le64(pv, at), le64(pv, at + 8));
            at += 16;
            if offset == 0 && size == 0 {
                break;
            }
            data.push(offset);
        }
        let mut meta = Vec::new();
        while at + 16 <= pv.len() {
            let (offset, size) = (le64(pv, at), le64(pv, at + 8));
            at += 16;
            if offset == 0 && size == 0 {
                break;
            }
            meta.push(MetadataArea {
                offset_bytes: offset,
                size_bytes: size,
            });
        }
        return Some(PvLabel {
            label_sector: sector as u64,
            pv_uuid,
            device_size_bytes,
            pe_start_bytes: data.first().copied().unwrap_or(0),
            metadata_areas: meta,
            crc_ok,
        });
    }
    None
}
