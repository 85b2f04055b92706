//! Typed values turned into the exact bytes InnoDB stores for them (MariaDB 10.x / MySQL
//! 5.6.4+ formats). Pure functions; every error names the value and what is wrong.

use crate::Error;

fn bad(value: &str, why: impl Into<String>) -> Error {
    Error::Encode {
        value: value.to_string(),
        reason: why.into(),
    }
}

/// Integer column types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntType {
    /// 1 byte.
    Tiny,
    /// 2 bytes.
    Small,
    /// 3 bytes.
    Medium,
    /// 4 bytes.
    Int,
    /// 8 bytes.
    Big,
}

impl IntType {
    /// Stored width in bytes.
    pub fn width(self) -> usize {
        match self {
            IntType::Tiny => 1,
            IntType::Small => 2,
            IntType::Medium => 3,
            IntType::Int => 4,
            IntType::Big => 8,
        }
    }
    /// SQL name.
    pub fn name(self) -> &'static str {
        match self {
            IntType::Tiny => "TINYINT",
            IntType::Small => "SMALLINT",
            IntType::Medium => "MEDIUMINT",
            IntType::Int => "INT",
            IntType::Big => "BIGINT",
        }
    }
}

/// An integer: big-endian; signed values have the sign bit flipped (INT 837492636 ->
/// B1 EB 1F 9C, INT -1 -> 7F FF FF FF); unsigned values are plain big-endian.
pub fn int(ty: IntType, unsigned: bool, value: &str) -> Result<Vec<u8>, Error> {
    let v: i128 = value
        .trim()
        .parse()
        .map_err(|_| bad(value, format!("not an integer (a {} value)", ty.name())))?;
    let bits = ty.width() as u32 * 8;
    let (lo, hi) = if unsigned {
        (0i128, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    };
    if v < lo || v > hi {
        return Err(bad(
            value,
            format!(
                "out of range for {}{} ({lo}..={hi})",
                ty.name(),
                if unsigned { " UNSIGNED" } else { "" }
            ),
        ));
    }
    let raw = if unsigned {
        v as u128
    } else {
        (v - lo) as u128
    };
    Ok(be_bytes(raw, ty.width()))
}

fn be_bytes(v: u128, width: usize) -> Vec<u8> {
    v.to_be_bytes()[16 - width..].to_vec()
}

fn num<T: std::str::FromStr>(s: &str, value: &str, what: &str) -> Result<T, Error> {
    s.parse()
        .map_err(|_| bad(value, format!("{what} {s:?} is not a number")))
}

/// A parsed calendar date.
fn parse_date(s: &str, value: &str) -> Result<(u32, u32, u32), Error> {
    let parts: Vec<&str> = s.split('-').collect();
    if parts.len() != 3 {
        return Err(bad(value, "expected a date as YYYY-MM-DD"));
    }
    let y: u32 = num(parts[0], value, "year")?;
    let m: u32 = num(parts[1], value, "month")?;
    let d: u32 = num(parts[2], value, "day")?;
    if y > 9999 || m > 12 || d > 31 {
        return Err(bad(value, "year, month or day out of range"));
    }
    Ok((y, m, d))
}

/// Parses `hh:mm:ss[.ffffff]` into (hours, minutes, seconds, microseconds, fraction digits).
fn parse_hms(s: &str, value: &str, max_h: u32) -> Result<(u32, u32, u32, u32, u8), Error> {
    let (main, frac) = match s.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let parts: Vec<&str> = main.split(':').collect();
    if parts.len() != 3 {
        return Err(bad(value, "expected a time as hh:mm:ss[.ffffff]"));
    }
    let h: u32 = num(parts[0], value, "hour")?;
    let m: u32 = num(parts[1], value, "minute")?;
    let sec: u32 = num(parts[2], value, "second")?;
    if h > max_h || m > 59 || sec > 59 {
        return Err(bad(value, "hour, minute or second out of range"));
    }
    let (usec, digits) = match frac {
        None => (0, 0),
        Some(f) => {
            if f.is_empty() || f.len() > 6 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(value, "the fraction must have 1 to 6 digits"));
            }
            let padded = format!("{f:0<6}");
            (num(&padded, value, "fraction")?, f.len() as u8)
        }
    };
    Ok((h, m, sec, usec, digits))
}

