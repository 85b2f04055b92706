//! Encrypted tablespaces: the keys a user gives (a MySQL/Percona `keyring_file` keyring, a
//! MariaDB `file_key_management` key file), the tablespace keys they unlock from page 0, and
//! the decryption of a page.
//!
//! MySQL 8 / Percona Server: page 0 is never encrypted; after its extent descriptors it holds
//! the encryption info (`lCA`/`lCB`/`lCC`, the master key id, the server uuid, the tablespace
//! key and IV encrypted with the master key in AES-256-ECB, a CRC-32C of them). The master key
//! `INNODBKey-UUID-ID` comes from the keyring. Every other page has type ENCRYPTED (15) or
//! ENCRYPTED_RTREE (17), its 38-byte header in clear, the rest AES-256-CBC with the tablespace
//! key and IV; the last 32 bytes were encrypted a second time (MySQL's way with a length that
//! is no multiple of 16), so they are decrypted first. The page's own checksum is that of the
//! plain page: it validates once decrypted.
//!
//! MariaDB (`file_key_management`): page 0 holds the crypt data (magic, a 16-byte IV, the key
//! id) after its extent descriptors. The page key is the IV encrypted in AES-ECB with the key
//! file's key; a page is AES-128-CBC (the last partial block XORed with the encrypted IV) or
//! AES-128-CTR with the IV (space id, page number, LSN). full_crc32: bytes 26..S-4 encrypted,
//! the key version at 0, the CRC-32C at S-4 computed over the encrypted page. Older layout:
//! bytes 38..S-8 encrypted, the key version at 26 and a CRC-32 of the encrypted page at 30.
//! The cipher mode is a server setting not kept in the file: both are tried, and the one whose
//! plain page checks (LSN trailer and space id, or checksum) is kept.
//!
//! Pure functions over bytes; [`resolve`] reads pages through the closure it is given.

use crate::checksum;
use crate::page::{be16, be32, be64, page_type, page_type_name};
use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit, KeyIvInit, StreamCipher};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why keys cannot be read or do not decrypt a tablespace. Each message names the file.
#[derive(Debug, thiserror::Error)]
pub enum CryptError {
    /// The key file cannot be read.
    #[error("cannot read key file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The key file is not in the format its flag names.
    #[error("{}: {reason}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to give instead.
        reason: String,
    },
    /// No page of an encrypted tablespace could be decrypted with the keys given.
    #[error("{0}")]
    Keys(String),
}

/// A MySQL keyring_file key.
#[derive(Clone, PartialEq, Eq)]
struct KeyringKey {
    id: String,
    key: Vec<u8>,
}

/// The keys a user gave.
#[derive(Clone, Default)]
pub struct Keys {
    keyring: Vec<KeyringKey>,
    keyring_path: Option<PathBuf>,
    file_keys: BTreeMap<u32, Vec<u8>>,
    key_file_path: Option<PathBuf>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Key bytes are never shown.
        f.debug_struct("Keys")
            .field("keyring", &self.keyring_path)
            .field("keyring_keys", &self.keyring.len())
            .field("key_file", &self.key_file_path)
            .field("key_file_ids", &self.file_keys.keys().collect::<Vec<_>>())
            .finish()
    }
}

const KEYRING_V1: &[u8] = b"Keyring file version:1.0";
const KEYRING_V2: &[u8] = b"Keyring file version:2.0";
/// MySQL's keyring_file obfuscation of key bytes in memory and in the file.
const OBFUSCATE: &[u8] = b"*305=Ljt0*!@$Hnm(*-9-w;:";

