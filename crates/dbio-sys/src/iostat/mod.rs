//! `dbio iostat` reports: the figures of the chosen devices (and `--group` sums) between two
//! `/proc/diskstats` samples, as one serde [`Report`] per interval; the `--explain` reading of
//! those figures ([`explain_figures`]). Its renderers (text table, CSV, JSON lines, Prometheus)
//! live in dbio-report's `export` module.
//!
//! Everything here is pure over samples except [`resolve_name`] and [`Selection::live`] checks
//! (which look a node or `/sys/class/block` up on the live system) and [`dev_info`] (which
//! resolves the device stack). This module never prints.

mod explain;

pub use explain::{explain_figures, DevInfo};

use crate::diskstats::{self, Delta};

use dbio_schema::iostat::{DeviceRow, Kind, Report};
use dbio_schema::iostat::{DiskStat, Figures};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// A device or group the user named that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A device argument that is not in the sample.
    #[error("unknown device {arg:?}: the devices in /proc/diskstats{} are: {known}", if *.replay { " of the replayed file" } else { "" })]
    UnknownDevice {
        /// The argument as given.
        arg: String,
        /// The device names of the sample, comma separated.
        known: String,
        /// Whether the sample came from a replayed file.
        replay: bool,
    },
    /// A `--group` that is not `NAME=DEV,DEV`.
    #[error("--group {spec:?}: expected NAME=dev1,dev2 (e.g. --group data=sdb,sdc)")]
    BadGroup {
        /// The argument as given.
        spec: String,
    },
}

/// A `--group`: a name and the devices summed under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The name given.
    pub name: String,
    /// Kernel names of the members.
    pub members: Vec<String>,
}

/// Which devices a report shows.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Devices named on the command line (kernel names): only these, even idle or partitions.
    pub named: Vec<String>,
    /// Groups, shown after the devices.
    pub groups: Vec<Group>,
    /// Also idle devices.
    pub all: bool,
    /// Also partitions.
    pub partitions: bool,
    /// Samples of the live system (partitions are told by `/sys/class/block`, else by name).
    pub live: bool,
    /// A device shown once stays in every later report, idle or not (Prometheus: a series
    /// must not vanish because its device was idle for an interval, as node_exporter never
    /// drops a device).
    pub keep_shown: bool,
}

impl Selection {
    fn is_partition(&self, name: &str, names: &[&str]) -> bool {
        if self.live {
            let p = Path::new("/sys/class/block").join(name);
            if p.exists() {
                return p.join("partition").exists();
            }
        }
        diskstats::looks_like_partition(name, names)
    }
}

/// Resolves a device argument to its name in the sample: a kernel name, /dev/NAME, or (live)
/// a node whose major:minor is in the sample (e.g. /dev/mapper/vg-lv).
pub fn resolve_name(arg: &str, sample: &[DiskStat], live: bool) -> Result<String, Error> {
    if sample.iter().any(|d| d.name == arg) {
        return Ok(arg.to_string());
    }
    if let Some(bare) = arg.strip_prefix("/dev/") {
        if sample.iter().any(|d| d.name == bare) {
            return Ok(bare.to_string());
        }
    }
    if live {
        if let Ok((ma, mi)) = crate::mounts::block_dev_numbers(Path::new(arg)) {
            if let Some(d) = sample.iter().find(|d| d.major == ma && d.minor == mi) {
                return Ok(d.name.clone());
            }
        }
    }
    let known: Vec<&str> = sample.iter().map(|d| d.name.as_str()).collect();
    Err(Error::UnknownDevice {
        arg: arg.to_string(),
        known: known.join(", "),
        replay: !live,
    })
}

/// A `--group NAME=DEV,DEV` as given: the syntax checked, the members not yet resolved
/// (devices are known only in the first sample).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// The name given.
    pub name: String,
    /// The device arguments, as given.
    pub devices: Vec<String>,
}

impl std::str::FromStr for GroupSpec {
    type Err = Error;

