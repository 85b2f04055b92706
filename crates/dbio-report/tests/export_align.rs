//! The output formats of `dbio align calc` (text, JSON) and `dbio align check` (text, JSON,
//! CSV) on hand-built results: a snapshot of every (result, format) pair, and the facts each
//! format must keep.

use dbio_report::export::{Csv, Json, Text};
use dbio_report::Exporter;
use dbio_schema::align::*;
use dbio_schema::disk::*;
use dbio_schema::doc::{self, Document, DBIO_VERSION};

/// `dbio align calc --stripe 64k --disks 8 --raid 10 --heads 255 --sectors-per-track 63`.
fn calc_full() -> CalcResult {
    CalcResult {
        stripe_bytes: 65536,
        sector_bytes: 512,
        sectors_per_stripe_unit: 128,
        raid: Some(RaidLevel::Raid10),
        disks: Some(8),
        data_disks: Some(4),
        full_stripe_bytes: Some(262144),
        recommended_start_sectors: 2048,
        recommended_start_bytes: 1 << 20,
        smallest_start_mbr_sectors: 128,
        smallest_start_gpt_sectors: 128,
        cylinder: Some(CylinderAlign {
            heads: 255,
            sectors_per_track: 63,
            sectors_per_cylinder: 16065,
            sectors_per_block: 128,
            lcm_sectors: 2056320,
            first_aligned_cylinder: 128,
            start_sectors: 2056320,
        }),
        fs_block_bytes: 4096,
        xfs: Some(XfsSettings {
            mkfs: "mkfs.xfs -d su=64k,sw=4".into(),
            sunit_blocks: 16,
            swidth_blocks: 64,
            mount_sunit_512_sectors: 128,
            mount_swidth_512_sectors: 512,
            mount_options: "sunit=128,swidth=512".into(),
        }),
        ext4: Some(Ext4Settings {
            stride_blocks: 16,
            stripe_width_blocks: 64,
            mkfs: "mkfs.ext4 -b 4096 -E stride=16,stripe_width=64".into(),
            tune2fs: "tune2fs -E stride=16,stripe_width=64".into(),
        }),
        parted: "parted -s -a none DEVICE mklabel gpt unit s mkpart primary 2048s 100%".into(),
        sfdisk: "echo 'start=2048, type=L' | sfdisk --label gpt DEVICE".into(),
        diskpart: "diskpart: select disk N, then: create partition primary align=1024".into(),
        notes: Vec::new(),
    }
}

/// `dbio align calc --stripe 96k --raid 5 --sector 4k`: no disk count, so no mkfs settings,
/// a stripe that is not a power of two, 4 KiB sectors.
fn calc_minimal() -> CalcResult {
    CalcResult {
        stripe_bytes: 96 << 10,
        sector_bytes: 4096,
        sectors_per_stripe_unit: 24,
        raid: Some(RaidLevel::Raid5),
        disks: None,
        data_disks: None,
        full_stripe_bytes: None,
        recommended_start_sectors: 768,
        recommended_start_bytes: 3 << 20,
        smallest_start_mbr_sectors: 24,
        smallest_start_gpt_sectors: 24,
        cylinder: None,
        fs_block_bytes: 4096,
        xfs: None,
        ext4: None,
        parted: "parted -s -a none DEVICE mklabel gpt unit s mkpart primary 768s 100%".into(),
        sfdisk: "echo 'start=768, type=L' | sfdisk --label gpt DEVICE".into(),
        diskpart: "diskpart: select disk N, then: create partition primary align=3072".into(),
        notes: vec![
            "the stripe unit 96k is not a power of two: aligned starts are multiples of 24 sectors, and 1 MiB is not one of them".into(),
            "give --disks with --raid to get the data-disk count and the mkfs settings".into(),
        ],
    }
}

fn start(sector: u64, ss: u64, stripe: Option<u64>) -> StartAlign {
    let b = sector * ss;
    StartAlign {
        start_sectors: sector,
        start_bytes: b,
        stripe_bytes: stripe,
        stripe_aligned: stripe.map(|s| b.is_multiple_of(s)),
        stripe_remainder_bytes: stripe.map(|s| b % s),
        aligned_4k: b.is_multiple_of(4096),
        aligned_64k: b.is_multiple_of(65536),
        aligned_1m: b.is_multiple_of(1 << 20),
    }
}