fn fsp_of(fsp: Option<u8>, digits: u8, value: &str) -> Result<u8, Error> {
    let fsp = fsp.unwrap_or(digits);
    if fsp > 6 {
        return Err(bad(value, "fractional seconds precision must be 0..6"));
    }
    if digits > fsp {
        return Err(bad(
            value,
            format!("has {digits} fraction digits but the column keeps {fsp} (fsp)"),
        ));
    }
    Ok(fsp)
}

/// Fraction bytes for fsp 1-2 / 3-4 / 5-6 (1, 2 or 3 bytes), big-endian.
fn frac_bytes(usec: u32, fsp: u8) -> Vec<u8> {
    match fsp {
        0 => vec![],
        1 | 2 => vec![(usec / 10000) as u8],
        3 | 4 => be_bytes((usec / 100) as u128, 2),
        _ => be_bytes(usec as u128, 3),
    }
}

/// DATE: 3 bytes, (Y<<9 | M<<5 | D) with the sign bit flipped (2019-05-13 -> 8F C6 AD).
pub fn date(value: &str) -> Result<Vec<u8>, Error> {
    let (y, m, d) = parse_date(value.trim(), value)?;
    let v = (y << 9 | m << 5 | d) ^ 0x80_0000;
    Ok(be_bytes(v as u128, 3))
}

/// DATETIME(fsp) (5.6.4+/MariaDB): 5 bytes + 0/1/2/3 fraction bytes. `fsp` defaults to the
/// number of fraction digits given.
pub fn datetime(value: &str, fsp: Option<u8>) -> Result<Vec<u8>, Error> {
    let v = value.trim();
    let (d, t) = v
        .split_once([' ', 'T'])
        .ok_or_else(|| bad(value, "expected 'YYYY-MM-DD hh:mm:ss[.ffffff]'"))?;
    let (y, mo, day) = parse_date(d, value)?;
    let (h, mi, s, usec, digits) = parse_hms(t, value, 23)?;
    let fsp = fsp_of(fsp, digits, value)?;
    let ymd = ((y as u64 * 13 + mo as u64) << 5) | day as u64;
    let hms = (h as u64) << 12 | (mi as u64) << 6 | s as u64;
    let int = 0x80_0000_0000u64 + (ymd << 17 | hms);
    let mut out = be_bytes(int as u128, 5);
    out.extend(frac_bytes(usec, fsp));
    Ok(out)
}

/// A local date and time as plain fields, for time-zone conversion outside this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalTime {
    /// Year.
    pub year: i32,
    /// Month 1-12.
    pub month: u32,
    /// Day 1-31.
    pub day: u32,
    /// Hour.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
    /// Microseconds.
    pub usec: u32,
    /// Fraction digits given.
    pub digits: u8,
}

/// Parses 'YYYY-MM-DD hh:mm:ss[.ffffff]'.
pub fn parse_local(value: &str) -> Result<LocalTime, Error> {
    let v = value.trim();
    let (d, t) = v
        .split_once([' ', 'T'])
        .ok_or_else(|| bad(value, "expected 'YYYY-MM-DD hh:mm:ss[.ffffff]'"))?;
    let (y, m, day) = parse_date(d, value)?;
    let (h, mi, s, usec, digits) = parse_hms(t, value, 23)?;
    Ok(LocalTime {
        year: y as i32,
        month: m,
        day,
        hour: h,
        minute: mi,
        second: s,
        usec,
        digits,
    })
}

/// One UTC instant that a local date and time stands for in a time zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZonedInstant {
    /// Seconds since 1970-01-01 00:00:00 UTC.
    pub epoch: i64,
    /// The zone's UTC offset at that instant, as `+02:00`.
    pub offset: String,
}

