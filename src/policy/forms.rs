//! Seed 002's structured forms. Archive and network commands are accepted
//! only in a few exact shapes; everything else about them is refused with a
//! reason that shows the accepted shape.
//!
//! Archive: `tar -xf ARCHIVE -C DEST`, `unzip ARCHIVE -d DEST` (extraction),
//! `tar -czf ARCHIVE SOURCES...`, `zip -r ARCHIVE SOURCES...` (creation),
//! `tar -tf ARCHIVE`, `unzip -l ARCHIVE` (listing). GNU spellings of the same
//! options (`tar xf a.tar -C d`, `tar --extract --file=a.tar --directory=d`)
//! are recognised as the same form.
//!
//! Network: `ping -c N HOST` (N from 1 to 10), `curl -I URL` (http/https,
//! ports 80 and 443), `dig DOMAIN`, `nslookup DOMAIN`. An accepted form runs
//! with only the network it needs.

use std::path::Path;

use super::ReasonId;
use super::paths::PathProblem;
use super::registry::{Form, Risk};
use super::{Decision, Layer, PolicyContext, Verdict};
use crate::parse::{Segment, Word};
use crate::sandbox::NetworkAccess;

/// The warning every accepted extraction carries (seed 002).
pub const EXTRACT_WARNING: &str =
    "Archive extraction can write or overwrite files in the destination.";
/// The warning every accepted creation carries.
pub const CREATE_WARNING: &str =
    "The archive tool may overwrite or update an existing archive path.";

/// What an accepted form needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    /// Risk of the accepted command.
    pub risk: Risk,
    /// Network the sandbox must open for it.
    pub network: Option<NetworkAccess>,
}

/// Checks a segment against its form. Returns `None` when it was refused
/// (the reasons are in `v`).
pub fn check(form: Form, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) -> Option<Accepted> {
    let mut f = FormCheck {
        seg,
        ctx,
        v,
        refused: false,
    };
    let accepted = match form {
        Form::Tar => f.tar(),
        Form::Unzip => f.unzip(),
        Form::Zip => f.zip(),
        Form::Ping => f.ping(),
        Form::Curl => f.curl(),
        Form::Dig | Form::Nslookup => f.dns(form.as_str()),
    };
    if f.refused { None } else { accepted }
}

struct FormCheck<'a, 'b> {
    seg: &'a Segment,
    ctx: &'a PolicyContext<'b>,
    v: &'a mut Verdict,
    refused: bool,
}

/// tar's options as the forms use them.
#[derive(Debug, Default)]
struct TarOpts {
    extract: bool,
    create: bool,
    list: bool,
    gzip: bool,
    verbose: bool,
    file: Option<Word>,
    directory: Option<Word>,
    other: Vec<String>,
}

impl FormCheck<'_, '_> {
    fn refuse(&mut self, rule: ReasonId, message: String, suggestion: Option<&str>) {
        self.refused = true;
        self.v.add(
            Layer::Policy,
            rule,
            Decision::Deny,
            message,
            suggestion.map(str::to_string),
        );
    }

    fn args(&self) -> &[Word] {
        &self.seg.words[1..]
    }

    /// Common operand checks: URLs, globs, unresolved words.
    fn plain_path(&mut self, w: &Word, what: &str, accepted: &str) -> bool {
        if w.value.contains("://") || w.value.starts_with("file:") {
            self.refuse(
                ReasonId::FormUrl,
                format!("{what} `{}` is a URL; download it first", w.value),
                Some(accepted),
            );
            return false;
        }
        if w.glob || w.value.contains(['*', '?', '[']) {
            self.refuse(
                ReasonId::FormWildcard,
                format!("{what} `{}` is a wildcard; name the file", w.raw()),
                Some(accepted),
            );
            return false;
        }
        if w.unresolved {
            self.refuse(
                ReasonId::FormNotLiteral,
                format!("{what} `{}` is not literal", w.raw()),
                Some(accepted),
            );
            return false;
        }
        true
    }

    fn readable(&mut self, w: &Word, what: &str) {
        let p = self.ctx.resolve(self.seg, &w.value);
        if let Err(e) = self.ctx.roots.check_read(&p) {
            self.path_problem(&p, e, what);
        }
    }

