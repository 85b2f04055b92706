//! `dbio mysql advise`: configuration and status advice from what the server does over an
//! interval. The samples and the rules are in `dbio_mysql::advise`; this file finds the
//! datadir's storage (stack, check, iostat), optionally measures the commit latency there
//! (`--bench-commit`, a `dbio bench --mode commit` run), renders the result and picks the exit
//! code (Nagios codes with `--format nagios`, as `dbio check`).

use crate::cli::{parse_duration_arg, usage};
use crate::output::{to_stderr, OutputArgs};
use anyhow::Context as _;
use dbio_mysql::advise::rules::{self, Context};
use dbio_mysql::advise::{self, Options};
use dbio_mysql::conn::Net;
use dbio_mysql::server::Tls;
use dbio_report::export::{nagios, Exporters, Format, Nagios, Render};
use dbio_schema::advise::{AdviseResult, DeviceRates, Server, Storage};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `dbio mysql advise`.
#[derive(clap::Args, Debug)]
pub struct AdviseArgs {
    /// The server: mysql://user[:password]@host[:port][/database].
    #[arg(long, env = "DBIO_MYSQL_DSN")]
    dsn: String,
    /// The time the rates are measured over (first sample to last).
    #[arg(long, default_value = "60s", value_parser = parse_duration_arg)]
    interval: Duration,
    /// Samples, evenly spread over the interval (at least 2; more see more of the
    /// processlist).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..=3600))]
    samples: u32,
    /// The server's data directory on this machine, for its storage (default: @@datadir when
    /// the server is on this host; `none` to leave the storage out).
    #[arg(long, value_name = "PATH")]
    datadir: Option<PathBuf>,
    /// Measure the commit latency (write + fdatasync, 4 KiB, 5 s, one thread) with
    /// `dbio bench --mode commit` in a new directory under DIR, which must be on the datadir's
    /// filesystem (default: the datadir's parent directory); dbio removes what it created.
    // Option<Option<_>>: absent, bare (`--bench-commit`), or with a DIR. (An empty
    // default_missing_value was refused by the path parser: the bare flag never worked.)
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    bench_commit: Option<Option<PathBuf>>,
    /// TLS: disabled, required, verify-ca or verify-identity (default: as the DSN says).
    #[arg(long, value_name = "MODE", value_parser = ["disabled", "required", "verify-ca", "verify-identity"])]
    ssl_mode: Option<String>,
    /// The CA (PEM) the server's certificate must chain to.
    #[arg(long, value_name = "FILE")]
    ssl_ca: Option<PathBuf>,
    /// The longest wait for the server to accept the connection or answer a statement.
    #[arg(long, default_value = "30s", value_parser = parse_duration_arg)]
    net_timeout: Duration,
    #[command(flatten)]
    pub out: OutputArgs<AdviseResult>,
    /// Shorthand for --format nagios: exit 0 OK (and advice), 1 WARNING, 2 CRITICAL,
    /// 3 UNKNOWN (also for any error), as `dbio check --nagios`.
    #[arg(long, conflicts_with = "format")]
    nagios: bool,
    /// With --format nagios, count advice as WARNING.
    #[arg(long)]
    advice_warns: bool,
}

impl AdviseArgs {
    fn format(&self) -> Format {
        if self.nagios {
            Format::Nagios
        } else {
            self.out.format
        }
    }
}

/// Runs `dbio mysql advise`: 0, or the Nagios code with --format nagios.
pub fn run(a: AdviseArgs) -> anyhow::Result<u8> {
    match advise_and_render(&a) {
        Err(e) if a.format() == Format::Nagios => {
            let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            let text = nagios::unknown("MYSQL", &msg.join(": "));
            if a.out.file().is_none() || crate::output::emit(a.out.file(), text.as_bytes()).is_err()
            {
                let _ = crate::output::emit(None, text.as_bytes());
            }
            Ok(3)
        }
        r => r,
    }
}

fn is_local(dsn: &str) -> bool {
    let server = dbio_mysql::conn::server_of(dsn);
    let host = server.rsplit_once(':').map_or(server.as_str(), |(h, _)| h);
    matches!(host, "127.0.0.1" | "localhost" | "::1" | "[::1]")
}

/// The datadir to look at, or why there is none.
fn datadir(a: &AdviseArgs, server_datadir: &str) -> Result<PathBuf, String> {
    match &a.datadir {
        Some(p) if p.as_os_str() == "none" => Err("--datadir none: storage left out".into()),
        Some(p) => Ok(p.clone()),
        None if !is_local(&a.dsn) => Err(format!(
            "the server is not on this host: give --datadir PATH for the storage under {server_datadir}"
        )),
        None if server_datadir.is_empty() => Err("the server did not say its @@datadir".into()),
        None => Ok(PathBuf::from(server_datadir)),
    }
}

