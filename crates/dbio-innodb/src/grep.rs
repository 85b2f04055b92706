//! Page-aware binary grep: hex patterns with `??` wildcards and `{n}` repeats, searched with
//! SIMD substring search (memchr's memmem) over large sequential reads on several threads;
//! each hit is then tied to the page and record that hold it.

use crate::page::{is_index_type, record_containing, records, system_records, Record, PAGE_SIZES};
use crate::scan::{detect_at, infer_index_size, read_full_at, FoundPage, Status};
use crate::Error;
use serde::Serialize;
use std::fs::File;

/// A byte pattern: `None` is a wildcard byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// How the user wrote it (`int:837492636`, `hex:80 07`).
    pub label: String,
    /// The bytes; `None` matches any byte.
    pub bytes: Vec<Option<u8>>,
}

impl Pattern {
    /// A literal byte string.
    pub fn literal(label: impl Into<String>, bytes: Vec<u8>) -> Pattern {
        Pattern {
            label: label.into(),
            bytes: bytes.into_iter().map(Some).collect(),
        }
    }

    /// Parses hex bytes with `??` wildcards and `{n}` repeats of the previous item:
    /// `80 07 ??{22} 80 03`, `B1EB1F9C`.
    pub fn parse_hex(s: &str) -> Result<Pattern, Error> {
        let err = |reason: &str| Error::Pattern {
            pattern: s.to_string(),
            reason: reason.to_string(),
        };
        let mut out: Vec<Option<u8>> = Vec::new();
        let mut last: Option<Option<u8>> = None;
        let c: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
        let mut i = 0;
        while i < c.len() {
            if c[i] == '{' {
                let end = c[i..]
                    .iter()
                    .position(|&x| x == '}')
                    .ok_or_else(|| err("'{' without '}'"))?;
                let n: usize = c[i + 1..i + end]
                    .iter()
                    .collect::<String>()
                    .parse()
                    .map_err(|_| err("{n} needs a number"))?;
                let item = last.ok_or_else(|| err("{n} must follow a byte or ??"))?;
                if n == 0 || n > 1 << 16 {
                    return Err(err("{n} must be 1..65536"));
                }
                for _ in 1..n {
                    out.push(item);
                }
                last = None;
                i += end + 1;
                continue;
            }
            if i + 1 >= c.len() {
                return Err(err("odd number of hex digits"));
            }
            let item = if c[i] == '?' && c[i + 1] == '?' {
                None
            } else {
                let h: String = c[i..i + 2].iter().collect();
                Some(
                    u8::from_str_radix(&h, 16)
                        .map_err(|_| err("expected hex digits, ?? or {n}"))?,
                )
            };
            out.push(item);
            last = Some(item);
            i += 2;
        }
        if out.is_empty() {
            return Err(err("empty"));
        }
        if out.iter().all(|b| b.is_none()) {
            return Err(err("needs at least one fixed byte"));
        }
        Ok(Pattern {
            label: format!("hex:{}", s.trim()),
            bytes: out,
        })
    }

