//! Every RAID fixture in testdata/raid through detection, parsing and the RAID rules.

use dbio_storage::raid::{self, BatteryState, Tool, WritePolicy};
use dbio_storage::rules::{raid_rules, Finding, Status};
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/raid")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn run(files: &[&str]) -> (Vec<raid::RaidReport>, Vec<Finding>) {
    let reports: Vec<_> = files
        .iter()
        .map(|f| raid::parse(&fixture(f), f).unwrap_or_else(|e| panic!("{f}: {e}")))
        .collect();
    let merged = raid::merge(reports);
    let findings = merged.iter().flat_map(raid_rules).collect();
    (merged, findings)
}

fn worst(findings: &[Finding], rule: &str) -> Option<Status> {
    findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.status)
        .max_by_key(|s| s.severity())
}

fn expect(files: &[&str], tool: Tool, want: &[(&str, Status)]) -> Vec<Finding> {
    let (reports, findings) = run(files);
    assert_eq!(reports.len(), 1, "{files:?}");
    assert_eq!(reports[0].tool, tool, "{files:?}");
    for (rule, status) in want {
        assert_eq!(
            worst(&findings, rule),
            Some(*status),
            "{files:?} rule {rule}: {findings:#?}"
        );
    }
    findings
}

fn summary(findings: &[Finding], rule: &str) -> String {
    findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.summary.clone())
        .collect::<Vec<_>>()
        .join(" | ")
}

#[test]
fn megacli_states() {
    // Real: -LDInfo of seven write-back VDs and -AdpBbuCmd of the same adapter, merged.
    let f = expect(
        &[
            "real/megacli-ldinfo-seven-vds-wb.txt",
            "real/megacli-adpbbucmd-ibbu08-optimal.txt",
        ],
        Tool::Megacli,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
            ("raid.vd_state", Status::Ok),
            ("raid.read_ahead", Status::Advice),
        ],
    );
    assert!(
        summary(&f, "raid.write_policy")
            .contains("write-back (configured and current), battery OK"),
        "{}",
        summary(&f, "raid.write_policy")
    );
    let f = expect(
        &["megacli-learn-cycle.txt"],
        Tool::Megacli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("configured write-back, running write-through: the battery is in a learn (relearn) cycle"), "{}", summary(&f, "raid.write_policy"));
    let f = expect(
        &["megacli-failed-battery.txt"],
        Tool::Megacli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Crit),
            // A degraded RAID 5 is one disk from data loss: CRIT (issue 28).
            ("raid.vd_state", Status::Crit),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("the battery has failed"));
    expect(
        &["megacli-always-writeback.txt"],
        Tool::Megacli,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.write_back_on_bad_battery", Status::Warn),
            ("raid.read_ahead", Status::Advice),
            ("raid.drive_cache", Status::Warn),
        ],
    );
    let f = expect(
        &[
            "megacli-no-cache-adpallinfo.txt",
            "megacli-no-cache-ldinfo.txt",
        ],
        Tool::Megacli,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("by design"));
}

#[test]
fn megacli_details_and_merge() {
    // Real -AdpAllInfo ("BBU: Present", no state) merged with real -LDInfo and -AdpBbuCmd:
    // the BBU state from -AdpBbuCmd replaces the presence-only one.
    let (reports, _) = run(&[
        "real/megacli-adpallinfo-perc6i-bbu-present.txt",
        "real/megacli-ldinfo-seven-vds-wb.txt",
        "real/megacli-adpbbucmd-ibbu08-optimal.txt",
    ]);
    let c = &reports[0].controllers[0];
    assert_eq!(c.model.as_deref(), Some("PERC 6/i Integrated"));
    assert_eq!(c.cache_bytes, Some(256 << 20));
    assert_eq!(c.battery.as_ref().unwrap().state, BatteryState::Ok);
    assert_eq!(c.battery.as_ref().unwrap().kind, "iBBU08");
    assert_eq!(c.virtual_drives.len(), 7);
    let vd = &c.virtual_drives[0];
    assert_eq!(vd.raid_level.as_deref(), Some("1"));
    assert_eq!(vd.stripe_bytes, Some(65536));
    assert_eq!(vd.configured_write, Some(WritePolicy::WriteBack));
    assert_eq!(vd.current_write, Some(WritePolicy::WriteBack));
    // -AdpAllInfo alone: the BBU is present, its state not in the output: OK with a note.
    let (_, f) = run(&["real/megacli-adpallinfo-perc6i-bbu-present.txt"]);
    assert_eq!(worst(&f, "raid.battery"), Some(Status::Ok));
    assert!(summary(&f, "raid.battery").contains("MegaCli -AdpBbuCmd -aALL"));
}

