//! The JSON document contract: every command's JSON output names its schema (`dbio.iostat/1`)
//! and the dbio version that wrote it, before the result's own fields. A result type carries
//! neither: the output layer wraps it in a [`Document`] (bench's [`crate::bench::BenchResult`],
//! which is read back by later commands, holds the same two fields itself, filled from the same
//! constants). Each schema has a JSON Schema file `schema/<name>.schema.json` in the repository.

use serde::Serialize;

/// The dbio version every crate of the workspace shares (`dbio --version`).
pub const DBIO_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `dbio bench` (one document).
pub const BENCH: &str = "dbio.bench/1";
/// `dbio sweep`: `DIR/sweep.json` and `dbio sweep --format json`.
pub const SWEEP: &str = "dbio.sweep/1";
/// `dbio iostat --format jsonl` (one document per report, one per line).
pub const IOSTAT: &str = "dbio.iostat/1";
/// `dbio stack --format json`.
pub const STACK: &str = "dbio.stack/1";
/// `dbio check --format json`.
pub const CHECK: &str = "dbio.check/1";
/// `dbio align check --format json` (version 2: every key carries its unit, see
/// [`crate::align`]).
pub const ALIGN_CHECK: &str = "dbio.align.check/2";
/// `dbio align calc --format json` (version 2: every key carries its unit).
pub const ALIGN_CALC: &str = "dbio.align.calc/2";
/// `dbio innodb pages --format json`.
pub const INNODB_PAGES: &str = "dbio.innodb.pages/1";
/// `dbio innodb grep --format json` (one document, written as hits are found).
pub const INNODB_GREP: &str = "dbio.innodb.grep/1";
/// `dbio innodb grep --format jsonl`: one object per hit (`"type": "hit"`), then the summary
/// (`"type": "summary"`), which alone carries `schema` and `dbio_version`.
pub const INNODB_GREP_JSONL: &str = "dbio.innodb.grep.jsonl/1";
/// `dbio report --format json`: the analysis of bench results (and sweeps).
pub const REPORT: &str = "dbio.report/1";

/// `dbio mysql advise --format json`.
pub const MYSQL_ADVISE: &str = "dbio.mysql_advise/1";
/// `dbio mysql chunk --format json`.
pub const MYSQL_CHUNK: &str = "dbio.mysql.chunk/1";
/// `dbio mysql stalk --report DIR --format json`.
pub const MYSQL_STALK: &str = "dbio.mysql.stalk/1";
/// `DIR/<prefix>/capture.json` of `dbio mysql stalk`.
pub const MYSQL_STALK_CAPTURE: &str = "dbio.mysql.stalk.capture/1";
/// `dbio innodb rows --summary FILE`: what a rows run read, wrote and rejected.
pub const INNODB_ROWS: &str = "dbio.innodb.rows/1";

/// `dbio model bounds --format json`.
pub const MODEL_BOUNDS: &str = "dbio.model.bounds/1";
/// `dbio model mva --format json`.
pub const MODEL_MVA: &str = "dbio.model.mva/1";
/// `dbio model usl --format json`.
pub const MODEL_USL: &str = "dbio.model.usl/1";
/// `dbio model live --format json`.
pub const MODEL_LIVE: &str = "dbio.model.live/1";

/// A result as a JSON document: `schema` and `dbio_version` first, then the result's own
/// fields (the result must serialise as a map: a struct or a map).
#[derive(Debug, Serialize)]
pub struct Document<'a, T: ?Sized> {
    /// One of the schema constants of this module.
    pub schema: &'static str,
    /// [`DBIO_VERSION`].
    pub dbio_version: &'static str,
    /// The result.
    #[serde(flatten)]
    pub result: &'a T,
}

impl<'a, T: ?Sized> Document<'a, T> {
    /// `result` under `schema`, written by this dbio version.
    pub fn new(schema: &'static str, result: &'a T) -> Self {
        Document {
            schema,
            dbio_version: DBIO_VERSION,
            result,
        }
    }
}

/// The opening of a document that is written by hand as it streams (innodb grep): `{`, then
/// the `schema` and `dbio_version` lines of pretty-printed JSON, each followed by a comma and
/// a newline, ready for the result's first field.
pub fn stream_head(schema: &'static str) -> String {
    format!(
        "{{\n  \"schema\": {},\n  \"dbio_version\": {},\n",
        serde_json::Value::from(schema),
        serde_json::Value::from(DBIO_VERSION)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct R {
        iops: f64,
    }

    #[test]
    fn document_puts_schema_and_version_first() {
        let s =
            serde_json::to_string_pretty(&Document::new(IOSTAT, &R { iops: 1.5 })).unwrap() + "\n";
        assert_eq!(
            s,
            format!(
                "{{\n  \"schema\": \"dbio.iostat/1\",\n  \"dbio_version\": \"{DBIO_VERSION}\",\n  \"iops\": 1.5\n}}\n"
            )
        );
    }

    #[test]
    fn stream_head_opens_the_same_document() {
        let doc = format!("{}  \"iops\": 1.5\n}}\n", stream_head(IOSTAT));
        let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(v["schema"], IOSTAT);
        assert_eq!(v["dbio_version"], DBIO_VERSION);
        let s =
            serde_json::to_string_pretty(&Document::new(IOSTAT, &R { iops: 1.5 })).unwrap() + "\n";
        assert!(s.starts_with(&stream_head(IOSTAT)));
    }

    #[test]
    fn schema_names_are_unique_and_dotted() {
        let all = [
            BENCH,
            SWEEP,
            IOSTAT,
            STACK,
            CHECK,
            ALIGN_CHECK,
            ALIGN_CALC,
            INNODB_PAGES,
            INNODB_GREP,
            INNODB_GREP_JSONL,
            REPORT,
            INNODB_ROWS,
        ];
        for (i, a) in all.iter().enumerate() {
            let (name, version) = a.split_once('/').expect("name/version");
            assert!(
                name.starts_with("dbio.") && version.parse::<u32>().is_ok(),
                "{a}"
            );
            assert!(!all[i + 1..].contains(a), "{a} twice");
        }
    }
}
