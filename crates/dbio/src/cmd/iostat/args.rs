//! The command line of `dbio iostat`: its clap flags, their formats and their plain
//! [`iostat::Options`].

use crate::cli::{parse_duration_arg, parse_size_arg};
use crate::output::OutputArgs;
use dbio_report::export::text::iostat::Columns;
use dbio_report::export::Format;
use dbio_sys::iostat;
use std::path::PathBuf;
use std::time::Duration;

// Text: a table per report (the header repeats, like iostat's). Jsonl: one document per
// report per line. Csv: one row per device per report, header once. Prometheus:
// node_exporter's `node_disk_*` counters plus `dbio_disk_*` interval gauges; several reports
// on stdout make one exposition (lines timestamped), `-o FILE` is rewritten atomically at
// every report for the node_exporter textfile collector.
/// Arguments of `dbio iostat`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Devices to show (vda, /dev/vda, /dev/mapper/vg-lv, dm-0). Named devices are shown even
    /// when idle or partitions. Default: every whole disk, dm and md device with activity.
    pub devices: Vec<String>,
    /// Time between samples.
    #[arg(long, short = 'i', default_value = "1s", value_parser = parse_duration_arg)]
    pub interval: Duration,
    /// Number of reports (each covers one interval); default: until interrupted (live) or
    /// the end of the file (--replay).
    #[arg(long, short = 'c')]
    pub count: Option<u64>,
    /// Also show idle devices.
    #[arg(long)]
    pub all: bool,
    /// Also show partitions (hidden by default so nothing is counted twice).
    #[arg(long)]
    pub partitions: bool,
    /// Sum devices into one row: NAME=dev1,dev2 (repeatable). %util, rd_cnc and wr_cnc are
    /// divided by the number of devices.
    #[arg(long, value_name = "NAME=DEV,DEV", value_parser = parse_group)]
    pub group: Vec<iostat::GroupSpec>,
    /// Append every sample to FILE in the `TS <epoch> <date>` + raw lines format that pt-stalk
    /// writes and pt-diskstats reads.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// With --record: write the first N fields of each line (14: the classic format of
    /// kernels before 4.18, which pt-diskstats reads; 18: with the discard counters, which
    /// pt-diskstats 3.2.1 also reads) instead of all the kernel prints (20 since Linux 5.5,
    /// lines pt-diskstats skips).
    #[arg(long, value_name = "N", requires = "record", value_parser = parse_record_fields)]
    pub record_fields: Option<usize>,
    /// Read samples from FILE (pt-stalk `*-diskstats`, pt-diskstats --save-samples, or
    /// `--record`) instead of the live system; intervals come from its TS lines.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Add a short reading of each device per sample (queue depth vs disks, read vs write
    /// await, merges, request size vs page size, what %util means).
    #[arg(long)]
    pub explain: bool,
    /// The table's columns, in this order: names as the header prints them, comma separated
    /// (e.g. r/s,w/s,r_await,w_await,aqu-sz,%util). Default: all 27.
    #[arg(long, value_name = "LIST", value_parser = parse_columns)]
    pub columns: Option<Columns>,
    /// Database page size that --explain compares request sizes with.
    #[arg(long, default_value = "16k", value_parser = parse_size_arg)]
    pub page_size: u64,
    /// Say what was skipped without being an error (partition lines of 7 fields that kernels
    /// before 2.6.25 print), once.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    #[command(flatten)]
    pub out: OutputArgs<dbio_schema::iostat::Report>,
}

fn parse_group(s: &str) -> Result<iostat::GroupSpec, String> {
    s.parse().map_err(|e: iostat::Error| e.to_string())
}

fn parse_columns(s: &str) -> Result<Columns, String> {
    Columns::parse(s).map_err(|e| e.to_string())
}

fn parse_record_fields(s: &str) -> Result<usize, String> {
    match s.parse() {
        Ok(n @ (14 | 18 | 20)) => Ok(n),
        _ => Err(
            "give 14 (major minor name and 11 counters, as kernels before 4.18 print and \
                  pt-diskstats reads), 18 (with the discard counters) or 20 (all, as Linux \
                  5.5+ prints)"
                .into(),
        ),
    }
}

impl Args {
    /// What to show, for [`iostat::Reporter::from_options`].
    pub fn options(&self) -> iostat::Options {
        iostat::Options {
            devices: self.devices.clone(),
            groups: self.group.clone(),
            all: self.all,
            partitions: self.partitions,
            explain_page_size: self.explain.then_some(self.page_size),
            // Prometheus: a series must not vanish while its device is idle.
            keep_shown: self.out.format == Format::Prometheus,
        }
    }
}
