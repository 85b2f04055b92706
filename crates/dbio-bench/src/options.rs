//! The flags of `dbio bench` as plain values, and the [`Spec`] they make: the defaults for the
//! values not given, and on a prepared file set, the set's own geometry.

use crate::error::BenchError;
use crate::fileset;
use dbio_schema::bench::{
    BufferChoice, BufferSource, Distribution, EngineKind, FsyncMode, Mode, Spec, Target,
    DEFAULT_PERCENTILES,
};
use dbio_schema::units::format_size;
use dbio_schema::units::n_files;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `--file-num` when not given.
pub const DEFAULT_FILE_NUM: u64 = 64;
/// `--file-total-size` when not given (file sets).
pub const DEFAULT_FILE_TOTAL_SIZE: u64 = 1 << 30;
/// `--time` when neither it nor `--events` is given.
pub const DEFAULT_TIME: Duration = Duration::from_secs(10);

/// `--time` of each phase of the default run (no `--mode`: data pages, then commits) when
/// neither it nor `--events` is given: the two phases together take [`DEFAULT_TIME`].
pub const DEFAULT_PHASE_TIME: Duration = Duration::from_secs(5);

/// `--spin-polls` by default: completion polls before an io_uring reap sleeps. 16 polls (about
/// 3 us) cover a tmpfs read's turnaround through io-wq; measured on tmpfs, 4 KiB random reads
/// QD 32, 8 interleaved rounds: 0 polls 708k IOPS, 4: 785k, 16: 789k, 64: 758k (median).
pub const DEFAULT_SPIN_POLLS: u32 = 16;

/// The values of `dbio bench`'s workload flags, as given (`None`: not given).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `--dir`: directory of the file set.
    pub dir: PathBuf,
    /// `--device`: a block device instead of files.
    pub device: Option<PathBuf>,
    /// `--mode`.
    pub mode: Mode,
    /// `--rw-ratio`.
    pub rw_ratio: f64,
    /// `--engine`.
    pub engine: EngineKind,
    /// `--iodepth`.
    pub iodepth: u32,
    /// `--submit-batch`.
    pub submit_batch: u32,
    /// `--reap-batch` (default: `--submit-batch`).
    pub reap_batch: Option<u32>,
    /// `--fixed-buffers`.
    pub fixed_buffers: bool,
    /// `--register-files`.
    pub register_files: bool,
    /// `--huge-pages` (or `--like-server` found a server with large pages): I/O buffers in
    /// huge pages; false: 4 KiB pages, as a buffer pool without large pages.
    pub huge_pages: bool,
    /// What chose `huge_pages`; `None`: nothing did (the default, 4 KiB pages).
    pub buffers: Option<BufferChoice>,
    /// `--spin-polls`.
    pub spin_polls: u32,
    /// `--buffered`: no O_DIRECT.
    pub buffered: bool,
    /// `--dsync`.
    pub dsync: bool,
    /// `--sync`.
    pub sync: bool,
    /// `--atime`: no O_NOATIME.
    pub atime: bool,
    /// `--fsync-every`.
    pub fsync_every: u64,
    /// `--fsync-mode`.
    pub fsync_mode: FsyncMode,
    /// `--fsync-end`.
    pub fsync_end: bool,
    /// `--block-size` in bytes.
    pub block_size: u64,
    /// `--file-num`.
    pub file_num: Option<u64>,
    /// `--file-total-size` in bytes.
    pub file_total_size: Option<u64>,
    /// `--threads`.
    pub threads: u32,
    /// `--time`.
    pub time: Option<Duration>,
    /// `--events`.
    pub events: u64,
    /// `--warmup`.
    pub warmup: Duration,
    /// `--misalign` in bytes.
    pub misalign: u64,
    /// `--distribution`.
    pub distribution: Distribution,
    /// `--rate` in I/Os per second.
    pub rate: Option<f64>,
    /// `--seed`.
    pub seed: u64,
    /// `--report-interval`.
    pub report_interval: Duration,
    /// `--percentiles` (empty: the defaults).
    pub percentiles: Vec<f64>,
}

/// Parses `uniform`, `zipf:1.2`, `hotspot:90/10`.
pub fn parse_distribution(s: &str) -> Result<Distribution, String> {
    let bad = || {
        format!("'{s}' is not a distribution: use uniform, zipf:THETA (e.g. zipf:1.2) or hotspot:P/Q (e.g. hotspot:90/10)")
    };
    if s == "uniform" {
        return Ok(Distribution::Uniform);
    }
    if let Some(t) = s.strip_prefix("zipf:") {
        return t
            .parse()
            .map(|theta| Distribution::Zipf { theta })
            .map_err(|_| bad());
    }
    if let Some(pq) = s.strip_prefix("hotspot:") {
        let (p, q) = pq.split_once('/').ok_or_else(bad)?;
        return Ok(Distribution::Hotspot {
            io_pct: p.trim_end_matches('%').parse().map_err(|_| bad())?,
            data_pct: q.trim_end_matches('%').parse().map_err(|_| bad())?,
        });
    }
    Err(bad())
}

