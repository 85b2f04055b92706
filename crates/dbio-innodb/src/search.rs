//! `innodb grep`: typed values -> patterns; sources -> hits tied to their page and record,
//! kept by `--all-in`, cut at `--max-count`, streamed to a sink in source order; a summary.

use crate::encode::{self, IntType};
use crate::grep::{self, Hit, Location, Pattern};
use crate::io::read_full_at;
use crate::recover::{type_name, RecoverError, Source};
use crate::scan::ScanOptions;
pub use dbio_schema::innodb::{GrepSummary, HitPage, HitRow, PatternRow};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A pattern that cannot be built: the message names the value and says how to write it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PatternError(pub String);

/// The patterns asked for, as given on the command line.
#[derive(Clone, Debug, Default)]
pub struct PatternSpec {
    /// Positional arguments: a hex pattern when no other pattern is given, then sources.
    pub args: Vec<String>,
    /// Hex patterns.
    pub hex: Vec<String>,
    /// Texts (UTF-8 bytes).
    pub text: Vec<String>,
    /// TINYINT, SMALLINT, MEDIUMINT, INT and BIGINT values (comma lists: adjacent columns).
    pub ints: [Vec<String>; 5],
    /// The integer columns are UNSIGNED.
    pub unsigned: bool,
    /// DATE values.
    pub date: Vec<String>,
    /// DATETIME values.
    pub datetime: Vec<String>,
    /// TIMESTAMP values in `tz`.
    pub timestamp: Vec<String>,
    /// Time zone of the TIMESTAMP values.
    pub tz: String,
    /// TIME values.
    pub time: Vec<String>,
    /// Fractional seconds precision.
    pub fsp: Option<u8>,
    /// DECIMAL values as P,S:VALUE.
    pub decimal: Vec<String>,
    /// CHAR values as N:VALUE.
    pub char_: Vec<String>,
    /// VARCHAR values.
    pub varchar: Vec<String>,
    /// Character set of CHAR/VARCHAR values.
    pub charset: String,
}

const INTS: [(IntType, &str); 5] = [
    (IntType::Tiny, "tinyint"),
    (IntType::Small, "smallint"),
    (IntType::Medium, "mediumint"),
    (IntType::Int, "int"),
    (IntType::Big, "bigint"),
];

