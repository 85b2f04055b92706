//! Page-aware binary grep: hex patterns with `??` wildcards and `{n}` repeats, searched with
//! SIMD substring search (memchr's memmem) over large sequential reads on several threads;
//! each hit is then tied to the page and record that hold it.

use crate::page::{is_index_type, record_containing, records, system_records, Record, PAGE_SIZES};
use crate::scan::{detect_at, infer_index_size, read_full_at, FoundPage, Status};
use crate::Error;
use serde::Serialize;
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};

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
/// Hits handed over at a time.
pub const BATCH: usize = 1024;
/// Batches a worker may have waiting for the writer (the reorder window).
const QUEUED: usize = 2;

/// One hit: where a pattern matched and, when asked for, the page and record that hold it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Source byte offset of the first byte of the match.
    pub offset: u64,
    /// Index of the pattern.
    pub pattern: usize,
    /// The page and record holding it (`None` when not located or not inside a page).
    pub location: Option<Location>,
}

/// How [`stream_file`] reads and what it adds to each hit.
pub struct StreamOptions<'a> {
    /// Worker threads.
    pub threads: usize,
    /// Map a regular file read-only instead of reading it with pread. Only for a file that
    /// nothing writes or truncates while it is searched: see [`crate::io`] (a truncation
    /// raises SIGBUS).
    pub use_mmap: bool,
    /// Tie each hit to its page: candidate page starts are multiples of `step` (as for a
    /// scan) and pages have one of `sizes`. `None`: raw hits only.
    pub locate: Option<(usize, &'a [usize])>,
    /// Once set (by a signal handler, say), the search stops after the chunks in progress.
    pub cancel: &'a AtomicBool,
}

/// How a [`stream_file`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamEnd {
    /// Bytes from the start of the source whose every hit was handed to the sink.
    pub bytes_searched: u64,
    /// The sink asked to stop, or `cancel` was set, before the end of the source.
    pub stopped: bool,
}

enum Msg {
    /// Hits in source order; the search is complete before the source offset given.
    Hits(Vec<Hit>, u64),
    /// The chunk ending at this source offset is done.
    End(u64),
    Failed(std::io::Error),
}

/// The match starts of one pattern in `data[r0..r1]`, in order.
struct PatIter<'a> {
    it: memchr::memmem::FindIter<'a, 'a>,
    c: &'a Compiled,
    data: &'a [u8],
    r0: usize,
    r1: usize,
}

impl Iterator for PatIter<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        let plen = self.c.bytes.len();
        loop {
            let st = self.r0 + self.it.next()?;
            if st >= self.r1 {
                return None;
            }
            if st + plen > self.data.len() {
                continue;
            }
            let ok = self
                .c
                .bytes
                .iter()
                .zip(&self.data[st..st + plen])
                .all(|(p, b)| p.is_none_or(|p| p == *b));
            if ok {
                return Some(st);
            }
        }
    }
}

/// Calls `f(start, pattern)` for every match starting in `data[r0..r1]`, in offset order
/// (then pattern order); stops when `f` returns false.
fn for_each_match(
    data: &[u8],
    r0: usize,
    r1: usize,
    pats: &[Compiled],
    f: &mut dyn FnMut(usize, usize) -> bool,
) {
    let mut iters: Vec<PatIter<'_>> = pats
        .iter()
        .map(|c| PatIter {
            it: c
                .finder
                .find_iter(&data[(r0 + c.anchor_off).min(data.len())..]),
            c,
            data,
            r0,
            r1,
        })
        .collect();
    let mut heads: Vec<Option<usize>> = iters.iter_mut().map(|i| i.next()).collect();
    loop {
        let Some((pi, st)) = heads
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.map(|h| (i, h)))
            .min_by_key(|&(i, h)| (h, i))
        else {
            return;
        };
        if !f(st, pi) {
            return;
        }
        heads[pi] = iters[pi].next();
    }
}