fn advise_and_render(a: &AdviseArgs) -> anyhow::Result<u8> {
    let format = a.format();
    if a.advice_warns && format != Format::Nagios {
        return Err(usage("--advice-warns counts advice as a warning in Nagios output: give it with --nagios (or --format nagios)"));
    }
    if let Some(ca) = &a.ssl_ca {
        std::fs::File::open(ca)
            .map_err(|e| usage(format!("--ssl-ca {}: cannot read it: {e}", ca.display())))?;
    }
    a.out.check()?;
    let mut opts = Options {
        dsn: a.dsn.clone(),
        tls: Tls::from_flags(a.ssl_mode.as_deref(), a.ssl_ca.clone()).map_err(usage)?,
        net: Net {
            timeout: a.net_timeout.max(Duration::from_millis(100)),
            reconnect_for: Duration::ZERO,
        },
        interval: a.interval,
        samples: a.samples,
        devices: Vec::new(),
    };
    if a.interval < Duration::from_secs(1) {
        return Err(usage(format!(
            "--interval {}: give at least 1s (rates over less are noise)",
            dbio_schema::units::format_duration(a.interval)
        )));
    }
    let stop = crate::signals::install();
    let mut c = advise::connect(&opts).map_err(|e| {
        let dsn = dbio_mysql::redact(&a.dsn);
        anyhow::Error::new(e).context(format!("mysql advise: connecting to {dsn}"))
    })?;
    let mut notes = Vec::new();
    let mut ctx = Context {
        processlist_hidden: !c.process_privilege,
        ..Context::default()
    };
    if ctx.processlist_hidden {
        notes.push("the account has no PROCESS privilege: the processlist shows its own threads only, so the optimizer rule is not judged and query cache lock waits are not seen".into());
    }
    let dir = datadir(a, &c.datadir);
    let stack = match &dir {
        Ok(d) => match dbio_sys::stack::resolve(d) {
            Ok(s) => Some(s),
            Err(e) => {
                notes.push(format!("the stack of {}: {e}", d.display()));
                None
            }
        },
        Err(why) => {
            notes.push(format!("storage not looked at: {why}"));
            None
        }
    };
    if let Some(s) = &stack {
        ctx.data_device = s.top().map(|d| d.name.clone());
        ctx.flush_device = s.leaf_disks.first().cloned();
        opts.devices = s.devices.iter().map(|d| d.name.clone()).collect();
    }
    if let (Some(b), Ok(d)) = (&a.bench_commit, &dir) {
        let measured = bench_commit(b, d);
        // A signal while bench ran (SIGTERM to dbio: bench runs to its end; Ctrl-C to the
        // group: bench stops early and fails; either way it removed its files): nothing is
        // sampled, rather than rates over the few milliseconds a last sample would take.
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            anyhow::bail!("mysql advise: interrupted during --bench-commit (the bench's files are removed); nothing was sampled");
        }
        ctx.bench_commit_ms = Some(measured?);
    }
    if format == Format::Text && a.out.to_stdout() {
        to_stderr(&format!(
            "dbio: sampling {} {} times over {}...\n",
            dbio_mysql::conn::server_of(&a.dsn),
            a.samples,
            dbio_schema::units::format_duration(a.interval)
        ));
    }
    let sampled = advise::sample_server(&mut c, &opts, stop)
        .map_err(|e| anyhow::Error::new(e).context("mysql advise: sampling the server"))?;
    let findings = rules::judge(&sampled.samples, &sampled.version, &ctx);
    let restart = rules::restart(&sampled.samples);
    if let Some((i, before, after)) = restart {
        notes.push(format!(
            "the server restarted between samples {i} and {} (Uptime {before:.0} s, then {after:.0} s): no rate is computed across the restart{}",
            i + 1,
            if sampled.samples.len() - i >= 2 {
                format!("; the rates are over samples {} to {} only", i + 1, sampled.samples.len())
            } else {
                String::new()
            }
        ));
    }
    // The interval and the devices' figures are over the samples the rules judged.
    let judged = &sampled.samples[restart.map_or(0, |r| r.0.min(sampled.samples.len() - 1))..];
    let (first, last) = (&judged[0], &judged[judged.len() - 1]);
    let secs = last.at_s - first.at_s;
    let storage = match (stack, dir) {
        (Some(s), Ok(d)) => Some(storage(&d, &s, first, last, secs)),
        _ => None,
    };
    notes.extend(sampled.notes.iter().cloned());
    let server = Server {
        address: sampled.address.clone(),
        version: sampled.version_text.clone(),
        flavor: sampled.version.flavor_name().into(),
        uptime_s: last.status_f64("Uptime").unwrap_or(0.0) as u64,
        replica: last.replica.is_some(),
        datadir: c.datadir.clone(),
    };
    let r = AdviseResult::new(
        server,
        (secs * 1000.0).round() / 1000.0,
        sampled.samples.len() as u32,
        sampled.queries_per_sample,
        findings,
        notes,
        storage,
    );
    let with = Exporters {
        nagios: Nagios {
            advice_warns: a.advice_warns,
        },
        ..Exporters::default()
    };
    let mut bytes = Vec::new();
    r.render(&with, format, &mut bytes)?;
    a.out.emit(&bytes).context("writing the result")?;
    Ok(if format == Format::Nagios {
        r.nagios_status(a.advice_warns).nagios_code()
    } else {
        0
    })
}

