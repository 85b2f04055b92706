//! Stored column bytes turned back into values, printed as MariaDB prints them: the inverse
//! of [`crate::encode`] (whose tests round-trip through these functions).

use super::def::{Charset, ColType};
use crate::encode::{IntType, DIG2BYTES};

/// A decoded value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A number, printed bare in SQL and as a JSON number (integers, FLOAT, DOUBLE).
    Number(String),
    /// DECIMAL: bare in SQL, a JSON string (no precision lost).
    Decimal(String),
    /// Text (character columns converted to UTF-8, dates and times, ENUM, SET).
    Text(String),
    /// Bytes (BINARY, VARBINARY, BLOB, BIT).
    Bytes(Vec<u8>),
}

/// Why stored bytes are not a value of the column's type (the plausibility check).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bad {
    /// The byte count does not fit the type.
    Length,
    /// A number, date or time out of the type's range.
    Range,
    /// Bytes that are not text in the column's character set.
    Charset,
}

/// Appends `v` with at least `width` digits (zero-padded).
pub(super) fn push_num(s: &mut String, v: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    let d = b.format(v);
    for _ in d.len()..width {
        s.push('0');
    }
    s.push_str(d);
}

pub(super) fn be(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, &x| a << 8 | x as u64)
}

/// Signed or unsigned integer: big-endian, sign bit flipped for signed.
pub fn int(b: &[u8], ty: IntType, unsigned: bool) -> Result<String, Bad> {
    if b.len() != ty.width() {
        return Err(Bad::Length);
    }
    let v = be(b);
    let mut buf = itoa::Buffer::new();
    if unsigned {
        return Ok(buf.format(v).to_string());
    }
    let bits = 8 * b.len() as u32;
    let flipped = v ^ (1u64 << (bits - 1));
    // Sign-extend from `bits`.
    let shift = 64 - bits;
    Ok(buf.format(((flipped << shift) as i64) >> shift).to_string())
}

/// DECIMAL(P,S): the inverse of [`crate::encode::decimal`].
pub fn decimal(b: &[u8], precision: u32, scale: u32) -> Result<String, Bad> {
    if b.len() != super::def::decimal_bytes(precision, scale) || b.is_empty() {
        return Err(Bad::Length);
    }
    let neg = b[0] & 0x80 == 0;
    let mut v = b.to_vec();
    v[0] ^= 0x80;
    if neg {
        for x in &mut v {
            *x = !*x;
        }
    }
    let intg = (precision - scale) as usize;
    let frac = scale as usize;
    let mut at = 0usize;
    let mut take = |digits: usize, out: &mut String| -> Result<(), Bad> {
        if digits == 0 {
            return Ok(());
        }
        let n = if digits == 9 { 4 } else { DIG2BYTES[digits] };
        let g = be(&v[at..at + n]);
        at += n;
        if g >= 10u64.pow(digits as u32) {
            return Err(Bad::Range);
        }
        push_num(out, g, digits);
        Ok(())
    };
    let mut ip = String::with_capacity(intg);
    take(intg % 9, &mut ip)?;
    for _ in 0..intg / 9 {
        take(9, &mut ip)?;
    }
    let mut fp = String::with_capacity(frac);
    for _ in 0..frac / 9 {
        take(9, &mut fp)?;
    }
    take(frac % 9, &mut fp)?;
    let ip = ip.trim_start_matches('0');
    let ip = if ip.is_empty() { "0" } else { ip };
    let zero = ip == "0" && fp.bytes().all(|c| c == b'0');
    let mut s = String::with_capacity(ip.len() + fp.len() + 2);
    if neg && !zero {
        s.push('-');
    }
    s.push_str(ip);
    if !fp.is_empty() {
        s.push('.');
        s.push_str(&fp);
    }
    Ok(s)
}

