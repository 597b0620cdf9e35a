//! The audit log: one JSON line per decision and one per execution result
//! (sharing an `id`), to a JSONL file and/or a syslog socket. Each line is
//! written with a single `write` on an `O_APPEND` descriptor, so concurrent
//! processes never interleave or lose lines. A sink that fails follows the
//! profile's `on_error`: `fail` refuses the command, `warn` complains and
//! runs it. The schema is documented in docs/audit.md.

pub use crate::sys::{redact, time};

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::Placeholders;

/// Version of the record layout (`"v"` in every record).
pub const SCHEMA_VERSION: u32 = 1;

pub use crate::config::sections::{AuditSection, OnError};

/// What in `a` (the candidate) is looser than `b` (the pinned profile).
pub fn loosens(a: &AuditSection, b: &AuditSection) -> Vec<String> {
    if b.enabled && a != b {
        vec!["[audit] differs from the pinned audit settings".into()]
    } else {
        Vec::new()
    }
}

/// A sink could not take a record.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file could not be opened or written (full disk, permissions).
    #[error(
        "audit log {path}: {err} (free space or fix permissions, or set [audit] on_error = \"warn\")"
    )]
    File {
        /// The file.
        path: String,
        /// The error.
        err: std::io::Error,
    },
    /// The syslog socket refused the record.
    #[error(
        "audit syslog socket {path}: {err} (is syslog/journald running? or empty [audit] syslog)"
    )]
    Syslog {
        /// The socket.
        path: String,
        /// The error.
        err: std::io::Error,
    },
}

/// The sinks of one run, resolved from the profile.
#[derive(Debug, Clone)]
pub struct Sinks {
    /// The JSONL file, if any.
    pub file: Option<PathBuf>,
    /// The syslog socket, if any.
    pub syslog: Option<PathBuf>,
    /// What failure does.
    pub on_error: OnError,
}

impl Sinks {
    /// The sinks of `cfg`, or `None` when auditing is off.
    pub fn new(cfg: &AuditSection, places: &Placeholders) -> Option<Sinks> {
        if !cfg.enabled {
            return None;
        }
        Some(Sinks {
            file: (!cfg.file.is_empty()).then(|| expand(&cfg.file, places)),
            syslog: (!cfg.syslog.is_empty()).then(|| expand(&cfg.syslog, places)),
            on_error: cfg.on_error,
        })
    }

    /// Writes one record to every sink; the errors of the sinks that failed.
    pub fn write(&self, record: &Value) -> Vec<AuditError> {
        let mut line = serde_json::to_vec(record).unwrap_or_default();
        line.push(b'\n');
        let deny = record.get("decision").and_then(Value::as_str) == Some("deny");
        self.write_line(&line, deny)
    }

    /// Writes one serialized record (`line`, ending in a newline) to every
    /// sink; `deny`: the record is a denial (syslog severity).
    pub fn write_line(&self, line: &[u8], deny: bool) -> Vec<AuditError> {
        let mut errs = Vec::new();
        if let Some(f) = &self.file
            && let Err(err) = append(f, line)
        {
            errs.push(AuditError::File {
                path: f.display().to_string(),
                err,
            });
        }
        if let Some(s) = &self.syslog
            && let Err(err) = syslog(s, deny, line.strip_suffix(b"\n").unwrap_or(line))
        {
            errs.push(AuditError::Syslog {
                path: s.display().to_string(),
                err,
            });
        }
        errs
    }
}

/// The fields of a JSON object, each value serialized, in key order (as a
/// `serde_json` object keeps them); not an object: none.
pub fn fields(object: Value) -> Vec<(String, Vec<u8>)> {
    match object {
        Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| (k, serde_json::to_vec(&v).unwrap_or_default()))
            .collect(),
        _ => Vec::new(),
    }
}

