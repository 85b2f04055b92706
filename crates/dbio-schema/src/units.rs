//! Sizes and durations, parsed and printed the way people write them: `16k`, `16KiB`, `1G`,
//! `512`; `10s`, `500ms`, `5m`, `0.5`. One parser for each, used by every command.
//!
//! Size suffixes are binary (k = KiB = 1024) as in sysbench, fio and dd; `kB`/`MB`/`GB` with a
//! capital B and no `i` are binary too, because storage people mean 1024 there. An explicit
//! decimal size is not accepted: nobody sizes a database page in powers of ten.

use std::time::Duration;
use thiserror::Error;

/// A size or duration that could not be parsed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    /// The text is not a size.
    #[error(
        "'{0}' is not a size: write a number with an optional suffix, e.g. 512, 16k, 16KiB, 1G"
    )]
    BadSize(String),
    /// The size does not fit in 64 bits.
    #[error("size '{0}' is too large")]
    SizeOverflow(String),
    /// The text is not a duration.
    #[error("'{0}' is not a duration: write a number with an optional unit, e.g. 10s, 500ms, 5m, 1.5 (seconds)")]
    BadDuration(String),
    /// The duration is longer than [`MAX_DURATION`].
    #[error("duration '{0}' is too long: at most 366 days (31622400s) is accepted")]
    DurationTooLong(String),
}

/// The longest duration [`parse_duration`] accepts: 366 days. Far beyond any run or interval
/// anyone means, and small enough that sums of a few such durations in nanoseconds still fit
/// in 64 bits (u64 nanoseconds last 584 years).
pub const MAX_DURATION: Duration = Duration::from_secs(366 * 86_400);

/// Parses a size: a number (integer, or a fraction when a suffix follows) and an optional
/// binary suffix `k`, `m`, `g`, `t`, `p` (also `K`, `KiB`, `KB`, `kb`...). `b` alone means bytes.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let num: String = num.chars().filter(|&c| c != '_').collect();
    if num.is_empty() {
        return Err(UnitError::BadSize(text.to_string()));
    }
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => return Err(UnitError::BadSize(text.to_string())),
    };
    if num.contains('.') {
        let v: f64 = num
            .parse()
            .map_err(|_| UnitError::BadSize(text.to_string()))?;
        let bytes = v * (1u64 << shift) as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(UnitError::SizeOverflow(text.to_string()));
        }
        if bytes.fract() != 0.0 {
            return Err(UnitError::BadSize(text.to_string()));
        }
        return Ok(bytes as u64);
    }
    let v: u64 = num
        .parse()
        .map_err(|_| UnitError::SizeOverflow(text.to_string()))?;
    v.checked_mul(1u64 << shift)
        .ok_or_else(|| UnitError::SizeOverflow(text.to_string()))
}

/// Parses a duration: a number with an optional unit `ns`, `us`, `ms`, `s`, `m`, `h`
/// (no unit means seconds). Fractions are allowed: `0.5`, `1.5s`, `2.5m`. At most
/// [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError::BadDuration(text.to_string()))?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(UnitError::BadDuration(text.to_string())),
    };
    let secs = v * scale;
    if !secs.is_finite() || secs < 0.0 {
        return Err(UnitError::BadDuration(text.to_string()));
    }
    if secs > MAX_DURATION.as_secs_f64() {
        return Err(UnitError::DurationTooLong(text.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Prints a byte count the way `parse_size` reads it: exact binary units when the value is a
/// whole multiple (`16KiB`, `1GiB`), otherwise bytes.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u32, &str); 5] = [
        (50, "PiB"),
        (40, "TiB"),
        (30, "GiB"),
        (20, "MiB"),
        (10, "KiB"),
    ];
    for (shift, name) in UNITS {
        let unit = 1u64 << shift;
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{}", bytes / unit, name);
        }
    }
    format!("{bytes}B")
}

