//! Connections that cannot hang. Every connection dbio opens to a server or a replica ([`open`])
//! has a connect, read and write timeout ([`Net::timeout`], `--net-timeout`): a server that
//! stops answering (stopped by SIGSTOP, swapping, or cut off by a network partition, where no
//! reset ever arrives) ends the call with an error after that long instead of never. This module
//! tells such errors apart ([`stalled`], [`lost`]), words them for people ([`Stalled`]), and
//! reconnects with back-off ([`reconnect`]), redoing the session's setup and taking the job's
//! lock again ([`Session`]).

use crate::dsn::{self, Tls};
use crate::state::Checkpoint;
use crate::value::KeyValue;
use crate::{redact, Error};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The network limits of a job's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Net {
    /// The longest wait for a connection to be accepted, for a reply, or for the server to
    /// take what is sent. It must be longer than any statement of a job can take (see the
    /// docs/mysql-chunk.md: a chunk's statement waits at most innodb_lock_wait_timeout for a lock).
    pub timeout: Duration,
    /// How long the guard keeps reconnecting to a server that stopped answering between
    /// chunks before the job stops (zero: stop at once).
    pub reconnect_for: Duration,
}

impl Default for Net {
    /// 60 s and 5 minutes, the defaults of `--net-timeout` and `--reconnect-for`.
    fn default() -> Net {
        Net {
            timeout: Duration::from_secs(60),
            reconnect_for: Duration::from_secs(300),
        }
    }
}

/// `o` with `net`'s connect, read and write timeouts.
pub fn with_timeouts(o: Opts, net: &Net) -> Opts {
    let t = Some(net.timeout.max(Duration::from_millis(1)));
    OptsBuilder::from_opts(o)
        .tcp_connect_timeout(t)
        .read_timeout(t)
        .write_timeout(t)
        .into()
}

/// Opens a connection to `dsn`, secured as `tls` says, with `net`'s timeouts.
pub fn open(dsn: &str, tls: &Tls, net: &Net) -> Result<Conn, Error> {
    let o = with_timeouts(tls.apply(dsn::opts(dsn)?), net);
    Conn::new(o).map_err(|cause| Error::Connect {
        dsn: redact(dsn),
        cause,
    })
}

/// `host:port` of `dsn` (the DSN itself when it does not parse).
pub fn server_of(dsn: &str) -> String {
    match dsn::opts(dsn) {
        Ok(o) => format!("{}:{}", o.get_ip_or_hostname(), o.get_tcp_port()),
        Err(_) => redact(dsn),
    }
}

fn io_error(e: &mysql::Error) -> Option<&std::io::Error> {
    match e {
        mysql::Error::IoError(io) => Some(io),
        // The codec's only source is its I/O error.
        mysql::Error::CodecError(c) => std::error::Error::source(c)?.downcast_ref(),
        _ => None,
    }
}

/// Whether `e` is a timeout: the server sent nothing (or took nothing) for the whole
/// [`Net::timeout`], or did not accept the connection in time. (A socket read timeout is
/// `EAGAIN` on Linux: `WouldBlock`.)
pub fn stalled(e: &mysql::Error) -> bool {
    use std::io::ErrorKind::{TimedOut, WouldBlock};
    match e {
        mysql::Error::DriverError(mysql::DriverError::ConnectTimeout) => true,
        mysql::Error::DriverError(mysql::DriverError::CouldNotConnect(Some((_, _, k)))) => {
            matches!(k, TimedOut | WouldBlock)
        }
        _ => io_error(e).is_some_and(|io| matches!(io.kind(), TimedOut | WouldBlock)),
    }
}

/// Whether `e` means the connection is gone or useless (a timeout, a reset, the server closed
/// it, it could not be opened): the session, its transaction and its locks are lost or will be,
/// and the connection must not be used again. An error the server sent (a refused statement,
/// a lock wait timeout) is not.
pub fn lost(e: &mysql::Error) -> bool {
    match e {
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => true,
        mysql::Error::DriverError(
            mysql::DriverError::ConnectTimeout | mysql::DriverError::CouldNotConnect(_),
        ) => true,
        // Server shutdown in progress, connection killed: the session is ending.
        mysql::Error::MySqlError(m) => matches!(m.code, 1053 | 1927 | 2006 | 2013),
        _ => false,
    }
}

/// The client's error inside a job's error, if it has one.
pub fn client_error(e: &Error) -> Option<&mysql::Error> {
    match e {
        Error::Sql { source, .. } | Error::Retries { source, .. } => Some(source),
        Error::Connect { cause, .. } => Some(cause),
        _ => None,
    }
}

/// Whether a job's error is a server that stopped answering ([`stalled`]).
pub fn not_answering(e: &Error) -> bool {
    client_error(e).is_some_and(stalled)
}

