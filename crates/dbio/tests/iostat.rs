//! `dbio iostat`: figures from fixture sample pairs (14, 18 and 20 fields) against values
//! computed by hand here, 32-bit wrap and counter reset, a real pt-stalk capture, sysstat
//! iostat on the same two samples, selection flags, every output format, live sampling and
//! record/replay; and the real-data checks: every column of pt-diskstats' published expected
//! output for percona-toolkit's own sample, sysstat iostat on every pair of that sample, a
//! real pt-stalk capture against pt-diskstats, partition lines of pre-2.6.25 kernels.

use crate::common::{promtool_check, require_tool};

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/diskstats")
        .join(name)
}

struct Out {
    stdout: String,
    stderr: String,
    code: i32,
}

fn dbio(args: &[&str]) -> Out {
    let o = Command::cargo_bin("dbio")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    Out {
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
        code: o.status.code().unwrap_or(-1),
    }
}

/// Replays a fixture as JSON lines; returns the reports.
fn replay_json(file: &str, extra: &[&str]) -> Vec<Value> {
    let path = testdata(file);
    let mut args = vec![
        "iostat",
        "--replay",
        path.to_str().unwrap(),
        "--format",
        "jsonl",
    ];
    args.extend_from_slice(extra);
    let o = dbio(&args);
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    o.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn device<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device"] == name)
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}

fn names(report: &Value) -> Vec<String> {
    report["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["device"].as_str().unwrap().to_string())
        .collect()
}

fn close(got: &Value, key: &str, want: f64) {
    let g = got[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no {key} in {got}"));
    assert!(
        (g - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{key}: got {g}, want {want} in {}",
        got["device"]
    );
}

/// sysstat's JSON key for each iostat -x figure, and dbio's JSON key for it.
const SYSSTAT_KEYS: [(&str, &str); 22] = [
    ("r/s", "r_per_s"),
    ("w/s", "w_per_s"),
    ("d/s", "d_per_s"),
    ("f/s", "f_per_s"),
    ("rkB/s", "rkb_per_s"),
    ("wkB/s", "wkb_per_s"),
    ("dkB/s", "dkb_per_s"),
    ("rrqm/s", "rrqm_per_s"),
    ("wrqm/s", "wrqm_per_s"),
    ("drqm/s", "drqm_per_s"),
    ("rrqm", "rrqm_pct"),
    ("wrqm", "wrqm_pct"),
    ("drqm", "drqm_pct"),
    ("r_await", "r_await_ms"),
    ("w_await", "w_await_ms"),
    ("d_await", "d_await_ms"),
    ("f_await", "f_await_ms"),
    ("rareq-sz", "rareq_sz_kb"),
    ("wareq-sz", "wareq_sz_kb"),
    ("dareq-sz", "dareq_sz_kb"),
    ("aqu-sz", "aqu_sz"),
    ("util", "util_pct"),
];

#[test]
fn fourteen_fields_by_hand() {
    let r = replay_json("pair-14.txt", &[]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["interval_s"], 2.0);
    // Default: whole disks and dm with activity; the partition sda1 and idle sdb are hidden.
    assert_eq!(names(&r[0]), vec!["sda", "dm-0"]);
    let d = device(&r[0], "sda");
    // Deltas over T = 2 s: reads 400, merged 100, sectors 8000, read ms 800; writes 1000,
    // merged 1000, sectors 32000, write ms 3000; io ms 1600; weighted ms 3800; in flight
    // 2 -> 4 (pt-diskstats' qtime of a device divides by the requests plus that change, 2).
    for (k, v) in [
        ("r_per_s", 400.0 / 2.0),
        ("w_per_s", 1000.0 / 2.0),
        ("rkb_per_s", 8000.0 / 2.0 / 2.0),
        ("wkb_per_s", 32000.0 / 2.0 / 2.0),
        ("rrqm_per_s", 100.0 / 2.0),
        ("wrqm_per_s", 1000.0 / 2.0),
        ("rrqm_pct", 100.0 * 100.0 / 500.0),
        ("wrqm_pct", 100.0 * 1000.0 / 2000.0),
        ("r_await_ms", 800.0 / 400.0),
        ("w_await_ms", 3000.0 / 1000.0),
        ("rareq_sz_kb", 8000.0 / 2.0 / 400.0),
        ("wareq_sz_kb", 32000.0 / 2.0 / 1000.0),
        ("aqu_sz", 3800.0 / 2000.0),
        ("util_pct", 100.0 * 1600.0 / 2000.0),
        ("d_per_s", 0.0),
        ("f_per_s", 0.0),
        ("rd_cnc", 800.0 / 2.0 / 1000.0),
        ("wr_cnc", 3000.0 / 2.0 / 1000.0),
        ("rd_rt_ms", 800.0 / 500.0),
        ("wr_rt_ms", 3000.0 / 2000.0),
        ("io_per_s", 1400.0 / 2.0),
        ("stime_ms", 1600.0 / 2500.0),
        ("qtime_ms", 3800.0 / 2502.0 - 1600.0 / 2500.0),
    ] {
        close(d, k, v);
    }
    assert_eq!(d["in_flight"], 4);
    assert_eq!(d["kind"], "device");

    let p = replay_json("pair-14.txt", &["--partitions"]);
    assert_eq!(names(&p[0]), vec!["sda", "sda1", "dm-0"]);
    assert_eq!(device(&p[0], "sda1")["kind"], "partition");
    let a = replay_json("pair-14.txt", &["--all", "--partitions"]);
    assert_eq!(names(&a[0]), vec!["sda", "sda1", "sdb", "dm-0"]);
    // A named device is shown even when idle.
    let n = replay_json("pair-14.txt", &["sdb", "/dev/sda1"]);
    assert_eq!(names(&n[0]), vec!["sda1", "sdb"]);
    close(device(&n[0], "sdb"), "r_per_s", 0.0);
}

#[test]
fn eighteen_fields_discards_by_hand() {
    let r = replay_json("pair-18.txt", &[]);
    assert_eq!(names(&r[0]), vec!["nvme0n1"]);
    let d = device(&r[0], "nvme0n1");
    for (k, v) in [
        ("r_per_s", 10000.0),
        ("rkb_per_s", 80000.0),
        ("rareq_sz_kb", 8.0),
        ("r_await_ms", 0.2),
        ("w_per_s", 10000.0),
        ("wkb_per_s", 160000.0),
        ("wareq_sz_kb", 16.0),
        ("w_await_ms", 0.5),
        ("d_per_s", 200.0),
        ("dkb_per_s", 20480.0),
        ("drqm_per_s", 10.0),
        ("drqm_pct", 100.0 * 10.0 / 210.0),
        ("d_await_ms", 0.5),
        ("dareq_sz_kb", 102.4),
        ("f_per_s", 0.0),
        ("f_await_ms", 0.0),
        ("aqu_sz", 7.0),
        ("util_pct", 100.0),
    ] {
        close(d, k, v);
    }
}

#[test]
fn twenty_fields_flushes_by_hand() {
    let r = replay_json("pair-20.txt", &[]);
    assert_eq!(r[0]["interval_s"], 0.5);
    let d = device(&r[0], "vda");
    for (k, v) in [
        ("r_per_s", 100.0),
        ("rkb_per_s", 400.0),
        ("rrqm_per_s", 10.0),
        ("rrqm_pct", 100.0 * 5.0 / 55.0),
        ("r_await_ms", 2.0),
        ("rareq_sz_kb", 4.0),
        ("w_per_s", 200.0),
        ("wkb_per_s", 1600.0),
        ("wrqm_per_s", 200.0),
        ("wrqm_pct", 50.0),
        ("w_await_ms", 3.0),
        ("wareq_sz_kb", 8.0),
        ("d_per_s", 8.0),
        ("dkb_per_s", 64.0),
        ("d_await_ms", 2.0),
        ("dareq_sz_kb", 8.0),
        ("f_per_s", 40.0),
        ("f_await_ms", 3.0),
        ("aqu_sz", 0.9),
        ("util_pct", 50.0),
    ] {
        close(d, k, v);
    }
}

#[test]
fn millisecond_counters_wrap_at_2_32() {
    let r = replay_json("wrap.txt", &[]);
    let d = device(&r[0], "sdb");
    // 4294967000 -> 704 is 296 + 704 = 1000 ms over 1000 reads.
    close(d, "r_await_ms", 1.0);
    close(d, "w_await_ms", 1.704);
    close(d, "util_pct", 100.0);
    close(d, "aqu_sz", 3.296);
}

#[test]
fn counter_reset_skips_the_device_for_one_interval() {
    let r = replay_json("reset.txt", &[]);
    assert_eq!(r.len(), 2);
    assert_eq!(names(&r[0]), vec!["sdd"]);
    let why = r[0]["skipped"][0].as_str().unwrap();
    assert!(why.contains("sdc") && why.contains("re-attached"), "{why}");
    // The next interval counts from the new baseline.
    assert_eq!(names(&r[1]), vec!["sdc", "sdd"]);
    close(device(&r[1], "sdc"), "r_per_s", 100.0);
    close(device(&r[1], "sdc"), "r_await_ms", 1.0);
    let t = dbio(&[
        "iostat",
        "--replay",
        testdata("reset.txt").to_str().unwrap(),
    ]);
    assert!(
        t.stdout.contains("skipped: counters of sdc went backwards"),
        "{}",
        t.stdout
    );
    assert!(!t.stdout.contains("e+"), "nonsense figures: {}", t.stdout);
}

#[test]
fn group_sums_devices() {
    let r = replay_json("reset.txt", &["--group", "data=sdc,sdd", "sdd"]);
    // First interval: sdc was reset, so the group is left out and says why.
    assert_eq!(names(&r[0]), vec!["sdd"]);
    assert!(r[0]["skipped"].to_string().contains("group data"));
    let g = device(&r[1], "data");
    assert_eq!(g["kind"], "group");
    assert_eq!(g["members"], serde_json::json!(["sdc", "sdd"]));
    // sdc: 100 reads, 100 ms, io 50 ms; sdd: 100 reads, 100 ms, io 100 ms; two devices.
    close(g, "r_per_s", 200.0);
    close(g, "r_await_ms", 1.0);
    close(g, "util_pct", 100.0 * 150.0 / 1000.0 / 2.0);
    close(g, "rd_cnc", 200.0 / 1000.0 / 2.0);
    let bad = dbio(&[
        "iostat",
        "--replay",
        testdata("reset.txt").to_str().unwrap(),
        "--group",
        "x=sdc,nope",
    ]);
    // An unknown member is an unknown device (exit 1); a malformed --group a usage error.
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("\"nope\"") && bad.stderr.contains("sdc, sdd"),
        "{}",
        bad.stderr
    );
    let bad = dbio(&[
        "iostat",
        "--replay",
        testdata("reset.txt").to_str().unwrap(),
        "--group",
        "nogroup",
    ]);
    assert_eq!(bad.code, 2);
}

#[test]
fn replays_a_real_pt_stalk_capture() {
    let file = testdata("pt-stalk-2026_11_22_08_22_49-diskstats");
    let text = std::fs::read_to_string(&file).unwrap();
    let samples = text.lines().filter(|l| l.starts_with("TS ")).count();
    let r = replay_json("pt-stalk-2026_11_22_08_22_49-diskstats", &["--all", "vda"]);
    assert_eq!(r.len(), samples - 1);
    // vda between the first two samples, computed here from the raw lines.
    let vda: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("vda"))
        .map(|l| {
            l.split_whitespace()
                .skip(3)
                .map(|t| t.parse().unwrap())
                .collect()
        })
        .collect();
    let ts: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("TS "))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    let t = ts[1] - ts[0];
    let d = device(&r[0], "vda");
    close(d, "r_per_s", (vda[1][0] - vda[0][0]) / t);
    close(d, "wkb_per_s", (vda[1][6] - vda[0][6]) / 2.0 / t);
    close(
        d,
        "util_pct",
        100.0 * (vda[1][9] - vda[0][9]) / (1000.0 * t),
    );
    close(d, "f_per_s", (vda[1][15] - vda[0][15]) / t);
}