    fn from_str(g: &str) -> Result<Self, Error> {
        let bad = || Error::BadGroup {
            spec: g.to_string(),
        };
        let (name, devs) = g.split_once('=').ok_or_else(bad)?;
        let devices: Vec<String> = devs
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if name.is_empty() || devices.is_empty() {
            return Err(bad());
        }
        Ok(GroupSpec {
            name: name.to_string(),
            devices,
        })
    }
}

/// Resolves the members of `--group` arguments with [`resolve_name`].
pub fn resolve_groups(
    specs: &[GroupSpec],
    sample: &[DiskStat],
    live: bool,
) -> Result<Vec<Group>, Error> {
    specs
        .iter()
        .map(|g| {
            Ok(Group {
                name: g.name.clone(),
                members: g
                    .devices
                    .iter()
                    .map(|d| resolve_name(d, sample, live))
                    .collect::<Result<Vec<_>, _>>()?,
            })
        })
        .collect()
}

/// What `--explain` reads the figures against.
#[derive(Clone, Debug, Default)]
pub struct ExplainWith {
    /// Per device (kernel name); a device missing here is read as 1 disk (or, for a group,
    /// as many disks as members), rotation unknown.
    pub info: HashMap<String, DevInfo>,
    /// Database page size in bytes, compared with request sizes.
    pub page_size: u64,
}

/// What `dbio iostat` shows, as the command line gives it (names resolved by
/// [`Reporter::from_options`] in the first sample).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Device arguments (kernel names, /dev/NAME, live: any node of a block device).
    pub devices: Vec<String>,
    /// `--group NAME=DEV,DEV` arguments.
    pub groups: Vec<GroupSpec>,
    /// Also idle devices.
    pub all: bool,
    /// Also partitions.
    pub partitions: bool,
    /// `--explain`, comparing request sizes with this database page size (bytes).
    pub explain_page_size: Option<u64>,
    /// See [`Selection::keep_shown`].
    pub keep_shown: bool,
}

/// Builds one [`Report`] per pair of samples, remembering what it showed (for
/// [`Selection::keep_shown`]).
#[derive(Clone, Debug)]
pub struct Reporter {
    sel: Selection,
    explain: Option<ExplainWith>,
    shown: BTreeSet<String>,
}

impl Reporter {
    /// A reporter for `sel`; with `explain`, every row gets its `--explain` reading.
    pub fn new(sel: Selection, explain: Option<ExplainWith>) -> Self {
        Reporter {
            sel,
            explain,
            shown: BTreeSet::new(),
        }
    }

    /// The reporter of `opts`, its device and group names resolved in `first`, the first
    /// sample ([`resolve_name`], [`resolve_groups`]); `live`: the samples are the running
    /// system's (then --explain knows each device's stack, see [`dev_info`]).
    pub fn from_options(opts: &Options, first: &[DiskStat], live: bool) -> Result<Self, Error> {
        let named = opts
            .devices
            .iter()
            .map(|d| resolve_name(d, first, live))
            .collect::<Result<Vec<_>, _>>()?;
        let groups = resolve_groups(&opts.groups, first, live)?;
        let explain = opts.explain_page_size.map(|page_size| ExplainWith {
            info: if live {
                let names: Vec<String> = first.iter().map(|d| d.name.clone()).collect();
                dev_info(&names)
            } else {
                HashMap::new()
            },
            page_size,
        });
        let sel = Selection {
            named,
            groups,
            all: opts.all,
            partitions: opts.partitions,
            live,
            keep_shown: opts.keep_shown,
        };
        Ok(Reporter::new(sel, explain))
    }