/// Prints a size with two decimals in the largest fitting binary unit (`1.50 GiB`), for
/// human-facing summaries where exactness is given elsewhere.
pub fn format_size_approx(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

/// Prints a byte count for a table people read, in the largest binary unit it reaches:
/// exact when it is a whole number of that unit (`16KiB`, `1GiB`, `512B`, as
/// [`format_size`]), else with two decimals (`465.76 GiB`, as [`format_size_approx`]), so a
/// disk never prints as `488386584KiB`.
pub fn format_size_short(bytes: u64) -> String {
    let shift = (bytes.max(1).ilog2() / 10 * 10).min(50);
    if bytes.is_multiple_of(1u64 << shift) {
        format_size(bytes)
    } else {
        format_size_approx(bytes as f64)
    }
}

/// Prints a latency in nanoseconds with a unit that keeps three significant figures
/// (`850ns`, `12.3us`, `1.92ms`, `2.05s`), so NVMe latencies never print as 0.00.
pub fn format_ns(ns: f64) -> String {
    fn sig(v: f64, unit: &str) -> String {
        if v >= 100.0 {
            format!("{v:.0}{unit}")
        } else if v >= 10.0 {
            format!("{v:.1}{unit}")
        } else {
            format!("{v:.2}{unit}")
        }
    }
    if ns < 1e3 {
        format!("{ns:.0}ns")
    } else if ns < 1e6 {
        sig(ns / 1e3, "us")
    } else if ns < 1e9 {
        sig(ns / 1e6, "ms")
    } else {
        sig(ns / 1e9, "s")
    }
}

/// Prints a duration compactly (`10s`, `500ms`, `1.5s`, `5m`).
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        return "0s".into();
    }
    if ns.is_multiple_of(60_000_000_000) {
        format!("{}m", ns / 60_000_000_000)
    } else if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) && ns < 1_000_000_000 {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// `1 file`, `2 files`.
pub fn n_files(n: u64) -> String {
    format!("{n} file{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_like_people_write_them() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("16k"), Ok(16384));
        assert_eq!(parse_size("16K"), Ok(16384));
        assert_eq!(parse_size("16KiB"), Ok(16384));
        assert_eq!(parse_size("16kb"), Ok(16384));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("4096b"), Ok(4096));
        assert_eq!(parse_size("1_024"), Ok(1024));
        assert!(matches!(parse_size("16q"), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size(""), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size("k"), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size("0.3"), Err(UnitError::BadSize(_))));
        assert!(matches!(
            parse_size("99999999999P"),
            Err(UnitError::SizeOverflow(_))
        ));
    }

    #[test]
    fn durations_parse_with_fractions() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert!(parse_duration("10 parsecs").is_err());
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn durations_longer_than_the_bound_are_refused() {
        // 18446744074 s is just past u64::MAX nanoseconds: it used to be accepted and wrap.
        for s in [
            "18446744074",
            "18446744073",
            "367d",
            "8785h",
            "1e3",
            "999999999999",
        ] {
            assert!(parse_duration(s).is_err(), "{s}");
        }
        assert!(matches!(
            parse_duration("18446744074"),
            Err(UnitError::DurationTooLong(_))
        ));
        assert_eq!(parse_duration("8784h"), Ok(MAX_DURATION));
        assert!(MAX_DURATION.as_nanos() * 4 < u64::MAX as u128);
    }

    #[test]
    fn sizes_and_durations_round_trip() {
        for s in ["16KiB", "1GiB", "512B", "3MiB", "1536B"] {
            assert_eq!(format_size(parse_size(s).unwrap()), s);
        }
        assert_eq!(format_size(1536 * 1024), "1536KiB");
        for d in ["10s", "500ms", "5m", "1.5s"] {
            assert_eq!(format_duration(parse_duration(d).unwrap()), d);
        }
    }

    #[test]
    fn latency_prints_three_significant_figures() {
        assert_eq!(format_ns(850.0), "850ns");
        assert_eq!(format_ns(12_345.0), "12.3us");
        assert_eq!(format_ns(1_920_000.0), "1.92ms");
        assert_eq!(format_ns(2_050_000_000.0), "2.05s");
        assert_eq!(format_size_approx(1536.0), "1.50 KiB");
    }

    #[test]
    fn short_sizes_are_exact_when_they_can_be() {
        assert_eq!(format_size_short(512), "512B");
        assert_eq!(format_size_short(1023), "1023B");
        assert_eq!(format_size_short(4096), "4KiB");
        assert_eq!(format_size_short(1 << 40), "1TiB");
        assert_eq!(format_size_short(500_107_862_016), "465.76 GiB");
        assert_eq!(format_size_short(1025), "1.00 KiB");
        assert_eq!(format_size_short(1536 * 1024), "1.50 MiB");
        assert_eq!(format_size_short(0), "0B");
        assert_eq!(format_size_short(3 << 50), "3PiB");
        assert_eq!(format_size_short(1 << 60), "1024PiB");
    }
}
