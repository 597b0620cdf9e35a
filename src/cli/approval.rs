//! One-time approval tokens for `hook --rewrite`: when the agent's user
//! approves an `ask`, the rewritten command runs inside safe-exec, which must
//! then run it confined without asking again, and only that command.
//!
//! A token is `v1.EXPIRY.NONCE.MAC`, where MAC is HMAC-SHA256 keyed by a
//! secret in the state directory (`{state}/approval.key`, mode 0600; the
//! state directory is in every built-in profile's `deny_read`, so a confined
//! command cannot read it, and the file tools are refused there) over the
//! command text, the working directory, the session, the expiry and the
//! nonce. Redeeming checks the MAC in constant time and the expiry, then
//! records the nonce (`{state}/approvals/NONCE`, created exclusively), so
//! each token runs at most once.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// How long an approval stays valid (the user answers the agent's prompt,
/// then the agent runs the command).
pub const TTL_SECONDS: u64 = 900;

fn random_hex(n: usize) -> Result<String, String> {
    let mut buf = vec![0u8; n];
    let mut filled = 0;
    while filled < n {
        // SAFETY: getrandom writes at most `n - filled` bytes into the
        // remaining part of a buffer we own.
        let r = unsafe {
            libc::getrandom(
                buf[filled..].as_mut_ptr().cast::<libc::c_void>(),
                n - filled,
                0,
            )
        };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("no random bytes: {e}"));
        }
        filled += usize::try_from(r).unwrap_or(0);
    }
    Ok(hex(&buf))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The key, created on first use.
fn key(state: &Path, create: bool) -> Result<Vec<u8>, String> {
    let path = state.join("approval.key");
    match std::fs::read_to_string(&path) {
        Ok(t) => unhex(t.trim())
            .filter(|k| k.len() >= 32)
            .ok_or_else(|| format!("{} is not a valid key", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
            std::fs::create_dir_all(state)
                .map_err(|e| format!("cannot create {}: {e}", state.display()))?;
            let k = random_hex(32)?;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match &mut f {
                Ok(f) => f
                    .write_all(k.as_bytes())
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
                // Another hook call created it meanwhile: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return key(state, false);
                }
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
            unhex(&k).ok_or_else(|| "bad key".into())
        }
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn mac(key: &[u8], text: &str, cwd: &Path, session: &str, expiry: u64, nonce: &str) -> HmacSha256 {
    // new_from_slice accepts any key length for HMAC.
    let mut m = match HmacSha256::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => unreachable_key(),
    };
    for part in [
        b"safe-exec approval v1".as_slice(),
        text.as_bytes(),
        cwd.as_os_str().as_encoded_bytes(),
        session.as_bytes(),
        expiry.to_string().as_bytes(),
        nonce.as_bytes(),
    ] {
        m.update(&(part.len() as u64).to_le_bytes());
        m.update(part);
    }
    m
}

#[cold]
fn unreachable_key() -> ! {
    // HMAC takes keys of every length; this cannot happen.
    std::process::abort()
}

/// Issues a token for running `text` in `cwd` in `session`.
pub fn issue(state: &Path, text: &str, cwd: &Path, session: &str) -> Result<String, String> {
    let k = key(state, true)?;
    let expiry = now() + TTL_SECONDS;
    let nonce = random_hex(16)?;
    let tag = mac(&k, text, cwd, session, expiry, &nonce)
        .finalize()
        .into_bytes();
    Ok(format!("v1.{expiry}.{nonce}.{}", hex(&tag)))
}

/// Redeems a token for `text` in `cwd` in `session`: `Ok` once, for the
/// exact command it was issued for, before it expires.
pub fn redeem(
    state: &Path,
    token: &str,
    text: &str,
    cwd: &Path,
    session: &str,
) -> Result<(), String> {
    let parts: Vec<&str> = token.split('.').collect();
    let [v, expiry, nonce, tag] = parts[..] else {
        return Err("the approval token is malformed".into());
    };
    if v != "v1" || nonce.len() != 32 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("the approval token is malformed".into());
    }
    let expiry: u64 = expiry
        .parse()
        .map_err(|_| "the approval token is malformed".to_string())?;
    let tag = unhex(tag).ok_or("the approval token is malformed")?;
    let k = key(state, false)?;
    mac(&k, text, cwd, session, expiry, nonce)
        .verify_slice(&tag)
        .map_err(|_| {
            "the approval token does not match this command, directory and session".to_string()
        })?;
    if now() > expiry {
        return Err("the approval token has expired".into());
    }
    let dir = state.join("approvals");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    prune(&dir);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join(nonce))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => "the approval token was already used".to_string(),
            _ => format!("cannot record the approval: {e}"),
        })
        .and_then(|mut f| {
            f.write_all(expiry.to_string().as_bytes())
                .map_err(|e| format!("cannot record the approval: {e}"))
        })
}