/// Searches `len` bytes of `file` for every pattern on `opts.threads` threads and hands the
/// hits to `sink` on the calling thread in source order, in batches of up to [`BATCH`];
/// `sink` returns false to stop. Memory is bounded whatever the number of hits: chunk `i`
/// goes to worker `i % threads`, which sends its batches over a channel of [`QUEUED`] slots
/// and waits while the writer is behind. `progress(bytes_done)` is called after each chunk.
pub fn stream_file(
    file: &File,
    len: u64,
    patterns: &[Pattern],
    opts: &StreamOptions<'_>,
    progress: &(dyn Fn(u64) + Sync),
    sink: &mut dyn FnMut(&[Hit]) -> bool,
) -> Result<StreamEnd, Error> {
    let pats: Vec<Compiled> = patterns.iter().map(compile).collect();
    let plen = patterns.iter().map(|p| p.bytes.len()).max().unwrap_or(1);
    // Locating a hit looks at the page starts up to 64 KiB before it and reads the page,
    // up to 64 KiB after it.
    let look = if opts.locate.is_some() {
        PAGE_SIZES[PAGE_SIZES.len() - 1]
    } else {
        0
    };
    let tail = look.max(plen - 1);
    let map = if opts.use_mmap {
        // SAFETY: not guaranteed here: `use_mmap` is the caller's word that nothing writes
        // or truncates the file while it is read (see crate::io for what happens otherwise).
        unsafe { crate::io::Mapped::new(file, len) }
    } else {
        None
    };
    let nchunks = len.div_ceil(CHUNK as u64);
    let threads = (opts.threads.max(1) as u64).min(nchunks.max(1)) as usize;
    let halt = AtomicBool::new(false);
    let worker = |w: usize, tx: std::sync::mpsc::SyncSender<Msg>| {
        let mut buf = Vec::new();
        let mut locator = opts.locate.map(|(step, sizes)| Locator::new(step, sizes));
        let mut ci = w as u64;
        while ci < nchunks {
            if halt.load(Ordering::Relaxed) || opts.cancel.load(Ordering::Relaxed) {
                return;
            }
            let start = ci * CHUNK as u64;
            let end = (start + CHUNK as u64).min(len);
            let (data, dbase): (&[u8], u64) = match &map {
                Some(m) => (m.as_slice(), 0),
                None => {
                    let rs = start.saturating_sub(look as u64);
                    let re = (end + tail as u64).min(len);
                    buf.resize((re - rs) as usize, 0);
                    match read_full_at(file, &mut buf, rs) {
                        Ok(n) => (&buf[..n], rs),
                        Err(e) => {
                            let _ = tx.send(Msg::Failed(e));
                            return;
                        }
                    }
                }
            };
            let (r0, r1) = ((start - dbase) as usize, (end - dbase) as usize);
            if let Some(l) = &mut locator {
                l.reset();
            }
            let mut batch = Vec::with_capacity(BATCH);
            let mut open = true;
            for_each_match(data, r0, r1.min(data.len()), &pats, &mut |st, pi| {
                let offset = dbase + st as u64;
                let location = locator.as_mut().and_then(|l| l.locate(data, dbase, offset));
                batch.push(Hit {
                    offset,
                    pattern: pi,
                    location,
                });
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    open = tx.send(Msg::Hits(full, offset + 1)).is_ok()
                        && !halt.load(Ordering::Relaxed)
                        && !opts.cancel.load(Ordering::Relaxed);
                }
                open
            });
            if !open
                || (!batch.is_empty() && tx.send(Msg::Hits(batch, end)).is_err())
                || tx.send(Msg::End(end)).is_err()
            {
                return;
            }
            if let Some(m) = &map {
                m.release(start as usize, end as usize);
            }
            ci += threads as u64;
        }
    };
    std::thread::scope(|sc| {
        let mut rxs = Vec::with_capacity(threads);
        for w in 0..threads {
            let (tx, rx) = std::sync::mpsc::sync_channel(QUEUED);
            rxs.push(rx);
            let worker = &worker;
            sc.spawn(move || worker(w, tx));
        }
        let mut searched = 0u64;
        let mut result = Ok(StreamEnd {
            bytes_searched: len,
            stopped: false,
        });
        'chunks: for ci in 0..nchunks {
            loop {
                match rxs[(ci % threads as u64) as usize].recv() {
                    Ok(Msg::Hits(v, to)) => {
                        if !sink(&v) {
                            result = Ok(StreamEnd {
                                bytes_searched: to,
                                stopped: true,
                            });
                            break 'chunks;
                        }
                        searched = to;
                    }
                    Ok(Msg::End(e)) => {
                        searched = e;
                        progress(e);
                        break;
                    }
                    Ok(Msg::Failed(e)) => {
                        result = Err(Error::Io(e));
                        break 'chunks;
                    }
                    // The worker stopped early: cancelled.
                    Err(_) => {
                        result = Ok(StreamEnd {
                            bytes_searched: searched,
                            stopped: true,
                        });
                        break 'chunks;
                    }
                }
            }
            if opts.cancel.load(Ordering::Relaxed) && ci + 1 < nchunks {
                result = Ok(StreamEnd {
                    bytes_searched: searched,
                    stopped: true,
                });
                break;
            }
        }
        halt.store(true, Ordering::Relaxed);
        drop(rxs);
        result
    })
}

