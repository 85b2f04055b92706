//! The result of `dbio check`: [`Finding`]s (one rule's verdict on one subject, with the
//! evidence, why it matters and the fix), their [`Status`] and [`Labels`], and the whole
//! [`CheckReport`] grouped by device. `dbio-storage` produces them (its rules and the live
//! audit); the exporters under dbio-report's `export` render them (text, Nagios, Prometheus; JSON is
//! the serde form of [`CheckReport`]).

use serde::Serialize;

/// Outcome of one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Fine.
    Ok,
    /// Tuning advice (controller read-ahead, a verify running, a learn cycle due): shown,
    /// but no alarm; Nagios exits 0 for it unless `--advice-warns`.
    Advice,
    /// Could not be decided.
    Unknown,
    /// Costs performance or safety; fix when convenient.
    Warn,
    /// Data at risk or a large performance loss now.
    Crit,
}

impl Status {
    /// Severity for sorting: CRIT > WARN > UNKNOWN > ADVICE > OK.
    pub fn severity(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Advice => 1,
            Status::Unknown => 2,
            Status::Warn => 3,
            Status::Crit => 4,
        }
    }
    /// Nagios plugin exit code: 0 OK (and ADVICE), 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    pub fn nagios_code(self) -> u8 {
        match self {
            Status::Ok | Status::Advice => 0,
            Status::Warn => 1,
            Status::Crit => 2,
            Status::Unknown => 3,
        }
    }
    /// `OK`, `ADVICE`, `WARN`, `CRIT`, `UNKNOWN`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Advice => "ADVICE",
            Status::Unknown => "UNKNOWN",
            Status::Warn => "WARN",
            Status::Crit => "CRIT",
        }
    }
}

/// One rule's verdict on one device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Rule id, e.g. `io.scheduler`, `raid.write_policy`.
    pub rule: String,
    /// What it is about: a disk, a mount point, `raid c0 vd 1`.
    pub device: String,
    /// Verdict.
    pub status: Status,
    /// One line.
    pub summary: String,
    /// The values and tool lines the verdict rests on.
    pub evidence: Vec<String>,
    /// Why it matters for a database.
    pub why: String,
    /// The command that fixes it (absent when nothing needs fixing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// What the finding is about, one fact per field (the Prometheus labels).
    #[serde(skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    /// The audited paths whose storage this finding is about (each listed once, however many
    /// of them share the device); empty for RAID controllers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// What a finding is about, one fact per field; each is set when known. Prometheus output
/// uses them as labels, so `device` holds a kernel device name only.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Labels {
    /// Kernel name of the block device (`sda`, `nvme0n1p1`, `dm-0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Mount point of the filesystem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mountpoint: Option<String>,
    /// A path that could not be resolved to a mount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// RAID tool (`MegaCli`, `storcli`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// RAID controller as the tool names it (`c0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// Virtual drive (logical drive, unit) on the controller (`vd 0`, `u0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    /// File holding saved RAID tool output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Labels {
    /// No field set.
    pub fn is_empty(&self) -> bool {
        *self == Labels::default()
    }

    /// `(name, value)` of every field set, in a fixed order.
    pub fn pairs(&self) -> Vec<(&'static str, &str)> {
        [
            ("device", &self.device),
            ("mountpoint", &self.mountpoint),
            ("path", &self.path),
            ("tool", &self.tool),
            ("controller", &self.controller),
            ("volume", &self.volume),
            ("source", &self.source),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .collect()
    }

    /// A kernel device name from a name or a `/dev/` path (`/dev/sda` -> `sda`); `None` for
    /// anything else (empty, spaces, a path outside /dev).
    pub fn device_name(s: &str) -> Option<String> {
        let n = s.strip_prefix("/dev/").unwrap_or(s);
        let ok = n.bytes().any(|b| b.is_ascii_alphanumeric())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:!".contains(&b));
        ok.then(|| n.to_string())
    }
}

