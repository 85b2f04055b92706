//! The files `innodb rows` reads: a PAGES_DIR written by `innodb pages` stands for its page
//! files.

/// The files to read: a directory (a PAGES_DIR written by `innodb pages`) stands for the
/// `.pages` and `.page` files under it, in name order; other paths are kept as given.
pub fn expand_inputs(paths: &[std::path::PathBuf]) -> std::io::Result<Vec<std::path::PathBuf>> {
    fn walk_dir(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(d)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let ft = e.file_type()?;
            let p = e.path();
            if ft.is_dir() {
                walk_dir(&p, out)?;
            } else if ft.is_file() && p.extension().is_some_and(|x| x == "pages" || x == "page") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk_dir(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}