    /// The pattern as spaced hex with `??` wildcards.
    pub fn to_hex(&self) -> String {
        self.bytes
            .iter()
            .map(|b| b.map_or("??".to_string(), |b| format!("{b:02X}")))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

struct Compiled {
    finder: memchr::memmem::Finder<'static>,
    anchor_off: usize,
    bytes: Vec<Option<u8>>,
}

fn compile(p: &Pattern) -> Compiled {
    // Anchor on the longest run of fixed bytes.
    let (mut best, mut best_len) = (0, 0);
    let mut i = 0;
    while i < p.bytes.len() {
        if p.bytes[i].is_some() {
            let j = p.bytes[i..].iter().take_while(|b| b.is_some()).count();
            if j > best_len {
                best = i;
                best_len = j;
            }
            i += j;
        } else {
            i += 1;
        }
    }
    let anchor: Vec<u8> = p.bytes[best..best + best_len]
        .iter()
        .map(|b| b.unwrap_or(0))
        .collect();
    Compiled {
        finder: memchr::memmem::Finder::new(&anchor).into_owned(),
        anchor_off: best,
        bytes: p.bytes.clone(),
    }
}

/// One raw hit: where a pattern matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RawHit {
    /// Source byte offset of the first byte of the match.
    pub offset: u64,
    /// Index of the pattern.
    pub pattern: usize,
}

fn search_buffer(buf: &[u8], base: u64, limit: usize, pats: &[Compiled], out: &mut Vec<RawHit>) {
    for (pi, c) in pats.iter().enumerate() {
        let plen = c.bytes.len();
        for a in c.finder.find_iter(buf) {
            if a < c.anchor_off {
                continue;
            }
            let st = a - c.anchor_off;
            if st >= limit {
                break;
            }
            if st + plen > buf.len() {
                continue;
            }
            let ok = c
                .bytes
                .iter()
                .zip(&buf[st..st + plen])
                .all(|(p, b)| p.is_none_or(|p| p == *b));
            if ok {
                out.push(RawHit {
                    offset: base + st as u64,
                    pattern: pi,
                });
            }
        }
    }
}

/// Searches a byte slice (offsets relative to it); for tests and small inputs.
pub fn search_slice(buf: &[u8], patterns: &[Pattern]) -> Vec<RawHit> {
    let pats: Vec<Compiled> = patterns.iter().map(compile).collect();
    let mut out = Vec::new();
    search_buffer(buf, 0, buf.len(), &pats, &mut out);
    out.sort();
    out
}

/// Bytes read per work unit.
pub const CHUNK: usize = 8 << 20;

/// Searches `len` bytes of `file` for every pattern with `threads` threads (a read-only
/// memory map when `use_mmap`, else large sequential reads); hits sorted by offset.
/// `progress(bytes_done)` is called after each chunk.
pub fn search_file(
    file: &File,
    len: u64,
    patterns: &[Pattern],
    threads: usize,
    use_mmap: bool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RawHit>, Error> {
    let pats: Vec<Compiled> = patterns.iter().map(compile).collect();
    let overlap = patterns.iter().map(|p| p.bytes.len()).max().unwrap_or(1) - 1;
    let init = Vec::new;
    let work = |hits: &mut Vec<RawHit>, c: crate::io::Chunk<'_>| {
        search_buffer(c.data, c.start, c.limit, &pats, hits);
    };
    let never = std::sync::atomic::AtomicBool::new(false);
    let states = crate::io::for_each_chunk(
        file, len, use_mmap, threads, CHUNK, overlap, &never, progress, &init, &work,
    )?;
    let mut hits: Vec<RawHit> = states.into_iter().flatten().collect();
    hits.sort();
    Ok(hits)
}

/// Where a hit sits: the page and record that hold it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The page holding the hit.
    pub page: FoundPage,
    /// Offset of the hit within the page.
    pub page_offset: u32,
    /// The record holding the hit (INDEX pages).
    pub record: Option<Record>,
}

/// Finds the page that holds source offset `offset` in `buf` (whose first byte is at source
/// offset `base`): tries page starts at every `step` at or before `offset`, nearest first.
pub fn locate_in(
    buf: &[u8],
    base: u64,
    offset: u64,
    step: usize,
    sizes: &[usize],
) -> Option<Location> {
    let step = step.max(1) as u64;
    let max = *sizes.iter().max().unwrap_or(&65536) as u64;
    let mut st = offset / step * step;
    let low = offset.saturating_sub(max - 1).max(base);
    while st >= low {
        if st < base {
            break;
        }
        let o = (st - base) as usize;
        let mut found = None;
        for &s in sizes {
            if st + s as u64 > offset {
                if let Some(p) = detect_at(buf, o, s, base) {
                    found = Some(p);
                    break;
                }
            }
        }
        if found.is_none() {
            found = crate::scan::detect_zip_at(buf, o, base)
                .filter(|p| st + p.page_size as u64 > offset);
        }
        if found.is_none() && o + 125 <= buf.len() {
            if let Some(fmt) = system_records(&buf[o..]) {
                if is_index_type(crate::page::be16(buf, o + 24)) {
                    if let Some(s) = infer_index_size(buf, o, fmt, sizes) {
                        if st + s as u64 > offset {
                            found = Some(crate::scan::classify(
                                &buf[o..o + s],
                                st,
                                Status::Heuristic,
                                None,
                            ));
                        }
                    }
                }
            }
        }
        if let Some(page) = found {
            let po = (offset - st) as usize;
            let record = if page.index.is_some() && !page.zip {
                let p = &buf[o..o + page.page_size as usize];
                record_containing(&records(p), po)
            } else {
                None
            };
            return Some(Location {
                page,
                page_offset: po as u32,
                record,
            });
        }
        if st < step {
            break;
        }
        st -= step;
    }
    None
}

