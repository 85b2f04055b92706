//! `dbio sweep`: one bench run per point of a plan (the Cartesian product of the swept values,
//! [`dbio_schema::sweep::points`]) on one file set, prepared once; each point's complete
//! result in `DIR/points/ID.json`, the sweep's own result rewritten as `DIR/sweep.json` after
//! every point (both atomically), so a sweep stopped by Ctrl-C, SIGTERM or `kill -9` resumes
//! where it stopped (`--resume`). With `--scheduler` the I/O scheduler of the disks under the
//! target is switched for each point and always restored ([`SchedulerSwitch`]).

use crate::error::BenchError;
use crate::fileset::{self, Prepared};
use crate::options::Options;
use crate::plan::{self, Phase};
use dbio_schema::bench::{BufferChoice, BufferLayout, BufferSource, Interval, Mode, Named, Spec};
use dbio_schema::sweep::{self, Axes, Figures, Point, PointResult, Status, SweepResult};
use dbio_sys::sysfs::{self, Sys};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// What `dbio sweep` was asked to do.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// The workload flags; the swept values are taken from the axes.
    pub base: Options,
    /// The values swept.
    pub axes: Axes,
    /// Runs of every point.
    pub repeat: u32,
    /// Where `sweep.json` and `points/` go.
    pub output_dir: PathBuf,
    /// Continue the sweep already in `output_dir`.
    pub resume: bool,
    /// Keep the file set at the end.
    pub keep: bool,
    /// `--allow-device-writes`.
    pub allow_device_writes: bool,
    /// Start the first point at this time.
    pub start_at: Option<SystemTime>,
    /// What each point runs.
    pub workload: Workload,
}

/// What each point of a sweep runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// A dbio bench run of the point's values.
    Bench,
    /// sysbench's oltp_read_write against a MySQL/MariaDB server at the point's thread count,
    /// for `secs` seconds; CPU and the device under `datadir` (when given) sampled around it.
    SysbenchOltp {
        /// The server and the tables.
        sysbench: crate::oltp::Sysbench,
        /// The server's datadir, for device figures and `--scheduler`.
        datadir: Option<PathBuf>,
        /// Seconds per point.
        secs: u64,
    },
}

/// What a sweep tells its caller as it goes (the binary shows progress; the library never
/// prints).
pub trait Events {
    /// The file set was prepared (`None`: an existing one is used).
    fn prepared(&mut self, _p: Option<&Prepared>) {}
    /// Point `index` (from 0) of `of` starts.
    fn point_start(&mut self, _index: usize, _of: usize, _point: &Point) {}
    /// An interval of the running point completed.
    fn interval(&mut self, _iv: &Interval) {}
    /// A point ended (done, failed, or interrupted: pending).
    fn point_end(&mut self, _r: &PointResult) {}
    /// A warning about a point's run.
    fn warning(&mut self, _w: &str) {}
}

/// The spec of `point` on the workload `base`, on the file set prepared in its directory.
pub fn point_options(base: &Options, p: &Point) -> Options {
    let (huge_pages, buffers) = match p.buffers {
        None => (base.huge_pages, base.buffers.clone()),
        Some(b) => (
            b == BufferLayout::Huge,
            Some(BufferChoice {
                source: BufferSource::Flag,
                why: format!("the sweep's --buffers {}", b.name()),
            }),
        ),
    };
    Options {
        mode: p.mode,
        block_size: p.block_size_bytes,
        misalign: p.misalign_bytes,
        iodepth: p.iodepth,
        threads: p.threads,
        huge_pages,
        buffers,
        ..base.clone()
    }
}