    fn writable(&mut self, w: &Word, what: &str) {
        let p = self.ctx.resolve(self.seg, &w.value);
        let broad =
            is_system_root(&p) || p == self.ctx.roots.home || self.ctx.roots.home.starts_with(&p);
        if broad {
            self.refuse(
                ReasonId::FormBroadDestination,
                format!(
                    "{what} `{}` is too broad (a system or home root)",
                    p.display()
                ),
                Some("a directory inside the project, e.g. -C ./out"),
            );
            return;
        }
        if let Err(e) = super::path_checks::check_write(self.ctx, &p, false) {
            self.path_problem(&p, e, what);
        }
    }

    /// An accepted extraction: the names it writes are the archive's
    /// members, content the policy does not read (`.git/hooks/x`,
    /// `.claude/settings.json`, a member through a directory symlink).
    /// Confined, the sandbox and the restore contain them; unconfined,
    /// nothing does, so it asks.
    fn extracted(&mut self, program: &str) {
        self.v.warn(EXTRACT_WARNING.into());
        if !self.ctx.confined {
            self.v.add(
                Layer::Policy,
                ReasonId::PolicyUnconfinedNamed,
                Decision::Ask,
                format!(
                    "`{program}` extracts files named by the archive's members (a member can be `.git/hooks/...` or `.claude/...`), which are not seen, and nothing confines it here"
                ),
                Some(
                    "list it first (`tar -tf`, `unzip -l`), or run it inside the sandbox (`hook --rewrite`, `safe-exec -c`)"
                        .into(),
                ),
            );
        }
    }

    fn path_problem(&mut self, p: &Path, e: PathProblem, what: &str) {
        let msg = match e {
            PathProblem::NotReadable => {
                format!("{what} `{}` is outside the readable roots", p.display())
            }
            PathProblem::NotWritable => {
                format!("{what} `{}` is outside the writable roots", p.display())
            }
            PathProblem::Secret(d) => format!(
                "{what} `{}` is inside the protected path `{}`",
                p.display(),
                d.display()
            ),
            PathProblem::Broad => format!("{what} `{}` is too broad", p.display()),
            PathProblem::Unscanned(d) => format!(
                "{what} `{}` may change what a link in the protected tree `{}` leads to (too large to look through)",
                p.display(),
                d.display()
            ),
            PathProblem::Protected(d) | PathProblem::NestedGit(d) => format!(
                "{what} `{}` changes the protected file `{}`",
                p.display(),
                d.display()
            ),
        };
        self.refuse(ReasonId::FormRoots, msg, None);
    }