    /// The report of the interval from `prev` to `cur`, which ends at `ts` (seconds since
    /// the epoch) and lasts `interval_s` seconds.
    pub fn report(
        &mut self,
        prev: &[DiskStat],
        cur: &[DiskStat],
        ts: f64,
        interval_s: f64,
    ) -> Report {
        let sel = &self.sel;
        let before: HashMap<&str, &DiskStat> = prev.iter().map(|d| (d.name.as_str(), d)).collect();
        let names: Vec<&str> = cur.iter().map(|d| d.name.as_str()).collect();
        let mut rows = Vec::new();
        let mut skipped = Vec::new();
        let mut deltas: HashMap<&str, Delta> = HashMap::new();
        for d in cur {
            match before.get(d.name.as_str()) {
                None => skipped.push(format!(
                    "{}: not in the previous sample (device appeared)",
                    d.name
                )),
                Some(p) => match Delta::between(p, d) {
                    Ok(delta) => {
                        deltas.insert(d.name.as_str(), delta);
                    }
                    Err(e) => skipped.push(e.to_string()),
                },
            }
        }
        let explain_row = |name: &str, f: &Figures, members: usize| -> Vec<String> {
            match &self.explain {
                Some(x) => {
                    let i = x.info.get(name).cloned().unwrap_or(DevInfo {
                        disks: if members > 1 { Some(members) } else { None },
                        rotational: None,
                    });
                    explain_figures(f, &i, x.page_size)
                }
                None => Vec::new(),
            }
        };
        for d in cur {
            let Some(delta) = deltas.get(d.name.as_str()) else {
                continue;
            };
            let named = sel.named.iter().any(|n| n == &d.name);
            let kept = self.shown.contains(&d.name);
            let part = sel.is_partition(&d.name, &names);
            if !sel.named.is_empty() && !named {
                continue;
            }
            if !named && !kept && ((part && !sel.partitions) || (!sel.all && delta.is_idle())) {
                continue;
            }
            let figures = diskstats::figures(delta, interval_s);
            rows.push(DeviceRow {
                device: d.name.clone(),
                kind: if part { Kind::Partition } else { Kind::Device },
                members: Vec::new(),
                explain: explain_row(&d.name, &figures, 1),
                figures,
            });
        }
        for g in &sel.groups {
            // Summed from an empty delta: even a group of one member is a group (pt-diskstats'
            // qtime of a group uses the summed in-flight gauge, not its change).
            let mut sum: Option<Delta> = None;
            let mut missing = Vec::new();
            for m in &g.members {
                match deltas.get(m.as_str()) {
                    Some(d) => sum.get_or_insert_with(Delta::default).add(d),
                    None => missing.push(m.as_str()),
                }
            }
            if !missing.is_empty() {
                skipped.push(format!(
                    "group {}: members {} not comparable in this interval; the group is left out",
                    g.name,
                    missing.join(", ")
                ));
                continue;
            }
            if let Some(s) = sum {
                let figures = diskstats::figures(&s, interval_s);
                rows.push(DeviceRow {
                    device: g.name.clone(),
                    kind: Kind::Group,
                    members: g.members.clone(),
                    explain: explain_row(&g.name, &figures, g.members.len()),
                    figures,
                });
            }
        }
        if sel.keep_shown {
            self.shown.extend(
                rows.iter()
                    .filter(|r| r.kind != Kind::Group)
                    .map(|r| r.device.clone()),
            );
        }
        Report {
            ts,
            time: diskstats::utc_datetime(ts.floor() as i64),
            interval_s,
            devices: rows,
            skipped,
            sample: cur.to_vec(),
        }
    }
}

/// What `--explain` knows of each live device: its physical disks and whether they spin,
/// from the device stack (devices whose stack cannot be resolved are left out).
pub fn dev_info(names: &[String]) -> HashMap<String, DevInfo> {
    let mut m = HashMap::new();
    for n in names {
        if let Ok(st) = crate::stack::resolve_device(Path::new(n)) {
            let leaves = st.leaves();
            let rotational = leaves
                .iter()
                .filter_map(|d| d.queue.as_ref().and_then(|q| q.rotational))
                .reduce(|a, b| a && b);
            m.insert(
                n.clone(),
                DevInfo {
                    disks: Some(leaves.len().max(1)),
                    rotational,
                },
            );
        }
    }
    m
}

