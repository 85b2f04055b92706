//! Reading what `dbio report` is given: bench results (`dbio.bench/1` JSON files) and sweep
//! directories. A sweep directory is recognised by its `sweep.json` (or that file is named
//! itself); its points are the bench results in `DIR/points/*.json`, read in name order.
//! Reading the sweep's own plan and environment (`sweep.json`) is the one step left to add
//! when `dbio sweep` lands: [`Source::SweepPoint`] already names the sweep each point came from.

use dbio_schema::bench::BenchResult;
use std::path::{Path, PathBuf};

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file or directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The system's answer.
        source: std::io::Error,
    },
    /// The file is not a bench result.
    #[error("{path} is not a dbio bench result ({why}): give the JSON of `dbio bench --format json` or a sweep directory")]
    NotBench {
        /// The path.
        path: PathBuf,
        /// What was found instead.
        why: String,
    },
    /// A bench result holding a value dbio bench never writes.
    #[error("{path}: {bad}")]
    BadValue {
        /// The path.
        path: PathBuf,
        /// The field, its value and what it must be.
        bad: dbio_schema::bench::BadValue,
    },
    /// A directory that is not a sweep's.
    #[error("{path} is a directory without sweep.json: give bench result files, or the --output-dir of a sweep")]
    NotSweep {
        /// The path.
        path: PathBuf,
    },
    /// A sweep directory without points.
    #[error("{path} holds no points/*.json: the sweep has not finished any point yet")]
    EmptySweep {
        /// The sweep directory.
        path: PathBuf,
    },
}

/// Where a run came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A bench result file given on the command line.
    Bench(PathBuf),
    /// The commit phase of a default run (`dbio bench` without `--mode`), carried in this
    /// bench result file beside its data-page phase (`default_run.commit`).
    CommitPhase(PathBuf),
    /// A point of a sweep.
    SweepPoint {
        /// The sweep's directory.
        sweep: PathBuf,
        /// The point's file.
        path: PathBuf,
    },
}

impl Source {
    /// The file the result was read from.
    pub fn path(&self) -> &Path {
        match self {
            Source::Bench(p) | Source::CommitPhase(p) | Source::SweepPoint { path: p, .. } => p,
        }
    }
}

/// One bench result and where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Where it came from.
    pub source: Source,
    /// The result.
    pub result: BenchResult,
}

/// Reads one bench result from its file, naming what it is when it is not one. The file is
/// parsed as it is read (a buffered reader, never the whole file in memory beside the result:
/// a result of hundreds of megabytes costs its parsed size only).
pub fn read_bench(path: &Path) -> Result<BenchResult, InputError> {
    use dbio_schema::read::FileError;
    match dbio_schema::read::json_file::<BenchResult>(path) {
        Ok(r) if r.schema == dbio_schema::doc::BENCH => match r.check() {
            Ok(()) => Ok(r),
            Err(bad) => Err(InputError::BadValue {
                path: path.into(),
                bad,
            }),
        },
        Ok(r) => Err(InputError::NotBench {
            path: path.into(),
            why: format!("schema {}", r.schema),
        }),
        Err(FileError::Io(source)) => Err(InputError::Io {
            path: path.into(),
            source,
        }),
        Err(FileError::Json(e)) => {
            // Another dbio document is named by its schema rather than by the first field
            // it lacks: the file is read again for that field alone.
            #[derive(serde::Deserialize)]
            struct Head {
                schema: Option<String>,
            }
            let why = match dbio_schema::read::json_file::<Head>(path) {
                Ok(Head {
                    schema: Some(s), ..
                }) if s != dbio_schema::doc::BENCH => format!("schema {s}"),
                _ => e.to_string(),
            };
            Err(InputError::NotBench {
                path: path.into(),
                why,
            })
        }
    }
}

/// The files to read for one argument, with their source, in order.
pub fn expand(arg: &Path) -> Result<Vec<Source>, InputError> {
    let dir = if arg.is_dir() {
        if !arg.join("sweep.json").is_file() {
            return Err(InputError::NotSweep { path: arg.into() });
        }
        Some(arg.to_path_buf())
    } else if arg.file_name().is_some_and(|n| n == "sweep.json") {
        Some(arg.parent().unwrap_or(Path::new(".")).to_path_buf())
    } else {
        None
    };
    let Some(dir) = dir else {
        return Ok(vec![Source::Bench(arg.into())]);
    };
    let points = dir.join("points");
    let entries = std::fs::read_dir(&points).map_err(|source| InputError::Io {
        path: points.clone(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(InputError::EmptySweep { path: dir });
    }
    Ok(files
        .into_iter()
        .map(|path| Source::SweepPoint {
            sweep: dir.clone(),
            path,
        })
        .collect())
}

/// Reads every argument (files and sweep directories), files in parallel on up to 8 threads.
pub fn load(args: &[PathBuf]) -> Result<Vec<Loaded>, InputError> {
    let mut sources = Vec::new();
    for a in args {
        sources.extend(expand(a)?);
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8);
    let chunk = sources.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = sources
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    let mut out = Vec::with_capacity(part.len());
                    for src in part {
                        let mut result = read_bench(src.path())?;
                        // A default run is two runs: its data pages, then its commits.
                        let commit = result.default_run.as_mut().and_then(|d| d.commit.take());
                        out.push(Loaded {
                            result,
                            source: src.clone(),
                        });
                        if let Some(c) = commit {
                            out.push(Loaded {
                                result: *c,
                                source: Source::CommitPhase(src.path().into()),
                            });
                        }
                    }
                    Ok::<_, InputError>(out)
                })
            })
            .collect();
        let mut out = Vec::with_capacity(sources.len());
        for h in handles {
            out.extend(h.join().expect("a reader thread panicked")?);
        }
        Ok(out)
    })
}