#[test]
fn storcli_text_states() {
    expect(
        &["storcli-healthy.txt"],
        Tool::Storcli,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
        ],
    );
    let f = expect(
        &["storcli-learn-cycle.txt"],
        Tool::Storcli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("learn"));
    let f = expect(
        &["storcli-failed-battery.txt"],
        Tool::Storcli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Crit),
        ],
    );
    assert!(
        summary(&f, "raid.battery").contains("CacheVault CVPM02 failed"),
        "{}",
        summary(&f, "raid.battery")
    );
    expect(
        &["storcli-always-writeback.txt"],
        Tool::Storcli,
        &[
            ("raid.write_back_on_bad_battery", Status::Warn),
            ("raid.read_ahead", Status::Advice),
            ("raid.drive_cache", Status::Warn),
        ],
    );
    let f = expect(
        &["perccli-charging.txt"],
        Tool::Storcli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("charging"));
    let (reports, _) = run(&["storcli-healthy.txt"]);
    let vd = &reports[0].controllers[0].virtual_drives[1];
    assert_eq!(vd.os_device.as_deref(), Some("/dev/sdb"));
    assert_eq!(vd.stripe_bytes, Some(256 * 1024));
    assert_eq!(vd.size.as_deref(), Some("2.181 TB"));
}

#[test]
fn storcli_json_states() {
    expect(
        &["storcli-healthy.json"],
        Tool::StorcliJson,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
        ],
    );
    let f = expect(
        &["storcli-learn-cycle.json"],
        Tool::StorcliJson,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("learn"));
    let (reports, _) = run(&["storcli-healthy.json"]);
    let c = &reports[0].controllers[0];
    assert_eq!(c.model.as_deref(), Some("AVAGO MegaRAID SAS 9361-8i"));
    assert_eq!(c.virtual_drives[1].stripe_bytes, Some(65536));
    assert_eq!(
        c.battery.as_ref().unwrap().next_learn.as_deref(),
        Some("2020/09/13  12:06:22")
    );
}

#[test]
fn ssacli_states() {
    expect(
        &["ssacli-healthy.txt"],
        Tool::Ssacli,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
        ],
    );
    let f = expect(
        &["ssacli-recharging.txt"],
        Tool::Ssacli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    let s = summary(&f, "raid.write_policy");
    assert!(
        s.contains("Temporarily Disabled (Cache disabled; low batteries)")
            && s.contains("charging"),
        "{s}"
    );
    expect(
        &["ssacli-failed-nobattery-writecache.txt"],
        Tool::Ssacli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Crit),
            ("raid.write_back_on_bad_battery", Status::Crit),
            ("raid.drive_cache", Status::Warn),
        ],
    );
    let f = expect(
        &["hpacucli-no-cache-board.txt"],
        Tool::Ssacli,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.vd_state", Status::Ok),
        ],
    );
    assert!(
        summary(&f, "raid.write_policy").contains("by design"),
        "{}",
        summary(&f, "raid.write_policy")
    );
}

