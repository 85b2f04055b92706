//! `dbio mysql advise --format prometheus`, for the node_exporter textfile collector: one
//! `dbio_mysql_advise_status` gauge per rule (0 OK, 1 WARN, 2 CRIT, 3 UNKNOWN, as in Nagios;
//! advice is 0 there, and 1 in `dbio_mysql_advise_advice`), every evidence figure over the
//! interval as `dbio_mysql_advise_figure`, and counts per status.

use crate::export::prometheus::{Exposition, Kind};
use crate::export::{Exporter, Prometheus};
use dbio_schema::advise::AdviseResult;
use dbio_schema::check::Status;
use std::io::{self, Write};

/// The exposition of `r`.
pub fn render(r: &AdviseResult) -> String {
    let mut x = Exposition::file();
    let server = r.server.address.as_str();
    x.family(
        "dbio_mysql_advise_status",
        Kind::Gauge,
        "MySQL/MariaDB advice rule status: 0 OK, 1 WARN, 2 CRIT, 3 UNKNOWN.",
        r.findings.iter().map(|f| {
            (
                vec![("server", server), ("rule", f.rule.as_str())],
                f64::from(f.status.nagios_code()),
            )
        }),
    );
    x.family(
        "dbio_mysql_advise_advice",
        Kind::Gauge,
        "Tuning advice per rule (1 = advice given); no alarm.",
        r.findings
            .iter()
            .filter(|f| f.status == Status::Advice)
            .map(|f| (vec![("server", server), ("rule", f.rule.as_str())], 1.0)),
    );
    x.family(
        "dbio_mysql_advise_figure",
        Kind::Gauge,
        "The evidence of each rule, measured over the interval (the unit is the figure's suffix).",
        r.findings.iter().flat_map(|f| {
            f.evidence.iter().map(move |e| {
                (
                    vec![
                        ("server", server),
                        ("rule", f.rule.as_str()),
                        ("figure", e.name.as_str()),
                    ],
                    e.interval,
                )
            })
        }),
    );
    let c = r.counts;
    x.family(
        "dbio_mysql_advise_findings",
        Kind::Gauge,
        "Number of advice findings per status.",
        [
            ("ok", c.ok),
            ("warn", c.warn),
            ("crit", c.crit),
            ("unknown", c.unknown),
            ("advice", c.advice),
        ]
        .map(|(k, v)| (vec![("server", server), ("status", k)], v as f64)),
    );
    x.family(
        "dbio_mysql_advise_interval_seconds",
        Kind::Gauge,
        "The time the rates were measured over.",
        [(vec![("server", server)], r.interval_s)],
    );
    x.take()
}
impl Exporter<AdviseResult> for Prometheus {
    fn export(&self, r: &AdviseResult, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render(r).as_bytes())
    }
}