/// The UTC instants a local date and time stands for in time zone `tz`, the way a TIMESTAMP
/// column converts it from the session time zone: `UTC`, a fixed offset such as `+05:30`
/// ([`parse_fixed_tz`]) or an IANA name such as `Europe/Berlin`, read from the system's zone
/// database (`/usr/share/zoneinfo`, Debian package tzdata).
///
/// One instant, or two, earlier first, for a time in the hour repeated when the clocks go
/// back (either may have been stored). A time the clocks skipped when they went forward
/// stands for none and is an error, as is a date that does not exist (`2019-02-30`).
pub fn instants_in_tz(t: &LocalTime, tz: &str) -> Result<Vec<ZonedInstant>, Error> {
    use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
    let value = format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    let zone = match parse_fixed_tz(tz) {
        Some(secs) => {
            TimeZone::fixed(
                Offset::from_seconds(secs as i32).map_err(|e| Error::TimeZone {
                    tz: tz.to_string(),
                    reason: e.to_string(),
                })?,
            )
        }
        None => jiff::tz::db().get(tz.trim()).map_err(|_| Error::TimeZone {
            tz: tz.to_string(),
            reason: "not a known time zone: use UTC, an offset like +02:00, or a name from \
                     /usr/share/zoneinfo such as Europe/Berlin (install the tzdata package if \
                     that directory is missing)"
                .to_string(),
        })?,
    };
    let field = |v: u32| i8::try_from(v).unwrap_or(i8::MAX);
    let dt = jiff::civil::DateTime::new(
        i16::try_from(t.year).unwrap_or(i16::MAX),
        field(t.month),
        field(t.day),
        field(t.hour),
        field(t.minute),
        field(t.second),
        0,
    )
    .map_err(|e| bad(&value, format!("not a date and time: {e}")))?;
    let at = |off: Offset| -> Result<ZonedInstant, Error> {
        let ts = off
            .to_timestamp(dt)
            .map_err(|e| bad(&value, format!("outside the range of times: {e}")))?;
        Ok(ZonedInstant {
            epoch: ts.as_second(),
            offset: format_offset(off.seconds()),
        })
    };
    match zone.to_ambiguous_timestamp(dt).offset() {
        AmbiguousOffset::Unambiguous { offset } => Ok(vec![at(offset)?]),
        AmbiguousOffset::Fold { before, after } => Ok(vec![at(before)?, at(after)?]),
        AmbiguousOffset::Gap { before, after } => Err(bad(
            &value,
            format!(
                "this local time does not exist in {tz}: the clocks went forward there from UTC \
                 offset {} to {}, so no TIMESTAMP holds it; give a time outside the gap, or the \
                 time in UTC",
                format_offset(before.seconds()),
                format_offset(after.seconds())
            ),
        )),
    }
}

/// `+02:00`, `-05:00`, `+05:45`, `+00:00` for seconds east of UTC.
fn format_offset(secs: i32) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    format!("{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
}

/// Parses a fixed time zone: `UTC`, `Z`, `+05:30`, `-0800`, `+2`. `None` for named zones.
pub fn parse_fixed_tz(tz: &str) -> Option<i64> {
    let tz = tz.trim();
    if tz.eq_ignore_ascii_case("utc") || tz == "Z" || tz.eq_ignore_ascii_case("gmt") {
        return Some(0);
    }
    let (sign, rest) = match tz.as_bytes().first()? {
        b'+' => (1, &tz[1..]),
        b'-' => (-1, &tz[1..]),
        _ => return None,
    };
    let (h, m) = if let Some((h, m)) = rest.split_once(':') {
        (h.parse::<i64>().ok()?, m.parse::<i64>().ok()?)
    } else if rest.len() == 4 && rest.is_ascii() {
        (rest[..2].parse().ok()?, rest[2..].parse().ok()?)
    } else {
        (rest.parse().ok()?, 0)
    };
    if !(0..=14).contains(&h) || !(0..=59).contains(&m) {
        return None;
    }
    Some(sign * (h * 3600 + m * 60))
}