#[test]
fn cciss_states() {
    expect(
        &["real/cciss_vol_status-p410i-flash.txt"],
        Tool::CcissVolStatus,
        &[("raid.vd_state", Status::Ok)],
    );
    let f = expect(
        &["cciss_vol_status-degraded.txt"],
        Tool::CcissVolStatus,
        // Interim recovery mode is a degraded array: CRIT (issue 28, as check_raid).
        &[("raid.vd_state", Status::Crit)],
    );
    assert!(summary(&f, "raid.vd_state").contains("Using interim recovery mode"));
}

#[test]
fn arcconf_states() {
    expect(
        &["real/arcconf-getconfig-serveraid8k-battery.txt"],
        Tool::Arcconf,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
        ],
    );
    let f = expect(
        &["arcconf-battery-charging.txt"],
        Tool::Arcconf,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("charging"));
    expect(
        &["arcconf-writeback-failed-battery.txt"],
        Tool::Arcconf,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.write_back_on_bad_battery", Status::Crit),
            ("raid.drive_cache", Status::Warn),
            ("raid.battery", Status::Crit),
        ],
    );
}

#[test]
fn twcli_states() {
    expect(
        &["real/tw_cli-c0-show-all-9750-verifying.txt"],
        Tool::TwCli,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
        ],
    );
    let f = expect(
        &["tw_cli-bbu-testing.txt"],
        Tool::TwCli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    assert!(
        summary(&f, "raid.write_policy").contains("learn"),
        "{}",
        summary(&f, "raid.write_policy")
    );
    let f = expect(
        &["tw_cli-no-bbu.txt"],
        Tool::TwCli,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("by design"));
}

#[test]
fn omreport_states() {
    expect(
        &["omreport-healthy.txt"],
        Tool::Omreport,
        &[
            ("raid.write_policy", Status::Ok),
            ("raid.battery", Status::Ok),
        ],
    );
    // The seed article's case: a PERC battery charging after its relearn.
    let f = expect(
        &[
            "omreport-vdisk-charging.txt",
            "omreport-battery-charging.txt",
        ],
        Tool::Omreport,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    assert!(summary(&f, "raid.write_policy").contains("charging"));
    expect(
        &["omreport-learning.txt"],
        Tool::Omreport,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    expect(
        &["omreport-failed-battery.txt"],
        Tool::Omreport,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Crit),
        ],
    );
    expect(
        &["omreport-force-writeback.txt"],
        Tool::Omreport,
        &[
            ("raid.write_back_on_bad_battery", Status::Warn),
            ("raid.read_ahead", Status::Advice),
            ("raid.drive_cache", Status::Warn),
            // A learn cycle that is due is advice (schedule it), not an alarm.
            ("raid.battery", Status::Advice),
        ],
    );
}

#[test]
fn unrecognised_and_empty() {
    let e = raid::parse("Some other tool\nversion 3\n", "x.txt").unwrap_err();
    assert!(e
        .to_string()
        .contains("\"Some other tool\" / \"version 3\""));
    // A tool that says there is no controller was understood: OK with its words as a note.
    let r = raid::parse("CLI Version = 007\nController = 0\nStatus = Failure\nDescription = Controller 0 not found\n", "y").unwrap();
    let f = raid_rules(&r);
    assert!(f.iter().all(|f| f.status == Status::Ok), "{f:#?}");
    assert!(
        f.iter()
            .any(|f| f.summary.contains("Controller 0 not found")),
        "{f:#?}"
    );
    // Any other failure with nothing read is not.
    let e = raid::parse(
        "CLI Version = 007\nController = 0\nStatus = Failure\nDescription = Un-supported command\n",
        "y",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("storcli/perccli output has no controller"),
        "{e}"
    );
    assert!(raid::parse("{\"Controllers\": [", "z")
        .unwrap_err()
        .to_string()
        .contains("JSON"));
}

