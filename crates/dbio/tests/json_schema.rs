//! Every JSON output of the real binary, on fixtures and on this system, validates against its
//! schema in `schema/` (JSON Schema 2020-12) and names it: `schema` and `dbio_version` first.

use crate::common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn testdata(p: &str) -> String {
    root().join("testdata").join(p).display().to_string()
}

/// The documents one run printed: one (pretty JSON) or one per line (JSON Lines).
fn run(args: &[&str], dir: &Path, lines: bool) -> Vec<Value> {
    let out = Command::cargo_bin("dbio")
        .unwrap()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        !stdout.trim().is_empty(),
        "dbio {args:?} printed nothing (exit {:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    if lines {
        stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    } else {
        vec![serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))]
    }
}

/// Validates every document against `schema/<file>.schema.json` and checks it is stamped with
/// `name` (all of them, or for JSON Lines with a summary, the documents that carry a schema).
fn validate(file: &str, name: &str, docs: &[Value]) {
    let path = root().join("schema").join(format!("{file}.schema.json"));
    let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("{} is not a valid JSON Schema: {e}", path.display()));
    assert!(!docs.is_empty());
    for (i, d) in docs.iter().enumerate() {
        let errors: Vec<String> = v
            .iter_errors(d)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "document {i} does not match {}:\n{}\n{d}",
            path.display(),
            errors.join("\n")
        );
    }
    for d in docs {
        unit_rule(d, "");
    }
    let stamped: Vec<&Value> = docs.iter().filter(|d| d.get("schema").is_some()).collect();
    assert!(!stamped.is_empty(), "no document names its schema");
    for d in stamped {
        assert_eq!(d["schema"], name);
        assert_eq!(d["dbio_version"], env!("CARGO_PKG_VERSION"));
        let keys: Vec<&String> = d.as_object().unwrap().keys().take(2).collect();
        assert_eq!(keys, ["schema", "dbio_version"], "the two come first");
    }
}

/// Numbers whose key carries no unit because they have none: counts, ids, ratios, levels,
/// indexes (`jq` users read the unit from the key, so a new key must join this list
/// deliberately or end in a unit).
const UNITLESS: &[&str] = &[
    // counts
    "count",
    "cpus",
    "events",
    "events_mean",
    "events_stddev",
    "file_num",
    "fsync_every",
    "fsyncs",
    "iodepth",
    "reap_batch",
    "spin_polls",
    "submit_batch",
    "reads",
    "writes",
    "syscalls",
    "syscr",
    "syscw",
    "threads",
    "repeat",
    "transactions",
    "queries",
    "reconnects",
    "sigfig",
    // the default run's verdict: page reads per transaction, transactions drawn
    "page_misses",
    "samples",
    "app_ios",
    "device_flushes",
    "device_merged",
    "device_requests",
    "ok",
    "warn",
    "crit",
    "unknown",
    "advice",
    "hit_count",
    "hits_in_pages",
    "pages",
    "pages_found",
    "pages_written",
    "pages_kept",
    "duplicates_dropped",
    "records",
    "deleted_records",
    "pages_decoded",
    "older_copies",
    "records_seen",
    "rows_written",
    "deleted_rows_written",
    "filtered_out",
    "plausible",
    "sampled",
    "levels",
    "intact",
    "torn",
    "heuristic",
    "nr_requests",
    "disks",
    "data_disks",
    "ag_count",
    "blocks",
    "sectors_per_stripe_unit",
    // dbio mysql chunk: rows, chunks and retries counted; a pause's value and limit are in
    // the unit of its subject (see schema/dbio.mysql.chunk.schema.json)
    "table_rows_estimate",
    "condition_rows_estimate",
    "start_chunk_rows",
    "chunks_estimate",
    "chunks",
    "rows",
    "rows_walked",
    "rows_affected",
    "rows_archived",
    "child_rows_archived",
    "rows_estimate",
    "job_rows_affected",
    "retries",
    "chunk_rows_min",
    "chunk_rows_max",
    "chunk_rows_last",
    "sleep_coef",
    "value",
    "limit",
    // dbio mysql advise: samples and statements counted; an evidence figure's `interval` and
    // `since_startup` carry the unit of its `name` (see schema/dbio.mysql_advise.schema.json)
    "samples",
    "queries_per_sample",
    "interval",
    "since_startup",
    // CHS geometry of `dbio align calc --heads`: counts, ratios and a cylinder number
    "heads",
    "sectors_per_track",
    "sectors_per_cylinder",
    "sectors_per_block",
    "first_aligned_cylinder",
    // mean numbers of requests (queue sizes, concurrency)
    "aqu_sz",
    "device_aqu_sz",
    "app_in_flight",
    "in_flight",
    "rd_cnc",
    "wr_cnc",
    // ids, numbers, positions in a list, ratios
    "seed",
    "thread",
    "depth",
    "number",
    "space_id",
    "page_no",
    "index_id",
    "level",
    "heap_no",
    "rw_ratio",
    "theta",
    "table_id",
    "root_page",
    // dbio model: populations and concurrencies, queue lengths, fit statistics (a
    // coefficient's estimate and std_error carry the unit of the key above them:
    // lambda_per_s.estimate is per second, sigma.estimate has none)
    "n",
    "n_sat",
    "n_max",
    "max_measured_n",
    "queue_length",
    "servers",
    "threads_running",
    "df",
    "r_squared",
    "efficiency",
    "estimate",
    "std_error",
    // dbio report: counts of intervals, indexes of runs and points, loads (threads x iodepth),
    // ratios, a correlation, a p-value and the thresholds that are shares or factors
    "intervals",
    "stall_intervals",
    "period_intervals",
    "window_intervals",
    "steady_window_intervals",
    "from_interval",
    "a_intervals",
    "b_intervals",
    "point",
    "a_point",
    "b_point",
    "load",
    "max_load_within_slo",
    "saturation_load",
    "iops_ratio",
    "p99_ratio",
    "autocorrelation",
    "p_value",
    "alpha",
    "stall_throughput_fraction",
    "stall_p99_factor",
];

