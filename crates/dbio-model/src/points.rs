//! Measured (N, X[, R]) points from text: CSV (or whitespace-separated columns), JSON, or
//! `dbio bench --format json` results (one document, an array of them, or several documents
//! one after another as `cat run*.json` gives).
//!
//! - CSV: columns N, X[, R in seconds]; a header line names them instead (`n`/`threads`/
//!   `users`/`concurrency`/`clients`/`load`/`processors`, `x`/`x_per_s`/`throughput`/`tps`/
//!   `qps`/`iops`, `r`/`r_s`/`response_time_s`/`latency_s`), lines starting with `#` are
//!   comments.
//! - JSON: an array of `[n, x]`, `[n, x, r]` or objects with the same names as the CSV header.
//! - bench results: N = threads x iodepth (the I/Os in flight), X = total operations per
//!   second, R = mean latency of all operations. An open-loop run (`--rate`) is refused: its
//!   throughput is the rate asked for, not what N users can do.
//! - a `dbio sweep` result (`DIR/sweep.json`, schema `dbio.sweep/1`): each done point, with
//!   N = threads x iodepth, X = its IOPS, R = the IOPS-weighted mean latency of its
//!   operations. A USL curve varies concurrency only: a sweep over several modes, block
//!   sizes, misalignments or schedulers holds one curve per combination, and one is chosen
//!   (`curve`, from 1, in the sweep's order).

use crate::usl::Point;
use crate::ModelError;
use dbio_schema::bench::BenchResult;
use dbio_schema::sweep::{Status, SweepResult};
use serde_json::Value;

const N_NAMES: &[&str] = &[
    "n",
    "threads",
    "users",
    "concurrency",
    "clients",
    "load",
    "processors",
];
const X_NAMES: &[&str] = &[
    "x",
    "x_per_s",
    "throughput",
    "tps",
    "qps",
    "iops",
    "ops_per_s",
];
const R_NAMES: &[&str] = &["r", "r_s", "response_time_s", "latency_s"];

/// Reads the points of `text` (see the module documentation).
pub fn parse(text: &str) -> Result<Vec<Point>, ModelError> {
    parse_with(text, None).map(|p| p.points)
}

/// Points and what was left out or chosen on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The points.
    pub points: Vec<Point>,
    /// Which sweep curve was taken, which points were left out.
    pub notes: Vec<String>,
}

/// Reads the points of `text`; `curve` picks one curve of a sweep that holds several.
pub fn parse_with(text: &str, curve: Option<usize>) -> Result<Parsed, ModelError> {
    let t = text.trim_start();
    if t.starts_with('{') {
        let v: Value = serde_json::Deserializer::from_str(t)
            .into_iter::<Value>()
            .next()
            .transpose()
            .map_err(|e| bad(format!("not valid JSON: {e}")))?
            .unwrap_or(Value::Null);
        let is_sweep = v
            .get("schema")
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with("dbio.sweep/"));
        if is_sweep {
            let sw: SweepResult = dbio_schema::read::value(v)
                .map_err(|e| bad(format!("not a dbio sweep result: {e}")))?;
            return from_sweep(&sw, curve);
        }
    }
    if curve.is_some() {
        return Err(bad(
            "--curve picks a curve of a dbio sweep result; this input is not one".into(),
        ));
    }
    let points = if t.starts_with('[') || t.starts_with('{') {
        parse_json(t)?
    } else {
        parse_csv(text)?
    };
    Ok(Parsed {
        points,
        notes: Vec::new(),
    })
}

