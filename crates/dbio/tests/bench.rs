//! `dbio bench` against real files: O_DIRECT on /dev/shm (tmpfs) and on the disk (the target
//! directory's filesystem), real io_uring, real signals. Counts are checked against the kernel's
//! own accounting (/proc/self/io of the dbio process) and against the bytes found in the files.

use crate::common;

use crate::common::dbio;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A temp dir on tmpfs (/dev/shm supports O_DIRECT).
fn shm() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dbio-test")
        .tempdir_in("/dev/shm")
        .unwrap()
}

/// A temp dir on the disk (the target directory lives on the root filesystem).
fn disk() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dbio-test")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn json(out: &[u8]) -> Value {
    serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

fn bench(dir: &Path, args: &[&str]) -> Value {
    let out = dbio()
        .arg("bench")
        .args(args)
        .arg("--dir")
        .arg(dir)
        .args(["--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    json(&out)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// One 1 MiB file of 4 KiB blocks.
const ONE_FILE: [&str; 6] = [
    "--file-num",
    "1",
    "--file-total-size",
    "1M",
    "--block-size",
    "4k",
];

/// `dbio bench prepare` of a file set in `dir`.
fn prepare(dir: &Path, args: &[&str]) {
    dbio()
        .args(["bench", "prepare"])
        .args(args)
        .arg("--dir")
        .arg(dir)
        .assert()
        .success();
}

/// `run` of random reads through io_uring with 32 I/Os in flight.
const URING_QD32_RNDRD: [&str; 7] = [
    "run",
    "--mode",
    "rndrd",
    "--engine",
    "uring",
    "--iodepth",
    "32",
];

const SMALL: [&str; 6] = [
    "--file-num",
    "4",
    "--file-total-size",
    "4M",
    "--block-size",
    "4k",
];

#[test]
fn full_run_prepares_runs_and_removes_only_its_files() {
    let tmp = shm();
    let dir = tmp.path().join("set");
    let r = bench(
        &dir,
        &[&SMALL[..], &["--mode", "rndrw", "--events", "2000"]].concat(),
    );
    assert_eq!(r["schema"], "dbio.bench/1");
    let s = &r["summary"];
    assert_eq!(u(&s["read"]["count"]) + u(&s["write"]["count"]), 2000);
    assert!(
        u(&s["read"]["count"]) > 1000,
        "rw-ratio 1.5 means 60% reads"
    );
    assert!(!dir.exists(), "the directory dbio created is gone");
    for key in ["schema", "spec", "environment", "intervals", "summary"] {
        assert!(r.get(key).is_some(), "missing top-level key {key}");
    }
    for op in ["read", "write", "fsync"] {
        for k in ["count", "iops", "bytes_per_s", "lat_ns"] {
            assert!(s[op].get(k).is_some(), "summary.{op}.{k}");
        }
        for k in [
            "min", "mean", "p50", "p90", "p95", "p99", "p99_9", "p99_99", "max",
        ] {
            assert!(s[op]["lat_ns"].get(k).is_some(), "summary.{op}.lat_ns.{k}");
        }
    }
    assert_eq!(r["environment"]["filesystem"], "tmpfs");
    assert!(r["environment"]["open_flags"]
        .as_array()
        .unwrap()
        .contains(&Value::from("O_DIRECT")));
    // The clock that timed the I/Os: the TSC wherever the kernel keeps time with it.
    let clock = r["environment"]["clock"].as_str().unwrap();
    let kernel_source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if cfg!(target_arch = "x86_64") && kernel_source.trim() == "tsc" {
        assert!(clock.starts_with("tsc ("), "{clock}");
    } else {
        assert_eq!(clock, "CLOCK_MONOTONIC");
    }
}

#[test]
fn sync_engine_counts_agree_with_the_kernels_accounting() {
    for tmp in [shm(), disk()] {
        let d = tmp.path();
        prepare(d, &SMALL);
        let r = bench(
            d,
            &[&SMALL[..], &["run", "--mode", "rndrd", "--events", "3000"]].concat(),
        );
        let s = &r["summary"];
        assert_eq!(u(&s["read"]["count"]), 3000);
        assert_eq!(u(&s["read"]["bytes"]), 3000 * 4096);
        assert_eq!(u(&s["engine_calls"]["reads"]), 3000);
        let io = &s["process_io"];
        // The kernel saw at least every pread and every byte the engine claims (the process
        // also reads a few small files of its own: /proc, the marker).
        assert!(u(&io["syscr"]) >= 3000 && u(&io["syscr"]) < 3100, "{io}");
        assert!(
            u(&io["rchar_bytes"]) >= 3000 * 4096 && u(&io["rchar_bytes"]) < 3000 * 4096 + 1_000_000,
            "{io}"
        );
        assert_eq!(u(&s["write"]["count"]), 0);
        dbio()
            .args(["bench", "cleanup"])
            .arg("--dir")
            .arg(d)
            .assert()
            .success();
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 0);
    }
}

/// Finds every 4 KiB block whose first 24 bytes are a dbio write stamp and returns
/// (file offset, stamped offset) pairs.
fn stamps(file: &Path, block: usize) -> Vec<(u64, u64)> {
    let data = std::fs::read(file).unwrap();
    let mut out = Vec::new();
    for (i, b) in data.chunks(block).enumerate() {
        let worker = u64::from_le_bytes(b[0..8].try_into().unwrap());
        let seq = u64::from_le_bytes(b[8..16].try_into().unwrap());
        let off = u64::from_le_bytes(b[16..24].try_into().unwrap());
        if worker < 64 && seq > 0 && seq < 1_000_000 && off % 512 == 0 {
            out.push(((i * block) as u64, off));
        }
    }
    out
}

#[test]
fn written_blocks_land_where_the_engine_says_for_sync_and_uring() {
    for (engine, depth, tmp) in [
        ("sync", "1", shm()),
        ("uring", "8", shm()),
        ("uring", "16", disk()),
    ] {
        let d = tmp.path();
        let args = [
            "--file-num",
            "1",
            "--file-total-size",
            "1M",
            "--block-size",
            "4k",
        ];
        prepare(d, &args);
        // Sequential writes over the whole 1 MiB file: 256 blocks, each stamped with its offset.
        let r = bench(
            d,
            &[
                &args[..],
                &[
                    "run",
                    "--mode",
                    "seqwr",
                    "--events",
                    "256",
                    "--engine",
                    engine,
                    "--iodepth",
                    depth,
                ],
            ]
            .concat(),
        );
        assert_eq!(u(&r["summary"]["write"]["count"]), 256, "{engine}");
        let found = stamps(&d.join("dbio-file.0"), 4096);
        assert_eq!(found.len(), 256, "{engine}: every block carries a stamp");
        assert!(
            found.iter().all(|(at, off)| at == off),
            "{engine}: stamp offsets match positions"
        );
    }
}

#[test]
fn misalign_shifts_every_offset() {
    let tmp = shm();
    let d = tmp.path();
    let args = [
        "--file-num",
        "1",
        "--file-total-size",
        "1M",
        "--block-size",
        "16k",
        "--misalign",
        "4k",
    ];
    prepare(d, &args);
    let r = bench(
        d,
        &[&args[..], &["run", "--mode", "rndwr", "--events", "200"]].concat(),
    );
    assert_eq!(r["spec"]["misalign_bytes"], 4096);
    let found = stamps(&d.join("dbio-file.0"), 4096);
    assert!(!found.is_empty());
    assert!(
        found
            .iter()
            .all(|(at, off)| at == off && off % 16384 == 4096),
        "{found:?}"
    );
}

#[test]
fn fsync_cadence_is_per_file_per_thread() {
    // 1 thread, 1 file: 1000 writes, a sync every 10 writes = exactly 100 syncs.
    let tmp = shm();
    let d = tmp.path();
    let one = ONE_FILE;
    prepare(d, &one);
    let r = bench(
        d,
        &[
            &one[..],
            &[
                "run",
                "--mode",
                "rndwr",
                "--events",
                "1000",
                "--fsync-every",
                "10",
            ],
        ]
        .concat(),
    );
    assert_eq!(u(&r["summary"]["fsync"]["count"]), 100);
    assert_eq!(u(&r["summary"]["engine_calls"]["fsyncs"]), 100);
    // --fsync-end adds one sync per written file.
    let r = bench(
        d,
        &[
            &one[..],
            &[
                "run",
                "--mode",
                "rndwr",
                "--events",
                "1000",
                "--fsync-every",
                "10",
                "--fsync-end",
            ],
        ]
        .concat(),
    );
    assert_eq!(u(&r["summary"]["fsync"]["count"]), 101);
    // The null engine: 2 threads, sequential writes over 2 files of 64 blocks. Each thread
    // writes its own half (one file): 500 writes, a sync every 50 writes to that file = 10.
    let r = bench(
        d,
        &[
            "run",
            "--engine",
            "null",
            "--mode",
            "seqwr",
            "--threads",
            "2",
            "--events",
            "1000",
            "--fsync-every",
            "50",
            "--file-num",
            "2",
            "--file-total-size",
            "512k",
            "--block-size",
            "4k",
        ],
    );
    assert_eq!(u(&r["summary"]["fsync"]["count"]), 20);
    let threads = r["summary"]["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for t in threads {
        assert_eq!(u(&t["events"]), 500);
        assert_eq!(u(&t["fsyncs"]), 10);
    }
}

#[test]
fn commit_mode_syncs_every_record_unless_odsync() {
    let tmp = shm();
    let d = tmp.path();
    let r = bench(
        d,
        &[
            "--mode",
            "commit",
            "--threads",
            "2",
            "--events",
            "300",
            "--block-size",
            "4k",
            "--file-total-size",
            "8M",
            "--keep",
        ],
    );
    let s = &r["summary"];
    assert_eq!(u(&s["write"]["count"]), 300);
    assert_eq!(u(&s["fsync"]["count"]), 300, "fdatasync after every record");
    for t in 0..2 {
        let len = std::fs::metadata(d.join(format!("dbio-log.{t}")))
            .unwrap()
            .len();
        assert_eq!(
            len,
            150 * 4096,
            "each thread appended its 150 records to its own log"
        );
    }
    let r = bench(
        d,
        &[
            "run",
            "--mode",
            "commit",
            "--events",
            "100",
            "--block-size",
            "4k",
            "--file-total-size",
            "8M",
            "--dsync",
        ],
    );
    assert_eq!(
        u(&r["summary"]["fsync"]["count"]),
        0,
        "O_DSYNC makes each write durable"
    );
    assert!(r["environment"]["open_flags"]
        .as_array()
        .unwrap()
        .contains(&Value::from("O_DSYNC")));
    dbio()
        .args(["bench", "cleanup"])
        .arg("--dir")
        .arg(d)
        .assert()
        .success();
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0);
}

#[test]
fn io_uring_batches_submissions_and_counts_every_io() {
    let tmp = shm();
    let d = tmp.path();
    prepare(d, &SMALL);
    let run = |batch: &str| {
        bench(
            d,
            &[
                &SMALL[..],
                &URING_QD32_RNDRD,
                &["--submit-batch", batch, "--events", "20000"],
            ]
            .concat(),
        )
    };
    // --submit-batch 32: one io_uring_enter submits a whole refill.
    let r = run("32");
    let s = &r["summary"];
    assert_eq!(u(&s["read"]["count"]), 20000);
    assert_eq!(u(&s["engine_calls"]["reads"]), 20000);
    assert_eq!(r["spec"]["submit_batch"], 32);
    // --reap-batch follows --submit-batch unless given: a refill has 32 free slots to batch.
    assert_eq!(r["spec"]["reap_batch"], 32);
    let batched = u(&s["engine_calls"]["syscalls"]);
    assert!(
        batched < 20000,
        "batched: fewer io_uring_enter calls than I/Os: {}",
        s["engine_calls"]
    );
    assert!(u(&s["read"]["lat_ns"]["min"]) > 0);
    // --submit-batch 1 (the default): every I/O is submitted as soon as it is queued.
    let r = run("1");
    let s = &r["summary"];
    assert_eq!(u(&s["read"]["count"]), 20000);
    assert!(
        u(&s["engine_calls"]["syscalls"]) >= 20000,
        "{}",
        s["engine_calls"]
    );
    assert!(u(&s["engine_calls"]["syscalls"]) > batched);
}

/// The io-wq worker threads (`iou-wrk-*`) of a running process, counted from /proc.
fn iowq_threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|comm| comm.starts_with("iou-wrk"))
                .count()
        })
        .unwrap_or(0)
}