fn storage(
    dir: &Path,
    s: &dbio_schema::stack::Stack,
    first: &advise::Sample,
    last: &advise::Sample,
    secs: f64,
) -> Storage {
    let mut notes = s.notes.clone();
    let iostat = s
        .devices
        .iter()
        .filter_map(|d| {
            let a = first.disks.iter().find(|x| x.name == d.name)?;
            let b = last.disks.iter().find(|x| x.name == d.name)?;
            match dbio_sys::diskstats::compute(a, b, secs) {
                Ok(f) => Some(DeviceRates {
                    device: d.name.clone(),
                    r_per_s: f.r_per_s,
                    w_per_s: f.w_per_s,
                    wkb_per_s: f.wkb_per_s,
                    w_await_ms: f.w_await_ms,
                    f_per_s: f.f_per_s,
                    f_await_ms: f.f_await_ms,
                    util_pct: f.util_pct,
                }),
                Err(e) => {
                    notes.push(format!("{}: {e}", d.name));
                    None
                }
            }
        })
        .collect();
    let check = match dbio_storage::check::report(&dbio_storage::check::Options {
        paths: vec![dir.to_path_buf()],
        raid_outputs: Vec::new(),
        run_raid_tools: false,
        stripe: None,
        data_disks: None,
    }) {
        Ok(c) => Some(c),
        Err(e) => {
            notes.push(format!("dbio check {}: {e}", dir.display()));
            None
        }
    };
    Storage {
        datadir: dir.display().to_string(),
        devices: s
            .devices
            .iter()
            .map(|d| format!("{} ({:?})", d.name, d.kind).to_lowercase())
            .collect(),
        leaf_disks: s.leaf_disks.clone(),
        iostat,
        check,
        notes,
    }
}

/// Runs `dbio bench --mode commit` (this binary) for 5 s in a new directory under `base` (the
/// datadir's parent when none) on the datadir's filesystem; returns the mean fsync time, ms.
fn bench_commit(base: &Option<PathBuf>, datadir: &Path) -> anyhow::Result<f64> {
    use std::os::unix::fs::MetadataExt;
    let base = match base {
        Some(b) => b.clone(),
        None => datadir.parent().unwrap_or(datadir).to_path_buf(),
    };
    let dev = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.dev())
            .with_context(|| format!("--bench-commit: cannot read {}", p.display()))
    };
    if dev(&base)? != dev(datadir)? {
        return Err(usage(format!(
            "--bench-commit {}: not on the datadir's filesystem ({}); give a directory on it",
            base.display(),
            datadir.display()
        )));
    }
    let dir = base.join(format!("dbio-advise-commit.{}", std::process::id()));
    // dbio removes only what it created: a directory of that name from before is not ours.
    if dir.symlink_metadata().is_ok() {
        return Err(usage(format!(
            "--bench-commit: {} exists already (left by another run?): remove it or give another DIR",
            dir.display()
        )));
    }
    let exe = std::env::current_exe().context("--bench-commit: finding the dbio binary")?;
    let out = std::process::Command::new(exe)
        .args([
            "bench",
            "--mode",
            "commit",
            "--threads",
            "1",
            "--time",
            "5s",
        ])
        .args([
            "--block-size",
            "4k",
            "--file-total-size",
            "64M",
            "--format",
            "json",
        ])
        .arg("--dir")
        .arg(&dir)
        .output()
        .context("--bench-commit: running dbio bench")?;
    // bench removes the files it made and, when it ends well, the directory; after a failure
    // (a full filesystem) the directory it made stays, empty: removed here (remove_dir takes
    // only an empty directory, so nothing else can go with it).
    if dir.symlink_metadata().is_ok() {
        std::fs::remove_dir(&dir).with_context(|| {
            format!(
                "--bench-commit: removing the directory {} that dbio bench made",
                dir.display()
            )
        })?;
    }
    if !out.status.success() {
        anyhow::bail!(
            "--bench-commit: dbio bench --mode commit in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("--bench-commit: reading dbio bench's JSON")?;
    fsync_mean_ms(&v).with_context(|| {
        format!(
            "--bench-commit: no fsync latency in dbio bench's JSON (run dbio bench --dir {} --mode commit --format json to see it)",
            dir.display()
        )
    })
}

fn fsync_mean_ms(v: &serde_json::Value) -> Option<f64> {
    let ns = v.pointer("/summary/fsync/lat_ns/mean")?.as_f64()?;
    Some(ns / 1e6)
}
