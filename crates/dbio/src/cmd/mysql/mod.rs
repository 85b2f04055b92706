//! `dbio mysql chunk`: a big delete, archive or update on a live MySQL/MariaDB, in throttled,
//! resumable chunks. The flags become [`dbio_mysql::job::Options`]; the job runs in
//! dbio-mysql; this file draws the progress, prints pauses and renders the result.

mod args;

use crate::cli::usage;
use crate::output::{to_stderr, OutputArgs};
use crate::progress::Progress;
use anyhow::Context;
use args::{options, ChunkArgs};
use dbio_mysql::guard::Cause;
use dbio_mysql::job;
use dbio_report::export::{text, Format};
use dbio_report::mysql_chunk::{ChunkPlan, ChunkResult};
use dbio_report::{Document, Exporter, JsonExporter};
use std::time::Duration;

crate::formats!(ChunkFormats: Text, Json);

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
}

/// Runs `dbio mysql`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.command {
        Sub::Chunk(a) => chunk(*a),
    }
}

/// Draws the progress bar and prints pauses on stderr.
struct Show {
    bar: Option<Progress>,
}

impl job::Observer for Show {
    fn plan(&mut self, plan: &ChunkPlan) {
        self.bar = Some(Progress::rows("chunk: ", plan.table_rows_estimate.max(1)));
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
    let mut show = Show { bar: None };
    let result = job::run(&opts, stop, &mut show).map_err(|e| {
        use dbio_mysql::Error as E;
        let refused = matches!(
            e,
            E::Key(_)
                | E::SqlText(_)
                | E::NotRange { .. }
                | E::StateExists(_)
                | E::StateMismatch(_)
                | E::NoState(_)
                | E::ArchiveExists(_)
                | E::PendingUpdate { .. }
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

fn render(out: &OutputArgs<ChunkFormats>, r: &ChunkResult) -> anyhow::Result<()> {
    let bytes = match out.format {
        Format::Json => JsonExporter.to_string(&Document::new(dbio_report::doc::MYSQL_CHUNK, r))?,
        _ => text::mysql_chunk::TextExporter.to_string(r)?,
    };
    out.emit(bytes.as_bytes()).context("writing the result")
}