/// Runs uring QD 32 rndrd on `dir` for 2 s (with `extra` options) and returns (the most
/// io-wq threads seen at once while it ran, the result).
fn uring_run_watching_iowq(dir: &Path, extra: &[&str]) -> (usize, Value) {
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let child = std::process::Command::new(bin)
        .arg("bench")
        .args(URING_QD32_RNDRD)
        .args(ONE_FILE)
        .args(extra)
        .args(["--time", "2s", "--format", "json", "--dir"])
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut most = 0;
    for _ in 0..150 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        most = most.max(iowq_threads(child.id()));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (most, json(&o.stdout))
}

#[test]
fn io_uring_on_tmpfs_keeps_one_iowq_worker() {
    // tmpfs reads all go through io-wq (no FMODE_NOWAIT); the engine caps it at one worker,
    // which the process's own thread list shows, and the result says so.
    let tmp = shm();
    prepare(tmp.path(), &ONE_FILE);
    let (most, r) = uring_run_watching_iowq(tmp.path(), &[]);
    assert!(
        most <= 1,
        "{most} io-wq threads at once during the tmpfs run"
    );
    let engine = r["environment"]["engine"].as_str().unwrap();
    assert!(engine.starts_with("io_uring: "), "{engine}");
    assert!(engine.contains("io-wq capped at 1 worker"), "{engine}");
    assert!(u(&r["summary"]["read"]["count"]) > 10_000);
    // ramfs is a memory filesystem too (buffered: it refuses O_DIRECT).
    let (_t, mnt) = mounted("ramfs", "size=8m");
    prepare(&mnt, &[&ONE_FILE[..], &["--buffered"]].concat());
    let (most, r) = uring_run_watching_iowq(&mnt, &["--buffered"]);
    dbio()
        .args(["bench", "cleanup", "--dir"])
        .arg(&mnt)
        .assert()
        .success();
    umount(&mnt);
    assert!(
        most <= 1,
        "{most} io-wq threads at once during the ramfs run"
    );
    assert_eq!(r["environment"]["filesystem"], "ramfs");
    let engine = r["environment"]["engine"].as_str().unwrap();
    assert!(engine.contains("io-wq capped at 1 worker"), "{engine}");
    // On the disk, O_DIRECT reads are issued without io-wq, and nothing is capped.
    let tmp = disk();
    prepare(tmp.path(), &ONE_FILE);
    let (_, r) = uring_run_watching_iowq(tmp.path(), &[]);
    let engine = r["environment"]["engine"].as_str().unwrap();
    assert!(!engine.contains("io-wq capped"), "{engine}");
}

#[test]
fn reap_batch_bounds_the_completions_taken_per_pass() {
    let tmp = shm();
    let d = tmp.path();
    prepare(d, &ONE_FILE);
    let run = |engine: &str, batch: &str, extra: &[&str]| {
        bench(
            d,
            &[
                &ONE_FILE[..],
                &[
                    "run",
                    "--mode",
                    "rndrd",
                    "--engine",
                    engine,
                    "--iodepth",
                    "32",
                ],
                &["--reap-batch", batch, "--submit-batch", batch],
                extra,
            ]
            .concat(),
        )
    };
    // The null engine hands back what it holds, oldest first, at most --reap-batch per reap
    // (one counted call each): the plumbing, exactly.
    let ev = ["--events", "32000"];
    let one = run("null", "1", &ev);
    assert_eq!(u(&one["summary"]["read"]["count"]), 32000);
    assert_eq!(one["spec"]["reap_batch"], 1);
    assert!(u(&one["summary"]["engine_calls"]["syscalls"]) >= 32000 - 32);
    let all = run("null", "32", &ev);
    assert_eq!(u(&all["summary"]["read"]["count"]), 32000);
    assert!(u(&all["summary"]["engine_calls"]["syscalls"]) <= 32000 / 32 + 1);
    // Real io_uring on tmpfs, by the engine's own clock (Little's law: IOPS x mean latency):
    // --reap-batch 1 replaces each finished I/O before it looks at the next, so --iodepth
    // I/Os are in flight all the time; taking 32 at once leaves slots idle while the batch is
    // handled (a debug build spends long enough on that to show: about 28 of 32 here).
    let in_flight = |batch: &str| {
        let r = run("uring", batch, &["--time", "1s"]);
        let s = &r["summary"]["read"];
        f(&s["iops"]) * f(&s["lat_ns"]["mean"]) / 1e9
    };
    let one = in_flight("1");
    assert!(
        one > 31.0 && one <= 32.5,
        "--reap-batch 1: {one:.2} I/Os in flight for --iodepth 32"
    );
    let all = in_flight("32");
    assert!(
        all > 24.0 && all <= 32.5,
        "--reap-batch 32: {all:.2} I/Os in flight for --iodepth 32"
    );
}

#[test]
fn intervals_are_per_interval_and_add_up_to_the_summary() {
    let tmp = shm();
    let d = tmp.path();
    let r = bench(
        d,
        &[
            "--engine",
            "null",
            "--mode",
            "rndrw",
            "--time",
            "1.2",
            "--warmup",
            "0.3",
            "--report-interval",
            "0.25",
            "--file-num",
            "1",
            "--file-total-size",
            "1M",
            "--threads",
            "2",
        ],
    );
    let iv = r["intervals"].as_array().unwrap();
    // Warmup 0.3 s at 0.25 s intervals: [0, 0.25] and [0.25, 0.3] are warmup; then 1.2 s of
    // measured intervals: 0.3-0.55, 0.55-0.8, 0.8-1.05, 1.05-1.3, 1.3-1.5 (cut by the deadline).
    let warm: Vec<&Value> = iv.iter().filter(|i| i["warmup"] == true).collect();
    assert_eq!(warm.len(), 2);
    assert!((f(&warm[1]["end_s"]) - 0.3).abs() < 1e-9);
    let measured: Vec<&Value> = iv.iter().filter(|i| i["warmup"] == false).collect();
    assert_eq!(measured.len(), 5, "{iv:#?}");
    let mut prev_end = 0.0;
    for i in iv {
        assert!(
            (f(&i["start_s"]) - prev_end).abs() < 1e-9,
            "contiguous intervals"
        );
        prev_end = f(&i["end_s"]);
        let secs = f(&i["end_s"]) - f(&i["start_s"]);
        for op in ["read", "write", "total"] {
            let want = u(&i[op]["count"]) as f64 / secs;
            assert!(
                (f(&i[op]["iops"]) - want).abs() <= want * 1e-9 + 1e-9,
                "iops = count / interval"
            );
        }
        assert_eq!(
            u(&i["total"]["count"]),
            u(&i["read"]["count"]) + u(&i["write"]["count"]) + u(&i["fsync"]["count"])
        );
        // The machine's CPU over the interval (/proc/stat): two busy null-engine workers.
        let cpu = &i["cpu"];
        let sum: f64 = ["usr_pct", "sys_pct", "iowait_pct", "steal_pct", "idle_pct"]
            .iter()
            .map(|k| f(&cpu[k]))
            .sum();
        assert!(sum > 99.0 && sum <= 100.0 + 1e-6, "{cpu}");
        assert!(f(&cpu["usr_pct"]) + f(&cpu["sys_pct"]) > 20.0, "{cpu}");
    }
    let sum: u64 = measured.iter().map(|i| u(&i["read"]["count"])).sum();
    assert_eq!(
        sum,
        u(&r["summary"]["read"]["count"]),
        "summary = sum of measured intervals"
    );
    let hist: u64 = r["summary"]["read"]["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| u(&b[1]))
        .sum();
    assert_eq!(hist, sum, "the full histogram holds every measured read");
    assert!((f(&r["summary"]["measured_s"]) - 1.2).abs() < 0.05);
}

#[test]
fn rate_limited_runs_report_both_latencies() {
    let tmp = shm();
    let r = bench(
        tmp.path(),
        &[
            "--engine",
            "null",
            "--mode",
            "rndrd",
            "--rate",
            "2000",
            "--time",
            "1",
            "--file-num",
            "1",
            "--file-total-size",
            "1M",
        ],
    );
    let s = &r["summary"]["read"];
    let n = u(&s["count"]);
    assert!(
        (1900..=2010).contains(&n),
        "2000 I/Os per second for 1 s, got {n}"
    );
    assert!(
        s.get("service_lat_ns").is_some(),
        "latency from submission is reported too"
    );
    assert!(u(&s["lat_ns"]["p50"]) >= u(&s["service_lat_ns"]["p50"]));
}

/// An open-loop run reaches the asked rate and starts its I/Os on time: with the null engine
/// (no I/O; its service time is well under a microsecond), the latency from the intended start
/// is the service time plus how late dbio's pacer started the I/O.
///
/// The rate: the run issues 1000 starts per second of --time, within 1% (an open loop issues
/// the starts it fell behind on as soon as it can, including those owed when its thread was
/// preempted across the deadline; before, they were dropped: 2999 of 3000 in one run). The
/// summary's IOPS divide by the measured time, which ends with the last completion: a thread
/// preempted for 48 ms just before its last start (seen under load) ends the run 48 ms late
/// and shows 984 IOPS, which is true of that run. So the rate is held against --time.
///
/// The lateness is asserted at the 10th percentile, at most 10 us. After the fix the pacer
/// spins through the last stretch before each start, so a start that the scheduler does not
/// delay is late by a clock read or two (p10 0.6-0.9 us, p50 1.7-2.3 us in a debug build while
/// this whole test binary runs on a 2-CPU VM at load 9). Before it, the pacer slept until 50 us
/// before each start with the default 50 us timer slack, and even its earliest starts were late
/// by the scheduler's wakeup latency (p10 about 20 us, p50 30-34 us on the same VM). Not the
/// median: at load 9 on 2 CPUs a thread waits for a CPU on most wakeups, and the median start
/// was seen 60 us to 0.9 ms late in 2 of 4 runs of the whole binary; not the mean or the maximum,
/// which a single preemption of a few milliseconds moves. The 10th percentile holds as long as
/// one start in ten gets a CPU on time.
#[test]
fn open_loop_runs_keep_the_rate_and_start_on_time() {
    let tmp = shm();
    let r = bench(
        tmp.path(),
        &[
            "run",
            "--engine",
            "null",
            "--mode",
            "rndrd",
            "--rate",
            "1000",
            "--time",
            "3",
            "--percentiles",
            "10,50",
        ],
    );
    let s = &r["summary"];
    let (n, secs) = (u(&s["total"]["count"]), f(&s["measured_s"]));
    assert!(
        (2970..=3030).contains(&n),
        "--rate 1000 for 3 s must start 3000 I/Os within 1%, got {n}"
    );
    assert!(
        secs >= 3.0,
        "the measured run ends no earlier than --time: {secs} s"
    );
    let late =
        |p: &str| u(&s["read"]["lat_ns"][p]).saturating_sub(u(&s["read"]["service_lat_ns"][p]));
    assert!(
        late("p10") <= 10_000,
        "p10 of the starts {} ns after the intended start (p50 {} ns; from intended start minus service): {}",
        late("p10"),
        late("p50"),
        s["read"]
    );
}

/// The null engine opens no file and no device: a full `dbio bench` neither prepares nor
/// removes a file set, prints no data, filesystem or device lines, runs no device check, and
/// says so once.
#[test]
fn the_null_engine_prepares_nothing_and_checks_no_device() {
    let tmp = shm();
    let d = tmp.path().join("set");
    let out = dbio()
        .args(["bench", "--engine", "null", "--events", "2000", "--dir"])
        .arg(&d)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(!d.exists(), "nothing was prepared in {}", d.display());
    for absent in [
        "prepared",
        "removed",
        "  data:",
        "  fs:",
        "  device:",
        "device check",
    ] {
        assert!(!stdout.contains(absent), "'{absent}' in:\n{stdout}");
    }
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("total") && l.split_whitespace().nth(1) == Some("2000")),
        "{stdout}"
    );
    let said =
        "no file set is prepared or removed, and no filesystem, device or device check applies";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    assert_eq!(stdout.matches(said).count(), 0, "{stdout}");
    let r = bench(&d, &["--engine", "null", "--events", "100"]);
    assert!(!d.exists());
    let e = &r["environment"];
    assert!(e["filesystem"].is_null(), "{e}");
    assert_eq!(e["devices"].as_array().unwrap().len(), 0, "{e}");
    assert!(
        r["summary"].get("device_check").is_none_or(Value::is_null),
        "{}",
        r["summary"]
    );
}