#[test]
fn megacli_ldpdinfo_physical_drive_lines_do_not_leak_into_the_vd() {
    let (reports, f) = run(&["megacli-ldpdinfo.txt"]);
    let c = &reports[0].controllers[0];
    assert_eq!(c.virtual_drives.len(), 1);
    let vd = &c.virtual_drives[0];
    assert_eq!(vd.size.as_deref(), Some("1.088 TB"));
    assert_eq!(vd.state.as_deref(), Some("Optimal"));
    assert_eq!(vd.raid_level.as_deref(), Some("10"));
    assert_eq!(vd.current_write, Some(WritePolicy::WriteThrough));
    // No battery output in this file: the fallback is reported, the cause is unknown.
    assert_eq!(worst(&f, "raid.write_policy"), Some(Status::Crit));
    assert!(
        summary(&f, "raid.write_policy").contains("battery state not in this output"),
        "{}",
        summary(&f, "raid.write_policy")
    );
}

#[test]
fn twcli_old_firmware_columns_and_on_off_cache() {
    // Older tw_cli: %Cmpl instead of %RCmpl %V/I/M, and the write cache as ON/OFF; no BBU
    // in the controller list: write cache on with nothing to protect it.
    let f = expect(
        &["tw_cli-old-firmware.txt"],
        Tool::TwCli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Warn),
        ],
    );
    let (reports, _) = run(&["tw_cli-old-firmware.txt"]);
    let c = &reports[0].controllers[0];
    assert_eq!(c.model.as_deref(), Some("9550SX-8LP"));
    let vd = &c.virtual_drives[0];
    assert_eq!(vd.size.as_deref(), Some("1396.95 GB"));
    assert_eq!(vd.stripe_bytes, Some(65536));
    assert_eq!(vd.current_write, Some(WritePolicy::WriteBack));
    assert!(
        summary(&f, "raid.write_policy").contains("no working battery"),
        "{}",
        summary(&f, "raid.write_policy")
    );
}

#[test]
fn ssacli_cache_size_without_unit_is_gb() {
    let (reports, _) = run(&["ssacli-healthy.txt"]);
    assert_eq!(reports[0].controllers[0].cache_bytes, Some(1 << 30));
    assert_eq!(
        reports[0].controllers[0].model.as_deref(),
        Some("Smart Array P420i")
    );
    let (reports, _) = run(&["ssacli-recharging.txt"]);
    assert_eq!(reports[0].controllers[0].cache_bytes, Some(1 << 30));
}

#[test]
fn ssacli_permanently_disabled_cache() {
    let f = expect(
        &["ssacli-permanently-disabled.txt"],
        Tool::Ssacli,
        &[
            ("raid.write_policy", Status::Crit),
            ("raid.battery", Status::Crit),
        ],
    );
    let s = summary(&f, "raid.write_policy");
    assert!(s.contains("Cache Status: Permanently Disabled (Cache disabled; backup power source failed to charge"), "{s}");
    assert!(s.contains("the battery has failed"), "{s}");
}

/// The verdict `dbio check --raid-output FILE --nagios` gives one file: the report's
/// Nagios status (advice counts as OK), UNKNOWN when the output is not understood.
fn verdict(path: &std::path::Path, name: &str) -> (Status, Vec<Finding>) {
    // Tool output is not always UTF-8; read it lossily as `dbio check` does.
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = String::from_utf8_lossy(&bytes);
    match raid::parse(&text, name) {
        Ok(r) => {
            let findings = raid_rules(&r);
            let report = dbio_schema::check::CheckReport::new(findings.clone());
            (report.nagios_status(false), findings)
        }
        Err(e) => (
            Status::Unknown,
            vec![dbio_storage::rules::raid_unknown(name, &e.to_string())],
        ),
    }
}