#[allow(clippy::too_many_arguments)]
fn part(
    number: u32,
    kind: PartKind,
    type_name: &str,
    type_code: &str,
    start_sector: u64,
    sectors: u64,
    ss: u64,
    stripe: Option<u64>,
) -> PartitionCheck {
    PartitionCheck {
        number,
        kind,
        type_name: type_name.into(),
        type_code: type_code.into(),
        name: None,
        start_sectors: start_sector,
        end_sectors: start_sector + sectors - 1,
        size_bytes: sectors * ss,
        alignment: start(start_sector, ss, stripe),
        filesystem: None,
        geometry: None,
        lvm: None,
        kernel: None,
        notes: Vec::new(),
    }
}

fn xfs() -> XfsSuper {
    XfsSuper {
        block_size: 4096,
        data_blocks: 512,
        ag_blocks: 128,
        ag_count: 4,
        sunit_blocks: 16,
        swidth_blocks: 32,
        sector_size: 512,
        size_bytes: 2 << 20,
        label: String::new(),
    }
}

/// A live MBR loop device checked against a 64 KiB x 4 RAID: an XFS partition whose width is
/// wrong, an extended container, a logical LVM PV off the stripe, a partition the kernel has
/// elsewhere, and the kernel's queue limits.
fn check_mbr_live() -> DiskCheck {
    let stripe = Some(65536);
    let mut p1 = part(
        1,
        PartKind::Primary,
        "Linux",
        "0x83",
        2048,
        4096,
        512,
        stripe,
    );
    p1.geometry = Some(GeometryCheck {
        fs_su_bytes: 65536,
        fs_sw_bytes: 131072,
        expected_su_bytes: 65536,
        expected_sw_bytes: Some(262144),
        verdict: GeometryMatch::Mismatch,
    });
    p1.filesystem = Some(Superblock::Xfs(xfs()));
    p1.kernel = Some(KernelPart {
        name: "loop7p1".into(),
        start_512_sectors: Some(2048),
        alignment_offset_bytes: Some(0),
        agrees_with_table: Some(true),
    });
    let mut p2 = part(
        2,
        PartKind::Extended,
        "Extended",
        "0x05",
        8192,
        16384,
        512,
        stripe,
    );
    p2.kernel = Some(KernelPart {
        name: "loop7p2".into(),
        start_512_sectors: Some(8192),
        alignment_offset_bytes: Some(0),
        agrees_with_table: Some(true),
    });
    let mut p5 = part(
        5,
        PartKind::Logical,
        "Linux LVM",
        "0x8e",
        10240,
        8192,
        512,
        stripe,
    );
    let pv = PvLabel {
        label_sector: 1,
        pv_uuid: "abcdef-1234-5678-9abc-def0-1234-567890".into(),
        device_size_bytes: 4 << 20,
        pe_start_bytes: 192 << 10,
        metadata_areas: vec![MetadataArea {
            offset_bytes: 4096,
            size_bytes: 192 << 10,
        }],
        crc_ok: true,
    };
    p5.lvm = Some(LvmDataArea {
        pv_uuid: pv.pv_uuid.clone(),
        pe_start_bytes: 192 << 10,
        pe_start_absolute_bytes: (10240 * 512) + (192 << 10),
        pe_start_aligned_to_stripe: Some(true),
        pe_start_aligned_1m: false,
    });
    p5.filesystem = Some(Superblock::Lvm2(pv));
    p5.kernel = Some(KernelPart {
        name: "loop7p5".into(),
        start_512_sectors: Some(10241),
        alignment_offset_bytes: Some(3584),
        agrees_with_table: Some(false),
    });
    p5.notes = vec![
        "the kernel has this partition at sector 10241 (512-byte units) but the table says 10240: the table was changed without re-reading it (partprobe / blockdev --rereadpt)".into(),
        "the kernel reports alignment_offset 3584: misaligned with the device's physical blocks".into(),
    ];
    let mut p6 = part(
        6,
        PartKind::Logical,
        "Linux, \"odd\" type name that is long",
        "0x83",
        18433,
        4096,
        512,
        stripe,
    );
    p6.kernel = Some(KernelPart {
        name: String::new(),
        start_512_sectors: None,
        alignment_offset_bytes: None,
        agrees_with_table: None,
    });
    p6.notes = vec![
        "the kernel does not know this partition (not re-read since the table changed?)".into(),
    ];
    DiskCheck {
        target: "/dev/loop7".into(),
        block_device: true,
        size_bytes: 16 << 20,
        stripe_bytes: stripe,
        data_disks: Some(4),
        table: Some(TableSummary {
            kind: TableKind::Mbr,
            sector_size_bytes: 512,
            disk_sectors: 32768,
            gpt: None,
            disk_id: Some("0x1234abcd".into()),
        }),
        partitions: vec![p1, p2, p5, p6],
        kernel: Some(KernelDisk {
            logical_block_size_bytes: Some(512),
            physical_block_size_bytes: Some(4096),
            minimum_io_size_bytes: Some(65536),
            optimal_io_size_bytes: None,
            alignment_offset_bytes: Some(0),
        }),
        warnings: Vec::new(),
    }
}

