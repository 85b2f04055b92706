//! `dbio mysql stalk`: watch a server, keep the lead-up, collect when a trigger holds, say who
//! did it; `--report DIR` reads a capture (dbio's or pt-stalk's) back. The flags become
//! [`dbio_mysql::stalk::run::Options`]; the loop runs in dbio-mysql; this file logs its lines
//! to stderr (one line each, a UTC time first: journald keeps them) and renders the report.

use crate::cli::{parse_duration_arg, parse_size_arg, usage};
use crate::output::{to_stderr, OutputArgs};
use anyhow::Context;
use dbio_mysql::conn::Net;
use dbio_mysql::server::Tls;
use dbio_mysql::stalk::{report, run};
use dbio_schema::stalk::StalkReport;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `dbio mysql stalk`.
#[derive(clap::Args, Debug)]
pub struct StalkArgs {
    /// Read the capture in DIR (a dbio capture directory, or a pt-stalk --dest with its
    /// PREFIX-* files) and print its report; nothing else is done.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dsn", "trigger", "dest"])]
    report: Option<PathBuf>,
    /// The server: mysql://user[:password]@host[:port][/database].
    #[arg(long, env = "DBIO_MYSQL_DSN", required_unless_present = "report")]
    dsn: Option<String>,
    /// Where captures go: DIR/<prefix>/ (created; one stalker per DIR).
    #[arg(long, value_name = "DIR", required_unless_present = "report")]
    dest: Option<PathBuf>,
    /// When to collect: `Threads_running>50`, `rate(Innodb_rows_read)>200k`,
    /// `processlist(state~'Waiting for.*lock')>20`, `vda.await>50ms`, `vda.util>95%`,
    /// combined with and/or and parentheses.
    #[arg(long, value_name = "EXPR", required_unless_present = "report")]
    trigger: Option<String>,
    /// Collect after this many consecutive true checks (pt-stalk's --cycles).
    #[arg(long, default_value_t = 5)]
    cycles: u32,
    /// Time between checks (and between samples while collecting).
    #[arg(long, default_value = "1s", value_parser = parse_duration_arg)]
    interval: Duration,
    /// The lead-up kept in memory and written out when the trigger fires.
    #[arg(long, default_value = "60s", value_parser = parse_duration_arg)]
    pre: Duration,
    /// The most memory the lead-up may hold (older samples go first).
    #[arg(long, default_value = "64M", value_parser = parse_size_arg)]
    pre_memory: u64,
    /// How long to collect once the trigger fired.
    #[arg(long, default_value = "30s", value_parser = parse_duration_arg)]
    collect: Duration,
    /// After a collection, do not collect again for this long.
    #[arg(long, default_value = "300s", value_parser = parse_duration_arg)]
    cooldown: Duration,
    /// Stop after this many collections.
    #[arg(long)]
    max_collections: Option<u32>,
    /// Do not collect (and stop collecting) when the filesystem of --dest has less free space
    /// than this, in % (`5%` or `5`).
    #[arg(long, default_value = "5%", value_parser = parse_pct)]
    min_free: f64,
    /// After each collection, remove dbio captures in --dest older than this.
    #[arg(long, value_parser = parse_duration_arg)]
    purge_after: Option<Duration>,
    /// After each collection, remove the oldest dbio captures in --dest until the rest take at
    /// most this much (e.g. 10G; the capture just written is kept, whatever its size).
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    purge_size: Option<u64>,
    /// Exit after the first collection and print its report.
    #[arg(long)]
    once: bool,
    /// Every Nth check reads all of SHOW GLOBAL STATUS (kept in the lead-up); the others read
    /// only the variables the trigger names plus Threads_running and Questions, a quarter of
    /// the server's time. 1: every check reads all, as pt-stalk does.
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    full_status_every: u32,
    /// Connect, read and write timeout of the connection.
    #[arg(long, default_value = "10s", value_parser = parse_duration_arg)]
    net_timeout: Duration,
    #[command(flatten)]
    pub out: OutputArgs<StalkReport>,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage (5% or 5)"))?;
    if (0.0..=100.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{s}: a percentage is between 0 and 100"))
    }
}

fn log_line(s: &str) {
    let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ");
    to_stderr(&format!("{now} dbio mysql stalk: {s}\n"));
}

/// Runs `dbio mysql stalk`.
pub fn stalk(a: StalkArgs) -> anyhow::Result<u8> {
    if let Some(dir) = &a.report {
        let r = report::read(dir).with_context(|| {
            format!(
                "reading the capture in {}: give a directory dbio mysql stalk or pt-stalk wrote",
                dir.display()
            )
        })?;
        a.out.emit_result(&r).context("writing the report")?;
        return Ok(0);
    }
    let (Some(dsn), Some(dest), Some(trigger)) = (a.dsn.clone(), a.dest.clone(), a.trigger.clone())
    else {
        return Err(usage(
            "--dsn, --dest and --trigger are needed (or --report DIR)",
        ));
    };
    if a.interval.is_zero() {
        return Err(usage("--interval must be above 0"));
    }
    dbio_mysql::stalk::trigger::Expr::parse(&trigger).map_err(|e| usage(e.to_string()))?;
    a.out.check()?;
    let opts = run::Options {
        dsn,
        tls: Tls::Dsn,
        net: Net {
            timeout: a.net_timeout,
            reconnect_for: Duration::MAX,
        },
        dest,
        trigger,
        cycles: a.cycles,
        interval: a.interval,
        pre: a.pre,
        pre_memory: usize::try_from(a.pre_memory).unwrap_or(usize::MAX),
        collect: a.collect,
        cooldown: a.cooldown,
        max_collections: a.max_collections,
        min_free_pct: a.min_free,
        full_status_every: a.full_status_every,
        purge: run::Purge {
            age: a.purge_after,
            size_bytes: a.purge_size,
        },
        once: a.once,
    };
    let stop = crate::signals::install();
    let out = run::run(&opts, stop, &mut |s| log_line(s))
        .with_context(|| format!("stalking {}", dbio_mysql::redact(&opts.dsn)))?;
    log_line(&format!(
        "stopped after {} checks and {} collections: {}; a check's sample took {:.3} ms on average",
        out.checks,
        out.captures.len(),
        out.stopped,
        out.sample_time.as_secs_f64() * 1e3 / out.checks.max(1) as f64
    ));
    if a.once {
        if let Some(dir) = out.captures.last() {
            let r = report::read(dir)
                .with_context(|| format!("reading back the capture {}", dir.display()))?;
            a.out.emit_result(&r).context("writing the report")?;
        }
    }
    Ok(0)
}
