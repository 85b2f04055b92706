//! `dbio model live`: samples TPS (MySQL/MariaDB status counters, or `--tps`), the CPUs
//! (/proc/stat), the disks under the datadir (/proc/diskstats) and the network links
//! (/proc/net/dev against the sysfs link speed) at the start and end of one interval, and hands
//! the utilisations to `dbio_model::live`. The server is read by `dbio_mysql::status` (four
//! status variables and @@datadir); this file turns its errors into messages.

use super::live_args::{LiveArgs, TpsCounter};
use crate::cli::usage;
use anyhow::Context;
use dbio_model::live::{link_busy, Interval, Utilisation};
use dbio_mysql::conn::Net;
use dbio_mysql::status::{Server, Status};
use dbio_schema::model::{LiveResult, ResourceKind};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long a read of the server may wait for its reply: a server that stops answering ends
/// the measurement with an error after this long instead of never.
const NET: Net = Net {
    timeout: Duration::from_secs(30),
    reconnect_for: Duration::ZERO,
};

/// The connection of `--mysql`, its errors as messages (the password never shown).
struct Mysql {
    server: Server,
    shown: String,
}

impl Mysql {
    fn connect(dsn: &str) -> anyhow::Result<Mysql> {
        let shown = dbio_mysql::redact(dsn);
        let server = Server::connect(dsn, &NET).map_err(|e| match e {
            dbio_mysql::Error::Dsn { message, .. } => {
                usage(format!("--mysql {shown}: not a mysql:// URL: {message}"))
            }
            e => anyhow::anyhow!(
                "cannot connect to {shown}: check that the server runs and the user may connect: {}",
                dbio_mysql::conn::describe(&e, &NET)
            ),
        })?;
        Ok(Mysql { server, shown })
    }

    /// `r`'s error named with the server, what was read and what the client saw.
    fn read<T>(&self, r: Result<T, dbio_mysql::Error>) -> anyhow::Result<T> {
        r.map_err(|e| {
            let what = match &e {
                dbio_mysql::Error::Sql { what, .. } => what.clone(),
                other => other.to_string(),
            };
            anyhow::anyhow!(
                "{what} failed on {}: {}",
                self.shown,
                dbio_mysql::conn::describe(&e, &NET)
            )
        })
    }

    fn status(&mut self) -> anyhow::Result<Status> {
        let r = self.server.status();
        self.read(r)
    }

    fn threads_running(&mut self) -> anyhow::Result<u64> {
        let r = self.server.threads_running();
        self.read(r)
    }

    fn datadir(&mut self) -> anyhow::Result<Option<std::path::PathBuf>> {
        let r = self.server.datadir();
        self.read(r)
    }
}

/// Measures `dbio model live` (its result, and whether a signal cut the interval short).
pub fn measure(a: &LiveArgs) -> anyhow::Result<(LiveResult, bool)> {
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
    // The result is written after the measurement: where it goes is checked now.
    a.out.check()?;
    let mut notes = Vec::new();
    let mut conn = a.mysql.as_deref().map(Mysql::connect).transpose()?;
    if let Some(c) = conn.as_ref().filter(|c| !c.server.local) {
        notes.push(format!(
            "the server is on {}, not necessarily this machine: the CPU, disk and network figures are this machine's; run dbio on the database host",
            c.server.host
        ));
    }
    let disks = disks(a, conn.as_mut(), &mut notes)?;
    let links = links(a, &mut notes)?;

    // The first samples.
    let s0 = conn.as_mut().map(Mysql::status).transpose()?;
    let (cpu0, _) = dbio_sys::cpustat::read_with_cpus()?;
    let net0 = dbio_sys::netdev::read()?;
    let mut watch = dbio_sys::diskstats::Watch::new(&disks)?;
    let t0 = Instant::now();
    let stop = crate::signals::install();
    let due = t0.checked_add(a.interval).ok_or_else(|| {
        usage(format!(
            "--interval {:?} is too long for this system's clock",
            a.interval
        ))
    })?;
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
                running.push(c.threads_running()?);
                next_sample += Duration::from_millis(250);
            }
        }
        std::thread::sleep((due - Instant::now()).min(Duration::from_millis(50)));
    }
    let s1 = conn.as_mut().map(Mysql::status).transpose()?;
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
    match result {
        Ok(r) => Ok((r, interrupted)),
        Err(e @ dbio_model::ModelError::BadThink(_)) => Err(usage(e.to_string())),
        Err(e) => Err(anyhow::Error::new(e).context("no elements of response time")),
    }
}

/// The disks to measure: --device, else the disks under the datadir (--datadir, or a local
/// server's @@datadir).
fn disks(
    a: &LiveArgs,
    conn: Option<&mut Mysql>,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<String>> {
    let datadir = match (&a.datadir, conn) {
        (Some(d), _) => Some(d.clone()),
        (None, Some(c)) if a.device.is_empty() && c.server.local => c.datadir()?,
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
    Ok(disks)
}

/// The network links to measure, each with its speed in Mb/s (a link of unknown speed is left
/// out, with a note).
fn links(a: &LiveArgs, notes: &mut Vec<String>) -> anyhow::Result<Vec<(String, u64)>> {
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
    Ok(links)
}