/// The keys of a MySQL/Percona `keyring_file` keyring (format 1.0 or 2.0, 64-bit
/// little-endian lengths as x86-64 and ARM64 servers write them): (key id, key bytes).
pub fn parse_keyring(data: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let body = if data.starts_with(KEYRING_V2) {
        if data.len() < KEYRING_V2.len() + 35 || &data[data.len() - 35..data.len() - 32] != b"EOF" {
            return Err("a keyring_file 2.0 keyring ends with EOF and a SHA-256 digest; this one does not (truncated?)".into());
        }
        let body = &data[KEYRING_V2.len()..data.len() - 35];
        use sha2::Digest;
        if sha2::Sha256::digest(body).as_slice() != &data[data.len() - 32..] {
            return Err(
                "its SHA-256 digest does not match its keys: the keyring is damaged or was edited"
                    .into(),
            );
        }
        body
    } else if data.starts_with(KEYRING_V1) {
        if !data.ends_with(b"EOF") {
            return Err(
                "a keyring_file 1.0 keyring ends with EOF; this one does not (truncated?)".into(),
            );
        }
        &data[KEYRING_V1.len()..data.len() - 3]
    } else {
        return Err("not a MySQL keyring_file keyring (it starts with \"Keyring file version:2.0\" or 1.0): give the file of keyring_file_data".into());
    };
    let mut keys = Vec::new();
    let mut pos = 0usize;
    let le =
        |at: usize| -> u64 { u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes")) };
    while pos < body.len() {
        let bad = |what: &str| format!("damaged key record at byte {}: {what}", pos + 24);
        if pos + 40 > body.len() {
            return Err(bad("shorter than its header"));
        }
        let pod = le(pos) as usize;
        let lens: Vec<usize> = (1..5).map(|i| le(pos + 8 * i) as usize).collect();
        let need = lens
            .iter()
            .try_fold(40usize, |a, &l| a.checked_add(l))
            .ok_or_else(|| bad("lengths overflow"))?;
        if pod < need || !pod.is_multiple_of(8) || pod > body.len() - pos {
            return Err(bad("lengths do not add up"));
        }
        let mut at = pos + 40;
        let mut field = |n: usize| {
            let f = &body[at..at + n];
            at += n;
            f
        };
        let id = String::from_utf8_lossy(field(lens[0])).into_owned();
        let _key_type = field(lens[1]);
        let _user = field(lens[2]);
        let key: Vec<u8> = field(lens[3])
            .iter()
            .zip(OBFUSCATE.iter().cycle())
            .map(|(b, m)| b ^ m)
            .collect();
        keys.push((id, key));
        pos += pod;
    }
    Ok(keys)
}

/// The keys of a MariaDB `file_key_management` key file: `id;hexkey` lines (16, 24 or 32
/// bytes), `#` comments.
pub fn parse_key_file(text: &str) -> Result<BTreeMap<u32, Vec<u8>>, String> {
    let mut keys = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |what: &str| format!("line {}: {what} (expected `id;hexkey`)", n + 1);
        let (id, hex) = line.split_once(';').ok_or_else(|| bad("no `;`"))?;
        let id: u32 = id
            .trim()
            .parse()
            .ok()
            .filter(|&i| i > 0)
            .ok_or_else(|| bad("the key id is not a positive number"))?;
        let hex = hex.trim();
        let key = decode_hex(hex).ok_or_else(|| bad("the key is not hexadecimal"))?;
        if ![16, 24, 32].contains(&key.len()) {
            return Err(bad(
                "a key is 32, 48 or 64 hex digits (AES-128, 192 or 256)",
            ));
        }
        if keys.insert(id, key).is_some() {
            return Err(bad("the key id is given twice"));
        }
    }
    if keys.is_empty() {
        return Err("no key in it (expected `id;hexkey` lines)".into());
    }
    Ok(keys)
}

/// Bytes of a hexadecimal string (None when it is not one).
pub(crate) fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A key file encrypted as MariaDB's `file_key_management_filekey` expects: OpenSSL's
/// `enc -aes-256-cbc -md sha1` format (`Salted__`, 8 bytes of salt, AES-256-CBC with PKCS#7
/// padding; key and IV from EVP_BytesToKey with SHA-1, one round). Returns the plain text.
pub fn decrypt_key_file(data: &[u8], password: &[u8]) -> Result<Vec<u8>, String> {
    use sha1::Digest;
    if data.len() < 32 || !data.starts_with(b"Salted__") || !(data.len() - 16).is_multiple_of(16) {
        return Err("not an OpenSSL-encrypted key file (`Salted__`, then a multiple of 16 bytes): give the plain key file with --key-file alone".into());
    }
    let salt = &data[8..16];
    let mut kiv = Vec::with_capacity(60);
    let mut prev: Vec<u8> = Vec::new();
    while kiv.len() < 48 {
        let mut h = sha1::Sha1::new();
        h.update(&prev);
        h.update(password);
        h.update(salt);
        prev = h.finalize().to_vec();
        kiv.extend_from_slice(&prev);
    }
    let key: [u8; 32] = kiv[..32].try_into().expect("32 bytes");
    let iv: [u8; 16] = kiv[32..48].try_into().expect("16 bytes");
    let mut plain = data[16..].to_vec();
    cbc_decrypt(&key, &iv, &mut plain);
    // PKCS#7 padding: 1 to 16 bytes, each the count.
    let pad = *plain.last().expect("at least one block") as usize;
    if !(1..=16).contains(&pad)
        || plain[plain.len() - pad..]
            .iter()
            .any(|&b| b as usize != pad)
    {
        return Err("the password does not decrypt it (bad padding): wrong --key-file-key?".into());
    }
    plain.truncate(plain.len() - pad);
    if std::str::from_utf8(&plain).is_err() {
        return Err("the password does not decrypt it (not text): wrong --key-file-key?".into());
    }
    Ok(plain)
}

