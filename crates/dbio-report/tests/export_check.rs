//! The output formats of `dbio check` (text, JSON, Prometheus, Nagios) on hand-built results:
//! a snapshot of every (result, format) pair, and the facts each format must keep (grouping
//! and order, the short Nagios status line, one Prometheus series per label set, escaping).

use dbio_report::export::{Json, Nagios, Prometheus, Text};
use dbio_report::Exporter;
use dbio_schema::check::*;
use dbio_schema::doc::{Document, CHECK, DBIO_VERSION};

fn f(dev: &str, rule: &str, st: Status) -> Finding {
    Finding::new(rule, dev, st, format!("{rule} is {}", st.label()), "why").fix("fix it")
}

/// A RAID finding with the labels the RAID rules give it.
fn raid(dev: &str, rule: &str, st: Status) -> Finding {
    let w: Vec<&str> = dev.split(' ').collect();
    f(dev, rule, st).labels(Labels {
        tool: Some(w[0].into()),
        controller: Some(w[1].into()),
        volume: Some(w[2..].join(" ")),
        ..Default::default()
    })
}

/// Every status, evidence over several lines, paths shared by a mount, a RAID note, a
/// finding without labels (a device name and a path), two findings with one label set, and
/// characters that need escaping (`|` in Nagios, `"`, `\` and newline in Prometheus labels).
fn mixed() -> CheckReport {
    let mut atime = f("/", "mount.atime", Status::Warn)
        .labels(Labels {
            device: Some("vda".into()),
            mountpoint: Some("/".into()),
            ..Default::default()
        })
        .evidence(["options rw,relatime", "atime updates on every read | write"]);
    atime.paths = vec!["/".into(), "/tmp".into()];
    let mut sched = f("vda", "io.scheduler", Status::Ok);
    sched.paths = vec!["/".into()];
    let parse = Finding::new(
        "raid.parse",
        "RAID output /tmp/junk \"q\"\\x.txt",
        Status::Unknown,
        "not RAID tool output:\n\"no controllers here\"",
        "Without the controller's state dbio cannot tell.",
    )
    .labels(Labels {
        source: Some("/tmp/junk \"q\"\\x\n.txt".into()),
        ..Default::default()
    })
    .fix("pass the tool's output with --raid-output");
    CheckReport::new(vec![
        atime,
        sched,
        f("sdb", "io.read_ahead", Status::Warn),
        f("/srv/data", "lvm.snapshot", Status::Ok),
        raid("MegaCli c0 vd 0", "raid.write_policy", Status::Crit)
            .evidence(["Current Cache Policy: WriteThrough", "BBU: Learning"]),
        raid("MegaCli c0 vd 0", "raid.vd_state", Status::Ok),
        raid("MegaCli c0 vd 0", "raid.note", Status::Ok),
        raid("MegaCli c0 vd 0", "raid.read_ahead", Status::Advice),
        raid("storcli c0 vd 0", "raid.tool", Status::Ok),
        raid("storcli c0 vd 0", "raid.tool", Status::Unknown),
        parse,
    ])
}

fn all_ok() -> CheckReport {
    CheckReport::new(vec![
        f("sda", "io.scheduler", Status::Ok),
        f("sda", "io.nr_requests", Status::Ok),
    ])
}

fn advice_only() -> CheckReport {
    CheckReport::new(vec![
        f("sda", "io.scheduler", Status::Ok),
        raid("tw_cli c0 u0", "raid.vd_state", Status::Advice),
    ])
}

fn empty() -> CheckReport {
    CheckReport::new(Vec::new())
}