/// Locates many hits (sorted by offset) in a file, reading one window per group of nearby hits.
///
/// With `use_mmap` the file is mapped read-only and nothing is copied.
pub fn locate_hits(
    file: &File,
    len: u64,
    hits: &[RawHit],
    step: usize,
    sizes: Option<&[usize]>,
    use_mmap: bool,
) -> Result<Vec<Option<Location>>, Error> {
    let sizes = sizes.unwrap_or(&PAGE_SIZES);
    if use_mmap && !hits.is_empty() {
        if let Some(m) = crate::io::Mapped::new(file, len) {
            let data = m.as_slice();
            return Ok(hits
                .iter()
                .map(|h| locate_in(data, 0, h.offset, step, sizes))
                .collect());
        }
    }
    let max = *sizes.iter().max().unwrap_or(&65536) as u64;
    let mut out = Vec::with_capacity(hits.len());
    let mut win: Vec<u8> = Vec::new();
    let mut win_base = 0u64;
    for (i, h) in hits.iter().enumerate() {
        let need_lo = h.offset.saturating_sub(max);
        let need_hi = (h.offset + max).min(len);
        if win.is_empty() || need_lo < win_base || need_hi > win_base + win.len() as u64 {
            win_base = need_lo / step.max(1) as u64 * step.max(1) as u64;
            // One read covers the run of following hits less than 256 KiB apart (up to
            // 8 MiB): dense hits share a window, an isolated hit reads 2 pages' worth.
            let mut ahead = h.offset;
            for x in &hits[i..] {
                if x.offset > ahead + (256 << 10) || x.offset > h.offset + (8 << 20) {
                    break;
                }
                ahead = x.offset;
            }
            let hi = (ahead + 2 * max).min(len).max(need_hi);
            win.resize((hi - win_base) as usize, 0);
            let n = read_full_at(file, &mut win, win_base)?;
            win.truncate(n);
        }
        out.push(locate_in(&win, win_base, h.offset, step, sizes));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_patterns() {
        let p = Pattern::parse_hex("80 07 ??{3} 80 03").unwrap();
        assert_eq!(p.to_hex(), "80 07 ?? ?? ?? 80 03");
        assert_eq!(Pattern::parse_hex("B1EB1F9C").unwrap().bytes.len(), 4);
        assert!(Pattern::parse_hex("8").is_err());
        assert!(Pattern::parse_hex("?? ??").is_err());
        assert!(Pattern::parse_hex("zz").is_err());
        assert!(Pattern::parse_hex("{3}").is_err());
    }

    #[test]
    fn hits_across_chunk_boundaries_are_found_once() {
        use std::io::Write;
        let mut data = vec![0u8; 2 * CHUNK + 4096];
        let pat = [0xB1, 0xEB, 0x1F, 0x9C];
        let at = [CHUNK - 2, CHUNK - 8, CHUNK + 8, 2 * CHUNK - 1, 5];
        for &a in &at {
            data[a..a + 4].copy_from_slice(&pat);
        }
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let p = Pattern::literal("int", pat.to_vec());
        for (threads, mmap) in [(1, false), (2, true), (3, false)] {
            let hits = search_file(
                &f,
                data.len() as u64,
                std::slice::from_ref(&p),
                threads,
                mmap,
                &|_| {},
            )
            .unwrap();
            let mut want: Vec<u64> = at.iter().map(|&a| a as u64).collect();
            want.sort();
            let got: Vec<u64> = hits.iter().map(|h| h.offset).collect();
            assert_eq!(got, want, "threads {threads} mmap {mmap}");
        }
    }

    #[test]
    fn wildcard_search() {
        let data = b"xx\x80\x07abc\x80\x03yy\x80\x07a\x80\x03";
        let p = Pattern::parse_hex("80 07 ??{3} 80 03").unwrap();
        let hits = search_slice(data, &[p]);
        assert_eq!(
            hits,
            vec![RawHit {
                offset: 2,
                pattern: 0
            }]
        );
    }
}