/// Digits and decimal-point position (`0.0123` -> ("123", -1)) of a finite non-zero value:
/// the shortest that reads back (`sig` None) or rounded to `sig` significant digits.
fn digits(v: f64, sig: Option<usize>) -> (String, i32) {
    let e = match sig {
        None => format!("{:e}", v.abs()),
        Some(n) => format!("{:.*e}", n - 1, v.abs()),
    };
    let (m, x) = e.split_once('e').unwrap_or((&e, "0"));
    let mut d: String = m.chars().filter(|c| *c != '.').collect();
    while d.len() > 1 && d.ends_with('0') {
        d.pop();
    }
    (d, x.parse::<i32>().unwrap_or(0) + 1)
}

/// A float as MariaDB's my_gcvt prints it: `f` format unless the decimal point is more than
/// 15 places right (and no digits follow it) or 14 places left of the digits, else `1.5e38`.
fn gcvt(v: f64, sig: Option<usize>) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let (d, decpt) = digits(v, sig);
    let len = d.len() as i32;
    let mut s = String::new();
    if v < 0.0 {
        s.push('-');
    }
    const MAX_DECPT_F: i32 = 15; // DBL_DIG
    if decpt > -MAX_DECPT_F && (decpt <= MAX_DECPT_F || len > decpt) {
        if decpt <= 0 {
            s.push_str("0.");
            s.extend(std::iter::repeat_n('0', (-decpt) as usize));
            s.push_str(&d);
        } else if decpt < len {
            s.push_str(&d[..decpt as usize]);
            s.push('.');
            s.push_str(&d[decpt as usize..]);
        } else {
            s.push_str(&d);
            s.extend(std::iter::repeat_n('0', (decpt - len) as usize));
        }
    } else {
        s.push_str(&d[..1]);
        if len > 1 {
            s.push('.');
            s.push_str(&d[1..]);
        }
        s.push('e');
        s.push_str(&(decpt - 1).to_string());
    }
    s
}

/// FLOAT: 4 bytes little-endian; 6 significant digits (FLT_DIG) or D decimals.
pub fn float(b: &[u8], decimals: Option<u8>) -> Result<String, Bad> {
    let a: [u8; 4] = b.try_into().map_err(|_| Bad::Length)?;
    let v = f32::from_le_bytes(a) as f64;
    if !v.is_finite() {
        return Err(Bad::Range);
    }
    Ok(match decimals {
        Some(d) => format!("{:.*}", d as usize, v),
        None => gcvt(v, Some(6)),
    })
}

/// DOUBLE: 8 bytes little-endian; the shortest digits that read back, or D decimals.
pub fn double(b: &[u8], decimals: Option<u8>) -> Result<String, Bad> {
    let a: [u8; 8] = b.try_into().map_err(|_| Bad::Length)?;
    let v = f64::from_le_bytes(a);
    if !v.is_finite() {
        return Err(Bad::Range);
    }
    Ok(match decimals {
        Some(d) => format!("{:.*}", d as usize, v),
        None => gcvt(v, None),
    })
}

/// Fraction bytes (1-3, big-endian) as microseconds.
fn frac_usec(b: &[u8], fsp: u8) -> Result<u32, Bad> {
    let v = be(b) as u32;
    let us = match fsp {
        0 => 0,
        1 | 2 => v * 10000,
        3 | 4 => v * 100,
        _ => v,
    };
    if us > 999_999 {
        return Err(Bad::Range);
    }
    Ok(us)
}

pub(super) fn push_frac(s: &mut String, usec: u32, fsp: u8) {
    if fsp > 0 {
        s.push('.');
        push_num(s, (usec / 10u32.pow(6 - fsp as u32)) as u64, fsp as usize);
    }
}

pub(super) fn push_ymd(s: &mut String, y: u64, m: u64, d: u64) {
    push_num(s, y, 4);
    s.push('-');
    push_num(s, m, 2);
    s.push('-');
    push_num(s, d, 2);
}

pub(super) fn push_hms(s: &mut String, h: u64, m: u64, sec: u64) {
    push_num(s, h, 2);
    s.push(':');
    push_num(s, m, 2);
    s.push(':');
    push_num(s, sec, 2);
}

