//! Damaged input never panics: truncated RAID tool output, and partition tables, superblocks
//! and PV labels with bytes flipped.

use dbio_storage::{fs, raid, table};
use std::path::PathBuf;

fn fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/raid");
    // The hand-made fixtures and the real captures in real/.
    let mut v: Vec<(String, String)> = [dir.clone(), dir.join("real")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn truncated_raid_output_does_not_panic() {
    let all = fixtures();
    assert!(all.len() >= 30);
    for (name, text) in all {
        let mut cut = 0;
        while cut < text.len() {
            let mut end = cut;
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let part = &text[..end];
            if let Ok(r) = raid::parse(part, &name) {
                let _ = dbio_storage::rules::raid_rules(&r);
            }
            cut += 37;
        }
    }
}

/// A small deterministic generator (xorshift) so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn mbr_gpt_image() -> Vec<u8> {
    // Protective MBR + a GPT with one partition, built by hand with valid CRCs.
    let ss = 512usize;
    let sectors = 2048usize;
    let mut img = vec![0u8; ss * sectors];
    img[446 + 4] = 0xEE;
    img[446 + 8..446 + 12].copy_from_slice(&1u32.to_le_bytes());
    img[446 + 12..446 + 16].copy_from_slice(&((sectors - 1) as u32).to_le_bytes());
    img[510] = 0x55;
    img[511] = 0xAA;
    let mut entries = vec![0u8; 128 * 128];
    let linux: [u8; 16] = [
        0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47, 0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D,
        0xE4,
    ];
    entries[0..16].copy_from_slice(&linux);
    entries[16] = 1;
    entries[32..40].copy_from_slice(&64u64.to_le_bytes());
    entries[40..48].copy_from_slice(&1000u64.to_le_bytes());
    let ecrc = dbio_storage::crc32::crc32(&entries);
    let header = |my: u64, alt: u64, ent: u64| {
        let mut h = vec![0u8; 92];
        h[0..8].copy_from_slice(b"EFI PART");
        h[8..12].copy_from_slice(&0x0001_0000u32.to_le_bytes());
        h[12..16].copy_from_slice(&92u32.to_le_bytes());
        h[24..32].copy_from_slice(&my.to_le_bytes());
        h[32..40].copy_from_slice(&alt.to_le_bytes());
        h[40..48].copy_from_slice(&34u64.to_le_bytes());
        h[48..56].copy_from_slice(&((sectors - 34) as u64).to_le_bytes());
        h[72..80].copy_from_slice(&ent.to_le_bytes());
        h[80..84].copy_from_slice(&128u32.to_le_bytes());
        h[84..88].copy_from_slice(&128u32.to_le_bytes());
        h[88..92].copy_from_slice(&ecrc.to_le_bytes());
        let c = dbio_storage::crc32::crc32(&h);
        h[16..20].copy_from_slice(&c.to_le_bytes());
        h
    };
    let last = (sectors - 1) as u64;
    let p = header(1, last, 2);
    img[ss..ss + 92].copy_from_slice(&p);
    img[2 * ss..2 * ss + entries.len()].copy_from_slice(&entries);
    let b = header(last, 1, last - 32);
    img[(sectors - 1) * ss..(sectors - 1) * ss + 92].copy_from_slice(&b);
    let at = (sectors - 33) * ss;
    img[at..at + entries.len()].copy_from_slice(&entries);
    img
}

#[test]
fn hand_built_gpt_reads_and_survives_bit_flips() {
    let img = mbr_gpt_image();
    let t = table::read_table(&img, None).unwrap();
    assert_eq!(t.kind, table::TableKind::Gpt);
    assert_eq!(t.partitions.len(), 1);
    assert_eq!(
        (t.partitions[0].start_sector, t.partitions[0].sectors),
        (64, 937)
    );
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let mut m = img.clone();
        for _ in 0..4 {
            // Flip bytes in the label areas where parsing happens.
            let region = rng.next() % 4;
            let off = match region {
                0 => (rng.next() % 1024) as usize,
                1 => 1024 + (rng.next() % (128 * 128)) as usize,
                2 => m.len() - 512 + (rng.next() % 512) as usize,
                _ => m.len() - 33 * 512 + (rng.next() % (128 * 128)) as usize,
            };
            m[off] ^= (rng.next() % 255 + 1) as u8;
        }
        let _ = table::read_table(&m, None);
        let _ = table::read_table(&m[..m.len() / 2].to_vec(), None);
    }
}

#[test]
fn superblock_probe_survives_garbage() {
    let mut rng = Rng(42);
    for i in 0..2000 {
        let mut b = vec![0u8; 4096];
        for x in b.iter_mut() {
            *x = rng.next() as u8;
        }
        match i % 3 {
            0 => b[0..4].copy_from_slice(b"XFSB"),
            1 => {
                b[1024 + 0x38] = 0x53;
                b[1024 + 0x39] = 0xEF;
                b[1024 + 0x18..1024 + 0x1C]
                    .copy_from_slice(&((rng.next() % 8) as u32).to_le_bytes());
            }
            _ => {
                let s = 512 * (rng.next() % 4) as usize;
                b[s..s + 8].copy_from_slice(b"LABELONE");
                b[s + 24..s + 32].copy_from_slice(b"LVM2 001");
            }
        }
        let len = (rng.next() % 4096) as usize;
        let _ = fs::probe(&b[..len].to_vec());
        let _ = fs::probe(&b);
    }
}