/// Every real capture in testdata/raid/real against the verdict in testdata/raid/expected.tsv
/// (and a phrase the findings must contain), counted per tool family.
#[test]
fn real_captures_get_the_expected_verdict() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/raid");
    let table = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
    let mut wrong = Vec::new();
    let mut per_family: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut listed = std::collections::HashSet::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            cols.len(),
            4,
            "expected.tsv: 4 tab-separated columns: {line:?}"
        );
        let (file, family, want, phrase) = (cols[0], cols[1], cols[2], cols[3]);
        listed.insert(file.to_string());
        let (got, findings) = verdict(&dir.join("real").join(file), file);
        let e = per_family.entry(family.to_string()).or_default();
        e.0 += 1;
        let phrase_ok = phrase == "-" || findings.iter().any(|f| f.summary.contains(phrase));
        if got.label() == want && phrase_ok {
            e.1 += 1;
        } else {
            let lines: Vec<String> = findings
                .iter()
                .filter(|f| f.status != Status::Ok)
                .map(|f| {
                    format!(
                        "    {} {} {}: {}",
                        f.status.label(),
                        f.device,
                        f.rule,
                        f.summary
                    )
                })
                .collect();
            wrong.push(format!(
                "{file}: want {want}{}, got {}\n{}",
                if phrase == "-" {
                    String::new()
                } else {
                    format!(" with \"{phrase}\"")
                },
                got.label(),
                lines.join("\n")
            ));
        }
    }
    // Every capture in real/ has a verdict.
    for entry in std::fs::read_dir(dir.join("real")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if !name.starts_with('.') {
            assert!(listed.contains(&name), "{name} has no line in expected.tsv");
        }
    }
    let summary: Vec<String> = per_family
        .iter()
        .map(|(k, (n, ok))| format!("{k}: {n} files, {ok} right, {} wrong", n - ok))
        .collect();
    assert!(
        wrong.is_empty(),
        "{}\n\n{}",
        summary.join("\n"),
        wrong.join("\n")
    );
    assert!(listed.len() >= 40, "{} real captures", listed.len());
}

/// MegaCli and storcli used to carry two copies of the battery logic that disagreed on an
/// unknown state (Unknown in one, OK in the other). One function decides for both.
#[test]
fn one_battery_function_for_megacli_and_storcli() {
    use dbio_storage::raid::{battery_state, battery_state_word, BatteryFlags};
    // No state word, flags printed and none raised: healthy (old MegaCli's empty "Battery state:").
    let quiet = BatteryFlags {
        flags_seen: true,
        ..Default::default()
    };
    assert_eq!(battery_state(&quiet), BatteryState::Ok);
    // No state word and no flags: not known.
    assert_eq!(
        battery_state(&BatteryFlags::default()),
        BatteryState::Unknown
    );
    // A word nobody knows stays unknown, whoever printed it.
    let odd = BatteryFlags {
        state_word: Some("Frobnicated".into()),
        flags_seen: true,
        ..Default::default()
    };
    assert_eq!(battery_state(&odd), BatteryState::Unknown);
    // Flags override the word.
    let learn = BatteryFlags {
        state_word: Some("Non Operational".into()),
        learn_active: true,
        charging: true,
        flags_seen: true,
        ..Default::default()
    };
    assert_eq!(battery_state(&learn), BatteryState::Learning);
    let replace = BatteryFlags {
        state_word: Some("Optimal".into()),
        replace: true,
        ..Default::default()
    };
    assert_eq!(battery_state(&replace), BatteryState::Failed);
    for (w, s) in [
        ("Optimal", BatteryState::Ok),
        ("ZMM Optimal", BatteryState::Ok),
        ("Opt", BatteryState::Ok),
        ("Learning", BatteryState::Learning),
        ("Recharging", BatteryState::Charging),
        ("Failed (Replace Batteries)", BatteryState::Failed),
        ("Not Installed", BatteryState::Missing),
        ("Dgd (Needs Attention)", BatteryState::Degraded),
        ("Present", BatteryState::Present),
    ] {
        assert_eq!(battery_state_word(w), s, "{w}");
    }
    // The same real battery outputs through both parsers give the same state: a healthy
    // MegaCli BBU whose "Battery state:" is empty, and a storcli BBU table.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/raid/real");
    let mega = std::fs::read_to_string(dir.join("megacli-bbucmd-ibbu-ok.txt")).unwrap();
    let r = raid::parse(&mega, "m").unwrap();
    assert_eq!(
        r.controllers[0].battery.as_ref().unwrap().state,
        BatteryState::Ok
    );
    let learning =
        std::fs::read_to_string(dir.join("megacli-bbustatus-non-operational-learning.txt"))
            .unwrap();
    let r = raid::parse(&learning, "m").unwrap();
    assert_eq!(
        r.controllers[0].battery.as_ref().unwrap().state,
        BatteryState::Learning
    );
}

