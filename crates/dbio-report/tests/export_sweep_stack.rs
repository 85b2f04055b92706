//! Snapshots of the sweep and stack exporters on results built by hand: a sweep whose points
//! carry the figures of the bench exporters' own sample result (read back from its JSON
//! snapshot), with a pending and a failed point; a stack with a partition, an md and a dm
//! device, as `dbio stack` builds it.

use dbio_report::export::Exporter;
use dbio_report::export::{Csv, Json, Text};
use dbio_schema::bench::{BenchResult, Mode};
use dbio_schema::stack::Stack;
use dbio_schema::sweep::{points, Axes, Figures, PointResult, Status, SweepResult};

/// The sample bench result of bench_export.rs, from its JSON snapshot.
fn bench_sample() -> BenchResult {
    let snap = include_str!("snapshots/tests__bench_export__json.snap");
    let body = snap.splitn(3, "---\n").nth(2).unwrap();
    serde_json::from_str(body).unwrap()
}

fn sweep() -> SweepResult {
    let r = bench_sample();
    let axes = Axes {
        mode: vec![Mode::Rndrw, Mode::Rndrd],
        block_size_bytes: vec![16384],
        misalign_bytes: vec![0, 512],
        scheduler: vec![],
        iodepth: vec![1],
        threads: vec![1, 4],
        buffers: vec![],
    };
    let pts = points(&axes, 1);
    let n = pts.len();
    SweepResult {
        schema: "dbio.sweep/1".into(),
        dbio_version: "0.1.0".into(),
        started_at: "2026-01-02T03:04:05Z".into(),
        workload: "bench".into(),
        axes,
        repeat: 1,
        base: r.spec.clone(),
        environment: Some(r.environment.clone()),
        points: pts
            .into_iter()
            .enumerate()
            .map(|(i, point)| {
                let (status, file, error, figures) = match i {
                    _ if i == n - 1 => (Status::Pending, None, None, None),
                    _ if i == n - 2 => (
                        Status::Failed,
                        None,
                        Some("worker 0 stopped: pread: Input/output error (os error 5)".into()),
                        None,
                    ),
                    _ => (
                        Status::Done,
                        Some(format!("points/{}.json", point.id)),
                        None,
                        Some(Figures::of(&r)),
                    ),
                };
                PointResult {
                    point,
                    status,
                    file,
                    error,
                    figures,
                    oltp: None,
                }
            })
            .collect(),
        interrupted: true,
    }
}

fn export<T>(e: &dyn Exporter<T>, v: &T) -> String {
    e.to_string(v).unwrap()
}

#[test]
fn sweep_text_json_csv() {
    let s = sweep();
    insta::assert_snapshot!("sweep_text", export(&Text::default(), &s));
    insta::assert_snapshot!("sweep_csv", export(&Csv::default(), &s));
    let j = export(&Json, &s);
    let back: SweepResult = serde_json::from_str(&j).unwrap();
    assert_eq!(back, s, "sweep.json reads back as written (for --resume)");
    insta::assert_snapshot!("sweep_json", j);
}

#[test]
fn sweep_csv_rows_are_as_wide_as_the_header_and_undefined_is_empty() {
    let out = export(&Csv::default(), &sweep());
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1 + 8);
    assert!(rows.iter().all(|r| r.len() == rows[0].len()));
    let col = |name: &str| rows[0].iter().position(|c| *c == name).unwrap();
    // A pending point has no figures: empty, never 0.
    assert_eq!(rows[8][col("iops")], "");
    assert_eq!(rows[8][col("status")], "pending");
    assert!(!rows[1][col("fsync_p99_ns")].is_empty());
}

fn stack() -> Stack {
    serde_json::from_value(serde_json::json!({
        "query": "/var/lib/mysql",
        "resolved_path": "/var/lib/mysql",
        "mount": {
            "mountpoint": "/var/lib/mysql",
            "root": "/",
            "source": "/dev/mapper/vg-mysql",
            "fstype": "xfs",
            "mount_options": "rw,noatime",
            "super_options": "rw,attr2,inode64,logbufs=8,logbsize=32k,sunit=128,swidth=512,noquota",
            "dev": "253:0"
        },
        "devices": [
            {"name": "dm-0", "dev": "253:0", "kind": "dm", "depth": 0, "node": "/dev/dm-0",
             "size_bytes": 107374182400u64, "model": null, "read_only": false,
             "slaves": ["md0"], "dm_name": "vg-mysql", "dm_uuid": "LVM-abc", "dm_subsystem": "LVM", "md_level": null, "md_chunk_bytes": null,
             "loop_backing_file": null, "partition_number": null, "start_sectors": null,
             "alignment_offset_bytes": 0,
             "queue": {"scheduler": "none", "schedulers": ["none"], "nr_requests": 128,
                       "read_ahead_kb": 256, "max_sectors_kb": 512, "rotational": false,
                       "write_cache": "write through", "logical_block_size_bytes": 512,
                       "physical_block_size_bytes": 4096, "minimum_io_size_bytes": 65536,
                       "optimal_io_size_bytes": 262144, "discard_max_bytes": 0,
                       "discard_granularity_bytes": 0}},
            {"name": "md0", "dev": "9:0", "kind": "md", "depth": 1, "node": "/dev/md0",
             "size_bytes": 214748364800u64, "model": null, "read_only": false,
             "slaves": ["sda1"], "dm_name": null, "dm_uuid": null, "dm_subsystem": null, "md_level": "raid10", "md_chunk_bytes": 65536,
             "loop_backing_file": null, "partition_number": null, "start_sectors": null,
             "alignment_offset_bytes": 0, "queue": null},
            {"name": "sda1", "dev": "8:1", "kind": "partition", "depth": 2, "node": "/dev/sda1",
             "size_bytes": 107373133824u64, "model": null, "read_only": false,
             "slaves": [], "dm_name": null, "dm_uuid": null, "dm_subsystem": null, "md_level": null, "md_chunk_bytes": null,
             "loop_backing_file": null, "partition_number": 1, "start_sectors": 2048,
             "alignment_offset_bytes": 0, "queue": null},
            {"name": "sda", "dev": "8:0", "kind": "disk", "depth": 3, "node": "/dev/sda",
             "size_bytes": 107374182400u64, "model": "PERC H730 Mini", "read_only": false,
             "slaves": [], "dm_name": null, "dm_uuid": null, "dm_subsystem": null, "md_level": null, "md_chunk_bytes": null,
             "loop_backing_file": null, "partition_number": null, "start_sectors": null,
             "alignment_offset_bytes": null,
             "queue": {"scheduler": "mq-deadline", "schedulers": ["mq-deadline", "kyber", "bfq", "none"],
                       "nr_requests": 256, "read_ahead_kb": 128, "max_sectors_kb": 1280,
                       "rotational": true, "write_cache": "write back",
                       "logical_block_size_bytes": 512, "physical_block_size_bytes": 512,
                       "minimum_io_size_bytes": 512, "optimal_io_size_bytes": 0,
                       "discard_max_bytes": 0, "discard_granularity_bytes": 0}}
        ],
        "leaf_disks": ["sda"],
        "notes": ["md0: 1 of 2 members shown (sdb1 is the other)"],
        "kernel_release": "6.1.0-27-amd64"
    }))
    .unwrap()
}

#[test]
fn stack_text_and_json() {
    let s = stack();
    insta::assert_snapshot!("stack_text", export(&Text::default(), &s));
    let j = export(
        &Json,
        &dbio_schema::Document::new(dbio_schema::doc::STACK, &s),
    );
    insta::assert_snapshot!("stack_json", j);
}