/// The geometry of a run on the file set prepared in `dir` (marker `m`): the flags given, the
/// set's own figures for the ones not given. A run may use the first files of a set (fewer
/// files of the same size); any other difference is refused, naming the set and what to do.
pub fn set_geometry(
    dir: &Path,
    m: &fileset::Marker,
    file_num: Option<u64>,
    file_total_size: Option<u64>,
) -> Result<(u64, u64), BenchError> {
    let n = file_num.unwrap_or(m.file_num);
    let total = file_total_size.unwrap_or(n.saturating_mul(m.file_size_bytes));
    let size = (total / n.max(1)) / 4096 * 4096;
    if n <= m.file_num && size == m.file_size_bytes {
        return Ok((n, total));
    }
    let mut given = Vec::new();
    if let Some(v) = file_num {
        given.push(format!("--file-num {v}"));
    }
    if let Some(v) = file_total_size {
        given.push(format!("--file-total-size {}", format_size(v)));
    }
    Err(BenchError::InvalidSpec(format!(
        "{} ask{} for {} of {}, but the file set in {} was prepared as {} of {} ({} in all, see {}): omit --file-num and --file-total-size to run on the prepared set, or run `dbio bench cleanup --dir {}` and prepare it again with the new sizes",
        given.join(" "),
        if given.len() == 1 { "s" } else { "" },
        n_files(n),
        format_size(size),
        dir.display(),
        n_files(m.file_num),
        format_size(m.file_size_bytes),
        format_size(m.file_num * m.file_size_bytes),
        fileset::MARKER,
        dir.display(),
    )))
}

impl Options {
    /// The spec of the flags as given, with the defaults for the sizes not given.
    pub fn spec(&self) -> Spec {
        self.spec_with(
            self.file_num.unwrap_or(DEFAULT_FILE_NUM),
            self.file_total_size.unwrap_or(if self.device.is_some() {
                0
            } else {
                DEFAULT_FILE_TOTAL_SIZE
            }),
        )
    }

    /// The spec of a run on the file set in `dir` (marker `m`): its geometry, unless the set
    /// holds no data files (prepared for commit logs) or the mode needs none (commit). The null
    /// engine opens no file: the sizes given are taken as they are, the set's fill the others.
    pub fn spec_on_set(&self, dir: &Path, m: &fileset::Marker) -> Result<Spec, BenchError> {
        if self.mode == Mode::Commit || m.file_num == 0 {
            return Ok(self.spec());
        }
        if self.engine == EngineKind::Null {
            let n = self.file_num.unwrap_or(m.file_num);
            let total = self
                .file_total_size
                .unwrap_or(n.saturating_mul(m.file_size_bytes));
            return Ok(self.spec_with(n, total));
        }
        let (n, total) = set_geometry(dir, m, self.file_num, self.file_total_size)?;
        Ok(self.spec_with(n, total))
    }

    fn spec_with(&self, file_num: u64, file_total_size: u64) -> Spec {
        let target = match &self.device {
            Some(d) => Target::Device(d.clone()),
            None => Target::Dir(self.dir.clone()),
        };
        let is_dev = self.device.is_some();
        let buffered_engine = matches!(self.engine, EngineKind::Uring | EngineKind::Sync);
        Spec {
            target,
            mode: self.mode,
            engine: self.engine,
            block_size_bytes: self.block_size,
            file_num: if is_dev { 1 } else { file_num },
            file_total_size_bytes: file_total_size,
            threads: self.threads,
            iodepth: self.iodepth,
            submit_batch: self.submit_batch,
            reap_batch: self.reap_batch.unwrap_or(self.submit_batch),
            fixed_buffers: self.fixed_buffers,
            register_files: self.register_files,
            huge_pages: buffered_engine && self.huge_pages,
            buffers: buffered_engine.then(|| {
                self.buffers.clone().unwrap_or(BufferChoice {
                    source: BufferSource::Default,
                    why: "the default: 4 KiB pages, as InnoDB's buffer pool without large pages"
                        .into(),
                })
            }),
            spin_polls: if self.engine == EngineKind::Uring {
                self.spin_polls
            } else {
                0
            },
            time_s: match (self.time, self.events) {
                (Some(t), _) => Some(t),
                (None, 0) => Some(DEFAULT_TIME),
                (None, _) => None,
            },
            events: self.events,
            warmup_s: self.warmup,
            direct: !self.buffered,
            dsync: self.dsync,
            sync: self.sync,
            noatime: !self.atime,
            fsync_every: self.fsync_every,
            fsync_mode: self.fsync_mode,
            fsync_end: self.fsync_end,
            misalign_bytes: self.misalign,
            distribution: self.distribution,
            rate_iops: self.rate,
            rw_ratio: self.rw_ratio,
            seed: self.seed,
            report_interval_s: self.report_interval,
            percentiles: if self.percentiles.is_empty() {
                DEFAULT_PERCENTILES.to_vec()
            } else {
                self.percentiles.clone()
            },
        }
    }
}