/// Refuses a plan that cannot run as one sweep, before anything is written.
pub fn check_plan(o: &SweepOptions) -> Result<Vec<Point>, BenchError> {
    let bad = |m: String| Err(BenchError::InvalidSpec(m));
    if o.axes.is_empty() {
        return bad("every swept flag needs at least one value".into());
    }
    if o.repeat == 0 {
        return bad("--repeat 0 runs nothing: give 1 or more".into());
    }
    let commit = o.axes.mode.iter().filter(|m| **m == Mode::Commit).count();
    if commit > 0 && commit < o.axes.mode.len() {
        return bad("--mode commit cannot be swept together with file modes (it writes per-thread logs, not the data files): sweep it on its own".into());
    }
    if !o.axes.buffers.is_empty() && o.base.engine == dbio_schema::bench::EngineKind::Null {
        return bad("--buffers sweeps the I/O buffers of the sync and uring engines: the null engine does no I/O".into());
    }
    let pts = sweep::points(&o.axes, o.repeat);
    if let Workload::SysbenchOltp { datadir, .. } = &o.workload {
        if !o.axes.buffers.is_empty() {
            return bad("--buffers sweeps dbio bench's own I/O buffers: with --workload sysbench-oltp the server's buffer pool is what it is (set large_pages in the server)".into());
        }
        let a = &o.axes;
        if a.mode.len() > 1
            || a.block_size_bytes.len() > 1
            || a.misalign_bytes.len() > 1
            || a.iodepth.len() > 1
        {
            return bad("--workload sysbench-oltp sweeps --threads (and --scheduler, --repeat): give one value of --mode, --block-size, --misalign and --iodepth (they describe bench runs)".into());
        }
        if !a.scheduler.is_empty() && datadir.is_none() {
            return bad("--scheduler with --workload sysbench-oltp needs --datadir (the server's datadir, whose disks are switched)".into());
        }
        // The bench values mean nothing here: the name says what runs.
        let pts = pts
            .into_iter()
            .enumerate()
            .map(|(i, mut p)| {
                p.id = format!("{:03}-oltp-t{}", i + 1, p.threads);
                if let Some(s) = &p.scheduler {
                    p.id = format!("{}-{s}", p.id);
                }
                if o.repeat > 1 {
                    p.id = format!("{}-r{}", p.id, p.repeat);
                }
                p
            })
            .collect();
        return Ok(pts);
    }
    for p in &pts {
        let spec = point_options(&o.base, p).spec();
        crate::spec::validate(&crate::options::engine_spec(&spec))
            .map_err(|e| BenchError::InvalidSpec(format!("point {}: {e}", p.id)))?;
    }
    Ok(pts)
}

/// The I/O schedulers of some disks, switched for a sweep and restored when dropped.
pub struct SchedulerSwitch {
    sys: Sys,
    saved: Vec<(String, String)>,
}

impl SchedulerSwitch {
    /// Remembers the active scheduler of each disk; refuses a disk without a choice of
    /// schedulers or that does not offer every one of `wanted`.
    pub fn new(sys: Sys, disks: &[String], wanted: &[String]) -> Result<Self, BenchError> {
        let mut saved = Vec::new();
        for d in disks {
            let rel = format!("sys/class/block/{d}/queue/scheduler");
            let text = sys.read(&rel).map_err(|e| BenchError::InvalidSpec(format!(
                "--scheduler: {d} has no I/O scheduler to switch ({e}): it is not a whole disk with a request queue"
            )))?;
            let (active, all) = sysfs::parse_scheduler(&text);
            if let Some(w) = wanted.iter().find(|w| !all.contains(w)) {
                return Err(BenchError::InvalidSpec(format!(
                    "--scheduler {w}: {d} offers {} (load the module, e.g. modprobe {w}, or leave it out)",
                    all.join(", ")
                )));
            }
            saved.push((d.clone(), active.unwrap_or_else(|| "none".into())));
        }
        Ok(SchedulerSwitch { sys, saved })
    }

    /// The disks and the scheduler each had.
    pub fn saved(&self) -> &[(String, String)] {
        &self.saved
    }

    fn write(&self, disk: &str, name: &str) -> Result<(), BenchError> {
        let p = self.sys.class_block(disk).join("queue").join("scheduler");
        std::fs::write(&p, name).map_err(|e| {
            BenchError::Failed(format!(
                "cannot set the I/O scheduler of {disk} to {name} ({}: {e}): this needs root",
                p.display()
            ))
        })
    }