impl Keys {
    /// Whether no key was given.
    pub fn is_empty(&self) -> bool {
        self.keyring.is_empty() && self.file_keys.is_empty()
    }

    /// Adds the keys of a MySQL/Percona keyring_file keyring.
    pub fn read_keyring(&mut self, path: &Path) -> Result<(), CryptError> {
        let data = std::fs::read(path).map_err(|source| CryptError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let keys = parse_keyring(&data).map_err(|reason| CryptError::Format {
            path: path.to_path_buf(),
            reason: format!("--keyring: {reason}"),
        })?;
        self.keyring
            .extend(keys.into_iter().map(|(id, key)| KeyringKey { id, key }));
        self.keyring_path = Some(path.to_path_buf());
        Ok(())
    }

    /// Adds the keys of a MariaDB file_key_management key file, decrypted with `password`
    /// first when given.
    pub fn read_key_file(
        &mut self,
        path: &Path,
        password: Option<&[u8]>,
    ) -> Result<(), CryptError> {
        let data = std::fs::read(path).map_err(|source| CryptError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let format = |reason: String| CryptError::Format {
            path: path.to_path_buf(),
            reason: format!("--key-file: {reason}"),
        };
        let text =
            match password {
                Some(p) => decrypt_key_file(&data, p).map_err(format)?,
                None if data.starts_with(b"Salted__") => return Err(format(
                    "it is encrypted (OpenSSL `Salted__`): give its password with --key-file-key"
                        .into(),
                )),
                None => data,
            };
        let text = String::from_utf8(text).map_err(|_| format("not text".into()))?;
        self.file_keys = parse_key_file(&text).map_err(format)?;
        self.key_file_path = Some(path.to_path_buf());
        Ok(())
    }

    fn keyring_name(&self) -> String {
        self.keyring_path
            .as_ref()
            .map_or("no --keyring given".into(), |p| p.display().to_string())
    }

    fn key_file_name(&self) -> String {
        self.key_file_path
            .as_ref()
            .map_or("no --key-file given".into(), |p| p.display().to_string())
    }
}

/// How a page is encrypted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// MySQL 8 / Percona keyring encryption.
    Mysql,
    /// MariaDB, full_crc32 layout.
    MariadbFullCrc32,
    /// MariaDB, the older layout (crc32/innodb checksums).
    Mariadb,
}

/// The cipher mode of MariaDB pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Cbc,
    Ctr,
}

/// The key of one tablespace, enough to decrypt any of its pages.
#[derive(Clone, PartialEq, Eq)]
pub struct PageKey {
    /// The tablespace id.
    pub space: u32,
    /// How its pages are encrypted.
    pub scheme: Scheme,
    key: [u8; 32],
    iv: [u8; 16],
    mode: Mode,
    /// Where the key came from, for messages: "key 1 of FILE", "master key NAME of FILE".
    origin: String,
}

impl std::fmt::Debug for PageKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageKey")
            .field("space", &self.space)
            .field("scheme", &self.scheme)
            .finish_non_exhaustive()
    }
}

/// The offset of the encryption info on page 0 (MySQL; MariaDB's is 38 bytes later): after
/// the FSP header and the extent descriptors of the first extent group.
pub fn info_offset(page_size: usize) -> usize {
    let extent = if page_size <= 16384 {
        (1 << 20) / page_size
    } else {
        64
    };
    150 + (page_size / extent) * (24 + extent / 4)
}

/// MariaDB's crypt data magic.
const CRYPT_MAGIC: [u8; 6] = [b's', 0x0E, 0x0C, b'R', b'E', b't'];

/// What page 0 says about encryption.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpaceInfo {
    /// MySQL encryption info: the master key's name and the encrypted key, IV and checksum.
    Mysql {
        /// The keyring key that encrypts the tablespace key.
        master_key: String,
        /// Master key id 0: the default key of MySQL 8 (before a master key was made).
        default_key: bool,
        /// Tablespace key and IV, encrypted.
        key_info: [u8; 64],
        /// CRC-32C of them, plain.
        crc: u32,
    },
    /// MariaDB crypt data (type 1: encrypted).
    Mariadb {
        /// The key id in the key file.
        key_id: u32,
        /// The tablespace's IV.
        iv: [u8; 16],
    },
}

