//! The README's examples, and those of every page of docs/, are run, so the documentation
//! cannot drift from the binary.
//!
//! Every fenced block whose info string is exactly `console` is checked (README.md first, then
//! the pages of docs/ in the order of [`DOCS`], then any other page by name; within a file, in
//! order): each `$ ` line is a
//! command run by bash in the repository root with the freshly built `dbio` first on PATH; the
//! lines after it, up to the next `$ ` line or the end of the block, are what it prints (stdout
//! and stderr together, as a terminal shows them). In the expected text, `[..]` matches any
//! characters within a line and a line `...` matches any number of lines. A line `? N` after the
//! output is the exit code the command must end with (default 0). Blocks whose output is not
//! deterministic (a live benchmark) use `text` or `sh` and are not checked.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One `$ ` command of a console block.
struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
    code: i32,
}

fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_console = false;
    let mut in_other = false;
    // Examples of the current console block.
    let mut in_block = 0;
    for (i, l) in readme.lines().enumerate() {
        if in_console || in_other {
            if l.starts_with("```") {
                in_console = false;
                in_other = false;
            } else if in_console {
                if let Some(c) = l.strip_prefix("$ ") {
                    in_block += 1;
                    out.push(Example {
                        line: i + 1,
                        command: c.to_string(),
                        expected: Vec::new(),
                        code: 0,
                    });
                } else if in_block == 0 {
                    panic!(
                        "line {}: a console block must start with a `$ ` line",
                        i + 1
                    );
                } else if let Some(code) = l.strip_prefix("? ") {
                    let e = out.last_mut().expect("an exit code after a command");
                    e.code = code.trim().parse().expect("? N: a number");
                } else {
                    let e = out
                        .last_mut()
                        .unwrap_or_else(|| panic!("line {}: output before a `$ ` line", i + 1));
                    e.expected.push(l.to_string());
                }
            }
        } else if l == "```console" {
            in_console = true;
            in_block = 0;
        } else if l.starts_with("```") {
            in_other = true;
        }
    }
    out
}

/// Whether `actual` matches the pattern line `pat` (`[..]`: any characters).
fn line_matches(pat: &str, actual: &str) -> bool {
    let parts: Vec<&str> = pat.split("[..]").collect();
    if parts.len() == 1 {
        return pat == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(k) => rest = &rest[k + p.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether the actual lines match the expected ones (`...`: any number of lines).
fn lines_match(pat: &[String], actual: &[&str]) -> bool {
    match pat.split_first() {
        None => actual.is_empty(),
        Some((p, rest)) if p.trim() == "..." => {
            (0..=actual.len()).any(|k| lines_match(rest, &actual[k..]))
        }
        Some((p, rest)) => {
            !actual.is_empty() && line_matches(p, actual[0]) && lines_match(rest, &actual[1..])
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_matcher_knows_its_wildcards() {
    let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(line_matches("a [..] c", "a bb c"));
    assert!(!line_matches("a [..] c", "a bb d"));
    assert!(lines_match(&p(&["x", "...", "z"]), &["x", "y", "y", "z"]));
    assert!(lines_match(&p(&["x", "...", "z"]), &["x", "z"]));
    assert!(!lines_match(&p(&["x", "z"]), &["x", "y", "z"]));
    let e = examples("```console\n$ dbio a\nout\n? 2\n```\n```text\n$ dbio b\n```\n");
    assert_eq!(e.len(), 1);
    assert_eq!((e[0].command.as_str(), e[0].code), ("dbio a", 2));
    assert_eq!(e[0].expected, ["out"]);
}

/// The pages of docs/ in the order the guide reads them (an example may use what an earlier
/// one made); pages not named here follow, by name.
const DOCS: &[&str] = &[
    "safety.md",
    "output.md",
    "bench.md",
    "sweep.md",
    "report.md",
    "model.md",
    "iostat.md",
    "stack.md",
    "align.md",
    "check.md",
    "innodb.md",
    "mysql-advise.md",
    "mysql-chunk.md",
    "mysql-stalk.md",
];

/// README.md, then the pages of docs/: (name shown in failures, text).
fn documents() -> Vec<(String, String)> {
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.ends_with(".md").then_some(n)
        })
        .collect();
    pages.sort_by_key(|n| {
        (
            DOCS.iter().position(|d| d == n).unwrap_or(DOCS.len()),
            n.clone(),
        )
    });
    let mut out = vec![(
        "README.md".to_string(),
        std::fs::read_to_string(root().join("README.md")).unwrap(),
    )];
    for n in pages {
        let text = std::fs::read_to_string(root().join("docs").join(&n)).unwrap();
        out.push((format!("docs/{n}"), text));
    }
    out
}

#[test]
fn every_page_the_guide_names_exists() {
    for d in DOCS {
        assert!(root().join("docs").join(d).is_file(), "docs/{d} is missing");
    }
}

#[test]
fn every_console_example_in_the_readme_prints_what_the_readme_shows() {
    let mut all = Vec::new();
    for (name, text) in documents() {
        let ex = examples(&text);
        if name == "README.md" {
            assert!(
                ex.len() >= 5,
                "only {} checked examples in README.md",
                ex.len()
            );
        }
        all.extend(ex.into_iter().map(|e| (name.clone(), e)));
    }
    assert!(all.len() >= 30, "only {} checked examples", all.len());
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    for (file, e) in &all {
        let out = Command::new("bash")
            .args([
                "-o",
                "pipefail",
                "-c",
                &format!("{{ {}\n}} 2>&1", e.command),
            ])
            .current_dir(root())
            .env("PATH", &path)
            .env("TZ", "UTC")
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let mut actual: Vec<&str> = text.lines().map(str::trim_end).collect();
        let mut expected: Vec<String> = e
            .expected
            .iter()
            .map(|l| l.trim_end().to_string())
            .collect();
        // Blank lines that separate examples are not output.
        while actual.last() == Some(&"") {
            actual.pop();
        }
        while expected.last().is_some_and(|l| l.is_empty()) {
            expected.pop();
        }
        let code = out.status.code().unwrap_or(-1);
        if code != e.code || !lines_match(&expected, &actual) {
            failures.push(format!(
                "{file}:{}: $ {}\n--- {file} (exit {})\n{}\n--- dbio (exit {code})\n{}",
                e.line,
                e.command,
                e.code,
                expected.join("\n"),
                actual.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