/// Every key is a jq dot path (no `.`), and every number's key ends in its unit (`_ns`, `_us`,
/// `_ms`, `_s`, `_bytes`, `_kb`, `_per_s`, `_pct`, `_sectors`, `_blocks`, `_iops`; `bytes` and `iops`
/// are units themselves; a statistics object such as `lat_ns` carries the unit for its
/// `min`/`mean`/`max`/`pNN_N`), or is unitless (listed above). Maps keyed by names (page
/// types, checksum algorithms) are skipped.
fn unit_rule(v: &Value, path: &str) {
    const UNITS: &[&str] = &[
        "_ns", "_us", "_ms", "_s", "_bytes", "_kb", "_per_s", "_pct", "_sectors", "_blocks",
        "_iops",
    ];
    let stats = |k: &str| {
        ["min", "mean", "max"].contains(&k)
            || (k.starts_with('p') && k[1..].split('_').all(|d| d.parse::<u32>().is_ok()))
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}.{k}");
                assert!(
                    !k.contains('.'),
                    "{p}: a key with a `.` is not a jq dot path"
                );
                if ["other_pages", "checksum_algorithms", "labels", "rejected"]
                    .contains(&k.as_str())
                {
                    continue;
                }
                let unit = UNITS.iter().any(|u| k.ends_with(u))
                    || ["bytes", "iops"].contains(&k.as_str())
                    || (stats(k) && path.ends_with("_ns"));
                assert!(
                    !x.is_number() || unit || UNITLESS.contains(&k.as_str()),
                    "{p} = {x}: a number's key ends in its unit (_ns, _bytes, _per_s, _pct, \
                     _sectors, ...) or is a count listed in UNITLESS"
                );
                unit_rule(x, &p);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| unit_rule(x, &format!("{path}[]"))),
        _ => {}
    }
}

#[test]
fn bench_json_validates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let base = [
        "--format",
        "json",
        "--file-num",
        "1",
        "--file-total-size",
        "1M",
    ];
    for extra in [
        &["--engine", "null", "--events", "500"][..],
        &["--engine", "null", "--events", "300", "--rate", "5000"],
        &[
            "--engine",
            "null",
            "--time",
            "300ms",
            "--distribution",
            "zipf:1.2",
            "--percentiles",
            "50,99.999",
        ],
        &[
            "--engine",
            "null",
            "--events",
            "300",
            "--distribution",
            "hotspot:90/10",
        ],
        &["--events", "200", "--dir", d],
        &["--events", "50", "--mode", "commit", "--dir", d],
    ] {
        let mut args = vec!["bench"];
        args.extend(extra);
        args.extend(base);
        validate("dbio.bench", "dbio.bench/1", &run(&args, dir.path(), false));
    }
}