/// The note on skipped partition lines of old kernels (line numbers, the first 20).
pub fn old_partitions_note(lines: &[usize]) -> String {
    let mut list = lines
        .iter()
        .take(20)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if lines.len() > 20 {
        list.push_str(", ...");
    }
    format!(
        "{} partition line{} of 7 fields skipped (line{} {list}): kernels before 2.6.25 print \
         only reads, sectors read, writes and sectors written for a partition, too little for \
         these figures; iostat and pt-diskstats skip them too",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        if lines.len() == 1 { "" } else { "s" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(lines: &str) -> Vec<DiskStat> {
        diskstats::parse(lines).unwrap()
    }

    #[test]
    fn idle_devices_are_hidden_unless_kept() {
        let a = sample("8 0 sda 0 0 0 0 0 0 0 0 0 0 0\n8 16 sdb 0 0 0 0 0 0 0 0 0 0 0\n");
        let b = sample("8 0 sda 10 0 80 10 0 0 0 0 0 10 10\n8 16 sdb 5 0 40 5 0 0 0 0 0 5 5\n");
        let c = sample("8 0 sda 20 0 160 20 0 0 0 0 0 20 20\n8 16 sdb 5 0 40 5 0 0 0 0 0 5 5\n");
        let names = |r: &Report| {
            r.devices
                .iter()
                .map(|d| d.device.clone())
                .collect::<Vec<_>>()
        };
        let mut plain = Reporter::new(Selection::default(), None);
        assert_eq!(names(&plain.report(&a, &b, 1.0, 1.0)), ["sda", "sdb"]);
        assert_eq!(names(&plain.report(&b, &c, 2.0, 1.0)), ["sda"]);
        let mut kept = Reporter::new(
            Selection {
                keep_shown: true,
                ..Selection::default()
            },
            None,
        );
        assert_eq!(names(&kept.report(&a, &b, 1.0, 1.0)), ["sda", "sdb"]);
        let r = kept.report(&b, &c, 2.0, 1.0);
        assert_eq!(names(&r), ["sda", "sdb"]);
        assert_eq!(r.devices[1].figures.r_per_s, 0.0);
        // A device idle from the start is not shown: only what was shown is kept.
        let mut late = Reporter::new(
            Selection {
                keep_shown: true,
                ..Selection::default()
            },
            None,
        );
        assert_eq!(names(&late.report(&b, &c, 2.0, 1.0)), ["sda"]);
    }

    #[test]
    fn unknown_device_and_bad_group_name_what_exists() {
        let s = sample("8 0 sda 0 0 0 0 0 0 0 0 0 0 0\n8 16 sdb 0 0 0 0 0 0 0 0 0 0 0\n");
        assert_eq!(resolve_name("/dev/sdb", &s, false).unwrap(), "sdb");
        let e = resolve_name("sdq", &s, false).unwrap_err().to_string();
        assert!(
            e.contains("\"sdq\"") && e.contains("replayed") && e.contains("sda, sdb"),
            "{e}"
        );
        let g = resolve_groups(&["d=sda,/dev/sdb".parse().unwrap()], &s, false).unwrap();
        assert_eq!(g[0].members, ["sda", "sdb"]);
        for bad in ["d", "=sda", "d=", "d=,"] {
            assert!(matches!(
                bad.parse::<GroupSpec>(),
                Err(Error::BadGroup { .. })
            ));
        }
    }

    #[test]
    fn from_options_resolves_names_and_groups_in_the_first_sample() {
        let a = sample("8 0 sda 0 0 0 0 0 0 0 0 0 0 0\n8 16 sdb 0 0 0 0 0 0 0 0 0 0 0\n");
        let b = sample("8 0 sda 10 0 80 10 0 0 0 0 0 10 10\n8 16 sdb 5 0 40 5 0 0 0 0 0 5 5\n");
        let opts = Options {
            devices: vec!["/dev/sdb".into()],
            groups: vec!["both=sda,sdb".parse().unwrap()],
            explain_page_size: Some(16384),
            ..Options::default()
        };
        let mut rep = Reporter::from_options(&opts, &a, false).unwrap();
        let r = rep.report(&a, &b, 1.0, 1.0);
        let names: Vec<&str> = r.devices.iter().map(|d| d.device.as_str()).collect();
        assert_eq!(names, ["sdb", "both"]);
        assert!(
            !r.devices[0].explain.is_empty(),
            "--explain reads every row"
        );
        assert_eq!(r.sample, b, "the report keeps its end sample");
        let bad = Options {
            devices: vec!["sdq".into()],
            ..Options::default()
        };
        assert!(matches!(
            Reporter::from_options(&bad, &a, false),
            Err(Error::UnknownDevice { .. })
        ));
    }
}
