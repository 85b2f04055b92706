//! A DSN parsed into the `mysql` crate's options, and how the connection is secured: what every
//! connection of dbio starts from (a leaf: it imports nothing of this crate but its error).

use crate::{redact, Error};
use mysql::{Opts, OptsBuilder, SslOpts};
use std::path::PathBuf;

/// Parses a DSN (`mysql://user[:password]@host[:port][/database]`).
pub fn opts(dsn: &str) -> Result<Opts, Error> {
    Opts::from_url(dsn).map_err(|e| Error::Dsn {
        dsn: redact(dsn),
        message: e.to_string(),
    })
}

/// How dbio's connections are secured (`--ssl-mode`, `--ssl-ca`), on rustls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Tls {
    /// As the DSN says: plain, or TLS when it carries the `mysql` crate's parameters
    /// (`root_cert_path`, `danger_skip_domain_validation`, `danger_accept_invalid_certs`).
    #[default]
    Dsn,
    /// Plain, whatever the DSN says.
    Disabled,
    /// Encrypted; the server's certificate is not checked.
    Required,
    /// Encrypted; the certificate must chain to this CA file (PEM or DER; none: the built-in
    /// Mozilla roots); the host name is not checked.
    VerifyCa(Option<PathBuf>),
    /// As `VerifyCa`, and the certificate must name the host of the DSN.
    VerifyIdentity(Option<PathBuf>),
}

impl Tls {
    /// `--ssl-mode` and `--ssl-ca`: `disabled`, `required`, `verify-ca` or `verify-identity`;
    /// a CA file alone is `verify-ca` (as the MySQL client takes it). `None` when neither is
    /// given (the DSN decides).
    pub fn from_flags(mode: Option<&str>, ca: Option<PathBuf>) -> Result<Tls, String> {
        Ok(match (mode, ca) {
            (None, None) => Tls::Dsn,
            (None, Some(ca)) | (Some("verify-ca"), Some(ca)) => Tls::VerifyCa(Some(ca)),
            (Some("verify-ca"), None) => Tls::VerifyCa(None),
            (Some("verify-identity"), ca) => Tls::VerifyIdentity(ca),
            (Some(m @ ("disabled" | "required")), Some(_)) => {
                return Err(format!(
                    "--ssl-ca is used to check the server's certificate, which --ssl-mode {m} does not do: give --ssl-mode verify-ca or verify-identity"
                ))
            }
            (Some("disabled"), None) => Tls::Disabled,
            (Some("required"), None) => Tls::Required,
            (Some(m), _) => {
                return Err(format!(
                    "--ssl-mode {m}: give disabled, required, verify-ca or verify-identity"
                ))
            }
        })
    }

    /// `dsn`'s options with this TLS setting.
    pub fn apply(&self, o: Opts) -> Opts {
        let ssl = match self {
            Tls::Dsn => return o,
            Tls::Disabled => None,
            Tls::Required => Some(SslOpts::default().with_danger_accept_invalid_certs(true)),
            Tls::VerifyCa(ca) => Some(
                SslOpts::default()
                    .with_root_cert_path(ca.clone())
                    .with_danger_skip_domain_validation(true),
            ),
            Tls::VerifyIdentity(ca) => Some(SslOpts::default().with_root_cert_path(ca.clone())),
        };
        OptsBuilder::from_opts(o).ssl_opts(ssl).into()
    }
}
