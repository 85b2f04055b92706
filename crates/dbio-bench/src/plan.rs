//! What `dbio bench` does with the file set: which phases run, and whether a set prepared
//! before is used (and kept) rather than prepared and removed.

use crate::error::BenchError;
use crate::fileset::{self, Marker};
use crate::options::Options;
use dbio_schema::bench::{EngineKind, Mode, Spec, Target};
use std::path::PathBuf;

/// The phase asked for; `None` in [`spec_and_set`] and [`plan`] means all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Write the file set.
    Prepare,
    /// Run the workload.
    Run,
    /// Remove the files dbio created.
    Cleanup,
}

/// What the command does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Prepare the file set in this directory.
    Prepare(PathBuf),
    /// Remove the file set in this directory.
    Cleanup(PathBuf),
    /// Run only: `bench run`, a device, or the null engine (which opens no file).
    Run,
    /// A full run on a set prepared before (by `bench prepare`, or kept with `--keep`): run on
    /// it and keep it; when `complete` is false its prepare was interrupted and is completed
    /// first.
    Reuse {
        /// The directory of the set.
        dir: PathBuf,
        /// Every data file is there as dbio created it.
        complete: bool,
    },
    /// Prepare, run, then remove the set (unless `--keep`).
    Full(PathBuf),
}

/// The spec of `options` for `phase`, and the file set already prepared in `--dir` when the
/// phase runs on one (a run on a prepared set takes its geometry from the set's marker).
pub fn spec_and_set(
    phase: Option<Phase>,
    options: &Options,
) -> Result<(Spec, Option<Marker>), BenchError> {
    let set = match (phase, &options.device) {
        (None | Some(Phase::Run), None) => fileset::read_marker(&options.dir)?,
        _ => None,
    };
    let spec = match &set {
        Some(m) => options.spec_on_set(&options.dir, m)?,
        None => options.spec(),
    };
    Ok((spec, set))
}

/// What to do for `phase` with `spec`, given the file set `set` found in its directory.
pub fn plan(phase: Option<Phase>, spec: &Spec, set: Option<&Marker>) -> Result<Plan, BenchError> {
    let dir = match &spec.target {
        Target::Dir(d) => Some(d.clone()),
        Target::Device(_) => None,
    };
    Ok(match (phase, dir) {
        (Some(Phase::Prepare), Some(d)) => Plan::Prepare(d),
        (Some(Phase::Cleanup), Some(d)) => Plan::Cleanup(d),
        (Some(Phase::Prepare | Phase::Cleanup), None) => return Err(BenchError::InvalidSpec(
            "prepare and cleanup work on a --dir file set; a --device is used as it is (nothing to prepare or remove)".into(),
        )),
        (Some(Phase::Run), _) | (None, None) => Plan::Run,
        // The null engine opens no file: a full run prepares and removes nothing (its warning
        // says so).
        (None, Some(_)) if spec.engine == EngineKind::Null => Plan::Run,
        (None, Some(d)) => match set {
            Some(m) => Plan::Reuse {
                complete: spec.mode == Mode::Commit || m.is_complete(&d),
                dir: d,
            },
            None => Plan::Full(d),
        },
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn options(dir: &std::path::Path) -> Options {
        let mut o = crate::options::tests::opts();
        o.dir = dir.into();
        o.mode = Mode::Rndrd;
        o.block_size = 4096;
        o.file_num = Some(2);
        o.file_total_size = Some(8192);
        o
    }

    #[test]
    fn phases_and_targets() {
        let t = tempfile::tempdir().unwrap();
        let mut o = options(t.path());
        let (spec, set) = spec_and_set(None, &o).unwrap();
        assert!(set.is_none(), "nothing prepared yet");
        let d = t.path().to_path_buf();
        assert_eq!(plan(None, &spec, None).unwrap(), Plan::Full(d.clone()));
        assert_eq!(
            plan(Some(Phase::Prepare), &spec, None).unwrap(),
            Plan::Prepare(d.clone())
        );
        assert_eq!(
            plan(Some(Phase::Cleanup), &spec, None).unwrap(),
            Plan::Cleanup(d)
        );
        assert_eq!(plan(Some(Phase::Run), &spec, None).unwrap(), Plan::Run);
        o.engine = EngineKind::Null;
        assert_eq!(plan(None, &o.spec(), None).unwrap(), Plan::Run);
        o.device = Some("/dev/null".into());
        assert_eq!(plan(None, &o.spec(), None).unwrap(), Plan::Run);
        let e = plan(Some(Phase::Prepare), &o.spec(), None).unwrap_err();
        assert!(
            e.is_usage()
                && e.to_string()
                    .starts_with("prepare and cleanup work on a --dir")
        );
    }

    #[test]
    fn a_prepared_set_is_reused_and_an_interrupted_one_completed() {
        let t = tempfile::tempdir().unwrap();
        let o = options(t.path());
        let mut m = Marker::default();
        m.file_num = 2;
        m.file_size_bytes = 4096;
        let spec = o.spec_on_set(t.path(), &m).unwrap();
        // The marker lists 2 files that are not there: an interrupted prepare.
        assert_eq!(
            plan(None, &spec, Some(&m)).unwrap(),
            Plan::Reuse {
                dir: t.path().into(),
                complete: false
            }
        );
        // Commit mode needs no data files: the set is used as it is.
        let mut c = o.clone();
        c.mode = Mode::Commit;
        assert_eq!(
            plan(None, &c.spec(), Some(&m)).unwrap(),
            Plan::Reuse {
                dir: t.path().into(),
                complete: true
            }
        );
    }
}
