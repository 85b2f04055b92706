//! The engine layer without a disk: the worker loop, the interval clock and the reporter,
//! driven by a scripted engine ([`crate::engines::scripted`]) on a virtual clock that moves
//! only when an I/O "takes time", so every latency and boundary below is exact.

use super::*;
use crate::engines::scripted::{self, Script, Scripted, Step};
use crate::engines::{Io, Op};
use crate::timer::Timer;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const BLOCK: u64 = 4096;

fn plan(mode: Mode, iodepth: u32, files: u32, file_blocks: u64, events: Option<u64>) -> Plan {
    let total = files as u64 * file_blocks;
    Plan {
        id: 0,
        mode,
        block: BLOCK,
        iodepth,
        file_blocks,
        files,
        seq_range: (0, total),
        picker: BlockPicker::new(Distribution::Uniform, total),
        read_prob: 0.5,
        fsync_every: 0,
        fsync_end: false,
        misalign: 0,
        events,
        rate_period_ns: None,
        seed: 7,
        log: None,
        sync_each_commit: false,
        submit_batch: 1,
        reap_batch: 1,
    }
}

fn clock(
    now: &'static AtomicU64,
    warmup_ns: u64,
    interval_ns: u64,
    deadline: Option<u64>,
) -> Clock {
    Clock {
        timer: Timer::scripted(now),
        warmup_ns,
        interval_ns,
        deadline_ns: deadline,
    }
}

fn script(f: impl Fn(u64, &Io) -> Step + Send + Sync + 'static) -> Script {
    Arc::new(f)
}

/// Runs one worker to its end on `engine`; returns every snapshot it sent, in order.
fn drive(plan: &Plan, clock: Clock, engine: &mut Scripted) -> Vec<Snapshot> {
    let (tx, rx) = mpsc::channel();
    let (_recycle_tx, recycle) = mpsc::channel();
    worker::run(plan, clock, engine, &tx, &recycle, &AtomicBool::new(false));
    drop(tx);
    rx.iter().map(|s| *s).collect()
}

fn counts(snaps: &[Snapshot], op: usize) -> Vec<u64> {
    snaps.iter().map(|s| s.ops[op].hist.count()).collect()
}

#[test]
fn clock_boundaries_start_after_the_warmup() {
    let now = scripted::virtual_clock();
    let c = clock(now, 0, MS, None);
    assert_eq!(c.next_boundary(0), MS);
    assert_eq!(c.next_boundary(MS - 1), MS);
    assert_eq!(c.next_boundary(MS), 2 * MS);
    assert_eq!(c.interval_start(2 * MS), MS);
    // A warmup that is not a multiple of the interval ends an interval of its own; the
    // measured intervals count from its end.
    let c = clock(now, 2_500 * US, MS, None);
    let mut b = vec![c.next_boundary(0)];
    for _ in 0..3 {
        b.push(c.next_boundary(*b.last().unwrap()));
    }
    assert_eq!(b, [MS, 2 * MS, 2_500 * US, 3_500 * US]);
    let starts: Vec<u64> = b.iter().map(|&e| c.interval_start(e)).collect();
    assert_eq!(starts, [0, MS, 2 * MS, 2_500 * US]);
    // The last interval, cut short by the end of the run, starts where its full one would.
    assert_eq!(c.interval_start(4_500 * US), 3_500 * US);
}

