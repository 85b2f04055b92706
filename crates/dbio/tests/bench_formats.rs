//! `dbio bench` output formats end to end: the real binary, real I/O on a small file set, each
//! `--format` written with `-o FILE` (nothing on stdout; the live lines on stderr are the file). The sysbench format is compared as a layout with
//! a real sysbench 1.0.20 run configured the same way (testdata/bench/).

use assert_cmd::Command;
use dbio_report::export::sysbench::bench::same_layout_doc;
use std::path::Path;

/// A temp dir on the disk (the target directory lives on the root filesystem).
fn disk() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dbio-formats")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// The options of the fixture's sysbench run: `sysbench fileio --file-num=4
/// --file-total-size=4M --file-test-mode=rndrw --time=2 --report-interval=1 --rand-seed=1`
/// (sysbench's defaults: 16 KiB, 1 thread, fsync every 100 requests, fsync at end, buffered),
/// after a separate prepare, as sysbench runs.
const LIKE_SYSBENCH: [&str; 18] = [
    "--mode",
    "rndrw",
    "--file-num",
    "4",
    "--file-total-size",
    "4M",
    "--block-size",
    "16k",
    "--buffered",
    "--fsync-every",
    "100",
    "--fsync-mode",
    "fsync",
    "--fsync-end",
    "--time",
    "2s",
    "--seed",
    "1",
];

/// Runs one format with `-o output`: stdout stays empty, and the live lines and summary shown
/// on stderr (returned) are the result written to the file, but for the warnings.
fn run(dir: &Path, format: &str, output: &Path) -> String {
    let out = Command::cargo_bin("dbio")
        .unwrap()
        .args(["bench", "run", "--dir"])
        .arg(dir.join("set"))
        .args(LIKE_SYSBENCH)
        .args(["--format", format, "-o"])
        .arg(output)
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(out.stdout.is_empty(), "-o FILE: nothing on stdout");
    without_warnings(&String::from_utf8(out.stderr).unwrap(), "warning: ")
}

/// Lines of `doc` without the warnings (shown on stderr live, kept in the result file).
fn without_warnings(doc: &str, prefix: &str) -> String {
    doc.lines()
        .filter(|l| !l.starts_with(prefix))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn every_format_on_stdout_matches_its_output_file_and_its_promises() {
    let d = disk();
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/bench/sysbench-1.0.20-fileio-rndrw.txt"
    ))
    .unwrap();

    // like sysbench: prepare, then one run per format, then cleanup
    Command::cargo_bin("dbio")
        .unwrap()
        .args(["bench", "prepare", "--dir"])
        .arg(d.path().join("set"))
        .args(LIKE_SYSBENCH)
        .assert()
        .success();

    // sysbench: the live header, interval lines and summary have sysbench 1.0.20's layout
    let file = d.path().join("sysbench.txt");
    let live = run(d.path(), "sysbench", &file);
    let saved = without_warnings(&std::fs::read_to_string(&file).unwrap(), "WARNING: ");
    if let Err(e) = same_layout_doc(&fixture, &saved) {
        panic!("{e}\n--- sysbench 1.0.20\n{fixture}\n--- dbio\n{saved}");
    }
    assert_eq!(saved, live);

    // text: what was printed live is the saved document
    let file = d.path().join("text.txt");
    let stdout = run(d.path(), "text", &file);
    let saved = std::fs::read_to_string(&file).unwrap();
    assert_eq!(without_warnings(&saved, "warning: "), stdout);
    assert!(
        stdout.contains("Summary: ") && stdout.contains("| read"),
        "{stdout}"
    );

    // csv: a header and one row per interval of the JSON result, every row as wide as the header
    let file = d.path().join("ts.csv");
    run(d.path(), "csv", &file);
    let stdout = std::fs::read_to_string(&file).unwrap();
    let json_file = d.path().join("r.json");
    run(d.path(), "json", &json_file);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    let rows: Vec<Vec<&str>> = stdout.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][..3], ["start_s", "end_s", "warmup"]);
    // 27 application columns, then 9 iostat columns per device under the target.
    let width = 27 + 9 * json["environment"]["devices"].as_array().unwrap().len();
    assert!(rows.iter().all(|r| r.len() == width), "{stdout}");
    let intervals = json["intervals"].as_array().unwrap().len();
    assert!(intervals >= 2, "{json}");
    assert_eq!(rows.len(), intervals + 1, "{stdout}");

    Command::cargo_bin("dbio")
        .unwrap()
        .args(["bench", "cleanup", "--dir"])
        .arg(d.path().join("set"))
        .assert()
        .success();
}
