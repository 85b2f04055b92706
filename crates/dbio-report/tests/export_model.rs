//! The output formats of `dbio model` (text, CSV, JSON) on hand-built results: snapshots of
//! each, and the facts each format must keep.

use dbio_report::export::{Csv, Json, Prometheus, Text};
use dbio_report::Exporter;
use dbio_schema::model::*;
use dbio_schema::{doc, Document};

fn demands() -> Demands {
    // cpu 2.1 ms, disk 4.5 ms, Z = 100 ms: D = 6.6 ms, Nsat = 106.6 / 4.5 = 23.69.
    Demands {
        centres: vec![
            Centre {
                name: "cpu".into(),
                kind: CentreKind::Queueing,
                demand_s: 0.0021,
            },
            Centre {
                name: "disk".into(),
                kind: CentreKind::Queueing,
                demand_s: 0.0045,
            },
            Centre {
                name: "wan".into(),
                kind: CentreKind::Delay,
                demand_s: 0.02,
            },
        ],
        think_s: 0.1,
        total_demand_s: 0.0266,
        max_demand_s: 0.0045,
        bottleneck: "disk".into(),
        n_sat: 0.1266 / 0.0045,
        x_limit_per_s: 1.0 / 0.0045,
    }
}

fn bounds() -> BoundsResult {
    BoundsResult {
        demands: demands(),
        measured: Some(Measured {
            source: "run.json".into(),
            n: 28.0,
            x_per_s: 180.5,
            r_s: Some(0.0551),
            notes: vec!["disk: 81.2% util on average / 180.5 ops/s".into()],
        }),
        rows: [1u64, 10, 28, 40]
            .iter()
            .map(|&n| BoundsRow {
                n,
                x_upper_per_s: (n as f64 / 0.1266).min(1.0 / 0.0045),
                r_lower_s: 0.0266f64.max(n as f64 * 0.0045 - 0.1),
            })
            .collect(),
    }
}

fn mva() -> MvaResult {
    MvaResult {
        demands: demands(),
        measured: None,
        rows: vec![
            MvaRow {
                n: 1,
                x_per_s: 7.898894154818325,
                r_s: 0.0266,
                x_upper_per_s: 7.898894154818325,
                r_lower_s: 0.0266,
                bottleneck_utilization_pct: 3.554502369668246,
            },
            MvaRow {
                n: 2,
                x_per_s: 15.76,
                r_s: 0.02690,
                x_upper_per_s: 15.79778830963665,
                r_lower_s: 0.0266,
                bottleneck_utilization_pct: 7.092,
            },
        ],
        n: 2,
        per_centre: vec![
            MvaCentre {
                name: "cpu".into(),
                kind: CentreKind::Queueing,
                demand_s: 0.0021,
                residence_s: 0.002135,
                queue_length: 0.03365,
                utilization_pct: Some(3.31),
            },
            MvaCentre {
                name: "wan".into(),
                kind: CentreKind::Delay,
                demand_s: 0.02,
                residence_s: 0.02,
                queue_length: 0.3152,
                utilization_pct: None,
            },
        ],
    }
}

fn coef(estimate: f64, std_error: Option<f64>, at_bound: bool) -> Coefficient {
    Coefficient {
        estimate,
        std_error,
        at_bound,
    }
}

fn usl() -> UslResult {
    // specsdm91's fit (R usl: sigma 0.02773, kappa 1.044e-4, lambda 90.00), three points.
    let pts = [
        (1.0, 64.9, 90.0),
        (72.0, 1853.2, 1850.15),
        (216.0, 1702.2, 1646.2),
    ];
    UslResult {
        source: "specsdm91.csv".into(),
        points: pts
            .iter()
            .map(|&(n, x, f)| UslPoint {
                n,
                x_per_s: x,
                r_s: if n == 72.0 { Some(0.0388) } else { None },
                fitted_x_per_s: f,
                residual_per_s: x - f,
                efficiency: x / (n * 90.0),
            })
            .collect(),
        sigma: coef(0.02773, Some(0.009122), false),
        kappa: coef(1.044e-4, Some(1.988e-5), false),
        lambda_per_s: coef(90.0, Some(14.21), false),
        residual_std_error_per_s: Some(82.85),
        df: 4,
        r_squared: 0.9896,
        max_measured_n: 216.0,
        n_max: Some(96.52),
        x_max_per_s: Some(1883.9),
        x_ceiling_per_s: None,
        implied_think_s: None,
        reading: UslReading::CoherencyBound,
        reading_text: "coherency-bound: throughput peaks at N = 96.5".into(),
        predictions: vec![
            UslPrediction {
                n: 100.0,
                x_per_s: 1883.0,
                r_s: None,
                beyond_2x_measured: false,
            },
            UslPrediction {
                n: 500.0,
                x_per_s: 1101.0,
                r_s: Some(0.4541),
                beyond_2x_measured: true,
            },
        ],
        warnings: vec![
            "prediction at N = 500 is beyond twice the largest measured N (216): an extrapolation"
                .into(),
        ],
        notes: vec!["sweep curve 1: rndrd 16KiB misalign 0".into()],
    }
}