/// TIMESTAMP(fsp): 4-byte big-endian seconds since the epoch (UTC) + fraction bytes.
pub fn timestamp(
    value: &str,
    epoch: i64,
    usec: u32,
    digits: u8,
    fsp: Option<u8>,
) -> Result<Vec<u8>, Error> {
    let fsp = fsp_of(fsp, digits, value)?;
    if !(0..=u32::MAX as i64).contains(&epoch) {
        return Err(bad(value, "outside the TIMESTAMP range (1970..2106 UTC)"));
    }
    let mut out = (epoch as u32).to_be_bytes().to_vec();
    out.extend(frac_bytes(usec, fsp));
    Ok(out)
}

/// TIME(fsp) (5.6+/MariaDB): 3 bytes 0x800000 +/- (h<<12 | m<<6 | s) + fraction bytes.
pub fn time(value: &str, fsp: Option<u8>) -> Result<Vec<u8>, Error> {
    let v = value.trim();
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v),
    };
    let (h, m, s, usec, digits) = parse_hms(body, value, 838)?;
    let fsp = fsp_of(fsp, digits, value)?;
    let hms = (h as i64) << 12 | (m as i64) << 6 | s as i64;
    // Packed value: int part << 24 | microseconds, negated for negative times.
    let mut packed = hms << 24 | usec as i64;
    if neg {
        packed = -packed;
    }
    let int_part = packed >> 24; // arithmetic shift: floor
    let frac_part = packed % (1 << 24); // C remainder: the sign of `packed`
    let out = match fsp {
        0 => be_bytes((0x80_0000 + int_part) as u128, 3),
        1 | 2 => {
            // The int part (floor) and a signed 1-byte fraction (hundredths, C remainder),
            // as my_time_packed_to_binary writes them.
            let (ip, fr) = (int_part, frac_part);
            let mut o = be_bytes((0x80_0000 + ip) as u128, 3);
            o.push((fr / 10000) as i8 as u8);
            o
        }
        3 | 4 => {
            let (ip, fr) = (int_part, frac_part);
            let mut o = be_bytes((0x80_0000 + ip) as u128, 3);
            o.extend(((fr / 100) as i16 as u16).to_be_bytes());
            o
        }
        _ => be_bytes((0x8000_0000_0000i64 + packed) as u128, 6),
    };
    Ok(out)
}

/// Bytes taken by 0..9 leftover DECIMAL digits.
pub const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/// DECIMAL(P,S): 9 digits per 4 bytes, leftover digits take {0,1,1,2,2,3,3,4,4,4} bytes, the
/// top bit flipped, every byte inverted for negatives (DECIMAL(10,2) 1234.56 -> 80 00 04 D2 38).
pub fn decimal(precision: u32, scale: u32, value: &str) -> Result<Vec<u8>, Error> {
    if precision == 0 || precision > 65 || scale > 38 || scale > precision {
        return Err(bad(
            value,
            format!(
                "DECIMAL({precision},{scale}) is not a valid type (1 <= P <= 65, S <= 38, S <= P)"
            ),
        ));
    }
    let v = value.trim();
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let (ip, fp) = body.split_once('.').unwrap_or((body, ""));
    if (ip.is_empty() && fp.is_empty()) || !ip.bytes().chain(fp.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(bad(value, "not a decimal number"));
    }
    let ip = ip.trim_start_matches('0');
    let intg = (precision - scale) as usize;
    let frac = scale as usize;
    if ip.len() > intg {
        return Err(bad(
            value,
            format!(
                "has {} integer digits but DECIMAL({precision},{scale}) keeps {intg}",
                ip.len()
            ),
        ));
    }
    let fp_trim = fp.trim_end_matches('0');
    if fp_trim.len() > frac {
        return Err(bad(
            value,
            format!(
                "has {} fraction digits but DECIMAL({precision},{scale}) keeps {frac}",
                fp_trim.len()
            ),
        ));
    }
    let int_digits = format!("{ip:0>intg$}");
    let frac_digits = format!("{fp_trim:0<frac$}");
    let mut out = Vec::new();
    let group = |digits: &str, out: &mut Vec<u8>| {
        let n = DIG2BYTES[digits.len().min(9)];
        let val: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().unwrap_or(0)
        };
        let width = if digits.len() == 9 { 4 } else { n };
        out.extend(be_bytes(val, width));
    };
    let lead = intg % 9;
    group(&int_digits[..lead], &mut out);
    for i in 0..intg / 9 {
        group(&int_digits[lead + i * 9..lead + i * 9 + 9], &mut out);
    }
    for i in 0..frac / 9 {
        group(&frac_digits[i * 9..i * 9 + 9], &mut out);
    }
    group(&frac_digits[frac / 9 * 9..], &mut out);
    let is_zero = int_digits
        .bytes()
        .chain(frac_digits.bytes())
        .all(|b| b == b'0');
    if neg && !is_zero {
        for b in &mut out {
            *b = !*b;
        }
    }
    if let Some(first) = out.first_mut() {
        *first ^= 0x80;
    }
    Ok(out)
}

