//! Reconnection's session setup on the real MariaDB (DBIO_TEST_MYSQL, default
//! mysql://root@127.0.0.1:3306/test): the job's lock is taken over from the job's own old
//! session (which the server kept), and refused when another session holds it.

use dbio_mysql::conn::{self, Net, Session};
use dbio_mysql::server::Tls;
use dbio_mysql::Error;
use mysql::prelude::Queryable;
use std::time::Duration;

fn dsn() -> String {
    std::env::var("DBIO_TEST_MYSQL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

fn net() -> Net {
    Net {
        timeout: Duration::from_secs(10),
        reconnect_for: Duration::from_secs(10),
    }
}

fn open() -> mysql::Conn {
    conn::open(&dsn(), &Tls::Dsn, &net())
        .unwrap_or_else(|e| panic!("needs MariaDB at DBIO_TEST_MYSQL ({}): {e}", dsn()))
}

fn holder(c: &mut mysql::Conn, name: &str) -> Option<u64> {
    c.exec_first::<Option<u64>, _, _>("SELECT IS_USED_LOCK(?)", (name,))
        .unwrap()
        .flatten()
}

#[test]
#[ignore = "needs MariaDB at DBIO_TEST_MYSQL"]
fn a_reconnect_takes_the_lock_over_from_its_old_session_but_not_from_another() {
    let name = "dbio_chunk_frozen_conn_test";
    let session = Session {
        lock_wait_timeout: 7,
        lock: Some(name.into()),
    };
    // The job's old session still holds the lock (the server did not see it go).
    let mut old = open();
    old.exec_drop("SELECT GET_LOCK(?, 0)", (name,)).unwrap();
    let old_id = old.connection_id();
    let mut new = open();
    conn::setup(&mut new, &session, old_id, &net()).unwrap();
    assert_eq!(holder(&mut new, name), Some(u64::from(new.connection_id())));
    let wait: u64 = new
        .query_first("SELECT @@SESSION.innodb_lock_wait_timeout")
        .unwrap()
        .unwrap();
    assert_eq!(wait, 7);
    assert!(
        old.query_drop("SELECT 1").is_err(),
        "the old session was not ended"
    );

    // Held by another session (another copy of the job): refused, and that session lives on.
    let mut third = open();
    let e = conn::setup(&mut third, &session, old_id, &net()).unwrap_err();
    assert!(matches!(e, Error::Locked(ref n) if n == name), "{e}");
    assert_eq!(
        holder(&mut third, name),
        Some(u64::from(new.connection_id()))
    );
    new.query_drop("SELECT 1").unwrap();
}