/// One record's line: `base`'s fields and the object `extra`'s, where
/// `extra` wins a key both have, in key order, ending in a newline. The
/// same bytes as merging `extra` into the object `base` came from and
/// serializing that (test `record_line_is_the_merged_object`), without
/// copying `base`'s values for every record.
pub fn record_line(base: &[(String, Vec<u8>)], extra: Value) -> Vec<u8> {
    let extra = fields(extra);
    let mut line = Vec::with_capacity(
        base.iter()
            .chain(&extra)
            .map(|(k, v)| k.len() + v.len() + 4)
            .sum::<usize>()
            + 2,
    );
    line.push(b'{');
    let (mut b, mut e) = (base.iter().peekable(), extra.iter().peekable());
    let mut first = true;
    loop {
        let next = match (b.peek(), e.peek()) {
            (Some(x), Some(y)) if x.0 < y.0 => b.next(),
            (Some(x), Some(y)) if x.0 == y.0 => {
                b.next();
                e.next()
            }
            (Some(_), None) => b.next(),
            (_, Some(_)) => e.next(),
            (None, None) => None,
        };
        let Some((k, v)) = next else { break };
        if !first {
            line.push(b',');
        }
        first = false;
        line.extend_from_slice(&serde_json::to_vec(k).unwrap_or_default());
        line.push(b':');
        line.extend_from_slice(v);
    }
    line.extend_from_slice(b"}\n");
    line
}

/// Placeholders in a sink path; no canonicalisation (the file may not exist).
fn expand(s: &str, p: &Placeholders) -> PathBuf {
    PathBuf::from(
        s.replace("{state}", &p.state.to_string_lossy())
            .replace("{home}", &p.home.to_string_lossy())
            .replace("{tmp}", &p.tmp.to_string_lossy())
            .replace("{cwd}", &p.cwd.to_string_lossy()),
    )
}

/// Appends `line` with one `write(2)` on an `O_APPEND` descriptor: the
/// kernel places each write at the end atomically, so lines from
/// concurrent processes never interleave. A short write (full disk) is an
/// error.
/// The directory is created (mode 700) only when the open says it is
/// missing: it exists at every run but the first.
fn append(path: &Path, line: &[u8]) -> std::io::Result<()> {
    let open = || {
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
    };
    let mut f = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)?;
            }
            open()?
        }
        other => other?,
    };
    let n = f.write(line)?;
    if n != line.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            format!("only {n} of {} bytes written", line.len()),
        ));
    }
    Ok(())
}

/// Sends the record to a syslog datagram socket as an RFC 3164 message
/// (`<PRI>safe-exec[PID]: JSON`), facility `authpriv`, severity warning for
/// denials and info otherwise.
fn syslog(path: &Path, deny: bool, json: &[u8]) -> std::io::Result<()> {
    let sock = UnixDatagram::unbound()?;
    let severity = if deny { 4 } else { 6 };
    let pri = 10 * 8 + severity;
    let mut msg = format!("<{pri}>safe-exec[{}]: ", std::process::id()).into_bytes();
    msg.extend_from_slice(json);
    sock.send_to(&msg, path)?;
    Ok(())
}

/// Reads the records of a JSONL audit file (unparsable lines are skipped).
pub fn read(path: &Path) -> std::io::Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect())
}

/// An id for one command's records: time, process id and a counter.
pub fn new_id(now_ms: u64) -> String {
    format!("{now_ms:x}-{:x}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn record_line_is_the_merged_object() {
        let base = json!({
            "v": 1, "id": "x-1", "raw": "git status \"q\" é\n", "cwd": "/w",
            "segments": [{"program": "git", "argv": ["git", "status"]}],
            "z": null, "agent": null,
        });
        let extras = [
            json!({}),
            json!({"kind": "decision", "decision": "deny", "reasons": ["a", "b"], "metadata": {}}),
            json!({"raw": "overridden", "zz": 1, "a": true, "id": "y"}),
            json!({"status": "ok", "exit_code": 0, "signal": null, "enforcement": {"landlock": "full"}}),
        ];
        for extra in extras {
            let mut merged = base.clone();
            if let (Some(m), Value::Object(x)) = (merged.as_object_mut(), extra.clone()) {
                m.extend(x);
            }
            let mut want = serde_json::to_vec(&merged).expect("json");
            want.push(b'\n');
            assert_eq!(
                String::from_utf8_lossy(&record_line(&fields(base.clone()), extra)),
                String::from_utf8_lossy(&want)
            );
        }
        // Nothing shared: the extra object alone.
        assert_eq!(
            record_line(&[], json!({"b": 2, "a": 1})),
            b"{\"a\":1,\"b\":2}\n"
        );
    }
}