#[test]
fn worker_cuts_intervals_at_their_boundaries() {
    // Inline engine: each read takes 100 us. Interval k holds the completions in
    // [k ms, k+1 ms): one completing exactly at a boundary opens the next interval.
    let now = scripted::virtual_clock();
    let mut e = Scripted::new(
        now,
        1,
        BLOCK as usize,
        true,
        script(|_, _| Step::ok(100 * US)),
    );
    let snaps = drive(
        &plan(Mode::Seqrd, 1, 2, 50, Some(35)),
        clock(now, 0, MS, None),
        &mut e,
    );
    let idx: Vec<u64> = snaps.iter().map(|s| s.index).collect();
    let ends: Vec<u64> = snaps.iter().map(|s| s.end_ns).collect();
    let last: Vec<bool> = snaps.iter().map(|s| s.last).collect();
    assert_eq!(idx, [0, 1, 2, 3]);
    assert_eq!(ends, [MS, 2 * MS, 3 * MS, 3_500 * US]);
    assert_eq!(last, [false, false, false, true]);
    assert_eq!(counts(&snaps, READ), [9, 10, 10, 6]);
    for s in &snaps {
        let h = &s.ops[READ].hist;
        assert_eq!((h.min(), h.max()), (100 * US, 100 * US));
        assert_eq!(s.ops[READ].bytes, h.count() * BLOCK);
        assert_eq!(s.busy_ns, h.count() * 100 * US);
        assert_eq!(s.ops[WRITE].hist.count() + s.ops[SYNC].hist.count(), 0);
    }
    // Sequential: block after block, crossing from file 0 to file 1 after 50 blocks.
    let at: Vec<(u32, u64)> = e.accepted.iter().map(|io| (io.file, io.offset)).collect();
    let want: Vec<(u32, u64)> = (0..35u64)
        .map(|g| ((g / 50) as u32, g % 50 * BLOCK))
        .collect();
    assert_eq!(at, want);
    let last = snaps.last().unwrap();
    assert_eq!((last.calls.reads, last.calls.writes), (35, 0));
    assert_eq!(last.engine.as_deref(), Some("scripted (inline)"));
    assert_eq!(last.error, None);
}

#[test]
fn an_io_completing_after_a_boundary_counts_in_the_interval_it_completed_in() {
    // Warmup 250 us, interval 1 ms, 100 us per read: the read started at 200 us completes at
    // 300 us, after the warmup ended: it is measured, not warmup.
    let now = scripted::virtual_clock();
    let mut e = Scripted::new(
        now,
        1,
        BLOCK as usize,
        true,
        script(|_, _| Step::ok(100 * US)),
    );
    let deadline = 250 * US + 2 * MS;
    let c = clock(now, 250 * US, MS, Some(deadline));
    let snaps = drive(&plan(Mode::Rndrd, 1, 1, 64, None), c, &mut e);
    let ends: Vec<u64> = snaps.iter().map(|s| s.end_ns).collect();
    // Completions at 100 and 200 us (warmup); 300 us .. 1.2 ms; 1.3 .. 2.2 ms; then the read
    // in flight at the deadline (2.25 ms) completes at 2.3 ms and ends the last interval.
    assert_eq!(ends, [250 * US, 1_250 * US, 2_300 * US]);
    assert_eq!(counts(&snaps, READ), [2, 10, 11]);
}

#[test]
fn async_completions_out_of_order_go_to_their_own_slots() {
    // Reads take 300 us, writes 100 us: with 4 in flight, writes overtake reads. Each
    // completion must be timed and counted as the operation of its own slot.
    let now = scripted::virtual_clock();
    let s = script(|_, io| match io.op {
        Op::Read => Step::ok(300 * US),
        _ => Step::ok(100 * US),
    });
    let mut e = Scripted::new(now, 4, BLOCK as usize, false, s);
    let snaps = drive(
        &plan(Mode::Rndrw, 4, 1, 1000, Some(200)),
        clock(now, 0, 1000 * MS, None),
        &mut e,
    );
    assert_eq!(snaps.len(), 1);
    let last = &snaps[0];
    let (r, w) = (&last.ops[READ], &last.ops[WRITE]);
    let reads = e.accepted.iter().filter(|io| io.op == Op::Read).count() as u64;
    assert!(reads > 20 && reads < 180, "{reads} of 200 I/Os were reads");
    assert_eq!((r.hist.count(), w.hist.count()), (reads, 200 - reads));
    assert_eq!((r.hist.min(), r.hist.max()), (300 * US, 300 * US));
    assert_eq!((w.hist.min(), w.hist.max()), (100 * US, 100 * US));
    assert_eq!((r.bytes, w.bytes), (reads * BLOCK, (200 - reads) * BLOCK));
    // The engine did hand completions back out of queue order.
    assert!(e.reaped.windows(2).any(|p| p[1] < p[0]), "{:?}", e.reaped);
    assert_eq!(e.reaped.len(), 200);
    assert_eq!(last.error, None);
    assert_eq!(last.calls.reads + last.calls.writes, 200);
}