/// A GPT image with 4 KiB sectors read from its backup header, an ext4 partition without
/// stripe geometry, a named partition, no stripe unit given.
fn check_gpt_image() -> DiskCheck {
    let mut p1 = part(
        1,
        PartKind::Gpt,
        "Linux filesystem",
        "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
        256,
        4096,
        4096,
        None,
    );
    p1.name = Some("data".into());
    p1.filesystem = Some(Superblock::Ext(ExtSuper {
        version: "ext4".into(),
        block_size: 4096,
        blocks: 4096,
        raid_stride: 16,
        raid_stripe_width: 64,
        size_bytes: 16 << 20,
        label: "db".into(),
    }));
    let p2 = part(
        2,
        PartKind::Gpt,
        "Linux LVM",
        "E6D6D379-F507-44C2-A23C-238F2A3DF928",
        4353,
        2048,
        4096,
        None,
    );
    DiskCheck {
        target: "gpt4k.img".into(),
        block_device: false,
        size_bytes: 64 << 20,
        stripe_bytes: None,
        data_disks: None,
        table: Some(TableSummary {
            kind: TableKind::Gpt,
            sector_size_bytes: 4096,
            disk_sectors: 16384,
            gpt: Some(GptInfo {
                header_used: HeaderSource::Backup,
                primary_ok: false,
                backup_ok: true,
                backup_lba: 16383,
                first_usable: 6,
                last_usable: 16378,
                disk_guid: "5F2C2E0A-2D4B-4E0C-9F3A-0C6B1F0D2A11".into(),
                protective_mbr: true,
            }),
            disk_id: None,
        }),
        partitions: vec![p1, p2],
        kernel: None,
        warnings: vec![
            "primary GPT is damaged (header CRC mismatch); using the backup header at sector 16383: restore the primary with gdisk's recovery menu (r, b, c, w)".into(),
        ],
    }
}

/// An XFS on a whole LUN (no partition table), checked against a 256 KiB stripe without a
/// disk count: the su matches, the width is not checked.
fn check_whole_device() -> DiskCheck {
    let mut sb = xfs();
    sb.sunit_blocks = 64;
    sb.swidth_blocks = 256;
    let mut p = part(
        0,
        PartKind::Primary,
        "whole device",
        "-",
        0,
        65536,
        512,
        Some(262144),
    );
    p.geometry = Some(GeometryCheck {
        fs_su_bytes: 262144,
        fs_sw_bytes: 1 << 20,
        expected_su_bytes: 262144,
        expected_sw_bytes: None,
        verdict: GeometryMatch::Match,
    });
    p.filesystem = Some(Superblock::Xfs(sb));
    DiskCheck {
        target: "lun.img".into(),
        block_device: false,
        size_bytes: 32 << 20,
        stripe_bytes: Some(262144),
        data_disks: None,
        table: None,
        partitions: vec![p],
        kernel: None,
        warnings: vec!["no partition table: the filesystem starts at sector 0 of the device, which is aligned to every stripe".into()],
    }
}

fn text<T>(r: &T) -> String
where
    Text: Exporter<T>,
{
    Text::default().to_string(r).unwrap()
}

/// JSON as the command writes it, with the version replaced so a release does not change
/// the snapshots.
fn json<T: serde::Serialize>(schema: &'static str, r: &T) -> String {
    let s = Json.to_string(&Document::new(schema, r)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["schema"], schema);
    assert_eq!(v["dbio_version"], DBIO_VERSION);
    s.replace(
        &format!("\"dbio_version\": \"{DBIO_VERSION}\""),
        "\"dbio_version\": \"[version]\"",
    )
}

#[test]
fn calc_text() {
    insta::assert_snapshot!("calc_full_text", text(&calc_full()));
    insta::assert_snapshot!("calc_minimal_text", text(&calc_minimal()));
}

#[test]
fn calc_json() {
    insta::assert_snapshot!("calc_full_json", json(doc::ALIGN_CALC, &calc_full()));
    insta::assert_snapshot!("calc_minimal_json", json(doc::ALIGN_CALC, &calc_minimal()));
}

#[test]
fn check_text() {
    insta::assert_snapshot!("check_mbr_live_text", text(&check_mbr_live()));
    insta::assert_snapshot!("check_gpt_image_text", text(&check_gpt_image()));
    insta::assert_snapshot!("check_whole_device_text", text(&check_whole_device()));
}

