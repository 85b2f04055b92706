//! Nagios/Icinga plugin output: one status line (at most
//! [`NAGIOS_STATUS_MAX`](dbio_schema::check::NAGIOS_STATUS_MAX) characters of text, then perfdata
//! after `|`), then long output. The exit code is the command's business.

pub mod advise;
pub mod check;

use dbio_schema::check::{Status, NAGIOS_STATUS_MAX};

/// `text` cut to at most `max` characters, ending in `...` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

/// The Nagios plugin word for a status (advice alone is OK).
pub(crate) fn word(s: Status) -> &'static str {
    match s {
        Status::Ok | Status::Advice => "OK",
        Status::Warn => "WARNING",
        Status::Crit => "CRITICAL",
        Status::Unknown => "UNKNOWN",
    }
}

/// The UNKNOWN output of a plugin (`service`: `STORAGE`, `MYSQL`) that could not run: the
/// status line cut to [`NAGIOS_STATUS_MAX`] characters, then the whole message as long output
/// when the line does not hold it.
pub fn unknown(service: &str, message: &str) -> String {
    let message = message.trim().replace('|', "/");
    let first = message.lines().next().unwrap_or("");
    let line = clip(
        &format!("DBIO {service} UNKNOWN - {first}"),
        NAGIOS_STATUS_MAX,
    );
    if message.lines().count() <= 1 && !line.ends_with("...") {
        return format!("{line}\n");
    }
    format!("{line}\n{message}\n")
}
