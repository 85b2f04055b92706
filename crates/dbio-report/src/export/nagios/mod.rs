//! Nagios/Icinga plugin output: one status line (at most
//! [`NAGIOS_STATUS_MAX`](dbio_schema::check::NAGIOS_STATUS_MAX) characters of text, then perfdata
//! after `|`), then long output. The exit code is the command's business.

pub mod advise;
pub mod check;