/// Unmounts a mount made by [`mounted`] when dropped, also when the test fails.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        umount(&self.0);
    }
}

/// What prepare says of the page cache is true of each filesystem: tmpfs and ramfs files live
/// in it (nothing can be dropped), a disk filesystem's files are dropped and the run starts
/// cold (mincore finds none of them cached).
#[test]
fn prepare_says_what_is_true_of_the_page_cache_on_each_filesystem() {
    let prep = |d: &Path| -> String {
        let out = dbio()
            .args(["bench", "prepare"])
            .args(SMALL)
            .arg("--dir")
            .arg(d)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let shm = shm();
    let (_t, ramfs) = mounted("ramfs", "size=8m");
    let _ramfs = Mounted(ramfs.clone());
    for (fs, d) in [
        ("tmpfs", shm.path().join("set")),
        ("ramfs", ramfs.join("set")),
    ] {
        let text = prep(&d);
        assert!(
            text.contains(&format!(
                "{fs} keeps files in memory (the page cache is where they live, nothing to drop)"
            )),
            "{text}"
        );
        assert!(
            !text.contains("dropped") && !text.contains("cold"),
            "{text}"
        );
    }
    // A run on tmpfs (prepared earlier or just now) says so in its environment.
    let r = bench(
        &shm.path().join("set"),
        &[&["run", "--mode", "rndrd", "--events", "10"][..], &SMALL].concat(),
    );
    assert_eq!(
        r["environment"]["page_cache"],
        "in memory: tmpfs files live in the page cache"
    );
    let disk = disk();
    let text = prep(&disk.path().join("set"));
    assert!(
        text.contains("dropped them from the page cache (fdatasync + POSIX_FADV_DONTNEED): the run starts cold"),
        "{text}"
    );
    let r = bench(
        &disk.path().join("set2"),
        &[
            "--mode",
            "rndrd",
            "--events",
            "10",
            "--file-num",
            "2",
            "--file-total-size",
            "2M",
        ],
    );
    assert_eq!(
        r["environment"]["page_cache"],
        "dropped after prepare: the run started cold"
    );
}

#[test]
fn cleanup_never_deletes_what_dbio_did_not_create() {
    let tmp = shm();
    let d = tmp.path();
    std::fs::write(d.join("ibdata1"), b"precious").unwrap();
    prepare(d, &SMALL);
    dbio()
        .args(["bench", "cleanup"])
        .arg("--dir")
        .arg(d)
        .assert()
        .success();
    assert_eq!(std::fs::read(d.join("ibdata1")).unwrap(), b"precious");
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 1);
    // A file with dbio's name but no marker is not dbio's: prepare refuses, keeps it.
    std::fs::write(d.join("dbio-file.0"), b"not ours").unwrap();
    dbio()
        .args(["bench", "prepare"])
        .args(SMALL)
        .arg("--dir")
        .arg(d)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("dbio did not create it"));
    assert_eq!(std::fs::read(d.join("dbio-file.0")).unwrap(), b"not ours");
    // cleanup without a marker removes nothing, and says so (nothing to do is not an error).
    dbio()
        .args(["bench", "cleanup"])
        .arg("--dir")
        .arg(d)
        .assert()
        .code(0)
        .stdout(predicates::str::contains(
            "nothing to clean up: no dbio file set",
        ));
    assert!(d.join("dbio-file.0").exists());
}

#[test]
fn a_second_cleanup_has_nothing_to_do_and_exits_0() {
    let tmp = shm();
    let d = tmp.path().join("set");
    prepare(&d, &SMALL);
    let cleanup = || {
        let o = dbio()
            .args(["bench", "cleanup", "--dir"])
            .arg(&d)
            .output()
            .unwrap();
        let text =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        (o.status.code(), text)
    };
    let (code, out) = cleanup();
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("removed 4 files"), "{out}");
    assert!(!d.exists());
    let (code, out) = cleanup();
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out.lines().count(),
        1,
        "one line says there is nothing to do: {out}"
    );
    assert!(out.contains("nothing to clean up"), "{out}");
}

#[test]
fn run_takes_the_file_set_geometry_from_its_marker() {
    let tmp = shm();
    let d = tmp.path();
    prepare(d, &SMALL); // 4 files of 1 MiB
    let run = [
        "run",
        "--mode",
        "rndrd",
        "--events",
        "200",
        "--block-size",
        "4k",
    ];
    // No geometry flags: the set's.
    let r = bench(d, &run);
    assert_eq!(r["spec"]["file_num"], 4);
    assert_eq!(u(&r["spec"]["file_total_size_bytes"]), 4 << 20);
    assert_eq!(u(&r["summary"]["read"]["count"]), 200);
    // Flags that agree with the set, alone or together.
    let r = bench(d, &[&run[..], &["--file-total-size", "4M"]].concat());
    assert_eq!(r["spec"]["file_num"], 4);
    let r = bench(d, &[&run[..], &["--file-num", "4"]].concat());
    assert_eq!(u(&r["spec"]["file_total_size_bytes"]), 4 << 20);
    // Flags that do not are refused, saying what the set is and what to do.
    for bad in [
        &["--file-num", "8"][..],
        &["--file-total-size", "8M"],
        &["--file-num", "4", "--file-total-size", "1G"],
    ] {
        dbio()
            .arg("bench")
            .args(run)
            .args(bad)
            .arg("--dir")
            .arg(d)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(
                "was prepared as 4 files of 1MiB (4MiB in all",
            ))
            .stderr(predicates::str::contains(
                "omit --file-num and --file-total-size",
            ));
    }
    assert!(d.join(".dbio-fileset.json").exists());
}