/// The encryption info on `page0` (page 0 of a tablespace of `page_size` bytes), if any.
pub fn space_info(page0: &[u8], page_size: usize) -> Option<SpaceInfo> {
    let off = info_offset(page_size);
    if page0.len() < page_size || off + 38 + 27 > page0.len() {
        return None;
    }
    let m = &page0[off..];
    if matches!(&m[..3], b"lCA" | b"lCB" | b"lCC") {
        let v = m[2];
        let id = be32(m, 3);
        let mut p = 7;
        if v != b'C' && be32(m, 7) == 0 {
            p += 4; // 5.7.11: the key id took 8 bytes
        }
        let uuid = if v == b'A' {
            None
        } else {
            let u = String::from_utf8_lossy(&m[p..p + 36]).into_owned();
            p += 36;
            Some(u)
        };
        let key_info: [u8; 64] = m[p..p + 64].try_into().ok()?;
        let crc = be32(m, p + 64);
        let master_key = match uuid {
            Some(u) => format!("INNODBKey-{u}-{id}"),
            None => format!("INNODBKey-{id}"),
        };
        return Some(SpaceInfo::Mysql {
            master_key,
            default_key: v == b'C' && id == 0,
            key_info,
            crc,
        });
    }
    let m = &page0[off + 38..];
    if m[..6] == CRYPT_MAGIC && m[6] == 1 && m[7] == 16 {
        return Some(SpaceInfo::Mariadb {
            key_id: be32(m, 8 + 16 + 4),
            iv: m[8..24].try_into().ok()?,
        });
    }
    None
}

fn aes_ecb(key: &[u8], block: &mut [u8; 16], encrypt: bool) -> Option<()> {
    use aes::cipher::generic_array::GenericArray;
    let b = GenericArray::from_mut_slice(block);
    match key.len() {
        16 => {
            let c = aes::Aes128::new_from_slice(key).ok()?;
            if encrypt {
                c.encrypt_block(b)
            } else {
                c.decrypt_block(b)
            }
        }
        24 => {
            let c = aes::Aes192::new_from_slice(key).ok()?;
            if encrypt {
                c.encrypt_block(b)
            } else {
                c.decrypt_block(b)
            }
        }
        32 => {
            let c = aes::Aes256::new_from_slice(key).ok()?;
            if encrypt {
                c.encrypt_block(b)
            } else {
                c.decrypt_block(b)
            }
        }
        _ => return None,
    }
    Some(())
}

/// MySQL 8's default master key (master key id 0 of encryption info version 3).
const DEFAULT_MASTER_KEY: &[u8] = b"DefaultMasterKey";

