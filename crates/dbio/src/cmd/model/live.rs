//! `dbio model live`: samples TPS (MySQL/MariaDB status counters, or `--tps`), the CPUs
//! (/proc/stat), the disks under the datadir (/proc/diskstats) and the network links
//! (/proc/net/dev against the sysfs link speed) at the start and end of one interval, and hands
//! the utilisations to `dbio_model::live`. The MySQL status reader is this file's own small
//! one (three counters and a variable), not a MySQL library.

use super::{emit, model_usage, LiveFormats};
use crate::cli::usage;
use crate::output::OutputArgs;
use anyhow::Context;
use dbio_model::live::{link_busy, Interval, Utilisation};
use dbio_report::doc;
use dbio_report::export::prometheus::model::PrometheusExporter;
use dbio_report::model::ResourceKind;
use dbio_report::Exporter;
use mysql::prelude::Queryable;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Which status counter counts transactions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpsCounter {
    /// Com_commit + Com_rollback: explicit transactions (autocommit statements are not
    /// counted).
    Commits,
    /// Questions: every statement a client sent (less this command's own).
    Questions,
}

/// Arguments of `dbio model live`.
#[derive(clap::Args, Debug)]
pub struct LiveArgs {
    /// The server to read TPS and Threads_running from (mysql://user:pass@host:port/db).
    #[arg(long, value_name = "DSN")]
    pub mysql: Option<String>,
    /// Transactions per second measured elsewhere (the application's own figure); with
    /// --mysql, it replaces the server's count and Threads_running is still read.
    #[arg(long, value_name = "TPS")]
    pub tps: Option<f64>,
    /// The counter that gives TPS.
    #[arg(long, value_enum, default_value = "commits")]
    pub tps_counter: TpsCounter,
    /// How long to measure.
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = crate::cli::parse_duration_arg)]
    pub interval: Duration,
    /// The datadir whose disks are measured (default: the server's @@datadir).
    #[arg(long, value_name = "PATH")]
    pub datadir: Option<PathBuf>,
    /// Block devices to measure instead of the datadir's disks (kernel names: vda, nvme0n1).
    #[arg(long, value_name = "DEV", value_delimiter = ',')]
    pub device: Vec<String>,
    /// Network interfaces to measure (default: every interface that is up, except lo).
    #[arg(long, value_name = "IF", value_delimiter = ',')]
    pub net_dev: Vec<String>,
    /// A link speed in Mb/s for an interface whose sysfs speed is unknown (virtual NICs),
    /// IF=MBIT; repeatable.
    #[arg(long, value_name = "IF=MBIT", value_delimiter = ',', value_parser = parse_speed)]
    pub link_speed: Vec<(String, u64)>,
    /// Think time Z for Nsat and the response-time floor.
    #[arg(long, short = 'Z', value_name = "TIME", default_value = "0", value_parser = crate::cli::parse_duration_arg)]
    pub think: Duration,
    #[command(flatten)]
    pub out: OutputArgs<LiveFormats>,
}

/// The DSN without its password, for messages.
fn redact(dsn: &str) -> String {
    let Some((scheme, rest)) = dsn.split_once("://") else {
        return dsn.to_string();
    };
    match rest.rsplit_once('@') {
        Some((creds, host)) => match creds.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => dsn.to_string(),
        },
        None => dsn.to_string(),
    }
}

fn parse_speed(s: &str) -> Result<(String, u64), String> {
    let (i, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: give IF=MBIT, e.g. eth0=10000"))?;
    let v: u64 = v
        .parse()
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("{s:?}: the speed is a whole number of Mb/s above 0"))?;
    Ok((i.to_string(), v))
}

/// The counters read from the server at one instant.
struct Status {
    counters: HashMap<String, u64>,
}

impl Status {
    fn read(conn: &mut mysql::Conn) -> anyhow::Result<Status> {
        let rows: Vec<(String, String)> = conn
            .query(
                "SHOW GLOBAL STATUS WHERE Variable_name IN \
                 ('Com_commit', 'Com_rollback', 'Questions', 'Threads_running')",
            )
            .context("SHOW GLOBAL STATUS failed")?;
        let counters = rows
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.parse().ok()?)))
            .collect();
        Ok(Status { counters })
    }

    fn get(&self, k: &str) -> u64 {
        self.counters.get(k).copied().unwrap_or(0)
    }
}

/// Threads_running now.
fn threads_running(c: &mut mysql::Conn) -> anyhow::Result<u64> {
    let row: Option<(String, String)> = c
        .query_first("SHOW GLOBAL STATUS LIKE 'Threads_running'")
        .context("SHOW GLOBAL STATUS LIKE 'Threads_running' failed")?;
    Ok(row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0))
}

