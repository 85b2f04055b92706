//! `dbio model live --format prometheus`: the elements of response time as gauges, for
//! node_exporter's textfile collector (one exposition, no timestamps). Utilisation is a ratio
//! (0 to 1) as Prometheus names it; times are seconds.

use super::{Exposition, Kind};
use crate::export::Exporter;
use crate::export::Prometheus;
use dbio_schema::model::{LiveResult, ResourceKind};
use std::io::{self, Write};

fn kind(k: ResourceKind) -> &'static str {
    match k {
        ResourceKind::Cpu => "cpu",
        ResourceKind::Disk => "disk",
        ResourceKind::Net => "net",
    }
}

impl Exporter<LiveResult> for Prometheus {
    fn export(&self, r: &LiveResult, out: &mut dyn Write) -> io::Result<()> {
        let mut e = Exposition::file();
        e.begin(0.0);
        e.family(
            "dbio_model_transactions_per_second",
            Kind::Gauge,
            "Transactions per second over the interval, by where the count came from.",
            [(
                vec![("source", r.tps_source.as_str())],
                r.transactions_per_s,
            )],
        );
        e.family(
            "dbio_model_utilization_ratio",
            Kind::Gauge,
            "Busy fraction of each resource over the interval.",
            r.resources.iter().map(|x| {
                (
                    vec![("resource", x.name.as_str()), ("kind", kind(x.kind))],
                    x.utilization_pct / 100.0,
                )
            }),
        );
        e.family(
            "dbio_model_demand_seconds",
            Kind::Gauge,
            "Service demand per transaction at each resource (utilisation / TPS).",
            r.resources.iter().map(|x| {
                (
                    vec![("resource", x.name.as_str()), ("kind", kind(x.kind))],
                    x.demand_s,
                )
            }),
        );
        e.family(
            "dbio_model_total_demand_seconds",
            Kind::Gauge,
            "D: the sum of the demands, the response time of a transaction alone.",
            [(vec![], r.total_demand_s)],
        );
        e.family(
            "dbio_model_max_demand_seconds",
            Kind::Gauge,
            "Dmax: the bottleneck's demand.",
            [(vec![("bottleneck", r.bottleneck.as_str())], r.max_demand_s)],
        );
        e.family(
            "dbio_model_nsat",
            Kind::Gauge,
            "Nsat = (D + Z) / Dmax: the concurrency from which queueing is certain.",
            [(vec![], r.n_sat)],
        );
        e.family(
            "dbio_model_threads_running",
            Kind::Gauge,
            "Mean Threads_running over the interval, the sampler excluded.",
            r.threads_running.map(|n| (vec![], n)),
        );
        e.family(
            "dbio_model_response_time_floor_seconds",
            Kind::Gauge,
            "max(D, N Dmax - Z) at N = threads running: no mean response time is lower.",
            r.r_floor_s.map(|f| (vec![], f)),
        );
        out.write_all(e.take().as_bytes())
    }
}