/// The key of a tablespace whose page 0 holds `info`, from `keys`; `Err` says why not.
pub fn space_key(
    info: &SpaceInfo,
    space: u32,
    full_crc32: bool,
    keys: &Keys,
) -> Result<PageKey, String> {
    match info {
        SpaceInfo::Mysql {
            master_key,
            default_key,
            key_info,
            crc,
        } => {
            let mk: Vec<u8> = if *default_key {
                let mut k = DEFAULT_MASTER_KEY.to_vec();
                k.resize(32, 0);
                k
            } else if keys.keyring_path.is_none() {
                return Err(format!(
                    "space {space} is encrypted by MySQL with master key {master_key}: give its keyring_file keyring with --keyring"
                ));
            } else {
                keys.keyring
                    .iter()
                    .find(|k| &k.id == master_key)
                    .map(|k| k.key.clone())
                    .ok_or_else(|| {
                        format!(
                            "the keyring {} has no master key {master_key}, which encrypts the key of space {space}{}",
                            keys.keyring_name(),
                            if keys.keyring.is_empty() { String::new() } else {
                                format!(" (it has: {})", keys.keyring.iter().map(|k| k.id.as_str()).collect::<Vec<_>>().join(", "))
                            }
                        )
                    })?
            };
            let mut plain = *key_info;
            for b in plain.chunks_exact_mut(16) {
                let b: &mut [u8; 16] = b.try_into().expect("16 bytes");
                aes_ecb(&mk, b, false).ok_or_else(|| {
                    format!(
                        "master key {master_key} is {} bytes long, not an AES key",
                        mk.len()
                    )
                })?;
            }
            if checksum::crc32c(&plain) != *crc {
                return Err(format!(
                    "master key {master_key} of the keyring {} does not decrypt the key of space {space} (its checksum does not match): wrong keyring, or one from another server",
                    keys.keyring_name()
                ));
            }
            Ok(PageKey {
                space,
                scheme: Scheme::Mysql,
                key: plain[..32].try_into().expect("32 bytes"),
                iv: plain[32..48].try_into().expect("16 bytes"),
                mode: Mode::Cbc,
                origin: if *default_key {
                    "MySQL's default master key".into()
                } else {
                    format!(
                        "master key {master_key} of the keyring {}",
                        keys.keyring_name()
                    )
                },
            })
        }
        SpaceInfo::Mariadb { key_id, iv } => {
            if keys.key_file_path.is_none() {
                return Err(format!(
                    "space {space} is encrypted by MariaDB with key {key_id}: give the file_key_management key file with --key-file"
                ));
            }
            let k = keys.file_keys.get(key_id).ok_or_else(|| {
                format!(
                    "the key file {} has no key {key_id}, which encrypts space {space}",
                    keys.key_file_name()
                )
            })?;
            // The page key: the tablespace's IV encrypted with the key file's key.
            let mut local = *iv;
            aes_ecb(k, &mut local, true).expect("key lengths checked when read");
            let mut key = [0u8; 32];
            key[..16].copy_from_slice(&local);
            Ok(PageKey {
                space,
                scheme: if full_crc32 {
                    Scheme::MariadbFullCrc32
                } else {
                    Scheme::Mariadb
                },
                key,
                iv: [0; 16],
                mode: Mode::Cbc,
                origin: format!("key {key_id} of the key file {}", keys.key_file_name()),
            })
        }
    }
}

/// Whether the page at `o` of `buf` looks like an encrypted page of some scheme, from its
/// header alone (MySQL: type ENCRYPTED with its original type, or ENCRYPTED_RTREE) or its
/// checksum over the encrypted bytes (MariaDB). Returns the scheme and the page size (MySQL:
/// `None`, the size of its tablespace's page 0).
pub fn candidate(buf: &[u8], o: usize, sizes: &[usize]) -> Option<(Scheme, Option<usize>)> {
    if o + 38 > buf.len() || be64(buf, o + 16) == 0 {
        return None;
    }
    let ptype = be16(buf, o + 24);
    match ptype {
        15 if be16(buf, o + 26) == 0
            && be32(buf, o + 30) == 0
            && page_type_name(be16(buf, o + 28)).is_some() =>
        {
            return Some((Scheme::Mysql, None));
        }
        17 if be64(buf, o + 26) == 0 => return Some((Scheme::Mysql, None)),
        _ => {}
    }
    if page_type_name(ptype).is_none() || ptype & 0x8000 != 0 {
        return None;
    }
    let version = be32(buf, o);
    let lsn_lo = be32(buf, o + 20);
    for &s in sizes {
        if o + s > buf.len() {
            break;
        }
        let page = &buf[o..o + s];
        if version != 0 && checksum::is_full_crc32(page) {
            return Some((Scheme::MariadbFullCrc32, Some(s)));
        }
        if be32(page, s - 4) == lsn_lo
            && be32(page, 26) != 0
            && be32(page, 30) == checksum::crc32(page)
        {
            return Some((Scheme::Mariadb, Some(s)));
        }
    }
    None
}

