//! `--like-server DSN|PID`: lay the I/O buffers out as the running server's buffer pool.
//!
//! A PID: its buffer pool's mapping in /proc/PID/smaps. A DSN: the server's `large_pages`,
//! and where the server runs on this machine (its pid file is readable here), its mapping too:
//! what the kernel gave wins over what was asked, as a server with `large_pages=ON` that found
//! no free hugetlb pages falls back to 4 KiB pages.

use anyhow::Context;
use dbio_bench::server_layout::{read_pool_mapping, Mapping};
use dbio_schema::bench::{BufferChoice, BufferLayout, BufferSource};

/// The server `--like-server` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
    /// Its process id.
    Pid(u32),
    /// A DSN to ask it (syntax checked).
    Dsn(String),
}

impl Server {
    /// A PID (digits), else a DSN that parses (`mysql://user:pass@host:port/`).
    pub fn parse(value: &str) -> Result<Server, String> {
        if let Ok(pid) = value.parse::<u32>() {
            return Ok(Server::Pid(pid));
        }
        dbio_mysql::server::opts(value).map_err(|e| {
            format!("{e}; give the server's PID or a DSN (mysql://user:pass@host:port/)")
        })?;
        Ok(Server::Dsn(value.to_string()))
    }
}

/// The layout (`true`: huge pages) and why, for `--like-server`.
pub fn resolve(server: &Server) -> anyhow::Result<(bool, BufferChoice)> {
    let (layout, why) = match server {
        Server::Pid(pid) => {
            let m = read_pool_mapping(*pid, None)?;
            let why = format!("pid {pid}: {}", m.describe());
            (m.layout(), why)
        }
        Server::Dsn(dsn) => from_dsn(dsn)?,
    };
    Ok((
        layout == BufferLayout::Huge,
        BufferChoice {
            source: BufferSource::Server,
            why,
        },
    ))
}

/// What the server behind `dsn` says, and its mapping when it runs here.
fn from_dsn(dsn: &str) -> anyhow::Result<(BufferLayout, String)> {
    let shown = dbio_mysql::redact(dsn);
    let mut conn = dbio_mysql::server::connect(dsn).with_context(|| {
        format!("--like-server {shown}: give a DSN of a running server (mysql://user:pass@host:port/) or its PID")
    })?;
    let (large, pool, pid_file, at) = dbio_mysql::server::memory_facts(&mut conn)
        .with_context(|| format!("--like-server {shown}: reading @@large_pages"))?;
    let large_on = matches!(large.as_deref(), Some("1" | "ON"));
    let at = at.unwrap_or_else(|| shown.clone());
    let asked = format!(
        "large_pages={} on {at}",
        if large_on { "ON" } else { "OFF" }
    );
    // Only a server on this machine's loopback can be the process the pid file names here.
    let local = dbio_mysql::server::opts(dsn).is_ok_and(|o| {
        o.get_socket().is_some()
            || matches!(
                o.get_ip_or_hostname().as_ref(),
                "127.0.0.1" | "localhost" | "::1"
            )
    });
    let mapping = if local {
        local_mapping(pid_file.as_deref(), pool)
    } else {
        None
    };
    match mapping {
        Some((pid, m)) => {
            let why = format!("{asked}; pid {pid}: {}", m.describe());
            Ok((m.layout(), why))
        }
        None => Ok((
            if large_on {
                BufferLayout::Huge
            } else {
                BufferLayout::Pages4k
            },
            format!(
                "{asked} (its memory map is not readable from here: the server's setting decides)"
            ),
        )),
    }
}

/// The pool's mapping of the server whose pid file is `pid_file`, when it is a process on
/// this machine whose smaps can be read.
fn local_mapping(pid_file: Option<&str>, pool: Option<u64>) -> Option<(u32, Mapping)> {
    let pid: u32 = std::fs::read_to_string(pid_file?)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    if !["mariadbd", "mysqld"].contains(&comm.trim()) {
        return None;
    }
    read_pool_mapping(pid, pool).ok().map(|m| (pid, m))
}