/// DATE: 3 bytes, Y<<9 | M<<5 | D, sign bit flipped.
pub fn date(b: &[u8]) -> Result<String, Bad> {
    if b.len() != 3 {
        return Err(Bad::Length);
    }
    let v = be(b) ^ 0x80_0000;
    let (y, m, d) = (v >> 9, (v >> 5) & 15, v & 31);
    if y > 9999 || m > 12 {
        return Err(Bad::Range);
    }
    let mut s = String::with_capacity(10);
    push_ymd(&mut s, y, m, d);
    Ok(s)
}

/// DATETIME(fsp): 5 bytes + fraction.
pub fn datetime(b: &[u8], fsp: u8) -> Result<String, Bad> {
    if b.len() != 5 + super::def::frac_len(fsp) {
        return Err(Bad::Length);
    }
    let v = be(&b[..5]);
    if v < 0x80_0000_0000 {
        return Err(Bad::Range);
    }
    let v = v - 0x80_0000_0000;
    let ymd = v >> 17;
    let hms = v & 0x1FFFF;
    let ym = ymd >> 5;
    let (y, mo, d) = (ym / 13, ym % 13, ymd & 31);
    let (h, mi, s) = (hms >> 12, (hms >> 6) & 63, hms & 63);
    if y > 9999 || h > 23 || mi > 59 || s > 59 {
        return Err(Bad::Range);
    }
    let mut out = String::with_capacity(26);
    push_ymd(&mut out, y, mo, d);
    out.push(' ');
    push_hms(&mut out, h, mi, s);
    push_frac(&mut out, frac_usec(&b[5..], fsp)?, fsp);
    Ok(out)
}

/// TIMESTAMP(fsp): 4-byte UTC epoch + fraction, printed in UTC (0 is the zero timestamp).
pub fn timestamp(b: &[u8], fsp: u8) -> Result<String, Bad> {
    if b.len() != 4 + super::def::frac_len(fsp) {
        return Err(Bad::Length);
    }
    let secs = be(&b[..4]) as i64;
    let usec = frac_usec(&b[4..], fsp)?;
    let mut out = if secs == 0 {
        "0000-00-00 00:00:00".to_string()
    } else {
        let t = jiff::Timestamp::from_second(secs).map_err(|_| Bad::Range)?;
        let dt = t.to_zoned(jiff::tz::TimeZone::UTC).datetime();
        let mut o = String::with_capacity(26);
        push_ymd(&mut o, dt.year() as u64, dt.month() as u64, dt.day() as u64);
        o.push(' ');
        push_hms(
            &mut o,
            dt.hour() as u64,
            dt.minute() as u64,
            dt.second() as u64,
        );
        o
    };
    push_frac(&mut out, usec, fsp);
    Ok(out)
}

/// TIME(fsp): 3 bytes 0x800000 +/- (h<<12 | m<<6 | s) + fraction (my_time_packed_from_binary).
pub fn time(b: &[u8], fsp: u8) -> Result<String, Bad> {
    if b.len() != 3 + super::def::frac_len(fsp) {
        return Err(Bad::Length);
    }
    let packed: i64 = match fsp {
        0 => (be(b) as i64 - 0x80_0000) << 24,
        1 | 2 => {
            let mut ip = be(&b[..3]) as i64 - 0x80_0000;
            let mut fr = b[3] as i64;
            if ip < 0 && fr != 0 {
                ip += 1;
                fr -= 0x100;
            }
            (ip << 24) + fr * 10000
        }
        3 | 4 => {
            let mut ip = be(&b[..3]) as i64 - 0x80_0000;
            let mut fr = be(&b[3..5]) as i64;
            if ip < 0 && fr != 0 {
                ip += 1;
                fr -= 0x10000;
            }
            (ip << 24) + fr * 100
        }
        _ => be(b) as i64 - 0x8000_0000_0000,
    };
    let neg = packed < 0;
    let a = packed.unsigned_abs();
    let hms = a >> 24;
    let usec = (a % (1 << 24)) as u32;
    let (h, m, s) = (hms >> 12, (hms >> 6) & 63, hms & 63);
    if h > 838 || m > 59 || s > 59 || usec > 999_999 {
        return Err(Bad::Range);
    }
    let mut out = String::with_capacity(18);
    if neg {
        out.push('-');
    }
    push_hms(&mut out, h, m, s);
    push_frac(&mut out, usec, fsp);
    Ok(out)
}