/// Decrypts `page` (one whole page of its tablespace) in place with `key`; whether the plain
/// page checks (MySQL and the older MariaDB layout: its checksum; full_crc32: the LSN trailer
/// and the space id). A page that does not check is left as garbage: the caller drops it.
/// The plain page is what the server would write unencrypted: MySQL's original page type
/// back, MariaDB's key version fields zeroed and a full_crc32 page's checksum recomputed.
pub fn decrypt_page(key: &PageKey, page: &mut [u8]) -> bool {
    let s = page.len();
    if s < 512 {
        return false;
    }
    match key.scheme {
        Scheme::Mysql => {
            let ptype = be16(page, 24);
            let data = &mut page[38..];
            let n = data.len();
            let main = n / 16 * 16;
            if main != n {
                cbc_decrypt(&key.key, &key.iv, &mut data[n - 32..]);
            }
            cbc_decrypt(&key.key, &key.iv, &mut data[..main]);
            let original = if ptype == 17 {
                page_type::RTREE
            } else {
                be16(page, 28)
            };
            page[24..26].copy_from_slice(&original.to_be_bytes());
            page[28..30].fill(0);
            checksum::verify(page).is_some()
        }
        Scheme::MariadbFullCrc32 | Scheme::Mariadb => {
            let full = key.scheme == Scheme::MariadbFullCrc32;
            let (from, to) = if full { (26, s - 4) } else { (38, s - 8) };
            let mut iv = [0u8; 16];
            iv[..4].copy_from_slice(&key.space.to_le_bytes());
            iv[4..8].copy_from_slice(&be32(page, 4).to_le_bytes());
            iv[8..].copy_from_slice(&be64(page, 16).to_le_bytes());
            let enc = page[from..to].to_vec();
            for mode in [key.mode, other(key.mode)] {
                page[from..to].copy_from_slice(&enc);
                maria_decrypt(&key.key[..16], &iv, mode, &mut page[from..to]);
                let ok = if full {
                    be32(page, s - 8) == be32(page, 20) && be32(page, 34) == key.space
                } else {
                    page[26..34].fill(0);
                    checksum::verify(page).is_some()
                };
                if ok {
                    if full {
                        page[..4].fill(0);
                        let c = checksum::full_crc32(page);
                        page[s - 4..].copy_from_slice(&c.to_be_bytes());
                    }
                    return true;
                }
            }
            false
        }
    }
}

fn other(m: Mode) -> Mode {
    match m {
        Mode::Cbc => Mode::Ctr,
        Mode::Ctr => Mode::Cbc,
    }
}

/// AES-256-CBC decryption without padding of whole blocks (MySQL's tablespace pages).
fn cbc_decrypt(key: &[u8; 32], iv: &[u8; 16], data: &mut [u8]) {
    use aes::cipher::BlockDecryptMut;
    let mut d = cbc::Decryptor::<aes::Aes256>::new(key.into(), iv.into());
    for b in data.chunks_exact_mut(16) {
        d.decrypt_block_mut(aes::cipher::generic_array::GenericArray::from_mut_slice(b));
    }
}

/// MariaDB's my_aes_crypt decryption of a page body with a 16-byte page key: CBC without
/// padding, the last partial block XORed with the IV encrypted in ECB; or CTR.
fn maria_decrypt(key: &[u8], iv: &[u8; 16], mode: Mode, data: &mut [u8]) {
    match mode {
        Mode::Ctr => {
            let mut c = ctr::Ctr128BE::<aes::Aes128>::new(key.into(), iv.into());
            c.apply_keystream(data);
        }
        Mode::Cbc => {
            use aes::cipher::BlockDecryptMut;
            let n = data.len() / 16 * 16;
            let mut d = cbc::Decryptor::<aes::Aes128>::new(key.into(), iv.into());
            for b in data[..n].chunks_exact_mut(16) {
                d.decrypt_block_mut(aes::cipher::generic_array::GenericArray::from_mut_slice(b));
            }
            if n < data.len() {
                let mut mask = *iv;
                aes_ecb(key, &mut mask, true).expect("16-byte key");
                for (b, m) in data[n..].iter_mut().zip(mask) {
                    *b ^= m;
                }
            }
        }
    }
}

/// A page that looked encrypted during a scan, decrypted or not by [`resolve`].
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Source index.
    pub src: usize,
    /// Offset in the source.
    pub offset: u64,
    /// Its scheme.
    pub scheme: Scheme,
    /// Page size (MariaDB: from its checksum; MySQL: that of its tablespace's page 0).
    pub size: Option<usize>,
}

/// A page 0 found by the scan: where, its page size, its tablespace and layout.
#[derive(Clone, Debug)]
pub struct Page0 {
    /// Source index.
    pub src: usize,
    /// Offset in the source.
    pub offset: u64,
    /// Page size.
    pub size: usize,
    /// Tablespace id.
    pub space: u32,
    /// full_crc32 flags.
    pub full_crc32: bool,
}

/// What [`resolve`] made of the candidates.
#[derive(Debug, Default)]
pub struct Resolved {
    /// Pages decrypted.
    pub pages: u64,
    /// Problems that do not stop the work.
    pub warnings: Vec<String>,
}

/// Reads `buf.len()` bytes at an offset of a source (its index): the bytes read.
pub type ReadAt<'a> = dyn Fn(usize, u64, &mut [u8]) -> std::io::Result<usize> + 'a;