/// `bench run --engine null --format sysbench` with `extra`: (exit code, stdout, stderr).
fn sysbench_null_run(dir: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let o = dbio()
        .args(["bench", "run", "--engine", "null", "--mode", "rndrd"])
        .args(["--file-num", "1", "--file-total-size", "1M"])
        .args(extra)
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn sysbench_format_interval_lines_are_those_sysbench_prints() {
    let tmp = shm();
    let d = tmp.path();
    let lines = |out: &str| out.lines().filter(|l| l.starts_with("[ ")).count();
    // sysbench 1.0.20 prints one line per whole interval: --time=2 gives [ 1s ] and [ 2s ]
    // (measured with `sysbench fileio ... --report-interval=1 --time=N run`, N = 1..5), and
    // never a line for the half interval that --time 1.5s ends in.
    let (code, out, err) = sysbench_null_run(d, &["--format", "sysbench", "--time", "1500ms"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lines(&out), 1, "{out}");
    assert!(out.contains("\n[ 1s ] reads:"), "{out}");
    // --report-interval 0: no interval lines at all (sysbench's default).
    let (code, out, err) = sysbench_null_run(
        d,
        &[
            "--format",
            "sysbench",
            "--time",
            "1s",
            "--report-interval",
            "0",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lines(&out), 0, "{out}");
    assert!(
        out.contains("Threads started!\n\n\nFile operations:"),
        "{out}"
    );
    assert!(!out.contains("Report intermediate results"), "{out}");
    // Other formats are made of intervals: 0 is refused there, saying why.
    let (code, _, err) = sysbench_null_run(d, &["--time", "1s", "--report-interval", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("goes with --format sysbench"), "{err}");
}

/// Modification times of the data files of a set, by name.
fn mtimes(d: &Path) -> Vec<(String, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("dbio-file."))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().modified().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_full_bench_on_a_prepared_set_uses_it_and_keeps_it() {
    let tmp = shm();
    let d = tmp.path().join("set");
    prepare(&d, &SMALL);
    let before = mtimes(&d);
    assert_eq!(before.len(), 4);
    let o = dbio()
        .args([
            "bench",
            "--mode",
            "rndrd",
            "--events",
            "200",
            "--block-size",
            "4k",
        ])
        .arg("--dir")
        .arg(&d)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let notes: Vec<&str> = out.lines().filter(|l| l.contains("file set")).collect();
    assert_eq!(notes.len(), 1, "{out}");
    assert!(
        notes[0].starts_with("using the file set already prepared in")
            && notes[0].contains("(4 files of 1MiB): it stays"),
        "{out}"
    );
    assert!(
        !out.contains("prepared 4 files"),
        "not prepared again: {out}"
    );
    assert!(out.contains("data:     4 files of 1MiB"), "{out}");
    assert_eq!(mtimes(&d), before, "the files were not rewritten");
    assert!(d.join(".dbio-fileset.json").exists(), "the set is kept");
    // A set whose prepare did not finish (a file short) is completed, then kept.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(d.join("dbio-file.2"))
        .unwrap();
    f.set_len(4096).unwrap();
    let o = dbio()
        .args([
            "bench",
            "--mode",
            "rndrd",
            "--events",
            "200",
            "--block-size",
            "4k",
        ])
        .arg("--dir")
        .arg(&d)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("prepared 4 files x 1MiB"), "{out}");
    assert!(
        out.contains("completed the file set of an interrupted prepare"),
        "{out}"
    );
    assert_eq!(
        std::fs::metadata(d.join("dbio-file.2")).unwrap().len(),
        1 << 20
    );
    assert!(d.join(".dbio-fileset.json").exists(), "the set is kept");
}

/// `dbio bench run` with `args` on the set in `d`: exit code, stdout, stderr.
fn run_on(d: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = dbio()
        .args(["bench", "run", "--block-size", "16k"])
        .args(args)
        .arg("--dir")
        .arg(d)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_truncated_or_holed_file_set_is_refused_before_the_run() {
    let tmp = disk();
    let d = tmp.path().join("set");
    dbio()
        .args([
            "bench",
            "prepare",
            "--file-num",
            "4",
            "--file-total-size",
            "16M",
        ])
        .arg("--dir")
        .arg(&d)
        .assert()
        .success();
    let f1 = d.join("dbio-file.1");
    let resize = |n: u64| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f1)
            .unwrap()
            .set_len(n)
            .unwrap()
    };
    // `truncate -s 1M dbio-file.1`: a read mode used to die mid-run on a short read, a write
    // mode to refill a sparse file and report figures as usual. Both are refused before the
    // run, naming the file, its size and the set's.
    resize(1 << 20);
    for mode in ["rndrd", "rndwr", "seqwr"] {
        let (code, out, err) = run_on(&d, &["--mode", mode, "--time", "2s"]);
        assert_eq!(code, Some(2), "{mode}: {out}{err}");
        assert!(
            err.contains(&format!("{} is 1048576 bytes with", f1.display()))
                && err.contains("prepared with files of 4194304 bytes")
                && err.contains("dbio bench prepare")
                && err.contains("dbio bench cleanup"),
            "{mode}: {err}"
        );
        assert!(
            !out.contains("Summary") && !err.contains("Summary"),
            "{out}"
        );
        assert_eq!(
            std::fs::metadata(&f1).unwrap().len(),
            1 << 20,
            "not refilled"
        );
    }
    // `truncate -s 4M` back: the size is right, the last 3 MiB are a hole.
    resize(4 << 20);
    let (code, out, err) = run_on(&d, &["--mode", "rndrd", "--time", "2s"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("is 4194304 bytes with") && err.contains("a hole at offset 1048576"),
        "{err}"
    );
    // Plain `dbio bench` completes the set, then runs on it and keeps it.
    dbio()
        .args(["bench", "--mode", "rndrd", "--events", "100"])
        .arg("--dir")
        .arg(&d)
        .assert()
        .success();
    let (code, out, err) = run_on(&d, &["--mode", "rndrd", "--events", "100"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Summary"), "{out}");
}

#[test]
fn ctrl_c_stops_and_still_writes_the_partial_result() {
    let tmp = shm();
    let dir = tmp.path().join("set");
    let out = tmp.path().join("result.json");
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let child = std::process::Command::new(bin)
        .args([
            "bench",
            "--engine",
            "null",
            "--time",
            "60s",
            "--file-num",
            "2",
            "--file-total-size",
            "2M",
            "--format",
            "json",
            "--output",
        ])
        .arg(&out)
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run has produced an interval line (on stderr in JSON mode).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stdout.is_empty(),
        "-o FILE: the result goes to the file only"
    );
    let r = json(&std::fs::read(&out).unwrap());
    assert_eq!(r["interrupted"], true);
    assert!(u(&r["summary"]["read"]["count"]) > 0);
    assert!(f(&r["summary"]["measured_s"]) < 30.0);
    assert!(!dir.exists(), "cleanup ran as it would have");
}

fn fails(args: &[&str], code: i32, msg: &str) {
    dbio()
        .arg("bench")
        .args(args)
        .assert()
        .code(code)
        .stderr(predicates::str::contains(msg));
}

#[test]
fn bad_input_gets_a_clear_error() {
    let tmp = shm();
    let d = tmp.path().to_str().unwrap().to_string();
    let missing = format!("{d}/no/such/dir");
    let dir = |extra: &[&'static str]| -> Vec<String> {
        ["--dir", d.as_str()]
            .iter()
            .chain(extra)
            .map(|a| a.to_string())
            .collect()
    };
    // (arguments, the message that names the value and says what to do); every one exits 2.
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--dir".into(), missing.clone()], "does not exist"),
        (
            dir(&["--file-total-size", "100T"]),
            "free on the filesystem",
        ),
        (dir(&["--mode", "randread"]), "invalid value 'randread'"),
        (
            dir(&["--block-size", "0"]),
            "--block-size 0 is out of range",
        ),
        (dir(&["--block-size", "1T"]), "out of range"),
        (
            dir(&["--block-size", "1000"]),
            "not a multiple of 512, which O_DIRECT requires",
        ),
        (
            dir(&["--misalign", "100"]),
            "--misalign 100 breaks O_DIRECT alignment",
        ),
        (dir(&["--block-size", "sixteen"]), "is not a size"),
        (dir(&["--time", "0"]), "--time 0"),
        (dir(&["--threads", "0"]), "--threads 0"),
        (dir(&["--iodepth", "8"]), "needs an async engine"),
        (
            dir(&["--engine", "uring", "--iodepth", "8", "--reap-batch", "9"]),
            "--reap-batch 9 is out of range: use 1 to --iodepth (8)",
        ),
        (dir(&["--distribution", "zipf"]), "not a distribution"),
        (
            vec!["--device".into(), "/etc/passwd".into()],
            "/etc/passwd is not a block device",
        ),
        (
            ["run"]
                .iter()
                .map(|a| a.to_string())
                .chain(dir(&[]))
                .collect(),
            "no dbio file set",
        ),
        // Durations and sizes that used to overflow and run silently wrong (exit 0).
        (dir(&["--time", "18446744074"]), "'18446744074' is too long"),
        (
            dir(&["--warmup", "18446744073", "--time", "1"]),
            "'18446744073' is too long",
        ),
        (dir(&["--report-interval", "1e12"]), "is not a duration"),
        (dir(&["--time", "100ns"]), "shorter than 1ms"),
        (
            dir(&["--buffered", "--misalign", "18446744073709551104"]),
            "--misalign 18446744073709551104 is out of range",
        ),
        (dir(&["--block-size", "16777216P"]), "is too large"),
        // Negative numbers are refused naming their flag.
        (
            dir(&["--threads", "-1"]),
            "invalid value '-1' for '--threads <THREADS>': it must not be negative",
        ),
        (
            dir(&["--iodepth", "-4"]),
            "invalid value '-4' for '--iodepth <IODEPTH>'",
        ),
        (
            dir(&["--block-size", "-4k"]),
            "invalid value '-4k' for '--block-size <BLOCK_SIZE>'",
        ),
        (
            dir(&["--time", "-1s"]),
            "invalid value '-1s' for '--time <TIME>'",
        ),
        (
            dir(&["--rate", "-3"]),
            "--rate -3 must be a positive number",
        ),
        (
            dir(&["--percentiles", "-1,50"]),
            "percentile -1 is out of range",
        ),
        // A mode that writes on a device needs the explicit flag (checked before anything is
        // opened for writing).
        (
            ["--device", "/dev/loop0", "--mode", "rndwr"]
                .iter()
                .map(|a| a.to_string())
                .collect(),
            "add --allow-device-writes",
        ),
    ];
    for (args, msg) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(&args, 2, msg);
    }
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        0,
        "nothing left behind"
    );
}

fn mounted(kind: &str, opts: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = disk();
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let st = std::process::Command::new("mount")
        .args(["-t", kind, "-o", opts, kind])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(
        st.success(),
        "mount -t {kind} needs root (the test environment runs as root)"
    );
    (tmp, mnt)
}

/// Unmounts `p`, retrying while it is busy: io_uring releases its registered files in a
/// kernel worker after the process has exited, so a mount used by a uring run can stay busy
/// for a moment. Fails the test rather than leave a mount behind.
fn umount(p: &Path) {
    for _ in 0..100 {
        let st = std::process::Command::new("umount")
            .arg(p)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        if st.success() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("cannot unmount {}: still busy after 2 s", p.display());
}

#[test]
fn direct_refused_by_the_filesystem_and_unwritable_dirs_are_named() {
    let (_t, mnt) = mounted("ramfs", "size=8m");
    let m = mnt.to_str().unwrap();
    let r = dbio()
        .args([
            "bench",
            "--dir",
            m,
            "--file-num",
            "1",
            "--file-total-size",
            "64k",
        ])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let e = String::from_utf8_lossy(&r);
    umount(&mnt);
    assert!(e.contains("refuses O_DIRECT") && e.contains(m), "{e}");

    let (_t2, ro) = mounted("tmpfs", "ro,size=1m");
    let r = dbio()
        .args([
            "bench",
            "prepare",
            "--dir",
            ro.to_str().unwrap(),
            "--file-num",
            "1",
            "--file-total-size",
            "64k",
        ])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    umount(&ro);
    let e = String::from_utf8_lossy(&r);
    assert!(
        e.contains("cannot write in") && e.contains("Read-only"),
        "{e}"
    );
}

#[test]
fn json_schema_snapshot() {
    let tmp = shm();
    let r = bench(
        tmp.path(),
        &[
            "--engine",
            "null",
            "--mode",
            "rndrw",
            "--events",
            "1000",
            "--file-num",
            "2",
            "--file-total-size",
            "1M",
            "--seed",
            "42",
            "--percentiles",
            "50,99,99.9",
        ],
    );
    // Counts are exact (null engine, fixed seed); times, latencies and the machine are not.
    // The machine's CPU per interval is there only when two /proc/stat samples fell apart
    // within this very short run: it is checked in intervals_are_per_interval_..., not here.
    let mut r = r;
    for iv in r["intervals"].as_array_mut().unwrap() {
        iv.as_object_mut().unwrap().remove("cpu");
    }
    insta::assert_json_snapshot!(r, {
        ".started_at" => "[time]",
        ".dbio_version" => "[version]",
        ".spec.target.path" => "[dir]",
        ".environment.hostname" => "[host]",
        ".environment.kernel" => "[kernel]",
        ".environment.cpus" => "[cpus]",
        ".environment.mem_total_bytes" => "[mem]",
        ".environment.mount_point" => "[mount]",
        ".environment.mount_options" => "[options]",
        ".environment.devices" => "[devices]",
        ".environment.clock" => "[clock]",
        ".intervals[].start_s" => "[s]",
        ".intervals[].end_s" => "[s]",
        ".intervals[].*.iops" => "[rate]",
        ".intervals[].*.bytes_per_s" => "[rate]",
        ".intervals[].*.lat_ns" => "[lat]",
        ".intervals[].histograms.*.min_ns" => "[ns]",
        ".intervals[].histograms.*.max_ns" => "[ns]",
        ".intervals[].histograms.*.sum_ns" => "[ns]",
        ".intervals[].histograms.*.buckets" => "[buckets]",
        ".summary.measured_s" => "[s]",
        ".summary.total_s" => "[s]",
        ".summary.*.iops" => "[rate]",
        ".summary.*.bytes_per_s" => "[rate]",
        ".summary.*.lat_ns" => "[lat]",
        ".summary.*.histogram.min_ns" => "[ns]",
        ".summary.*.histogram.max_ns" => "[ns]",
        ".summary.*.histogram.sum_ns" => "[ns]",
        ".summary.*.histogram.buckets" => "[buckets]",
        ".summary.threads[].busy_s" => "[s]",
        ".summary.fairness.busy_mean_s" => "[s]",
        ".summary.fairness.busy_stddev_s" => "[s]",
        ".summary.process_io" => "[io]",
    });
}

#[test]
fn time_limited_runs_end_in_the_last_interval_and_sync_what_they_wrote() {
    let tmp = shm();
    // A commit record written just before the deadline is still made durable, and the I/Os
    // drained after the deadline belong to the last interval (no extra sliver of an interval).
    for engine in [["--engine", "null"], ["--engine", "sync"]] {
        let r = bench(
            tmp.path(),
            &[
                &engine[..],
                &[
                    "--mode",
                    "commit",
                    "--time",
                    "0.5",
                    "--report-interval",
                    "0.25",
                    "--block-size",
                    "4k",
                    "--file-total-size",
                    "64M",
                ],
            ]
            .concat(),
        );
        let s = &r["summary"];
        assert_eq!(
            u(&s["write"]["count"]),
            u(&s["fsync"]["count"]),
            "{engine:?}"
        );
        let iv = r["intervals"].as_array().unwrap();
        assert_eq!(iv.len(), 2, "{engine:?}: {iv:#?}");
        assert!(f(&iv[1]["end_s"]) >= 0.5 && f(&iv[1]["end_s"]) < 0.6);
    }
}

/// A loop device over a fresh image file, detached (and the image removed) on drop. The image
/// is on tmpfs: a loop device over a file on a mounted block filesystem counts as that
/// filesystem's device, which dbio never writes to.
struct Loop {
    dev: String,
    _lo: common::LoopDev,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn new(size_mb: u64) -> Loop {
        Loop::with_sector(size_mb, 512)
    }

    fn with_sector(size_mb: u64, sector: u32) -> Loop {
        common::require_root("loop devices");
        let dir = shm();
        let img = dir.path().join("disk.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(size_mb << 20)
            .unwrap();
        let lo = common::LoopDev::attach(&img, &["--sector-size", &sector.to_string()]);
        Loop {
            dev: lo.dev.clone(),
            _lo: lo,
            _dir: dir,
        }
    }
}

#[test]
#[ignore = "needs root and loop devices; scripts/test.sh runs it"]
fn block_devices_are_read_freely_and_written_only_when_allowed_and_unmounted() {
    let lo = Loop::new(64);
    let dev = lo.dev.as_str();
    // Reads are allowed without any flag, with O_DIRECT.
    let out = dbio()
        .args([
            "bench",
            "--device",
            dev,
            "--mode",
            "rndrd",
            "--events",
            "500",
            "--block-size",
            "4k",
            "--format",
            "json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let r = json(&out);
    assert_eq!(u(&r["summary"]["read"]["count"]), 500);
    assert_eq!(r["spec"]["target"]["kind"], "device");
    assert!(r["environment"]["open_flags"]
        .as_array()
        .unwrap()
        .contains(&Value::from("O_RDONLY")));
    let devs = r["environment"]["devices"].as_array().unwrap();
    assert_eq!(devs[0]["kind"], "loop", "{devs:?}");
    // Writes need the flag...
    fails(
        &["--device", dev, "--mode", "rndwr", "--events", "10"],
        2,
        "add --allow-device-writes",
    );
    // ...and are refused while a filesystem on it is mounted.
    let mkfs = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", dev])
        .status()
        .unwrap();
    assert!(mkfs.success());
    let mnt = disk();
    assert!(std::process::Command::new("mount")
        .arg(dev)
        .arg(mnt.path())
        .status()
        .unwrap()
        .success());
    let e = dbio()
        .args([
            "bench",
            "--device",
            dev,
            "--mode",
            "rndwr",
            "--events",
            "10",
            "--allow-device-writes",
        ])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    umount(mnt.path());
    let e = String::from_utf8_lossy(&e);
    assert!(e.contains("refusing to write") && e.contains(dev), "{e}");
    // Unmounted, with the flag: the writes happen (this image is ours to destroy).
    let out = dbio()
        .args([
            "bench",
            "--device",
            dev,
            "--mode",
            "rndwr",
            "--events",
            "300",
            "--block-size",
            "4k",
            "--allow-device-writes",
            "--format",
            "json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(u(&json(&out)["summary"]["write"]["count"]), 300);
}

#[test]
#[ignore = "needs root and loop devices; scripts/test.sh runs it"]
fn direct_io_on_a_device_needs_its_logical_block_size() {
    let lo = Loop::with_sector(16, 4096);
    let dev = lo.dev.as_str();
    fails(
        &[
            "--device",
            dev,
            "--mode",
            "rndrd",
            "--events",
            "10",
            "--block-size",
            "2k",
        ],
        2,
        "logical block size of",
    );
    fails(
        &[
            "--device",
            dev,
            "--mode",
            "rndrd",
            "--events",
            "10",
            "--block-size",
            "4k",
            "--misalign",
            "512",
        ],
        2,
        "--misalign 512 breaks O_DIRECT alignment",
    );
    dbio()
        .args([
            "bench",
            "--device",
            dev,
            "--mode",
            "rndrd",
            "--events",
            "10",
            "--block-size",
            "4k",
        ])
        .assert()
        .success();
}

#[test]
#[ignore = "needs root, loop devices and mkfs.ext4; scripts/test.sh runs it"]
fn device_figures_sit_next_to_the_application_figures() {
    // An ext4 filesystem on a loop device of our own: no other process does I/O there, so the
    // device's request count must match dbio's O_DIRECT reads.
    let lo = Loop::new(96);
    assert!(std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &lo.dev])
        .status()
        .unwrap()
        .success());
    let mnt = disk();
    assert!(std::process::Command::new("mount")
        .arg(&lo.dev)
        .arg(mnt.path())
        .status()
        .unwrap()
        .success());
    let d = mnt.path().join("set");
    let out = dbio()
        .args([
            "bench",
            "--mode",
            "rndrd",
            "--time",
            "1.5",
            "--report-interval",
            "0.5",
            "--file-num",
            "2",
            "--file-total-size",
            "32M",
            "--format",
            "json",
            "--dir",
        ])
        .arg(&d)
        .output()
        .unwrap();
    umount(mnt.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out.stdout);
    let name = lo.dev.trim_start_matches("/dev/");
    assert_eq!(r["environment"]["devices"][0]["name"], name);
    let iv = r["intervals"].as_array().unwrap();
    assert_eq!(iv.len(), 3);
    for i in iv {
        let dev = &i["devices"][0];
        assert_eq!(dev["name"], name, "{i}");
        // Each of dbio's reads is one 16 KiB request on the device (within sampling skew).
        let app = f(&i["read"]["iops"]);
        let devr = f(&dev["r_per_s"]);
        assert!(
            (devr - app).abs() <= app * 0.1 + 50.0,
            "device r/s {devr} vs dbio {app}"
        );
        assert!((f(&dev["rareq_sz_kb"]) - 16.0).abs() < 0.5);
    }
    let c = &r["summary"]["device_check"];
    assert_eq!(c["device"], name);
    let (app, req, merged) = (
        u(&c["app_ios"]),
        u(&c["device_requests"]),
        u(&c["device_merged"]),
    );
    assert!(
        req + merged >= app * 95 / 100 && req <= app * 105 / 100 + 20,
        "{c}"
    );
    // Nobody else uses this device: it can never hold more in flight than dbio kept (it
    // holds less: part of each I/O's latency is spent above it, in the syscall and ext4).
    assert!(
        f(&c["device_aqu_sz"]) <= f(&c["app_in_flight"]) * 1.1,
        "{c}"
    );
    assert!(
        f(&c["app_in_flight"]) > 0.9 && f(&c["app_in_flight"]) <= 1.0,
        "one sync thread keeps at most one I/O in flight: {c}"
    );
}

/// Commit mode on a device of our own: one thread always waits on a write or an fdatasync,
/// so dbio keeps one operation in flight (Little's law over writes and syncs together; counting
/// writes alone gave 0.3 to 0.6), and the device check counts dbio's syncs and the device's
/// flushes.
#[test]
#[ignore = "needs root, loop devices and mkfs.ext4; scripts/test.sh runs it"]
fn commit_mode_device_check_counts_syncs_and_flushes() {
    let lo = Loop::new(64);
    assert!(std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &lo.dev])
        .status()
        .unwrap()
        .success());
    let mnt = disk();
    assert!(std::process::Command::new("mount")
        .arg(&lo.dev)
        .arg(mnt.path())
        .status()
        .unwrap()
        .success());
    let d = mnt.path().join("set");
    let out = dbio()
        .args([
            "bench",
            "--mode",
            "commit",
            "--time",
            "1",
            "--block-size",
            "4k",
            "--file-total-size",
            "8M",
            "--format",
            "json",
            "--dir",
        ])
        .arg(&d)
        .output()
        .unwrap();
    umount(mnt.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out.stdout);
    let s = &r["summary"];
    let c = &s["device_check"];
    assert_eq!(c["device"], lo.dev.trim_start_matches("/dev/"));
    let (writes, syncs) = (u(&s["write"]["count"]), u(&s["fsync"]["count"]));
    assert!(syncs > 0 && syncs >= writes.saturating_sub(1), "{s}");
    assert_eq!(u(&c["app_ios"]), writes + syncs, "{c}");
    assert!(
        f(&c["app_in_flight"]) > 0.9 && f(&c["app_in_flight"]) <= 1.0,
        "one thread waiting on a write or a sync the whole run keeps one in flight: {c}"
    );
    // ext4 flushes the device's cache for every fdatasync that commits the journal.
    assert!(u(&c["device_flushes"]) > 0, "{c}");
    assert!(u(&c["device_requests"]) >= u(&c["device_flushes"]), "{c}");
}

#[test]
fn reads_leave_access_times_alone_unless_asked() {
    // On the disk (ext4, relatime): an access time older than a day is updated by the next read,
    // unless the file is opened O_NOATIME, as dbio does by default.
    let tmp = disk();
    let d = tmp.path();
    let one = ONE_FILE;
    prepare(d, &one);
    let file = d.join("dbio-file.0");
    let set_old_atime = || {
        let st = std::process::Command::new("touch")
            .args(["-a", "-d", "2001-01-01"])
            .arg(&file)
            .status()
            .unwrap();
        assert!(st.success());
    };
    let atime_year = || {
        let t = std::fs::metadata(&file).unwrap().accessed().unwrap();
        1970 + t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() / 31_557_600
    };
    set_old_atime();
    let r = bench(
        d,
        &[&one[..], &["run", "--mode", "rndrd", "--events", "50"]].concat(),
    );
    assert!(r["environment"]["open_flags"]
        .as_array()
        .unwrap()
        .contains(&Value::from("O_NOATIME")));
    assert_eq!(
        atime_year(),
        2001,
        "O_NOATIME: the read left the access time alone"
    );
    let r = bench(
        d,
        &[
            &one[..],
            &["run", "--mode", "rndrd", "--events", "50", "--atime"],
        ]
        .concat(),
    );
    assert!(!r["environment"]["open_flags"]
        .as_array()
        .unwrap()
        .contains(&Value::from("O_NOATIME")));
    assert!(
        atime_year() > 2020,
        "--atime: the read updated the access time"
    );
}

#[test]
fn io_errors_name_the_file_and_offset_and_the_os_error_once() {
    // A failed open: the OS error text appears once.
    let tmp = shm();
    let d = tmp.path().join("set");
    let two = [
        "--file-num",
        "2",
        "--file-total-size",
        "2M",
        "--block-size",
        "4k",
    ];
    prepare(&d, &two);
    // The file set is checked before anything is opened (a missing file is a usage error), so
    // the open is made to fail by the kernel: an immutable file refuses O_RDWR (EPERM).
    struct Immutable(PathBuf);
    impl Drop for Immutable {
        fn drop(&mut self) {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
        }
    }
    let locked = Immutable(d.join("dbio-file.1"));
    let st = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&locked.0)
        .status()
        .expect("run chattr (e2fsprogs)");
    assert!(st.success(), "chattr +i on tmpfs needs root and Linux 6.0+");
    let o = dbio()
        .args(["bench", "run", "--time", "1", "--mode", "rndwr"])
        .args(two)
        .arg("--dir")
        .arg(&d)
        .assert()
        .code(1)
        .get_output()
        .clone();
    drop(locked);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("dbio-file.1"), "{err}");
    assert_eq!(err.matches("os error 1)").count(), 1, "{err}");

    // A failed read: the second file cut to 8 KiB under dbio's feet, once the run has started
    // (a file cut before the run is refused before it starts). The sequential reader, going
    // round both files, then reads past the new end: a short read at an offset where the
    // block crosses 8192 (with 512 bytes of misalignment), or nothing at all beyond it.
    use std::io::BufRead;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["bench", "run", "--mode", "seqrd", "--time", "60s"])
        .args(["--buffered", "--misalign", "512"])
        .args(two)
        .arg("--dir")
        .arg(&d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // The header is printed once the files are open and checked, just before the run.
    while !line.starts_with("dbio bench:") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no header");
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(d.join("dbio-file.1"))
        .unwrap()
        .set_len(8192)
        .unwrap();
    std::io::copy(&mut stdout, &mut std::io::sink()).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let at = format!("{}, offset ", d.join("dbio-file.1").display());
    let rest = &err[err.find(&at).unwrap_or_else(|| panic!("{err}")) + at.len()..];
    let (offset, rest) = rest.split_once(": short read: ").expect(&err);
    let (got, rest) = rest.split_once(" of ").expect(&err);
    let (offset, got): (u64, u64) = (offset.parse().unwrap(), got.parse().unwrap());
    assert!(rest.starts_with("4096 bytes"), "{err}");
    assert_eq!(offset % 4096, 512, "{err}");
    assert_eq!(offset + got, offset.max(8192), "{err}");
}

/// Starts `dbio bench [phase]` preparing a big file set in `dir`, waits until the first data
/// file exists (prepare is under way), sends `sig`, and returns the output.
fn interrupt_prepare(dir: &Path, phase: &[&str], sig: libc::c_int) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let child = std::process::Command::new(bin)
        .arg("bench")
        .args(phase)
        .args(["--file-total-size", "4G", "--dir"])
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let first = dir.join("dbio-file.0");
    for _ in 0..6000 {
        if first.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(first.exists(), "prepare did not start within a minute");
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, sig) };
    child.wait_with_output().unwrap()
}

