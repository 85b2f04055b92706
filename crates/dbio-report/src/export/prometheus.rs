//! The one writer of the Prometheus text exposition format (version 0.0.4) that every command
//! uses. It declares each family (`# HELP`, `# TYPE`) once per exposition, escapes label
//! values, prints special values as Prometheus spells them, and can stamp samples with a
//! timestamp, so that every output passes `promtool check metrics`.
//!
//! Two shapes:
//! - [`Exposition::file`]: each [`Exposition::begin`] starts a whole new exposition (a file
//!   rewritten per sample, or a single report), without timestamps: node_exporter's textfile
//!   collector refuses client-side timestamps.
//! - [`Exposition::stream`]: successive reports form one exposition, each family declared
//!   once (a second `# HELP` line is an error for Prometheus' parser), samples timestamped.

pub mod advise;
pub mod check;
pub mod iostat;
pub mod model;

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;

/// A metric family's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A value that only goes up (name ends in `_total`).
    Counter,
    /// A value that goes up and down.
    Gauge,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// A label value as the text format wants it: backslash, double quote and newline escaped.
pub fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A sample value as the text format spells it (`NaN`, `+Inf`, `-Inf`, else Rust's shortest
/// round-trip form).
pub fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v}")
    }
}

/// `{k="v",...}` (empty when there are no labels).
pub fn labels(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let v: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", v.join(","))
}

/// Writes expositions (see the module documentation).
#[derive(Clone, Debug)]
pub struct Exposition {
    stream: bool,
    declared: HashSet<String>,
    timestamp_ms: Option<i64>,
    out: String,
}

impl Exposition {
    /// Each report a whole exposition, without timestamps.
    pub fn file() -> Self {
        Exposition {
            stream: false,
            declared: HashSet::new(),
            timestamp_ms: None,
            out: String::new(),
        }
    }

    /// Successive reports as one exposition: families declared once, samples timestamped.
    pub fn stream() -> Self {
        Exposition {
            stream: true,
            ..Exposition::file()
        }
    }

    /// Starts a report taken at `unix_s` seconds (the timestamp of its samples in a stream).
    /// In a file exposition this starts a new exposition: families are declared again.
    pub fn begin(&mut self, unix_s: f64) {
        if self.stream {
            self.timestamp_ms = Some((unix_s * 1000.0).round() as i64);
        } else {
            self.declared.clear();
            self.timestamp_ms = None;
        }
    }

    /// One family's samples (`labels`, value), declared first if this exposition has not
    /// declared it yet. A family without samples writes nothing.
    pub fn family<'a, I>(&mut self, name: &str, kind: Kind, help: &str, samples: I)
    where
        I: IntoIterator<Item = (Vec<(&'a str, &'a str)>, f64)>,
    {
        let mut samples = samples.into_iter().peekable();
        if samples.peek().is_none() {
            return;
        }
        if self.declared.insert(name.to_string()) {
            let _ = writeln!(
                self.out,
                "# HELP {name} {}\n# TYPE {name} {}",
                help.replace('\\', "\\\\").replace('\n', "\\n"),
                kind.as_str()
            );
        }
        for (l, v) in samples {
            let _ = write!(self.out, "{name}{} {}", labels(&l), value(v));
            if let Some(ts) = self.timestamp_ms {
                let _ = write!(self.out, " {ts}");
            }
            self.out.push('\n');
        }
    }

    /// The text written since the last call.
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

/// What the exposition of successive reports keeps between them: the exposition (families
/// declared once when streamed) and the devices exported so far.
#[derive(Debug)]
pub struct State {
    expo: Exposition,
    exported: BTreeSet<String>,
}

impl State {
    /// A state that writes `expo`.
    pub fn new(expo: Exposition) -> Self {
        State {
            expo,
            exported: BTreeSet::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declares_once_per_stream_and_per_file_report() {
        let mut s = Exposition::stream();
        for t in [1.5, 2.5] {
            s.begin(t);
            s.family(
                "x_total",
                Kind::Counter,
                "X.",
                [(vec![("device", "a\"b")], 2.0)],
            );
            s.family("empty", Kind::Gauge, "E.", Vec::new());
        }
        assert_eq!(
            s.take(),
            "# HELP x_total X.\n# TYPE x_total counter\nx_total{device=\"a\\\"b\"} 2 1500\nx_total{device=\"a\\\"b\"} 2 2500\n"
        );
        let mut f = Exposition::file();
        for _ in 0..2 {
            f.begin(0.0);
            f.family("g", Kind::Gauge, "G.", [(vec![], f64::NAN)]);
        }
        assert_eq!(f.take(), "# HELP g G.\n# TYPE g gauge\ng NaN\n".repeat(2));
        assert_eq!(value(f64::INFINITY), "+Inf");
        assert_eq!(value(0.25), "0.25");
    }
}