/// Builds the patterns of `a`, each labelled with what it stands for; returns them with the
/// sources (the positional arguments left).
pub fn build_patterns(a: &PatternSpec) -> Result<(Vec<Pattern>, Vec<String>), PatternError> {
    let err = |e: crate::Error| PatternError(e.to_string());
    let mut pats = Vec::new();
    for h in &a.hex {
        pats.push(Pattern::parse_hex(h).map_err(err)?);
    }
    for t in &a.text {
        pats.push(Pattern::literal(format!("text:{t}"), t.as_bytes().to_vec()));
    }
    for (vals, (ty, name)) in a.ints.iter().zip(INTS) {
        for v in vals {
            let mut bytes = Vec::new();
            for part in v.split(',') {
                bytes.extend(encode::int(ty, a.unsigned, part).map_err(err)?);
            }
            pats.push(Pattern::literal(format!("{name}:{v}"), bytes));
        }
    }
    for v in &a.date {
        pats.push(Pattern::literal(
            format!("date:{v}"),
            encode::date(v).map_err(err)?,
        ));
    }
    for v in &a.datetime {
        pats.push(Pattern::literal(
            format!("datetime:{v}"),
            encode::datetime(v, a.fsp).map_err(err)?,
        ));
    }
    for v in &a.timestamp {
        let t = encode::parse_local(v).map_err(err)?;
        let instants = encode::instants_in_tz(&t, &a.tz).map_err(|e| match e {
            crate::Error::TimeZone { .. } => PatternError(format!("--tz: {e}")),
            e => PatternError(format!("--timestamp: {e}")),
        })?;
        // A time in the hour repeated when the clocks go back stands for two instants: either
        // may be stored, so both are searched, each labelled with its UTC offset.
        let label_offset = instants.len() > 1;
        for i in instants {
            let label = if label_offset {
                format!("timestamp:{v} {} ({})", a.tz, i.offset)
            } else {
                format!("timestamp:{v} {}", a.tz)
            };
            pats.push(Pattern::literal(
                label,
                encode::timestamp(v, i.epoch, t.usec, t.digits, a.fsp).map_err(err)?,
            ));
        }
    }
    for v in &a.time {
        pats.push(Pattern::literal(
            format!("time:{v}"),
            encode::time(v, a.fsp).map_err(err)?,
        ));
    }
    for v in &a.decimal {
        let bad = || {
            PatternError(format!(
                "--decimal {v:?}: write it as P,S:VALUE, e.g. 10,2:1234.56"
            ))
        };
        let (ps, val) = v.split_once(':').ok_or_else(bad)?;
        let (p, s) = ps.split_once(',').ok_or_else(bad)?;
        let (p, s): (u32, u32) = (
            p.trim().parse().map_err(|_| bad())?,
            s.trim().parse().map_err(|_| bad())?,
        );
        pats.push(Pattern::literal(
            format!("decimal({p},{s}):{val}"),
            encode::decimal(p, s, val).map_err(err)?,
        ));
    }
    for v in &a.char_ {
        let bad = || PatternError(format!("--char {v:?}: write it as N:VALUE, e.g. 10:abc"));
        let (n, val) = v.split_once(':').ok_or_else(bad)?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        pats.push(Pattern::literal(
            format!("char({n}):{val}"),
            encode::char_n(n, val, &a.charset).map_err(err)?,
        ));
    }
    for v in &a.varchar {
        pats.push(Pattern::literal(
            format!("varchar:{v}"),
            encode::charset_bytes(v, &a.charset).map_err(err)?,
        ));
    }
    let mut sources = a.args.clone();
    if pats.is_empty() {
        if sources.is_empty() {
            return Err(PatternError(
                "no pattern given: pass a hex PATTERN, -e HEX, --text or a typed value such as --int 837492636".into(),
            ));
        }
        let first = sources.remove(0);
        pats.push(Pattern::parse_hex(&first).map_err(err)?);
    }
    Ok((pats, sources))
}

/// `--all-in`: what must hold every pattern for a hit to be kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllIn {
    /// One record.
    Record,
    /// One page.
    Page,
}

impl AllIn {
    /// The name in output.
    pub fn name(self) -> &'static str {
        match self {
            AllIn::Record => "record",
            AllIn::Page => "page",
        }
    }
}

/// Keeps a hit when its group (page, or record) holds every pattern. Hits arrive in offset
/// order and a page holds offsets `[page, page + size)`, so a hit is decided once a later hit
/// lies past its page's end (or the source ends): only the hits of the last 64 KiB are held.
pub struct AllInFilter {
    mode: AllIn,
    npat: usize,
    pending: VecDeque<(Hit, (u64, u16), u64)>,
    groups: HashMap<(u64, u16), (BTreeSet<usize>, usize)>,
}

impl AllInFilter {
    /// A filter for `npat` patterns.
    pub fn new(mode: AllIn, npat: usize) -> AllInFilter {
        AllInFilter {
            mode,
            npat,
            pending: Default::default(),
            groups: Default::default(),
        }
    }

    /// Adds a hit; hands the hits now decided and kept to `out` (false from `out`: stop,
    /// returned).
    pub fn push(&mut self, h: &Hit, out: &mut dyn FnMut(Hit) -> bool) -> bool {
        let key = h.location.as_ref().and_then(|l| match self.mode {
            AllIn::Page => Some((l.page.offset, 0)),
            AllIn::Record => l.record.map(|r| (l.page.offset, r.origin)),
        });
        let Some(key) = key else {
            return self.release(h.offset, out); // never kept
        };
        let end = h
            .location
            .as_ref()
            .map_or(h.offset, |l| l.page.offset + l.page.page_size as u64);
        let g = self.groups.entry(key).or_default();
        g.0.insert(h.pattern);
        g.1 += 1;
        let go = self.release(h.offset, out);
        self.pending.push_back((h.clone(), key, end));
        go
    }

