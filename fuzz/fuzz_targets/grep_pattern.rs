//! `dbio innodb grep` patterns: the hex pattern language (`80 07 ??{22} 80 03`) and every
//! typed value encoder behind --int, --date, --datetime, --timestamp (with --tz), --time,
//! --decimal, --char and --varchar, then a search with the pattern in a small buffer.
//!
//! The first byte picks the encoder and its options; the rest is the value the user typed.
#![no_main]
use dbio_innodb::encode::{self, IntType};
use dbio_innodb::grep::{self, Pattern};
use libfuzzer_sys::fuzz_target;

const CHARSETS: [&str; 6] = ["utf8mb4", "utf8mb3", "latin1", "ascii", "binary", "koi8r"];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let v = String::from_utf8_lossy(rest);
    let v = v.as_ref();
    let fsp = match (sel >> 4) & 7 {
        7 => None,
        n => Some(n),
    };
    let bytes = match sel & 15 {
        0 | 1 => match Pattern::parse_hex(v) {
            Ok(p) => {
                let _ = p.to_hex();
                let hay: Vec<u8> = (0..=255u8)
                    .chain(p.bytes.iter().map(|b| b.unwrap_or(0)))
                    .collect();
                let _ = grep::search_slice(&hay, &[p]);
                return;
            }
            Err(_) => return,
        },
        2 => {
            let ty = [
                IntType::Tiny,
                IntType::Small,
                IntType::Medium,
                IntType::Int,
                IntType::Big,
            ][(sel >> 4) as usize % 5];
            let mut out = Vec::new();
            for part in v.split(',') {
                match encode::int(ty, sel & 0x80 != 0, part) {
                    Ok(b) => out.extend(b),
                    Err(_) => return,
                }
            }
            Ok(out)
        }
        3 => encode::date(v),
        4 => encode::datetime(v, fsp),
        5 => {
            // --timestamp VALUE --tz TZ: the zone is the first line, the value the rest.
            let (tz, val) = v.split_once('\n').unwrap_or(("UTC", v));
            let Ok(t) = encode::parse_local(val) else {
                return;
            };
            // Fixed offsets and zone names alike (names are read from /usr/share/zoneinfo).
            let Ok(instants) = encode::instants_in_tz(&t, tz) else {
                return;
            };
            instants
                .iter()
                .map(|i| encode::timestamp(val, i.epoch, t.usec, t.digits, fsp))
                .collect::<Result<Vec<_>, _>>()
                .map(|v| v.concat())
        }
        6 => encode::time(v, fsp),
        7 => {
            // --decimal P,S:VALUE
            let Some((ps, val)) = v.split_once(':') else {
                return;
            };
            let Some((p, s)) = ps.split_once(',') else {
                return;
            };
            let (Ok(p), Ok(s)) = (p.trim().parse::<u32>(), s.trim().parse::<u32>()) else {
                return;
            };
            encode::decimal(p, s, val)
        }
        8 => {
            // --char N:VALUE
            let Some((n, val)) = v.split_once(':') else {
                return;
            };
            let Ok(n) = n.trim().parse::<usize>() else {
                return;
            };
            encode::char_n(n, val, CHARSETS[(sel >> 4) as usize % CHARSETS.len()])
        }
        9 => encode::charset_bytes(v, CHARSETS[(sel >> 4) as usize % CHARSETS.len()]),
        10 => {
            let _ = encode::parse_fixed_tz(v);
            return;
        }
        _ => return,
    };
    if let Ok(b) = bytes {
        if !b.is_empty() {
            let _ = encode::hex(&b);
            let p = Pattern::literal("fuzz", b.clone());
            let _ = grep::search_slice(&b, &[p]);
        }
    }
});
