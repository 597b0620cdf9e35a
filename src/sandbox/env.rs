//! Environment hygiene: what the command inherits from the caller.

use std::collections::BTreeMap;
use std::ffi::OsString;

use serde::{Deserialize, Serialize};

/// How the command's environment is built (`[env]` in a profile).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct EnvPolicy {
    /// `inherit`: the caller's environment minus the removals (behaves like
    /// bash as a configured shell). `allowlist`: only the names in `allow`.
    pub mode: EnvMode,
    /// Names (or `*` globs) kept in `allowlist` mode.
    pub allow: Vec<String>,
    /// Extra names (or `*` globs) removed in either mode, on top of the
    /// built-in secret and injection lists, which are always removed.
    pub remove: Vec<String>,
    /// Variables set for the command after scrubbing.
    pub set: BTreeMap<String, String>,
}

/// See [`EnvPolicy::mode`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EnvMode {
    /// Caller's environment minus secrets and injection variables.
    #[default]
    Inherit,
    /// Only allowlisted names survive.
    Allowlist,
}

impl Default for EnvPolicy {
    fn default() -> Self {
        Self {
            mode: EnvMode::Inherit,
            allow: Vec::new(),
            remove: Vec::new(),
            set: BTreeMap::new(),
        }
    }
}

/// Built-in names that look like credentials, matched case-insensitively.
/// Removed in every mode: a secret in the environment is readable by every
/// process the command starts and ends up in crash reports and logs.
pub const SECRET_PATTERNS: &[&str] = &[
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*CREDENTIAL*",
    "*API_KEY*",
    "*APIKEY*",
    "*ACCESS_KEY*",
    "*PRIVATE_KEY*",
    "*_KEY",
    "*_KEY_*",
    "*_AUTH",
    "*_AUTH_*",
    "*_PAT",
    "*COOKIE*",
    "*DATABASE_URL*",
    "*_DSN",
    "*CONNECTION_STRING*",
    "AWS_*",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "NPM_TOKEN",
];

/// Names that match [`SECRET_PATTERNS`] but are well-known non-secrets.
const SECRET_EXCEPTIONS: &[&str] = &["TOKENIZERS_PARALLELISM"];

/// Built-in names that make a loader, shell or interpreter run code the
/// command did not ask for are the `scrub = true` groups of the one shared
/// list, `profiles/env/variables.toml` (see [`crate::policy::variables`]),
/// matched case-sensitively (or as the group says). Removed in every mode.
/// Set in every sandboxed command so tools (and tests) can tell.
pub const SANDBOX_MARKER: &str = "SAFE_EXEC_SANDBOX";
/// Set when the network is off (like Codex's `CODEX_SANDBOX_NETWORK_DISABLED`)
/// so test suites can skip network tests instead of failing.
pub const NETWORK_DISABLED_MARKER: &str = "SAFE_EXEC_NETWORK_DISABLED";

/// The command's environment after scrubbing, with what was removed and why
/// (`check --explain` prints it).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScrubbedEnv {
    /// Variables the command gets, in input order, then `set`.
    #[serde(skip)]
    pub kept: Vec<(OsString, OsString)>,
    /// Variables removed, with the rule that removed each.
    pub removed: Vec<RemovedVar>,
}

/// One removed variable (never its value).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RemovedVar {
    /// Variable name (lossily decoded if not UTF-8).
    pub name: String,
    /// Why: which list and pattern matched.
    pub reason: String,
}

