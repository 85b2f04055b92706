//! `dbio mysql chunk`: a big delete, archive or update on a live MySQL/MariaDB, in throttled,
//! resumable chunks. The flags become [`dbio_mysql::job::Options`]; the job runs in
//! dbio-mysql; this file draws the progress, prints pauses and renders the result.

mod advise;
mod args;
mod stalk;

use crate::cli::usage;
use crate::output::{to_stderr, OutputArgs};
use crate::progress::Progress;
use anyhow::Context;
use args::{options, ChunkArgs};
use dbio_mysql::guard::Cause;
use dbio_mysql::job;
use dbio_schema::mysql_chunk::{ChunkPlan, ChunkResult};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Arguments of `dbio mysql`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Delete, archive or update the rows matching --where in short chunks along the primary
    /// key, throttled by the server's load; a dry run unless --execute.
    Chunk(Box<ChunkArgs>),
    /// Watch the server; when a trigger holds, write the minute before and collect
    /// (pt-stalk's files, capture.json), then say who did it (--report DIR).
    Stalk(Box<stalk::StalkArgs>),
    /// Configuration and status advice from what the server does over an interval (rates
    /// over the interval, never since startup), with the storage under its datadir.
    Advise(Box<advise::AdviseArgs>),
}

/// Runs `dbio mysql`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.command {
        Sub::Chunk(a) => chunk(*a),
        Sub::Stalk(a) => stalk::stalk(*a),
        Sub::Advise(a) => advise::run(*a),
    }
}

/// Draws the progress bar and prints pauses on stderr.
struct Show {
    bar: Option<Progress>,
    flight: Arc<Mutex<Flight>>,
}

/// What the job waits on, for the watchdog (see [`watchdog`]).
struct Flight {
    /// A wait on the server and since when (before the plan: connecting and planning).
    waiting: Option<(String, Instant)>,
    /// The checkpoint, once the plan names it.
    state_file: Option<PathBuf>,
    /// The job returned: nothing to do.
    done: bool,
}

impl job::Observer for Show {
    fn plan(&mut self, plan: &ChunkPlan) {
        self.bar = Some(Progress::rows("chunk: ", plan.table_rows_estimate.max(1)));
        let mut f = self.flight.lock().unwrap_or_else(|p| p.into_inner());
        f.waiting = None;
        f.state_file = Some(PathBuf::from(&plan.state_file));
    }
    fn in_flight(&mut self, what: Option<&str>) {
        let mut f = self.flight.lock().unwrap_or_else(|p| p.into_inner());
        f.waiting = what.map(|w| (w.to_string(), Instant::now()));
    }
    fn chunk(&mut self, p: &job::Progress) {
        if let Some(b) = &self.bar {
            // Key rows left when the run began (a resumed run walks only the rest).
            b.set_length(p.rows_estimate.max(p.rows_walked));
            b.set_found(
                p.rows_walked,
                p.rows_affected.max(p.rows_archived),
                &format!("rows done, chunk {}", p.chunk_rows),
            );
        }
    }
    fn pause(&mut self, cause: &Cause) {
        self.note(&format!("dbio: paused: {cause}\n"));
    }
    fn resumed(&mut self, paused: Duration) {
        self.note(&format!(
            "dbio: resumed after {:.1}s\n",
            paused.as_secs_f64()
        ));
    }
}

impl Show {
    fn note(&self, s: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| to_stderr(s)),
            None => to_stderr(s),
        }
    }
}

fn chunk(a: ChunkArgs) -> anyhow::Result<u8> {
    let opts = options(&a)?;
    // The result is written after the job: where it goes is checked now.
    a.out.check()?;
    let stop = crate::signals::install();
    let flight = Arc::new(Mutex::new(Flight {
        waiting: Some(("connecting and planning".into(), Instant::now())),
        state_file: None,
        done: false,
    }));
    let mut show = Show {
        bar: None,
        flight: flight.clone(),
    };
    watchdog(&opts, flight.clone());
    let result = job::run(&opts, stop, &mut show);
    flight.lock().unwrap_or_else(|p| p.into_inner()).done = true;
    let result = result.map_err(|e| {
        use dbio_mysql::Error as E;
        // A stall before the walk (the walk's own say what the checkpoint holds).
        let e = dbio_mysql::conn::explain(
            e,
            &opts.dsn,
            &opts.net,
            None,
            "No chunk of this run had started.",
        );
        let refused = matches!(
            e,
            E::Key(_)
                | E::SqlText(_)
                | E::NotRange { .. }
                | E::StateExists(_)
                | E::StateMismatch(_)
                | E::NoState(_)
                | E::ArchiveExists(_)
                | E::PendingUnknown { .. }
                | E::ArchiveIdentity { .. }
                | E::Cascade { .. }
                | E::ArchiveChildren(_)
                | E::MarkerTable { .. }
                | E::StateVersion { .. }
                | E::Dsn { .. }
                | E::NoDatabase
                | E::NoTable(_)
                | E::Engine { .. }
        );
        let what = format!("mysql chunk on {}", opts.table);
        if refused {
            usage(format!("{what}: {e}"))
        } else {
            anyhow::Error::new(e).context(what)
        }
    })?;
    if let Some(b) = show.bar.take() {
        b.finish();
    }
    render(&a.out, &result)?;
    Ok(match result.run.as_ref().map(|r| r.outcome.as_str()) {
        Some("interrupted") => crate::signals::EXIT_INTERRUPTED,
        Some("stopped") => crate::cli::EXIT_FAILURE,
        _ => 0,
    })
}

/// The first Ctrl-C (or SIGTERM) ends the run after the chunk in progress; a job blocked on a
/// server that stopped answering would wait out --net-timeout first (a blocked read resumes
/// after the signal). So: once the signal is --lock-wait-timeout + 2 s old (time for a chunk
/// to finish or roll back a lock wait) and the job still waits on the server, say what was in
/// flight and what the checkpoint holds, and exit 130 (143 for SIGTERM) without waiting. The
/// checkpoint is consistent at every moment (as after kill -9): --resume settles the chunk.
fn watchdog(opts: &job::Options, flight: Arc<Mutex<Flight>>) {
    let server = dbio_mysql::conn::server_of(&opts.dsn);
    let grace = Duration::from_secs(u64::from(opts.lock_wait_timeout) + 2);
    crate::signals::after_stop(grace, move || {
        let f = flight.lock().unwrap_or_else(|p| p.into_inner());
        if f.done {
            return true;
        }
        let Some((what, since)) = &f.waiting else {
            return false;
        };
        let held = match &f.state_file {
            None => "No chunk of this run had started.".to_string(),
            Some(p) => match dbio_mysql::state::Checkpoint::load(p) {
                Ok(ck) => dbio_mysql::conn::held(&ck, p, None),
                Err(e) => format!("The checkpoint cannot be read: {e}"),
            },
        };
        to_stderr(&format!(
            "\ndbio: interrupted while {what}: the server at {server} has kept it waiting {:.1}s; not waiting longer (no summary). {held}\n",
            since.elapsed().as_secs_f64()
        ));
        std::process::exit(i32::from(crate::signals::exit_code(
            crate::signals::EXIT_INTERRUPTED,
        )));
    });
}

fn render(out: &OutputArgs<ChunkResult>, r: &ChunkResult) -> anyhow::Result<()> {
    out.emit_result(r).context("writing the result")
}