/// Searches `len` bytes of `file` for every pattern with `threads` threads (a read-only
/// memory map when `use_mmap`, else large sequential reads); hits sorted by offset.
/// `progress(bytes_done)` is called after each chunk. Keeps every hit: see [`stream_file`].
pub fn search_file(
    file: &File,
    len: u64,
    patterns: &[Pattern],
    threads: usize,
    use_mmap: bool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RawHit>, Error> {
    let never = AtomicBool::new(false);
    let opts = StreamOptions {
        threads,
        use_mmap,
        locate: None,
        cancel: &never,
    };
    let mut hits = Vec::new();
    stream_file(file, len, patterns, &opts, progress, &mut |b| {
        hits.extend(b.iter().map(|h| RawHit {
            offset: h.offset,
            pattern: h.pattern,
        }));
        true
    })?;
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

/// The page starting at source offset `st` that holds source offset `offset`, if any (`buf`
/// starts at source offset `base`, `st >= base`): header/trailer of each size, then the
/// ROW_FORMAT=COMPRESSED checksum, then INDEX structure.
fn page_at(buf: &[u8], base: u64, st: u64, offset: u64, sizes: &[usize]) -> Option<FoundPage> {
    let o = (st - base) as usize;
    for &s in sizes {
        if st + s as u64 > offset {
            if let Some(p) = detect_at(buf, o, s, base) {
                return Some(p);
            }
        }
    }
    if let Some(p) =
        crate::scan::detect_zip_at(buf, o, base).filter(|p| st + p.page_size as u64 > offset)
    {
        return Some(p);
    }
    if o + 125 <= buf.len() {
        if let Some(fmt) = system_records(&buf[o..]) {
            if is_index_type(crate::page::be16(buf, o + 24)) {
                if let Some(s) = infer_index_size(buf, o, fmt, sizes) {
                    if st + s as u64 > offset {
                        return Some(crate::scan::classify(
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
    None
}

/// The records of a found page (INDEX pages, not ROW_FORMAT=COMPRESSED).
fn page_records(buf: &[u8], base: u64, page: &FoundPage) -> Vec<Record> {
    if page.index.is_some() && !page.zip {
        let o = (page.offset - base) as usize;
        records(&buf[o..o + page.page_size as usize])
    } else {
        Vec::new()
    }
}

fn location(page: FoundPage, offset: u64, recs: &[Record]) -> Location {
    let po = (offset - page.offset) as usize;
    let record = if page.index.is_some() && !page.zip {
        record_containing(recs, po)
    } else {
        None
    };
    Location {
        page,
        page_offset: po as u32,
        record,
    }
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
    Locator::new(step, sizes).locate(buf, base, offset)
}

/// [`locate_in`] for hits in increasing offset order over one buffer, remembering the last
/// answer: a page start at or before the previous hit that holds this one would have held
/// the previous one too, so only the starts after the previous hit are tried, then the
/// previous answer stands (a run of hits costs about one try per step, not 128 per hit).
pub struct Locator {
    step: u64,
    sizes: Vec<usize>,
    /// The previous hit's offset, its page and that page's records.
    last: Option<(u64, Option<FoundPage>, Vec<Record>)>,
}

impl Locator {
    /// A locator for page starts at multiples of `step` and pages of `sizes`.
    pub fn new(step: usize, sizes: &[usize]) -> Locator {
        Locator {
            step: step.max(1) as u64,
            sizes: sizes.to_vec(),
            last: None,
        }
    }

    /// Forgets the previous answer (call it for each new buffer).
    pub fn reset(&mut self) {
        self.last = None;
    }

    /// The page and record holding `offset` (see [`locate_in`]); offsets must not decrease
    /// between calls on one buffer.
    pub fn locate(&mut self, buf: &[u8], base: u64, offset: u64) -> Option<Location> {
        let max = *self.sizes.iter().max().unwrap_or(&65536) as u64;
        let low = offset.saturating_sub(max - 1).max(base);
        // Starts at or below `known` were tried for the previous hit.
        let prev = self
            .last
            .take()
            .filter(|(p, _, _)| *p <= offset && *p >= low);
        let known = prev.as_ref().map(|(p, _, _)| *p);
        let mut st = offset / self.step * self.step;
        while st >= low && known.is_none_or(|k| st > k) {
            if let Some(page) = page_at(buf, base, st, offset, &self.sizes) {
                let recs = page_records(buf, base, &page);
                let loc = location(page.clone(), offset, &recs);
                self.last = Some((offset, Some(page), recs));
                return Some(loc);
            }
            if st < self.step {
                break;
            }
            st -= self.step;
        }
        let found = match prev {
            None => None,
            Some((_, None, _)) => {
                self.last = Some((offset, None, Vec::new()));
                return None;
            }
            Some((_, Some(page), recs)) if offset < page.offset + page.page_size as u64 => {
                Some((page, recs))
            }
            // The previous page ends before this hit: try every older start.
            Some((k, Some(_), _)) => {
                let mut st = k / self.step * self.step;
                let mut f = None;
                while st >= low {
                    if let Some(page) = page_at(buf, base, st, offset, &self.sizes) {
                        let recs = page_records(buf, base, &page);
                        f = Some((page, recs));
                        break;
                    }
                    if st < self.step {
                        break;
                    }
                    st -= self.step;
                }
                f
            }
        };
        match found {
            Some((page, recs)) => {
                let loc = location(page.clone(), offset, &recs);
                self.last = Some((offset, Some(page), recs));
                Some(loc)
            }
            None => {
                self.last = Some((offset, None, Vec::new()));
                None
            }
        }
    }
}

/// Locates many hits (sorted by offset) in a file, reading one window per group of nearby hits.
///
/// With `use_mmap` the file is mapped read-only and nothing is copied (only for a file that
/// nothing writes or truncates meanwhile: see [`crate::io`]).
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
        // SAFETY: not guaranteed here: `use_mmap` is the caller's word that nothing writes
        // or truncates the file while it is read (see crate::io for what happens otherwise).
        if let Some(m) = unsafe { crate::io::Mapped::new(file, len) } {
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

    fn fixture(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/innodb")
            .join(name);
        std::fs::read(p).unwrap()
    }

    #[test]
    fn locator_answers_as_a_fresh_lookup_at_every_offset() {
        // Two real tablespaces (16K full_crc32 and 8K crc32) at odd 512-byte offsets between
        // filler: every offset located in order must get what a fresh lookup gets.
        let mut buf = vec![0x5Au8; 1536];
        buf.extend(fixture("shop_orders.ibd"));
        buf.extend(vec![0u8; 2560]);
        buf.extend(fixture("small_pages8c.ibd"));
        buf.extend(vec![0xA5u8; 4096]);
        let sizes = PAGE_SIZES;
        let mut loc = Locator::new(512, &sizes);
        let mut located = 0;
        for off in (0..buf.len() as u64).step_by(7) {
            let fresh = locate_in(&buf, 0, off, 512, &sizes);
            located += fresh.is_some() as usize;
            assert_eq!(loc.locate(&buf, 0, off), fresh, "offset {off}");
        }
        assert!(located > 10_000, "{located}");
    }

    #[test]
    fn stream_hands_hits_over_in_order_and_stops_when_asked() {
        use std::io::Write;
        // Three chunks of a repeated word on 3 threads: 3 x 2 M hits. The sink stops after
        // the first 5000; nothing past them was handed over, and far less than the whole
        // source was searched.
        let data: Vec<u8> = [0x80u8, 0, 0, 5].repeat(3 * CHUNK / 4);
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let p = Pattern::parse_hex("80 00 00 05").unwrap();
        let never = AtomicBool::new(false);
        for mmap in [false, true] {
            let opts = StreamOptions {
                threads: 3,
                use_mmap: mmap,
                locate: Some((512, &PAGE_SIZES)),
                cancel: &never,
            };
            let mut got: Vec<u64> = Vec::new();
            let end = stream_file(
                &f,
                data.len() as u64,
                std::slice::from_ref(&p),
                &opts,
                &|_| {},
                &mut |b| {
                    assert!(b.len() <= BATCH);
                    got.extend(b.iter().map(|h| h.offset));
                    got.len() < 5000
                },
            )
            .unwrap();
            assert!(end.stopped);
            assert_eq!(got.len(), 5 * BATCH, "mmap {mmap}");
            assert!(got.iter().enumerate().all(|(i, &o)| o == 4 * i as u64));
            assert!(end.bytes_searched < CHUNK as u64, "{end:?}");
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