    /// Decides the held hits whose page ends at or before `upto`, in order.
    pub fn release(&mut self, upto: u64, out: &mut dyn FnMut(Hit) -> bool) -> bool {
        while let Some((_, _, end)) = self.pending.front() {
            if *end > upto {
                break;
            }
            let (h, key, _) = self.pending.pop_front().expect("front exists");
            let g = self.groups.get_mut(&key).expect("group of a held hit");
            let keep = g.0.len() == self.npat;
            g.1 -= 1;
            if g.1 == 0 {
                self.groups.remove(&key);
            }
            if keep && !out(h) {
                return false;
            }
        }
        true
    }
}

/// The patterns as output rows.
pub fn pattern_rows(pats: &[Pattern]) -> Vec<PatternRow> {
    pats.iter()
        .map(|p| PatternRow {
            label: p.label.clone(),
            hex: p.to_hex(),
        })
        .collect()
}

fn hit_page(l: Location) -> HitPage {
    HitPage {
        page_offset_in_source: l.page.offset,
        page_size: l.page.page_size,
        space_id: l.page.space_id,
        page_no: l.page.page_no,
        page_type: type_name(l.page.page_type),
        index_id: l.page.index.map(|x| x.index_id),
        level: l.page.index.map(|x| x.level),
        status: l.page.status,
        checksum: l.page.checksum,
        offset_in_page: l.page_offset,
        record: l.record,
    }
}

/// How [`run`] searches.
pub struct SearchOptions<'a> {
    /// Worker threads.
    pub threads: usize,
    /// Page starts and sizes for locating hits.
    pub scan: &'a ScanOptions,
    /// Keep only hits where every pattern occurs in one record or page.
    pub all_in: Option<AllIn>,
    /// Bytes of hex dump either side of each hit (0: none).
    pub context: usize,
    /// Stop after this many hits.
    pub max_count: Option<u64>,
    /// Set by a signal: the search stops, and the hits before it are all handed over.
    pub stop: &'a AtomicBool,
}

/// Searches `sources` in turn for `pats` and hands each hit kept to `sink` with its number
/// (0 first). `progress(bytes_done)` counts over all sources; `guard(source)` is held while a
/// source is read. An error from `sink` ends the search and is returned.
pub fn run<G, E: From<RecoverError>>(
    sources: &[Source],
    pats: &[Pattern],
    o: &SearchOptions<'_>,
    progress: &(dyn Fn(u64) + Sync),
    guard: impl Fn(&Source) -> G,
    sink: &mut dyn FnMut(u64, HitRow) -> Result<(), E>,
) -> Result<GrepSummary, E> {
    let start = Instant::now();
    let (mut nhits, mut in_pages, mut searched) = (0u64, 0u64, 0u64);
    let (mut max_reached, mut interrupted) = (false, false);
    let mut err: Option<E> = None;
    for s in sources {
        let mut filter = o.all_in.map(|m| AllInFilter::new(m, pats.len()));
        let name = s.path.display().to_string();
        let mut emit = |h: Hit| -> bool {
            let context_hex = if o.context > 0 {
                match hexdump(s, h.offset, o.context) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        err = Some(e.into());
                        return false;
                    }
                }
            } else {
                None
            };
            let row = HitRow {
                source: name.clone(),
                offset: h.offset,
                pattern: pats[h.pattern].label.clone(),
                page: h.location.map(hit_page),
                context_hex,
            };
            let inside = row.page.is_some();
            if let Err(e) = sink(nhits, row) {
                err = Some(e);
                return false;
            }
            nhits += 1;
            in_pages += inside as u64;
            if o.max_count.is_some_and(|m| nhits >= m) {
                max_reached = true;
                return false;
            }
            true
        };
        let _guard = guard(s);
        let done_before = searched;
        let cb = |d: u64| progress(done_before + d);
        let sopts = grep::StreamOptions {
            threads: o.threads,
            use_mmap: s.mmap,
            locate: Some((o.scan.step, &o.scan.page_sizes)),
            cancel: o.stop,
        };
        let mut batch_sink = |batch: &[Hit]| -> bool {
            for h in batch {
                let go = match &mut filter {
                    None => emit(h.clone()),
                    Some(f) => f.push(h, &mut emit),
                };
                if !go {
                    return false;
                }
            }
            !o.stop.load(Ordering::SeqCst)
        };
        let end = grep::stream_file(&s.file, s.len, pats, &sopts, &cb, &mut batch_sink).map_err(
            |source| RecoverError::Read {
                path: s.path.clone(),
                source,
            },
        )?;
        if !end.stopped {
            if let Some(f) = &mut filter {
                f.release(u64::MAX, &mut emit);
            }
        }
        if let Some(e) = err.take() {
            return Err(e);
        }
        searched += end.bytes_searched;
        if o.stop.load(Ordering::SeqCst) {
            interrupted = true;
        }
        if max_reached || interrupted {
            break;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    Ok(GrepSummary {
        patterns: pattern_rows(pats),
        all_in: o.all_in.map(|a| a.name().to_string()),
        hit_count: nhits,
        hits_in_pages: in_pages,
        bytes_searched: searched,
        elapsed_s: elapsed,
        bytes_per_s: searched as f64 / elapsed.max(1e-9),
        max_count_reached: max_reached,
        interrupted,
    })
}