/// Whether a job's error is a lost connection ([`lost`]).
pub fn connection_lost(e: &Error) -> bool {
    client_error(e).is_some_and(lost)
}

pub use crate::Stalled;

/// `e` as [`Error::NotAnswering`] when it is a timeout ([`not_answering`]), naming `server`,
/// what was in flight (`doing`, then the failed step) and `held`; any other error unchanged.
pub fn explain(e: Error, dsn: &str, net: &Net, doing: Option<&str>, held: &str) -> Error {
    if !not_answering(&e) {
        return e;
    }
    let step = match &e {
        Error::Sql { what, .. } => what.clone(),
        Error::Connect { .. } => "connecting".into(),
        other => other.to_string(),
    };
    Error::NotAnswering(Box::new(Stalled {
        server: server_of(dsn),
        timeout: net.timeout,
        what: match doing {
            Some(d) => format!("{d}: {step}"),
            None => step,
        },
        held: held.to_string(),
    }))
}

/// What the client saw, in a few words: `sent nothing for 30s`, or the client's error.
pub fn describe(e: &Error, net: &Net) -> String {
    match client_error(e) {
        Some(c) if stalled(c) => format!(
            "sent nothing for {}",
            dbio_schema::units::format_duration(net.timeout)
        ),
        Some(c) => crate::client_error(c),
        None => e.to_string(),
    }
}

/// Why the job stopped after [`reconnect`] gave up: the server, what the first failure was,
/// the attempts made.
pub fn gave_up(first: &Error, dsn: &str, net: &Net, attempts: u32, last: &str) -> String {
    let fmt = dbio_schema::units::format_duration;
    format!(
        "the server at {} {} while the guard sampled it, and {attempts} reconnection attempts over --reconnect-for {} failed (the last: {}); every committed chunk is checkpointed: --resume continues when the server answers",
        server_of(dsn),
        describe(first, net),
        fmt(net.reconnect_for),
        if last.is_empty() { "none made" } else { last },
    )
}

/// What the checkpoint at `path` holds and what `--resume` does with the chunk that was in
/// flight (`update`: the job is an --update; `session`: the connection id of the session that
/// ran it).
pub fn held(ck: &Checkpoint, path: &Path, session: Option<u32>) -> String {
    let keys = |k: &[KeyValue]| {
        let v: Vec<String> = k.iter().map(ToString::to_string).collect();
        format!("({})", v.join(", "))
    };
    let mut s = format!(
        "The checkpoint {} holds {} committed chunks",
        path.display(),
        ck.totals.chunks
    );
    if let Some(last) = &ck.last {
        s += &format!(" up to key {}", keys(last));
    }
    match &ck.pending {
        Some(p) => {
            s += &format!(
                "; the COMMIT of the chunk up to {} was sent and may or may not have happened: --resume settles it from the chunk's commit marker",
                keys(&p.upper)
            );
        }
        None => s += "; the chunk in flight is not in it, and --resume runs it again (what it did not commit the server rolls back once it sees the connection closed; rows a delete did remove are not found again)",
    }
    if let Some(id) = session {
        s += &format!(". Should --resume find the job's lock still held, the server has not yet ended that session: KILL {id}");
    }
    s
}

/// Waits 1 s, 2 s, 4 s, ... up to a cap between reconnection attempts.
#[derive(Clone, Debug)]
pub struct Backoff {
    next: Duration,
    cap: Duration,
}

impl Backoff {
    /// Starts at `first`, doubles up to `cap`.
    pub fn new(first: Duration, cap: Duration) -> Backoff {
        Backoff { next: first, cap }
    }

    /// The next wait.
    pub fn next_wait(&mut self) -> Duration {
        let w = self.next.min(self.cap);
        self.next = (self.next * 2).min(self.cap);
        w
    }
}

/// What a job's session needs after a reconnect: the same innodb_lock_wait_timeout and the
/// job's lock (`GET_LOCK`, which belongs to the connection that took it).
#[derive(Clone, Debug)]
pub struct Session {
    /// innodb_lock_wait_timeout, seconds.
    pub lock_wait_timeout: u32,
    /// The job's lock, when it holds one (`--execute`).
    pub lock: Option<String>,
}

/// What the lock holder tells about the job's lock after a reconnect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockHolder {
    /// Nobody: take it.
    Free,
    /// The job's own old connection, which the server has not closed yet (it has not noticed
    /// the client went away): end that session, then take the lock.
    OldSelf,
    /// Another session: another copy of the job took it meanwhile.
    Other(u64),
}