/// YEAR: 1 byte, 0 = 0000, else 1900 + v.
pub fn year(b: &[u8]) -> Result<String, Bad> {
    match b {
        [0] => Ok("0000".into()),
        [v] => Ok((1900 + *v as u32).to_string()),
        _ => Err(Bad::Length),
    }
}

/// cp1252 (MariaDB's latin1) for 0x80..0x9F; the five unassigned bytes map to C1 controls.
const CP1252_HIGH: [u16; 32] = [
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
];

/// Text bytes in `cs` as UTF-8.
pub fn text(b: &[u8], cs: Charset) -> Result<String, Bad> {
    match cs {
        Charset::Latin1 => Ok(b
            .iter()
            .map(|&x| match x {
                0x80..=0x9F => {
                    char::from_u32(CP1252_HIGH[(x - 0x80) as usize] as u32).unwrap_or('?')
                }
                _ => x as char,
            })
            .collect()),
        Charset::Ascii => {
            if b.is_ascii() {
                Ok(String::from_utf8_lossy(b).into_owned())
            } else {
                Err(Bad::Charset)
            }
        }
        Charset::Utf8mb3 | Charset::Utf8mb4 => {
            let s = std::str::from_utf8(b).map_err(|_| Bad::Charset)?;
            if cs == Charset::Utf8mb3 && s.chars().any(|c| c as u32 > 0xFFFF) {
                return Err(Bad::Charset);
            }
            Ok(s.to_string())
        }
        Charset::Binary => Ok(String::from_utf8_lossy(b).into_owned()),
    }
}