/// Runs `dbio model live`.
pub fn run(a: LiveArgs) -> anyhow::Result<u8> {
    if a.mysql.is_none() && a.tps.is_none() {
        return Err(usage(
            "give --mysql DSN to count transactions on the server, or --tps with the application's own rate",
        ));
    }
    if let Some(t) = a.tps.filter(|t| !(t.is_finite() && *t > 0.0)) {
        return Err(usage(format!(
            "--tps {t}: give the transactions per second, a number above 0"
        )));
    }
    if a.interval.is_zero() {
        return Err(usage("--interval 0: measure over some time, e.g. 10s"));
    }
    let mut notes = Vec::new();
    let mut local = true;
    let mut conn = match &a.mysql {
        Some(dsn) => {
            let shown = redact(dsn);
            let opts = mysql::Opts::from_url(dsn)
                .map_err(|e| usage(format!("--mysql {shown}: not a mysql:// URL: {e}")))?;
            let host = opts.get_ip_or_hostname().to_string();
            if opts.get_socket().is_none()
                && !["localhost", "127.0.0.1", "::1"].contains(&host.as_str())
            {
                local = false;
                notes.push(format!(
                    "the server is on {host}, not necessarily this machine: the CPU, disk and network figures are this machine's; run dbio on the database host"
                ));
            }
            Some(mysql::Conn::new(opts).with_context(|| {
                format!("cannot connect to {shown}: check that the server runs and the user may connect")
            })?)
        }
        None => None,
    };
    let datadir = match (&a.datadir, conn.as_mut()) {
        (Some(d), _) => Some(d.clone()),
        (None, Some(c)) if a.device.is_empty() && local => c
            .query_first::<String, _>("SELECT @@datadir")
            .context("SELECT @@datadir failed")?
            .map(PathBuf::from),
        _ => None,
    };
    let disks = if !a.device.is_empty() {
        a.device.clone()
    } else if let Some(d) = &datadir {
        let st = dbio_sys::stack::resolve(d).with_context(|| {
            format!(
                "cannot find the disks under the datadir {}: on a remote server give --device or --datadir",
                d.display()
            )
        })?;
        notes.push(format!(
            "disks under {}: {}",
            d.display(),
            st.leaf_disks.join(", ")
        ));
        st.leaf_disks
    } else {
        notes.push("no datadir (a remote server's @@datadir is not this machine's) and no --device: disks not measured".into());
        Vec::new()
    };
    let speeds: HashMap<String, u64> = a.link_speed.iter().cloned().collect();
    let ifaces: Vec<String> = if a.net_dev.is_empty() {
        dbio_sys::netdev::read()?
            .into_iter()
            .map(|d| d.name)
            .filter(|n| n != "lo" && dbio_sys::netdev::is_up(n))
            .collect()
    } else {
        a.net_dev.clone()
    };
    let mut links = Vec::new();
    for i in ifaces {
        match speeds
            .get(&i)
            .copied()
            .or_else(|| dbio_sys::netdev::link_speed_mbit(&i))
        {
            Some(s) => links.push((i, s)),
            None => notes.push(format!(
                "{i}: link speed unknown (a virtual NIC?): not counted; give --link-speed {i}=MBIT"
            )),
        }
    }

    // The first samples.
    let s0 = conn.as_mut().map(Status::read).transpose()?;
    let (cpu0, _) = dbio_sys::cpustat::read_with_cpus()?;
    let net0 = dbio_sys::netdev::read()?;
    let mut watch = dbio_sys::diskstats::Watch::new(&disks)?;
    let t0 = Instant::now();
    let stop = crate::signals::install();
    let due = t0 + a.interval;
    let mut interrupted = false;
    // Threads_running every 250 ms: its mean over the interval is the concurrency N.
    let mut running = Vec::new();
    let mut next_sample = t0;
    while Instant::now() < due {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            interrupted = true;
            notes.push("interrupted: the figures cover the part of the interval measured".into());
            break;
        }
        if let Some(c) = conn.as_mut() {
            if Instant::now() >= next_sample {
                running.push(threads_running(c)?);
                next_sample += Duration::from_millis(250);
            }
        }
        std::thread::sleep((due - Instant::now()).min(Duration::from_millis(50)));
    }
    let s1 = conn.as_mut().map(Status::read).transpose()?;
    if let Some(s) = &s1 {
        running.push(s.get("threads_running"));
    }
    let (cpu1, ncpu) = dbio_sys::cpustat::read_with_cpus()?;
    let net1 = dbio_sys::netdev::read()?;
    let (_, disk_figs) = watch.tick()?;
    let dt = t0.elapsed().as_secs_f64();

    let (tps, tps_source) = match (a.tps, &s0, &s1) {
        (Some(t), _, _) => (t, "--tps".to_string()),
        (None, Some(s0), Some(s1)) => {
            let d = |k: &str| s1.get(k).saturating_sub(s0.get(k)) as f64;
            match a.tps_counter {
                TpsCounter::Commits => (
                    (d("com_commit") + d("com_rollback")) / dt,
                    "Com_commit+Com_rollback".to_string(),
                ),
                // Our own statements after the first sample are questions too.
                TpsCounter::Questions => (
                    (d("questions") - running.len() as f64).max(0.0) / dt,
                    "Questions".to_string(),
                ),
            }
        }
        _ => unreachable!("--mysql or --tps was checked above"),
    };
    // Each sample counts this command's own connection, running its SHOW: one less.
    let threads_running = (!running.is_empty()).then(|| {
        running
            .iter()
            .map(|&n| n.saturating_sub(1) as f64)
            .sum::<f64>()
            / running.len() as f64
    });
    if threads_running.is_some() {
        notes.push(format!(
            "threads running: the mean of {} samples of Threads_running (every 250 ms), this command's own connection excluded",
            running.len()
        ));
    }

    let mut resources = Vec::new();
    // Busy: every share but idle and iowait (iostat -c's %user + %system + %steal).
    if let Some(sh) = dbio_sys::cpustat::shares(&cpu0, &cpu1) {
        resources.push(Utilisation {
            name: "cpu".into(),
            kind: ResourceKind::Cpu,
            busy: ((sh.usr_pct + sh.sys_pct + sh.steal_pct) / 100.0).min(1.0),
            servers: Some(ncpu),
            detail: format!(
                "average of {ncpu} CPUs: {:.1}% usr, {:.1}% sys, {:.1}% steal",
                sh.usr_pct, sh.sys_pct, sh.steal_pct
            ),
        });
    }
    for d in disk_figs {
        let f = d
            .figures
            .map_err(|e| anyhow::anyhow!("{}: {e}", d.name))
            .context("the disk counters went backwards during the interval")?;
        resources.push(Utilisation {
            name: d.name,
            kind: ResourceKind::Disk,
            busy: (f.util_pct / 100.0).min(1.0),
            servers: None,
            detail: format!("{:.0} r/s {:.0} w/s, io_ticks", f.r_per_s, f.w_per_s),
        });
    }
    for (i, speed) in links {
        let get = |v: &[dbio_sys::netdev::NetDev]| v.iter().find(|d| d.name == i).cloned();
        let (Some(a0), Some(a1)) = (get(&net0), get(&net1)) else {
            notes.push(format!("{i}: not in /proc/net/dev any more"));
            continue;
        };
        let rx = a1.rx_bytes.saturating_sub(a0.rx_bytes);
        let tx = a1.tx_bytes.saturating_sub(a0.tx_bytes);
        resources.push(Utilisation {
            name: i,
            kind: ResourceKind::Net,
            busy: link_busy(rx, tx, dt, speed),
            servers: None,
            detail: format!(
                "{:.2} MB/s rx, {:.2} MB/s tx of {speed} Mb/s",
                rx as f64 / dt / 1e6,
                tx as f64 / dt / 1e6
            ),
        });
    }
    let result = dbio_model::live::elements(Interval {
        interval_s: dt,
        tps,
        tps_source,
        resources,
        think_s: a.think.as_secs_f64(),
        threads_running,
        notes,
    });
    let result = match result {
        Ok(r) => r,
        Err(e @ dbio_model::ModelError::BadThink(_)) => return Err(model_usage(e)),
        Err(e) => return Err(anyhow::Error::new(e).context("no elements of response time")),
    };
    if a.out.format == dbio_report::export::Format::Prometheus {
        let text = PrometheusExporter.to_string(&result)?;
        a.out.emit(text.as_bytes())?;
    } else {
        emit(&a.out, doc::MODEL_LIVE, &result)?;
    }
    Ok(if interrupted {
        crate::signals::EXIT_INTERRUPTED
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_reaches_a_message() {
        assert_eq!(
            redact("mysql://app:s3cret@db1:3306/shop"),
            "mysql://app:***@db1:3306/shop"
        );
        assert_eq!(
            redact("mysql://root@127.0.0.1/test"),
            "mysql://root@127.0.0.1/test"
        );
        assert_eq!(parse_speed("eth0=1000"), Ok(("eth0".into(), 1000)));
        assert!(parse_speed("eth0=0").is_err());
        assert!(parse_speed("eth0").is_err());
    }
}
