//! Temporal patterns over a session's commands: classes tag each command
//! segment (`download`, `make_executable`, `delete`, ...), and patterns look
//! for sequences, bursts and retries of denied commands across the session's
//! recent history. Both are data: the built-ins below are TOML, and a
//! profile's `[[guard.class]]` and `[[guard.pattern]]` add to or replace them.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// A regular expression compiled when the profile loads.
#[derive(Debug, Clone)]
pub struct Rx(Regex);

impl Rx {
    /// Whether the expression matches anywhere in `s`.
    pub fn is_match(&self, s: &str) -> bool {
        self.0.is_match(s)
    }
}

impl PartialEq for Rx {
    fn eq(&self, o: &Self) -> bool {
        self.0.as_str() == o.0.as_str()
    }
}

impl Serialize for Rx {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.as_str())
    }
}

impl<'de> Deserialize<'de> for Rx {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Regex::new(&s)
            .map(Rx)
            .map_err(|e| serde::de::Error::custom(format!("`{s}` is not a valid regex: {e}")))
    }
}

/// `[[guard.class]]`: a name for a kind of command. A segment belongs to the
/// class when its program is in `programs` or matches `program_regex`
/// (either; neither given means any program) and, if `args_regex` is given,
/// its arguments joined by spaces match it. Several entries with one name
/// add up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClassDef {
    /// The class name patterns refer to.
    pub name: String,
    /// Normalised program names (`rm`, `curl`).
    #[serde(default)]
    pub programs: Vec<String>,
    /// Regex on the program as written (`argv[0]`, e.g. `^\./`).
    #[serde(default)]
    pub program_regex: Option<Rx>,
    /// Regex on the arguments joined by single spaces.
    #[serde(default)]
    pub args_regex: Option<Rx>,
}

/// What a pattern looks for.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Commands of the classes in `steps`, in this order; the current
    /// command completes the sequence.
    Sequence,
    /// `count` segments of `class` (the current command included).
    Burst,
    /// The current command is a denied command again in another spelling:
    /// same normalised program and arguments at least `similarity` alike.
    Retry,
}

/// What a matched pattern does.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PatternAction {
    /// Needs confirmation.
    Ask,
    /// Refused.
    Deny,
}

/// `[[guard.pattern]]`: a temporal pattern. A profile pattern with the id
/// of a built-in replaces it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PatternDef {
    /// Stable id, used in reasons and `matched_rules` as `guard.ID`.
    pub id: String,
    /// What it means, for reasons.
    pub description: String,
    /// `sequence`, `burst` or `retry`.
    pub kind: Kind,
    /// `sequence`: class names in order.
    #[serde(default)]
    pub steps: Vec<String>,
    /// `sequence`: consecutive steps must share an operand (a file name),
    /// e.g. the downloaded file is the one made executable and run.
    #[serde(default)]
    pub linked: bool,
    /// `burst`: the class counted.
    #[serde(default)]
    pub class: Option<String>,
    /// `burst`: how many segments within the window trigger it.
    #[serde(default)]
    pub count: usize,
    /// `retry`: how alike the arguments must be (0.0 to 1.0, Jaccard).
    #[serde(default = "default_similarity")]
    pub similarity: f64,
    /// Only commands this recent count.
    pub within_seconds: u64,
    /// `ask` or `deny`.
    pub action: PatternAction,
}

fn default_similarity() -> f64 {
    0.5
}

/// The built-in classes and patterns (documented in docs/layers.md).
pub const BUILTIN: &str = r#"
[[class]]
name = "download"
programs = ["curl", "wget", "aria2c", "fetch", "http", "https", "httpie", "xh", "scp", "sftp", "rsync", "tftp"]

[[class]]
name = "make_executable"
programs = ["chmod"]
args_regex = '(^|\s)([ugoa]*[-+=][rwxXst]*x[rwxXst]*|[0-7]*[1357][0-7]*)(\s|$)'

[[class]]
name = "make_executable"
programs = ["install"]
args_regex = '(^|\s)(-m|--mode)(\s|=)?[0-7]*[1357][0-7]*(\s|$)'

[[class]]
name = "run_local"
program_regex = '^(\./|\.\./|/tmp/|/var/tmp/|/dev/shm/|[^/]+/)'

[[class]]
name = "run_local"
programs = ["sh", "bash", "dash", "zsh", "ksh", "source", "."]
args_regex = '(^|\s)(\./|\.\./|/tmp/|/var/tmp/|/dev/shm/)?[^\s-][^\s]*\.(sh|bash|run|bin)(\s|$)'

[[class]]
name = "delete"
programs = ["rm", "rmdir", "unlink", "shred", "srm", "wipe"]

[[class]]
name = "delete"
programs = ["find"]
args_regex = '(^|\s)-delete(\s|$)'

[[class]]
name = "delete"
programs = ["git"]
args_regex = '^(clean|rm)(\s|$)'

[[class]]
name = "secret_read"
programs = ["cat", "less", "more", "head", "tail", "grep", "egrep", "rg", "base64", "xxd", "od", "hexdump", "strings", "cp", "mv", "tar", "zip", "awk", "sed", "jq", "yq", "openssl", "gpg", "sort", "tac", "nl", "cut", "diff", "vim", "vi", "nano", "view"]
args_regex = '(\.ssh/|id_rsa|id_ed25519|id_ecdsa|\.aws/|\.gnupg|\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.vault-token|\.kube/config|\.docker/config\.json|\.config/gh/|credentials|/etc/shadow|(^|[\s/])\.env(\.|\s|$)|\.pem(\s|$)|\.key(\s|$))'

[[class]]
name = "secret_read"
programs = ["printenv"]