/// Gets a page decrypted: source index, offset, the plain bytes, its key.
pub type OnPage<'a> = dyn FnMut(usize, u64, &[u8], &Arc<PageKey>) + 'a;

/// A tablespace's key, its page size, whether it is full_crc32.
type SpaceKey = (Arc<PageKey>, usize, bool);

/// Decrypts the `candidates` with the tablespace keys `keys` unlocks from the `page0s`;
/// `read(src, offset, buf)` reads a source, `names` names them; `on_page(src, offset, plain,
/// key)` gets each page decrypted (its bytes are not kept). Fails when encrypted pages were
/// found but none could be decrypted (a wrong or missing key: the message says which); when
/// some were, the others are named in warnings.
pub fn resolve(
    keys: &Keys,
    page0s: &[Page0],
    candidates: &[Candidate],
    names: &[String],
    read: &ReadAt<'_>,
    on_page: &mut OnPage<'_>,
) -> Result<Resolved, CryptError> {
    let mut r = Resolved::default();
    let mut problems: Vec<String> = Vec::new();
    // Tablespace keys by space id (the first page 0 of a space wins).
    let mut space_keys: HashMap<u32, SpaceKey> = HashMap::new();
    let mut buf = Vec::new();
    for p in page0s {
        if space_keys.contains_key(&p.space) {
            continue;
        }
        buf.resize(p.size, 0);
        if read(p.src, p.offset, &mut buf).ok() != Some(p.size) {
            continue;
        }
        let Some(info) = space_info(&buf, p.size) else {
            continue;
        };
        match space_key(&info, p.space, p.full_crc32, keys) {
            Ok(k) => {
                space_keys.insert(p.space, (Arc::new(k), p.size, p.full_crc32));
            }
            Err(e) => problems.push(format!(
                "{e} (page 0 at offset {} of {})",
                p.offset, names[p.src]
            )),
        }
    }
    // full_crc32 pages keep their space id encrypted: the key of the nearest page 0 before
    // the page in its source is tried first, then the other full_crc32 keys of its size.
    let mut full: Vec<&SpaceKey> = space_keys
        .values()
        .filter(|k| k.0.scheme == Scheme::MariadbFullCrc32)
        .collect();
    full.sort_by_key(|k| k.0.space);
    let mut anchors: Vec<(usize, u64, u32)> = page0s
        .iter()
        .filter(|p| full.iter().any(|k| k.0.space == p.space))
        .map(|p| (p.src, p.offset, p.space))
        .collect();
    anchors.sort_unstable();
    let mut failed: BTreeMap<u32, (u64, String, String)> = BTreeMap::new();
    let mut orphans: BTreeMap<&'static str, u64> = BTreeMap::new();
    for c in candidates {
        let keys_to_try: Vec<&SpaceKey> = match c.scheme {
            Scheme::MariadbFullCrc32 => {
                let at = anchors.partition_point(|a| (a.0, a.1) <= (c.src, c.offset));
                let near = at
                    .checked_sub(1)
                    .map(|i| anchors[i])
                    .filter(|a| a.0 == c.src)
                    .map(|a| a.2);
                let fits = |k: &&SpaceKey| Some(k.1) == c.size;
                let first = full
                    .iter()
                    .copied()
                    .filter(fits)
                    .find(|k| Some(k.0.space) == near);
                first
                    .into_iter()
                    .chain(
                        full.iter()
                            .copied()
                            .filter(fits)
                            .filter(|k| Some(k.0.space) != near),
                    )
                    .collect()
            }
            _ => {
                let mut h = [0u8; 38];
                if read(c.src, c.offset, &mut h).ok() != Some(38) {
                    continue;
                }
                space_keys
                    .get(&be32(&h, 34))
                    .filter(|k| k.0.scheme == c.scheme)
                    .into_iter()
                    .collect()
            }
        };
        let Some(blamed) = keys_to_try.first() else {
            *orphans.entry(scheme_name(c.scheme)).or_default() += 1;
            continue;
        };
        let mut done = false;
        for (k, size, _) in &keys_to_try {
            buf.resize(*size, 0);
            if read(c.src, c.offset, &mut buf).ok() != Some(*size) {
                break;
            }
            if decrypt_page(k, &mut buf) {
                on_page(c.src, c.offset, &buf, k);
                r.pages += 1;
                done = true;
                break;
            }
        }
        if !done {
            failed
                .entry(blamed.0.space)
                .or_insert((0, names[c.src].clone(), blamed.0.origin.clone()))
                .0 += 1;
        }
    }
    for (space, (n, src, origin)) in &failed {
        problems.push(format!(
            "{n} encrypted page(s) of space {space} in {src} do not decrypt with {origin} (a wrong key, or damaged pages)"
        ));
    }
    for (scheme, n) in orphans {
        r.warnings.push(format!(
            "{n} {scheme} encrypted page(s) not decrypted: the page 0 of their tablespace (which holds its key) was not found in the sources"
        ));
    }
    if r.pages == 0 && !problems.is_empty() {
        return Err(CryptError::Keys(format!(
            "no encrypted page could be decrypted: {}",
            problems.join("; ")
        )));
    }
    r.warnings.extend(problems);
    Ok(r)
}

