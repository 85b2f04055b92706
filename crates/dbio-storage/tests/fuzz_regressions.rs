//! Inputs that crashed a fuzz target (`fuzz/`, `scripts/fuzz.sh`), kept as regression tests:
//! each ran into a panic (overflow, division by zero) in a debug build, and into silently
//! wrong figures in a release build, before its fix.

use dbio_storage::{align, crc32::crc32, table};

/// A protective MBR and a GPT (primary and backup, valid CRCs) of `sectors` 512-byte sectors
/// whose entries are `(first_lba, last_lba)`.
fn gpt_image(sectors: usize, parts: &[(u64, u64)]) -> Vec<u8> {
    let ss = 512usize;
    let mut img = vec![0u8; ss * sectors];
    img[446 + 4] = 0xEE;
    img[446 + 8..446 + 12].copy_from_slice(&1u32.to_le_bytes());
    img[446 + 12..446 + 16].copy_from_slice(&((sectors - 1) as u32).to_le_bytes());
    img[510] = 0x55;
    img[511] = 0xAA;
    let mut entries = vec![0u8; 128 * 128];
    for (i, &(first, last)) in parts.iter().enumerate() {
        let e = &mut entries[i * 128..(i + 1) * 128];
        // Linux filesystem data, as sgdisk writes the GUID.
        e[0..16].copy_from_slice(&[
            0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47, 0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47,
            0x7D, 0xE4,
        ]);
        e[16] = i as u8 + 1;
        e[32..40].copy_from_slice(&first.to_le_bytes());
        e[40..48].copy_from_slice(&last.to_le_bytes());
    }
    let ecrc = crc32(&entries);
    let last = (sectors - 1) as u64;
    let header = |my: u64, alt: u64, ent: u64| {
        let mut h = vec![0u8; 92];
        h[0..8].copy_from_slice(b"EFI PART");
        h[8..12].copy_from_slice(&0x0001_0000u32.to_le_bytes());
        h[12..16].copy_from_slice(&92u32.to_le_bytes());
        h[24..32].copy_from_slice(&my.to_le_bytes());
        h[32..40].copy_from_slice(&alt.to_le_bytes());
        h[40..48].copy_from_slice(&34u64.to_le_bytes());
        h[48..56].copy_from_slice(&(last - 33).to_le_bytes());
        h[72..80].copy_from_slice(&ent.to_le_bytes());
        h[80..84].copy_from_slice(&128u32.to_le_bytes());
        h[84..88].copy_from_slice(&128u32.to_le_bytes());
        h[88..92].copy_from_slice(&ecrc.to_le_bytes());
        let c = crc32(&h);
        h[16..20].copy_from_slice(&c.to_le_bytes());
        h
    };
    img[ss..ss + 92].copy_from_slice(&header(1, last, 2));
    img[2 * ss..2 * ss + entries.len()].copy_from_slice(&entries);
    let b = header(last, 1, last - 32);
    img[(sectors - 1) * ss..(sectors - 1) * ss + 92].copy_from_slice(&b);
    let at = (sectors - 33) * ss;
    img[at..at + entries.len()].copy_from_slice(&entries);
    img
}

/// fuzz target partition_table: a GPT entry (valid CRCs) whose sectors lie past 2^64 bytes
/// made `start_sector * sector_size` (what `dbio align check` and [`align::check_start`]
/// compute) overflow. Such an entry is damage: it is skipped with a warning naming it, and
/// every partition returned has a byte range that fits in u64.
#[test]
fn gpt_entry_beyond_any_disk_is_skipped_not_overflowed() {
    let huge = 1u64 << 60;
    let img = gpt_image(128, &[(40, 60), (huge, huge + 10), (0, u64::MAX), (64, 90)]);
    let t = table::read_table(&img, None).unwrap();
    assert_eq!(t.kind, table::TableKind::Gpt);
    for p in &t.partitions {
        let end = p.start_sector.checked_add(p.sectors);
        assert!(
            end.and_then(|e| e.checked_mul(t.sector_size)).is_some(),
            "partition {} (start {}, {} sectors) does not fit in u64 bytes",
            p.number,
            p.start_sector,
            p.sectors
        );
        let _ = align::check_start(p.start_sector, t.sector_size, Some(65536));
    }
    let numbers: Vec<u32> = t.partitions.iter().map(|p| p.number).collect();
    assert_eq!(numbers, [1, 4]);
    for n in [2, 3] {
        assert!(
            t.warnings
                .iter()
                .any(|w| w.starts_with(&format!("partition {n}:")) && w.contains("skipped")),
            "{:?}",
            t.warnings
        );
    }
}

