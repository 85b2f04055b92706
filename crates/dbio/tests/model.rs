//! `dbio model` as users run it: the real binary on demands given on the command line, on the
//! published USL datasets in testdata/model, on real `dbio bench` results, and live on this
//! machine (with `--tps`, and against the real MariaDB under a load these tests make).

use crate::common::dbio;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn testdata(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(p)
}

/// Runs dbio, expects exit 0, parses stdout as JSON.
fn json(args: &[&str]) -> Value {
    let out = dbio().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "dbio {args:?}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// `a` equals `b` to `digits` significant digits.
fn sig(a: f64, b: f64, digits: i32) -> bool {
    let scale = 10f64.powi(b.abs().log10().floor() as i32 - digits + 1);
    (a - b).abs() <= 0.5 * scale
}

#[test]
fn bounds_follow_the_operational_laws() {
    // D = 2.1 + 4.5 = 6.6 ms, Dmax = 4.5 ms (disk), Z = 100 ms: Nsat = 106.6 / 4.5 = 23.69;
    // at N = 40, X <= 1 / 4.5 ms = 222.2/s and R >= 40 x 4.5 - 100 = 80 ms.
    let j = json(&[
        "model",
        "bounds",
        "--demand",
        "cpu=2.1ms,disk=0.0045",
        "--think",
        "100ms",
        "--max-n",
        "40",
        "--format",
        "json",
    ]);
    assert_eq!(j["schema"], "dbio.model.bounds/1");
    assert_eq!(j["bottleneck"], "disk");
    assert!(sig(f(&j["n_sat"]), 23.69, 4));
    let rows = j["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 40);
    assert!(sig(f(&rows[39]["x_upper_per_s"]), 222.2, 4));
    assert!((f(&rows[39]["r_lower_s"]) - 0.080).abs() < 1e-12);
    // Default table: up to twice Nsat.
    let j = json(&[
        "model",
        "bounds",
        "--demand",
        "cpu=2.1ms,disk=4.5ms",
        "--think",
        "100ms",
        "--format",
        "json",
    ]);
    assert_eq!(j["rows"].as_array().unwrap().len(), 48);
    let text = dbio()
        .args([
            "model",
            "bounds",
            "--demand",
            "cpu=2.1ms,disk=4.5ms",
            "--think",
            "100ms",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("Dmax     4.50ms  at disk, the bottleneck"),
        "{text}"
    );
}

#[test]
fn mva_matches_pdq_exact_solutions() {
    // PDQ's closed M/M/1//N (DrQz/pdq-qnm-pkg, "examples/Book PPA 1998/chap2/closed1.out"):
    // CPU 0.63 s, 100 users, Z = 300 s: X 0.3325/s, R 0.7943 s, utilisation 20.9445%,
    // queue 0.2641.
    let j = json(&[
        "model", "mva", "--demand", "CPU=0.63", "--think", "300", "--max-n", "100", "--format",
        "json",
    ]);
    let last = &j["rows"][99];
    assert_eq!(last["n"], 100);
    assert!(sig(f(&last["x_per_s"]), 0.3325, 4));
    assert!(sig(f(&last["r_s"]), 0.7943, 4));
    let cpu = &j["per_centre"][0];
    assert!(sig(f(&cpu["utilization_pct"]), 20.9445, 6));
    assert!(sig(f(&cpu["queue_length"]), 0.2641, 4));
    // A delay centre has no utilisation and no queueing.
    let j = json(&[
        "model",
        "mva",
        "--demand",
        "disk=10ms",
        "--delay",
        "wan=50ms",
        "--max-n",
        "20",
        "--format",
        "json",
    ]);
    // --step thins the table, keeping N = 1 and the last.
    let j2 = json(&[
        "model",
        "mva",
        "--demand",
        "disk=10ms",
        "--max-n",
        "25",
        "--step",
        "10",
        "--format",
        "json",
    ]);
    let ns: Vec<u64> = j2["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["n"].as_u64().unwrap())
        .collect();
    assert_eq!(ns, [1, 10, 20, 25]);
    let wan = &j["per_centre"][1];
    assert_eq!(wan["kind"], "delay");
    assert!(wan["utilization_pct"].is_null());
    assert!((f(&wan["residence_s"]) - 0.05).abs() < 1e-12);
}

#[test]
fn usl_reproduces_the_r_usl_package_on_specsdm91() {
    // R usl 3.0 summary (smoeding/usl tests/summary.Rout.save): sigma 2.773e-02 (SE 9.122e-03),
    // kappa 1.044e-04 (SE 1.988e-05), lambda 90.00 (SE 14.21), RSE 82.85 on 4 df.
    let path = testdata("model/specsdm91.csv");
    let j = json(&[
        "model",
        "usl",
        path.to_str().unwrap(),
        "--predict",
        "96,1000",
        "--format",
        "json",
    ]);
    assert_eq!(j["schema"], "dbio.model.usl/1");
    assert!(sig(f(&j["sigma"]["estimate"]), 2.773e-2, 4));
    assert!(sig(f(&j["sigma"]["std_error"]), 9.122e-3, 4));
    assert!(sig(f(&j["kappa"]["estimate"]), 1.044e-4, 4));
    assert!(sig(f(&j["kappa"]["std_error"]), 1.988e-5, 4));
    assert!(sig(f(&j["lambda_per_s"]["estimate"]), 90.00, 4));
    assert!(sig(f(&j["lambda_per_s"]["std_error"]), 14.21, 4));
    assert!(sig(f(&j["residual_std_error_per_s"]), 82.85, 4));
    assert_eq!(j["reading"], "coherency_bound");
    assert!(sig(f(&j["n_max"]), 96.52, 4));
    assert_eq!(j["predictions"][0]["beyond_2x_measured"], false);
    assert_eq!(j["predictions"][1]["beyond_2x_measured"], true);
    assert!(j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("N = 1000")));
    // The raytracer data: the bounded fit holds kappa at 0 (R usl: 0.0000) and never
    // reports it negative.
    let path = testdata("model/raytracer.csv");
    let j = json(&["model", "usl", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(f(&j["kappa"]["estimate"]), 0.0);
    assert_eq!(j["kappa"]["at_bound"], true);
    assert!(sig(f(&j["lambda_per_s"]["estimate"]), 21.8488, 6));
    assert_eq!(j["reading"], "contention_bound");
    assert!(j["n_max"].is_null());
}

#[test]
fn usl_reads_stdin_json_and_csv_output() {
    let mut cmd = dbio();
    cmd.args(["model", "usl", "-", "--format", "csv"])
        .write_stdin(
            r#"[{"n": 1, "x": 64.9}, {"n": 18, "x": 995.9}, {"n": 36, "x": 1652.4},
            {"n": 72, "x": 1853.2}, {"n": 108, "x": 1828.9}, {"n": 144, "x": 1775.0},
            {"n": 216, "x": 1702.2}]"#,
        );
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "n,x_per_s,r_s,fitted_x_per_s,residual_per_s,efficiency"
    );
    assert_eq!(lines.len(), 8);
    // The first residual, R usl tests/residuals.Rout.save: -25.10.
    let res: f64 = lines[1].split(',').nth(4).unwrap().parse().unwrap();
    assert!((res + 25.10).abs() < 0.006, "{res}");
}

#[test]
fn usl_fits_real_bench_results() {
    // Three real runs of the null engine at 1, 2 and 4 threads, concatenated as `cat` gives
    // them: N = threads x iodepth, X = total IOPS, R = mean latency.
    let dir = tempfile::tempdir().unwrap();
    let mut all = String::new();
    let mut want = Vec::new();
    for t in ["1", "2", "4"] {
        let out = dbio()
            .args([
                "bench",
                "--engine",
                "null",
                "--events",
                "20000",
                "--threads",
                t,
                "--file-num",
                "1",
                "--file-total-size",
                "1M",
                "--format",
                "json",
            ])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s = String::from_utf8(out.stdout).unwrap();
        let v: Value = serde_json::from_str(&s).unwrap();
        want.push((f(&v["spec"]["threads"]), f(&v["summary"]["total"]["iops"])));
        all.push_str(&s);
    }
    let file = dir.path().join("runs.json");
    std::fs::write(&file, all).unwrap();
    let j = json(&["model", "usl", file.to_str().unwrap(), "--format", "json"]);
    let pts = j["points"].as_array().unwrap();
    assert_eq!(pts.len(), 3);
    for (p, (n, x)) in pts.iter().zip(&want) {
        assert_eq!(f(&p["n"]), *n);
        assert_eq!(f(&p["x_per_s"]), *x);
        assert!(f(&p["r_s"]) > 0.0);
    }
    for k in ["sigma", "kappa"] {
        let e = f(&j[k]["estimate"]);
        assert!((0.0..=1.0).contains(&e), "{k} = {e}");
    }
    assert!(j["implied_think_s"].is_number());
}

#[test]
fn bad_input_is_refused_with_the_right_exit_code() {
    for (args, code, says) in [
        (&["model", "bounds", "--demand", "cpu"][..], 2, "NAME=TIME"),
        (&["model", "bounds", "--demand", "cpu=-1ms"], 2, "--demand"),
        (
            &["model", "bounds", "--demand", "cpu=1ms,cpu=2ms"],
            2,
            "twice",
        ),
        (
            &["model", "mva", "--delay", "wan=1ms", "--demand", "cpu=0"],
            2,
            "no queueing centre",
        ),
        (
            &["model", "mva", "--demand", "cpu=1ms", "--max-n", "0"],
            2,
            "--max-n 0",
        ),
        (
            &["model", "usl", "/nonexistent/points.csv"],
            1,
            "/nonexistent/points.csv",
        ),
        (&["model", "bounds"], 2, "--demand"),
        (
            &["model", "bounds", "--demand", "cpu=1ms", "--step", "0"],
            2,
            "--step 0",
        ),
        (&["model", "live"], 2, "--tps"),
        (&["model", "usl", "-", "--predict", "-1"], 2, "--predict -1"),
        (&["model", "live", "--tps", "-5"], 2, "--tps -5"),
        (
            &["model", "live", "--tps", "5", "--device", "nosuchdisk"],
            1,
            "nosuchdisk",
        ),
    ] {
        let out = dbio().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("s3cret"), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.csv");
    std::fs::write(&two, "1,10\n2,19\n").unwrap();
    let out = dbio()
        .args(["model", "usl", two.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("three concurrencies"));
    // A file that is not a bench result.
    let out = dbio()
        .args(["model", "mva", "--from-bench", two.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not one dbio bench JSON result"));
}

/// A table of 10,000,000 populations is refused before any work, naming the limit, why, and
/// the step that fits; with that step (or any that fits) it is solved, showing exactly the
/// documented rows: N = 1, every step-th and the last.
#[test]
fn ten_million_populations_show_at_most_the_row_limit() {
    for what in ["mva", "bounds"] {
        let out = dbio()
            .args(["model", what, "--demand", "cpu=2.1ms,disk=4.5ms"])
            .args(["--think", "100ms", "--max-n", "10000000"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("--max-n 10000000 with --step 1 shows 10000000 rows")
                && err.contains("at most 100000 rows are shown")
                && err.contains("give --step 100 or more"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
        // --max-n beyond the population limit, whatever the step.
        let out = dbio()
            .args(["model", what, "--demand", "cpu=1ms", "--max-n", "10000001"])
            .args(["--step", "1000000"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--max-n 10000001: at most 10000000"), "{err}");
    }
    let j = json(&[
        "model",
        "mva",
        "--demand",
        "cpu=2.1ms,disk=4.5ms",
        "--think",
        "100ms",
        "--max-n",
        "10000000",
        "--step",
        "100",
        "--format",
        "json",
    ]);
    let rows = j["rows"].as_array().unwrap();
    let ns: Vec<u64> = rows.iter().map(|r| r["n"].as_u64().unwrap()).collect();
    let want: Vec<u64> = std::iter::once(1)
        .chain((1..=100_000).map(|k| 100 * k))
        .collect();
    assert_eq!(ns, want);
    // Far beyond Nsat = 23.69 the disk is saturated: X = 1 / 4.5 ms, and Little's law
    // over the circuit gives R = N / X - Z.
    let last = &rows[rows.len() - 1];
    assert!(sig(f(&last["x_per_s"]), 1.0 / 0.0045, 9), "{last}");
    assert!(sig(f(&last["r_s"]), 1e7 * 0.0045 - 0.1, 6), "{last}");
    assert_eq!(j["n"], 10_000_000);
    let disk = &j["per_centre"][1];
    assert!(sig(f(&disk["utilization_pct"]), 100.0, 9), "{disk}");
    // The same rows as the whole table has at those populations.
    let full = json(&[
        "model",
        "mva",
        "--demand",
        "cpu=2.1ms,disk=4.5ms",
        "--think",
        "100ms",
        "--max-n",
        "1000",
        "--format",
        "json",
    ]);
    let full = full["rows"].as_array().unwrap();
    for r in rows.iter().take_while(|r| r["n"].as_u64().unwrap() <= 1000) {
        assert_eq!(r, &full[r["n"].as_u64().unwrap() as usize - 1]);
    }
}

#[test]
fn live_without_mysql_measures_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let j = crate::common::with_cpu_load(|| {
        json(&[
            "model",
            "live",
            "--tps",
            "200",
            "--interval",
            "500ms",
            "--datadir",
            dir.path().to_str().unwrap(),
            "--link-speed",
            "lo=10000",
            "--net-dev",
            "lo",
            "--format",
            "json",
        ])
    });
    assert_eq!(j["tps_source"], "--tps");
    assert_eq!(f(&j["transactions_per_s"]), 200.0);
    let res = j["resources"].as_array().unwrap();
    let cpu = res.iter().find(|r| r["kind"] == "cpu").unwrap();
    // The utilisation law: D = U / TPS.
    assert!((f(&cpu["demand_s"]) - f(&cpu["utilization_pct"]) / 100.0 / 200.0).abs() < 1e-15);
    assert!(f(&cpu["servers"]) >= 1.0);
    assert!(res.iter().any(|r| r["kind"] == "net" && r["name"] == "lo"));
    let dmax = res.iter().map(|r| f(&r["demand_s"])).fold(0.0, f64::max);
    assert_eq!(f(&j["max_demand_s"]), dmax);
    assert!(j["threads_running"].is_null());
}

fn dsn() -> String {
    std::env::var("DBIO_TEST_MYSQL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

#[test]
#[ignore = "needs a MariaDB/MySQL server at DBIO_TEST_MYSQL (scripts/setup-test-env.sh starts one)"]
fn live_counts_the_transactions_of_a_real_server() {
    use mysql::prelude::Queryable;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let opts = mysql::Opts::from_url(&dsn()).unwrap();
    let mut conn = mysql::Conn::new(opts.clone()).expect("connect to DBIO_TEST_MYSQL");
    conn.query_drop(
        "CREATE TABLE IF NOT EXISTS model_live_load (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB",
    )
    .unwrap();
    // A load of explicit transactions from two connections, counted by the load itself.
    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (stop, commits, opts) = (stop.clone(), commits.clone(), opts.clone());
            std::thread::spawn(move || {
                let mut c = mysql::Conn::new(opts).unwrap();
                while !stop.load(Ordering::SeqCst) {
                    c.query_drop("BEGIN").unwrap();
                    c.query_drop("INSERT INTO model_live_load (v) VALUES (1)")
                        .unwrap();
                    c.query_drop("COMMIT").unwrap();
                    commits.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let t0 = std::time::Instant::now();
    let c0 = commits.load(Ordering::SeqCst);
    let commits_json = json(&[
        "model",
        "live",
        "--mysql",
        &dsn(),
        "--interval",
        "2s",
        "--format",
        "json",
    ]);
    let ours = (commits.load(Ordering::SeqCst) - c0) as f64 / t0.elapsed().as_secs_f64();
    // The load's own rate over the second measurement's window (a busy machine can slow the
    // load between the two: compare each with its own window).
    let t1 = std::time::Instant::now();
    let c1 = commits.load(Ordering::SeqCst);
    let questions = json(&[
        "model",
        "live",
        "--mysql",
        &dsn(),
        "--interval",
        "1s",
        "--tps-counter",
        "questions",
        "--format",
        "json",
    ]);
    let ours_q = (commits.load(Ordering::SeqCst) - c1) as f64 / t1.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.join().unwrap();
    }
    conn.query_drop("DROP TABLE model_live_load").unwrap();

    assert_eq!(commits_json["tps_source"], "Com_commit+Com_rollback");
    let tps = f(&commits_json["transactions_per_s"]);
    // The server counts every client's commits: at least ours (other clients only add).
    assert!(
        tps >= 0.5 * ours && ours > 0.0,
        "server {tps}/s, load {ours}/s"
    );
    assert!(f(&commits_json["threads_running"]) >= 0.0);
    assert!(commits_json["r_floor_s"].is_number());
    let notes: Vec<&str> = commits_json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.starts_with("disks under ")),
        "{notes:?}"
    );
    assert!(commits_json["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["kind"] == "disk"));
    // Three statements per transaction: Questions counts at least as many as commits.
    assert_eq!(questions["tps_source"], "Questions");
    let q = f(&questions["transactions_per_s"]);
    assert!(q >= 2.0 * ours_q * 0.5, "Questions {q}/s, load {ours_q}/s");
}

#[test]
#[ignore = "needs promtool (scripts/setup-test-env.sh installs it)"]
fn live_prometheus_passes_promtool() {
    let out = crate::common::with_cpu_load(|| {
        dbio()
            .args([
                "model",
                "live",
                "--tps",
                "100",
                "--interval",
                "200ms",
                "--net-dev",
                "lo",
                "--link-speed",
                "lo=10000",
                "--format",
                "prometheus",
            ])
            .output()
            .unwrap()
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("dbio_model_demand_seconds{resource=\"cpu\",kind=\"cpu\"}"),
        "{text}"
    );
    assert!(
        text.contains("dbio_model_transactions_per_second{source=\"--tps\"} 100\n"),
        "{text}"
    );
    crate::common::promtool_check(&text);
}

#[test]
fn demands_from_a_real_bench_run_follow_the_utilisation_law() {
    // A real O_DIRECT run on the disk under the target directory: the demands are the
    // interval-weighted CPU busy share and each disk's %util over the run's IOPS.
    let dir = tempfile::Builder::new()
        .prefix("dbio-model")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let run = dir.path().join("run.json");
    let out = dbio()
        .args([
            "bench",
            "--mode",
            "rndrd",
            "--threads",
            "2",
            "--time",
            "1s",
            "--direct",
            "--file-num",
            "1",
            "--file-total-size",
            "16M",
            "--format",
            "json",
            "-o",
        ])
        .arg(&run)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b: Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    let x = f(&b["summary"]["total"]["iops"]);
    let measured: Vec<&Value> = b["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["warmup"] == false)
        .collect();
    let w = |i: &Value| f(&i["end_s"]) - f(&i["start_s"]);
    let t: f64 = measured.iter().map(|i| w(i)).sum();
    let busy = measured
        .iter()
        .map(|i| {
            w(i) * (f(&i["cpu"]["usr_pct"]) + f(&i["cpu"]["sys_pct"]) + f(&i["cpu"]["steal_pct"]))
        })
        .sum::<f64>()
        / t
        / 100.0;
    let j = json(&[
        "model",
        "bounds",
        "--from-bench",
        run.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let centres = j["centres"].as_array().unwrap();
    assert_eq!(centres[0]["name"], "cpu");
    assert!((f(&centres[0]["demand_s"]) - busy / x).abs() <= 1e-12 + 1e-9 * busy / x);
    // Each disk of the environment is a centre with its own %util over the IOPS.
    let disks: Vec<&str> = b["environment"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "disk")
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    for name in &disks {
        let util = measured
            .iter()
            .map(|i| {
                let d = i["devices"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|d| d["name"] == *name);
                w(i) * f(&d.unwrap()["util_pct"])
            })
            .sum::<f64>()
            / t
            / 100.0;
        let c = centres.iter().find(|c| c["name"] == *name).unwrap();
        assert!((f(&c["demand_s"]) - util.min(1.0) / x).abs() <= 1e-12 + 1e-9 * util / x);
    }
    assert_eq!(centres.len(), 1 + disks.len());
    assert_eq!(f(&j["measured"]["n"]), 2.0);
    assert_eq!(f(&j["measured"]["x_per_s"]), x);
    // A measured throughput never beats the bound at its own concurrency (the utilisation
    // law makes X <= 1 / Dmax exact up to rounding).
    let row = &j["rows"][1];
    assert_eq!(row["n"], 2);
    assert!(x <= f(&row["x_upper_per_s"]) * (1.0 + 1e-9));
    // MVA from the same file says what it makes of N = 2.
    let text = dbio()
        .args(["model", "mva", "--from-bench", run.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("MVA at N = 2: X = "), "{text}");
}

#[test]
fn usl_fits_one_curve_of_a_real_sweep() {
    // A real sweep (null engine) over threads 1, 2, 4 and two block sizes: two curves.
    let dir = tempfile::tempdir().unwrap();
    let out = dbio()
        .args([
            "sweep",
            "--engine",
            "null",
            "--threads",
            "1,2,4",
            "--block-size",
            "16k,4k",
            "--events",
            "2000",
            "--file-num",
            "1",
            "--file-total-size",
            "1M",
            "--output-dir",
            "out",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sweep_dir = dir.path().join("out");
    let sweep: Value =
        serde_json::from_slice(&std::fs::read(sweep_dir.join("sweep.json")).unwrap()).unwrap();
    // Without --curve: the curves are listed, exit 1.
    let out = dbio()
        .args(["model", "usl", sweep_dir.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("2 curves (1: rndrw 16KiB misalign 0; 2: rndrw 4KiB misalign 0)"),
        "{err}"
    );
    // --curve 2: the 4 KiB points, N = threads x iodepth, X = the point's IOPS.
    let j = json(&[
        "model",
        "usl",
        sweep_dir.join("sweep.json").to_str().unwrap(),
        "--curve",
        "2",
        "--format",
        "json",
    ]);
    let want: Vec<(f64, f64)> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["block_size_bytes"] == 4096)
        .map(|p| (f(&p["threads"]), f(&p["figures"]["iops"])))
        .collect();
    let got: Vec<(f64, f64)> = j["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (f(&p["n"]), f(&p["x_per_s"])))
        .collect();
    assert_eq!(got, want);
    assert_eq!(j["notes"][0], "sweep curve 2: rndrw 4KiB misalign 0");
    // --curve on something that is not a sweep.
    let out = dbio()
        .args([
            "model",
            "usl",
            testdata("model/specsdm91.csv").to_str().unwrap(),
            "--curve",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not one"));
}

#[test]
fn live_interrupted_reports_the_part_measured_and_exits_130() {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args([
            "model",
            "live",
            "--tps",
            "50",
            "--interval",
            "60s",
            "--net-dev",
            "lo",
            "--link-speed",
            "lo=10000",
            "--format",
            "json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = f(&j["interval_s"]);
    assert!(t > 0.5 && t < 30.0, "{t}");
    assert!(j["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().starts_with("interrupted")));
}

/// `--format html`: one self-contained page per model result, with the chart the slides draw.
#[test]
fn html_pages_chart_the_model_with_its_marks_and_load_nothing() {
    let page = |args: &[&str]| -> String {
        let o = dbio()
            .args(args)
            .args(["--format", "html"])
            .assert()
            .success();
        String::from_utf8(o.get_output().stdout.clone()).unwrap()
    };
    let specs = testdata("model/specsdm91.csv");
    let usl = page(&["model", "usl", specs.to_str().unwrap(), "--predict", "500"]);
    let mva = page(&[
        "model",
        "mva",
        "--demand",
        "cpu=2.1ms,disk=4.5ms",
        "--think",
        "100ms",
        "--max-n",
        "40",
    ]);
    let bounds = page(&[
        "model",
        "bounds",
        "--demand",
        "cpu=2.1ms,disk=4.5ms",
        "--think",
        "100ms",
    ]);
    for (p, marks) in [
        (
            &usl,
            &[
                "Nmax = 96.5",
                "USL fit: sigma 0.0277",
                "measured",
                "beyond twice",
            ][..],
        ),
        (&mva, &["Nsat = 23.7", "MVA X(N)", "bounds"][..]),
        (
            &bounds,
            &["Nsat = 23.7", "X(N) &lt;= min(N / (D + Z), 1 / Dmax)"][..],
        ),
    ] {
        assert!(p.starts_with("<!DOCTYPE html>") && p.trim_end().ends_with("</html>"));
        assert_eq!(p.matches("<svg").count(), 1, "one chart");
        for m in marks {
            assert!(p.contains(m), "{m} missing");
        }
        assert!(!p.contains("<script") && !p.contains("src=\"http") && !p.contains("href=\"http"));
    }
    // The table holds every measured point of the fit.
    for n in ["<td>1</td>", "<td>18</td>", "<td>216</td>"] {
        assert!(usl.contains(n), "{n}");
    }
    // live has no chart page.
    dbio()
        .args([
            "model",
            "live",
            "--tps",
            "100",
            "--interval",
            "100ms",
            "--format",
            "html",
        ])
        .assert()
        .code(2);
}
