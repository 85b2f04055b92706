//! What a user installs besides the binary: shell completions (`dbio completions SHELL`) that
//! the shells accept and that complete dbio's subcommands and flags, and man pages
//! (`dbio man`) that groff reads without a warning.

use crate::common::require_tool;

use crate::common::dbio;
use std::path::Path;

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
#[ignore = "needs zsh (apt-get install zsh); scripts/test.sh runs it"]
fn zsh_completion_parses() {
    require_tool("zsh", &["--version"], "apt-get install zsh");
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("_dbio");
    let script = stdout(&["completions", "zsh"]);
    assert!(script.starts_with("#compdef dbio"), "{script}");
    std::fs::write(&f, script).unwrap();
    run_tool("zsh", &["-n", f.to_str().unwrap()]);
}

#[test]
#[ignore = "needs fish (apt-get install fish); scripts/test.sh runs it"]
fn fish_completion_parses_and_completes() {
    require_tool("fish", &["--version"], "apt-get install fish");
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
#[ignore = "needs groff (apt-get install groff-base); scripts/test.sh runs it"]
fn man_pages_are_valid_roff_for_dbio_and_each_subcommand() {
    require_tool("groff", &["--version"], "apt-get install groff-base");
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
            "no man page for `dbio benhc`: dbio has the subcommands bench, sweep, report, align",
        ));
    dbio()
        .args(["man", "--out-dir", "/nonexistent/man1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("is not a directory"));
}

/// The workspace's Cargo.toml, Cargo.lock and a file at its root.
fn root_file(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `key = "value"` of the first line that sets `key` in a Cargo.toml.
fn toml_str(toml: &str, key: &str) -> Option<String> {
    toml.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
    })
}

fn version(v: &str) -> Vec<u32> {
    let mut n: Vec<u32> = v.split('.').map(|x| x.parse().unwrap()).collect();
    n.resize(3, 0);
    n
}

#[test]
fn the_license_files_are_those_cargo_toml_declares() {
    let ws = root_file("Cargo.toml");
    assert_eq!(
        toml_str(&ws, "license").as_deref(),
        Some("MIT OR Apache-2.0")
    );
    let mit = root_file("LICENSE-MIT");
    assert!(mit.starts_with("MIT License\n\nCopyright (c) "), "{mit}");
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    let apache = root_file("LICENSE-APACHE");
    assert!(apache.contains("Apache License\n                           Version 2.0, January 2004"));
    assert!(apache.contains("END OF TERMS AND CONDITIONS"));
    // Every crate takes the workspace's license (and rust-version).
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for e in std::fs::read_dir(&crates).unwrap() {
        let toml = std::fs::read_to_string(e.unwrap().path().join("Cargo.toml")).unwrap();
        for key in ["license.workspace", "rust-version.workspace"] {
            assert_eq!(
                toml_str(&toml, key).as_deref(),
                Some("true"),
                "{key}: {toml}"
            );
        }
    }
}

#[test]
fn rust_version_is_what_the_locked_dependencies_need() {
    // Each locked crate's own rust-version, read from cargo's registry sources (crates for
    // other targets, never downloaded here, are not there and are left out).
    let home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap()));
    let src = Path::new(&home).join("registry/src");
    let registries = std::fs::read_dir(&src).unwrap_or_else(|e| {
        panic!(
            "no cargo registry sources in {} to read the crates' rust-version from \
             (set CARGO_HOME to the one that built this): {e}",
            src.display()
        )
    });
    let registries: Vec<_> = registries.map(|e| e.unwrap().path()).collect();
    let lock = root_file("Cargo.lock");
    let mut need: (Vec<u32>, String) = (vec![0, 0, 0], String::new());
    let mut read = 0;
    for pkg in lock.split("[[package]]").skip(1) {
        if !pkg.contains("source = \"registry+") {
            continue;
        }
        let (name, ver) = (
            toml_str(pkg, "name").unwrap(),
            toml_str(pkg, "version").unwrap(),
        );
        let Some(toml) = registries
            .iter()
            .find_map(|r| std::fs::read_to_string(r.join(format!("{name}-{ver}/Cargo.toml"))).ok())
        else {
            continue;
        };
        read += 1;
        if let Some(rv) = toml_str(&toml, "rust-version") {
            if version(&rv) > need.0 {
                need = (version(&rv), format!("{name} {ver}"));
            }
        }
    }
    assert!(
        read > 50,
        "only {read} locked crates found in {registries:?}"
    );
    let declared = toml_str(&root_file("Cargo.toml"), "rust-version").unwrap();
    assert_eq!(
        version(&declared),
        need.0,
        "rust-version {declared}: the locked crates need {:?} ({})",
        need.0,
        need.1
    );
}

/// Each crate's integration tests are one binary (`autotests = false`, tests/tests.rs): a file
/// of tests/ without its `mod` line in tests.rs would never be compiled, and a snapshot not
/// named `tests__<file>__<name>.snap` would never be read.
#[test]
fn every_test_file_is_a_module_of_its_crates_tests_binary() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut seen = 0;
    for krate in std::fs::read_dir(&crates).unwrap() {
        let krate = krate.unwrap().path();
        let tests = krate.join("tests");
        if !tests.is_dir() {
            continue;
        }
        seen += 1;
        let toml = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
        assert!(
            toml.contains("autotests = false") && toml.contains("path = \"tests/tests.rs\""),
            "{}: needs autotests = false and [[test]] name = \"tests\" path = \"tests/tests.rs\"",
            krate.display()
        );
        let main = std::fs::read_to_string(tests.join("tests.rs")).unwrap();
        let mut files: Vec<String> = std::fs::read_dir(&tests)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs") || p.join("mod.rs").is_file())
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .filter(|m| m != "tests")
            .collect();
        files.sort();
        let mut mods: Vec<String> = main
            .lines()
            .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
            .map(str::to_string)
            .collect();
        mods.sort();
        assert_eq!(mods, files, "{}: mod lines vs files", tests.display());
        if let Ok(snaps) = std::fs::read_dir(tests.join("snapshots")) {
            for s in snaps {
                let name = s.unwrap().file_name().to_string_lossy().into_owned();
                assert!(
                    name.starts_with("tests__")
                        && files
                            .iter()
                            .any(|f| name[7..].starts_with(&format!("{f}__"))),
                    "{}: snapshot {name} is not tests__<file>__<name>.snap of a test file",
                    tests.display()
                );
            }
        }
    }
    assert!(seen >= 5, "only {seen} crates with tests/");
}