/// The points of one curve of a sweep (see the module documentation).
pub fn from_sweep(sw: &SweepResult, curve: Option<usize>) -> Result<Parsed, ModelError> {
    let key = |p: &dbio_schema::sweep::Point| {
        let mut k = format!(
            "{} {} misalign {}",
            p.mode.name(),
            dbio_schema::units::format_size(p.block_size_bytes),
            p.misalign_bytes
        );
        if let Some(s) = &p.scheduler {
            k.push_str(&format!(" scheduler {s}"));
        }
        k
    };
    let mut curves: Vec<String> = Vec::new();
    for p in &sw.points {
        let k = key(&p.point);
        if !curves.contains(&k) {
            curves.push(k);
        }
    }
    let chosen = match (curve, curves.len()) {
        (_, 0) => return Err(bad("the sweep has no points".into())),
        (None, 1) => 0,
        (None, n) => {
            let list: Vec<String> = curves
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{}: {c}", i + 1))
                .collect();
            return Err(bad(format!(
                "the sweep holds {n} curves ({}): choose one with --curve N",
                list.join("; ")
            )));
        }
        (Some(k), n) if k == 0 || k > n => {
            return Err(bad(format!(
                "--curve {k}: the sweep holds {n} curve(s), numbered from 1"
            )))
        }
        (Some(k), _) => k - 1,
    };
    let mut notes = vec![format!("sweep curve {}: {}", chosen + 1, curves[chosen])];
    let mut out = Vec::new();
    let mut left_out = 0;
    for p in sw.points.iter().filter(|p| key(&p.point) == curves[chosen]) {
        let Some(f) = p.figures.as_ref().filter(|_| p.status == Status::Done) else {
            left_out += 1;
            continue;
        };
        let ops: Vec<_> = [&f.read, &f.write, &f.fsync]
            .into_iter()
            .flatten()
            .collect();
        let iops: f64 = ops.iter().map(|o| o.iops).sum();
        let r =
            (iops > 0.0).then(|| ops.iter().map(|o| o.iops * o.mean_ns).sum::<f64>() / iops / 1e9);
        out.push(Point {
            n: p.point.load() as f64,
            x: f.iops,
            r,
        });
    }
    if left_out > 0 {
        notes.push(format!(
            "{left_out} point(s) of this curve not done (pending or failed): left out"
        ));
    }
    if sw.base.rate_iops.is_some() {
        return Err(bad(
            "the sweep ran open-loop (--rate): its throughput is the rate asked for, not the capacity at N; sweep without --rate".into(),
        ));
    }
    Ok(Parsed { points: out, notes })
}

fn bad(msg: String) -> ModelError {
    ModelError::BadInput(msg)
}

fn parse_csv(text: &str) -> Result<Vec<Point>, ModelError> {
    let mut cols: Option<(usize, usize, Option<usize>)> = None;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .map(|f| f.trim_matches('"'))
            .collect();
        if cols.is_none() && fields.first().is_some_and(|f| f.parse::<f64>().is_err()) {
            let find = |names: &[&str]| {
                fields
                    .iter()
                    .position(|f| names.contains(&f.to_ascii_lowercase().as_str()))
            };
            let n = find(N_NAMES).ok_or_else(|| {
                bad(format!(
                    "line {}: header {line:?} names no concurrency column (one of {})",
                    i + 1,
                    N_NAMES.join(", ")
                ))
            })?;
            let x = find(X_NAMES).ok_or_else(|| {
                bad(format!(
                    "line {}: header {line:?} names no throughput column (one of {})",
                    i + 1,
                    X_NAMES.join(", ")
                ))
            })?;
            cols = Some((n, x, find(R_NAMES)));
            continue;
        }
        let (cn, cx, cr) = *cols.get_or_insert((0, 1, Some(2)));
        let num = |c: usize, what: &str| -> Result<Option<f64>, ModelError> {
            match fields.get(c) {
                None => Ok(None),
                Some(f) => f.parse::<f64>().map(Some).map_err(|_| {
                    bad(format!(
                        "line {}: {what} {f:?} is not a number (columns: N, X[, R in seconds])",
                        i + 1
                    ))
                }),
            }
        };
        let n = num(cn, "N")?.ok_or_else(|| bad(format!("line {}: no N in {line:?}", i + 1)))?;
        let x = num(cx, "X")?.ok_or_else(|| {
            bad(format!(
                "line {}: no X in {line:?} (columns: N, X[, R in seconds])",
                i + 1
            ))
        })?;
        let r = match cr {
            Some(c) => num(c, "R")?,
            None => None,
        };
        out.push(Point { n, x, r });
    }
    if out.is_empty() {
        return Err(bad("no points: expected lines of N, X[, R]".into()));
    }
    Ok(out)
}

fn parse_json(text: &str) -> Result<Vec<Point>, ModelError> {
    let mut docs = Vec::new();
    for v in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        docs.push(v.map_err(|e| bad(format!("not valid JSON: {e}")))?);
    }
    let mut out = Vec::new();
    for d in docs {
        match d {
            Value::Array(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    out.push(point(item, i)?);
                }
            }
            other => out.push(point(other, out.len())?),
        }
    }
    if out.is_empty() {
        return Err(bad("no points in the JSON input".into()));
    }
    Ok(out)
}