#[test]
fn bench_percentile_keys_are_jq_paths() {
    let dir = tempfile::tempdir().unwrap();
    let docs = run(
        &[
            "bench",
            "--engine",
            "null",
            "--events",
            "100",
            "--format",
            "json",
            "--file-num",
            "1",
            "--file-total-size",
            "1M",
        ],
        dir.path(),
        false,
    );
    let lat = &docs[0]["summary"]["read"]["lat_ns"];
    for k in ["p50", "p99", "p99_9", "p99_99"] {
        assert!(lat[k].is_u64(), "summary.read.lat_ns.{k} missing: {lat}");
    }
    assert!(lat.get("p99.9").is_none());
}

#[test]
fn iostat_json_lines_validate() {
    let dir = tempfile::tempdir().unwrap();
    let replay = testdata("diskstats/three-14.txt");
    let docs = run(
        &[
            "iostat",
            "--replay",
            &replay,
            "--format",
            "jsonl",
            "--explain",
            "--all",
            "--partitions",
            "--group",
            "g=sda,sdb",
        ],
        dir.path(),
        true,
    );
    assert!(docs.len() >= 2, "one document per report: {docs:?}");
    validate("dbio.iostat", "dbio.iostat/1", &docs);
    // A counter reset: the report names the device it skipped.
    let replay = testdata("diskstats/reset.txt");
    let docs = run(
        &["iostat", "--replay", &replay, "--format", "jsonl", "--all"],
        dir.path(),
        true,
    );
    assert!(docs.iter().any(|d| d.get("skipped").is_some()), "{docs:?}");
    validate("dbio.iostat", "dbio.iostat/1", &docs);
    // Live: two reports of this system.
    let docs = run(
        &[
            "iostat", "-i", "100ms", "-c", "2", "--all", "--format", "jsonl",
        ],
        dir.path(),
        true,
    );
    assert_eq!(docs.len(), 2);
    validate("dbio.iostat", "dbio.iostat/1", &docs);
}

#[test]
fn stack_json_validates() {
    let dir = tempfile::tempdir().unwrap();
    for p in ["/", "/proc", dir.path().to_str().unwrap()] {
        validate(
            "dbio.stack",
            "dbio.stack/1",
            &run(&["stack", p, "--format", "json"], dir.path(), false),
        );
    }
}

#[test]
fn check_json_validates() {
    let dir = tempfile::tempdir().unwrap();
    // Its exit code is the audit's status: any is fine here, the document is what is checked.
    let docs = run(
        &[
            "check",
            "/",
            dir.path().to_str().unwrap(),
            "--format",
            "json",
        ],
        dir.path(),
        false,
    );
    validate("dbio.check", "dbio.check/1", &docs);
}