fn live() -> LiveResult {
    LiveResult {
        interval_s: 10.0,
        transactions_per_s: 500.0,
        tps_source: "Com_commit+Com_rollback".into(),
        resources: vec![
            LiveResource {
                name: "cpu".into(),
                kind: ResourceKind::Cpu,
                utilization_pct: 60.0,
                demand_s: 0.0012,
                servers: Some(8),
                detail: "average of 8 CPUs: 45.0% usr, 12.0% sys, 3.0% steal".into(),
            },
            LiveResource {
                name: "nvme0n1".into(),
                kind: ResourceKind::Disk,
                utilization_pct: 90.0,
                demand_s: 0.0018,
                servers: None,
                detail: "1200 r/s 800 w/s, io_ticks".into(),
            },
            LiveResource {
                name: "eth0".into(),
                kind: ResourceKind::Net,
                utilization_pct: 10.0,
                demand_s: 0.0002,
                servers: None,
                detail: "12.50 MB/s rx, 1.00 MB/s tx of 1000 Mb/s".into(),
            },
        ],
        think_s: 0.0,
        total_demand_s: 0.0032,
        max_demand_s: 0.0018,
        bottleneck: "nvme0n1".into(),
        n_sat: 0.0032 / 0.0018,
        threads_running: Some(10.0),
        r_floor_s: Some(0.018),
        notes: vec!["disks under /var/lib/mysql: nvme0n1".into()],
    }
}

fn text<T>(r: &T) -> String
where
    Text: Exporter<T>,
{
    Text::default().to_string(r).unwrap()
}

fn csv<T>(r: &T) -> String
where
    Csv: Exporter<T>,
{
    Csv::default().to_string(r).unwrap()
}

#[test]
fn text_snapshots() {
    insta::assert_snapshot!("bounds_text", text(&bounds()));
    insta::assert_snapshot!("mva_text", text(&mva()));
    insta::assert_snapshot!("usl_text", text(&usl()));
    insta::assert_snapshot!("live_text", text(&live()));
}

#[test]
fn csv_snapshots() {
    insta::assert_snapshot!("bounds_csv", csv(&bounds()));
    insta::assert_snapshot!("mva_csv", csv(&mva()));
    insta::assert_snapshot!("usl_csv", csv(&usl()));
    insta::assert_snapshot!("live_csv", csv(&live()));
}

#[test]
fn json_snapshots() {
    let j = |s, v: &dyn erased::Ser| v.json(s);
    insta::assert_snapshot!("bounds_json", j(doc::MODEL_BOUNDS, &bounds()));
    insta::assert_snapshot!("usl_json", j(doc::MODEL_USL, &usl()));
    insta::assert_snapshot!("live_json", j(doc::MODEL_LIVE, &live()));
}

/// JSON of any model result under its schema name.
mod erased {
    use super::*;
    pub trait Ser {
        fn json(&self, schema: &'static str) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self, schema: &'static str) -> String {
            Json.to_string(&Document::new(schema, self)).unwrap()
        }
    }
}

#[test]
fn prometheus_snapshot_of_live() {
    insta::assert_snapshot!(
        "live_prometheus",
        Prometheus::default().to_string(&live()).unwrap()
    );
}

#[test]
fn csv_has_one_row_per_table_row_and_empty_cells_for_absent_values() {
    let c = csv(&usl());
    let lines: Vec<&str> = c.lines().collect();
    assert_eq!(lines.len(), 1 + 3);
    assert_eq!(
        lines[0],
        "n,x_per_s,r_s,fitted_x_per_s,residual_per_s,efficiency"
    );
    // N = 1 has no R: an empty cell, never 0.
    assert!(lines[1].starts_with("1,64.9,,90,"), "{}", lines[1]);
    assert_eq!(csv(&bounds()).lines().count(), 1 + 4);
}

#[test]
fn text_marks_bounds_extrapolations_and_delay_centres() {
    let t = text(&usl());
    assert!(t.contains("beyond 2x the measured range"), "{t}");
    assert!(t.contains("warning: prediction at N = 500"), "{t}");
    assert!(t.contains("0.02773 ± 0.009122"), "{t}");
    let m = text(&mva());
    // A delay centre has no utilisation.
    let wan = m.lines().find(|l| l.starts_with("wan")).unwrap();
    assert!(wan.trim_end().ends_with('-'), "{wan}");
    let l = text(&live());
    assert!(l.contains("at nvme0n1, the bottleneck"), "{l}");
    assert!(
        l.contains("R floor  18.0ms  max(D, N Dmax - Z) at N = 10.00 threads"),
        "{l}"
    );
}