fn results() -> [(&'static str, CheckReport); 4] {
    [
        ("mixed", mixed()),
        ("all_ok", all_ok()),
        ("advice_only", advice_only()),
        ("empty", empty()),
    ]
}

fn json(r: &CheckReport) -> String {
    Json.to_string(&Document::new(CHECK, r)).unwrap().replace(
        &format!("\"dbio_version\": \"{DBIO_VERSION}\""),
        "\"dbio_version\": \"[version]\"",
    )
}

#[test]
fn snapshots_of_every_result_and_format() {
    for (name, r) in results() {
        insta::assert_snapshot!(
            format!("{name}_text"),
            Text::default().to_string(&r).unwrap()
        );
        insta::assert_snapshot!(format!("{name}_json"), json(&r));
        insta::assert_snapshot!(
            format!("{name}_prometheus"),
            Prometheus::default().to_string(&r).unwrap()
        );
        insta::assert_snapshot!(
            format!("{name}_nagios"),
            Nagios::default().to_string(&r).unwrap()
        );
        insta::assert_snapshot!(
            format!("{name}_nagios_advice_warns"),
            Nagios { advice_warns: true }.to_string(&r).unwrap()
        );
    }
    for (name, message) in [
        ("failure_short", "short | piped"),
        (
            "failure_long",
            "--disks 0 --raid 10: RAID 10 cannot have 0 disks: it needs an even number of at least 4",
        ),
        (
            "failure_lines",
            "unexpected argument '--bogus' found\n\nUsage: dbio check [PATHS]...",
        ),
    ] {
        let e = CheckFailure {
            message: message.into(),
        };
        insta::assert_snapshot!(name, Nagios::default().to_string(&e).unwrap());
    }
}

#[test]
fn grouping_and_order() {
    let r = CheckReport::new(vec![
        f("sda", "io.scheduler", Status::Ok),
        f("sda", "io.read_ahead", Status::Warn),
        raid("raid c0 vd 0", "raid.write_policy", Status::Crit),
        raid("raid c0 vd 0", "raid.vd_state", Status::Ok),
        f("sdb", "io.scheduler", Status::Unknown),
    ]);
    assert_eq!(r.status, Status::Crit);
    let order: Vec<&str> = r.devices.iter().map(|g| g.device.as_str()).collect();
    assert_eq!(order, ["raid c0 vd 0", "sda", "sdb"]);
    assert_eq!(r.devices[1].findings[0].rule, "io.read_ahead");
    assert_eq!(
        r.counts,
        Counts {
            ok: 2,
            warn: 1,
            crit: 1,
            unknown: 1,
            advice: 0
        }
    );
    let n = Nagios::default().to_string(&r).unwrap();
    assert!(
        n.starts_with(
            "DBIO STORAGE CRITICAL - 1 critical, 1 warning, 1 unknown: raid.write_policy | "
        ),
        "{n}"
    );
    assert!(
        n.contains("\nCRIT raid c0 vd 0 raid.write_policy: raid.write_policy is CRIT\n"),
        "{n}"
    );
    assert!(n
        .lines()
        .next()
        .unwrap()
        .ends_with("| crit=1;;;0 warn=1;;;0 unknown=1;;;0 ok=2;;;0 advice=0;;;0"));
    let p = Prometheus::default().to_string(&r).unwrap();
    assert!(
        p.contains("dbio_check_status{tool=\"raid\",controller=\"c0\",volume=\"vd 0\",rule=\"raid.write_policy\"} 2\n"),
        "{p}"
    );
    assert!(p.contains("dbio_check_status{device=\"sdb\",rule=\"io.scheduler\"} 3\n"));
    let t = Text::default().to_string(&r).unwrap();
    assert!(t.starts_with("dbio check: CRIT (1 critical, 1 warning, 1 unknown, 0 advice, 2 ok)"));
    assert!(t.contains("fix:      fix it"));
}

#[test]
fn advice_is_shown_but_no_alarm() {
    let r = advice_only();
    assert_eq!(r.status, Status::Advice);
    assert_eq!(r.counts.advice, 1);
    assert_eq!(r.nagios_status(false), Status::Ok);
    assert_eq!(r.nagios_status(false).nagios_code(), 0);
    assert_eq!(r.nagios_status(true), Status::Warn);
    let n = Nagios::default().to_string(&r).unwrap();
    assert!(
        n.starts_with("DBIO STORAGE OK - 1 rules OK, 1 advice: tw_cli c0 u0 raid.vd_state | "),
        "{n}"
    );
    assert!(n.contains("\nADVICE tw_cli c0 u0 raid.vd_state: "), "{n}");
    let w = Nagios { advice_warns: true }.to_string(&r).unwrap();
    assert!(
        w.starts_with("DBIO STORAGE WARNING - 1 advice: tw_cli c0 u0 raid.vd_state | "),
        "{w}"
    );
    let p = Prometheus::default().to_string(&r).unwrap();
    assert!(
        p.contains("dbio_check_status{tool=\"tw_cli\",controller=\"c0\",volume=\"u0\",rule=\"raid.vd_state\"} 0\n"),
        "{p}"
    );
    assert!(
        p.contains("dbio_check_advice{tool=\"tw_cli\",controller=\"c0\",volume=\"u0\",rule=\"raid.vd_state\"} 1\n"),
        "{p}"
    );
    assert!(
        p.contains("dbio_check_findings{status=\"advice\"} 1\n"),
        "{p}"
    );
    let t = Text::default().to_string(&r).unwrap();
    assert!(t.contains("ADVICE  tw_cli c0 u0"), "{t}");
}

#[test]
fn all_ok_nagios() {
    assert_eq!(
        Nagios::default().to_string(&all_ok()).unwrap(),
        "DBIO STORAGE OK - 2 rules OK | crit=0;;;0 warn=0;;;0 unknown=0;;;0 ok=2;;;0 advice=0;;;0\n"
    );
    assert_eq!(all_ok().status.nagios_code(), 0);
}

#[test]
fn nagios_status_text_is_short() {
    let long = "x".repeat(200);
    let r = CheckReport::new(vec![f(&long, "raid.write_policy", Status::Crit)]);
    let n = Nagios::default().to_string(&r).unwrap();
    let head = n.lines().next().unwrap().split(" | ").next().unwrap();
    assert_eq!(head.chars().count(), NAGIOS_STATUS_MAX, "{head}");
    assert!(head.ends_with("xxx... raid.write_policy"), "{head}");
    assert!(
        n.contains(&format!("\nCRIT {long} raid.write_policy: ")),
        "{n}"
    );
    let failure = |m: &str| {
        Nagios::default()
            .to_string(&CheckFailure { message: m.into() })
            .unwrap()
    };
    let e = failure(
        "--disks 0 --raid 10: RAID 10 cannot have 0 disks: it needs an even number of at least 4",
    );
    let mut lines = e.lines();
    let first = lines.next().unwrap();
    assert!(first.starts_with("DBIO STORAGE UNKNOWN - --disks 0"), "{e}");
    assert_eq!(first.chars().count(), NAGIOS_STATUS_MAX, "{e}");
    assert!(lines.next().unwrap().ends_with("at least 4"), "{e}");
    assert_eq!(
        failure("short | piped"),
        "DBIO STORAGE UNKNOWN - short / piped\n"
    );
    // Every status line of the hand-built results is short, and perfdata is only on it.
    for (name, r) in results() {
        for advice_warns in [false, true] {
            let n = Nagios { advice_warns }.to_string(&r).unwrap();
            let (first, rest) = n.split_once('\n').unwrap();
            let text = first.split(" | ").next().unwrap();
            assert!(text.chars().count() <= NAGIOS_STATUS_MAX, "{name}: {text}");
            assert_eq!(first.matches('|').count(), 1, "{name}: {first}");
            assert!(!rest.contains('|'), "{name}: {rest}");
        }
    }
}

#[test]
fn paths_are_listed_and_labels_are_one_series() {
    let r = mixed();
    let t = Text::default().to_string(&r).unwrap();
    assert!(t.contains("\nWARN    /  (paths: /, /tmp)\n"), "{t}");
    assert!(t.contains("\nOK      vda  (paths: /)\n"), "{t}");
    let n = Nagios::default().to_string(&r).unwrap();
    assert!(
        n.contains("\nWARN / mount.atime: mount.atime is WARN  (paths: /, /tmp)\n"),
        "{n}"
    );
    let p = Prometheus::default().to_string(&r).unwrap();
    assert!(
        p.contains("dbio_check_status{device=\"vda\",mountpoint=\"/\",rule=\"mount.atime\"} 1\n"),
        "{p}"
    );
    assert!(
        p.contains("dbio_check_status{device=\"vda\",rule=\"io.scheduler\"} 0\n"),
        "{p}"
    );
    // Two findings with one label set: one series, the worse status.
    let tool: Vec<&str> = p.lines().filter(|l| l.contains("raid.tool")).collect();
    assert_eq!(tool, ["dbio_check_status{tool=\"storcli\",controller=\"c0\",volume=\"vd 0\",rule=\"raid.tool\"} 3"]);
    // A finding without labels about a path (not a device name) has no device label.
    assert!(
        p.contains("dbio_check_status{rule=\"lvm.snapshot\"} 0\n"),
        "{p}"
    );
    // raid.note is no rule status; label values are escaped.
    assert!(!p.contains("raid.note"), "{p}");
    assert!(
        p.contains("source=\"/tmp/junk \\\"q\\\"\\\\x\\n.txt\""),
        "{p}"
    );
}

/// `promtool check metrics` accepts the Prometheus output of every hand-built result.
#[test]
#[ignore = "needs promtool (scripts/setup-test-env.sh installs it; scripts/test.sh runs ignored tests)"]
fn promtool_accepts_every_result() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    for (name, r) in results() {
        let text = Prometheus::default().to_string(&r).unwrap();
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("needs promtool: scripts/setup-test-env.sh installs it");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{name}: promtool: {}{}\n{text}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A status line whose counts leave no room for the worst finding's rule id leaves the
/// finding out instead of cutting the rule id (`raid.writ...`); it heads the long output.
#[test]
fn nagios_never_cuts_the_rule_id() {
    let n = Nagios { advice_warns: true }.to_string(&mixed()).unwrap();
    let first = n.lines().next().unwrap();
    assert!(
        first.starts_with(
            "DBIO STORAGE CRITICAL - 1 critical, 2 warning, 2 unknown, 1 advice | crit=1;;;0 "
        ),
        "{first}"
    );
    assert_eq!(
        n.lines().nth(1).unwrap(),
        "CRIT MegaCli c0 vd 0 raid.write_policy: raid.write_policy is CRIT"
    );
}
