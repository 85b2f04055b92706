//! `dbio report` on real bench runs (sync and uring engines on /dev/shm): a real stall made by
//! pausing the bench process with SIGSTOP/SIGCONT at a fixed period is found with its period;
//! runs nobody paused raise no periodic alarm; the HTML page is opened in a real headless
//! Chromium and its screenshot holds the charts; bad inputs fail naming what is wrong.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bench runs of these tests take turns: on a 2-core machine, runs in parallel would stall each
/// other (really: the report would be right to say so), which is not what a test of "no false
/// alarm" or of "this period" should measure.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn shm_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dbio-report-test")
        .tempdir_in("/dev/shm")
        .expect("/dev/shm is writable")
}

/// The arguments of a short real bench run writing its JSON result to `out`.
fn bench_args(data: &Path, out: &Path, engine: &str, time: &str) -> Vec<String> {
    [
        "bench",
        "--dir",
        data.to_str().unwrap(),
        "--engine",
        engine,
        "--mode",
        "rndrd",
        "--file-num",
        "2",
        "--file-total-size",
        "8M",
        "--time",
        time,
        "--report-interval",
        "100ms",
        "--format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn bench(data: &Path, out: &Path, engine: &str, time: &str) {
    Command::cargo_bin("dbio")
        .unwrap()
        .args(bench_args(data, out, engine, time))
        .assert()
        .success();
}

fn report_json(files: &[&Path]) -> Value {
    let out = Command::cargo_bin("dbio")
        .unwrap()
        .arg("report")
        .args(files)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Sends `sig` to `pid`.
fn kill(pid: u32, sig: i32) {
    // SAFETY: kill has no memory preconditions; pid is our own child, still running or a zombie.
    let rc = unsafe { libc::kill(pid as i32, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig})");
}

#[test]
fn a_stall_made_by_sigstop_every_second_is_found_with_its_period() {
    let _turn = turn();
    let data = shm_dir();
    let out = data.path().join("stalled.json");
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let mut child = std::process::Command::new(bin)
        .args(bench_args(&data.path().join("set"), &out, "sync", "7s"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Prepare (8 MiB on tmpfs) takes well under a second; then pause 300 ms every second.
    std::thread::sleep(Duration::from_millis(800));
    let t0 = Instant::now();
    for k in 0..6u32 {
        let at = Duration::from_millis(1000 * k as u64);
        std::thread::sleep(at.saturating_sub(t0.elapsed()));
        kill(child.id(), libc::SIGSTOP);
        std::thread::sleep(Duration::from_millis(300));
        kill(child.id(), libc::SIGCONT);
    }
    assert!(child.wait().unwrap().success());
    let r = report_json(&[&out]);
    let run = &r["runs"][0];
    let periodic = &run["stalls"]["periodic"];
    assert!(
        periodic.is_object(),
        "no periodic stall found: {}",
        run["stalls"]
    );
    let period = periodic["period_s"].as_f64().unwrap();
    assert!(
        (0.85..=1.15).contains(&period),
        "period {period} s, paused every 1 s"
    );
    assert!(periodic["depth_pct"].as_f64().unwrap() > 50.0, "{periodic}");
    // Six pauses of 300 ms: at least two 100 ms intervals each with (almost) nothing done.
    let stalled = run["stalls"]["intervals"].as_u64().unwrap();
    assert!(
        stalled >= 12,
        "{stalled} stall intervals: {}",
        run["stalls"]
    );
    assert!(run["stalls"]["events"].as_array().unwrap().len() >= 6);
}

#[test]
fn runs_nobody_paused_raise_no_periodic_alarm() {
    let _turn = turn();
    let data = shm_dir();
    let mut files: Vec<PathBuf> = Vec::new();
    for (i, engine) in ["sync", "uring", "sync", "uring"].iter().enumerate() {
        let out = data.path().join(format!("flat-{i}-{engine}.json"));
        bench(&data.path().join("set"), &out, engine, "3s");
        files.push(out);
    }
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let r = report_json(&refs);
    for run in r["runs"].as_array().unwrap() {
        assert!(
            run["stalls"]["periodic"].is_null(),
            "{}: false periodic alarm {}",
            run["label"],
            run["stalls"]["periodic"]
        );
        // A machine shared with other builds may really stall a run for a few intervals, and
        // the report is right to say so; what it must never do is flag an interval that does
        // not meet the rule (below half the median throughput, or p99 above 10x the median p99)
        // or miss one that does.
        let median = run["stalls"]["median_iops"].as_f64().unwrap();
        let median_p99 = run["stalls"]["median_p99_ns"].as_f64().unwrap();
        for iv in run["intervals"].as_array().unwrap() {
            let iops = iv["iops"].as_f64().unwrap();
            let p99 = iv["lat_ns"]["p99"].as_f64().unwrap();
            let rule = iops < 0.5 * median || p99 > 10.0 * median_p99;
            assert_eq!(iv["stall"].as_bool(), Some(rule), "{}: {iv}", run["label"]);
        }
        assert_eq!(run["percentiles_from"], "interval histograms");
    }
    // sync and uring at the same depth differ in one parameter: one A/B comparison per pair of
    // points (two points: the repeats merge).
    assert_eq!(r["points"].as_array().unwrap().len(), 2);
    assert_eq!(r["comparisons"][0]["parameter"], "engine");
    let n = r["comparisons"][0]["a_intervals"].as_u64().unwrap();
    assert!(n > 20, "{n} intervals in the test");
}

#[test]
fn text_csv_and_sweep_directories() {
    let _turn = turn();
    let data = shm_dir();
    let sweep = data.path().join("sweep");
    std::fs::create_dir_all(sweep.join("points")).unwrap();
    std::fs::write(sweep.join("sweep.json"), "{}").unwrap();
    bench(
        &data.path().join("set"),
        &sweep.join("points/t1.json"),
        "sync",
        "1s",
    );
    bench(
        &data.path().join("set"),
        &sweep.join("points/t2.json"),
        "uring",
        "1s",
    );
    let text = Command::cargo_bin("dbio")
        .unwrap()
        .args(["report", sweep.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.starts_with("2 runs on 1 host, 2 points"), "{text}");
    assert!(
        text.contains("\nVerdicts\n  t1: ") && text.contains("\n  t2: "),
        "{text}"
    );
    let csv_file = data.path().join("r.csv");
    Command::cargo_bin("dbio")
        .unwrap()
        .args(["report", "--format", "csv", "-o"])
        .arg(&csv_file)
        .arg(sweep.join("sweep.json"))
        .assert()
        .success()
        .stdout("");
    let csv = std::fs::read_to_string(&csv_file).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("run,point,host,"));
    assert!(lines[1].starts_with("t1,0,") && lines[2].starts_with("t2,1,"));
}

#[test]
fn bad_inputs_fail_naming_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::cargo_bin("dbio")
            .unwrap()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let o = run(&["report", "missing.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read missing.json"));
    std::fs::write(
        dir.path().join("other.json"),
        r#"{"schema":"dbio.stack/1"}"#,
    )
    .unwrap();
    let o = run(&["report", "other.json"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("other.json is not a dbio bench result (schema dbio.stack/1)"),
        "{e}"
    );
    let o = run(&["report", "."]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a directory without sweep.json"));
    let o = run(&["report", "--stall-fraction", "2", "other.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--stall-fraction 2"));
    let o = run(&["report", "--format", "prometheus", "other.json"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The non-white pixels of a PNG and whether a colour (within a few levels) is among them.
fn png_pixels(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let px = buf[..info.buffer_size()]
        .chunks(step)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

#[test]
#[ignore = "needs chromium (Debian package chromium)"]
fn the_html_page_renders_in_headless_chromium_with_its_charts() {
    let _turn = turn();
    let data = shm_dir();
    let a = data.path().join("sync.json");
    let b = data.path().join("uring.json");
    bench(&data.path().join("set"), &a, "sync", "2s");
    bench(&data.path().join("set"), &b, "uring", "2s");
    let html = data.path().join("report.html");
    Command::cargo_bin("dbio")
        .unwrap()
        .args(["report", "--format", "html", "-o"])
        .arg(&html)
        .args([&a, &b])
        .assert()
        .success();
    let shot = data.path().join("report.png");
    let out = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1100,1800",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success() && shot.exists(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (w, h, px) = png_pixels(&shot);
    assert_eq!((w, h), (1100, 1800));
    let ink = px.iter().filter(|p| **p != [255, 255, 255]).count();
    assert!(
        ink * 50 > px.len(),
        "the page is blank: {ink} of {} pixels not white",
        px.len()
    );
    // The throughput line (Okabe-Ito blue) and the stall/warm-up legends' colours are drawn.
    let near = |c: [u8; 3]| {
        px.iter()
            .filter(|p| p.iter().zip(c).all(|(a, b)| a.abs_diff(b) <= 8))
            .count()
    };
    assert!(
        near([0, 114, 178]) > 500,
        "no throughput line in the screenshot"
    );
    assert!(near([213, 94, 0]) > 50, "no latency line in the screenshot");
    if let Some(keep) = std::env::var_os("DBIO_REPORT_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// The real bench result of testdata/bench with the value at `pointer` (a JSON pointer)
/// replaced by the JSON text `raw`, written to `dir/name`.
fn damaged(dir: &Path, name: &str, pointer: &str, raw: &str) -> PathBuf {
    let real = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/bench/dbio-0.1.0-rndrd-sync-vda.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(real).unwrap()).unwrap();
    // A marker that is replaced in the text, so `raw` may be what no JSON library writes
    // (1e999, a string where a number belongs).
    const MARK: &str = "\"@damaged@\"";
    *v.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} not in the fixture")) =
        Value::String("@damaged@".into());
    let text = serde_json::to_string_pretty(&v).unwrap();
    assert_eq!(text.matches(MARK).count(), 1);
    let path = dir.join(name);
    std::fs::write(&path, text.replace(MARK, raw)).unwrap();
    path
}

/// `dbio report`, `dbio model usl` and `dbio model mva --from-bench` all read bench results:
/// a value dbio bench never writes (a negative or huge duration, a string where a number
/// belongs, a number beyond f64, an interval ending before it starts, a CPU share above 100%,
/// a histogram whose min is above its max, counts beyond 2^64) is refused with exit 1 and an
/// error naming the file, the field and the value; never a panic (exit 101), never a result.
#[test]
fn damaged_bench_results_are_refused_naming_file_field_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let u64_max = u64::MAX.to_string();
    let cases: &[(&str, &str, &str)] = &[
        ("/spec/time_s", "-1", "spec.time_s: -1 is no duration"),
        (
            "/spec/time_s",
            "1e20",
            "spec.time_s: 100000000000000000000 is no duration",
        ),
        (
            "/spec/warmup_s",
            "-0.5",
            "spec.warmup_s: -0.5 is no duration",
        ),
        (
            "/spec/report_interval_s",
            "1.9e19",
            "spec.report_interval_s: 19000000000000000000 is no duration",
        ),
        (
            "/spec/warmup_s",
            "\"NaN\"",
            "spec.warmup_s: invalid type: string \"NaN\"",
        ),
        ("/intervals/2/end_s", "-1", "intervals[2].end_s is -1"),
        (
            "/intervals/2/cpu/usr_pct",
            "150",
            "intervals[2].cpu.usr_pct is 150",
        ),
        (
            "/summary/read/histogram/min_ns",
            &u64_max,
            "summary.read.histogram.min_ns is 18446744073709551615",
        ),
        (
            "/summary/write/count",
            &u64_max,
            "summary.write.count is 18446744073709551615",
        ),
    ];
    for (i, (pointer, raw, want)) in cases.iter().enumerate() {
        let name = format!("damaged-{i}.json");
        let file = damaged(dir.path(), &name, pointer, raw);
        for cmd in [
            &["report"][..],
            &["model", "usl"],
            &["model", "mva", "--from-bench"],
        ] {
            let o = crate::common::dbio().args(cmd).arg(&file).output().unwrap();
            let e = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{cmd:?} {pointer} = {raw}: {e}");
            assert!(
                e.contains(&name) && e.contains(want),
                "{cmd:?} {pointer} = {raw}: want {want:?} and the file name in: {e}"
            );
            assert!(!e.contains("panicked"), "{e}");
        }
    }
    // A number beyond f64: serde_json refuses it at its line; the readers of bench results
    // name the field, `model usl` (which reads any JSON of points first) the line.
    let file = damaged(dir.path(), "huge.json", "/spec/time_s", "1e999");
    for (cmd, want) in [
        (&["report"][..], "spec.time_s: number out of range"),
        (
            &["model", "mva", "--from-bench"],
            "spec.time_s: number out of range",
        ),
        (&["model", "usl"], "number out of range at line"),
    ] {
        let o = crate::common::dbio().args(cmd).arg(&file).output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {e}");
        assert!(e.contains("huge.json") && e.contains(want), "{cmd:?}: {e}");
    }
    // threads x iodepth beyond what a model solves: the default table would be that long.
    let file = damaged(dir.path(), "threads.json", "/spec/threads", "4294967295");
    let o = crate::common::dbio()
        .args(["model", "mva", "--from-bench"])
        .arg(&file)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("threads.json: spec.threads x spec.iodepth is 4294967295"),
        "{e}"
    );
    // A result cut short (the file is parsed as it is read): named, exit 1.
    let real = std::fs::read(damaged(dir.path(), "whole.json", "/spec/seed", "1")).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &real[..real.len() / 2]).unwrap();
    let o = crate::common::dbio()
        .arg("report")
        .arg(&cut)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("cut.json is not a dbio bench result (") && e.contains("EOF while parsing"),
        "{e}"
    );
    // The fixture itself is read by all three.
    let whole = dir.path().join("whole.json");
    crate::common::dbio()
        .arg("report")
        .arg(&whole)
        .assert()
        .success();
    crate::common::dbio()
        .args(["model", "mva", "--from-bench"])
        .arg(&whole)
        .assert()
        .success();
}

/// Issue 31: a sweep point of 1 s has one interval. Its steady state cannot be judged (the
/// window is 5 intervals), which the report says instead of "throughput not steady (drift
/// 0%, range 0%)", and the HTML page says in one line that there is no chart over time
/// instead of drawing empty axes.
#[test]
fn a_one_interval_run_is_too_short_to_judge_and_to_chart() {
    let _turn = turn();
    let data = shm_dir();
    let out = data.path().join("short.json");
    let mut args = bench_args(&data.path().join("set"), &out, "sync", "1s");
    let at = args.iter().position(|a| a == "100ms").unwrap();
    args[at] = "1s".into();
    Command::cargo_bin("dbio")
        .unwrap()
        .args(&args)
        .assert()
        .success();
    let r = report_json(&[&out]);
    assert_eq!(r["runs"][0]["intervals"].as_array().unwrap().len(), 1);
    let text = Command::cargo_bin("dbio")
        .unwrap()
        .arg("report")
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains(
            "steady state not judged: not enough intervals (1 measured, the window is 5;"
        ),
        "{text}"
    );
    assert!(!text.contains("not steady"), "{text}");
    assert!(text.contains("too few intervals"), "{text}");
    let html = data.path().join("short.html");
    Command::cargo_bin("dbio")
        .unwrap()
        .arg("report")
        .arg(&out)
        .args(["--format", "html", "-o"])
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("No chart over time for short (at most 1 interval each: a line needs 2)"),
        "{page}"
    );
    assert!(!page.contains("throughput per interval"));
    // The distribution chart is still drawn: one interval has a whole histogram.
    assert!(page.contains("latency distribution"));
}

/// A default run's result (`dbio bench` without --mode) holds two runs: `dbio report` shows
/// its data pages under the file's name and its commit phase as `NAME commit`, each with its
/// own operations (reads and writes; writes and fsyncs).
#[test]
fn a_default_run_is_reported_as_its_two_phases() {
    let _turn = turn();
    let data = shm_dir();
    let out = data.path().join("first.json");
    Command::cargo_bin("dbio")
        .unwrap()
        .args(["bench", "--dir"])
        .arg(data.path().join("set"))
        .args([
            "--file-num",
            "2",
            "--file-total-size",
            "8M",
            "--time",
            "1s",
            "--format",
            "json",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let r = report_json(&[&out]);
    let runs = r["runs"].as_array().unwrap();
    let labels: Vec<&str> = runs.iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["first", "first commit"], "{r}");
    let ops = |x: &Value| -> Vec<String> {
        x["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["op"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ops(&runs[0]), ["read", "write"], "{}", runs[0]);
    assert_eq!(ops(&runs[1]), ["write", "fsync"], "{}", runs[1]);
    assert!(runs[1]["source"]
        .as_str()
        .unwrap()
        .ends_with("first.json (default_run.commit)"));
}