#[test]
fn malformed_lines_are_reported_with_their_number_and_skipped() {
    let o = dbio(&[
        "iostat",
        "--replay",
        testdata("malformed.txt").to_str().unwrap(),
        "--format",
        "jsonl",
    ]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    for n in [1, 6, 7, 8, 11] {
        assert!(
            o.stderr.contains(&format!("malformed.txt line {n}:")),
            "line {n} not reported: {}",
            o.stderr
        );
    }
    // The usable samples (6000, 6001, 6002) still give two reports.
    let reports: Vec<Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    close(device(&reports[1], "sda"), "r_per_s", 100.0);
    let missing = dbio(&["iostat", "--replay", "/nonexistent/file"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.contains("/nonexistent/file"),
        "{}",
        missing.stderr
    );
    let unknown = dbio(&[
        "iostat",
        "--replay",
        testdata("pair-20.txt").to_str().unwrap(),
        "sdq",
    ]);
    assert_eq!(unknown.code, 1);
    assert!(unknown.stderr.contains("vda"), "{}", unknown.stderr);
}

#[test]
#[ignore = "needs sysstat iostat (scripts/setup-test-env.sh installs it); scripts/test.sh runs it"]
fn same_numbers_as_sysstat_iostat_on_the_same_two_samples() {
    // sysfs stat lines (the /proc/diskstats fields without major, minor, name): 11, 15 and 17
    // fields, with merges, discards, flushes, and a 32-bit wrap of the read ms counter.
    let cases = [
        (
            "1000 10 8000 500 2000 20 16000 900 0 700 1400",
            "124456 1010 1008000 60500 4000 520 36000 2900 3 1700 9400",
        ),
        (
            "5000 7 40000 1000 8000 3 128000 4000 0 5000 5000 100 10 20480 50",
            "105000 1007 840000 3100 9000 1203 328000 9000 8 5900 12000 333 20 61440 151",
        ),
        (
            "777 1 8000 4294967000 2000 20 16000 900 0 700 1400 5 0 80 3 10 4",
            "100777 2001 1008000 99704 4000 520 36011 2911 1 1600 9400 105 3 8080 303 17 25",
        ),
    ];
    let map = SYSSTAT_KEYS;
    // The three iostat runs take 1 s each: run them side by side.
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .iter()
            .map(|&(before, after)| {
                s.spawn(move || {
                    let dev = [("vdz".to_string(), before.to_string(), after.to_string())];
                    let (mut d, t) = sysstat_on_pair(&dev);
                    let res = (d.remove("vdz").unwrap(), t);
                    (before, after, res)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (before, after, (theirs, t)) in results {
        // The same pair for dbio, as a saved-samples file at the same interval.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pair");
        std::fs::write(
            &f,
            format!(
                "TS 100 x\n 252 0 vdz {before}\nTS {} x\n 252 0 vdz {after}\n",
                100.0 + t
            ),
        )
        .unwrap();
        let o = dbio(&[
            "iostat",
            "--replay",
            f.to_str().unwrap(),
            "--format",
            "jsonl",
            "--all",
        ]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let ours: Value = serde_json::from_str(o.stdout.lines().next().unwrap()).unwrap();
        let ours = device(&ours, "vdz");
        for (their_key, our_key) in map {
            let want = format!("{:.2}", theirs[their_key].as_f64().unwrap());
            let got = format!("{:.2}", ours[our_key].as_f64().unwrap());
            assert_eq!(
                got, want,
                "{their_key} differs for {before} -> {after} (T={t})"
            );
        }
    }
}

fn replay_format(file: &str, format: &str, extra: &[&str]) -> String {
    let path = testdata(file);
    let mut args = vec![
        "iostat",
        "--replay",
        path.to_str().unwrap(),
        "--format",
        format,
    ];
    args.extend_from_slice(extra);
    let o = dbio(&args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    o.stdout
}

#[test]
fn snapshot_text() {
    insta::assert_snapshot!(replay_format("pair-14.txt", "text", &["--partitions"]));
}

#[test]
fn snapshot_text_explain() {
    insta::assert_snapshot!(replay_format("pair-18.txt", "text", &["--explain"]));
}

#[test]
fn columns_choose_the_table_columns() {
    let path = testdata("pair-14.txt");
    let path = path.to_str().unwrap();
    let o = dbio(&[
        "iostat",
        "--replay",
        path,
        "--columns",
        "r/s,w_await,%util,in_prg",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    let header: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(header, ["Device", "r/s", "w_await", "%util", "in_prg"]);
    // The same figures as JSON, in the chosen order, as the full table prints them.
    let r = replay_json("pair-14.txt", &[]);
    for (row, dev) in lines[2..4].iter().zip(["sda", "dm-0"]) {
        let d = device(&r[0], dev);
        let want = format!(
            "{dev} {:.2} {:.2} {:.2} {}",
            d["r_per_s"].as_f64().unwrap(),
            d["w_await_ms"].as_f64().unwrap(),
            d["util_pct"].as_f64().unwrap(),
            d["in_flight"]
        );
        assert_eq!(row.split_whitespace().collect::<Vec<_>>().join(" "), want);
    }
    assert!(lines[1].len() < 60, "{}", lines[1]);
    // Every column named once is the full table.
    let full = dbio(&["iostat", "--replay", path]);
    let all_names: Vec<&str> = full
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .skip(1)
        .collect();
    let every = dbio(&[
        "iostat",
        "--replay",
        path,
        "--columns",
        &all_names.join(","),
    ]);
    assert_eq!(every.stdout, full.stdout);
}

#[test]
fn columns_unknown_name_is_refused_listing_the_valid_ones() {
    let path = testdata("pair-14.txt");
    let path = path.to_str().unwrap();
    for (cols, bad) in [
        ("r/s,util", "\"util\""),
        ("r/s,,w/s", "\"\""),
        ("r/s,r/s", "r/s"),
    ] {
        let o = dbio(&["iostat", "--replay", path, "--columns", cols]);
        assert_eq!(o.code, 2, "{cols}: {}", o.stderr);
        assert!(o.stdout.is_empty(), "{}", o.stdout);
        assert!(o.stderr.contains(bad), "{cols}: {}", o.stderr);
    }
    let o = dbio(&["iostat", "--replay", path, "--columns", "r/s,util"]);
    for valid in [
        "r/s", "rkB/s", "%rrqm", "w_await", "wareq-sz", "aqu-sz", "%util", "qtime",
    ] {
        assert!(o.stderr.contains(valid), "{valid} not listed: {}", o.stderr);
    }
    // The CSV and JSON columns are named by their keys: --columns is for the table.
    let o = dbio(&[
        "iostat",
        "--replay",
        path,
        "--columns",
        "r/s",
        "--format",
        "csv",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("--format text"), "{}", o.stderr);
}

#[test]
fn snapshot_json() {
    insta::assert_snapshot!(replay_format("pair-20.txt", "jsonl", &[]));
}

#[test]
fn snapshot_csv() {
    insta::assert_snapshot!(replay_format(
        "reset.txt",
        "csv",
        &["--group", "data=sdc,sdd"]
    ));
}

#[test]
fn snapshot_prometheus() {
    insta::assert_snapshot!(replay_format("pair-20.txt", "prometheus", &[]));
}

/// Several reports on stdout: one exposition, each family declared once, lines timestamped;
/// a group in its own families.
#[test]
fn snapshot_prometheus_stream() {
    insta::assert_snapshot!(replay_format(
        "reset.txt",
        "prometheus",
        &["--group", "data=sdc,sdd"]
    ));
}

/// The exposition format: every sample line belongs to a family declared by # HELP and # TYPE
/// before it (once per family, however many samples follow), counters end in _total, names and
/// labels are well formed, values are numbers, an optional timestamp is an integer. Every
/// `device` label holds one of `devices` (a device name, nothing else). Returns the sample lines
/// as (name, labels, value, timestamp).
fn check_exposition_of(text: &str, devices: &[&str]) -> Vec<(String, String, f64, Option<i64>)> {
    use std::collections::HashMap;
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helps = 0;
    let mut samples = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap();
            assert!(rest.len() > name.len() + 1, "empty help: {line}");
            helps += 1;
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut it = rest.split(' ');
            let (name, typ) = (it.next().unwrap(), it.next().unwrap());
            assert!(["counter", "gauge"].contains(&typ), "{line}");
            if typ == "counter" {
                assert!(name.ends_with("_total"), "counter without _total: {line}");
            }
            assert!(
                types.insert(name.to_string(), typ.to_string()).is_none(),
                "family twice: {name}"
            );
            continue;
        }
        let (series, rest) = line.split_once("} ").unwrap();
        let (value, ts) = match rest.split_once(' ') {
            Some((v, t)) => (
                v,
                Some(
                    t.parse::<i64>()
                        .unwrap_or_else(|_| panic!("bad timestamp: {line}")),
                ),
            ),
            None => (rest, None),
        };
        let value = value
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("bad value: {line}"));
        let (name, labels) = series.split_once('{').unwrap();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(char::is_numeric),
            "bad name: {line}"
        );
        assert!(types.contains_key(name), "sample before its # TYPE: {line}");
        for pair in labels.split("\",").map(|p| p.trim_end_matches('"')) {
            let (k, v) = pair.split_once("=\"").unwrap_or_else(|| panic!("{line}"));
            assert!(["device", "group"].contains(&k), "label {k}: {line}");
            if k == "device" {
                assert!(
                    devices.contains(&v),
                    "device label {v:?} is not a device name: {line}"
                );
            }
        }
        samples.push((name.to_string(), labels.to_string(), value, ts));
    }
    assert_eq!(helps, types.len());
    assert!(types.contains_key("node_disk_reads_completed_total"));
    assert!(types.contains_key("node_disk_io_time_weighted_seconds_total"));
    samples
}

/// [`check_exposition_of`] for a live sample (the device names of /proc/diskstats).
fn check_exposition(text: &str) {
    let stats = std::fs::read_to_string("/proc/diskstats").unwrap();
    let names: Vec<&str> = stats
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    check_exposition_of(text, &names);
}

#[test]
#[ignore = "needs promtool (scripts/setup-test-env.sh installs it); scripts/test.sh runs it"]
fn prometheus_exposition_is_valid() {
    let text = replay_format("pair-20.txt", "prometheus", &[]);
    check_exposition_of(&text, &["vda"]);
    // node_exporter units: bytes and seconds.
    assert!(
        text.contains("node_disk_read_bytes_total{device=\"vda\"} 614400\n"),
        "{text}"
    );
    assert!(
        text.contains("node_disk_read_time_seconds_total{device=\"vda\"} 0.2\n"),
        "{text}"
    );
    assert!(
        text.contains("dbio_disk_utilization_ratio{device=\"vda\"} 0.5\n"),
        "{text}"
    );
    promtool_check(&text);
}

#[test]
#[ignore = "needs promtool (scripts/setup-test-env.sh installs it); scripts/test.sh runs it"]
fn prometheus_stream_of_samples_passes_promtool() {
    // A real pt-stalk capture of 4 samples: 3 reports on stdout make one exposition, each
    // family declared once, each sample line stamped with the end of its interval (ms).
    let file = "pt-stalk-2026_11_22_08_22_49-diskstats";
    let raw = std::fs::read_to_string(testdata(file)).unwrap();
    let ts: Vec<i64> = raw
        .lines()
        .filter(|l| l.starts_with("TS "))
        .map(|l| {
            let s: f64 = l.split_whitespace().nth(1).unwrap().parse().unwrap();
            (s * 1000.0).round() as i64
        })
        .collect();
    let text = replay_format(file, "prometheus", &["--all"]);
    promtool_check(&text);
    let names: Vec<&str> = raw
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    let samples = check_exposition_of(&text, &names);
    let vda: Vec<(f64, Option<i64>)> = samples
        .iter()
        .filter(|(n, l, _, _)| n == "node_disk_reads_completed_total" && l == "device=\"vda\"")
        .map(|(_, _, v, t)| (*v, *t))
        .collect();
    let reads: Vec<f64> = raw
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("vda"))
        .map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap())
        .collect();
    let want: Vec<(f64, Option<i64>)> = reads[1..]
        .iter()
        .zip(&ts[1..])
        .map(|(r, t)| (*r, Some(*t)))
        .collect();
    assert_eq!(vda, want, "{text}");
    // --count 1 prints one exposition without timestamps, as --output writes it (the node
    // exporter's textfile collector refuses timestamps).
    let one = replay_format(file, "prometheus", &["--all", "--count", "1"]);
    assert!(check_exposition_of(&one, &names)
        .iter()
        .all(|s| s.3.is_none()));
    promtool_check(&one);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("disk.prom");
    replay_format(
        file,
        "prometheus",
        &["--all", "--count", "1", "--output", out.to_str().unwrap()],
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), one);
}

/// Three samples a second apart: sda reads in both intervals, sdb in the first only.
const SDB_IDLE_IN_SECOND_INTERVAL: &str = "TS 1000 x
   8       0 sda 100 0 800 100 0 0 0 0 0 100 100
   8      16 sdb 100 0 800 100 0 0 0 0 0 100 100
TS 1001 x
   8       0 sda 200 0 1600 200 0 0 0 0 0 200 200
   8      16 sdb 150 0 1200 150 0 0 0 0 0 150 150
TS 1002 x
   8       0 sda 300 0 2400 300 0 0 0 0 0 300 300
   8      16 sdb 150 0 1200 150 0 0 0 0 0 150 150
";

#[test]
#[ignore = "needs promtool (scripts/setup-test-env.sh installs it); scripts/test.sh runs it"]
fn prometheus_keeps_a_device_that_went_idle() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("samples");
    std::fs::write(&f, SDB_IDLE_IN_SECOND_INTERVAL).unwrap();
    let path = f.to_str().unwrap();
    // The text table still hides idle devices (as iostat -z).
    let t = dbio(&["iostat", "--replay", path]);
    assert_eq!(t.code, 0, "{}", t.stderr);
    assert_eq!(t.stdout.matches("\nsdb ").count(), 1, "{}", t.stdout);
    // The stream on stdout: sdb's counters and gauges in both samples.
    let o = dbio(&["iostat", "--replay", path, "--format", "prometheus"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    for line in [
        "node_disk_reads_completed_total{device=\"sdb\"} 150 1001000\n",
        "node_disk_reads_completed_total{device=\"sdb\"} 150 1002000\n",
        "dbio_disk_reads_per_second{device=\"sdb\"} 50 1001000\n",
        "dbio_disk_reads_per_second{device=\"sdb\"} 0 1002000\n",
    ] {
        assert!(o.stdout.contains(line), "no {line} in:\n{}", o.stdout);
    }
    promtool_check(&o.stdout);
    // The textfile written at every sample: the last one still has sdb.
    let prom = dir.path().join("disk.prom");
    let o = dbio(&[
        "iostat",
        "--replay",
        path,
        "--format",
        "prometheus",
        "--output",
        prom.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = std::fs::read_to_string(&prom).unwrap();
    check_exposition_of(&text, &["sda", "sdb"]);
    for line in [
        "node_disk_reads_completed_total{device=\"sdb\"} 150\n",
        "node_disk_read_bytes_total{device=\"sdb\"} 614400\n",
        "dbio_disk_reads_per_second{device=\"sdb\"} 0\n",
        "node_disk_reads_completed_total{device=\"sda\"} 300\n",
    ] {
        assert!(text.contains(line), "no {line} in:\n{text}");
    }
}

#[test]
#[ignore = "needs promtool (scripts/setup-test-env.sh installs it); scripts/test.sh runs it"]
fn prometheus_device_label_holds_a_device_name_only() {
    // A group is not a device: its figures go in dbio_disk_group_* families with a `group`
    // label, and its members in dbio_disk_group_member_info{group, device}.
    let text = replay_format(
        "reset.txt",
        "prometheus",
        &["--group", "data=sdc,sdd", "--group", "{7}=sdd"],
    );
    check_exposition_of(&text, &["sdc", "sdd"]);
    promtool_check(&text);
    for line in [
        "dbio_disk_group_reads_per_second{group=\"data\"} 200 5002000\n",
        "dbio_disk_group_reads_per_second{group=\"{7}\"} 100 5001000\n",
        "dbio_disk_group_member_info{group=\"data\",device=\"sdc\"} 1 5002000\n",
        "dbio_disk_group_member_info{group=\"data\",device=\"sdd\"} 1 5002000\n",
        "dbio_disk_reads_per_second{device=\"sdd\"} 100 5001000\n",
    ] {
        assert!(text.contains(line), "no {line} in:\n{text}");
    }
}

#[test]
fn live_sampling_record_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let o = dbio(&[
        "iostat",
        "--all",
        "--interval",
        "200ms",
        "--count",
        "2",
        "--format",
        "jsonl",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let live: Vec<Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(live.len(), 2);
    let first_dev = std::fs::read_to_string("/proc/diskstats")
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string();
    assert!(names(&live[0]).contains(&first_dev));
    let i = live[0]["interval_s"].as_f64().unwrap();
    assert!((0.19..1.0).contains(&i), "interval {i}");
    // The record holds three samples (the baseline and two more) in the pt-stalk format.
    let text = std::fs::read_to_string(&rec).unwrap();
    let ts: Vec<&str> = text.lines().filter(|l| l.starts_with("TS ")).collect();
    assert_eq!(ts.len(), 3, "{text}");
    assert!(ts[0].split(' ').nth(1).unwrap().contains('.'));
    // Replaying it gives the same figures.
    let again = replay_json(rec.to_str().unwrap(), &["--all"]);
    assert_eq!(again.len(), 2);
    for (a, b) in live.iter().zip(&again) {
        let (da, db) = (device(a, &first_dev), device(b, &first_dev));
        for k in ["r_per_s", "wkb_per_s", "util_pct", "aqu_sz"] {
            let (x, y) = (da[k].as_f64().unwrap(), db[k].as_f64().unwrap());
            // The record's timestamps are wall clock, the live interval monotonic: close.
            assert!(
                (x - y).abs() <= 0.02 * x.abs().max(1.0),
                "{k}: live {x}, replay {y}"
            );
        }
    }
}

#[test]
#[ignore = "needs pt-diskstats (percona-toolkit); scripts/test.sh runs it"]
fn pt_diskstats_reads_a_plain_record() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let o = dbio(&[
        "iostat",
        "--all",
        "--interval",
        "100ms",
        "--count",
        "2",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // pt-diskstats reads what we record (it prints nothing on 20-field kernels, so only its
    // exit status is checked).
    let st = std::process::Command::new("pt-diskstats")
        .arg(&rec)
        .stdout(Stdio::null())
        .status()
        .expect("needs pt-diskstats (percona-toolkit; scripts/setup-test-env.sh installs it)");
    assert!(st.success());
}

#[test]
fn live_unknown_device_lists_the_devices() {
    let o = dbio(&[
        "iostat",
        "no-such-disk",
        "--count",
        "1",
        "--interval",
        "100ms",
    ]);
    // The system says no: exit 1, as `dbio stack` for an unknown device (2 is for usage).
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("unknown device \"no-such-disk\""),
        "{}",
        o.stderr
    );
    let first = std::fs::read_to_string("/proc/diskstats").unwrap();
    let name = first.split_whitespace().nth(2).unwrap();
    assert!(o.stderr.contains(name), "{}", o.stderr);
    let z = dbio(&["iostat", "--count", "0"]);
    assert_eq!(z.code, 2);
}

#[test]
fn unknown_device_exits_1_bad_group_and_format_exit_2() {
    let path = testdata("pair-14.txt");
    let path = path.to_str().unwrap();
    let o = dbio(&["iostat", "--replay", path, "sdq"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("unknown device \"sdq\"") && o.stderr.contains("sda, "),
        "{}",
        o.stderr
    );
    assert!(o.stdout.is_empty(), "{}", o.stdout);
    let o = dbio(&["iostat", "--replay", path, "--group", "data=sda,sdq"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let o = dbio(&["iostat", "--replay", path, "--group", "data"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("NAME=dev1,dev2"), "{}", o.stderr);
    // One JSON document per report per line is JSON Lines: --format jsonl (json is refused,
    // naming the formats iostat has).
    let o = dbio(&["iostat", "--replay", path, "--format", "json"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    for f in ["text", "jsonl", "csv", "prometheus"] {
        assert!(o.stderr.contains(f), "{f}: {}", o.stderr);
    }
}

/// `-o FILE`: the reports go to FILE instead of stdout, the same bytes, the file renamed into
/// place at the end (no temporary left beside it).
#[test]
fn output_file_holds_what_stdout_would() {
    let dir = tempfile::tempdir().unwrap();
    let file = "pt-stalk-2026_11_22_08_22_49-diskstats";
    for (format, extra) in [("text", "--explain"), ("jsonl", "--all"), ("csv", "--all")] {
        let want = replay_format(file, format, &[extra]);
        let out = dir.path().join(format!("out.{format}"));
        std::fs::write(&out, "old contents\n").unwrap();
        let path = testdata(file);
        let o = dbio(&[
            "iostat",
            "--replay",
            path.to_str().unwrap(),
            "--format",
            format,
            extra,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stdout.is_empty(), "{}", o.stdout);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), want, "{format}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with("out."))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // A directory that does not exist: nothing is written, exit 1.
    let o = dbio(&[
        "iostat",
        "--replay",
        testdata(file).to_str().unwrap(),
        "-o",
        dir.path().join("no/such/dir/out").to_str().unwrap(),
    ]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stderr.contains("no/such/dir/out"), "{}", o.stderr);
}

#[test]
#[ignore = "needs / on a device node (a machine fact); scripts/test.sh runs it"]
fn live_device_by_node_path() {
    let root = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let src = root
        .lines()
        .find(|l| l.split(' ').nth(4) == Some("/"))
        .and_then(|l| l.split(" - ").nth(1))
        .and_then(|r| r.split(' ').nth(1))
        .unwrap_or("")
        .to_string();
    assert!(
        src.starts_with("/dev/") && Path::new(&src).exists(),
        "needs / on a device node (it is on {src:?})"
    );
    let o = dbio(&[
        "iostat",
        &src,
        "--count",
        "1",
        "--interval",
        "100ms",
        "--format",
        "csv",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", o.stdout);
    assert!(lines[0].starts_with("time,ts,interval_s,device,kind,r_per_s,"));
}

#[test]
fn prometheus_output_file_is_rewritten_per_sample() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("disk.prom");
    let o = dbio(&[
        "iostat",
        "--all",
        "--count",
        "2",
        "--interval",
        "100ms",
        "--format",
        "prometheus",
        "--output",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.is_empty());
    let text = std::fs::read_to_string(&f).unwrap();
    check_exposition(&text);
}

#[test]
#[ignore = "needs pt-diskstats (percona-toolkit); scripts/test.sh runs it"]
fn same_numbers_as_pt_diskstats_on_14_field_samples() {
    // pt-diskstats 3.2.1 prints nothing for 20-field lines, so the comparison uses a 14-field
    // file (three samples, two devices, one interval of 1.5 s, a negative qtime).
    let file = testdata("three-14.txt");
    let out = std::process::Command::new("pt-diskstats")
        .args(["--columns-regex", ".", file.to_str().unwrap()])
        .env("LC_ALL", "C")
        .output()
        .expect("needs pt-diskstats (percona-toolkit; scripts/setup-test-env.sh installs it)");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut header: Vec<String> = Vec::new();
    let mut theirs: Vec<std::collections::HashMap<String, String>> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let toks: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        if toks[0] == "#ts" {
            header = toks;
        } else {
            theirs.push(header.iter().cloned().zip(toks).collect());
        }
    }
    assert_eq!(theirs.len(), 4, "{text}");
    let ours = replay_json("three-14.txt", &["--all"]);
    let cols: [(&str, &str, f64, usize); 17] = [
        ("rd_s", "r_per_s", 1.0, 1),
        ("rd_avkb", "rareq_sz_kb", 1.0, 1),
        ("rd_mb_s", "rkb_per_s", 1.0 / 1024.0, 1),
        ("rd_mrg", "rrqm_pct", 1.0, 0),
        ("rd_cnc", "rd_cnc", 1.0, 1),
        ("rd_rt", "rd_rt_ms", 1.0, 1),
        ("wr_s", "w_per_s", 1.0, 1),
        ("wr_avkb", "wareq_sz_kb", 1.0, 1),
        ("wr_mb_s", "wkb_per_s", 1.0 / 1024.0, 1),
        ("wr_mrg", "wrqm_pct", 1.0, 0),
        ("wr_cnc", "wr_cnc", 1.0, 1),
        ("wr_rt", "wr_rt_ms", 1.0, 1),
        ("busy", "util_pct", 1.0, 0),
        ("in_prg", "in_flight", 1.0, 0),
        ("io_s", "io_per_s", 1.0, 1),
        ("qtime", "qtime_ms", 1.0, 1),
        ("stime", "stime_ms", 1.0, 1),
    ];
    for row in &theirs {
        let sample = if row["#ts"] == "2.0" { 0 } else { 1 };
        let d = device(&ours[sample], &row["device"]);
        for (pt, key, scale, prec) in cols {
            let want = row[pt].trim_end_matches('%');
            let got = format!("{:.*}", prec, d[key].as_f64().unwrap() * scale);
            assert_eq!(got, want, "{pt} of {} at {}", row["device"], row["#ts"]);
        }
    }
}

#[test]
fn replays_pt_diskstats_save_samples() {
    let file = testdata("pt-diskstats-save-samples.txt");
    let text = std::fs::read_to_string(&file).unwrap();
    let samples = text.lines().filter(|l| l.starts_with("TS ")).count();
    let r = replay_json("pt-diskstats-save-samples.txt", &["--all"]);
    assert_eq!(r.len(), samples - 1);
    for rep in &r {
        let i = rep["interval_s"].as_f64().unwrap();
        assert!((0.9..1.2).contains(&i), "interval {i}");
        assert!(names(rep).contains(&"vda".to_string()));
    }
}

#[test]
fn closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let mut child = std::process::Command::new(bin)
        .args(["iostat", "--all", "--interval", "50ms", "--format", "jsonl"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        first.starts_with("{\"schema\":\"dbio.iostat/1\",\"dbio_version\":"),
        "{first}"
    );
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn ctrl_c_ends_live_sampling_with_130() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["iostat", "--interval", "100ms", "--format", "jsonl"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first report is out: the sampling loop runs.
    // (The reader stays open until the end: a closed pipe would end dbio by itself.)
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with('{'), "{line}");
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{:?} {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    drop(out);
}

#[test]
fn ctrl_c_keeps_the_reports_written_to_the_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("live.jsonl");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["iostat", "--all", "-i", "100ms", "--format", "jsonl", "-o"])
        .arg(&f)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // The reports stream into a temporary beside the file until the run ends.
    assert!(!f.exists(), "-o FILE appeared before the run ended");
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    let text = std::fs::read_to_string(&f).unwrap();
    let reports: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(reports.len() >= 2, "{text}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn negative_numbers_are_refused_naming_their_flag() {
    for (flag, value) in [
        ("--count", "-1"),
        ("--interval", "-1"),
        ("--page-size", "-4k"),
    ] {
        let o = dbio(&["iostat", flag, value]);
        assert_eq!(o.code, 2, "{}", o.stderr);
        assert!(
            o.stderr
                .contains(&format!("invalid value '{value}' for '{flag}")),
            "{}",
            o.stderr
        );
    }
}

/// pt-diskstats' columns, the dbio JSON key each one shows (with a scale) and pt-diskstats'
/// printf format: `1` = `%.1f`, `0` = `%.0f%%`, `-1` = `%d`.
const PT_COLUMNS: [(&str, &str, f64, i32); 17] = [
    ("rd_s", "r_per_s", 1.0, 1),
    ("rd_avkb", "rareq_sz_kb", 1.0, 1),
    ("rd_mb_s", "rkb_per_s", 1.0 / 1024.0, 1),
    ("rd_mrg", "rrqm_pct", 1.0, 0),
    ("rd_cnc", "rd_cnc", 1.0, 1),
    ("rd_rt", "rd_rt_ms", 1.0, 1),
    ("wr_s", "w_per_s", 1.0, 1),
    ("wr_avkb", "wareq_sz_kb", 1.0, 1),
    ("wr_mb_s", "wkb_per_s", 1.0 / 1024.0, 1),
    ("wr_mrg", "wrqm_pct", 1.0, 0),
    ("wr_cnc", "wr_cnc", 1.0, 1),
    ("wr_rt", "wr_rt_ms", 1.0, 1),
    ("busy", "util_pct", 1.0, 0),
    ("in_prg", "in_flight", 1.0, -1),
    ("io_s", "io_per_s", 1.0, 1),
    ("qtime", "qtime_ms", 1.0, 1),
    ("stime", "stime_ms", 1.0, 1),
];

/// One figure as pt-diskstats prints it.
fn pt_format(v: f64, prec: i32) -> String {
    match prec {
        -1 => format!("{}", v as u64),
        0 => format!("{v:.0}%"),
        _ => format!("{v:.1}"),
    }
}

/// The rows of a pt-diskstats text output: (`#ts`, device, the 17 figures as printed).
fn pt_rows(text: &str) -> Vec<(String, String, Vec<String>)> {
    text.lines()
        .map(str::split_whitespace)
        .map(Iterator::collect::<Vec<&str>>)
        .filter(|t| t.len() == 19 && t[0] != "#ts")
        .map(|t| {
            (
                t[0].to_string(),
                t[1].to_string(),
                t[2..].iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn same_figures_as_pt_diskstats_published_expected_output() {
    // percona-toolkit's own sample (a real capture from a Xen guest, 30 samples) and the
    // output its test suite expects for it: every column, three views. First `--group-by all`
    // (one row per device per interval), then `S` (group by sample: the active devices summed,
    // shown as {7} or {8}), then `/ xvdb1` (the same, xvdb1 alone).
    let expected =
        std::fs::read_to_string(testdata("percona-toolkit/all_int_bug-1035311.txt")).unwrap();
    let (by_device_and_sample, one_device) = expected
        .split_once("Enter a disk/device pattern: ")
        .unwrap();
    let sample = testdata("percona-toolkit/bug-1035311.txt");
    let first_ts: f64 = std::fs::read_to_string(&sample)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let active7 = "xvda,xvda1,xvda3,xvdb,xvdb1,dm-0,dm-3";
    let o = dbio(&[
        "iostat",
        "--replay",
        sample.to_str().unwrap(),
        "--format",
        "jsonl",
        "--all",
        "--partitions",
        "--group",
        &format!("{{7}}={active7}"),
        "--group",
        &format!("{{8}}={active7},dm-1"),
        "--group",
        "one=xvdb1",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    let reports: Vec<Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 29);
    let at = |ts: &str| -> &Value {
        reports
            .iter()
            .find(|r| format!("{:.1}", r["ts_s"].as_f64().unwrap() - first_ts) == ts)
            .unwrap_or_else(|| panic!("no report at +{ts} s"))
    };
    let mut rows: Vec<(String, String, Vec<String>)> = pt_rows(by_device_and_sample);
    rows.extend(
        pt_rows(one_device)
            .into_iter()
            .map(|(ts, _, v)| (ts, "one".to_string(), v)),
    );
    assert_eq!(
        rows.len(),
        7 + 28 * 8 + 29 + 29,
        "rows in the expected output"
    );
    let (mut compared, mut equal) = (0, 0);
    let mut wrong: Vec<String> = Vec::new();
    let mut worst_qtime = (0.0f64, String::new());
    for (ts, dev, theirs) in &rows {
        let ours = device(at(ts), dev);
        for ((col, key, scale, prec), want) in PT_COLUMNS.iter().zip(theirs) {
            let v = ours[*key].as_f64().unwrap() * scale;
            let got = pt_format(v, *prec);
            compared += 1;
            if &got == want {
                equal += 1;
            } else {
                wrong.push(format!(
                    "{col} of {dev} at +{ts}: dbio {got}, pt-diskstats {want}"
                ));
                if *col == "qtime" {
                    let diff = (v - want.parse::<f64>().unwrap()).abs();
                    if diff > worst_qtime.0 {
                        worst_qtime = (diff, format!("{dev} at +{ts}"));
                    }
                }
            }
        }
    }
    eprintln!(
        "pt-diskstats published expected output: {compared} figures compared, {equal} equal; \
         largest qtime difference {:.1} ms ({})",
        worst_qtime.0, worst_qtime.1
    );
    assert!(
        wrong.is_empty(),
        "{} of {compared} figures differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn old_kernel_partition_lines_of_7_fields_are_skipped() {
    // A /proc/diskstats of a Linux 2.6 kernel before 2.6.25: partitions print only reads,
    // sectors read, writes and sectors written (7 fields). iostat and pt-diskstats skip those
    // lines; so does dbio, saying so once with -v, and exits 0.
    let snap = std::fs::read_to_string(testdata("linux-2.6-nmon-comment.txt")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("old-kernel");
    std::fs::write(&f, format!("TS 1000.0 x\n{snap}TS 1001.0 x\n{snap}")).unwrap();
    let path = f.to_str().unwrap();
    let o = dbio(&["iostat", "--replay", path, "--format", "jsonl", "--all"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    let r: Value = serde_json::from_str(o.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(names(&r), vec!["fd0", "hda", "sda"]);
    let v = dbio(&["iostat", "--replay", path, "--format", "jsonl", "-v"]);
    assert_eq!(v.code, 0, "{}", v.stderr);
    assert_eq!(v.stderr.lines().count(), 1, "{}", v.stderr);
    assert!(
        v.stderr.contains("10 partition lines of 7 fields")
            && v.stderr.contains("before 2.6.25")
            && v.stderr.contains("lines 4, 5, 6, 7, 9, 13, 14, 15, 16, 18"),
        "{}",
        v.stderr
    );
}

#[test]
#[ignore = "needs pt-diskstats (percona-toolkit); scripts/test.sh runs it"]
fn record_fields_14_is_read_by_pt_diskstats() {
    // pt-diskstats reads only lines of 14 fields (3.2.1 also 18): on a kernel printing 20 it
    // shows nothing for a plain --record file. --record-fields 14 writes the classic 14
    // fields.
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec14");
    let o = dbio(&[
        "iostat",
        "--all",
        "--interval",
        "100ms",
        "--count",
        "2",
        "--format",
        "jsonl",
        "--record",
        rec.to_str().unwrap(),
        "--record-fields",
        "14",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = std::fs::read_to_string(&rec).unwrap();
    // Three samples, each a TS line and a line per device (other tests may attach or detach
    // loop devices meanwhile, so the device list is read from the recording itself).
    let mut blocks: Vec<Vec<String>> = Vec::new();
    for l in text.lines() {
        if l.starts_with("TS ") {
            blocks.push(Vec::new());
        } else {
            assert_eq!(l.split_whitespace().count(), 14, "{l:?}");
            let name = l.split_whitespace().nth(2).unwrap().to_string();
            blocks.last_mut().expect("a TS line first").push(name);
        }
    }
    assert_eq!(blocks.len(), 3, "{text}");
    assert!(blocks.iter().all(|b| !b.is_empty()), "{text}");
    // pt-diskstats shows a device in an interval when both of its samples have it.
    let in_both = |a: &[String], b: &[String]| a.iter().filter(|n| b.contains(n)).count();
    let expected_rows = in_both(&blocks[0], &blocks[1]) + in_both(&blocks[1], &blocks[2]);
    // dbio replays it (the discard and flush figures are 0 now).
    let again = replay_json(rec.to_str().unwrap(), &["--all"]);
    assert_eq!(again.len(), 2);
    let out = std::process::Command::new("pt-diskstats")
        .args(["--group-by", "all", "--show-inactive", "--headers", ""])
        .arg(&rec)
        .env("LC_ALL", "C")
        .output()
        .expect("needs pt-diskstats (percona-toolkit; scripts/setup-test-env.sh installs it)");
    assert!(out.status.success());
    let shown = pt_rows(&String::from_utf8(out.stdout).unwrap());
    // Two intervals, every device in each.
    assert_eq!(shown.len(), expected_rows, "{shown:?}");
    let bad = dbio(&[
        "iostat",
        "--record",
        dir.path().join("rec16").to_str().unwrap(),
        "--record-fields",
        "16",
    ]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

/// sysstat's figures per device: its JSON object for each `disk_device`.
type SysstatDisks = std::collections::HashMap<String, serde_json::Map<String, Value>>;

/// Runs sysstat's `iostat -x -o JSON -f DIR -d 1 2` on two samples of the devices `devs`
/// (name, sysfs `stat` line before, after) in a fake sysfs: the `stat` files are rewritten
/// once iostat has printed its first report (it flushes each report), so its second read sees
/// the second sample. Returns its second report per device and the interval it used, inferred
/// from the device with the most reads (iostat measures the interval in 1/100 s).
fn sysstat_on_pair(devs: &[(String, String, String)]) -> (SysstatDisks, f64) {
    use std::io::Read;
    require_tool(
        "iostat",
        &["-V"],
        "sysstat; scripts/setup-test-env.sh installs it",
    );
    let dir = tempfile::tempdir().unwrap();
    for (name, before, _) in devs {
        let d = dir.path().join("block").join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("stat"), format!("{before}\n")).unwrap();
    }
    let mut child = std::process::Command::new("iostat")
        .args([
            "-x",
            "-o",
            "JSON",
            "-f",
            dir.path().to_str().unwrap(),
            "-d",
            "1",
            "2",
        ])
        .env("LC_ALL", "C")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    // The first report is complete when its "disk" array is closed.
    loop {
        let n = out.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "iostat ended early: {}",
            String::from_utf8_lossy(&text)
        );
        text.extend_from_slice(&buf[..n]);
        let s = String::from_utf8_lossy(&text);
        if s.find("\"disk_device\"")
            .is_some_and(|i| s[i..].contains(']'))
        {
            break;
        }
    }
    for (name, _, after) in devs {
        let d = dir.path().join("block").join(name);
        std::fs::write(d.join("stat.new"), format!("{after}\n")).unwrap();
        std::fs::rename(d.join("stat.new"), d.join("stat")).unwrap();
    }
    out.read_to_end(&mut text).unwrap();
    assert!(child.wait().unwrap().success());
    let v: Value = serde_json::from_slice(&text).unwrap();
    let stats = v["sysstat"]["hosts"][0]["statistics"].as_array().unwrap();
    let disks: std::collections::HashMap<String, serde_json::Map<String, Value>> =
        stats.last().unwrap()["disk"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["disk_device"].as_str().unwrap().to_string(),
                    d.as_object().unwrap().clone(),
                )
            })
            .collect();
    let reads = |l: &str| l.split_whitespace().next().unwrap().parse::<f64>().unwrap();
    let (name, rd) = devs
        .iter()
        .map(|(n, b, a)| (n, reads(a) - reads(b)))
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap();
    assert!(rd > 0.0, "no reads in this pair");
    let t = (rd / disks[name.as_str()]["r/s"].as_f64().unwrap() * 100.0).round() / 100.0;
    (disks, t)
}

#[test]
#[ignore = "needs sysstat iostat (scripts/setup-test-env.sh installs it); scripts/test.sh runs it"]
fn same_figures_as_sysstat_on_pt_diskstats_samples() {
    // Every pair of consecutive samples of percona-toolkit's real capture, every device but
    // ram* and loop*, every iostat -x column: sysstat 12.x reads the pair from a fake sysfs,
    // dbio replays it at the interval sysstat measured.
    let text = std::fs::read_to_string(testdata("percona-toolkit/bug-1035311.txt")).unwrap();
    let samples: Vec<Vec<(String, String)>> = text
        .split("TS ")
        .filter(|b| !b.trim().is_empty())
        .map(|b| {
            b.lines()
                .skip(1)
                .filter(|l| {
                    let name = l.split_whitespace().nth(2).unwrap_or("");
                    !name.starts_with("ram") && !name.starts_with("loop")
                })
                .map(|l| {
                    (
                        l.split_whitespace().nth(2).unwrap().to_string(),
                        l.to_string(),
                    )
                })
                .collect()
        })
        .collect();
    assert_eq!(samples.len(), 30);
    let stat = |line: &str| {
        line.split_whitespace()
            .skip(3)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let map = SYSSTAT_KEYS;
    // 29 iostat runs of 1 s each, side by side (they mostly sleep).
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = samples
            .windows(2)
            .map(|w| {
                let devs: Vec<(String, String, String)> = w[0]
                    .iter()
                    .zip(&w[1])
                    .map(|((n, a), (m, b))| {
                        assert_eq!(n, m);
                        (n.clone(), stat(a), stat(b))
                    })
                    .collect();
                let pair = (w[0].clone(), w[1].clone());
                s.spawn(move || (pair, sysstat_on_pair(&devs)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let (mut compared, mut equal, mut ties) = (0, 0, 0);
    let mut wrong = Vec::new();
    for ((before, after), (theirs, t)) in results {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pair");
        let lines =
            |s: &[(String, String)]| s.iter().map(|(_, l)| format!("{l}\n")).collect::<String>();
        std::fs::write(
            &f,
            format!(
                "TS 100 x\n{}TS {} x\n{}",
                lines(&before),
                100.0 + t,
                lines(&after)
            ),
        )
        .unwrap();
        let o = dbio(&[
            "iostat",
            "--replay",
            f.to_str().unwrap(),
            "--format",
            "jsonl",
            "--all",
            "--partitions",
        ]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let ours: Value = serde_json::from_str(o.stdout.lines().next().unwrap()).unwrap();
        // sysstat leaves out devices that never did I/O (md0 here); every other one is shown.
        for (name, line) in &before {
            let never_used = line.split_whitespace().skip(3).all(|t| t == "0");
            assert_eq!(theirs.contains_key(name), !never_used, "{name} in sysstat");
        }
        for (name, sys) in &theirs {
            let d = device(&ours, name);
            for (their_key, our_key) in map {
                let want = format!("{:.2}", sys[their_key].as_f64().unwrap());
                let raw = d[our_key].as_f64().unwrap();
                let got = format!("{raw:.2}");
                // A value on a tie (x.xx5 to 1e-6) rounds either way depending on the
                // order of the floating-point operations (sysstat: delta / centiseconds *
                // 100; dbio: delta / seconds): both roundings count, as ties.
                let hundredths = raw * 100.0;
                let tie =
                    (hundredths - hundredths.trunc() - 0.5).abs() < 1e-6 * hundredths.max(1.0);
                let other = format!(
                    "{:.2}",
                    (hundredths + if hundredths.fract() < 0.5 { 0.5 } else { -0.5 }).round()
                        / 100.0
                );
                compared += 1;
                if got == want {
                    equal += 1;
                } else if tie && other == want {
                    ties += 1;
                } else {
                    wrong.push(format!(
                        "{their_key} of {name} (T={t}): dbio {got}, sysstat {want}"
                    ));
                }
            }
        }
    }
    eprintln!(
        "sysstat iostat on the same pairs: {compared} figures compared, {equal} equal, {ties} ties at half a hundredth rounded the other way"
    );
    assert!(
        wrong.is_empty(),
        "{} of {compared} figures differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
#[ignore = "needs pt-diskstats (percona-toolkit); scripts/test.sh runs it"]
fn pt_stalk_capture_same_figures_as_pt_diskstats() {
    // A real pt-stalk capture (20-field lines, which pt-diskstats 3.2.1 skips): dbio reads it
    // as it is; pt-diskstats reads the same capture cut to the classic 14 fields (what
    // --record-fields 14 writes). Every pt-diskstats column of every device must agree.
    let name = "pt-stalk-2026_11_22_08_22_49-diskstats";
    let text = std::fs::read_to_string(testdata(name)).unwrap();
    let first_ts: f64 = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut14");
    let cut_text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("TS ") {
                format!("{l}\n")
            } else {
                format!(
                    "{}\n",
                    l.split_whitespace().take(14).collect::<Vec<_>>().join(" ")
                )
            }
        })
        .collect();
    std::fs::write(&cut, cut_text).unwrap();
    let out = std::process::Command::new("pt-diskstats")
        .args(["--group-by", "all", "--show-inactive", "--headers", ""])
        .args(["--columns-regex", "."])
        .arg(&cut)
        .env("LC_ALL", "C")
        .output()
        .expect("needs pt-diskstats (percona-toolkit; scripts/setup-test-env.sh installs it)");
    assert!(out.status.success());
    let theirs = pt_rows(&String::from_utf8(out.stdout).unwrap());
    let ours = replay_json(name, &["--all", "--partitions"]);
    let devices = text
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("TS "))
        .count();
    assert_eq!(theirs.len(), ours.len() * devices);
    let (mut compared, mut equal) = (0, 0);
    let mut wrong = Vec::new();
    for (ts, dev, vals) in &theirs {
        let r = ours
            .iter()
            .find(|r| format!("{:.1}", r["ts_s"].as_f64().unwrap() - first_ts) == *ts)
            .unwrap_or_else(|| panic!("no report at +{ts}"));
        let d = device(r, dev);
        for ((col, key, scale, prec), want) in PT_COLUMNS.iter().zip(vals) {
            let got = pt_format(d[*key].as_f64().unwrap() * scale, *prec);
            compared += 1;
            if &got == want {
                equal += 1;
            } else {
                wrong.push(format!(
                    "{col} of {dev} at +{ts}: dbio {got}, pt-diskstats {want}"
                ));
            }
        }
    }
    eprintln!("pt-stalk capture vs pt-diskstats: {compared} figures compared, {equal} equal");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
