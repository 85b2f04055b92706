//! Network interface byte counters from `/proc/net/dev` and link speeds from
//! `/sys/class/net/IF/speed` (Mb/s; virtual interfaces have none).

use crate::Error;
use std::path::Path;

/// One interface's counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetDev {
    /// Interface name.
    pub name: String,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
}

/// Parses the text of `/proc/net/dev` (two header lines, then `name: rx... tx...`).
pub fn parse(text: &str) -> Result<Vec<NetDev>, Error> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        if name.contains('|') {
            continue;
        }
        let v: Vec<&str> = rest.split_whitespace().collect();
        let num = |k: usize| -> Result<u64, Error> {
            v.get(k)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| Error::Parse {
                    what: "/proc/net/dev".into(),
                    line: i + 1,
                    msg: format!("field {} of {:?} is not a counter", k + 1, line.trim()),
                })
        };
        out.push(NetDev {
            name: name.trim().to_string(),
            rx_bytes: num(0)?,
            tx_bytes: num(8)?,
        });
    }
    Ok(out)
}

/// Reads and parses `/proc/net/dev` of the running system.
pub fn read() -> Result<Vec<NetDev>, Error> {
    let p = "/proc/net/dev";
    let text = std::fs::read_to_string(p).map_err(|e| Error::io(p, e))?;
    parse(&text)
}

/// The link speed of `iface` in Mb/s, `None` when the kernel gives none (loopback, virtual
/// NICs report -1 or refuse the read).
pub fn link_speed_mbit(iface: &str) -> Option<u64> {
    speed_in(Path::new("/sys/class/net"), iface)
}

fn speed_in(root: &Path, iface: &str) -> Option<u64> {
    let s = std::fs::read_to_string(root.join(iface).join("speed")).ok()?;
    s.trim()
        .parse::<i64>()
        .ok()
        .filter(|&v| v > 0)
        .map(|v| v as u64)
}

/// Whether the interface is up (`operstate` is `up`).
pub fn is_up(iface: &str) -> bool {
    std::fs::read_to_string(Path::new("/sys/class/net").join(iface).join("operstate"))
        .is_ok_and(|s| s.trim() == "up")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_net_dev() {
        // Captured on a virtual machine (kernel 6.x).
        let text = "Inter-|   Receive                                                |  Transmit\n \
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    \
lo:   86964     890    0    0    0     0          0         0    86964     890    0    0    0     0       0          0\n  \
eth0: 238940198    7824    0    0    0     0          0         0   405697    4344    0    0    0     0       0          0\n";
        let d = parse(text).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(
            d[1],
            NetDev {
                name: "eth0".into(),
                rx_bytes: 238940198,
                tx_bytes: 405697
            }
        );
        assert!(parse("eth0: 1 2 3\n").is_err());
    }

    #[test]
    fn speed_is_read_and_minus_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        for (name, speed) in [("eth0", "1000\n"), ("veth", "-1\n")] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("speed"), speed).unwrap();
        }
        assert_eq!(speed_in(dir.path(), "eth0"), Some(1000));
        assert_eq!(speed_in(dir.path(), "veth"), None);
        assert_eq!(speed_in(dir.path(), "nope"), None);
    }

    #[test]
    fn reads_the_running_system() {
        assert!(read().unwrap().iter().any(|d| d.name == "lo"));
    }
}