/// fuzz target partition_table: a sector size as typed (`dbio align check --sector 0`, or a
/// huge one) divided by zero or overflowed; it is now refused with an error naming it.
#[test]
fn impossible_sector_size_is_an_error_not_a_panic() {
    let img = gpt_image(128, &[(40, 60)]);
    for ss in [0, 1, 8, 100, 1 << 20, u64::MAX] {
        let e = table::read_table(&img, Some(ss)).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&ss.to_string()), "{msg}");
    }
    assert_eq!(
        table::read_table(&img, Some(512)).unwrap().partitions.len(),
        1
    );
}

/// fuzz target partition_table: a primary GPT header (valid CRC) whose entry array starts
/// past 2^64 bytes overflowed `entries_lba * sector_size`. The header is unusable: the
/// backup is used, with a warning that says why.
#[test]
fn gpt_entry_array_beyond_any_disk_falls_back_to_the_backup() {
    let mut img = gpt_image(128, &[(40, 60)]);
    let h = 512;
    img[h + 72..h + 80].copy_from_slice(&(1u64 << 60).to_le_bytes());
    img[h + 16..h + 20].fill(0);
    let c = crc32(&img[h..h + 92]);
    img[h + 16..h + 20].copy_from_slice(&c.to_le_bytes());
    let t = table::read_table(&img, None).unwrap();
    assert_eq!(
        t.gpt.as_ref().unwrap().header_used,
        table::HeaderSource::Backup
    );
    assert_eq!(t.partitions.len(), 1);
    assert!(
        t.warnings
            .iter()
            .any(|w| w.contains("primary GPT is damaged") && w.contains(&(1u64 << 60).to_string())),
        "{:?}",
        t.warnings
    );
}

/// A strip size near 2^64 units (`Strip Size : 18446744073709551615 KB`) overflowed the
/// conversion to bytes: the size is unknown, the rest of the output still counts.
#[test]
fn huge_strip_size_is_unknown_not_an_overflow() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/raid");
    for (file, key) in [
        ("real/megacli-ldinfo-seven-vds-wb.txt", "Strip Size"),
        ("storcli-healthy.txt", "Strip Size"),
        ("ssacli-healthy.txt", "Strip Size"),
        ("real/arcconf-getconfig-ld-raid10.txt", "Stripe-unit size"),
        ("omreport-healthy.txt", "Stripe Element Size"),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let huge: String = text
            .lines()
            .map(|l| match l.split_once(':').or_else(|| l.split_once('=')) {
                Some((k, _)) if k.trim() == key => format!("{k}: 18446744073709551615 KB\n"),
                _ => format!("{l}\n"),
            })
            .collect();
        assert_ne!(huge, text, "{file} has no {key} line");
        let r = dbio_storage::raid::parse(&huge, file).unwrap();
        let vds: Vec<_> = r
            .controllers
            .iter()
            .flat_map(|c| &c.virtual_drives)
            .collect();
        assert!(!vds.is_empty(), "{file}");
        assert!(
            vds.iter().all(|v| v.stripe_bytes.is_none()),
            "{file}: {vds:?}"
        );
        let _ = dbio_storage::rules::raid_rules(&r);
    }
}