#[test]
fn a_short_read_stops_the_worker_naming_file_and_offset() {
    let now = scripted::virtual_clock();
    let s = script(|n, _| {
        if n == 2 {
            Step::result(100, 10 * US)
        } else {
            Step::ok(10 * US)
        }
    });
    let mut e = Scripted::new(now, 1, BLOCK as usize, true, s);
    let snaps = drive(
        &plan(Mode::Seqrd, 1, 1, 64, Some(50)),
        clock(now, 0, MS, None),
        &mut e,
    );
    let last = snaps.last().unwrap();
    assert_eq!(last.error.as_deref(), Some("short read: 100 of 4096 bytes"));
    assert_eq!(last.error_at, Some((0, 2 * BLOCK)));
    // The two full reads are measured; the short one is not; nothing is issued after it.
    assert_eq!(counts(&snaps, READ).iter().sum::<u64>(), 2);
    assert_eq!(e.accepted.len(), 3);
}

#[test]
fn an_eio_stops_issuing_and_drains_what_is_in_flight() {
    let now = scripted::virtual_clock();
    let s = script(|n, _| {
        if n == 5 {
            Step::result(-(libc::EIO as i64), 50 * US)
        } else {
            Step::ok(50 * US)
        }
    });
    let mut e = Scripted::new(now, 4, BLOCK as usize, false, s);
    let snaps = drive(
        &plan(Mode::Seqrd, 4, 2, 3, Some(100)),
        clock(now, 0, MS, None),
        &mut e,
    );
    let last = snaps.last().unwrap();
    let msg = last.error.as_deref().unwrap();
    assert!(msg.starts_with("read of 4096 bytes failed: "), "{msg}");
    assert!(msg.ends_with("(os error 5)"), "{msg}");
    // The sixth I/O read block 5: blocks 0..3 are file 0, 3..6 file 1.
    assert_eq!(last.error_at, Some((1, 2 * BLOCK)));
    // Every other accepted I/O completed and was counted before the worker ended.
    let done = counts(&snaps, READ).iter().sum::<u64>();
    assert_eq!(done, e.accepted.len() as u64 - 1);
    assert!(e.accepted.len() < 100);
    assert_eq!(e.reaped.len(), e.accepted.len());
}

#[test]
fn a_busy_io_is_retried_not_lost() {
    // The engine refuses the 4th queue call once. The refused I/O must still be done (same
    // file and offset), and the worker must still do exactly its 20 events.
    let now = scripted::virtual_clock();
    let s = script(|n, _| {
        if n == 3 {
            Step::Busy
        } else {
            Step::ok(20 * US)
        }
    });
    let mut e = Scripted::new(now, 4, BLOCK as usize, false, s);
    let snaps = drive(
        &plan(Mode::Seqrd, 4, 1, 64, Some(20)),
        clock(now, 0, MS, None),
        &mut e,
    );
    let last = snaps.last().unwrap();
    assert_eq!(last.error, None);
    assert_eq!(counts(&snaps, READ).iter().sum::<u64>(), 20);
    let offsets: Vec<u64> = e.accepted.iter().map(|io| io.offset / BLOCK).collect();
    let mut sorted = offsets.clone();
    sorted.sort();
    assert_eq!(sorted, (0..20).collect::<Vec<u64>>(), "{offsets:?}");
}

#[test]
fn an_inline_engine_that_is_busy_with_nothing_in_flight_is_an_error() {
    // Nothing in flight can make room: retrying would spin forever.
    let now = scripted::virtual_clock();
    let s = script(|n, _| {
        if n >= 4 {
            Step::Busy
        } else {
            Step::ok(10 * US)
        }
    });
    let mut e = Scripted::new(now, 1, BLOCK as usize, true, s);
    let snaps = drive(
        &plan(Mode::Seqrd, 1, 1, 64, Some(20)),
        clock(now, 0, MS, None),
        &mut e,
    );
    let last = snaps.last().unwrap();
    let msg = last.error.as_deref().unwrap();
    assert!(
        msg.contains("busy") && msg.contains("no I/O in flight"),
        "{msg}"
    );
    assert_eq!(last.error_at, Some((0, 4 * BLOCK)));
    assert_eq!(counts(&snaps, READ).iter().sum::<u64>(), 4);
}