    /// Sets `name` on every disk.
    pub fn set(&self, name: &str) -> Result<(), BenchError> {
        for (d, _) in &self.saved {
            self.write(d, name)?;
        }
        Ok(())
    }

    /// Puts every disk's scheduler back; the first failure is returned after trying all.
    pub fn restore(&self) -> Result<(), BenchError> {
        let mut first = None;
        for (d, s) in &self.saved {
            if let Err(e) = self.write(d, s) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for SchedulerSwitch {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}

/// The whole disks under the target of `spec` (the leaves of its device stack).
pub fn target_disks(spec: &Spec) -> Result<Vec<String>, BenchError> {
    let stack = match &spec.target {
        dbio_schema::bench::Target::Dir(d) => dbio_sys::stack::resolve(d),
        dbio_schema::bench::Target::Device(d) => dbio_sys::stack::resolve_device(d),
    }
    .map_err(|e| BenchError::InvalidSpec(format!("--scheduler: {e}")))?;
    if stack.leaf_disks.is_empty() {
        return Err(BenchError::InvalidSpec(
            "--scheduler: the target is not on a block device (tmpfs?): there is no scheduler to switch".into(),
        ));
    }
    Ok(stack.leaf_disks)
}

fn write_json<T: serde::Serialize>(path: &Path, v: &T) -> Result<(), BenchError> {
    let mut bytes = serde_json::to_vec_pretty(v).expect("results serialise");
    bytes.push(b'\n');
    dbio_sys::atomic::write_atomic(path, &bytes).map_err(|e| {
        BenchError::Failed(format!(
            "cannot write {}: {e}: check that the directory is writable and has free space",
            path.display()
        ))
    })
}

/// `DIR/sweep.json`.
pub fn sweep_file(dir: &Path) -> PathBuf {
    dir.join("sweep.json")
}

/// Reads a sweep's result (for `--resume`, `dbio report`, `dbio model usl`).
pub fn read_sweep(dir: &Path) -> Result<SweepResult, BenchError> {
    let p = sweep_file(dir);
    let text = std::fs::read_to_string(&p)
        .map_err(|e| BenchError::Failed(format!("cannot read {}: {e}", p.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        BenchError::InvalidSpec(format!(
            "{} is not a dbio sweep result ({e}): give the directory of a dbio sweep",
            p.display()
        ))
    })
}

/// The sweep result to continue: a new one, or (with `--resume`) the one in the directory,
/// which must be the same plan.
fn start(o: &SweepOptions, pts: Vec<Point>, base: Spec) -> Result<SweepResult, BenchError> {
    let file = sweep_file(&o.output_dir);
    let fresh = SweepResult {
        schema: sweep::SWEEP_SCHEMA.into(),
        dbio_version: dbio_schema::doc::DBIO_VERSION.into(),
        started_at: crate::result::rfc3339(SystemTime::now()),
        workload: match o.workload {
            Workload::Bench => "bench".into(),
            Workload::SysbenchOltp { .. } => "sysbench-oltp".into(),
        },
        axes: o.axes.clone(),
        repeat: o.repeat,
        base,
        environment: None,
        points: pts
            .into_iter()
            .map(|point| PointResult {
                point,
                status: Status::Pending,
                file: None,
                error: None,
                figures: None,
                oltp: None,
            })
            .collect(),
        interrupted: false,
    };
    match (file.exists(), o.resume) {
        (false, false) => Ok(fresh),
        (true, false) => Err(BenchError::InvalidSpec(format!(
            "{} already holds a sweep: add --resume to continue it, or give another --output-dir",
            o.output_dir.display()
        ))),
        (false, true) => Err(BenchError::InvalidSpec(format!(
            "--resume: {} holds no sweep.json to resume: run without --resume to start one",
            o.output_dir.display()
        ))),
        (true, true) => {
            let mut old = read_sweep(&o.output_dir)?;
            let same = old.workload == fresh.workload
                && old.axes == fresh.axes
                && old.repeat == fresh.repeat
                && old.base.engine == fresh.base.engine
                && old.base.target == fresh.base.target
                && old.base.time_s == fresh.base.time_s
                && old.base.file_num == fresh.base.file_num;
            if !same {
                return Err(BenchError::InvalidSpec(format!(
                    "--resume: the sweep in {} has other swept values or workload (target, engine, --time, --file-num): repeat its flags, or give another --output-dir",
                    o.output_dir.display()
                )));
            }
            // A point is done only if its result file is still there.
            for p in &mut old.points {
                let ok = p
                    .file
                    .as_ref()
                    .is_some_and(|f| o.output_dir.join(f).exists());
                if p.status != Status::Done || !ok {
                    p.status = Status::Pending;
                    p.file = None;
                    p.figures = None;
                    p.oltp = None;
                }
            }
            old.interrupted = false;
            Ok(old)
        }
    }
}

/// Sleeps until `t` (or until `stop`).
fn wait_until(t: SystemTime, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match t.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(Duration::from_millis(100))),
            _ => return,
        }
    }
}

/// Runs the sweep: prepares the file set (or uses the one in `--dir`), runs every pending
/// point, writes each result, and removes the file set at the end unless it was there before
/// or `keep`. Returns the sweep result (also in `DIR/sweep.json`).
pub fn run(
    o: &SweepOptions,
    stop: &AtomicBool,
    ev: &mut dyn Events,
) -> Result<SweepResult, BenchError> {
    let pts = check_plan(o)?;
    if let Workload::SysbenchOltp { .. } = o.workload {
        return run_oltp(o, pts, stop, ev);
    }
    let first = point_options(&o.base, &pts[0]);
    let (base_spec, set) = plan::spec_and_set(None, &first)?;
    let switch = if o.axes.scheduler.is_empty() {
        None
    } else {
        let disks = target_disks(&base_spec)?;
        Some(SchedulerSwitch::new(
            Sys::live(),
            &disks,
            &o.axes.scheduler,
        )?)
    };
    let mut res = start(o, pts, base_spec.clone())?;
    std::fs::create_dir_all(o.output_dir.join("points")).map_err(|e| {
        BenchError::Failed(format!(
            "cannot create {}: {e}",
            o.output_dir.join("points").display()
        ))
    })?;
    write_json(&sweep_file(&o.output_dir), &res)?;

    // The file set: one prepare for every point (a device or the null engine needs none).
    let needs_set =
        o.base.device.is_none() && o.base.engine != dbio_schema::bench::EngineKind::Null;
    let dir = o.base.dir.clone();
    // Whether the set is this sweep's, removed at its end (unless --keep): one it prepares now
    // where there was none, or (--resume) the one it prepared before it was killed, as its
    // marker says. A set prepared by `dbio bench` (or another sweep) is used and kept, also
    // when it has to be completed first.
    let mut created = false;
    let mut prepared = None;
    if needs_set {
        let me = std::fs::canonicalize(&o.output_dir).map_err(|e| {
            BenchError::Failed(format!("cannot resolve {}: {e}", o.output_dir.display()))
        })?;
        created = match &set {
            None => true,
            Some(m) => o.resume && m.prepared_by_sweep.as_deref() == Some(me.as_path()),
        };
        match set {
            Some(m) if m.is_complete(&dir) => ev.prepared(None),
            _ => {
                let spec = plan::spec_and_set(Some(Phase::Prepare), &first)?.0;
                let size = crate::spec::file_size(&spec);
                let files = if spec.mode == Mode::Commit {
                    0
                } else {
                    spec.file_num
                };
                let owner = created.then_some(me.as_path());
                let p = fileset::prepare_for(&dir, files, size, spec.seed, owner, stop, &|_| {})?;
                if p.interrupted {
                    res.interrupted = true;
                    write_json(&sweep_file(&o.output_dir), &res)?;
                    if created {
                        let _ = fileset::cleanup(&dir);
                    }
                    return Ok(res);
                }
                ev.prepared(Some(&p));
                prepared = Some(p);
            }
        }
    }
    if let Some(t) = o.start_at {
        wait_until(t, stop);
    }
    let outcome = run_points(o, &mut res, switch.as_ref(), prepared.as_ref(), stop, ev);
    if let Some(s) = &switch {
        s.restore()?;
    }
    if created && !o.keep {
        fileset::cleanup(&dir)?;
    }
    outcome?;
    Ok(res)
}

/// `--workload sysbench-oltp`: the tables prepared once (kept if they were there), one
/// sysbench run per point.
fn run_oltp(
    o: &SweepOptions,
    pts: Vec<Point>,
    stop: &AtomicBool,
    ev: &mut dyn Events,
) -> Result<SweepResult, BenchError> {
    let Workload::SysbenchOltp {
        sysbench,
        datadir,
        secs,
    } = &o.workload
    else {
        unreachable!("called for sysbench-oltp only")
    };
    let devices = match datadir {
        Some(d) => dbio_sys::stack::resolve(d)
            .map_err(|e| BenchError::InvalidSpec(format!("--datadir: {e}")))?
            .devices
            .first()
            .map(|d| vec![d.name.clone()])
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let switch = match (&o.axes.scheduler.is_empty(), datadir) {
        (false, Some(d)) => {
            let stack = dbio_sys::stack::resolve(d)
                .map_err(|e| BenchError::InvalidSpec(format!("--datadir: {e}")))?;
            Some(SchedulerSwitch::new(
                Sys::live(),
                &stack.leaf_disks,
                &o.axes.scheduler,
            )?)
        }
        _ => None,
    };
    let base = point_options(&o.base, &pts[0]).spec();
    let mut res = start(o, pts, base)?;
    std::fs::create_dir_all(o.output_dir.join("points")).map_err(|e| {
        BenchError::Failed(format!(
            "cannot create {}: {e}",
            o.output_dir.join("points").display()
        ))
    })?;
    write_json(&sweep_file(&o.output_dir), &res)?;
    let created = sysbench.prepare()?;
    ev.prepared(None);
    if let Some(t) = o.start_at {
        wait_until(t, stop);
    }
    let n = res.points.len();
    let mut outcome = Ok(());
    for i in 0..n {
        if res.points[i].status == Status::Done {
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            res.interrupted = true;
            break;
        }
        let point = res.points[i].point.clone();
        ev.point_start(i, n, &point);
        if let (Some(s), Some(name)) = (&switch, &point.scheduler) {
            if let Err(e) = s.set(name) {
                outcome = Err(e);
                break;
            }
        }
        let mut mon = crate::devmon::Samples::new(devices.clone());
        let t0 = std::time::Instant::now();
        mon.sample(0);
        let run = sysbench.run_point(point.threads, *secs);
        let t1 = t0.elapsed().as_nanos() as u64;
        mon.sample(t1);
        let slot = &mut res.points[i];
        match run.and_then(|text| crate::oltp::parse(&text).map(|f| (text, f))) {
            Ok((text, mut f)) => {
                let cpu = mon.cpu_interval(0, t1);
                f.cpu_usr_pct = cpu.map(|c| c.usr_pct);
                f.cpu_sys_pct = cpu.map(|c| c.sys_pct);
                f.cpu_iowait_pct = cpu.map(|c| c.iowait_pct);
                let dev = mon.interval(0, t1);
                f.device_util_pct = dev.first().map(|d| d.util_pct);
                f.device_aqu_sz = dev.first().map(|d| d.aqu_sz);
                let rel = format!("points/{}.txt", point.id);
                dbio_sys::atomic::write_atomic(&o.output_dir.join(&rel), text.as_bytes())
                    .map_err(|e| BenchError::Failed(format!("cannot write {rel}: {e}")))?;
                slot.status = Status::Done;
                slot.file = Some(rel);
                slot.oltp = Some(f);
            }
            Err(e) => {
                slot.status = Status::Failed;
                slot.error = Some(e.to_string());
            }
        }
        ev.point_end(&res.points[i]);
        write_json(&sweep_file(&o.output_dir), &res)?;
    }
    if stop.load(Ordering::SeqCst) && res.done() < n {
        res.interrupted = true;
        write_json(&sweep_file(&o.output_dir), &res)?;
    }
    if let Some(s) = &switch {
        s.restore()?;
    }
    if created && !o.keep {
        sysbench.cleanup()?;
    }
    outcome?;
    Ok(res)
}

fn run_points(
    o: &SweepOptions,
    res: &mut SweepResult,
    switch: Option<&SchedulerSwitch>,
    prepared: Option<&Prepared>,
    stop: &AtomicBool,
    ev: &mut dyn Events,
) -> Result<(), BenchError> {
    let n = res.points.len();
    for i in 0..n {
        if res.points[i].status == Status::Done {
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            res.interrupted = true;
            break;
        }
        let point = res.points[i].point.clone();
        ev.point_start(i, n, &point);
        if let (Some(s), Some(name)) = (switch, &point.scheduler) {
            s.set(name)?;
        }
        let spec = plan::spec_and_set(Some(Phase::Run), &point_options(&o.base, &point))?.0;
        crate::spec::check_resources(&spec)?;
        let setup = crate::result::setup(&spec, o.allow_device_writes, prepared)?;
        for w in &setup.warnings {
            ev.warning(w);
        }
        let mut on_interval = |iv: &Interval| ev.interval(iv);
        let (result, err) = crate::result::measure(&spec, setup, stop, &mut on_interval)?;
        let slot = &mut res.points[i];
        if result.interrupted {
            // Partial: run again on --resume.
            res.interrupted = true;
        } else if let Some(e) = err {
            slot.status = Status::Failed;
            slot.error = Some(e.to_string());
        } else {
            let rel = format!("points/{}.json", point.id);
            write_json(&o.output_dir.join(&rel), &result)?;
            slot.status = Status::Done;
            slot.file = Some(rel);
            slot.figures = Some(Figures::of(&result));
        }
        if res.environment.is_none() && !result.interrupted {
            res.environment = Some(result.environment.clone());
        }
        ev.point_end(&res.points[i]);
        write_json(&sweep_file(&o.output_dir), res)?;
        if res.interrupted {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(sched: &str) -> (tempfile::TempDir, Sys) {
        let t = tempfile::tempdir().unwrap();
        let q = t.path().join("sys/class/block/sda/queue");
        std::fs::create_dir_all(&q).unwrap();
        std::fs::write(q.join("scheduler"), sched).unwrap();
        let sys = Sys::at(t.path());
        (t, sys)
    }

    #[test]
    fn a_switch_sets_and_restores_on_drop() {
        let (t, sys) = tree("[none] mq-deadline bfq\n");
        let file = t.path().join("sys/class/block/sda/queue/scheduler");
        {
            let s = SchedulerSwitch::new(sys.clone(), &["sda".into()], &["bfq".into()]).unwrap();
            assert_eq!(s.saved(), [("sda".to_string(), "none".to_string())]);
            s.set("bfq").unwrap();
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "bfq");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "none");
        let e = SchedulerSwitch::new(sys, &["sda".into()], &["kyber".into()])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("kyber") && e.contains("offers"), "{e}");
    }

    #[test]
    fn plans_mixing_commit_with_file_modes_are_refused() {
        let base = crate::options::tests::opts();
        let o = SweepOptions {
            base,
            axes: Axes {
                mode: vec![Mode::Commit, Mode::Rndrd],
                block_size_bytes: vec![4096],
                misalign_bytes: vec![0],
                scheduler: vec![],
                iodepth: vec![1],
                threads: vec![1],
                buffers: vec![],
            },
            repeat: 1,
            output_dir: "/nonexistent".into(),
            resume: false,
            keep: false,
            allow_device_writes: false,
            start_at: None,
            workload: Workload::Bench,
        };
        assert!(check_plan(&o).unwrap_err().to_string().contains("commit"));
    }
}
