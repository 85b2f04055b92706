//! What a user installs besides the binary: shell completions (`dbio completions SHELL`) that
//! the shells accept and that complete dbio's subcommands and flags, and man pages
//! (`dbio man`) that groff reads without a warning.

mod common;
use common::skip;

use assert_cmd::Command;
use std::path::Path;

fn dbio() -> Command {
    Command::cargo_bin("dbio").unwrap()
}

fn stdout(args: &[&str]) -> String {
    let o = dbio().args(args).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn has(tool: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `tool args...` with `script` as the last argument; returns stdout, fails on an error.
fn run_tool(tool: &str, args: &[&str]) -> String {
    let o = std::process::Command::new(tool)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn bash_completion_parses_and_completes_subcommands_and_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("dbio.bash");
    std::fs::write(&f, stdout(&["completions", "bash"])).unwrap();
    let f = f.to_str().unwrap();
    run_tool("bash", &["-n", f]);
    // What bash offers after `dbio be<TAB>` and `dbio bench --file-t<TAB>`.
    let script = format!(
        "source {f}
         COMP_WORDS=(dbio be); COMP_CWORD=1; _dbio dbio be dbio; echo \"${{COMPREPLY[@]}}\"
         COMP_WORDS=(dbio bench --file-t); COMP_CWORD=2; _dbio dbio --file-t bench; echo \"${{COMPREPLY[@]}}\""
    );
    let out = run_tool("bash", &["-c", &script]);
    assert_eq!(out, "bench\n--file-total-size\n");
}

#[test]
fn zsh_completion_parses() {
    if !has("zsh") {
        return skip("zsh is not installed (apt-get install zsh)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("_dbio");
    let script = stdout(&["completions", "zsh"]);
    assert!(script.starts_with("#compdef dbio"), "{script}");
    std::fs::write(&f, script).unwrap();
    run_tool("zsh", &["-n", f.to_str().unwrap()]);
}

#[test]
fn fish_completion_parses_and_completes() {
    if !has("fish") {
        return skip("fish is not installed (apt-get install fish)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("dbio.fish");
    std::fs::write(&f, stdout(&["completions", "fish"])).unwrap();
    let f = f.to_str().unwrap();
    run_tool("fish", &["--no-execute", f]);
    let out = run_tool(
        "fish",
        &["-c", &format!("source {f}; complete -C 'dbio bench --mo'")],
    );
    assert!(out.starts_with("--mode\t"), "{out}");
}

#[test]
fn an_unknown_shell_is_refused_naming_the_ones_there_are() {
    dbio()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bash"))
        .stderr(predicates::str::contains("fish"));
}

/// groff reads `page` as a man page with every warning on, and prints none.
fn groff_reads(page: &Path) {
    run_tool(
        "groff",
        &["-man", "-Tutf8", "-ww", "-z", page.to_str().unwrap()],
    );
}

#[test]
fn man_pages_are_valid_roff_for_dbio_and_each_subcommand() {
    if !has("groff") {
        return skip("groff is not installed (apt-get install groff-base)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let top = stdout(&["man"]);
    assert!(
        top.contains(&format!(".TH dbio 1 {} dbio", env!("CARGO_PKG_VERSION"))),
        "{top}"
    );
    assert!(
        top.contains("dbio\\-bench(1)"),
        "the subcommands are listed: {top}"
    );
    assert!(
        !top.contains("dbio\\-help"),
        "no page for clap's help: {top}"
    );
    let f = tmp.path().join("dbio.1");
    std::fs::write(&f, &top).unwrap();
    groff_reads(&f);
    let grep = stdout(&["man", "innodb", "grep"]);
    assert!(
        grep.contains(&format!(
            ".TH dbio-innodb-grep 1 {} dbio \"dbio manual\"",
            env!("CARGO_PKG_VERSION")
        )),
        "{grep}"
    );
    assert!(grep.contains("\\-\\-max\\-count"), "{grep}");
    // --out-dir: one page per command, each readable.
    let dir = tmp.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    dbio()
        .args(["man", "--out-dir"])
        .arg(&dir)
        .assert()
        .success();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for want in [
        "dbio.1",
        "dbio-bench.1",
        "dbio-innodb-grep.1",
        "dbio-align-check.1",
        "dbio-completions.1",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    for n in &names {
        groff_reads(&dir.join(n));
    }
    assert_eq!(std::fs::read_to_string(dir.join("dbio.1")).unwrap(), top);
}

#[test]
fn man_for_an_unknown_subcommand_names_the_ones_there_are() {
    dbio()
        .args(["man", "benhc"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "no man page for `dbio benhc`: dbio has the subcommands bench, align",
        ));
    dbio()
        .args(["man", "--out-dir", "/nonexistent/man1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("is not a directory"));
}
