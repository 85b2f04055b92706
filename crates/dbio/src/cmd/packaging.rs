//! `dbio completions SHELL` and `dbio man`: shell completions (clap_complete) and manual pages
//! (clap_mangen), generated from the same command-line definition the binary parses.

use crate::cli::usage;
use crate::output;
use std::path::PathBuf;

/// Arguments of `dbio completions`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Install, e.g.:\n  \
    bash: dbio completions bash > ~/.local/share/bash-completion/completions/dbio\n  \
    zsh:  dbio completions zsh > ~/.zfunc/_dbio   (with fpath+=~/.zfunc before compinit)\n  \
    fish: dbio completions fish > ~/.config/fish/completions/dbio.fish")]
pub struct CompletionsArgs {
    /// The shell to complete dbio's subcommands, flags and values in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `dbio man`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Read it with `dbio man | man -l -`, or install the pages: \
    dbio man --out-dir /usr/local/share/man/man1"
)]
pub struct ManArgs {
    /// The subcommand whose page to print (`bench`, `innodb grep`); none: dbio's own page.
    pub command: Vec<String>,
    /// Write every page (dbio.1, dbio-bench.1, dbio-innodb-grep.1, ...) into this existing
    /// directory instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub out_dir: Option<PathBuf>,
}

/// The whole command line `whole`, as the binary parses it (for the pages: without clap's
/// `help` subcommand, which `--help` covers).
fn command(whole: clap::Command) -> clap::Command {
    fn no_help(cmd: clap::Command) -> clap::Command {
        cmd.disable_help_subcommand(true).mut_subcommands(no_help)
    }
    let mut cmd = no_help(whole);
    cmd.build();
    cmd
}

/// The subcommands that get a page: the visible ones, without clap's `help`.
fn pages_under(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

/// Prints the completion script of `a.shell` for the command line `whole` on stdout.
pub fn completions(a: CompletionsArgs, whole: clap::Command) -> anyhow::Result<u8> {
    let mut cmd = command(whole);
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "dbio", &mut out);
    output::emit(None, &out)?;
    Ok(0)
}

/// The man page of `cmd` (roff).
fn page(cmd: &clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    // .TH title section date source manual: the version stands in the date's place (an empty
    // date would be dropped and shift the source into it); the footer reads `dbio  0.1.0`.
    clap_mangen::Man::new(cmd.clone())
        .date(env!("CARGO_PKG_VERSION"))
        .source("dbio")
        .manual("dbio manual")
        .render(&mut out)?;
    Ok(out)
}

/// `cmd` and every visible subcommand under it, depth first.
fn all(cmd: &clap::Command, out: &mut Vec<clap::Command>) {
    out.push(cmd.clone());
    for s in pages_under(cmd) {
        all(s, out);
    }
}

/// Prints one man page of the command line `whole`, or writes them all to `--out-dir`.
pub fn man(a: ManArgs, whole: clap::Command) -> anyhow::Result<u8> {
    let root = command(whole);
    if let Some(dir) = &a.out_dir {
        if !dir.is_dir() {
            return Err(usage(format!(
                "--out-dir {} is not a directory: create it first (e.g. mkdir -p {})",
                dir.display(),
                dir.display()
            )));
        }
        let mut cmds = Vec::new();
        all(&root, &mut cmds);
        for c in &cmds {
            let name = clap_mangen::Man::new(c.clone()).get_filename();
            output::write_file(&dir.join(name), &page(c)?)?;
        }
        eprintln!("wrote {} man pages to {}", cmds.len(), dir.display());
        return Ok(0);
    }
    let mut cmd = &root;
    for (k, name) in a.command.iter().enumerate() {
        cmd = pages_under(cmd)
            .find(|s| s.get_name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = pages_under(cmd).map(|s| s.get_name()).collect();
                usage(format!(
                    "no man page for `dbio {}`: {} has the subcommands {}",
                    a.command[..=k].join(" "),
                    cmd.get_display_name().unwrap_or(cmd.get_name()),
                    names.join(", ")
                ))
            })?;
    }
    output::emit(None, &page(cmd)?)?;
    Ok(0)
}
