//! `--window 01:00-05:00`: the local times of day when the job may run chunks. A window whose
//! end is before its start wraps past midnight (`22:00-04:00`). Pure code on jiff's civil
//! time; the caller passes the current local time.

use jiff::civil::Time;

/// A daily window `[start, end)` in local time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Start of the window (inclusive).
    pub start: Time,
    /// End of the window (exclusive).
    pub end: Time,
}

/// A window that does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("window '{0}' is not HH:MM-HH:MM (e.g. 01:00-05:00; 22:00-04:00 wraps past midnight) with two different times")]
pub struct WindowError(pub String);

fn time(s: &str) -> Option<Time> {
    let (h, m) = s.trim().split_once(':')?;
    let (h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    Time::new(h, m, 0, 0).ok()
}

impl Window {
    /// Parses `HH:MM-HH:MM`.
    pub fn parse(s: &str) -> Result<Window, WindowError> {
        let err = || WindowError(s.to_string());
        let (a, b) = s.split_once('-').ok_or_else(err)?;
        let (start, end) = (time(a).ok_or_else(err)?, time(b).ok_or_else(err)?);
        if start == end {
            return Err(err());
        }
        Ok(Window { start, end })
    }

    /// Whether `now` (local time of day) is inside the window.
    pub fn contains(&self, now: Time) -> bool {
        if self.start < self.end {
            self.start <= now && now < self.end
        } else {
            now >= self.start || now < self.end
        }
    }
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-{}",
            self.start.strftime("%H:%M"),
            self.end.strftime("%H:%M")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::time;

    #[test]
    fn parses_and_contains() {
        let w = Window::parse("01:00-05:30").unwrap();
        assert_eq!(w.to_string(), "01:00-05:30");
        assert!(!w.contains(time(0, 59, 59, 0)));
        assert!(w.contains(time(1, 0, 0, 0)));
        assert!(w.contains(time(5, 29, 59, 0)));
        assert!(!w.contains(time(5, 30, 0, 0)));
    }

    #[test]
    fn wraps_past_midnight() {
        let w = Window::parse("22:00-04:00").unwrap();
        assert!(w.contains(time(23, 0, 0, 0)));
        assert!(w.contains(time(0, 0, 0, 0)));
        assert!(w.contains(time(3, 59, 0, 0)));
        assert!(!w.contains(time(4, 0, 0, 0)));
        assert!(!w.contains(time(21, 59, 0, 0)));
    }

    #[test]
    fn refuses_bad_windows() {
        for bad in [
            "",
            "01:00",
            "1-5",
            "25:00-01:00",
            "01:00-01:00",
            "01:60-02:00",
            "a:b-c:d",
        ] {
            assert!(Window::parse(bad).is_err(), "{bad}");
        }
    }
}