#[test]
fn align_json_validates() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["align", "calc", "--stripe", "256k", "--format", "json"][..],
        &[
            "align", "calc", "--stripe", "64k", "--disks", "8", "--raid", "10", "--format", "json",
        ],
        &[
            "align",
            "calc",
            "--stripe",
            "8k",
            "--heads",
            "255",
            "--sectors-per-track",
            "63",
            "--format",
            "json",
        ],
    ] {
        validate(
            "dbio.align.calc",
            "dbio.align.calc/2",
            &run(args, dir.path(), false),
        );
    }
    let img = dir.path().join("mbr.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let sfdisk = std::process::Command::new("sfdisk")
        .args(["-q", img.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .spawn();
    let mut sfdisk = sfdisk.expect("sfdisk (fdisk package) is needed, as in tests/align.rs");
    use std::io::Write as _;
    sfdisk
        .stdin
        .take()
        .unwrap()
        .write_all(b"label: dos\nstart=63, size=20000, type=83\nstart=22528, size=20480, type=8e\n")
        .unwrap();
    assert!(sfdisk.wait().unwrap().success());
    validate(
        "dbio.align.check",
        "dbio.align.check/2",
        &run(
            &[
                "align", "check", "mbr.img", "--stripe", "64k", "--format", "json",
            ],
            dir.path(),
            false,
        ),
    );
}

#[test]
fn innodb_json_validates() {
    let dir = tempfile::tempdir().unwrap();
    // ibdata1 holds the dictionary, so the pages report names tables and indexes.
    let sources: Vec<String> = [
        "ibdata1_16k_head",
        "shop_orders.ibd",
        "shop_blobs.ibd",
        "small_pages8.ibd",
    ]
    .iter()
    .map(|f| testdata(&format!("innodb/{f}")))
    .collect();
    let mut args = vec![
        "innodb",
        "pages",
        "--format",
        "json",
        "--output-dir",
        "pages",
        "--allow-same-device",
    ];
    args.extend(sources.iter().map(String::as_str));
    validate(
        "dbio.innodb.pages",
        "dbio.innodb.pages/1",
        &run(&args, dir.path(), false),
    );
    for (format, file, name, lines) in [
        ("json", "dbio.innodb.grep", "dbio.innodb.grep/1", false),
        (
            "jsonl",
            "dbio.innodb.grep.jsonl",
            "dbio.innodb.grep.jsonl/1",
            true,
        ),
    ] {
        let mut args = vec![
            "innodb",
            "grep",
            "--int",
            "837492636",
            "--context",
            "8",
            "--format",
            format,
        ];
        args.extend(sources.iter().map(String::as_str));
        let docs = run(&args, dir.path(), lines);
        validate(file, name, &docs);
        // No hit: the empty hits array validates too.
        let mut args = vec![
            "innodb",
            "grep",
            "--text",
            "no such text",
            "--format",
            format,
        ];
        args.extend(sources.iter().map(String::as_str));
        validate(file, name, &run(&args, dir.path(), lines));
    }
}

#[test]
fn innodb_rows_summary_validates() {
    let dir = tempfile::tempdir().unwrap();
    let def = dir.path().join("typed.sql");
    std::fs::write(
        &def,
        "create table typed (id int primary key, ti tinyint, si smallint, mi mediumint, bi bigint,
         iu int unsigned, d date, dt datetime, dt6 datetime(6), ts timestamp null, tm time,
         dec1 decimal(10,2), ch char(10), vc varchar(64)) default charset=latin1",
    )
    .unwrap();
    // The typed rows, and the orders pages beside them (a candidate whose records are
    // rejected, so the reasons map is filled).
    for extra in [vec![], vec!["--include-deleted"]] {
        let summary = dir.path().join("summary.json");
        let out = Command::cargo_bin("dbio")
            .unwrap()
            .args([
                "innodb",
                "rows",
                "--format",
                "tsv",
                "-o",
                "rows.tsv",
                "--summary",
            ])
            .arg(&summary)
            .arg("--table-def")
            .arg(&def)
            .args(extra)
            .arg(testdata("innodb/shop_typed.ibd"))
            .arg(testdata("innodb/shop_orders.ibd"))
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
        assert!(doc["candidates"].as_array().unwrap().len() == 2, "{doc}");
        validate("dbio.innodb.rows", "dbio.innodb.rows/1", &[doc]);
    }
}

#[test]
#[ignore = "needs root for loop devices (losetup, pvcreate); scripts/test.sh runs it"]
fn align_check_kernel_and_lvm_sections_validate() {
    assert!(common::is_root(), "needs root for losetup");
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("mbr.img");
    let sh = std::process::Command::new("sh")
        .arg("-c")
        .arg("truncate -s 64M mbr.img && printf 'label: dos\\nstart=63, size=20000, type=83\\nstart=22528, size=20480, type=8e\\n' | sfdisk -q mbr.img")
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(sh.success(), "sfdisk (fdisk package) made no table");
    // An LVM2 PV label in partition 2 (pvcreate on a loop device over that partition only).
    {
        let off = (22528 * 512).to_string();
        let len = (20480 * 512).to_string();
        let pv = common::LoopDev::attach(&img, &["-o", &off, "--sizelimit", &len]);
        let st = std::process::Command::new("pvcreate")
            .args(["-q", "-y", "--devices", &pv.dev, &pv.dev])
            .env("LVM_SUPPRESS_FD_WARNINGS", "1")
            .output();
        let st = st.expect("pvcreate (lvm2 package) is needed");
        assert!(
            st.status.success(),
            "pvcreate {} failed: {}",
            pv.dev,
            String::from_utf8_lossy(&st.stderr)
        );
    }
    let docs = run(
        &[
            "align", "check", "mbr.img", "--stripe", "64k", "--format", "json",
        ],
        dir.path(),
        false,
    );
    assert!(docs[0]["partitions"][1]["lvm"].is_object(), "{}", docs[0]);
    validate("dbio.align.check", "dbio.align.check/2", &docs);
    // The whole image as a block device: the kernel's view is added.
    let disk = common::LoopDev::attach(&img, &["-P"]);
    let docs = run(
        &[
            "align", "check", &disk.dev, "--stripe", "64k", "--format", "json",
        ],
        dir.path(),
        false,
    );
    assert!(docs[0]["kernel"].is_object(), "{}", docs[0]);
    validate("dbio.align.check", "dbio.align.check/2", &docs);
}

#[test]
fn sweep_outputs_match_their_schema() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let d = dir.path().join("set");
    let out = dir.path().join("sweep");
    let docs = run(
        &[
            "sweep",
            "--engine",
            "sync",
            "--mode",
            "rndrd,rndwr",
            "--threads",
            "1,2",
            "--time",
            "200ms",
            "--report-interval",
            "100ms",
            "--file-num",
            "1",
            "--file-total-size",
            "4M",
            "--dir",
            d.to_str().unwrap(),
            "--output-dir",
            out.to_str().unwrap(),
            "--format",
            "json",
        ],
        dir.path(),
        false,
    );
    validate("dbio.sweep", "dbio.sweep/1", &docs);
    let saved: Value =
        serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
    validate("dbio.sweep", "dbio.sweep/1", &[saved]);
    let point: Value = serde_json::from_slice(
        &std::fs::read(out.join(docs[0]["points"][3]["file"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    validate("dbio.bench", "dbio.bench/1", &[point]);
}

#[test]
fn model_json_validates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let demands = ["--demand", "cpu=2.1ms,disk=4.5ms", "--format", "json"];
    for (cmd, extra) in [
        ("bounds", &["--think", "100ms"][..]),
        ("mva", &["--delay", "wan=20ms", "--max-n", "50"]),
    ] {
        let mut args = vec!["model", cmd];
        args.extend(demands);
        args.extend(extra);
        validate(
            &format!("dbio.model.{cmd}"),
            &format!("dbio.model.{cmd}/1"),
            &run(&args, dir.path(), false),
        );
    }
    // Demands from a real bench run on the disk under the target directory.
    let run_json = dir.path().join("run.json");
    let bench = [
        "bench",
        "--mode",
        "rndrd",
        "--time",
        "500ms",
        "--file-num",
        "1",
        "--file-total-size",
        "8M",
        "--format",
        "json",
        "--dir",
        d,
        "-o",
        run_json.to_str().unwrap(),
    ];
    assert!(Command::cargo_bin("dbio")
        .unwrap()
        .args(bench)
        .output()
        .unwrap()
        .status
        .success());
    for cmd in ["bounds", "mva"] {
        validate(
            &format!("dbio.model.{cmd}"),
            &format!("dbio.model.{cmd}/1"),
            &run(
                &[
                    "model",
                    cmd,
                    "--from-bench",
                    run_json.to_str().unwrap(),
                    "--format",
                    "json",
                ],
                dir.path(),
                false,
            ),
        );
    }
    for (data, extra) in [
        ("model/specsdm91.csv", &["--predict", "100,500"][..]),
        ("model/raytracer.csv", &[]),
    ] {
        let mut args = vec!["model", "usl", "--format", "json"];
        let path = testdata(data);
        args.push(&path);
        args.extend(extra);
        validate(
            "dbio.model.usl",
            "dbio.model.usl/1",
            &run(&args, dir.path(), false),
        );
    }
    // A busy CPU, so the interval is never all idle on a quiet machine.
    let live = crate::common::with_cpu_load(|| {
        run(
            &[
                "model",
                "live",
                "--tps",
                "250",
                "--interval",
                "300ms",
                "--datadir",
                d,
                "--format",
                "json",
            ],
            dir.path(),
            false,
        )
    });
    validate("dbio.model.live", "dbio.model.live/1", &live);
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL and sysbench (scripts/test.sh starts and installs them)"]
fn sweep_sysbench_oltp_matches_its_schema() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = dir.path().join("sweep");
    let dsn = std::env::var("DBIO_TEST_MYSQL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into());
    let docs = run(
        &[
            "sweep",
            "--workload",
            "sysbench-oltp",
            "--mysql",
            &dsn,
            "--threads",
            "1",
            "--time",
            "1s",
            "--oltp-tables",
            "1",
            "--oltp-table-size",
            "300",
            "--output-dir",
            out.to_str().unwrap(),
            "--format",
            "json",
        ],
        dir.path(),
        false,
    );
    validate("dbio.sweep", "dbio.sweep/1", &docs);
}

#[test]
fn report_json_validates() {
    // Real bench results (null engine: no I/O, real workers, intervals and histograms), two
    // thread counts and two repeats, so points merge, a threads curve and an A/B exist.
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, extra) in [
        ("t1.json", &["--threads", "1"][..]),
        ("t2.json", &["--threads", "2"]),
        ("t2b.json", &["--threads", "2"]),
        ("t2-qd4.json", &["--threads", "2", "--iodepth", "4"]),
        (
            "t2-zipf.json",
            &["--threads", "2", "--distribution", "zipf:1.1"],
        ),
    ] {
        let mut args = vec![
            "bench",
            "--engine",
            "null",
            "--mode",
            "rndrd",
            "--file-num",
            "1",
            "--file-total-size",
            "1M",
            "--time",
            "600ms",
            "--report-interval",
            "50ms",
            "--format",
            "json",
            "-o",
            name,
        ];
        args.extend(extra);
        Command::cargo_bin("dbio")
            .unwrap()
            .args(&args)
            .current_dir(dir.path())
            .assert()
            .success();
        files.push(name);
    }
    let mut args = vec!["report", "--format", "json"];
    args.extend(&files);
    let docs = run(&args, dir.path(), false);
    let d = &docs[0];
    assert_eq!(d["runs"].as_array().unwrap().len(), 5);
    assert_eq!(
        d["points"].as_array().unwrap().len(),
        4,
        "t2 and t2b are one point"
    );
    assert!(!d["curves"].as_array().unwrap().is_empty());
    assert_eq!(d["comparisons"][0]["parameter"], "distribution");
    validate("dbio.report", "dbio.report/1", &docs);
}

/// `dbio mysql chunk --format json`: a dry run, and a run whose guard pauses it (the mark 0 is
/// always reached) until --run-time ends it, so the pauses array holds a pause.
#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn mysql_chunk_json_validates() {
    use mysql::prelude::Queryable;
    let base = std::env::var("DBIO_TEST_MYSQL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into());
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&base).unwrap())
        .unwrap_or_else(|e| panic!("needs MariaDB at {base}: {e}"));
    c.query_drop("DROP DATABASE IF EXISTS chunk_json").unwrap();
    c.query_drop("CREATE DATABASE chunk_json").unwrap();
    c.query_drop("CREATE TABLE chunk_json.t (id INT NOT NULL PRIMARY KEY, n INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO chunk_json.t SELECT seq, seq % 3 FROM seq_1_to_2000")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let archive = dir.path().join("a.tsv");
    let common = [
        "mysql",
        "chunk",
        "--dsn",
        &base,
        "--table",
        "chunk_json.t",
        "--where",
        "n = 1",
        "--format",
        "json",
        "--state",
        state.to_str().unwrap(),
    ];
    let mut docs = Vec::new();
    for extra in [
        &["--delete"][..],
        &[
            "--archive",
            archive.to_str().unwrap(),
            "--delete",
            "--execute",
            "--max-load",
            "Threads_running=0",
            "--run-time",
            "1500ms",
            "--check-interval",
            "200ms",
        ],
        &[
            "--archive",
            archive.to_str().unwrap(),
            "--delete",
            "--execute",
            "--resume",
            "--max-load",
            "1000",
            "--sleep-coef",
            "0",
        ],
    ] {
        let mut args = common.to_vec();
        args.extend(extra);
        docs.extend(run(&args, dir.path(), false));
    }
    validate("dbio.mysql.chunk", "dbio.mysql.chunk/1", &docs);
    assert!(docs[0]["run"].is_null());
    assert_eq!(docs[1]["run"]["outcome"], "run_time");
    assert_eq!(docs[1]["run"]["pauses"][0]["cause"], "load");
    assert_eq!(docs[2]["run"]["outcome"], "finished");
    assert_eq!(docs[2]["run"]["rows_archived"], 667);
}

/// `dbio mysql advise --format json` on the local server, storage included.
#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn mysql_advise_json_validates() {
    let base = std::env::var("DBIO_TEST_MYSQL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into());
    let dir = tempfile::tempdir().unwrap();
    let docs = run(
        &[
            "mysql",
            "advise",
            "--dsn",
            &base,
            "--interval",
            "2s",
            "--format",
            "json",
        ],
        dir.path(),
        false,
    );
    validate("dbio.mysql_advise", "dbio.mysql_advise/1", &docs);
    assert!(docs[0]["findings"].as_array().unwrap().len() >= 11);
}