fn scheme_name(s: Scheme) -> &'static str {
    match s {
        Scheme::Mysql => "MySQL",
        Scheme::MariadbFullCrc32 | Scheme::Mariadb => "MariaDB",
    }
}

/// What an encrypted page 0 asks for, for a warning when no key was given.
pub fn needs(info: &SpaceInfo) -> String {
    match info {
        SpaceInfo::Mysql { master_key, .. } => {
            format!("MySQL keyring encryption, master key {master_key}: give the keyring_file keyring with --keyring")
        }
        SpaceInfo::Mariadb { key_id, .. } => {
            format!("MariaDB encryption, key id {key_id}: give the file_key_management key file with --key-file")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_offset_matches_the_servers() {
        // 16K: 150 + 256 descriptors of 40 bytes (the real MySQL 8 file has lCC at 10390).
        assert_eq!(info_offset(16384), 10390);
        assert_eq!(info_offset(4096), 150 + 16 * 88);
        assert_eq!(info_offset(65536), 150 + 1024 * 40);
    }

    #[test]
    fn key_file_lines() {
        let k = parse_key_file("# c\n1;000102030405060708090a0b0c0d0e0f\n\n 7 ; 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n").unwrap();
        assert_eq!(k[&1][15], 15);
        assert_eq!(k[&7].len(), 32);
        for (text, msg) in [
            ("1:00", "line 1: no `;`"),
            ("x;00", "line 1: the key id is not a positive number"),
            ("1;0g", "line 1: the key is not hexadecimal"),
            ("1;0011", "line 1: a key is 32, 48 or 64 hex digits"),
            ("", "no key in it"),
        ] {
            let e = parse_key_file(text).unwrap_err();
            assert!(e.starts_with(msg), "{text:?}: {e}");
        }
    }

    #[test]
    fn keyring_damage_is_named() {
        assert!(parse_keyring(b"hello")
            .unwrap_err()
            .contains("not a MySQL keyring_file"));
        let mut d = b"Keyring file version:2.0".to_vec();
        d.extend(b"EOF");
        d.extend([0u8; 32]);
        assert!(parse_keyring(&d)
            .unwrap_err()
            .contains("digest does not match"));
        let mut v1 = b"Keyring file version:1.0".to_vec();
        v1.extend([200u8, 0, 0, 0, 0, 0, 0, 0]);
        v1.extend([0u8; 32]);
        v1.extend(b"EOF");
        assert!(parse_keyring(&v1)
            .unwrap_err()
            .contains("damaged key record"));
    }

    #[test]
    fn maria_cbc_tail_and_ctr_roundtrip() {
        use aes::cipher::BlockEncryptMut;
        let key = [7u8; 16];
        let iv = [3u8; 16];
        let plain: Vec<u8> = (0..50u8).collect();
        // CBC of the 3 whole blocks, then the tail XOR the ECB-encrypted IV.
        let mut enc = plain.clone();
        let mut e = cbc::Encryptor::<aes::Aes128>::new((&key).into(), (&iv).into());
        for b in enc[..48].chunks_exact_mut(16) {
            e.encrypt_block_mut(aes::cipher::generic_array::GenericArray::from_mut_slice(b));
        }
        let mut mask = iv;
        aes_ecb(&key, &mut mask, true).unwrap();
        enc[48] ^= mask[0];
        enc[49] ^= mask[1];
        maria_decrypt(&key, &iv, Mode::Cbc, &mut enc);
        assert_eq!(enc, plain);
        let mut c = plain.clone();
        maria_decrypt(&key, &iv, Mode::Ctr, &mut c);
        assert_ne!(c, plain);
        maria_decrypt(&key, &iv, Mode::Ctr, &mut c);
        assert_eq!(c, plain);
    }
}