/// `omreport storage controller -fmt ssv` (real, dellhw_exporter's test input) used to be
/// UNKNOWN: it is read (model, cache memory) and judged on what it shows, with the
/// commands that complete it; given with the vdisk and battery listings of the same
/// controller it merges into one controller.
#[test]
fn omreport_storage_controller_listing() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/raid/real");
    let text =
        std::fs::read_to_string(dir.join("omreport-ssv-controller-h730-1024mb.txt")).unwrap();
    let r = raid::parse(&text, "c").unwrap();
    assert_eq!(r.tool, Tool::Omreport);
    let c = &r.controllers[0];
    assert_eq!(c.model.as_deref(), Some("PERC H730 Mini"));
    assert_eq!(c.cache_bytes, Some(1 << 30));
    assert!(c.virtual_drives.is_empty() && c.battery.is_none());
    let f = raid_rules(&r);
    assert!(f.iter().all(|f| f.status == Status::Ok), "{f:#?}");
    assert!(summary(&f, "raid.cache").contains("omreport storage vdisk"));
    let mut all = text.clone();
    for name in [
        "omreport-ssv-vdisk-h730-wt.txt",
        "omreport-ssv-battery-h730-ready.txt",
    ] {
        all.push('\n');
        all.push_str(&std::fs::read_to_string(dir.join(name)).unwrap());
    }
    let r = raid::parse(&all, "all").unwrap();
    assert_eq!(r.controllers.len(), 1, "{:#?}", r.controllers);
    let c = &r.controllers[0];
    assert_eq!(c.virtual_drives.len(), 2);
    assert_eq!(c.battery.as_ref().unwrap().state, BatteryState::Ok);
    assert_eq!(c.cache_bytes, Some(1 << 30));
}