    fn tar_opts(&mut self) -> (TarOpts, Vec<Word>) {
        let mut o = TarOpts::default();
        let mut operands = Vec::new();
        let args = self.args().to_vec();
        let mut i = 0;
        let mut first = true;
        while i < args.len() {
            let w = &args[i];
            let a = w.value.clone();
            i += 1;
            // Old-style first word without a dash: `tar xzf a.tgz`.
            let cluster: Option<String> = if first
                && !a.starts_with('-')
                && !a.is_empty()
                && a.chars().all(|c| "xctzvfjJ".contains(c))
            {
                Some(a.clone())
            } else if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
                Some(a[1..].to_string())
            } else {
                None
            };
            first = false;
            if let Some(letters) = cluster {
                // In a dash cluster an option's value is the rest of the word
                // or the next word; in the old style (`xzf a.tgz`) each such
                // letter takes the next word in turn.
                let old_style = !a.starts_with('-');
                let chars: Vec<char> = letters.chars().collect();
                let mut j = 0;
                while j < chars.len() {
                    match chars[j] {
                        'x' => o.extract = true,
                        'c' => o.create = true,
                        't' => o.list = true,
                        'z' => o.gzip = true,
                        'v' => o.verbose = true,
                        letter @ ('f' | 'C') => {
                            let rest: String = chars[j + 1..].iter().collect();
                            let value = if !old_style && !rest.is_empty() {
                                j = chars.len();
                                Some(w.with_value(rest))
                            } else if i < args.len() {
                                i += 1;
                                Some(args[i - 1].clone())
                            } else {
                                None
                            };
                            // GNU tar applies every `-C` (and uses the last
                            // `-f`) in order: a second one is refused, not
                            // silently replaced.
                            if letter == 'f' {
                                if o.file.is_some() {
                                    o.other.push("-f (given twice)".into());
                                }
                                o.file = value;
                            } else {
                                if o.directory.is_some() {
                                    o.other.push("-C (given twice)".into());
                                }
                                o.directory = value;
                            }
                        }
                        c => o.other.push(format!("-{c}")),
                    }
                    j += 1;
                }
                continue;
            }
            if let Some(long) = a.strip_prefix("--") {
                let (name, val) = match long.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (long.to_string(), None),
                };
                let take = |i: &mut usize| -> Option<Word> {
                    match &val {
                        Some(v) => Some(w.with_value(v.clone())),
                        None if *i < args.len() => {
                            *i += 1;
                            Some(args[*i - 1].clone())
                        }
                        None => None,
                    }
                };
                match name.as_str() {
                    "extract" | "get" => o.extract = true,
                    "create" => o.create = true,
                    "list" => o.list = true,
                    "gzip" | "gunzip" | "ungzip" => o.gzip = true,
                    "verbose" => o.verbose = true,
                    "file" => {
                        if o.file.is_some() {
                            o.other.push("--file (given twice)".into());
                        }
                        o.file = take(&mut i);
                    }
                    "directory" => {
                        if o.directory.is_some() {
                            o.other.push("--directory (given twice)".into());
                        }
                        o.directory = take(&mut i);
                    }
                    _ => o.other.push(format!("--{name}")),
                }
                continue;
            }
            operands.push(w.clone());
        }
        (o, operands)
    }

    fn tar(&mut self) -> Option<Accepted> {
        let (o, operands) = self.tar_opts();
        let modes = [o.extract, o.create, o.list].iter().filter(|m| **m).count();
        if modes != 1 {
            self.refuse(
                ReasonId::FormArchiveShape,
                "tar is accepted only as `tar -xf ARCHIVE -C DEST`, `tar -czf ARCHIVE SOURCES...` or `tar -tf ARCHIVE`".into(),
                Some("tar -tf ARCHIVE"),
            );
            return None;
        }
        if o.list {
            if !o.other.is_empty() || !operands.is_empty() {
                self.refuse(
                    ReasonId::FormArchiveFlags,
                    format!(
                        "listing accepts only `tar -tf ARCHIVE` (got {})",
                        describe(&o.other, &operands)
                    ),
                    Some("tar -tf ARCHIVE"),
                );
                return None;
            }
            let Some(file) = o.file.clone() else {
                self.refuse(
                    ReasonId::FormArchiveMissing,
                    "`tar -t` needs `-f ARCHIVE`".into(),
                    Some("tar -tf ARCHIVE"),
                );
                return None;
            };
            if self.plain_path(&file, "the archive", "tar -tf ARCHIVE") {
                self.readable(&file, "the archive");
            }
            return Some(Accepted {
                risk: Risk::Safe,
                network: None,
            });
        }
        if o.extract {
            let accepted = "tar -xf ARCHIVE -C DEST";
            if !o.other.is_empty() || o.verbose || o.gzip {
                let mut flags = o.other.clone();
                if o.verbose {
                    flags.push("-v".into());
                }
                if o.gzip {
                    flags.push("-z".into());
                }
                self.refuse(ReasonId::FormArchiveFlags, format!("extraction accepts no other options ({}); overwrite and path-transforming options are refused", flags.join(" ")), Some(accepted));
                return None;
            }
            if !operands.is_empty() {
                self.refuse(
                    ReasonId::FormArchiveFlags,
                    format!(
                        "extraction takes no member names ({})",
                        describe(&[], &operands)
                    ),
                    Some(accepted),
                );
                return None;
            }
            let Some(file) = o.file.clone() else {
                self.refuse(
                    ReasonId::FormArchiveMissing,
                    "extraction needs `-f ARCHIVE`".into(),
                    Some(accepted),
                );
                return None;
            };
            let Some(dest) = o.directory.clone() else {
                self.refuse(
                    ReasonId::FormArchiveMissing,
                    "extraction needs a destination: `-C DEST`".into(),
                    Some(accepted),
                );
                return None;
            };
            if self.plain_path(&file, "the archive", accepted) {
                self.readable(&file, "the archive");
            }
            if self.plain_path(&dest, "the destination", accepted) {
                self.writable(&dest, "the destination");
            }
            self.extracted("tar");
            return Some(Accepted {
                risk: Risk::Write,
                network: None,
            });
        }
        // Creation.
        let accepted = "tar -czf ARCHIVE SOURCES...";
        if !o.other.is_empty() || o.directory.is_some() || o.verbose || !o.gzip {
            let mut flags = o.other.clone();
            if o.directory.is_some() {
                flags.push("-C".into());
            }
            if o.verbose {
                flags.push("-v".into());
            }
            if !o.gzip {
                flags.push("(missing -z)".into());
            }
            self.refuse(
                ReasonId::FormArchiveFlags,
                format!(
                    "creation is accepted only as `{accepted}` ({})",
                    flags.join(" ")
                ),
                Some(accepted),
            );
            return None;
        }
        let Some(file) = o.file.clone() else {
            self.refuse(
                ReasonId::FormArchiveMissing,
                "creation needs the archive path: `-f ARCHIVE`".into(),
                Some(accepted),
            );
            return None;
        };
        self.create_checks(&file, &operands, accepted)
    }

    fn create_checks(
        &mut self,
        archive: &Word,
        sources: &[Word],
        accepted: &str,
    ) -> Option<Accepted> {
        if archive.value.contains(':')
            && !archive.value.contains("://")
            && !archive.value.starts_with('/')
            && !archive.value.starts_with('.')
        {
            self.refuse(
                ReasonId::FormNetworkArchive,
                format!("`{}` names a remote archive (HOST:PATH)", archive.value),
                Some(accepted),
            );
            return None;
        }
        if self.plain_path(archive, "the archive path", accepted) {
            self.writable(archive, "the archive path");
        }
        if sources.is_empty() {
            self.refuse(
                ReasonId::FormArchiveMissing,
                "creation needs at least one source".into(),
                Some(accepted),
            );
            return None;
        }
        for s in sources {
            if matches!(s.value.trim_end_matches('/'), "" | "." | ".." | "~") {
                self.refuse(
                    ReasonId::FormBroadSource,
                    format!(
                        "the source `{}` is too broad; name the directories to archive",
                        s.value
                    ),
                    Some(accepted),
                );
                continue;
            }
            if !self.plain_path(s, "the source", accepted) {
                continue;
            }
            let p = self.ctx.resolve(self.seg, &s.value);
            if is_system_root(&p) || p == self.ctx.roots.home || self.ctx.roots.home.starts_with(&p)
            {
                self.refuse(
                    ReasonId::FormBroadSource,
                    format!(
                        "the source `{}` is too broad (a system or home root)",
                        p.display()
                    ),
                    Some(accepted),
                );
                continue;
            }
            self.readable(s, "the source");
        }
        self.v.warn(CREATE_WARNING.into());
        Some(Accepted {
            risk: Risk::Write,
            network: None,
        })
    }

    fn unzip(&mut self) -> Option<Accepted> {
        let args = self.args().to_vec();
        let mut dest = None;
        let mut list = false;
        let mut others = Vec::new();
        let mut operands = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].value.clone();
            match a.as_str() {
                "-d" => {
                    dest = args.get(i + 1).cloned();
                    i += 2;
                    continue;
                }
                "-l" => list = true,
                _ if a.starts_with("-d") && a.len() > 2 => {
                    dest = Some(args[i].with_value(a[2..].to_string()))
                }
                _ if a.starts_with('-') => others.push(a),
                _ => operands.push(args[i].clone()),
            }
            i += 1;
        }
        let accepted = if list {
            "unzip -l ARCHIVE"
        } else {
            "unzip ARCHIVE -d DEST"
        };
        if !others.is_empty() {
            self.refuse(ReasonId::FormArchiveFlags, format!("unzip accepts no other options ({}); overwrite and password options are refused", others.join(" ")), Some(accepted));
            return None;
        }
        if operands.len() != 1 {
            self.refuse(
                ReasonId::FormArchiveShape,
                format!(
                    "unzip is accepted only as `{accepted}` with one archive and no member names"
                ),
                Some(accepted),
            );
            return None;
        }
        let archive = operands[0].clone();
        if self.plain_path(&archive, "the archive", accepted) {
            self.readable(&archive, "the archive");
        }
        if list {
            if dest.is_some() {
                self.refuse(
                    ReasonId::FormArchiveShape,
                    "listing takes no destination".into(),
                    Some(accepted),
                );
                return None;
            }
            return Some(Accepted {
                risk: Risk::Safe,
                network: None,
            });
        }
        let Some(dest) = dest else {
            self.refuse(
                ReasonId::FormArchiveMissing,
                "extraction needs a destination: `-d DEST`".into(),
                Some(accepted),
            );
            return None;
        };
        if self.plain_path(&dest, "the destination", accepted) {
            self.writable(&dest, "the destination");
        }
        self.extracted("unzip");
        Some(Accepted {
            risk: Risk::Write,
            network: None,
        })
    }

    fn zip(&mut self) -> Option<Accepted> {
        let accepted = "zip -r ARCHIVE SOURCES...";
        let args = self.args().to_vec();
        let mut recursive = false;
        let mut others = Vec::new();
        let mut operands = Vec::new();
        for w in &args {
            match w.value.as_str() {
                "-r" | "--recurse-paths" => recursive = true,
                a if a.starts_with('-') && a.len() > 1 => others.push(a.to_string()),
                _ => operands.push(w.clone()),
            }
        }
        if !others.is_empty() || !recursive {
            let mut flags = others.clone();
            if !recursive {
                flags.push("(missing -r)".into());
            }
            self.refuse(
                ReasonId::FormArchiveFlags,
                format!("zip is accepted only as `{accepted}` ({}); encryption, split, update, move and test-command options are refused", flags.join(" ")),
                Some(accepted),
            );
            return None;
        }
        let Some((archive, sources)) = operands.split_first() else {
            self.refuse(
                ReasonId::FormArchiveMissing,
                "creation needs the archive path".into(),
                Some(accepted),
            );
            return None;
        };
        let (archive, sources) = (archive.clone(), sources.to_vec());
        self.create_checks(&archive, &sources, accepted)
    }

    fn ping(&mut self) -> Option<Accepted> {
        let accepted = "ping -c N HOST (N from 1 to 10)";
        let args = self.args().to_vec();
        let mut count: Option<String> = None;
        let mut others = Vec::new();
        let mut hosts = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].value.clone();
            if a == "-c" {
                count = args.get(i + 1).map(|w| w.value.clone());
                i += 2;
                continue;
            } else if let Some(n) = a.strip_prefix("-c") {
                if !n.is_empty() && !a.starts_with("--") {
                    count = Some(n.to_string());
                } else {
                    others.push(a);
                }
            } else if a.starts_with('-') {
                others.push(a);
            } else {
                hosts.push(args[i].clone());
            }
            i += 1;
        }
        if !others.is_empty() {
            self.refuse(ReasonId::FormPingFlags, format!("ping accepts only `-c N` ({} refused: flood, interval and other options are not allowed)", others.join(" ")), Some(accepted));
            return None;
        }
        let Some(count) = count else {
            self.refuse(
                ReasonId::FormPingCount,
                "ping needs a count: without `-c N` it never stops".into(),
                Some("ping -c 3 HOST"),
            );
            return None;
        };
        match count.parse::<u32>() {
            Ok(n) if (1..=10).contains(&n) => {}
            _ => {
                self.refuse(
                    ReasonId::FormPingCount,
                    format!("ping count `{count}` must be a number from 1 to 10"),
                    Some("ping -c 3 HOST"),
                );
                return None;
            }
        }
        if hosts.len() != 1 {
            self.refuse(
                ReasonId::FormPingHost,
                "ping takes exactly one host".into(),
                Some(accepted),
            );
            return None;
        }
        let h = &hosts[0];
        if h.unresolved || !is_host(&h.value) {
            self.refuse(
                ReasonId::FormPingHost,
                format!(
                    "`{}` is not a host name or address (URLs are refused)",
                    h.value
                ),
                Some(accepted),
            );
            return None;
        }
        self.v.warn(super::NETWORK_WARNING.into());
        Some(Accepted {
            risk: Risk::Safe,
            network: Some(NetworkAccess::Ping),
        })
    }

    fn curl(&mut self) -> Option<Accepted> {
        let accepted = "curl -I http(s)://HOST/PATH";
        let args = self.args().to_vec();
        let mut head = false;
        let mut others = Vec::new();
        let mut urls = Vec::new();
        for w in &args {
            match w.value.as_str() {
                "-I" | "--head" => head = true,
                a if a.starts_with('-') && a.len() > 1 => others.push(a.to_string()),
                _ => urls.push(w.clone()),
            }
        }
        if !others.is_empty() || !head {
            let mut flags = others.clone();
            if !head {
                flags.push("(missing -I)".into());
            }
            self.refuse(
                ReasonId::FormCurlFlags,
                format!("curl is accepted only as a HEAD request `{accepted}` ({}); methods, bodies, headers, credentials, cookies and output files are refused", flags.join(" ")),
                Some(accepted),
            );
            return None;
        }
        if urls.len() != 1 {
            self.refuse(
                ReasonId::FormCurlUrl,
                "curl -I takes exactly one URL".into(),
                Some(accepted),
            );
            return None;
        }
        let u = &urls[0];
        let lower = u.value.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("https://")
            .or_else(|| lower.strip_prefix("http://"));
        let Some(rest) = rest.filter(|_| !u.unresolved && !u.glob) else {
            self.refuse(
                ReasonId::FormCurlUrl,
                format!(
                    "`{}` is not an http or https URL (file:, ftp: and others are refused)",
                    u.value
                ),
                Some(accepted),
            );
            return None;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.contains('@') {
            self.refuse(
                ReasonId::FormCurlUrl,
                "URLs with credentials are refused".into(),
                Some(accepted),
            );
            return None;
        }
        let default = if lower.starts_with("https") {
            "443"
        } else {
            "80"
        };
        let port = authority
            .rsplit_once(':')
            .filter(|(h, _)| !h.ends_with(']') || h.contains('['))
            .map(|(_, p)| p)
            .unwrap_or(default);
        if authority.contains(':') && !authority.starts_with('[') && !matches!(port, "80" | "443") {
            self.refuse(
                ReasonId::FormCurlPort,
                format!("port {port}: the sandbox opens only ports 80 and 443 for curl -I"),
                Some(accepted),
            );
            return None;
        }
        self.v.warn(super::NETWORK_WARNING.into());
        Some(Accepted {
            risk: Risk::Safe,
            network: Some(NetworkAccess::Http),
        })
    }

    fn dns(&mut self, tool: &str) -> Option<Accepted> {
        let accepted = format!("{tool} DOMAIN");
        let args = self.args().to_vec();
        if args.len() != 1 || args[0].value.starts_with(['-', '@', '+']) {
            self.refuse(
                ReasonId::FormDnsShape,
                format!("{tool} is accepted only as `{accepted}`; servers, record types and lookup flags are refused"),
                Some(&accepted),
            );
            return None;
        }
        let d = &args[0];
        if d.unresolved || !is_host(&d.value) {
            self.refuse(
                ReasonId::FormDnsShape,
                format!("`{}` is not a domain name", d.value),
                Some(&accepted),
            );
            return None;
        }
        self.v.warn(super::NETWORK_WARNING.into());
        Some(Accepted {
            risk: Risk::Safe,
            network: Some(NetworkAccess::Dns),
        })
    }
}

fn describe(flags: &[String], operands: &[Word]) -> String {
    let mut v: Vec<String> = flags.to_vec();
    v.extend(operands.iter().map(|w| w.value.clone()));
    v.join(" ")
}

/// A host name or IP address (no scheme, path, port or spaces).
fn is_host(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && !s.starts_with(['-', '.'])
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'))
        && !s.contains("..")
}

fn is_system_root(p: &Path) -> bool {
    p == Path::new("/")
        || [
            "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/opt", "/proc", "/root", "/sbin",
            "/srv", "/sys", "/usr", "/var", "/home", "/mnt", "/media", "/run",
        ]
        .iter()
        .any(|r| p == Path::new(r))
}
