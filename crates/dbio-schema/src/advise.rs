//! `dbio mysql advise`'s result: what a MySQL or MariaDB server did over an interval, judged by
//! rules ([`Advice`]: the rule, the measured numbers beside their since-startup values, the
//! thresholds, the suggested change, its risk and where the rule comes from), and the storage
//! under the server's datadir ([`Storage`]). Levels are `dbio check`'s [`Status`], with the same
//! exit codes and Nagios mapping ([`AdviseResult::nagios_status`]).

use crate::check::{CheckReport, Counts, Status};
use serde::Serialize;

/// The whole advice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AdviseResult {
    /// The server looked at.
    pub server: Server,
    /// The time between the first and the last sample, seconds: every rate is over it.
    pub interval_s: f64,
    /// Samples taken (each one SHOW GLOBAL STATUS, SHOW GLOBAL VARIABLES, a processlist
    /// query and, where the version has it, the replica status).
    pub samples: u32,
    /// Statements dbio sent the server per sample.
    pub queries_per_sample: u32,
    /// The worst status of the rules and of the storage check.
    pub status: Status,
    /// Findings per status (rules only).
    pub counts: Counts,
    /// One finding per rule that applies to this server's version, worst first.
    pub findings: Vec<Advice>,
    /// Facts that limited what could be judged (a privilege missing, a counter reset).
    pub notes: Vec<String>,
    /// The storage under the datadir (absent when the datadir is not on this machine).
    pub storage: Option<Storage>,
}

/// The server's identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Server {
    /// `host:port`.
    pub address: String,
    /// `@@version`.
    pub version: String,
    /// `mysql` or `mariadb`.
    pub flavor: String,
    /// `Uptime` at the last sample, seconds.
    pub uptime_s: u64,
    /// Whether it replicates from a source (a replica status was returned).
    pub replica: bool,
    /// `@@datadir`.
    pub datadir: String,
}

/// One rule's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Advice {
    /// The rule (`query_cache`, `buffer_pool`, ...).
    pub rule: String,
    /// Its level.
    pub status: Status,
    /// One line: what was found.
    pub summary: String,
    /// The numbers the verdict rests on.
    pub evidence: Vec<Figure>,
    /// The thresholds the numbers were held against, as people write them.
    pub thresholds: Vec<String>,
    /// The change suggested, as statements for a running server (absent: needs a restart, or
    /// nothing to change).
    pub set_global: Option<String>,
    /// The same change for the option file, `[mysqld]` section.
    pub my_cnf: Option<String>,
    /// What applying the change may cost.
    pub risk: Option<String>,
    /// Where the rule comes from: an article or a manual page.
    pub source: String,
}

/// One measured number: over the interval, and the same since the server started (for
/// counters; settings and gauges have none). The unit is the name's suffix (`_per_s`, `_pct`,
/// `_bytes`, `_s`, `_ms`; none: a count or a setting).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// The name, ending in its unit.
    pub name: String,
    /// Over the interval (a setting or gauge: its value at the last sample).
    pub interval: f64,
    /// Since startup (counter / Uptime), for comparison.
    pub since_startup: Option<f64>,
}

/// The storage under the datadir.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Storage {
    /// The datadir path looked at.
    pub datadir: String,
    /// The device stack, top (what the filesystem is on) to the disks: `name (kind)`.
    pub devices: Vec<String>,
    /// The disks at the bottom.
    pub leaf_disks: Vec<String>,
    /// The devices' iostat figures over the interval.
    pub iostat: Vec<DeviceRates>,
    /// `dbio check` of the datadir (absent when it could not run: see `notes`).
    pub check: Option<CheckReport>,
    /// What could not be read.
    pub notes: Vec<String>,
}

/// One device's iostat figures over the interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceRates {
    /// Kernel name.
    pub device: String,
    /// Reads completed per second.
    pub r_per_s: f64,
    /// Writes completed per second.
    pub w_per_s: f64,
    /// KiB written per second.
    pub wkb_per_s: f64,
    /// Mean write time, queue included.
    pub w_await_ms: f64,
    /// Cache flushes (fsync reaching the device) per second.
    pub f_per_s: f64,
    /// Mean flush time.
    pub f_await_ms: f64,
    /// Share of time busy.
    pub util_pct: f64,
}

fn worst<'a>(it: impl Iterator<Item = &'a Status>) -> Status {
    it.copied()
        .max_by_key(|s| s.severity())
        .unwrap_or(Status::Ok)
}

impl AdviseResult {
    /// The result of `findings` (sorted worst first here), with the status the rules and the
    /// storage check give together.
    pub fn new(
        server: Server,
        interval_s: f64,
        samples: u32,
        queries_per_sample: u32,
        mut findings: Vec<Advice>,
        notes: Vec<String>,
        storage: Option<Storage>,
    ) -> AdviseResult {
        findings.sort_by_key(|f| std::cmp::Reverse(f.status.severity()));
        let mut counts = Counts::default();
        for f in &findings {
            match f.status {
                Status::Ok => counts.ok += 1,
                Status::Advice => counts.advice += 1,
                Status::Unknown => counts.unknown += 1,
                Status::Warn => counts.warn += 1,
                Status::Crit => counts.crit += 1,
            }
        }
        let storage_status = storage
            .as_ref()
            .and_then(|s| s.check.as_ref())
            .map(|c| c.status);
        let status = worst(
            findings
                .iter()
                .map(|f| &f.status)
                .chain(storage_status.iter()),
        );
        AdviseResult {
            server,
            interval_s,
            samples,
            queries_per_sample,
            status,
            counts,
            findings,
            notes,
            storage,
        }
    }

    /// The status a monitoring system sees: ADVICE counts as OK, or as WARN with
    /// `advice_warns`, as [`CheckReport::nagios_status`].
    pub fn nagios_status(&self, advice_warns: bool) -> Status {
        match self.status {
            Status::Advice if advice_warns => Status::Warn,
            Status::Advice => Status::Ok,
            s => s,
        }
    }

    /// The finding of `rule`, if the rule applied.
    pub fn finding(&self, rule: &str) -> Option<&Advice> {
        self.findings.iter().find(|f| f.rule == rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn advice(rule: &str, status: Status) -> Advice {
        Advice {
            rule: rule.into(),
            status,
            summary: String::new(),
            evidence: vec![],
            thresholds: vec![],
            set_global: None,
            my_cnf: None,
            risk: None,
            source: String::new(),
        }
    }

    #[test]
    fn worst_first_and_advice_is_ok_for_nagios() {
        let server = Server {
            address: "h:1".into(),
            version: "10.11.19-MariaDB".into(),
            flavor: "mariadb".into(),
            uptime_s: 1,
            replica: false,
            datadir: "/var/lib/mysql/".into(),
        };
        let r = AdviseResult::new(
            server.clone(),
            60.0,
            2,
            3,
            vec![
                advice("a", Status::Ok),
                advice("b", Status::Advice),
                advice("c", Status::Warn),
            ],
            vec![],
            None,
        );
        assert_eq!(r.findings[0].rule, "c");
        assert_eq!(r.status, Status::Warn);
        assert_eq!((r.counts.ok, r.counts.advice, r.counts.warn), (1, 1, 1));
        let r = AdviseResult::new(
            server,
            60.0,
            2,
            3,
            vec![advice("b", Status::Advice)],
            vec![],
            None,
        );
        assert_eq!(r.nagios_status(false), Status::Ok);
        assert_eq!(r.nagios_status(true), Status::Warn);
        assert_eq!(r.nagios_status(false).nagios_code(), 0);
    }
}