impl Finding {
    /// A finding with no fix.
    pub fn new(
        rule: &str,
        device: &str,
        status: Status,
        summary: impl Into<String>,
        why: impl Into<String>,
    ) -> Self {
        Finding {
            rule: rule.to_string(),
            device: device.to_string(),
            status,
            summary: summary.into(),
            evidence: Vec::new(),
            why: why.into(),
            fix: None,
            labels: Labels::default(),
            paths: Vec::new(),
        }
    }
    /// Sets the labels.
    pub fn labels(mut self, labels: Labels) -> Self {
        self.labels = labels;
        self
    }
    /// Adds evidence lines.
    pub fn evidence<I: IntoIterator<Item = S>, S: Into<String>>(mut self, lines: I) -> Self {
        self.evidence.extend(lines.into_iter().map(Into::into));
        self
    }
    /// Sets the fix (only kept when the status is not OK).
    pub fn fix(mut self, cmd: impl Into<String>) -> Self {
        if self.status != Status::Ok {
            self.fix = Some(cmd.into());
        }
        self
    }
}

/// Counts of findings per status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// OK findings.
    pub ok: usize,
    /// WARN findings.
    pub warn: usize,
    /// CRIT findings.
    pub crit: usize,
    /// UNKNOWN findings.
    pub unknown: usize,
    /// ADVICE findings (tuning advice, no alarm).
    pub advice: usize,
}

/// The findings about one device, worst first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceGroup {
    /// Device, mount point or controller.
    pub device: String,
    /// Worst status in the group.
    pub status: Status,
    /// Findings, worst first.
    pub findings: Vec<Finding>,
}

/// The whole audit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// Worst status overall.
    pub status: Status,
    /// Counts per status.
    pub counts: Counts,
    /// Findings grouped by device, worst group first.
    pub devices: Vec<DeviceGroup>,
}

fn worst<'a, I: IntoIterator<Item = &'a Finding>>(it: I) -> Status {
    it.into_iter()
        .map(|f| f.status)
        .max_by_key(|s| s.severity())
        .unwrap_or(Status::Ok)
}

impl CheckReport {
    /// Groups `findings` by device (first-seen order), worst group first, worst finding first.
    pub fn new(findings: Vec<Finding>) -> Self {
        let mut groups: Vec<DeviceGroup> = Vec::new();
        let mut counts = Counts::default();
        for f in findings {
            match f.status {
                Status::Ok => counts.ok += 1,
                Status::Warn => counts.warn += 1,
                Status::Crit => counts.crit += 1,
                Status::Unknown => counts.unknown += 1,
                Status::Advice => counts.advice += 1,
            }
            if let Some(g) = groups.iter_mut().find(|g| g.device == f.device) {
                g.findings.push(f);
            } else {
                groups.push(DeviceGroup {
                    device: f.device.clone(),
                    status: Status::Ok,
                    findings: vec![f],
                });
            }
        }
        for g in &mut groups {
            g.findings
                .sort_by_key(|f| std::cmp::Reverse(f.status.severity()));
            g.status = worst(&g.findings);
        }
        groups.sort_by_key(|g| std::cmp::Reverse(g.status.severity()));
        let status = groups
            .iter()
            .map(|g| g.status)
            .max_by_key(|s| s.severity())
            .unwrap_or(Status::Ok);
        CheckReport {
            status,
            counts,
            devices: groups,
        }
    }

    /// The status a monitoring system sees: ADVICE counts as OK, or as WARN with
    /// `advice_warns` (`dbio check --advice-warns`).
    pub fn nagios_status(&self, advice_warns: bool) -> Status {
        match self.status {
            Status::Advice if advice_warns => Status::Warn,
            Status::Advice => Status::Ok,
            s => s,
        }
    }

    /// Every finding, worst group first.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.devices.iter().flat_map(|g| g.findings.iter())
    }
}

/// The longest Nagios status text (the first line before the perfdata): monitoring UIs,
/// SMS and pager gateways cut longer lines.
pub const NAGIOS_STATUS_MAX: usize = 80;

/// A `dbio check` that could not run (a usage error, an unreadable mount table, an output
/// file that cannot be written): under Nagios it is the UNKNOWN status (exit code 3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckFailure {
    /// What went wrong, possibly over several lines.
    pub message: String,
}