/// A hex dump of the 16-byte lines of `s` from `n` bytes before `at` to `n` bytes after it.
pub fn hexdump(s: &Source, at: u64, n: usize) -> Result<String, RecoverError> {
    let lo = at.saturating_sub(n as u64) / 16 * 16;
    let hi = (at + n as u64).min(s.len);
    let mut buf = vec![0u8; (hi - lo) as usize];
    let got = read_full_at(&s.file, &mut buf, lo).map_err(|e| RecoverError::Read {
        path: s.path.clone(),
        source: e.into(),
    })?;
    buf.truncate(got);
    Ok(hexdump_bytes(&buf, lo))
}

fn hexdump_bytes(buf: &[u8], lo: u64) -> String {
    let mut s = String::new();
    for (i, line) in buf.chunks(16).enumerate() {
        let off = lo + i as u64 * 16;
        let hex: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
        let asc: String = line
            .iter()
            .map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        s.push_str(&format!("{off:012x}  {:<47}  |{asc}|\n", hex.join(" ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::Record;
    use crate::scan::{FoundPage, Status};

    fn hit(offset: u64, pattern: usize, page: u64, origin: Option<u16>) -> Hit {
        let found = FoundPage {
            offset: page,
            page_size: 16384,
            status: Status::Intact,
            checksum: None,
            space_id: 1,
            page_no: (page / 16384) as u32,
            page_type: crate::page::page_type::INDEX,
            lsn: 1,
            index: None,
            fsp_flags: None,
            compressed_bytes: None,
            zip: false,
            decrypt: None,
        };
        Hit {
            offset,
            pattern,
            location: Some(Location {
                page: found,
                page_offset: (offset - page) as u32,
                record: origin.map(|origin| Record {
                    origin,
                    heap_no: 2,
                    deleted: false,
                    purged: false,
                    node_ptr: false,
                }),
            }),
        }
    }

    fn filter(mode: AllIn, hits: &[Hit]) -> Vec<u64> {
        let mut f = AllInFilter::new(mode, 2);
        let mut kept = Vec::new();
        let mut out = |h: Hit| {
            kept.push(h.offset);
            true
        };
        for h in hits {
            assert!(f.push(h, &mut out));
        }
        assert!(f.release(u64::MAX, &mut out));
        kept
    }

    #[test]
    fn all_in_keeps_the_hits_of_groups_holding_every_pattern() {
        let hits = [
            hit(200, 0, 0, Some(200)),
            hit(300, 1, 0, Some(300)),
            hit(16384 + 200, 0, 16384, Some(200)),
            hit(16384 + 210, 1, 16384, Some(200)),
            hit(40000, 0, 32768, Some(100)),
            Hit {
                offset: 60000,
                pattern: 1,
                location: None,
            },
        ];
        assert_eq!(filter(AllIn::Page, &hits), vec![200, 300, 16584, 16594]);
        assert_eq!(filter(AllIn::Record, &hits), vec![16584, 16594]);
    }

    #[test]
    fn all_in_stops_when_the_output_says_so() {
        let hits = [hit(200, 0, 0, None), hit(300, 1, 0, None)];
        let mut f = AllInFilter::new(AllIn::Page, 2);
        let mut n = 0;
        let mut out = |_h: Hit| {
            n += 1;
            false
        };
        for h in &hits {
            assert!(f.push(h, &mut out));
        }
        assert!(!f.release(u64::MAX, &mut out));
        assert_eq!(n, 1);
    }

    #[test]
    fn patterns_are_built_and_labelled() {
        let spec = PatternSpec {
            args: vec!["80 07".into(), "a.img".into()],
            ..PatternSpec::default()
        };
        let (pats, sources) = build_patterns(&spec).unwrap();
        assert_eq!(pats[0].label, "hex:80 07");
        assert_eq!(sources, vec!["a.img".to_string()]);
        let mut spec = PatternSpec {
            args: vec!["a.img".into()],
            charset: "utf8mb4".into(),
            ..PatternSpec::default()
        };
        spec.ints[1] = vec!["7,3".into()];
        spec.char_ = vec!["4:ab".into()];
        let (pats, sources) = build_patterns(&spec).unwrap();
        assert_eq!(sources, vec!["a.img".to_string()]);
        assert_eq!(pats[0].label, "smallint:7,3");
        assert_eq!(pats[0].to_hex(), "80 07 80 03");
        assert_eq!(pats[1].label, "char(4):ab");
        assert_eq!(pats[1].to_hex(), "61 62 20 20");
        spec.decimal = vec!["10:1".into()];
        assert_eq!(
            build_patterns(&spec).unwrap_err().0,
            "--decimal \"10:1\": write it as P,S:VALUE, e.g. 10,2:1234.56"
        );
        let e = build_patterns(&PatternSpec::default()).unwrap_err();
        assert!(e.0.starts_with("no pattern given"), "{e}");
    }

    #[test]
    fn hexdump_lines_are_aligned_to_16_bytes() {
        let s = hexdump_bytes(b"0123456789abcdef\x00A", 0x20);
        assert_eq!(
            s,
            "000000000020  30 31 32 33 34 35 36 37 38 39 61 62 63 64 65 66  |0123456789abcdef|\n\
             000000000030  00 41                                            |.A|\n"
        );
    }

    fn search(
        max_count: Option<u64>,
        fail_at: Option<u64>,
    ) -> (Result<GrepSummary, RecoverError>, Vec<u64>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.img");
        let mut bytes = vec![0u8; 20000];
        for at in [100, 5000, 19000] {
            bytes[at..at + 4].copy_from_slice(b"LOST");
        }
        std::fs::write(&path, &bytes).unwrap();
        let src = Source::open(&path, true).unwrap();
        let stop = AtomicBool::new(false);
        let scan = ScanOptions {
            step: 512,
            page_sizes: vec![16384],
            keys: None,
        };
        let o = SearchOptions {
            threads: 1,
            scan: &scan,
            all_in: None,
            context: 0,
            max_count,
            stop: &stop,
        };
        let pats = [Pattern::literal("text:LOST", b"LOST".to_vec())];
        let mut seen = Vec::new();
        let mut sink = |n: u64, row: HitRow| {
            if Some(n) == fail_at {
                return Err(RecoverError::NotFileOrDevice {
                    path: "sink".into(),
                });
            }
            assert_eq!(row.pattern, "text:LOST");
            seen.push(row.offset);
            Ok(())
        };
        let r = run(&[src], &pats, &o, &|_| {}, |_| (), &mut sink);
        (r, seen)
    }

    #[test]
    fn run_streams_every_hit_in_order_and_stops_at_max_count() {
        let (r, seen) = search(None, None);
        let s = r.unwrap();
        assert_eq!(seen, vec![100, 5000, 19000]);
        assert_eq!(
            (s.hit_count, s.hits_in_pages, s.bytes_searched),
            (3, 0, 20000)
        );
        assert!(!s.max_count_reached && !s.interrupted);
        let (r, seen) = search(Some(2), None);
        let s = r.unwrap();
        assert_eq!(seen, vec![100, 5000]);
        assert!(s.max_count_reached);
        assert_eq!(s.hit_count, 2);
    }

    #[test]
    fn a_sink_error_ends_the_search_and_is_returned() {
        let (r, seen) = search(None, Some(1));
        assert!(matches!(r, Err(RecoverError::NotFileOrDevice { .. })));
        assert_eq!(seen, vec![100]);
    }
}