[[class]]
name = "secret_read"
programs = ["env", "set", "export"]
args_regex = '^(-p)?$'

[[class]]
name = "network"
programs = ["curl", "wget", "aria2c", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "rsync", "ftp", "tftp", "telnet", "nmap", "http", "https", "httpie", "xh", "dig", "nslookup", "host", "ping"]

[[class]]
name = "network"
programs = ["git"]
args_regex = '^(push|fetch|pull|clone|ls-remote|remote\s+add|send-email)(\s|$)'

[[pattern]]
id = "download_then_execute"
description = "a file was downloaded, made executable and run"
kind = "sequence"
steps = ["download", "make_executable", "run_local"]
linked = true
within_seconds = 1800
action = "deny"

[[pattern]]
id = "secrets_then_network"
description = "secrets were read and then the network was touched"
kind = "sequence"
steps = ["secret_read", "network"]
within_seconds = 900
action = "deny"

[[pattern]]
id = "deletion_burst"
description = "a burst of deletions"
kind = "burst"
class = "delete"
count = 10
within_seconds = 60
action = "ask"

[[pattern]]
id = "retry_after_deny"
description = "a denied command was retried in another spelling"
kind = "retry"
similarity = 0.5
within_seconds = 600
action = "deny"
"#;

/// The parsed built-ins.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Builtins {
    /// Built-in classes.
    pub class: Vec<ClassDef>,
    /// Built-in patterns.
    pub pattern: Vec<PatternDef>,
}

/// The built-ins, parsed once per process (only when a guard runs). They
/// are checked by `build.rs` (a broken built-in fails the build); should
/// they still not parse, this is empty and [`builtins_error`] says why,
/// which makes every profile fail to load ([`crate::guard::check_config`]).
pub fn builtins() -> &'static Builtins {
    &parsed().0
}

/// Why the built-ins did not parse, if they did not.
pub fn builtins_error() -> Option<&'static str> {
    parsed().1.as_deref()
}

fn parsed() -> &'static (Builtins, Option<String>) {
    static B: OnceLock<(Builtins, Option<String>)> = OnceLock::new();
    B.get_or_init(|| match toml::from_str(BUILTIN) {
        Ok(b) => (b, None),
        Err(e) => (
            Builtins {
                class: Vec::new(),
                pattern: Vec::new(),
            },
            Some(format!("the built-in guard patterns do not parse: {e}")),
        ),
    })
}

/// One command segment as the patterns see it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Seg {
    /// Normalised program name.
    pub program: String,
    /// The program as written.
    #[serde(default)]
    pub argv0: String,
    /// Arguments (redacted).
    pub args: Vec<String>,
    /// Classes this segment belongs to.
    #[serde(default)]
    pub tags: Vec<String>,
    /// File names it names (operands, redirection targets, URL basenames),
    /// for linked sequences.
    #[serde(default)]
    pub files: Vec<String>,
}

/// Tags a segment with every class it belongs to.
pub fn tags(classes: &[&ClassDef], program: &str, argv0: &str, args: &[String]) -> Vec<String> {
    let joined = args.join(" ");
    let mut out: Vec<String> = Vec::new();
    for c in classes {
        let prog_ok = match (c.programs.is_empty(), &c.program_regex) {
            (true, None) => true,
            (_, rx) => {
                c.programs.iter().any(|p| p == program)
                    || rx.as_ref().is_some_and(|r| r.is_match(argv0))
            }
        };
        let args_ok = c.args_regex.as_ref().is_none_or(|r| r.is_match(&joined));
        if prog_ok && args_ok && !out.contains(&c.name) {
            out.push(c.name.clone());
        }
    }
    out
}

/// File names a segment mentions, for linking sequence steps.
pub fn files(argv0: &str, args: &[String], redirect_targets: &[String]) -> Vec<String> {
    let mut out = BTreeSet::new();
    let base = |s: &str| -> Option<String> {
        let s = s.split(['?', '#']).next().unwrap_or(s);
        let b = s.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        (!b.is_empty() && b != "." && b != "..").then(|| b.to_string())
    };
    if argv0.contains('/') {
        out.extend(base(argv0));
    }
    for a in args.iter().chain(redirect_targets) {
        if a.starts_with('-') || a.is_empty() {
            continue;
        }
        out.extend(base(a));
    }
    out.into_iter().collect()
}

/// Normalises a program name for retry detection: `python3.11` → `python`.
pub fn norm_program(p: &str) -> String {
    p.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
        .to_string()
}

/// Normalised argument tokens: short flag clusters split (`-rf` → `-r -f`),
/// long flags lower-cased and split at `=`, paths without `./` and
/// trailing slashes.
pub fn arg_tokens(args: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in args {
        if let Some(long) = a.strip_prefix("--") {
            let (k, v) = long.split_once('=').unwrap_or((long, ""));
            out.insert(format!("--{}", k.to_lowercase()));
            if !v.is_empty() {
                out.insert(norm_path(v));
            }
        } else if a.len() > 1
            && a.starts_with('-')
            && !a[1..].starts_with(|c: char| c.is_ascii_digit())
        {
            for c in a[1..].chars() {
                out.insert(format!("-{c}"));
            }
        } else {
            out.insert(norm_path(a));
        }
    }
    out
}

fn norm_path(s: &str) -> String {
    let mut p = s.to_string();
    while p.contains("//") {
        p = p.replace("//", "/");
    }
    while let Some(r) = p.strip_prefix("./") {
        p = r.to_string();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() { p } else { t.to_string() }
}

/// Jaccard similarity of two token sets (two empty sets are identical).
pub fn similarity(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(b).count() as f64 / union as f64
}