#[test]
fn ctrl_c_during_prepare_exits_130() {
    let tmp = shm();
    // `bench prepare` alone: the partial set stays for cleanup, and the exit code says why.
    let dir = tmp.path().join("set");
    let o = interrupt_prepare(&dir, &["prepare"], libc::SIGINT);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("prepare interrupted"), "{out}");
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    dbio()
        .args(["bench", "cleanup", "--dir"])
        .arg(&dir)
        .assert()
        .success();
    assert!(!dir.exists());
    // A full `bench`: interrupted in prepare, it cleans up and exits 130.
    let o = interrupt_prepare(&dir, &[], libc::SIGINT);
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!dir.exists(), "the partial file set was removed");
}

/// SIGTERM (a service manager stopping dbio) ends it as cleanly as Ctrl-C, and the exit code
/// is 128 + 15, as a shell reports a process SIGTERM killed.
#[test]
fn sigterm_exits_143() {
    let tmp = shm();
    let dir = tmp.path().join("set");
    let o = interrupt_prepare(&dir, &[], libc::SIGTERM);
    assert_eq!(
        o.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!dir.exists(), "the partial file set was removed");
}

/// A pipe whose read end is already closed: every write to it fails with EPIPE, as when the
/// reader of `2>&1 | head -c 10` has gone.
fn closed_pipe() -> std::process::Stdio {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors; the read end is closed at once and the write end
    // is owned by the OwnedFd handed to the child's Stdio.
    unsafe {
        assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0);
        libc::close(fds[0]);
        std::process::Stdio::from(std::os::fd::OwnedFd::from_raw_fd(fds[1]))
    }
}