/// Encodes text in a column character set: `utf8mb4`/`utf8mb3`/`utf8`, `latin1`, `ascii`,
/// `binary`.
pub fn charset_bytes(value: &str, charset: &str) -> Result<Vec<u8>, Error> {
    match charset.to_ascii_lowercase().as_str() {
        "utf8mb4" | "utf8" | "utf8mb3" | "binary" => {
            if charset.eq_ignore_ascii_case("utf8mb3") && value.chars().any(|c| c as u32 > 0xFFFF) {
                return Err(bad(value, "has characters outside utf8mb3 (the BMP)"));
            }
            Ok(value.as_bytes().to_vec())
        }
        "latin1" => value
            .chars()
            .map(|c| {
                u8::try_from(c as u32)
                    .map_err(|_| bad(value, format!("character {c:?} has no latin1 byte")))
            })
            .collect(),
        "ascii" => {
            if value.is_ascii() {
                Ok(value.as_bytes().to_vec())
            } else {
                Err(bad(value, "is not ASCII"))
            }
        }
        other => Err(bad(
            value,
            format!("unknown charset {other:?} (use utf8mb4, utf8mb3, latin1, ascii or binary)"),
        )),
    }
}

/// CHAR(N): the value in its charset, padded with spaces to N bytes (how COMPACT/DYNAMIC
/// store CHAR, for multi-byte charsets too).
pub fn char_n(n: usize, value: &str, charset: &str) -> Result<Vec<u8>, Error> {
    if n > 255 {
        return Err(bad(
            value,
            format!("CHAR({n}) is not a valid type: CHAR holds at most 255 characters"),
        ));
    }
    let chars = value.chars().count();
    if chars > n {
        return Err(bad(
            value,
            format!("has {chars} characters, more than CHAR({n}) holds"),
        ));
    }
    let mut b = charset_bytes(value, charset)?;
    while b.len() < n {
        b.push(b' ');
    }
    Ok(b)
}