/// The spec the engine runs: `--report-interval 0` (sysbench format: no interval lines) still
/// runs the engine's clock at 1s; the result keeps 0, so no interval line is printed.
pub fn engine_spec(spec: &Spec) -> Cow<'_, Spec> {
    if spec.report_interval_s.is_zero() {
        let mut s = spec.clone();
        s.report_interval_s = Duration::from_secs(1);
        Cow::Owned(s)
    } else {
        Cow::Borrowed(spec)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The flags' defaults (`--submit-batch 2`), for the tests of this crate.
    pub(crate) fn opts() -> Options {
        Options {
            dir: "d".into(),
            device: None,
            mode: Mode::Rndrw,
            rw_ratio: 1.5,
            engine: EngineKind::Sync,
            iodepth: 1,
            submit_batch: 2,
            reap_batch: None,
            fixed_buffers: false,
            register_files: false,
            huge_pages: false,
            buffers: None,
            spin_polls: DEFAULT_SPIN_POLLS,
            buffered: false,
            dsync: false,
            sync: false,
            atime: false,
            fsync_every: 0,
            fsync_mode: FsyncMode::Fdatasync,
            fsync_end: false,
            block_size: 16384,
            file_num: None,
            file_total_size: None,
            threads: 1,
            time: None,
            events: 0,
            warmup: Duration::ZERO,
            misalign: 0,
            distribution: Distribution::Uniform,
            rate: None,
            seed: 1,
            report_interval: Duration::from_secs(1),
            percentiles: Vec::new(),
        }
    }

    fn marker(file_num: u64, file_size_bytes: u64) -> fileset::Marker {
        let mut m = fileset::Marker::default();
        m.file_num = file_num;
        m.file_size_bytes = file_size_bytes;
        m
    }

    #[test]
    fn distributions_parse() {
        assert_eq!(parse_distribution("uniform"), Ok(Distribution::Uniform));
        assert_eq!(
            parse_distribution("zipf:1.2"),
            Ok(Distribution::Zipf { theta: 1.2 })
        );
        assert_eq!(
            parse_distribution("hotspot:90/10"),
            Ok(Distribution::Hotspot {
                io_pct: 90.0,
                data_pct: 10.0
            })
        );
        assert!(parse_distribution("zipf").is_err());
        assert!(parse_distribution("pareto:0.3").is_err());
    }

    #[test]
    fn defaults_fill_what_is_not_given() {
        let s = opts().spec();
        assert_eq!(s.file_num, DEFAULT_FILE_NUM);
        assert_eq!(s.file_total_size_bytes, DEFAULT_FILE_TOTAL_SIZE);
        assert_eq!(s.time_s, Some(DEFAULT_TIME));
        assert_eq!(s.reap_batch, 2, "reap batch defaults to the submit batch");
        assert!(s.direct && s.noatime);
        assert_eq!(s.percentiles, DEFAULT_PERCENTILES.to_vec());
        let mut o = opts();
        o.events = 100;
        assert_eq!(o.spec().time_s, None, "--events alone: no time limit");
        o.device = Some("/dev/x".into());
        let s = o.spec();
        assert_eq!((s.file_num, s.file_total_size_bytes), (1, 0));
        assert_eq!(s.target, Target::Device("/dev/x".into()));
    }

    #[test]
    fn a_prepared_set_gives_its_geometry() {
        let m = marker(4, 1 << 20);
        let s = opts().spec_on_set(Path::new("d"), &m).unwrap();
        assert_eq!((s.file_num, s.file_total_size_bytes), (4, 4 << 20));
        // The first files of the set, same size: allowed.
        let mut o = opts();
        o.file_num = Some(2);
        let s = o.spec_on_set(Path::new("d"), &m).unwrap();
        assert_eq!((s.file_num, s.file_total_size_bytes), (2, 2 << 20));
        // Another file size: refused, naming the set and what to do.
        o.file_total_size = Some(8 << 20);
        let e = o.spec_on_set(Path::new("d"), &m).unwrap_err();
        assert!(e.is_usage());
        let e = e.to_string();
        assert!(
            e.starts_with("--file-num 2 --file-total-size 8MiB ask for 2 files of 4MiB, but the file set in d was prepared as 4 files of 1MiB (4MiB in all"),
            "{e}"
        );
        // The null engine opens no file: the sizes given are taken as they are.
        o.engine = EngineKind::Null;
        let s = o.spec_on_set(Path::new("d"), &m).unwrap();
        assert_eq!((s.file_num, s.file_total_size_bytes), (2, 8 << 20));
        // Commit mode needs no data files: the flags' own spec.
        let mut o = opts();
        o.mode = Mode::Commit;
        assert_eq!(o.spec_on_set(Path::new("d"), &m).unwrap(), o.spec());
    }

    #[test]
    fn engine_spec_runs_the_clock_at_1s_for_interval_0() {
        let mut s = opts().spec();
        assert!(matches!(engine_spec(&s), Cow::Borrowed(_)));
        s.report_interval_s = Duration::ZERO;
        assert_eq!(engine_spec(&s).report_interval_s, Duration::from_secs(1));
        assert_eq!(n_files(1), "1 file");
        assert_eq!(n_files(3), "3 files");
    }
}
