//! `dbio sweep` end to end: real runs on /dev/shm and on a loop device, the files it writes,
//! resuming after SIGKILL and SIGINT, and the I/O scheduler restored.

use crate::common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn shm() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap()
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The common flags of a small, quick sweep in `t`.
fn small(t: &Path) -> Vec<String> {
    [
        "sweep",
        "--engine",
        "uring",
        "--file-num",
        "2",
        "--file-total-size",
        "8M",
        "--block-size",
        "4k",
        "--report-interval",
        "100ms",
        "--dir",
        t.join("set").to_str().unwrap(),
        "--output-dir",
        t.join("out").to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn a_sweep_runs_every_point_on_one_file_set_and_writes_each_result() {
    let t = shm();
    let out = Command::cargo_bin("dbio")
        .unwrap()
        .args(small(t.path()))
        .args([
            "--mode",
            "rndrd,rndwr",
            "--threads",
            "1,2",
            "--iodepth",
            "1,8",
            "--time",
            "300ms",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let csv = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1 + 8, "{csv}");
    assert!(rows.iter().all(|r| r.len() == rows[0].len()));
    let s = json(&t.path().join("out/sweep.json"));
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 8);
    // Threads innermost: 1, 2, 1, 2 ...; then iodepth; then mode.
    let t_of = |i: usize| points[i]["threads"].as_u64().unwrap();
    assert_eq!((t_of(0), t_of(1), t_of(2)), (1, 2, 1));
    assert_eq!(points[2]["iodepth"], 8);
    assert_eq!(points[4]["mode"], "rndwr");
    for p in points {
        assert_eq!(p["status"], "done", "{p}");
        let r = json(&t.path().join("out").join(p["file"].as_str().unwrap()));
        assert_eq!(r["spec"]["threads"], p["threads"]);
        assert_eq!(r["spec"]["iodepth"], p["iodepth"]);
        assert_eq!(r["spec"]["mode"], p["mode"]);
        assert_eq!(r["interrupted"], false);
        assert!(r["intervals"].as_array().unwrap().len() >= 2);
        assert!(r["intervals"][0]["cpu"]["usr_pct"].is_number());
        let iops = p["figures"]["iops"].as_f64().unwrap();
        assert!((iops - r["summary"]["total"]["iops"].as_f64().unwrap()).abs() < 1e-6);
    }
    // The reads of a write mode are not defined: an empty CSV cell, null in JSON.
    assert!(points[4]["figures"]["read"].is_null());
    // The set was made by the sweep: removed at the end.
    assert!(!t.path().join("set").exists());
}

#[test]
fn a_sweep_killed_mid_way_resumes_where_it_stopped() {
    let t = shm();
    let args = {
        let mut a = small(t.path());
        a.extend(
            ["--threads", "1,2,3,4", "--time", "400ms", "--keep"]
                .iter()
                .map(|s| s.to_string()),
        );
        a
    };
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (no chance to clean up) once sweep.json says two points are done.
    let points = t.path().join("out/points");
    let done_now = || {
        std::fs::read(t.path().join("out/sweep.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .map_or(0, |v| {
                v["points"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|p| p["status"] == "done")
                    .count()
            })
    };
    let t0 = Instant::now();
    while done_now() < 2 {
        assert!(t0.elapsed() < Duration::from_secs(60), "no point finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = json(&t.path().join("out/sweep.json"));
    let done: Vec<String> = before["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "done")
        .map(|p| p["file"].as_str().unwrap().to_string())
        .collect();
    assert!((2..4).contains(&done.len()), "{before}");
    let mtimes: Vec<_> = done
        .iter()
        .map(|f| {
            std::fs::metadata(t.path().join("out").join(f))
                .unwrap()
                .modified()
                .unwrap()
        })
        .collect();
    // The same command again is refused: it would overwrite the sweep.
    Command::cargo_bin("dbio")
        .unwrap()
        .args(&args)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--resume"));
    // --resume runs only the rest, on the file set left behind.
    Command::cargo_bin("dbio")
        .unwrap()
        .args(&args)
        .arg("--resume")
        .assert()
        .success();
    let after = json(&t.path().join("out/sweep.json"));
    assert!(after["points"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["status"] == "done"));
    for (f, m) in done.iter().zip(mtimes) {
        let now = std::fs::metadata(t.path().join("out").join(f))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(now, m, "{f} was not run again");
    }
    assert_eq!(std::fs::read_dir(&points).unwrap().count(), 4);
}

/// Starts `dbio sweep args` and kills it with SIGKILL (no chance to clean up) once
/// `out/sweep.json` says a point is done.
fn kill_after_one_point(args: &[String], out: &Path) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let done_now = || {
        std::fs::read(out.join("sweep.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .map_or(0, |v| {
                v["points"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|p| p["status"] == "done")
                    .count()
            })
    };
    let t0 = Instant::now();
    while done_now() < 1 {
        assert!(t0.elapsed() < Duration::from_secs(60), "no point finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(done_now() < 4, "the sweep ended before it was killed");
}

#[test]
fn a_killed_sweep_resumed_to_the_end_removes_the_file_set_it_made() {
    let args = |t: &Path| {
        let mut a = small(t);
        a.extend(
            ["--threads", "1,2,3,4", "--time", "300ms"]
                .iter()
                .map(|s| s.to_string()),
        );
        a
    };
    let resume = |t: &Path| {
        Command::cargo_bin("dbio")
            .unwrap()
            .args(args(t))
            .arg("--resume")
            .assert()
            .success();
        let s = json(&t.join("out/sweep.json"));
        assert!(s["points"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["status"] == "done"));
    };
    let entries = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };

    // The sweep prepared the set (and its directory), was killed, and is resumed: at its end
    // the set and the directory go, as they would after a sweep never killed.
    let t = shm();
    let set = t.path().join("set");
    kill_after_one_point(&args(t.path()), &t.path().join("out"));
    assert!(set.join(".dbio-fileset.json").exists(), "left by the kill");
    resume(t.path());
    assert!(
        !set.exists(),
        "the set and its directory: {:?}",
        entries(&set)
    );

    // Only what dbio created goes: a file someone put beside the set stays, and so does the
    // directory holding it.
    let t = shm();
    let set = t.path().join("set");
    kill_after_one_point(&args(t.path()), &t.path().join("out"));
    std::fs::write(set.join("notes.txt"), b"mine").unwrap();
    resume(t.path());
    assert_eq!(entries(&set), ["notes.txt"]);
    assert_eq!(std::fs::read(set.join("notes.txt")).unwrap(), b"mine");

    // A set prepared by `dbio bench prepare` is used and kept, by the killed sweep and the
    // resumed one.
    let t = shm();
    let set = t.path().join("set");
    Command::cargo_bin("dbio")
        .unwrap()
        .args([
            "bench",
            "prepare",
            "--file-num",
            "2",
            "--file-total-size",
            "8M",
        ])
        .arg("--dir")
        .arg(&set)
        .assert()
        .success();
    let before = entries(&set);
    kill_after_one_point(&args(t.path()), &t.path().join("out"));
    resume(t.path());
    assert_eq!(entries(&set), before, "the user's set is kept");
}

#[test]
fn a_sweep_killed_in_its_prepare_and_resumed_removes_the_file_set_too() {
    let t = shm();
    let set = t.path().join("set");
    // A set big enough for prepare to take a while: killed once its first file is there.
    let args: Vec<String> = [
        "sweep",
        "--engine",
        "uring",
        "--file-num",
        "4",
        "--file-total-size",
        "256M",
        "--threads",
        "1",
        "--time",
        "100ms",
        "--dir",
        set.to_str().unwrap(),
        "--output-dir",
        t.path().join("out").to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !set.join("dbio-file.0").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "prepare never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let marker = json(&set.join(".dbio-fileset.json"));
    assert_eq!(
        marker["prepared_by_sweep"],
        std::fs::canonicalize(t.path().join("out"))
            .unwrap()
            .to_str()
            .unwrap(),
        "the mark is written before any data file"
    );
    let whole = (0..4).all(|i| {
        std::fs::metadata(set.join(format!("dbio-file.{i}"))).is_ok_and(|m| m.len() == 64 << 20)
    });
    assert!(!whole, "killed in prepare, before every file was written");
    Command::cargo_bin("dbio")
        .unwrap()
        .args(&args)
        .arg("--resume")
        .assert()
        .success();
    assert_eq!(
        json(&t.path().join("out/sweep.json"))["points"][0]["status"],
        "done"
    );
    assert!(!set.exists(), "the set the sweep prepared is removed");
}

#[test]
fn ctrl_c_ends_a_sweep_with_its_partial_result_and_exit_130() {
    let t = shm();
    let mut a = small(t.path());
    a.extend(
        ["--threads", "1,2", "--time", "30s", "--format", "json"]
            .iter()
            .map(|s| s.to_string()),
    );
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(&a)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["interrupted"], true);
    assert_eq!(
        r["points"][0]["status"], "pending",
        "a partial point runs again"
    );
    assert_eq!(json(&t.path().join("out/sweep.json"))["interrupted"], true);
    assert!(
        !t.path().join("set").exists(),
        "the set it made was removed"
    );
}

#[test]
fn plans_that_cannot_run_are_refused_before_anything_is_written() {
    let t = shm();
    for (extra, msg) in [
        (vec!["--mode", "commit,rndrd"], "commit"),
        (vec!["--scheduler", "bfq"], "not on a block device"),
        (vec!["--repeat", "0"], "--repeat 0"),
        (vec!["--threads", "1,0"], "threads"),
    ] {
        Command::cargo_bin("dbio")
            .unwrap()
            .args(small(t.path()))
            .args(extra)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(msg));
        assert!(!t.path().join("out").exists(), "nothing written for {msg}");
        assert!(!t.path().join("set").exists());
    }
}

fn scheduler(dev: &str) -> String {
    let name = dev.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap()
}

#[test]
#[ignore = "needs root and loop devices (scripts/test.sh runs it)"]
fn scheduler_is_switched_per_point_and_restored_also_after_ctrl_c() {
    assert!(common::is_root(), "needs root");
    let t = shm();
    let img = t.path().join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let lo = common::LoopDev::attach(&img, &[]);
    let before = scheduler(&lo.dev);
    assert!(
        before.contains("none") && before.contains("mq-deadline"),
        "{before}"
    );
    let run = |time: &str| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
            .args([
                "sweep",
                "--device",
                &lo.dev,
                "--mode",
                "rndrd",
                "--threads",
                "1",
                "--scheduler",
                "mq-deadline,none",
                "--time",
                time,
                "--report-interval",
                "100ms",
                "--output-dir",
            ])
            .arg(t.path().join(format!("out-{time}")))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let o = run("300ms").wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = json(&t.path().join("out-300ms/sweep.json"));
    for (i, want) in [(0, "mq-deadline"), (1, "none")] {
        let p = &s["points"][i];
        assert_eq!(p["scheduler"], want);
        let r = json(&t.path().join("out-300ms").join(p["file"].as_str().unwrap()));
        let dev = &r["environment"]["devices"][0];
        assert_eq!(dev["scheduler"], want, "{dev}");
    }
    assert_eq!(scheduler(&lo.dev), before, "restored after the sweep");
    // Interrupted during a point: restored too.
    let child = run("30s");
    std::thread::sleep(Duration::from_millis(1000));
    assert!(scheduler(&lo.dev).contains("[mq-deadline]"));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    assert_eq!(scheduler(&lo.dev), before, "restored after Ctrl-C");
}

/// `DBIO_TEST_MYSQL` as sweep's --mysql (the database must exist).
fn mysql_dsn() -> String {
    std::env::var("DBIO_TEST_MYSQL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL and sysbench (scripts/test.sh starts and installs them)"]
fn sysbench_oltp_points_measure_the_database_and_drop_their_tables() {
    let t = shm();
    let out = t.path().join("out");
    // Tables of their own (a name no other test uses) so a parallel test cannot collide.
    let db_dsn = mysql_dsn();
    let o = Command::cargo_bin("dbio")
        .unwrap()
        .args([
            "sweep",
            "--workload",
            "sysbench-oltp",
            "--mysql",
            &db_dsn,
            "--threads",
            "1,2",
            "--time",
            "1s",
            "--oltp-tables",
            "1",
            "--oltp-table-size",
            "500",
            "--datadir",
            "/var/lib/mysql",
            "--format",
            "json",
            "--output-dir",
        ])
        .arg(&out)
        .assert()
        .success()
        .get_output()
        .clone();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["workload"], "sysbench-oltp");
    for (i, p) in r["points"].as_array().unwrap().iter().enumerate() {
        assert_eq!(p["status"], "done", "{p}");
        assert_eq!(p["id"], format!("00{}-oltp-t{}", i + 1, i + 1));
        let f = &p["oltp"];
        assert!(f["transactions_per_s"].as_f64().unwrap() > 0.0, "{f}");
        assert!(f["queries_per_s"].as_f64().unwrap() > f["transactions_per_s"].as_f64().unwrap());
        let (p50, p95) = (
            f["lat_p50_ms"].as_f64().unwrap(),
            f["lat_p95_ms"].as_f64().unwrap(),
        );
        assert!(
            p50 <= p95 && p95 <= f["lat_max_ms"].as_f64().unwrap() + 1.0,
            "{f}"
        );
        assert!(f["cpu_usr_pct"].as_f64().unwrap() > 0.0);
        // sysbench's own report is kept beside the figures.
        let raw = std::fs::read_to_string(out.join(p["file"].as_str().unwrap())).unwrap();
        assert!(raw.contains("transactions:"), "{raw}");
    }
    // The tables it created are dropped: a second sweep prepares them again.
    Command::cargo_bin("dbio")
        .unwrap()
        .args([
            "sweep",
            "--workload",
            "sysbench-oltp",
            "--mysql",
            &db_dsn,
            "--threads",
            "1",
            "--time",
            "1s",
            "--oltp-tables",
            "1",
            "--oltp-table-size",
            "500",
            "--output-dir",
        ])
        .arg(t.path().join("out2"))
        .assert()
        .success();
    let again = json(&t.path().join("out2/sweep.json"));
    assert_eq!(again["points"][0]["status"], "done");
}

#[test]
fn sysbench_oltp_refuses_bench_lists_and_a_bad_dsn() {
    let t = shm();
    for (extra, msg) in [
        (vec!["--mode", "rndrd,rndwr"], "one value of --mode"),
        (vec!["--scheduler", "none"], "needs --datadir"),
        (vec!["--mysql", "root@localhost/test"], "mysql://USER"),
    ] {
        Command::cargo_bin("dbio")
            .unwrap()
            .args(["sweep", "--workload", "sysbench-oltp", "--output-dir"])
            .arg(t.path().join("out"))
            .args(extra)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(msg));
        assert!(!t.path().join("out").exists());
    }
}

#[test]
fn start_at_waits_for_the_agreed_time() {
    let t = shm();
    let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(3);
    // Whole seconds, as people write it.
    let at = jiff::Timestamp::from_second(at.as_second()).unwrap();
    let t0 = Instant::now();
    let o = Command::cargo_bin("dbio")
        .unwrap()
        .args([
            "sweep",
            "--engine",
            "null",
            "--threads",
            "1",
            "--time",
            "100ms",
            "--format",
            "json",
            "--start-at",
            &at.to_string(),
            "--output-dir",
        ])
        .arg(t.path().join("out"))
        .assert()
        .success()
        .get_output()
        .clone();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let point = json(
        &t.path()
            .join("out")
            .join(r["points"][0]["file"].as_str().unwrap()),
    );
    let started: jiff::Timestamp = point["started_at"].as_str().unwrap().parse().unwrap();
    assert!(started >= at, "point started at {started}, before {at}");
    assert!(
        t0.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        t0.elapsed()
    );
    // A time in the past starts at once.
    Command::cargo_bin("dbio")
        .unwrap()
        .args([
            "sweep",
            "--engine",
            "null",
            "--threads",
            "1",
            "--time",
            "100ms",
            "--start-at",
            "2020-01-01T00:00:00Z",
            "--output-dir",
        ])
        .arg(t.path().join("out2"))
        .timeout(Duration::from_secs(20))
        .assert()
        .success();
}

/// `--buffers 4k,huge` (issue 27): two points that the report keeps apart (the layout is a
/// facet, not merged as one workload), compared A/B, with what large_pages in a server would
/// change in words. Whether the layouts differ on /dev/shm is the machine's business: the
/// finding says either.
#[test]
fn a_buffers_sweep_is_two_points_and_the_report_says_what_large_pages_changes() {
    let t = shm();
    Command::cargo_bin("dbio")
        .unwrap()
        .args(small(t.path()))
        .args([
            "--mode",
            "rndrd",
            "--buffers",
            "4k,huge",
            "--threads",
            "1",
            "--time",
            "1s",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let s = json(&t.path().join("out/sweep.json"));
    assert_eq!(s["points"].as_array().unwrap().len(), 2, "{s}");
    let out = Command::cargo_bin("dbio")
        .unwrap()
        .args(["report", "--format", "json"])
        .arg(t.path().join("out"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let r: Value = serde_json::from_slice(&out).unwrap();
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{}", r["points"]);
    let layouts: Vec<&str> = points
        .iter()
        .map(|p| p["params"]["buffers"].as_str().unwrap())
        .collect();
    assert!(
        layouts.contains(&"4k") && layouts.contains(&"huge"),
        "{layouts:?}"
    );
    let c: Vec<&Value> = r["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["parameter"] == "buffers")
        .collect();
    assert_eq!(c.len(), 1, "{}", r["comparisons"]);
    let f = c[0]["finding"].as_str().unwrap();
    assert!(f.starts_with("4KiB rndrd: "), "{f}");
    assert!(f.contains("large_pages"), "{f}");
    if c[0]["significant"] == true {
        assert!(f.contains("x the IOPS"), "{f}");
    } else {
        assert!(f.contains("no difference beyond noise"), "{f}");
    }
    // The text report prints it under the comparisons.
    let text = Command::cargo_bin("dbio")
        .unwrap()
        .arg("report")
        .arg(t.path().join("out"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("  buffers (") && text.contains(f), "{text}");
}