/// Who holds the lock: `IS_USED_LOCK`'s answer against the job's old connection id.
pub fn holder(used_by: Option<u64>, old_id: u32) -> LockHolder {
    match used_by {
        None => LockHolder::Free,
        Some(id) if id == u64::from(old_id) => LockHolder::OldSelf,
        Some(id) => LockHolder::Other(id),
    }
}

fn sql(what: impl Into<String>) -> impl FnOnce(mysql::Error) -> Error {
    let what = what.into();
    move |source| Error::Sql { what, source }
}

/// Sets up a new connection of a job whose old connection (id `old_id`) was lost: the
/// session's innodb_lock_wait_timeout, then the job's lock. The old session may still hold the
/// lock (the server did not see the client go: a network partition, or the server was stopped
/// and has not run since); it is the job's own and idle between chunks (no transaction), so it
/// is ended with `KILL` and the lock taken. A lock held by any other session is
/// [`Error::Locked`]: another copy of the job started meanwhile, and this one must stop.
pub fn setup(conn: &mut Conn, s: &Session, old_id: u32, net: &Net) -> Result<(), Error> {
    conn.query_drop(format!(
        "SET SESSION innodb_lock_wait_timeout = {}",
        s.lock_wait_timeout.max(1)
    ))
    .map_err(sql("setting innodb_lock_wait_timeout"))?;
    let Some(name) = &s.lock else {
        return Ok(());
    };
    let t0 = Instant::now();
    loop {
        let used: Option<Option<u64>> = conn
            .exec_first("SELECT IS_USED_LOCK(?)", (name,))
            .map_err(sql(format!("IS_USED_LOCK('{name}')")))?;
        match holder(used.flatten(), old_id) {
            LockHolder::Free => return lock(conn, name),
            LockHolder::Other(_) => return Err(Error::Locked(name.clone())),
            LockHolder::OldSelf => {
                // KILL returns before the killed session has released its locks.
                match conn.query_drop(format!("KILL CONNECTION {old_id}")) {
                    // 1094: unknown thread id: it ended by itself meanwhile.
                    Err(mysql::Error::MySqlError(m)) if m.code == 1094 => {}
                    r => r.map_err(sql(format!(
                        "KILL CONNECTION {old_id} (dbio's old session, which holds the job's lock)"
                    )))?,
                }
                if t0.elapsed() > net.timeout {
                    return Err(Error::Locked(name.clone()));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// The result of [`reconnect`].
pub enum Reconnect {
    /// A new connection, set up.
    Connected(Conn),
    /// `stop` was set while waiting.
    Interrupted,
    /// [`Net::reconnect_for`] passed without a working connection.
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        last: String,
    },
}

/// Opens a new connection to `dsn` in place of the lost one (id `old_id`, lost at `since`):
/// attempts 1 s, 2 s, 4 s ... (at most 30 s) apart until one connects and [`setup`] succeeds,
/// or [`Net::reconnect_for`] has passed since `since`. Each attempt is bounded by
/// [`Net::timeout`]. [`Error::Locked`] (another copy took the job's lock) ends it at once.
pub fn reconnect(
    dsn: &str,
    tls: &Tls,
    net: &Net,
    session: &Session,
    old_id: u32,
    since: Instant,
    stop: &AtomicBool,
) -> Result<Reconnect, Error> {
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(30));
    let mut attempts = 0;
    let mut last = String::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(Reconnect::Interrupted);
        }
        let left = net.reconnect_for.saturating_sub(since.elapsed());
        if left.is_zero() {
            return Ok(Reconnect::GaveUp { attempts, last });
        }
        nap(backoff.next_wait().min(left), stop);
        if stop.load(Ordering::SeqCst) {
            return Ok(Reconnect::Interrupted);
        }
        attempts += 1;
        let r =
            open(dsn, tls, net).and_then(|mut c| setup(&mut c, session, old_id, net).map(|()| c));
        match r {
            Ok(c) => return Ok(Reconnect::Connected(c)),
            Err(e @ Error::Locked(_)) => return Err(e),
            Err(e) => {
                last = match client_error(&e) {
                    Some(c) if stalled(c) => format!(
                        "no answer in {}",
                        dbio_schema::units::format_duration(net.timeout)
                    ),
                    _ => e.to_string(),
                };
            }
        }
    }
}

/// Sleeps `d` in slices, returning early when `stop` is set.
pub(crate) fn nap(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

/// Takes the job's server lock (GET_LOCK with no wait) on `conn`; held until the connection
/// closes. Refused when another session holds it.
pub fn lock(conn: &mut Conn, name: &str) -> Result<(), Error> {
    let got: Option<Option<i64>> = conn
        .exec_first("SELECT GET_LOCK(?, 0)", (name,))
        .map_err(lock_sql(format!("GET_LOCK('{name}')")))?;
    match got.flatten() {
        Some(1) => Ok(()),
        _ => Err(Error::Locked(name.to_string())),
    }
}

fn lock_sql(what: String) -> impl FnOnce(mysql::Error) -> Error {
    move |source| Error::Sql { what, source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error as IoError, ErrorKind};

    #[test]
    fn timeouts_are_told_from_other_failures() {
        let io = |k| mysql::Error::IoError(IoError::new(k, "x"));
        assert!(stalled(&io(ErrorKind::WouldBlock)));
        assert!(stalled(&io(ErrorKind::TimedOut)));
        assert!(stalled(&mysql::Error::DriverError(
            mysql::DriverError::ConnectTimeout
        )));
        assert!(!stalled(&io(ErrorKind::ConnectionReset)));
        assert!(lost(&io(ErrorKind::ConnectionReset)));
        assert!(lost(&io(ErrorKind::UnexpectedEof)));
        let server = |code| {
            mysql::Error::MySqlError(mysql::MySqlError {
                state: "HY000".into(),
                message: "m".into(),
                code,
            })
        };
        // A lock wait timeout is the server's answer, not a lost connection.
        assert!(!lost(&server(1205)) && !stalled(&server(1205)));
        assert!(lost(&server(1927)));
        let e = Error::Sql {
            what: "the chunk's statement".into(),
            source: io(ErrorKind::WouldBlock),
        };
        assert!(not_answering(&e) && connection_lost(&e));
        assert!(!not_answering(&Error::NoDatabase));
    }

    #[test]
    fn the_message_names_the_server_the_step_and_the_checkpoint() {
        let e = Error::Sql {
            what: "COMMIT".into(),
            source: mysql::Error::IoError(IoError::new(ErrorKind::WouldBlock, "x")),
        };
        let net = Net {
            timeout: Duration::from_secs(30),
            ..Net::default()
        };
        let m = explain(
            e,
            "mysql://u:secret@db1:3307/shop",
            &net,
            Some("the chunk after (4500)"),
            "held",
        )
        .to_string();
        assert_eq!(
            m,
            "the server at db1:3307 sent nothing for 30s (--net-timeout) while the chunk after (4500): COMMIT: it is stopped, overloaded or cut off by the network. held"
        );
        // Anything else passes unchanged.
        let other = explain(Error::NoDatabase, "mysql://h/d", &net, None, "");
        assert!(matches!(other, Error::NoDatabase));
    }

    /// A listener on 127.0.0.1 that accepts connections and, with `close`, closes them at
    /// once, or else holds them open without sending a byte (a stopped server: the kernel
    /// still completes the TCP handshake for it).
    fn silent_server(close: bool) -> (String, std::thread::JoinHandle<()>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dsn = format!("mysql://u@{}/d", l.local_addr().unwrap());
        let h = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            if !close {
                std::thread::sleep(Duration::from_secs(3));
            }
            drop(s);
        });
        (dsn, h)
    }

    #[test]
    fn a_server_that_sends_nothing_ends_the_connect_after_the_timeout() {
        let net = Net {
            timeout: Duration::from_millis(300),
            ..Net::default()
        };
        let (dsn, h) = silent_server(false);
        // (Without the timeout the client would wait until the listener closes, and see a
        // closed connection, not a timeout.)
        let e = open(&dsn, &Tls::Dsn, &net).expect_err("no greeting, no connection");
        assert!(not_answering(&e), "{e:?}");
        assert_eq!(describe(&e, &net), "sent nothing for 300ms");
        h.join().unwrap();
        // A server that closes the connection is lost, not stalled.
        let (dsn, h) = silent_server(true);
        let e = open(&dsn, &Tls::Dsn, &net).expect_err("closed at once");
        assert!(connection_lost(&e) && !not_answering(&e), "{e:?}");
        h.join().unwrap();
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(30));
        let waits: Vec<u64> = (0..8).map(|_| b.next_wait().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
    }

    #[test]
    fn the_lock_is_taken_over_only_from_the_jobs_own_old_session() {
        assert_eq!(holder(None, 7), LockHolder::Free);
        assert_eq!(holder(Some(7), 7), LockHolder::OldSelf);
        assert_eq!(holder(Some(8), 7), LockHolder::Other(8));
    }

    #[test]
    fn every_connection_gets_the_timeouts() {
        let net = Net {
            timeout: Duration::from_secs(3),
            ..Net::default()
        };
        let o = with_timeouts(Opts::from_url("mysql://u@h/d").unwrap(), &net);
        assert_eq!(o.get_read_timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(o.get_write_timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(o.get_tcp_connect_timeout(), Some(Duration::from_secs(3)));
    }
}
