//! `--rewrite`: hands an allowed command back to the agent as a
//! `safe-exec -c` invocation of the original, so it also runs inside the
//! sandbox. The quoting must round-trip byte for byte: whatever shell the
//! agent runs the rewritten string with, safe-exec receives exactly the
//! string it just approved.

use std::path::Path;

/// Quotes `s` as one bash/POSIX-sh word. Single quotes keep every byte
/// literal (newlines, `$`, backslashes, `!`, non-ASCII); a single quote
/// itself is written as `'\''`. Always quoting keeps the rule trivially
/// checkable.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str(r"'\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// The rewritten command: `'EXE' [--profile 'P'] -c [--] 'ORIGINAL'`.
/// `--` is added when the original starts like an option, so it is never
/// read as one.
pub fn rewrite(exe: &Path, profile: Option<&str>, original: &str) -> String {
    let opts: Vec<(&str, &str)> = profile.map(|p| ("--profile", p)).into_iter().collect();
    rewrite_with(exe, &opts, original)
}

/// Like [`rewrite`], forwarding every decision-relevant option
/// (`--profile`, `--timeout`, `--session`, `--agent`) so the run is judged
/// and confined exactly as the hook judged it.
pub fn rewrite_with(exe: &Path, opts: &[(&str, &str)], original: &str) -> String {
    let mut out = quote(&exe.to_string_lossy());
    for (name, value) in opts {
        out.push(' ');
        out.push_str(name);
        out.push(' ');
        out.push_str(&quote(value));
    }
    out.push_str(" -c ");
    if original.starts_with('-') || original.starts_with('+') {
        out.push_str("-- ");
    }
    out.push_str(&quote(original));
    out
}

/// A fresh file name in the temp directory through which the rewritten
/// command hands the final working directory back to the agent's shell.
pub fn cwd_file(tmp: &Path) -> std::path::PathBuf {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    tmp.join(format!("safe-exec-cwd-{}-{nonce:x}", std::process::id()))
}

/// Like [`rewrite_with`], and `cd` carries over: safe-exec writes the
/// directory the command ended in to `cwd_file` (`--cwd-out`), and the
/// agent's shell changes there afterwards and removes the file, keeping the
/// command's exit status:
///
/// `'EXE' --cwd-out 'F' OPTS -c 'ORIGINAL'; __safe_exec_rc=$?; if [ -s 'F' ]; then cd -- "$(cat -- 'F')" 2>/dev/null; fi; rm -f -- 'F'; (exit $__safe_exec_rc)`
pub fn rewrite_carrying_cwd(
    exe: &Path,
    opts: &[(&str, &str)],
    original: &str,
    cwd_file: &Path,
) -> String {
    let f = quote(&cwd_file.to_string_lossy());
    let f_opt = cwd_file.to_string_lossy().into_owned();
    let mut all: Vec<(&str, &str)> = vec![("--cwd-out", f_opt.as_str())];
    all.extend_from_slice(opts);
    format!(
        "{}; __safe_exec_rc=$?; if [ -s {f} ]; then cd -- \"$(cat -- {f})\" 2>/dev/null; fi; rm -f -- {f}; (exit $__safe_exec_rc)",
        rewrite_with(exe, &all, original)
    )
}

/// The path of this binary for the rewritten command, as an absolute path so
/// the agent's `PATH` cannot substitute another program.
pub fn own_path() -> std::path::PathBuf {
    std::env::current_exe().unwrap_or_else(|_| "safe-exec".into())
}

/// A `--profile` value that means the same file from any directory: paths
/// are made absolute, built-in names are kept.
pub fn stable_profile(selector: &str, base: &Path) -> String {
    let p = Path::new(selector);
    if selector.contains('/') || selector.ends_with(".toml") {
        let abs = base.join(p);
        std::fs::canonicalize(&abs)
            .unwrap_or(abs)
            .to_string_lossy()
            .into_owned()
    } else {
        selector.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_single_quotes() {
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn option_like_strings_get_double_dash() {
        let r = rewrite(Path::new("/bin/se"), None, "-x");
        assert_eq!(r, "'/bin/se' -c -- '-x'");
        let r = rewrite(Path::new("/bin/se"), Some("strict"), "ls");
        assert_eq!(r, "'/bin/se' --profile 'strict' -c 'ls'");
    }
}