/// The physical drives every family's reader finds in real captures (issue 28): states,
/// error counters and S.M.A.R.T flags as the tools print them, enclosures left out.
#[test]
fn physical_drives_of_every_family() {
    let drives = |f: &str| {
        let (r, _) = run(&[f]);
        r[0].controllers
            .iter()
            .flat_map(|c| c.physical_drives.clone())
            .collect::<Vec<_>>()
    };
    let state = |d: &[dbio_storage::raid::PhysicalDrive], id: &str| {
        d.iter()
            .find(|d| d.id == id)
            .unwrap_or_else(|| panic!("no drive {id}: {d:#?}"))
            .state
            .clone()
            .unwrap()
    };
    // MegaCli -PDList: 12 drives, one Unconfigured(bad), one hot spare.
    let d = drives("real/megacli-pdlist-unconfigured-bad.txt");
    assert_eq!(d.len(), 12);
    assert_eq!(state(&d, "15:10"), "Unconfigured(bad)");
    assert_eq!(state(&d, "15:11"), "Hotspare, Spun down");
    // MegaCli -PDList with a drive that predicts its failure.
    let d = drives("real/megacli-pdlist-smart-alert-predictive-423.txt");
    assert_eq!(d.len(), 8);
    let bad = d.iter().find(|d| d.id == "252:2").unwrap();
    assert_eq!(bad.predictive_failures, Some(423));
    assert_eq!(bad.media_errors, Some(71));
    assert!(bad.smart_alert);
    assert_eq!(d.iter().filter(|d| d.smart_alert).count(), 1);
    // MegaCli -LdPdInfo: the drives after the virtual drive do not spill into it.
    let (r, f) = run(&["real/megacli-ldpdinfo-smart-alert-media-errors.txt"]);
    let c = &r[0].controllers[0];
    assert_eq!(c.virtual_drives.len(), 1);
    assert_eq!(c.virtual_drives[0].state.as_deref(), Some("Optimal"));
    assert_eq!(c.physical_drives.len(), 2);
    assert_eq!(c.physical_drives[0].media_errors, Some(72605));
    assert_eq!(worst(&f, "raid.drive_errors"), Some(Status::Warn));
    assert_eq!(worst(&f, "raid.vd_state"), Some(Status::Ok));
    // arcconf: the failed drive, the enclosure (Device #6) is not a drive.
    let d = drives("real/arcconf-getconfig-2025s-degraded-failed-drive.txt");
    assert_eq!(d.len(), 2, "{d:#?}");
    assert_eq!(state(&d, "device 1"), "Failed");
    // tw_cli `info c0 drivestatus`.
    let d = drives("real/tw_cli-drivestatus-degraded-port.txt");
    assert_eq!(state(&d, "p0"), "DEGRADED");
    assert_eq!(state(&d, "p1"), "OK");
    // ssacli `show config`.
    let d = drives("real/hpacucli-config-p400i-logicaldrive.txt");
    assert_eq!(state(&d, "1I:1:2"), "OK");
    // storcli JSON: `/cN/eE/sS show` and `/cN show` (PD LIST).
    let d = drives("real/storcli-json-drive-offline.json");
    assert_eq!(state(&d, "35:12"), "Offln");
    let d = drives("real/storcli-json-c0-show-pd-list-ugood.json");
    assert_eq!(d.len(), 12);
    assert!(d.iter().all(|d| d.state.as_deref() == Some("UGood")));
    // MegaCli -ShowSummary: controller, BBU, drives and the virtual drive.
    let (r, f) = run(&["real/megacli-showsummary-9266-8i.txt"]);
    let c = &r[0].controllers[0];
    assert_eq!(c.model.as_deref(), Some("LSI MegaRAID SAS 9266-8i"));
    assert_eq!(c.battery.as_ref().unwrap().state, BatteryState::Ok);
    assert_eq!(state(&c.physical_drives, "slot 1"), "Online");
    assert_eq!(c.virtual_drives[0].raid_level.as_deref(), Some("1"));
    assert!(f.iter().all(|f| f.status == Status::Ok), "{f:#?}");
}

/// One drive write cache rule for every family: MegaCli `Disk Cache Policy: Enabled`,
/// storcli `Disk Cache Policy = Enabled` and arcconf's physical `Write Cache: Enabled
/// (write-back)` all give the same WARN finding, with the line that shows it.
#[test]
fn one_drive_cache_rule_for_every_family() {
    for (files, tool, line) in [
        (
            &["megacli-always-writeback.txt"][..],
            Tool::Megacli,
            "Disk Cache Policy",
        ),
        (
            &["storcli-always-writeback.txt"][..],
            Tool::Storcli,
            "Disk Cache Policy",
        ),
        (
            &["real/arcconf-getconfig-6805e-degraded-failed-drive.txt"][..],
            Tool::Arcconf,
            "Write Cache",
        ),
        (
            &["real/arcconf-getconfig-3405-drive-write-cache.txt"][..],
            Tool::Arcconf,
            "Write Cache",
        ),
    ] {
        let f = expect(files, tool, &[("raid.drive_cache", Status::Warn)]);
        let dc: Vec<&Finding> = f.iter().filter(|f| f.rule == "raid.drive_cache").collect();
        assert!(
            dc.iter().all(
                |f| f.summary == "drive write caches are enabled behind the controller"
                    && f.evidence.iter().any(|e| e.contains(line))
            ),
            "{files:?}: {dc:#?}"
        );
    }
}