/// Formats bytes as spaced hex (`B1 EB 1F 9C`).
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_from_the_domain_note() {
        assert_eq!(
            hex(&int(IntType::Int, false, "837492636").unwrap()),
            "B1 EB 1F 9C"
        );
        assert_eq!(hex(&int(IntType::Int, false, "-1").unwrap()), "7F FF FF FF");
        assert_eq!(hex(&int(IntType::Small, false, "7").unwrap()), "80 07");
        assert_eq!(hex(&int(IntType::Tiny, false, "-5").unwrap()), "7B");
        assert_eq!(
            hex(&int(IntType::Medium, false, "-100000").unwrap()),
            "7E 79 60"
        );
        assert_eq!(
            hex(&int(IntType::Int, true, "4000000000").unwrap()),
            "EE 6B 28 00"
        );
        assert!(int(IntType::Tiny, false, "128").is_err());
        assert!(int(IntType::Int, true, "-1").is_err());
        assert!(int(IntType::Int, false, "x").is_err());
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(hex(&date("2019-05-13").unwrap()), "8F C6 AD");
        assert_eq!(
            hex(&datetime("2019-05-13 14:35:07", None).unwrap()),
            "99 A3 1A E8 C7"
        );
        assert_eq!(
            datetime("2019-05-13 14:35:07.123456", None).unwrap().len(),
            8
        );
        assert_eq!(hex(&time("00:00:00", None).unwrap()), "80 00 00");
        assert_eq!(hex(&time("-00:00:01.5", Some(1)).unwrap()), "7F FF FE CE");
        assert_eq!(hex(&time("-12:34:56", None).unwrap()), "7F 37 48");
        assert!(datetime("2019-05-13 14:35:07.1234", Some(2)).is_err());
        assert!(date("2019-13-01").is_err());
    }

    #[test]
    fn timestamp_epoch() {
        let t = parse_local("2019-05-13 12:00:00").unwrap();
        let epochs = |tz: &str| -> Vec<(i64, String)> {
            instants_in_tz(&t, tz)
                .unwrap()
                .into_iter()
                .map(|i| (i.epoch, i.offset))
                .collect()
        };
        let one = |e: i64, o: &str| vec![(e, o.to_string())];
        assert_eq!(epochs("UTC"), one(1_557_748_800, "+00:00"));
        assert_eq!(epochs("Z"), one(1_557_748_800, "+00:00"));
        assert_eq!(epochs("+02:00"), one(1_557_748_800 - 7200, "+02:00"));
        assert_eq!(epochs("+05:30"), one(1_557_748_800 - 19800, "+05:30"));
        assert_eq!(epochs("-0800"), one(1_557_748_800 + 28800, "-08:00"));
        assert_eq!(epochs("+2"), one(1_557_748_800 - 7200, "+02:00"));
        // Named zones: summer time in Berlin, Kolkata's half hour, Kathmandu's 45 minutes,
        // and the POSIX-style Etc/GMT+2 whose sign is inverted (two hours west of UTC).
        assert_eq!(epochs("Europe/Berlin"), one(1_557_748_800 - 7200, "+02:00"));
        assert_eq!(epochs("Asia/Kolkata"), one(1_557_748_800 - 19800, "+05:30"));
        assert_eq!(
            epochs("Asia/Kathmandu"),
            one(1_557_748_800 - 20700, "+05:45")
        );
        assert_eq!(epochs("Etc/GMT+2"), one(1_557_748_800 + 7200, "-02:00"));
        assert_eq!(
            epochs("America/New_York"),
            one(1_557_748_800 + 14400, "-04:00")
        );
        assert_eq!(
            epochs("Australia/Sydney"),
            one(1_557_748_800 - 36000, "+10:00")
        );
        assert_eq!(parse_fixed_tz("+05:30"), Some(19800));
        assert_eq!(parse_fixed_tz("-0800"), Some(-28800));
        assert_eq!(parse_fixed_tz("Europe/Berlin"), None);
    }

    /// Seconds since the epoch of a UTC date and time written `YYYY-MM-DD hh:mm:ss`.
    fn utc(s: &str) -> i64 {
        instants_in_tz(&parse_local(s).unwrap(), "UTC").unwrap()[0].epoch
    }

    fn instants(local: &str, tz: &str) -> Result<Vec<(i64, String)>, String> {
        instants_in_tz(&parse_local(local).unwrap(), tz)
            .map(|v| v.into_iter().map(|i| (i.epoch, i.offset)).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn daylight_saving_edges() {
        let at = |u: &str, o: &str| (utc(u), o.to_string());
        // Berlin 2019: forward at 02:00 CET on 31 March, back at 03:00 CEST on 27 October.
        let b = "Europe/Berlin";
        assert_eq!(
            instants("2019-03-31 01:59:59", b),
            Ok(vec![at("2019-03-31 00:59:59", "+01:00")])
        );
        assert_eq!(
            instants("2019-03-31 03:00:00", b),
            Ok(vec![at("2019-03-31 01:00:00", "+02:00")])
        );
        for gap in [
            "2019-03-31 02:00:00",
            "2019-03-31 02:30:00",
            "2019-03-31 02:59:59",
        ] {
            let e = instants(gap, b).unwrap_err();
            assert!(e.contains("does not exist in Europe/Berlin"), "{gap}: {e}");
            assert!(e.contains("+01:00 to +02:00"), "{gap}: {e}");
        }
        assert_eq!(
            instants("2019-10-27 01:59:59", b),
            Ok(vec![at("2019-10-26 23:59:59", "+02:00")])
        );
        // The repeated hour: both instants, earlier (summer time) first.
        assert_eq!(
            instants("2019-10-27 02:00:00", b),
            Ok(vec![
                at("2019-10-27 00:00:00", "+02:00"),
                at("2019-10-27 01:00:00", "+01:00")
            ])
        );
        assert_eq!(
            instants("2019-10-27 02:59:59", b),
            Ok(vec![
                at("2019-10-27 00:59:59", "+02:00"),
                at("2019-10-27 01:59:59", "+01:00")
            ])
        );
        assert_eq!(
            instants("2019-10-27 03:00:00", b),
            Ok(vec![at("2019-10-27 02:00:00", "+01:00")])
        );
        // New York 2019: forward on 10 March at 02:00, back on 3 November at 02:00.
        let ny = "America/New_York";
        assert!(instants("2019-03-10 02:30:00", ny).is_err());
        assert_eq!(
            instants("2019-11-03 01:30:00", ny),
            Ok(vec![
                at("2019-11-03 05:30:00", "-04:00"),
                at("2019-11-03 06:30:00", "-05:00")
            ])
        );
        // Southern hemisphere: Sydney goes back on 7 April 2019 at 03:00 AEDT.
        assert_eq!(
            instants("2019-04-07 02:30:00", "Australia/Sydney"),
            Ok(vec![
                at("2019-04-06 15:30:00", "+11:00"),
                at("2019-04-06 16:30:00", "+10:00")
            ])
        );
        // Lord Howe moves by half an hour: 01:30-02:00 repeats on 7 April 2019.
        assert_eq!(
            instants("2019-04-07 01:45:00", "Australia/Lord_Howe"),
            Ok(vec![
                at("2019-04-06 14:45:00", "+11:00"),
                at("2019-04-06 15:15:00", "+10:30")
            ])
        );
        // Fixed offsets have no gaps nor folds.
        assert_eq!(
            instants("2019-03-31 02:30:00", "+01:00"),
            Ok(vec![at("2019-03-31 01:30:00", "+01:00")])
        );
    }

    #[test]
    fn bad_zones_and_dates_are_errors() {
        for tz in ["Mars/Olympus", "../../etc/passwd", "Europe/", "", "+25:00"] {
            let e = instants("2019-05-13 12:00:00", tz).unwrap_err();
            assert!(e.contains("time zone"), "{tz:?}: {e}");
        }
        // 30 February does not exist; the old day count rolled it over to 2 March.
        let e = instants("2019-02-30 10:00:00", "UTC").unwrap_err();
        assert!(e.contains("not a date"), "{e}");
        assert!(instants("2019-02-29 10:00:00", "Europe/Berlin").is_err());
        assert_eq!(
            instants("2020-02-29 00:00:00", "UTC"),
            Ok(vec![(1_582_934_400, "+00:00".into())])
        );
    }

    #[test]
    fn decimals() {
        assert_eq!(hex(&decimal(10, 2, "1234.56").unwrap()), "80 00 04 D2 38");
        assert_eq!(hex(&decimal(10, 2, "-1234.56").unwrap()), "7F FF FB 2D C7");
        assert!(decimal(10, 2, "1.234").is_err());
        assert!(decimal(4, 2, "123").is_err());
        assert!(decimal(10, 2, "abc").is_err());
    }

    #[test]
    fn strings() {
        assert_eq!(char_n(5, "ab", "latin1").unwrap(), b"ab   ");
        assert_eq!(charset_bytes("Köln", "latin1").unwrap(), b"K\xf6ln");
        assert!(charset_bytes("\u{1F600}", "latin1").is_err());
        assert!(char_n(2, "abc", "utf8mb4").is_err());
    }
}
