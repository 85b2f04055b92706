//! The output formats of `dbio mysql chunk` (text, JSON) on hand-built results: a dry run, and
//! an executed run with pauses and retries.

use dbio_report::export::{Json, Text};
use dbio_report::Exporter;
use dbio_schema::mysql_chunk::*;
use dbio_schema::Document;

fn plan() -> ChunkPlan {
    ChunkPlan {
        key_name: "PRIMARY".into(),
        key_columns: vec!["id".into()],
        statement: "DELETE `shop`.`orders` FROM `shop`.`orders` FORCE INDEX (`PRIMARY`) WHERE ((`id` > ?)) AND ((`id` <= ?)) AND (created < '2020-01-01')".into(),
        explain: Explain {
            access: "range".into(),
            key: Some("PRIMARY".into()),
            rows: Some(1000),
            extra: Some("Using where".into()),
        },
        table_rows_estimate: 1_000_000,
        condition_rows_estimate: 498_211,
        start_chunk_rows: 1000,
        chunks_estimate: 1000,
        time_estimate_s: 1000.0,
        chunk_time_s: 0.5,
        sleep_coef: 1.0,
        end_key: vec!["1000000".into()],
        resume_after: None,
        state_file: "/root/.local/state/dbio/chunk-shop.orders-0123456789abcdef.json".into(),
        marker_table: None,
        generated_columns: vec![],
        cascades: vec![],
    }
}

fn dry() -> ChunkResult {
    ChunkResult {
        database: "shop".into(),
        table: "orders".into(),
        action: "delete".into(),
        condition: Some("created < '2020-01-01'".into()),
        execute: false,
        plan: plan(),
        run: None,
    }
}

fn executed() -> ChunkResult {
    ChunkResult {
        execute: true,
        action: "archive+delete".into(),
        plan: ChunkPlan {
            resume_after: Some(vec!["250000".into()]),
            marker_table: Some("shop.dbio_chunk_marker".into()),
            generated_columns: vec!["total".into()],
            cascades: vec![Cascade {
                table: "shop.order_lines".into(),
                parent: "shop.orders".into(),
                constraint: "fk_lines_order".into(),
                delete_rule: "CASCADE".into(),
                columns: vec!["order_id".into()],
                depth: 1,
                rows_estimate: 1_868_300,
                handling: "archived".into(),
            }],
            ..plan()
        },
        run: Some(ChunkRun {
            outcome: "finished".into(),
            stop_reason: None,
            chunks: 212,
            rows_walked: 750_000,
            rows_affected: 373_660,
            rows_archived: 373_660,
            retries: 2,
            elapsed_s: 301.25,
            working_s: 140.5,
            sleeping_s: 140.25,
            paused_s: 20.5,
            rows_per_s: 1240.365,
            chunk_rows_min: 500,
            chunk_rows_max: 5062,
            chunk_rows_last: 3311,
            chunk_time_p50_ms: 498.2,
            chunk_time_max_ms: 1210.9,
            pauses: vec![
                Pause {
                    cause: "load".into(),
                    message: "Threads_running=31 >= max-load 25 (resumes below 12.5)".into(),
                    subject: "Threads_running".into(),
                    value: Some(31.0),
                    limit: Some(25.0),
                    at_s: 12.0,
                    duration_s: 14.25,
                },
                Pause {
                    cause: "window".into(),
                    message: "05:00:01 is outside the window 01:00-05:00".into(),
                    subject: "01:00-05:00".into(),
                    value: None,
                    limit: None,
                    at_s: 95.5,
                    duration_s: 6.25,
                },
            ],
            last_key: Some(vec!["1000000".into()]),
            job_rows_affected: 498_100,
            archive_file: Some("/backup/orders-2019.tsv".into()),
            archive_bytes: Some(41_234_567),
            child_rows_archived: 1_868_300,
        }),
        ..dry()
    }
}

#[test]
fn text_dry_run() {
    insta::assert_snapshot!("text_dry_run", Text::default().to_string(&dry()).unwrap());
}

#[test]
fn text_executed() {
    let t = Text::default().to_string(&executed()).unwrap();
    // The facts a reader looks for: the outcome, the time split and every pause's cause.
    assert!(
        t.contains("working 2m21s (47%), sleeping 2m20s (47%), paused 20.50s (7%)"),
        "{t}"
    );
    assert!(t.contains("Threads_running=31 >= max-load 25"), "{t}");
    assert!(
        t.contains("job total   498100 rows affected over every run"),
        "{t}"
    );
    insta::assert_snapshot!("text_executed", t);
}

#[test]
fn text_stopped_by_the_guard() {
    let mut r = executed();
    let run = r.run.as_mut().unwrap();
    run.outcome = "stopped".into();
    run.stop_reason = Some("the lag of replica mysql://repl@r1/ cannot be read".into());
    run.pauses.clear();
    let t = Text::default().to_string(&r).unwrap();
    assert!(
        t.contains(
            "outcome     stopped by the guard: the lag of replica mysql://repl@r1/ cannot be read"
        ),
        "{t}"
    );
    assert!(t.contains("pauses      none"), "{t}");
}

#[test]
fn json() {
    let j = Json
        .to_string(&Document::new(dbio_schema::doc::MYSQL_CHUNK, &executed()))
        .unwrap();
    insta::assert_snapshot!("json", j);
    let dry = Json
        .to_string(&Document::new(dbio_schema::doc::MYSQL_CHUNK, &dry()))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&dry).unwrap();
    assert!(v["run"].is_null());
    assert_eq!(v["plan"]["explain"]["type"], "range");
}