/// The value of column type `ty` stored in `b` (a complete value: off-page parts already
/// joined).
pub fn decode(ty: &ColType, b: &[u8]) -> Result<Value, Bad> {
    Ok(match ty {
        ColType::Int { ty, unsigned } => Value::Number(int(b, *ty, *unsigned)?),
        ColType::Decimal { precision, scale } => Value::Decimal(decimal(b, *precision, *scale)?),
        ColType::Float { decimals } => Value::Number(float(b, *decimals)?),
        ColType::Double { decimals } => Value::Number(double(b, *decimals)?),
        ColType::Bit { bits } => {
            if b.len() != bits.div_ceil(8) as usize {
                return Err(Bad::Length);
            }
            Value::Bytes(b.to_vec())
        }
        ColType::Year => Value::Text(year(b)?),
        ColType::Date => Value::Text(date(b)?),
        ColType::Datetime { fsp } => Value::Text(datetime(b, *fsp)?),
        ColType::Timestamp { fsp } => Value::Text(timestamp(b, *fsp)?),
        ColType::Time { fsp } => Value::Text(time(b, *fsp)?),
        ColType::OldTemporal { old, fsp } => Value::Text(super::temporal::decode(*old, *fsp, b)?),
        ColType::Char { len, charset } => {
            if *charset == Charset::Binary {
                // BINARY(N): N bytes, zero-padded; the server keeps the padding.
                if b.len() != *len as usize {
                    return Err(Bad::Length);
                }
                Value::Bytes(b.to_vec())
            } else {
                if b.len() > (*len * charset.mbmaxlen()) as usize {
                    return Err(Bad::Length);
                }
                // CHAR is space-padded on disk; the server strips trailing spaces.
                let mut end = b.len();
                while end > 0 && b[end - 1] == b' ' {
                    end -= 1;
                }
                let s = text(&b[..end], *charset)?;
                if s.chars().count() > *len as usize {
                    return Err(Bad::Length);
                }
                Value::Text(s)
            }
        }
        ColType::Varchar { len, charset } => {
            if b.len() > (*len * charset.mbmaxlen()) as usize {
                return Err(Bad::Length);
            }
            if *charset == Charset::Binary {
                Value::Bytes(b.to_vec())
            } else {
                Value::Text(text(b, *charset)?)
            }
        }
        ColType::Blob { max_bytes, charset } => {
            if b.len() as u64 > *max_bytes {
                return Err(Bad::Length);
            }
            if *charset == Charset::Binary {
                Value::Bytes(b.to_vec())
            } else {
                Value::Text(text(b, *charset)?)
            }
        }
        ColType::Enum { values } => {
            let i = be(b) as usize;
            if b.len() != ty.fixed_len().unwrap_or(0) || i > values.len() {
                return Err(Bad::Range);
            }
            Value::Text(if i == 0 {
                String::new()
            } else {
                values[i - 1].clone()
            })
        }
        ColType::Set { values } => {
            if b.len() != ty.fixed_len().unwrap_or(0) {
                return Err(Bad::Length);
            }
            let bits = be(b);
            if values.len() < 64 && bits >> values.len() != 0 {
                return Err(Bad::Range);
            }
            let names: Vec<&str> = values
                .iter()
                .enumerate()
                .filter(|(i, _)| bits >> i & 1 == 1)
                .map(|(_, v)| v.as_str())
                .collect();
            Value::Text(names.join(","))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode;

    #[test]
    fn integers_round_trip_through_the_encoder() {
        for (ty, unsigned, v) in [
            (IntType::Tiny, false, "-128"),
            (IntType::Tiny, true, "255"),
            (IntType::Small, false, "7"),
            (IntType::Medium, false, "-100000"),
            (IntType::Medium, false, "-8388608"),
            (IntType::Medium, true, "16777215"),
            (IntType::Int, false, "837492636"),
            (IntType::Int, false, "-1"),
            (IntType::Big, false, "-9223372036854775808"),
            (IntType::Big, true, "18446744073709551615"),
        ] {
            let b = encode::int(ty, unsigned, v).unwrap();
            assert_eq!(int(&b, ty, unsigned).unwrap(), v, "{ty:?}");
        }
        // MEDIUMINT -100000 is 7E 79 60 (c_parser prints it wrongly).
        assert_eq!(
            int(&[0x7E, 0x79, 0x60], IntType::Medium, false).unwrap(),
            "-100000"
        );
    }

    #[test]
    fn decimals_round_trip() {
        for (p, s, v) in [
            (10, 2, "1234.56"),
            (10, 2, "-1234.56"),
            (10, 2, "0.00"),
            (30, 10, "-12345678901234567890.0123456789"),
            (30, 10, "0.0000000001"),
            (5, 0, "99999"),
            (
                65,
                30,
                "-12345678901234567890123456789012345.123456789012345678901234567890",
            ),
        ] {
            let b = encode::decimal(p, s, v).unwrap();
            assert_eq!(decimal(&b, p, s).unwrap(), v, "DECIMAL({p},{s})");
        }
        assert_eq!(
            decimal(&[0x80, 0, 4, 0xD2, 0x38], 10, 2).unwrap(),
            "1234.56"
        );
        // A digit group above 999999999 is garbage.
        assert_eq!(decimal(&[0xFF; 5], 10, 2), Err(Bad::Range));
    }

    #[test]
    fn temporal_round_trip_negative_time_and_fractions() {
        for v in ["2019-05-13", "1000-01-01", "9999-12-31", "0000-00-00"] {
            assert_eq!(date(&encode::date(v).unwrap()).unwrap(), v);
        }
        for (v, fsp) in [
            ("2019-05-13 14:35:07", 0),
            ("2019-05-13 14:35:07.123456", 6),
            ("2019-05-13 14:35:07.000001", 6),
            ("1970-01-01 00:00:00.5", 1),
            ("2019-05-13 14:35:07.123", 3),
        ] {
            let b = encode::datetime(v, Some(fsp)).unwrap();
            assert_eq!(datetime(&b, fsp).unwrap(), v);
        }
        for (v, fsp) in [
            ("-838:59:59", 0),
            ("838:59:59", 0),
            ("-12:34:56", 0),
            ("-00:00:00.5", 1),
            ("-00:00:01.0", 1),
            ("-12:34:56.789", 3),
            ("-01:02:03.000004", 6),
            ("-00:00:00.000001", 6),
            ("23:59:59.999", 3),
            ("00:00:00.1", 1),
        ] {
            let b = encode::time(v, Some(fsp)).unwrap();
            assert_eq!(time(&b, fsp).unwrap(), v, "TIME({fsp}) {:02X?}", b);
        }
        assert_eq!(
            timestamp(&[0x7F, 0xFF, 0xFF, 0xFF, 99], 2).unwrap(),
            "2038-01-19 03:14:07.99"
        );
        assert_eq!(timestamp(&[0, 0, 0, 0], 0).unwrap(), "0000-00-00 00:00:00");
        assert_eq!(year(&[255]).unwrap(), "2155");
        assert_eq!(year(&[0]).unwrap(), "0000");
        assert_eq!(date(&[0x8F, 0xC7, 0xC1]), Err(Bad::Range)); // month 14
    }

    #[test]
    #[allow(clippy::approx_constant)] // values MariaDB printed, not the constants
    fn floats_print_as_the_server_prints_them() {
        // Values and the text MariaDB 10.11 printed for them (SELECT of FLOAT and DOUBLE).
        let f = |v: f32| float(&v.to_le_bytes(), None).unwrap();
        let d = |v: f64| double(&v.to_le_bytes(), None).unwrap();
        assert_eq!(f(3.14159), "3.14159");
        assert_eq!(f(1e14), "100000000000000");
        assert_eq!(f(1e15), "1e15");
        assert_eq!(f(1.25e-7), "0.000000125");
        assert_eq!(f(1e-10), "0.0000000001");
        assert_eq!(f(1e-20), "1e-20");
        assert_eq!(f(1234567.0), "1234570");
        assert_eq!(f(16777217.0), "16777200");
        assert_eq!(f(1.5e38), "1.5e38");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(-0.5), "-0.5");
        assert_eq!(f(-1e30), "-1e30");
        assert_eq!(d(-2.718281828459045), "-2.718281828459045");
        assert_eq!(d(1e300), "1e300");
        assert_eq!(d(1e14), "100000000000000");
        assert_eq!(d(1e15), "1e15");
        assert_eq!(d(1e-7), "0.0000001");
        assert_eq!(d(1.2345e-30), "1.2345e-30");
        assert_eq!(d(123456789012345678.0), "1.2345678901234568e17");
        assert_eq!(d(123456789.125), "123456789.125");
        assert_eq!(
            float(&1234.567f32.to_le_bytes(), Some(3)).unwrap(),
            "1234.567"
        );
        assert_eq!(float(&0f32.to_le_bytes(), Some(3)).unwrap(), "0.000");
    }

    #[test]
    fn strings_enum_set() {
        let c = ColType::Char {
            len: 5,
            charset: Charset::Utf8mb4,
        };
        assert_eq!(decode(&c, b"ab   ").unwrap(), Value::Text("ab".into()));
        assert_eq!(decode(&c, &[0xFF, 0xFE]), Err(Bad::Charset));
        let l = ColType::Varchar {
            len: 20,
            charset: Charset::Latin1,
        };
        assert_eq!(
            decode(&l, b"K\xF6ln \x80").unwrap(),
            Value::Text("Köln €".into())
        );
        let e = ColType::Enum {
            values: vec!["a".into(), "b".into()],
        };
        assert_eq!(decode(&e, &[2]).unwrap(), Value::Text("b".into()));
        assert_eq!(decode(&e, &[3]), Err(Bad::Range));
        let s = ColType::Set {
            values: vec!["x".into(), "y".into(), "z".into()],
        };
        assert_eq!(decode(&s, &[5]).unwrap(), Value::Text("x,z".into()));
        assert_eq!(decode(&s, &[8]), Err(Bad::Range));
    }
}