/// Runs `dbio bench ARGS` with one of stdout/stderr on a pipe that closes (at once, or for
/// stderr once `until` has been read from it, as `2>&1 | head -c N` does) and the other read
/// to the end; returns the exit status and what the other stream carried. Fails (killing dbio)
/// instead of hanging when dbio does not end within two minutes.
fn bench_with_closed(
    stream: &str,
    until: Option<&'static str>,
    args: &[&str],
) -> (std::process::ExitStatus, Vec<u8>) {
    use std::io::Read;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    cmd.arg("bench").args(args);
    let piped = std::process::Stdio::piped;
    match (stream, until) {
        ("stderr", None) => cmd.stderr(closed_pipe()).stdout(piped()),
        ("stderr", Some(_)) => cmd.stderr(piped()).stdout(piped()),
        _ => cmd.stdout(closed_pipe()).stderr(piped()),
    };
    let mut child = cmd.spawn().unwrap();
    if let Some(until) = until {
        let mut e = child.stderr.take().unwrap();
        // Read stderr until `until` went by, then close it.
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains(until) {
            let n = e.read(&mut buf).unwrap();
            assert!(
                n > 0,
                "{until:?} never came: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
    }
    let mut other: Box<dyn Read + Send> = match (child.stdout.take(), child.stderr.take()) {
        (Some(o), _) => Box::new(o),
        (None, Some(e)) => Box::new(e),
        (None, None) => unreachable!("one stream is read"),
    };
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        other.read_to_end(&mut v).unwrap();
        v
    });
    for _ in 0..1200 {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, reader.join().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("dbio bench {args:?} with a closed {stream} hung: killed after 120 s");
}

#[test]
fn a_closed_stderr_neither_stops_the_run_nor_loses_the_result() {
    // On the disk, so that the device sampler runs too (it once kept the run from ending).
    let tmp = disk();
    let dir = tmp.path().join("set");
    let d = dir.to_str().unwrap();
    // Closed from the start, or once the header is out (the live lines then fail, on the
    // thread that assembles the intervals).
    for (format, until) in [
        ("json", None),
        ("csv", None),
        ("json", Some("time |")),
        ("csv", Some("time |")),
    ] {
        let (status, out) = bench_with_closed(
            "stderr",
            until,
            &[
                "--dir",
                d,
                "--file-num",
                "2",
                "--file-total-size",
                "8M",
                "--block-size",
                "4k",
                "--time",
                "1",
                "--report-interval",
                "100ms",
                "--format",
                format,
            ],
        );
        assert_eq!(status.code(), Some(0), "{format} {until:?}: {status:?}");
        let out = String::from_utf8(out).unwrap();
        if format == "json" {
            let r = json(out.as_bytes());
            assert!(u(&r["summary"]["total"]["count"]) > 0);
            assert!(!r["intervals"].as_array().unwrap().is_empty());
        } else {
            assert!(out.lines().count() > 2, "{out}");
        }
        assert!(!dir.exists(), "{format}: the file set was removed");
    }
}

#[test]
fn a_closed_stdout_ends_the_run_quietly_and_keeps_the_output_file() {
    let tmp = disk();
    let dir = tmp.path().join("set");
    let d = dir.to_str().unwrap();
    let file = tmp.path().join("result.json");
    let base = [
        "--dir",
        d,
        "--file-num",
        "2",
        "--file-total-size",
        "8M",
        "--block-size",
        "4k",
        "--report-interval",
        "100ms",
    ];
    // Text: the live lines go to stdout; the first failed one ends the run.
    let (status, err) = bench_with_closed("stdout", None, &[&base[..], &["--time", "60"]].concat());
    let err = String::from_utf8_lossy(&err);
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("dbio:"), "quietly: {err}");
    assert!(!dir.exists(), "the file set was removed");
    // JSON with -o FILE: nothing goes to stdout, so its closing loses nothing.
    let (status, err) = bench_with_closed(
        "stdout",
        None,
        &[
            &base[..],
            &[
                "--time",
                "1",
                "--format",
                "json",
                "--output",
                file.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let err = String::from_utf8_lossy(&err);
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("dbio:"), "quietly: {err}");
    assert!(u(&json(&std::fs::read(&file).unwrap())["summary"]["total"]["count"]) > 0);
    assert!(!dir.exists(), "the file set was removed");
}

/// `dbio bench ARGS` with the open-file limit set to `soft`/`hard` first.
fn bench_with_nofile(soft: u64, hard: u64, args: &[&str]) -> std::process::Output {
    bench_with_rlimit(libc::RLIMIT_NOFILE, soft, hard, args)
}

/// `dbio bench ARGS` with a resource limit set to `soft`/`hard` first.
fn bench_with_rlimit(
    resource: libc::__rlimit_resource_t,
    soft: u64,
    hard: u64,
    args: &[&str],
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    cmd.arg("bench").args(args);
    // SAFETY: setrlimit is async-signal-safe; it only changes the child's own limit.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(resource, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn file_num_beyond_the_open_file_limit_is_refused_before_preparing() {
    let tmp = shm();
    let dir = tmp.path().join("set");
    let d = dir.to_str().unwrap();
    let args = [
        "--dir",
        d,
        "--file-num",
        "2000",
        "--file-total-size",
        "8000k",
        "--block-size",
        "4k",
        "--time",
        "1",
        "--format",
        "json",
    ];
    // Hard limit 1024: 2000 files cannot be open at once; nothing is written.
    let o = bench_with_nofile(1024, 1024, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "--file-num 2000 needs 2064 open files at once, but this process may open only 1024"
        ),
        "{err}"
    );
    assert!(!dir.exists(), "refused before preparing");
    // Soft 1024, hard 4096: dbio raises its soft limit and runs.
    let o = bench_with_nofile(1024, 4096, &args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(json(&o.stdout)["spec"]["file_num"], 2000);
    assert!(!dir.exists());
}

#[test]
fn buffers_beyond_the_memory_available_are_refused_with_their_total() {
    let tmp = shm();
    let dir = tmp.path().join("set");
    // 4096 threads x 4096 I/Os x 16 KiB = 256 GiB of buffers. The address space is capped
    // at 32 GiB so that a dbio that tried anyway fails fast instead of pressing the machine.
    let o = bench_with_rlimit(
        libc::RLIMIT_AS,
        32 << 30,
        32 << 30,
        &[
            "--dir",
            dir.to_str().unwrap(),
            "--engine",
            "null",
            "--threads",
            "4096",
            "--iodepth",
            "4096",
            "--time",
            "1",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{:?} {err}", o.status);
    assert!(
        err.contains("--threads 4096 x --iodepth 4096 x --block-size 16KiB = 256.00 GiB of I/O buffers, more than the"),
        "{err}"
    );
    assert!(err.contains("of memory available ("), "{err}");
    assert!(!dir.exists(), "refused before preparing");
}

/// A pids cgroup (v2, or the v1 pids hierarchy of a hybrid system) that holds at most
/// `max` tasks; processes still in it are killed and it is removed on drop.
struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    fn new(max: u32) -> Option<PidsCgroup> {
        let name = format!("dbio-test-{}", std::process::id());
        let v2 = Path::new("/sys/fs/cgroup");
        let base = if std::fs::read_to_string(v2.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"))
        {
            let sub =
                std::fs::read_to_string(v2.join("cgroup.subtree_control")).unwrap_or_default();
            if !sub.split_whitespace().any(|c| c == "pids") {
                std::fs::write(v2.join("cgroup.subtree_control"), "+pids").ok()?;
            }
            v2.to_path_buf()
        } else if Path::new("/sys/fs/cgroup/pids/cgroup.procs").exists() {
            v2.join("pids")
        } else {
            return None;
        };
        let dir = base.join(name);
        std::fs::create_dir(&dir).ok()?;
        let cg = PidsCgroup { dir };
        std::fs::write(cg.dir.join("pids.max"), max.to_string()).ok()?;
        Some(cg)
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        for _ in 0..100 {
            let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs
                .split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok())
            {
                // SAFETY: killing a process this test started (the only ones in its cgroup).
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("cannot remove cgroup {}", self.dir.display());
    }
}

#[test]
#[ignore = "needs root and a cgroup pids controller (v2 or v1); scripts/test.sh runs it"]
fn threads_beyond_the_task_limit_end_with_an_error_and_clean_up() {
    common::require_root("creating a pids cgroup");
    let cg = PidsCgroup::new(50)
        .expect("needs a cgroup pids controller (v2, or the v1 pids hierarchy) that root can use");
    let tmp = shm();
    let dir = tmp.path().join("set");
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    // The shell moves itself into the cgroup, then becomes dbio.
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
            cg.dir.display()
        ))
        .arg(&bin)
        .args(["bench", "--threads", "64", "--time", "5", "--dir"])
        .arg(&dir)
        .args(SMALL)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut status = None;
    for _ in 0..1200 {
        status = child.try_wait().unwrap();
        if status.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("dbio bench --threads 64 under pids.max=50 hung: killed after 120 s");
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot start worker thread"), "{err}");
    assert!(err.contains("of 64: "), "{err}");
    assert!(err.contains("pids.max"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!dir.exists(), "the file set was removed");
    drop(cg);
}

/// `--spin-polls N` (issue 17): 16 by default for io_uring, recorded in the spec, the engine's
/// description and the text header; 0 sleeps at once (as fio does) and says nothing; the sync
/// engine, which never waits on a ring, records 0.
#[test]
fn spin_polls_are_an_option_recorded_in_the_result() {
    let tmp = disk();
    let d = tmp.path();
    prepare(d, &SMALL);
    for (engine, extra, polls) in [
        ("uring", &[][..], 16),
        ("uring", &["--spin-polls", "0"][..], 0),
        ("uring", &["--spin-polls", "100"][..], 100),
        ("sync", &[][..], 0),
    ] {
        let r = bench(
            d,
            &[
                &SMALL[..],
                &[
                    "run", "--engine", engine, "--mode", "rndrd", "--events", "500",
                ],
                extra,
            ]
            .concat(),
        );
        let case = format!("{engine} {extra:?}");
        assert_eq!(r["spec"]["spin_polls"], polls, "{case}");
        let e = r["environment"]["engine"].as_str().unwrap();
        assert_eq!(
            e.contains(&format!("up to {polls} completion polls before sleeping")),
            polls > 0,
            "{case}: {e}"
        );
        assert_eq!(e.contains("completion polls"), polls > 0, "{case}: {e}");
        assert_eq!(u(&r["summary"]["read"]["count"]), 500, "{case}");
    }
    let text = dbio()
        .args(["bench", "run", "--engine", "uring", "--mode", "rndrd"])
        .args(SMALL)
        .args(["--events", "100", "--spin-polls", "4", "--dir"])
        .arg(d)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(", 4 polls before sleeping"), "{text}");
}

/// `--fixed-buffers` and `--register-files` (issue 17): off by default (plain reads and writes
/// by descriptor, as MariaDB and MySQL submit them), each reaching the ring when given, and the
/// result saying which were used: the spec for comparing results, the engine's own words in
/// the environment, the text header. Writes too. Refused with an engine that has no ring.
#[test]
fn fixed_buffers_and_registered_files_are_options_recorded_in_the_result() {
    let tmp = disk();
    let d = tmp.path();
    prepare(d, &SMALL);
    for (extra, fixed, reg) in [
        (&[][..], false, false),
        (&["--fixed-buffers"][..], true, false),
        (&["--register-files"][..], false, true),
        (&["--fixed-buffers", "--register-files"][..], true, true),
    ] {
        for mode in ["rndrd", "rndwr"] {
            let r = bench(
                d,
                &[
                    &SMALL[..],
                    &["run", "--engine", "uring", "--iodepth", "8", "--mode", mode],
                    &["--events", "2000"],
                    extra,
                ]
                .concat(),
            );
            let case = format!("{mode} {extra:?}");
            assert_eq!(r["spec"]["fixed_buffers"], fixed, "{case}");
            assert_eq!(r["spec"]["register_files"], reg, "{case}");
            let e = r["environment"]["engine"].as_str().unwrap();
            assert_eq!(
                e.contains("READ_FIXED/WRITE_FIXED on registered buffers"),
                fixed,
                "{case}: {e}"
            );
            assert_eq!(
                e.contains("plain READ/WRITE on unregistered buffers"),
                !fixed,
                "{case}: {e}"
            );
            assert_eq!(e.contains("registered files"), reg, "{case}: {e}");
            assert_eq!(e.contains("files by descriptor"), !reg, "{case}: {e}");
            let s = &r["summary"];
            assert_eq!(
                u(&s["read"]["count"]) + u(&s["write"]["count"]),
                2000,
                "{case}"
            );
            assert_eq!(
                r["spec"]["huge_pages"], false,
                "{case}: the default (issue 27)"
            );
            assert_eq!(r["spec"]["buffers"]["source"], "default", "{case}");
        }
    }
    let text = dbio()
        .args([
            "bench",
            "run",
            "--engine",
            "uring",
            "--iodepth",
            "8",
            "--mode",
            "rndrd",
        ])
        .args(SMALL)
        .args(["--events", "100", "--fixed-buffers"])
        .arg("--dir")
        .arg(d)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    let small = bench(
        d,
        &[
            &SMALL[..],
            &[
                "run",
                "--engine",
                "uring",
                "--iodepth",
                "8",
                "--mode",
                "rndrd",
            ],
            &["--events", "100", "--no-huge-pages"],
        ]
        .concat(),
    );
    assert_eq!(small["spec"]["huge_pages"], false);
    let e = small["environment"]["engine"].as_str().unwrap();
    assert!(e.contains("buffers in 4 KiB pages"), "{e}");
    let huge = bench(
        d,
        &[
            &SMALL[..],
            &[
                "run",
                "--engine",
                "uring",
                "--iodepth",
                "8",
                "--mode",
                "rndrd",
            ],
            &["--events", "100", "--huge-pages"],
        ]
        .concat(),
    );
    assert_eq!(huge["spec"]["huge_pages"], true);
    assert_eq!(huge["spec"]["buffers"]["source"], "flag");
    assert_eq!(huge["spec"]["buffers"]["why"], "--huge-pages");
    assert!(
        text.contains("READ_FIXED/WRITE_FIXED on registered buffers, files by descriptor"),
        "{text}"
    );
    for flag in ["--fixed-buffers", "--register-files"] {
        dbio()
            .args(["bench", "run", "--engine", "sync", "--mode", "rndrd", flag])
            .args(SMALL)
            .arg("--dir")
            .arg(d)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("applies to --engine uring only"));
    }
}

/// `--like-server` with the DSN of the MariaDB here (large_pages=OFF, its buffer pool in
/// 4 KiB pages: `AnonHugePages: 0 kB`): 4 KiB pages, and the result says why.
#[test]
#[ignore = "needs the MariaDB server of DBIO_TEST_MYSQL (default 127.0.0.1:3306, root)"]
fn like_server_picks_4k_pages_for_a_server_without_large_pages() {
    let dsn = std::env::var("DBIO_TEST_MYSQL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into());
    let t = tempfile::tempdir().unwrap();
    let args = [&SMALL[..], &["--engine", "uring", "--mode", "rndrd"]].concat();
    let r = bench(
        t.path(),
        &[&args[..], &["--events", "100", "--like-server", &dsn]].concat(),
    );
    assert_eq!(r["spec"]["huge_pages"], false);
    assert_eq!(r["spec"]["buffers"]["source"], "server");
    let why = r["spec"]["buffers"]["why"].as_str().unwrap();
    assert!(why.contains("large_pages=OFF"), "{why}");
    assert!(why.contains("AnonHugePages 0 kB"), "{why}");
}

/// A throwaway MariaDB started with --large-pages, with hugetlb pages reserved for it: its
/// buffer pool is a hugetlb mapping, and `--like-server` (by DSN and by PID) picks huge pages.
/// Without the reservation the server falls back to 4 KiB pages, and so does dbio.
#[test]
#[ignore = "needs root, mariadbd and mariadb-install-db (scripts/setup-test-env.sh), and 300 free 2 MiB pages"]
fn like_server_picks_huge_pages_for_a_server_with_large_pages() {
    use std::process::Command;
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    let data = root.join("data");
    let nr = "/proc/sys/vm/nr_hugepages";
    let before = std::fs::read_to_string(nr).unwrap();
    struct Restore(String, std::path::PathBuf, Option<std::process::Child>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Ok(pid) = std::fs::read_to_string(&self.1) {
                let _ = Command::new("kill").arg(pid.trim()).status();
                for _ in 0..100 {
                    if !self.1.exists() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            }
            if let Some(mut c) = self.2.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
            let _ = std::fs::write("/proc/sys/vm/nr_hugepages", &self.0);
        }
    }
    let pid_file = root.join("m.pid");
    let mut restore = Restore(before.clone(), pid_file.clone(), None);
    let want = before.trim().parse::<u64>().unwrap() + 300;
    std::fs::write(nr, want.to_string()).unwrap();
    Command::new("chown")
        .args(["-R", "mysql:"])
        .arg(root)
        .status()
        .unwrap();
    let ok = Command::new("mariadb-install-db")
        .args([
            "--no-defaults",
            "--user=mysql",
            "--auth-root-authentication-method=normal",
        ])
        .arg(format!("--datadir={}", data.display()))
        .output()
        .unwrap();
    assert!(ok.status.success(), "{ok:?}");
    let port = 3390 + (std::process::id() % 8) as u16;
    let child = Command::new("mariadbd")
        .args(["--no-defaults", "--user=mysql", "--large-pages"])
        .args(["--innodb-buffer-pool-size=128M", "--skip-networking=0"])
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--port={port}"))
        .arg(format!("--socket={}", root.join("s.sock").display()))
        .arg(format!("--pid-file={}", pid_file.display()))
        .arg(format!("--log-error={}", root.join("err.log").display()))
        .spawn()
        .unwrap();
    restore.2 = Some(child);
    let dsn = format!("mysql://root@127.0.0.1:{port}/");
    let mut up = false;
    for _ in 0..300 {
        if pid_file.exists() && dbio_mysql::server::connect(&dsn).is_ok() {
            up = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        up,
        "{}",
        std::fs::read_to_string(root.join("err.log")).unwrap_or_default()
    );
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    let d = root.join("set");
    let args = [&SMALL[..], &["--engine", "uring", "--mode", "rndrd"]].concat();
    for server in [dsn.as_str(), pid.as_str()] {
        let r = bench(
            &d,
            &[&args[..], &["--events", "100", "--like-server", server]].concat(),
        );
        assert_eq!(r["spec"]["huge_pages"], true, "{server}");
        assert_eq!(r["spec"]["buffers"]["source"], "server");
        let why = r["spec"]["buffers"]["why"].as_str().unwrap();
        assert!(why.contains("KernelPageSize 2048 kB"), "{server}: {why}");
        assert_eq!(why.contains("large_pages=ON"), server == dsn, "{why}");
    }
}

/// The default run's flags in these tests: 2 files of 4 MiB, 4 KiB blocks, each phase 300
/// I/Os (reads+writes of the page phase, record writes of the commit phase).
const DEFAULT_RUN: [&str; 8] = [
    "--file-num",
    "2",
    "--file-total-size",
    "8M",
    "--block-size",
    "4k",
    "--events",
    "300",
];

/// `dbio bench` without --mode on the disk (real O_DIRECT files, real fdatasync): the
/// data-page phase, then the commit phase in the same directory, then the verdict, all in one
/// JSON document; the files of both phases (data files and logs) are removed after.
#[test]
fn default_run_measures_pages_then_commits_and_gives_a_verdict() {
    let tmp = disk();
    let dir = tmp.path().join("set");
    let r = bench(&dir, &DEFAULT_RUN);
    assert_eq!(r["spec"]["mode"], "rndrw");
    assert_eq!(r["interrupted"], false);
    assert_eq!(u(&r["summary"]["total"]["count"]), 300);
    assert!(u(&r["summary"]["read"]["count"]) > 0);
    let c = &r["default_run"]["commit"];
    assert_eq!(c["schema"], "dbio.bench/1");
    assert_eq!(c["spec"]["mode"], "commit");
    assert_eq!(
        c["spec"]["target"], r["spec"]["target"],
        "the same directory"
    );
    assert_eq!(
        c["environment"]["filesystem"],
        r["environment"]["filesystem"]
    );
    assert_eq!(c["spec"]["block_size_bytes"], 4096);
    // Every record written and synced (fdatasync after each one), as --mode commit does.
    assert_eq!(u(&c["summary"]["write"]["count"]), 300);
    assert_eq!(u(&c["summary"]["fsync"]["count"]), 300);
    assert_eq!(u(&c["summary"]["engine_calls"]["fsyncs"]), 300);
    assert_eq!(u(&c["summary"]["read"]["count"]), 0);
    // The kernel saw the records written (O_DIRECT: to storage).
    assert!(
        u(&c["summary"]["process_io"]["write_bytes"]) >= 300 * 4096,
        "{c}"
    );
    let v = &r["default_run"]["verdict"];
    assert_eq!(u(&v["page_misses"]), 10);
    // Means add: 10 page reads and one commit (its write and its sync).
    let read_mean = f(&r["summary"]["read"]["lat_ns"]["mean"]);
    let commit_mean =
        f(&c["summary"]["write"]["lat_ns"]["mean"]) + f(&c["summary"]["fsync"]["lat_ns"]["mean"]);
    assert!((f(&v["page_read_mean_ns"]) - read_mean).abs() < 1e-6);
    assert!((f(&v["commit_mean_ns"]) - commit_mean).abs() < 1e-6 * commit_mean);
    let txn = f(&v["txn_mean_ns"]);
    assert!(
        (txn - (10.0 * read_mean + commit_mean)).abs() < 1e-6 * txn,
        "{v}"
    );
    assert_eq!(
        u(&v["page_read_p99_ns"]),
        u(&r["summary"]["read"]["lat_ns"]["p99"]),
        "the page read p99 is the measured one"
    );
    // A transaction waits for its commit: its p99 is at least the commit's smallest.
    assert!(u(&v["txn_p99_ns"]) >= u(&c["summary"]["fsync"]["lat_ns"]["min"]));
    let words = v["words"].as_str().unwrap();
    assert!(
        words.starts_with("page reads p99 ")
            && words.contains(", commits p99 ")
            && words.contains("a transaction with one commit and 10 page misses waits about "),
        "{words}"
    );
    assert!(!dir.exists(), "data files, logs and the directory removed");
}

/// The text of the default run: both phases' lines and summaries, then the verdict; the
/// warning about writes nothing syncs points to the commit phase. `--mode rndrw` given
/// explicitly is today's single phase, with no commit phase and no verdict.
#[test]
fn default_run_text_and_an_explicit_mode_stays_one_phase() {
    let tmp = disk();
    let dir = tmp.path().join("set");
    let o = dbio()
        .arg("bench")
        .args(DEFAULT_RUN)
        .args(["--page-misses", "3", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .clone();
    let out = String::from_utf8_lossy(&o.stdout);
    let at = |s: &str| {
        out.find(s)
            .unwrap_or_else(|| panic!("no {s:?} in the output:\n{out}"))
    };
    let order = [
        "the default run: data pages (as --mode rndrw), then commits (as --mode commit) on the same file system, until 300 I/Os each, then a verdict",
        "dbio bench: rndrw with sync engine, 4KiB blocks, 1 thread",
        "\nSummary: ",
        "\ncommit phase: each thread appends records to its own log and syncs each (as --mode commit)\n",
        "dbio bench: commit with sync engine, 4KiB blocks, 1 thread",
        "fdatasync after every record",
        "\nfsync ",
        "\nverdict: page reads p99 ",
        "a transaction with one commit and 3 page misses waits about ",
    ];
    let pos: Vec<usize> = order.iter().map(|s| at(s)).collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("nothing here is durable"), "{err}");
    // An explicit --mode: one phase, as before.
    let o = dbio()
        .arg("bench")
        .args(DEFAULT_RUN)
        .args(["--mode", "rndrw", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .clone();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\ndbio bench: rndrw"), "{out}");
    for s in ["default run", "commit", "verdict"] {
        assert!(!out.contains(s), "{s:?} in a single-phase run:\n{out}");
    }
    let r = bench(&dir, &[&DEFAULT_RUN[..], &["--mode", "rndrw"]].concat());
    assert!(r.get("default_run").is_none(), "{r}");
    // --page-misses belongs to the default run.
    dbio()
        .args(["bench", "--mode", "rndrd", "--page-misses", "3", "--dir"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--page-misses sets the default run's verdict",
        ));
    assert!(!dir.exists());
}

/// CSV of the default run: the same columns and `phase` last, the commit rows after the page
/// rows. Sysbench format has one run: the data-page phase alone.
#[test]
fn default_run_csv_has_a_phase_column_and_sysbench_one_phase() {
    let tmp = shm();
    let dir = tmp.path().join("set");
    let csv = |extra: &[&str]| -> String {
        let o = dbio()
            .arg("bench")
            .args(&DEFAULT_RUN[..6])
            .args(["--time", "2500ms", "--dir"])
            .arg(&dir)
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(o).unwrap()
    };
    let out = csv(&["--format", "csv"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("start_s,end_s,warmup,read_count,"),
        "{out}"
    );
    assert!(lines[0].ends_with(",phase"), "{out}");
    let phases: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    // 2.5 s each at 1 s intervals: 3 rows each (the last one half an interval).
    assert_eq!(
        phases,
        ["pages", "pages", "pages", "commit", "commit", "commit"],
        "{out}"
    );
    let single = csv(&["--format", "csv", "--mode", "rndrd"]);
    assert!(
        !single.lines().next().unwrap().contains("phase"),
        "{single}"
    );
    let out = csv(&["--format", "sysbench"]);
    assert_eq!(out.matches("General statistics:").count(), 1, "{out}");
    assert!(!out.contains("verdict") && !out.contains("commit"), "{out}");
    assert!(!dir.exists());
}

/// Starts a default run writing JSON to `out`, reads its stderr (the live lines in JSON mode)
/// until `ready` says so, sends SIGINT and returns the exit code and all of stderr.
fn interrupt_default_run(
    dir: &Path,
    out: &Path,
    args: &[&str],
    ready: impl Fn(&str) -> bool,
) -> (Option<i32>, String) {
    use std::io::{BufRead, Read};
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let mut child = std::process::Command::new(bin)
        .arg("bench")
        .args(args)
        .args(["--format", "json", "--output"])
        .arg(out)
        .arg("--dir")
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("the run ended before it was ready to be interrupted:\n{seen}");
        }
        seen.push_str(&line);
        if ready(&seen) {
            break;
        }
    }
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    err.read_to_string(&mut seen).unwrap();
    (child.wait().unwrap().code(), seen)
}

/// Ctrl-C (a real SIGINT) during the data-page phase: the partial page result is written, the
/// commit phase never starts (`default_run.commit` null, no verdict), the files are removed,
/// exit 130.
#[test]
fn ctrl_c_in_the_page_phase_writes_the_partial_result_without_commits() {
    let tmp = disk();
    let dir = tmp.path().join("set");
    let out = tmp.path().join("r.json");
    let args = [&DEFAULT_RUN[..6], &["--time", "60s"]].concat();
    // The first interval line of the page phase.
    let (code, err) = interrupt_default_run(&dir, &out, &args, |s| s.contains("1.0s |"));
    assert_eq!(code, Some(130), "{err}");
    assert!(!err.contains("dbio bench: commit"), "{err}");
    assert!(
        err.contains("verdict: none: the run stopped before its commit phase"),
        "{err}"
    );
    let r = json(&std::fs::read(&out).unwrap());
    assert_eq!(r["interrupted"], true);
    assert!(u(&r["summary"]["read"]["count"]) > 0);
    assert!(r["default_run"]["commit"].is_null(), "{}", r["default_run"]);
    assert!(r["default_run"]["verdict"].is_null());
    assert!(!dir.exists(), "cleanup ran as it would have");
}

/// Ctrl-C during the commit phase: the page phase is whole, the commit phase partial and
/// marked interrupted, the verdict says it comes from an interrupted run, exit 130.
#[test]
fn ctrl_c_in_the_commit_phase_writes_both_phases() {
    let tmp = disk();
    let dir = tmp.path().join("set");
    let out = tmp.path().join("r.json");
    // Many events: the page phase (thousands of I/Os a second) ends well before the commit
    // phase (each record waits for its fdatasync), which is interrupted after its first
    // interval line.
    let args = [&DEFAULT_RUN[..6], &["--events", "20000"]].concat();
    let (code, err) = interrupt_default_run(&dir, &out, &args, |s| {
        s.split_once("dbio bench: commit")
            .is_some_and(|(_, c)| c.contains("1.0s |"))
    });
    assert_eq!(code, Some(130), "{err}");
    let r = json(&std::fs::read(&out).unwrap());
    assert_eq!(r["interrupted"], false, "the page phase ran whole");
    assert_eq!(u(&r["summary"]["total"]["count"]), 20000);
    let c = &r["default_run"]["commit"];
    assert_eq!(c["interrupted"], true, "{c}");
    let commits = u(&c["summary"]["fsync"]["count"]);
    assert!(commits > 0 && commits < 20000, "{commits}");
    let words = r["default_run"]["verdict"]["words"].as_str().unwrap();
    assert!(words.ends_with("(from an interrupted run)"), "{words}");
    assert!(err.contains("INTERRUPTED"), "{err}");
    assert!(!dir.exists(), "data files and logs removed");
}
