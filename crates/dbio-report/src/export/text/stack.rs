//! `dbio stack` as text: an indented tree from the path's mount down to the physical disks,
//! each device with its queue attributes.

use crate::export::Exporter;
use crate::export::Text;
use dbio_schema::stack::{Device, DeviceKind, Stack};
use dbio_schema::units::{format_size, format_size_short};
use std::fmt::Write as _;
use std::io::{self, Write};

impl Exporter<Stack> for Text {
    fn export(&self, value: &Stack, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(render_text(value).as_bytes())
    }
}

fn yes_no(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

fn size(b: Option<u64>) -> String {
    b.map(format_size_short).unwrap_or_else(|| "?".into())
}

fn kind(k: DeviceKind) -> &'static str {
    match k {
        DeviceKind::Disk => "disk",
        DeviceKind::Partition => "partition",
        DeviceKind::Dm => "dm",
        DeviceKind::Md => "md",
        DeviceKind::Loop => "loop",
    }
}

/// The text tree.
fn render_text(st: &Stack) -> String {
    let mut s = String::new();
    match &st.resolved_path {
        Some(r) if r != &st.query => {
            let _ = writeln!(s, "path      {} ({})", st.query, r);
        }
        _ => {
            let _ = writeln!(s, "path      {}", st.query);
        }
    }
    if let Some(m) = &st.mount {
        let _ = writeln!(
            s,
            "mount     {} on {} type {} ({}) dev {}",
            m.source, m.mountpoint, m.fstype, m.mount_options, m.dev
        );
        let _ = writeln!(s, "fs opts   {}", m.super_options);
        if m.root != "/" {
            let _ = writeln!(s, "bind of   {}", m.root);
        }
    }
    if let Some(k) = &st.kernel_release {
        let _ = writeln!(s, "kernel    {k}");
    }
    for n in &st.notes {
        let _ = writeln!(s, "note      {n}");
    }
    if !st.devices.is_empty() {
        let _ = writeln!(s);
    }
    for d in &st.devices {
        device_text(&mut s, d);
    }
    if !st.leaf_disks.is_empty() {
        let _ = writeln!(s, "\nleaf disks: {}", st.leaf_disks.join(", "));
    }
    s
}

fn device_text(s: &mut String, d: &Device) {
    let pad = "    ".repeat(d.depth);
    let branch = if d.depth == 0 { "" } else { "└─ " };
    let mut head = format!(
        "{pad}{branch}{}  {}  {}  {}  {}",
        d.name,
        d.dev,
        kind(d.kind),
        size(d.size_bytes),
        d.node
    );
    if let Some(m) = &d.model {
        let _ = write!(head, "  model {m}");
    }
    if d.read_only == Some(true) {
        head.push_str("  read-only");
    }
    let _ = writeln!(s, "{head}");
    let ind = format!("{pad}{}", if d.depth == 0 { "    " } else { "       " });
    let mut extra = Vec::new();
    if let Some(n) = &d.dm_name {
        extra.push(format!("dm name {n}"));
    }
    if let Some(u) = &d.dm_subsystem {
        extra.push(format!("dm by {u}"));
    }
    if let Some(l) = &d.md_level {
        extra.push(format!("md {l}"));
        if let Some(c) = d.md_chunk_bytes.filter(|c| *c > 0) {
            extra.push(format!("chunk {}", format_size(c)));
        }
    }
    if let Some(b) = &d.loop_backing_file {
        extra.push(format!("backing file {b}"));
    }
    if let Some(n) = d.partition_number {
        extra.push(format!("partition {n}"));
    }
    if let Some(st) = d.start_sectors {
        extra.push(format!("start sector {st} ({})", format_size(st * 512)));
    }
    if let Some(a) = d.alignment_offset_bytes {
        extra.push(format!("alignment_offset {a}"));
    }
    if !extra.is_empty() {
        let _ = writeln!(s, "{ind}{}", extra.join("  "));
    }
    if let Some(q) = &d.queue {
        let sched = match (&q.scheduler, q.schedulers.len()) {
            (Some(a), n) if n > 1 => format!("{a} (of {})", q.schedulers.join(" ")),
            (Some(a), _) => a.clone(),
            (None, _) => "?".into(),
        };
        let num = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "?".into());
        let _ = writeln!(
            s,
            "{ind}scheduler {sched}  nr_requests {}  read_ahead_kb {}  max_sectors_kb {}",
            num(q.nr_requests),
            num(q.read_ahead_kb),
            num(q.max_sectors_kb)
        );
        let _ = writeln!(
            s,
            "{ind}rotational {}  write_cache {}  discard {}",
            yes_no(q.rotational),
            q.write_cache.as_deref().unwrap_or("?"),
            match q.discard_max_bytes {
                Some(0) => "no".to_string(),
                Some(b) => format!("yes (max {})", format_size_short(b)),
                None => "?".to_string(),
            }
        );
        let _ = writeln!(
            s,
            "{ind}block logical {} physical {}  io min {} optimal {}",
            size(q.logical_block_size_bytes),
            size(q.physical_block_size_bytes),
            size(q.minimum_io_size_bytes),
            size(q.optimal_io_size_bytes)
        );
    } else if d.kind == DeviceKind::Partition {
        let _ = writeln!(s, "{ind}(queue attributes: see its disk below)");
    }
}
