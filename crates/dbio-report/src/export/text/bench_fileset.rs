//! The text lines `dbio bench` prints about its file set: what prepare did, what a run on a
//! prepared set uses, what cleanup removed. Plain values in, one line (with its newline) out.

use dbio_schema::bench::Mode;
use dbio_schema::units::{format_size, format_size_approx};
use std::path::Path;

use dbio_schema::units::n_files;

/// The line of a prepare stopped by a signal.
pub const PREPARE_INTERRUPTED: &str = "prepare interrupted: the partial file set is listed in the marker and will be removed by cleanup\n";

/// What is true of the page cache after prepare: tmpfs and ramfs files live in it
/// (`in_memory`); elsewhere they were dropped, and `resident_bytes` (mincore, `None` when it
/// failed) says whether the kernel obliged.
pub fn prepared_cache(fs: &str, in_memory: bool, resident_bytes: Option<u64>) -> String {
    match (in_memory, resident_bytes) {
        (true, _) => format!(
            "{fs} keeps files in memory (the page cache is where they live, nothing to drop): every read of the run is served from memory"
        ),
        (false, Some(0)) => "dropped them from the page cache (fdatasync + POSIX_FADV_DONTNEED): the run starts cold".into(),
        (false, Some(r)) => format!(
            "dropped them from the page cache (fdatasync + POSIX_FADV_DONTNEED), but {} stayed cached (mincore): the run starts partly warm",
            format_size_approx(r as f64)
        ),
        (false, None) => "dropped them from the page cache (fdatasync + POSIX_FADV_DONTNEED; not verified: mincore failed)".into(),
    }
}

/// The line of a finished prepare of `files` data files of `file_size_bytes` (`bytes` in all)
/// in `dir`, written in `secs` seconds; `cache` is [`prepared_cache`].
pub fn prepared(
    files: u64,
    file_size_bytes: u64,
    bytes: u64,
    dir: &Path,
    secs: f64,
    cache: &str,
) -> String {
    format!(
        "prepared {} x {} = {} of random data in {} in {:.2}s ({}/s); {cache}\n",
        n_files(files),
        format_size(file_size_bytes),
        format_size(bytes),
        dir.display(),
        secs,
        format_size_approx(bytes as f64 / secs.max(1e-9)),
    )
}

/// The line of a prepare for commit mode (no data files).
pub fn prepared_for_commit(dir: &Path) -> String {
    format!(
        "prepared {} for commit logs (created by the run, one per thread)\n",
        dir.display()
    )
}

/// `4 files of 1MiB` (or the commit logs), for the line about a prepared set.
pub fn set_summary(mode: Mode, file_num: u64, file_size_bytes: u64) -> String {
    if mode == Mode::Commit {
        "commit logs: one per thread".into()
    } else {
        format!("{} of {}", n_files(file_num), format_size(file_size_bytes))
    }
}

/// The line of a full run on a set prepared before: `complete` when it was used as it was,
/// else it was an interrupted prepare that was completed first. `summary` is [`set_summary`].
pub fn using_set(complete: bool, dir: &Path, summary: &str) -> String {
    format!(
        "{} the file set {} in {} ({summary}): it stays after the run (dbio bench cleanup --dir {} removes it)\n",
        if complete { "using" } else { "completed" },
        if complete { "already prepared" } else { "of an interrupted prepare" },
        dir.display(),
        dir.display(),
    )
}

/// The line of a cleanup that found no file set in `dir` (no `marker`).
pub fn nothing_to_clean(dir: &Path, marker: &str) -> String {
    format!(
        "nothing to clean up: no dbio file set in {} (no {marker}), so dbio removed nothing\n",
        dir.display()
    )
}

/// The line of a cleanup that removed `removed` files of `bytes` in all from `dir` (and the
/// directory, `removed_dir`), leaving `foreign_left` entries dbio did not create.
pub fn cleaned(
    removed: u64,
    bytes: u64,
    dir: &Path,
    removed_dir: bool,
    foreign_left: u64,
) -> String {
    let mut msg = format!(
        "removed {} ({}) that dbio created in {}",
        n_files(removed),
        format_size_approx(bytes as f64),
        dir.display()
    );
    if removed_dir {
        msg.push_str(", and the directory");
    }
    if foreign_left > 0 {
        msg.push_str(&format!(
            "; left {} dbio did not create",
            if foreign_left == 1 {
                "1 entry".to_string()
            } else {
                format!("{foreign_left} entries")
            }
        ));
    }
    msg + "\n"
}

/// The warning (without `warning: `) for a listed file cleanup left in place.
pub fn left_replaced(path: &Path) -> String {
    format!(
        "left {}: it is not the file dbio created under that name (replaced since, or a link now), so dbio did not delete it",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_lines() {
        assert_eq!(
            prepared(4, 1 << 20, 4 << 20, Path::new("/d"), 2.0, &prepared_cache("ext4", false, Some(0))),
            "prepared 4 files x 1MiB = 4MiB of random data in /d in 2.00s (2.00 MiB/s); dropped them from the page cache (fdatasync + POSIX_FADV_DONTNEED): the run starts cold\n"
        );
        assert!(prepared_cache("tmpfs", true, None).starts_with("tmpfs keeps files in memory"));
        assert!(prepared_cache("ext4", false, None).ends_with("not verified: mincore failed)"));
        assert_eq!(
            prepared_for_commit(Path::new("/d")),
            "prepared /d for commit logs (created by the run, one per thread)\n"
        );
    }

    #[test]
    fn set_lines() {
        assert_eq!(set_summary(Mode::Rndrd, 1, 4096), "1 file of 4KiB");
        assert_eq!(
            set_summary(Mode::Commit, 4, 4096),
            "commit logs: one per thread"
        );
        assert_eq!(
            using_set(true, Path::new("/d"), "2 files of 4KiB"),
            "using the file set already prepared in /d (2 files of 4KiB): it stays after the run (dbio bench cleanup --dir /d removes it)\n"
        );
        assert!(using_set(false, Path::new("/d"), "x")
            .starts_with("completed the file set of an interrupted prepare in /d (x)"));
    }

    #[test]
    fn cleanup_lines() {
        assert_eq!(
            cleaned(1, 4096, Path::new("/d"), true, 0),
            "removed 1 file (4.00 KiB) that dbio created in /d, and the directory\n"
        );
        assert_eq!(
            cleaned(2, 0, Path::new("/d"), false, 1),
            "removed 2 files (0 B) that dbio created in /d; left 1 entry dbio did not create\n"
        );
        assert!(cleaned(0, 0, Path::new("/d"), false, 3).contains("; left 3 entries dbio"));
        assert_eq!(
            nothing_to_clean(Path::new("/d"), ".dbio"),
            "nothing to clean up: no dbio file set in /d (no .dbio), so dbio removed nothing\n"
        );
    }
}