/// `*`-glob match; `fold` compares ASCII case-insensitively. Greedy and
/// linear in practice: it runs for every variable against every pattern on
/// each command start.
pub fn glob_match(pattern: &str, name: &str, fold: bool) -> bool {
    let eq = |a: &[u8], b: &[u8]| {
        if fold {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    let find = |hay: &[u8], needle: &[u8]| -> Option<usize> {
        if needle.is_empty() {
            return Some(0);
        }
        if fold {
            hay.windows(needle.len()).position(|w| eq(w, needle))
        } else {
            // A window-by-window comparison calls `bcmp` at every offset.
            memchr::memmem::find(hay, needle)
        }
    };
    // No allocation: this runs ~14,000 times per start (40 variables x
    // ~350 patterns: the secret names and the scrubbed groups of
    // `profiles/env/variables.toml`), and almost every pair differs in its
    // first or last byte: both are compared before anything else (a
    // pattern's literal first and last bytes must be the name's; `*` at
    // either end matches anything there).
    let (pb, nb) = (pattern.as_bytes(), name.as_bytes());
    let same = |a: u8, b: u8| {
        if fold {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    match (pb.first(), nb.first()) {
        (Some(b'*'), _) | (None, _) => {}
        (Some(_), None) => return false,
        (Some(&p0), Some(&n0)) if !same(p0, n0) => return false,
        _ => {}
    }
    match (pb.last(), nb.last()) {
        (Some(b'*'), _) | (None, _) => {}
        (Some(_), None) => return false,
        (Some(&p1), Some(&n1)) if !same(p1, n1) => return false,
        _ => {}
    }
    let mut parts = pb.split(|b| *b == b'*').peekable();
    let mut rest = name.as_bytes();
    let first = parts.next().unwrap_or_default();
    if rest.len() < first.len() || !eq(&rest[..first.len()], first) {
        return false;
    }
    rest = &rest[first.len()..];
    if parts.peek().is_none() {
        return rest.is_empty();
    }
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            return rest.len() >= part.len() && eq(&rest[rest.len() - part.len()..], part);
        }
        match find(rest, part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// The first of [`SECRET_PATTERNS`] that matches `name` ASCII
/// case-insensitively: the patterns are upper case, so `name` is upper-cased
/// once and compared byte for byte (a start asks ~35 names against the 23
/// patterns; comparing each window case-insensitively was most of the
/// scrub).
///
/// The patterns of the form `*LITERAL*` (most of them) are answered by one
/// pass over the name that tries, at each byte that starts one of their
/// literals, the literals starting with it; the others are asked one by
/// one, in the list's order. (An Aho-Corasick automaton answered the same
/// but cost ~640k instructions to build at every start, more than the
/// whole scrub it sped up: a run scrubs once.)
fn secret_pattern(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    let index = secret_index();
    let mut present = [false; SECRET_PATTERNS.len()];
    let bytes = upper.as_bytes();
    for at in 0..bytes.len() {
        let first = bytes[at];
        if !index.first[usize::from(first)] {
            continue;
        }
        for (lit, owner) in &index.literals {
            if lit.first() == Some(&first) && bytes[at..].starts_with(lit) {
                present[*owner] = true;
            }
        }
    }
    SECRET_PATTERNS
        .iter()
        .enumerate()
        .find(|(i, p)| {
            if index.is_contains[*i] {
                present[*i]
            } else {
                glob_match(p, &upper, false)
            }
        })
        .map(|(_, p)| *p)
}

/// Which secret patterns are `*LITERAL*`, their literals (with the pattern
/// each belongs to) and the bytes a literal starts with.
struct SecretIndex {
    is_contains: [bool; SECRET_PATTERNS.len()],
    literals: Vec<(&'static [u8], usize)>,
    first: [bool; 256],
}

fn secret_index() -> &'static SecretIndex {
    static INDEX: std::sync::OnceLock<SecretIndex> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = SecretIndex {
            is_contains: [false; SECRET_PATTERNS.len()],
            literals: Vec::new(),
            first: [false; 256],
        };
        for (i, p) in SECRET_PATTERNS.iter().enumerate() {
            let inner = p
                .strip_prefix('*')
                .and_then(|r| r.strip_suffix('*'))
                .filter(|l| !l.is_empty() && !l.contains('*'));
            if let Some(lit) = inner.map(str::as_bytes)
                && let Some(&b) = lit.first()
            {
                index.is_contains[i] = true;
                index.literals.push((lit, i));
                index.first[usize::from(b)] = true;
            }
        }
        index
    })
}

/// Why `name` must be removed under `policy`, or `None` to keep it.
pub fn removal_reason(name: &str, policy: &EnvPolicy) -> Option<String> {
    if let Some(p) = super::variables::scrubbed(name) {
        return Some(format!(
            "loader/shell injection variable (built-in list: {p})"
        ));
    }
    if !SECRET_EXCEPTIONS.contains(&name)
        && let Some(p) = secret_pattern(name)
    {
        return Some(format!("secret-looking name (built-in list: {p})"));
    }
    if let Some(p) = policy.remove.iter().find(|p| glob_match(p, name, false)) {
        return Some(format!("removed by the profile's [env] remove ({p})"));
    }
    if policy.mode == EnvMode::Allowlist && !policy.allow.iter().any(|p| glob_match(p, name, false))
    {
        return Some("not in the profile's [env] allow list".to_string());
    }
    None
}

/// Builds the command's environment from the caller's `vars`: drops the
/// built-in secret and injection names and the profile's `remove` globs; in
/// `allowlist` mode keeps only `allow`; then applies `set` (which wins).
/// The sandbox markers are added by `run::execute`, which knows the network.
pub fn scrub(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    policy: &EnvPolicy,
) -> ScrubbedEnv {
    let mut out = ScrubbedEnv::default();
    for (name, value) in vars {
        let display = name.to_string_lossy().into_owned();
        if policy.set.contains_key(&display) {
            continue; // replaced below
        }
        match removal_reason(&display, policy) {
            Some(reason) => out.removed.push(RemovedVar {
                name: display,
                reason,
            }),
            None => out.kept.push((name, value)),
        }
    }
    for (k, v) in &policy.set {
        out.kept.push((OsString::from(k), OsString::from(v)));
    }
    out
}

/// Sets (replacing any inherited value) the markers telling the command it
/// runs under safe-exec, and whether its network is off.
pub fn add_markers(env: &mut Vec<(OsString, OsString)>, network_off: bool) {
    env.retain(|(k, _)| k != SANDBOX_MARKER && k != NETWORK_DISABLED_MARKER);
    env.push((SANDBOX_MARKER.into(), "1".into()));
    if network_off {
        env.push((NETWORK_DISABLED_MARKER.into(), "1".into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `glob_match` without its first/last-byte screen (the function as it
    /// was), the reference for `glob_screen_changes_no_answer`.
    fn reference(pattern: &str, name: &str, fold: bool) -> bool {
        let eq = |a: &[u8], b: &[u8]| {
            if fold {
                a.eq_ignore_ascii_case(b)
            } else {
                a == b
            }
        };
        let find = |hay: &[u8], needle: &[u8]| -> Option<usize> {
            if needle.is_empty() {
                return Some(0);
            }
            hay.windows(needle.len()).position(|w| eq(w, needle))
        };
        let mut parts = pattern.as_bytes().split(|b| *b == b'*').peekable();
        let mut rest = name.as_bytes();
        let first = parts.next().unwrap_or_default();
        if rest.len() < first.len() || !eq(&rest[..first.len()], first) {
            return false;
        }
        rest = &rest[first.len()..];
        if parts.peek().is_none() {
            return rest.is_empty();
        }
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                return rest.len() >= part.len() && eq(&rest[rest.len() - part.len()..], part);
            }
            match find(rest, part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        true
    }

    #[test]
    fn secret_patterns_match_upper_cased_names_as_they_match_folded() {
        // The shortcut's premise: every pattern is upper case.
        for p in SECRET_PATTERNS {
            assert_eq!(*p, p.to_ascii_uppercase(), "{p}");
        }
        let mut names: Vec<String> = vec![
            "".into(),
            "PATH".into(),
            "github_token".into(),
            "My_Api_Key_2".into(),
            "TOKENIZERS_PARALLELISM".into(),
            "aws_region".into(),
            "clé_token".into(),
            "database_url_ro".into(),
        ];
        for p in SECRET_PATTERNS {
            for fill in ["", "x", "Mid_", "é"] {
                let n = p.replace('*', fill);
                names.push(n.to_ascii_lowercase());
                names.push(format!("{}{}", n, "_tail"));
                names.push(format!("lead_{}", n.to_ascii_lowercase()));
                names.push(n);
            }
        }
        let mut found = 0;
        for n in &names {
            let folded = SECRET_PATTERNS
                .iter()
                .copied()
                .find(|p| glob_match(p, n, true));
            assert_eq!(secret_pattern(n), folded, "{n:?}");
            found += usize::from(folded.is_some());
        }
        // Positive control: most of these names are secrets.
        assert!(found * 2 > names.len(), "{found} of {}", names.len());
    }

    #[test]
    fn glob_screen_changes_no_answer() {
        let mut patterns: Vec<&str> = SECRET_PATTERNS.to_vec();
        patterns.extend(super::super::variables::all_names());
        patterns.extend([
            "", "*", "**", "A", "*A", "A*", "*A*", "A*B", "a*b*c", "*_", "_*",
        ]);
        let mut names: Vec<String> = [
            "",
            "A",
            "a",
            "B",
            "AB",
            "ab",
            "aXb",
            "AxB",
            "HOME",
            "PATH",
            "GITHUB_TOKEN",
            "github_token",
            "MY_API_KEY",
            "my_api_key_2",
            "KEY",
            "_KEY",
            "LD_PRELOAD",
            "ld_preload",
            "GIT_DIR",
            "git_dir",
            "PYTHONPATH",
            "PYTHON",
            "npm_config_x",
            "NPM_CONFIG_X",
            "CARGO_TARGET_X86_LINKER",
            "TOKENIZERS_PARALLELISM",
            "_",
            "A_",
            "_A",
            "CC",
            "CC_x",
            "AWS_PROFILE",
            "SSH_AUTH_SOCK",
            "BASH_FUNC_x%%",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every pattern with its `*` replaced, in both cases, is a name too.
        for p in &patterns {
            for fill in ["", "X", "_x_"] {
                let n = p.replace('*', fill);
                names.push(n.to_ascii_lowercase());
                names.push(n);
            }
        }
        let mut matched = 0;
        for p in &patterns {
            for n in &names {
                for fold in [false, true] {
                    let want = reference(p, n, fold);
                    assert_eq!(glob_match(p, n, fold), want, "{p:?} {n:?} fold={fold}");
                    matched += usize::from(want);
                }
            }
        }
        assert!(
            matched > patterns.len(),
            "the cases must include matches: {matched}"
        );
    }

    fn vars(names: &[&str]) -> Vec<(OsString, OsString)> {
        names
            .iter()
            .map(|n| (OsString::from(n), OsString::from("v")))
            .collect()
    }

    fn kept(s: &ScrubbedEnv) -> Vec<String> {
        s.kept
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn inherit_removes_secrets_and_injection_keeps_daily_variables() {
        let input = vars(&[
            "PATH",
            "HOME",
            "TERM",
            "LANG",
            "LC_ALL",
            "USER",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "CARGO_HOME",
            "TOKENIZERS_PARALLELISM",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "github_token",
            "OPENAI_API_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_PROFILE",
            "DB_PASSWORD",
            "MY_SECRET",
            "STRIPE_KEY",
            "SSH_AUTH_SOCK",
            "NPM_CONFIG__AUTH",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "BASH_ENV",
            "ENV",
            "PROMPT_COMMAND",
            "BASH_FUNC_ls%%",
            "IFS",
            "NODE_OPTIONS",
            "GIT_SSH_COMMAND",
            "GIT_CONFIG_KEY_0",
            "PS4",
        ]);
        let s = scrub(input, &EnvPolicy::default());
        assert_eq!(
            kept(&s),
            [
                "PATH",
                "HOME",
                "TERM",
                "LANG",
                "LC_ALL",
                "USER",
                "GIT_AUTHOR_NAME",
                "GIT_AUTHOR_EMAIL",
                "CARGO_HOME",
                "TOKENIZERS_PARALLELISM"
            ]
        );
        assert_eq!(s.removed.len(), 24);
        let r = s
            .removed
            .iter()
            .find(|r| r.name == "LD_PRELOAD")
            .expect("LD_PRELOAD removed");
        assert!(r.reason.contains("injection"), "{}", r.reason);
        let r = s
            .removed
            .iter()
            .find(|r| r.name == "GITHUB_TOKEN")
            .expect("GITHUB_TOKEN removed");
        assert!(r.reason.contains("secret"), "{}", r.reason);
    }

    #[test]
    fn allowlist_keeps_only_allowed_and_never_secrets() {
        let policy = EnvPolicy {
            mode: EnvMode::Allowlist,
            allow: vec![
                "PATH".into(),
                "HOME".into(),
                "LC_*".into(),
                "GH_TOKEN".into(),
            ],
            ..EnvPolicy::default()
        };
        let s = scrub(
            vars(&["PATH", "HOME", "LC_ALL", "TERM", "GH_TOKEN"]),
            &policy,
        );
        assert_eq!(kept(&s), ["PATH", "HOME", "LC_ALL"]);
        assert!(
            s.removed
                .iter()
                .any(|r| r.name == "TERM" && r.reason.contains("allow"))
        );
    }

    #[test]
    fn remove_and_set_apply_after_the_built_in_lists() {
        let mut set = BTreeMap::new();
        set.insert("FOO".to_string(), "bar".to_string());
        set.insert("PATH".to_string(), "/usr/bin".to_string());
        let policy = EnvPolicy {
            remove: vec!["MY_*".into()],
            set,
            ..EnvPolicy::default()
        };
        let s = scrub(vars(&["PATH", "MY_VAR", "OTHER"]), &policy);
        assert_eq!(kept(&s), ["OTHER", "FOO", "PATH"]);
        assert_eq!(s.kept[2].1, OsString::from("/usr/bin"));
        assert!(
            s.removed
                .iter()
                .any(|r| r.name == "MY_VAR" && r.reason.contains("MY_*"))
        );
    }

    #[test]
    fn markers_replace_inherited_values() {
        let mut env = vec![(OsString::from(SANDBOX_MARKER), OsString::from("0"))];
        add_markers(&mut env, true);
        assert_eq!(
            env,
            vec![
                (OsString::from(SANDBOX_MARKER), OsString::from("1")),
                (OsString::from(NETWORK_DISABLED_MARKER), OsString::from("1"))
            ]
        );
    }

    #[test]
    fn glob() {
        assert!(glob_match("*_KEY", "STRIPE_KEY", true));
        assert!(!glob_match("*_KEY", "KEYBOARD", true));
        assert!(glob_match("LD_*", "LD_PRELOAD", false));
        assert!(!glob_match("LD_*", "ld_preload", false));
        assert!(glob_match("*TOKEN*", "token", true));
        assert!(glob_match("*", "", false));
        assert!(glob_match("A*B*C", "AxxBxxC", false));
        assert!(!glob_match("A*B*C", "AxxCxxB", false));
        assert!(glob_match("*_KEY_*", "MY_KEY_ID", true));
        assert!(!glob_match("AWS_*", "AWS", false));
        assert!(glob_match("BASH_FUNC_*", "BASH_FUNC_ls%%", false));
    }
}

unsafe extern "C" {
    /// The C library's environment array (`environ(7)`).
    static environ: *const *mut libc::c_char;
}

/// What [`protect_self`] did, for `doctor` and the tests.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SelfProtection {
    /// `PR_SET_DUMPABLE` is now 0.
    pub non_dumpable: bool,
    /// Variables whose value was overwritten in the original block.
    pub scrubbed: usize,
}

/// Keeps safe-exec's own process from handing the command what was removed
/// from its environment (K7), before a supervised command starts:
///
/// - `PR_SET_DUMPABLE 0`: `/proc/<safe-exec>/environ`, `maps`, `mem`, `fd`
///   become root-owned and need `CAP_SYS_PTRACE` over safe-exec (which a
///   sandboxed command never has), whatever its uid;
/// - every variable the command does not get with the same value is moved
///   to the heap (`setenv`, so hooks that run later still see it) and its
///   value is overwritten with NUL bytes in the original block at the top of
///   the stack, the memory `/proc/<pid>/environ` shows.
///
/// The command itself starts dumpable again (`execve` resets it).
pub fn protect_self(kept: &[(OsString, OsString)]) -> SelfProtection {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut done = SelfProtection {
        non_dumpable: nix::sys::prctl::set_dumpable(false).is_ok(),
        scrubbed: 0,
    };
    let mut originals: Vec<(*mut libc::c_char, OsString, OsString)> = Vec::new();
    // SAFETY: environ is a NULL-terminated array of NUL-terminated strings
    // owned by the C library; we only read it here, before any change.
    unsafe {
        let mut p = environ;
        while !p.is_null() && !(*p).is_null() {
            let entry = CStr::from_ptr(*p).to_bytes();
            if let Some(eq) = entry.iter().position(|&b| b == b'=') {
                let name = std::ffi::OsStr::from_bytes(&entry[..eq]).to_os_string();
                let value = std::ffi::OsStr::from_bytes(&entry[eq + 1..]).to_os_string();
                let passed = kept.iter().any(|(k, v)| *k == name && *v == value);
                if !passed && !value.is_empty() {
                    originals.push((*p, name, value));
                }
            }
            p = p.add(1);
        }
    }
    for (ptr, name, value) in originals {
        // SAFETY: safe-exec's own threads (hook I/O pumps) never read the
        // environment; setenv replaces the array slot with a heap copy, so
        // the original string is no longer referenced afterwards.
        unsafe { std::env::set_var(&name, &value) };
        // SAFETY: ptr still points to the original NUL-terminated entry
        // (stack memory we may write); we overwrite the value in place,
        // never past its terminating NUL.
        unsafe {
            let mut q = ptr.add(name.len() + 1);
            while *q != 0 {
                *q = 0;
                q = q.add(1);
            }
        }
        done.scrubbed += 1;
    }
    done
}