fn pending_name(k: &[u8], text: &str, cwd: &Path) -> String {
    let tag = mac(k, text, cwd, "pending", 0, "").finalize().into_bytes();
    hex(&tag)
}

/// Records that the agent's user is being asked, through the hook, to
/// approve `text` in `cwd` (Claude Code's `ask`). When safe-exec is also
/// the agent's shell, the command arrives there after the user approved;
/// [`take_pending`] then lets it run without asking again, once, within
/// [`TTL_SECONDS`]. Every way for a command to reach the shell goes through
/// the hook (which asks again), and a confined command cannot read or write
/// the state directory.
pub fn grant_pending(state: &Path, text: &str, cwd: &Path) -> Result<(), String> {
    let k = key(state, true)?;
    let dir = state.join("pending");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    prune(&dir);
    let path = dir.join(pending_name(&k, text, cwd));
    std::fs::write(&path, (now() + TTL_SECONDS).to_string())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Consumes a pending approval for `text` in `cwd` (see [`grant_pending`]).
pub fn take_pending(state: &Path, text: &str, cwd: &Path) -> bool {
    let Ok(k) = key(state, false) else {
        return false;
    };
    let path = state.join("pending").join(pending_name(&k, text, cwd));
    let valid = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .is_some_and(|exp| now() <= exp);
    // Removing it is what makes it single-use: only the one that removes it wins.
    valid && std::fs::remove_file(&path).is_ok()
}

/// Removes records of tokens that have expired (they cannot be redeemed
/// anyway).
fn prune(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let t = now();
    for e in rd.flatten() {
        let expired = std::fs::read_to_string(e.path())
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .is_some_and(|x| x + 60 < t);
        if expired {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_and_redeem_once() {
        let d = tempfile::tempdir().unwrap();
        let cwd = Path::new("/p");
        let t = issue(d.path(), "make deploy", cwd, "s1").unwrap();
        assert!(redeem(d.path(), &t, "make deploy x", cwd, "s1").is_err());
        assert!(redeem(d.path(), &t, "make deploy", Path::new("/q"), "s1").is_err());
        assert!(redeem(d.path(), &t, "make deploy", cwd, "s2").is_err());
        redeem(d.path(), &t, "make deploy", cwd, "s1").unwrap();
        let e = redeem(d.path(), &t, "make deploy", cwd, "s1").unwrap_err();
        assert!(e.contains("already used"), "{e}");
        // Pending approvals: once, for that text and directory.
        grant_pending(d.path(), "make deploy", cwd).unwrap();
        assert!(!take_pending(d.path(), "make deploy", Path::new("/q")));
        assert!(!take_pending(d.path(), "make deploy2", cwd));
        assert!(take_pending(d.path(), "make deploy", cwd));
        assert!(!take_pending(d.path(), "make deploy", cwd));
        // A forged MAC.
        let mut forged = t[..t.len() - 2].to_string();
        forged.push_str("00");
        assert!(redeem(d.path(), &forged, "make deploy", cwd, "s1").is_err());
    }
}