/// Feeds the reporter every worker's snapshots, interleaved as given; returns it and the
/// intervals in the order it emitted them.
fn report(
    c: Clock,
    workers: &[Vec<Snapshot>],
    order: &[usize],
    paths: Vec<PathBuf>,
) -> (Reporter, Vec<Interval>) {
    let mut rep = Reporter::new(c, workers.len(), paths, false);
    let mut seen = Vec::new();
    let mut next = vec![0; workers.len()];
    for &w in order {
        rep.accept(&workers[w][next[w]], &mut |iv| seen.push(iv.clone()));
        next[w] += 1;
    }
    assert_eq!(next, workers.iter().map(Vec::len).collect::<Vec<_>>());
    rep.flush(&mut |iv| seen.push(iv.clone()));
    (rep, seen)
}

/// Worker `id` reading `events` blocks, each taking `per_io` on its own virtual clock.
fn worker_snaps(
    id: u32,
    per_io: u64,
    events: u64,
    c: impl Fn(&'static AtomicU64) -> Clock,
) -> Vec<Snapshot> {
    let now = scripted::virtual_clock();
    let mut e = Scripted::new(
        now,
        1,
        BLOCK as usize,
        true,
        script(move |_, _| Step::ok(per_io)),
    );
    let mut p = plan(Mode::Seqrd, 1, 1, 1000, Some(events));
    p.id = id;
    drive(&p, c(now), &mut e)
}

#[test]
fn reporter_emits_an_interval_once_every_worker_has_passed_it() {
    // Warmup 1 ms, intervals of 1 ms. Worker 0: 100 us per read, 25 reads (ends at 2.5 ms);
    // worker 1: 250 us per read, 11 reads (ends at 2.75 ms).
    let mk = |now| clock(now, MS, MS, None);
    let w0 = worker_snaps(0, 100 * US, 25, mk);
    let w1 = worker_snaps(1, 250 * US, 11, mk);
    assert_eq!((w0.len(), w1.len()), (3, 3));
    // All of worker 0 first: nothing can be emitted before worker 1 reports interval 0.
    let c = mk(scripted::virtual_clock());
    let mut rep = Reporter::new(c, 2, Vec::new(), false);
    let mut seen: Vec<Interval> = Vec::new();
    for s in &w0 {
        rep.accept(s, &mut |iv| seen.push(iv.clone()));
    }
    assert!(seen.is_empty());
    rep.accept(&w1[0], &mut |iv| seen.push(iv.clone()));
    assert_eq!(seen.len(), 1);
    rep.accept(&w1[1], &mut |iv| seen.push(iv.clone()));
    assert_eq!(seen.len(), 2);
    rep.accept(&w1[2], &mut |iv| seen.push(iv.clone()));
    assert!(rep.all_done());
    rep.flush(&mut |iv| seen.push(iv.clone()));

    // The last interval ends with the last worker's last completion.
    let span: Vec<(f64, f64, bool)> = seen
        .iter()
        .map(|i| (i.start_s, i.end_s, i.warmup))
        .collect();
    assert_eq!(
        span,
        [
            (0.0, 0.001, true),
            (0.001, 0.002, false),
            (0.002, 0.00275, false)
        ]
    );
    // [0, 1 ms): 9 + 3 reads; [1, 2 ms): 10 + 4; [2, 2.75 ms]: 6 + 4.
    let n: Vec<u64> = seen.iter().map(|i| i.read.count).collect();
    assert_eq!(n, [12, 14, 10]);
    let max: Vec<u64> = seen.iter().map(|i| i.read.lat_ns.max).collect();
    assert_eq!(max, [250_000; 3]);
    // The totals leave the warmup out; so do each worker's own figures.
    assert_eq!(rep.total[READ].hist.count(), 24);
    assert_eq!(rep.total[READ].bytes, 24 * BLOCK);
    let ev: Vec<u64> = rep.per_thread.iter().map(|t| t.events).collect();
    assert_eq!(ev, [16, 8]);
    // Engine calls count the warmup too.
    assert_eq!(rep.calls.reads, 36);
    assert_eq!(rep.last_end, 2_750 * US);
    assert!(rep.first_error.is_none());
}

#[test]
fn reporter_gives_the_same_intervals_whatever_the_arrival_order() {
    let mk = |now| clock(now, 0, MS, None);
    let ws = [
        worker_snaps(0, 100 * US, 25, mk),
        worker_snaps(1, 300 * US, 9, mk),
    ];
    let c = mk(scripted::virtual_clock());
    let a: Vec<usize> = [0, 0, 0, 1, 1, 1].into();
    let b: Vec<usize> = [1, 0, 1, 0, 1, 0].into();
    let (ra, ia) = report(c, &ws, &a, Vec::new());
    let (rb, ib) = report(c, &ws, &b, Vec::new());
    let key = |v: &[Interval]| -> Vec<(f64, u64, u64)> {
        v.iter()
            .map(|i| (i.end_s, i.read.count, i.read.lat_ns.max))
            .collect()
    };
    assert_eq!(key(&ia), key(&ib));
    // 9 + 3 (at 0.3, 0.6, 0.9 ms); 10 + 3 (1.2, 1.5, 1.8); 6 + 3 (2.1, 2.4, 2.7 ms).
    assert_eq!(
        key(&ia),
        [
            (0.001, 12, 300_000),
            (0.002, 13, 300_000),
            (0.0027, 9, 300_000)
        ]
    );
    assert_eq!(ra.total[READ].hist.count(), 34);
    assert_eq!(rb.total[READ].hist.count(), 34);
}

#[test]
fn reporter_names_the_failing_file_and_offset() {
    let now = scripted::virtual_clock();
    let s = script(|_, io| {
        if io.file == 1 {
            Step::result(-(libc::EIO as i64), 0)
        } else {
            Step::ok(US)
        }
    });
    let mut e = Scripted::new(now, 1, BLOCK as usize, true, s);
    let mut p = plan(Mode::Seqrd, 1, 2, 4, Some(100));
    p.misalign = 512;
    let snaps = drive(&p, clock(now, 0, MS, None), &mut e);
    let c = clock(scripted::virtual_clock(), 0, MS, None);
    let paths = vec![
        PathBuf::from("/data/sbtest.0"),
        PathBuf::from("/data/sbtest.1"),
    ];
    let order = vec![0; snaps.len()];
    let (rep, _) = report(c, &[snaps], &order, paths);
    let e = rep.first_error.expect("the worker's error").to_string();
    assert!(
        e.starts_with("worker 0 stopped: /data/sbtest.1, offset 512: read of 4096 bytes failed: "),
        "{e}"
    );
    assert_eq!(e.matches("os error 5").count(), 1, "{e}");
}

fn spec(mode: Mode, threads: u32, iodepth: u32, events: u64) -> Spec {
    Spec {
        target: dbio_schema::bench::Target::Dir("/nonexistent/dbio-scripted".into()),
        mode,
        engine: EngineKind::Uring,
        block_size_bytes: BLOCK,
        file_num: 2,
        file_total_size_bytes: 2 * 64 * BLOCK,
        threads,
        iodepth,
        submit_batch: 1,
        reap_batch: 1,
        fixed_buffers: false,
        register_files: false,
        huge_pages: false,
        buffers: None,
        spin_polls: 0,
        time_s: None,
        events,
        warmup_s: Duration::ZERO,
        direct: false,
        dsync: false,
        sync: false,
        noatime: false,
        fsync_every: 0,
        fsync_mode: FsyncMode::Fdatasync,
        fsync_end: false,
        misalign_bytes: 0,
        distribution: Distribution::Uniform,
        rate_iops: None,
        rw_ratio: 1.0,
        seed: 3,
        report_interval_s: Duration::from_secs(3600),
        percentiles: vec![50.0, 99.0],
    }
}

/// Two files that are never opened: the scripted engine does no I/O.
fn target() -> Target {
    Target {
        files: Vec::new(),
        file_count: 2,
        paths: vec![
            "/nonexistent/dbio-scripted/sbtest.0".into(),
            "/nonexistent/dbio-scripted/sbtest.1".into(),
        ],
        file_size: 64 * BLOCK,
        logs: Vec::new(),
        open_flags: vec!["O_RDWR".into()],
        fs: "none".into(),
    }
}

#[test]
fn run_takes_its_engines_from_the_factory() {
    let f = scripted::Factory {
        inline: false,
        script: script(|_, io| {
            if io.op == Op::Read {
                Step::ok(30 * US)
            } else {
                Step::ok(10 * US)
            }
        }),
    };
    let mut seen = Vec::new();
    let out = run_with(
        &spec(Mode::Rndrw, 2, 8, 1000),
        &target(),
        &[],
        &AtomicBool::new(false),
        &mut |iv| seen.push(iv.read.count + iv.write.count),
        &f,
    )
    .unwrap();
    assert!(out.error.is_none());
    assert_eq!(out.engine.as_deref(), Some("scripted (async)"));
    let s = &out.summary;
    assert_eq!(s.read.count + s.write.count, 1000);
    assert_eq!(s.engine_calls.reads + s.engine_calls.writes, 1000);
    assert_eq!(s.read.bytes, s.read.count * BLOCK);
    let ev: Vec<u64> = s.threads.iter().map(|t| t.events).collect();
    assert_eq!(ev, [500, 500]);
    // One interval (the report interval is an hour) holding every I/O.
    assert_eq!(seen, [1000]);
}

#[test]
fn run_names_the_file_and_offset_of_a_failed_io() {
    let f = scripted::Factory {
        inline: true,
        script: script(|_, io| {
            if io.file == 1 && io.offset == 5 * BLOCK {
                Step::result(-(libc::EIO as i64), 0)
            } else {
                Step::ok(US)
            }
        }),
    };
    let out = run_with(
        &spec(Mode::Seqrd, 1, 1, 100),
        &target(),
        &[],
        &AtomicBool::new(false),
        &mut |_| {},
        &f,
    )
    .unwrap();
    let e = out.error.expect("the EIO").to_string();
    assert!(
        e.starts_with("worker 0 stopped: /nonexistent/dbio-scripted/sbtest.1, offset 20480: read of 4096 bytes failed: "),
        "{e}"
    );
    // Blocks 0..64 of file 0 and 0..5 of file 1 were read before it.
    assert_eq!(out.summary.read.count, 69);
}

/// A factory whose second worker cannot get an engine.
struct NoSecondEngine(scripted::Factory);

impl EngineFactory for NoSecondEngine {
    type Engine = Scripted;
    fn make(&self, s: EngineSetup) -> Result<Scripted, String> {
        if s.worker == 1 {
            return Err("cannot set up the scripted engine: use --engine sync".into());
        }
        self.0.make(s)
    }
}

#[test]
fn a_worker_without_an_engine_fails_the_run_with_the_factory_message() {
    let f = NoSecondEngine(scripted::Factory {
        inline: true,
        script: script(|_, _| Step::ok(US)),
    });
    let out = run_with(
        &spec(Mode::Rndrd, 2, 1, 40),
        &target(),
        &[],
        &AtomicBool::new(false),
        &mut |_| {},
        &f,
    )
    .unwrap();
    let e = out.error.expect("worker 1's error").to_string();
    assert_eq!(
        e,
        "worker 1 stopped: cannot set up the scripted engine: use --engine sync"
    );
    // Worker 0 still did its share.
    assert_eq!(out.summary.read.count, 20);
}

#[test]
fn the_null_engine_is_what_the_engine_name_picks() {
    let mut s = spec(Mode::Rndrd, 1, 4, 64);
    s.engine = EngineKind::Null;
    let out = run(&s, &target(), &[], &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(out.engine.as_deref(), Some("null: no I/O"));
    assert_eq!(out.summary.read.count, 64);
    // Async null engine (iodepth 4): reaps are its "system calls".
    assert!(out.summary.engine_calls.syscalls > 0);
}