#[test]
fn check_json() {
    insta::assert_snapshot!(
        "check_mbr_live_json",
        json(doc::ALIGN_CHECK, &check_mbr_live())
    );
    insta::assert_snapshot!(
        "check_gpt_image_json",
        json(doc::ALIGN_CHECK, &check_gpt_image())
    );
    insta::assert_snapshot!(
        "check_whole_device_json",
        json(doc::ALIGN_CHECK, &check_whole_device())
    );
}

#[test]
fn check_csv() {
    for (name, r) in [
        ("check_mbr_live_csv", check_mbr_live()),
        ("check_gpt_image_csv", check_gpt_image()),
        ("check_whole_device_csv", check_whole_device()),
    ] {
        let s = Csv::default().to_string(&r).unwrap();
        // A header and one row per partition, each with as many fields as the header
        // (the quoted type name holds a comma).
        let rows: Vec<&str> = s.lines().collect();
        assert_eq!(rows.len(), 1 + r.partitions.len(), "{name}");
        insta::assert_snapshot!(name, s);
    }
}

/// The lines the text exporter printed before it moved here (`dbio-storage`'s
/// `align::text`), kept byte for byte: the partition table now goes through the shared
/// table renderer.
#[test]
fn check_text_keeps_the_earlier_layout() {
    let mut r = check_mbr_live();
    r.partitions.truncate(1);
    let s = text(&r);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(
        lines[0],
        "/dev/loop7: mbr label, 512-byte sectors, 32768 sectors (16MiB)"
    );
    assert_eq!(lines[1], "stripe unit 64KiB, 4 data disks (su=64k, sw=4)");
    assert_eq!(&lines[3..], [
        "  #  kind      type                          start    start bytes       size  stripe 4K  64K 1M  remainder",
        "  1  primary   Linux                          2048        1048576       2MiB  yes    yes yes yes         0",
        "partition 1: xfs, 4KiB blocks, agcount 4, agblocks 128, sunit=16 swidth=32 blks (su=64KiB sw_bytes=128KiB): does NOT match the RAID (expected su=64KiB sw_bytes=256KiB); kernel (loop7p1): start 2048, alignment_offset 0",
        "kernel: logical block 512, physical block 4096, minimum_io_size 65536, optimal_io_size 0, alignment_offset 0",
    ]);
    let lvm = text(&check_mbr_live());
    assert!(lvm.contains("\npartition 5: LVM2 PV abcdef-1234-5678-9abc-def0-1234-567890, data area (pe_start) at 192KiB into the PV = byte 5439488 of the disk: stripe-aligned yes, 1 MiB-aligned NO; kernel (loop7p5): start 10241, alignment_offset 3584\n"), "{lvm}");
}

/// What fails `dbio align check` (exit 1): misaligned starts, kernel offsets, LVM data areas
/// off the stripe, geometry that does not match; not extended containers.
#[test]
fn problems_of_the_hand_built_results() {
    assert_eq!(
        check_mbr_live().problems(),
        [
            "partition 1: the filesystem's stripe geometry does not match the RAID",
            "partition 5: the kernel reports alignment_offset 3584",
            "partition 6: start byte 9437696 is not a multiple of 4 KiB",
            "partition 6: start is off the stripe unit by 512 bytes",
        ]
    );
    assert!(check_gpt_image().problems().is_empty());
    assert!(check_whole_device().problems().is_empty());
}

/// Every number in the JSON documents carries its unit on the key (the dbio.align.*/2
/// renames), so no `/1` name is left.
#[test]
fn json_keys_carry_units() {
    let all = [
        json(doc::ALIGN_CALC, &calc_full()),
        json(doc::ALIGN_CHECK, &check_mbr_live()),
        json(doc::ALIGN_CHECK, &check_gpt_image()),
    ]
    .join("\n");
    for old in [
        "\"recommended_start_sector\"",
        "\"smallest_start_sector_mbr\"",
        "\"mount_sunit\"",
        "\"stride\"",
        "\"start_sector\"",
        "\"end_sector\"",
        "\"sector_size\"",
        "\"block_size\"",
        "\"first_usable\"",
        "\"backup_lba\"",
        "\"raid_stride\"",
        "\"label_sector\"",
        "\"logical_block_size\"",
        "\"alignment_offset\"",
        "\"start_sector_512\"",
    ] {
        assert!(!all.contains(old), "{old} is a /1 key");
    }
    assert!(all.contains("\"start_512_sectors\": 10241"));
    assert!(all.contains("\"offset_bytes\": 4096"));
}
