//! Inputs that crashed the grep_pattern fuzz target (`fuzz/`, `scripts/fuzz.sh`), kept as
//! regression tests. Both are values a user types on the `dbio innodb grep` command line.

use dbio_innodb::encode;

/// `--tz '+1é1'`: four bytes after the sign, so the `+HHMM` form sliced the text at byte 2,
/// inside the 'é' (a panic). Any non-ASCII zone is simply not a fixed offset.
#[test]
fn non_ascii_fixed_tz_is_not_a_panic() {
    for tz in ["+1é1", "-\u{FFFD}1", "+é", "-1:é", "+ÉÉ"] {
        assert_eq!(encode::parse_fixed_tz(tz), None, "{tz}");
    }
    assert_eq!(encode::parse_fixed_tz("+0530"), Some(5 * 3600 + 30 * 60));
    assert_eq!(encode::parse_fixed_tz("-08:00"), Some(-8 * 3600));
}

/// `--char 99999999999999:a`: the value was padded with spaces to N bytes, so a huge N
/// aborted on a failed allocation. CHAR(N) holds at most 255 characters: a larger N is an
/// error naming it.
#[test]
fn char_length_beyond_255_is_an_error_not_an_abort() {
    for n in [256usize, 1 << 40, usize::MAX] {
        let e = encode::char_n(n, "a", "utf8mb4").unwrap_err().to_string();
        assert!(e.contains(&format!("CHAR({n})")), "{e}");
        assert!(e.contains("255"), "{e}");
    }
    assert_eq!(encode::char_n(255, "a", "latin1").unwrap().len(), 255);
}

/// `--tz '--4444444444444444'`: a sign, then a negative hour count that passed the `<= 14`
/// check and overflowed `h * 3600`. Hours and minutes are unsigned: not a fixed offset.
#[test]
fn signed_hours_in_fixed_tz_are_not_an_overflow() {
    for tz in [
        "--4444444444444444",
        "+-5",
        "-1:-5",
        "+-9223372036854775808:00",
    ] {
        assert_eq!(encode::parse_fixed_tz(tz), None, "{tz}");
    }
    assert_eq!(encode::parse_fixed_tz("+14"), Some(14 * 3600));
}