fn point(v: Value, i: usize) -> Result<Point, ModelError> {
    let num = |v: &Value, what: &str| {
        v.as_f64()
            .ok_or_else(|| bad(format!("item {}: {what} {v} is not a number", i + 1)))
    };
    match &v {
        Value::Array(a) if (2..=3).contains(&a.len()) => Ok(Point {
            n: num(&a[0], "N")?,
            x: num(&a[1], "X")?,
            r: a.get(2).map(|r| num(r, "R")).transpose()?,
        }),
        Value::Object(m) if m.contains_key("spec") && m.contains_key("summary") => {
            let b: BenchResult = dbio_schema::read::value(v)
                .map_err(|e| bad(format!("item {}: not a dbio bench result: {e}", i + 1)))?;
            b.check().map_err(|e| bad(format!("item {}: {e}", i + 1)))?;
            from_bench(&b, i)
        }
        Value::Object(m) => {
            let get = |names: &[&str]| {
                m.iter()
                    .find(|(k, _)| names.contains(&k.to_ascii_lowercase().as_str()))
                    .map(|(_, v)| v)
            };
            let n = get(N_NAMES).ok_or_else(|| {
                bad(format!(
                    "item {}: no concurrency key (one of {})",
                    i + 1,
                    N_NAMES.join(", ")
                ))
            })?;
            let x = get(X_NAMES).ok_or_else(|| {
                bad(format!(
                    "item {}: no throughput key (one of {})",
                    i + 1,
                    X_NAMES.join(", ")
                ))
            })?;
            Ok(Point {
                n: num(n, "N")?,
                x: num(x, "X")?,
                r: get(R_NAMES).map(|r| num(r, "R")).transpose()?,
            })
        }
        _ => Err(bad(format!(
            "item {}: {v} is neither [N, X, R], an object of N and X, nor a dbio bench result",
            i + 1
        ))),
    }
}

/// One point from a bench result (see the module documentation).
pub fn from_bench(b: &BenchResult, i: usize) -> Result<Point, ModelError> {
    if let Some(rate) = b.spec.rate_iops {
        return Err(bad(format!(
            "item {}: an open-loop run (--rate {rate}) measures the rate asked for, not the capacity of N = threads x iodepth: rerun without --rate",
            i + 1
        )));
    }
    let s = &b.summary;
    let ops = [&s.read, &s.write, &s.fsync];
    // In f64: counts of a damaged file could overflow a u64 sum.
    let count: f64 = ops.iter().map(|o| o.count as f64).sum();
    let r = (count > 0.0).then(|| {
        ops.iter()
            .map(|o| o.count as f64 * o.lat_ns.mean)
            .sum::<f64>()
            / count
            / 1e9
    });
    Ok(Point {
        n: f64::from(b.spec.threads) * f64::from(b.spec.iodepth),
        x: s.total.iops,
        r,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_and_without_header() {
        let p = parse("1,64.9\n18,995.9\n# comment\n\n36,1652.4\n").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(
            p[1],
            Point {
                n: 18.0,
                x: 995.9,
                r: None
            }
        );
        let p = parse("threads,latency_s,tps\n1,0.002,500\n2,0.0025,800\n").unwrap();
        assert_eq!(
            p[1],
            Point {
                n: 2.0,
                x: 800.0,
                r: Some(0.0025)
            }
        );
        let p = parse("1 10 0.1\n2\t19\t0.105\n").unwrap();
        assert_eq!(p[1].r, Some(0.105));
    }

    #[test]
    fn csv_errors_name_the_line() {
        let e = parse("1,2\n2,abc\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("abc"), "{e}");
        let e = parse("foo,bar\n1,2\n").unwrap_err().to_string();
        assert!(e.contains("no concurrency column"), "{e}");
        let e = parse("1\n").unwrap_err().to_string();
        assert!(e.contains("no X"), "{e}");
        assert!(parse("# nothing\n").is_err());
    }

    #[test]
    fn json_arrays_and_objects() {
        let p = parse("[[1, 10], [2, 19, 0.1]]").unwrap();
        assert_eq!(p[1].r, Some(0.1));
        let p = parse(r#"[{"n": 4, "x_per_s": 30}, {"users": 8, "throughput": 50, "r_s": 0.2}]"#)
            .unwrap();
        assert_eq!(
            p[0],
            Point {
                n: 4.0,
                x: 30.0,
                r: None
            }
        );
        assert_eq!(p[1].r, Some(0.2));
        let e = parse(r#"[{"x": 1}]"#).unwrap_err().to_string();
        assert!(e.contains("no concurrency key"), "{e}");
        let e = parse("[1, 2").unwrap_err().to_string();
        assert!(e.contains("not valid JSON"), "{e}");
        let e = parse(r#"["a"]"#).unwrap_err().to_string();
        assert!(e.contains("item 1"), "{e}");
    }
}
