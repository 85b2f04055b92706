//! The flags of `dbio model live`.

use crate::output::OutputArgs;
use std::path::PathBuf;
use std::time::Duration;

crate::formats!(LiveFormats: Text, Json, Csv, Prometheus);

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

/// `IF=MBIT` of `--link-speed`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_are_whole_mbits_above_0() {
        assert_eq!(parse_speed("eth0=1000"), Ok(("eth0".into(), 1000)));
        assert!(parse_speed("eth0=0").is_err());
        assert!(parse_speed("eth0").is_err());
    }
}
