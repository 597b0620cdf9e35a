//! A loaded profile as data: the merged document with its registry and rule
//! set, the path placeholders and their expansion, and the sandbox it asks
//! for. Loading (files, `extends`, selection, pinning, examples) is
//! `crate::profile`, at the top; everything here is what the stages read.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::refuse;
use super::registry::Registry;
use super::rules::RuleSet;
use super::schema::{NetworkSetting, ProfileDoc};
use crate::sandbox::{Limits, NetworkAccess, SandboxSpec};

/// A loaded, validated profile.
#[derive(Debug)]
pub struct Profile {
    /// Name (file stem or `name` key).
    pub name: String,
    /// `builtin:NAME` or the file path.
    pub source: String,
    /// The merged document.
    pub doc: ProfileDoc,
    /// Registry with this profile's overrides.
    pub registry: Registry,
    /// Safety rules with this profile's custom rules.
    /// Shared with the supervisor's exec-time judge (built once per run).
    pub rules: std::sync::Arc<RuleSet>,
    /// Names of the profiles in the `extends` chain, this one first.
    pub chain: Vec<String>,
    /// The profile's paths resolved for the last situation asked about
    /// (see [`Profile::expand_list`]).
    pub(crate) expanded: Mutex<ExpandCache>,
}

/// The profile's roots with placeholders resolved, as the path checks read
/// them (the checks themselves are `crate::policy::paths`).
#[derive(Debug, Clone, Default)]
pub struct Roots {
    /// Readable trees.
    pub read: Vec<PathBuf>,
    /// Writable trees.
    pub write: Vec<PathBuf>,
    /// Never readable.
    pub deny_read: Vec<PathBuf>,
    /// Too broad for recursive or destructive operations.
    pub broad: Vec<PathBuf>,
    /// The user's home (broad by itself).
    pub home: PathBuf,
    /// Protected files inside every writable root (`[paths] protected`):
    /// paths relative to the root, `dir/` for a tree, `*` and `**` globs.
    pub protected: Vec<String>,
    /// `protected` split into components, once (on the first write check;
    /// see `crate::policy::paths`): a destructive check compares a path
    /// with every entry.
    pub(crate) protected_split: std::sync::OnceLock<ProtectedEntries>,
    /// The protected entries that are symbolic links inside a writable
    /// root, with where they lead (review 10 R11), found on the first write
    /// check (see `crate::policy::paths`).
    pub(crate) protected_links: std::sync::OnceLock<Vec<ProtectedLink>>,
    /// The protected tree whose link scan stopped at its bound, set with
    /// `protected_links` (review 11 F11).
    pub(crate) links_unscanned: std::sync::OnceLock<Option<PathBuf>>,
    /// Secret file names wherever they are (`[paths] secret_names`), with
    /// `!` exceptions.
    pub secret_names: Vec<String>,
    /// Why entries of `[paths] write` are not writable roots here (the
    /// working directory is the home directory, `/etc/cron.d`...): one
    /// warning each, shown with every decision.
    pub refused: Vec<String>,
    /// The situation's directories with their real paths, read once:
    /// where a decision's paths are resolved from
    /// ([`crate::sys::path::resolve_anchored`]). Empty: from `/`.
    pub anchors: crate::sys::path::Anchors,
}

/// A protected path that is a symbolic link (`.git/hooks -> ../githooks`,
/// a hook `pre-commit -> ../../scripts/pc.sh`) to a place inside a
/// writable root: a write there changes the protected entry (review 10
/// R11). Absolute, real paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProtectedLink {
    /// The protected link (as the report names it).
    pub(crate) link: PathBuf,
    /// Where it leads: the protected path there.
    pub(crate) target: PathBuf,
    /// The target is protected as a tree (a directory the link stands for).
    pub(crate) tree: bool,
}

/// A `[paths] protected` entry split into its components: the non-empty,
/// non-`.` pieces between `/` (what the write checks compare), and whether
/// it names a tree (a trailing `/`).
#[derive(Debug, Clone)]
pub(crate) struct ProtectedEntry {
    /// The components.
    pub(crate) pat: Vec<String>,
    /// `dir/`: the entry is a tree.
    pub(crate) tree: bool,
    /// The first and the last component hold no pattern character
    /// (`*`, `?`, `[`, `\`): a name matches them when it is equal.
    pub(crate) literal_ends: (bool, bool),
    /// The first and the last component are `**`.
    pub(crate) globstar_ends: (bool, bool),
}

/// The `[paths] protected` entries split ([`ProtectedEntry`]), with an
/// index by first component: a path's protected entries can only be those
/// whose first component is `**` or a pattern, or equals the path's first
/// component (below its writable root).
#[derive(Debug, Clone, Default)]
pub(crate) struct ProtectedEntries {
    /// Every entry, in the profile's order.
    pub(crate) all: Vec<ProtectedEntry>,
    /// The entries whose first component is `**` or holds a pattern
    /// character, in order.
    pub(crate) any_first: Vec<usize>,
    /// The other entries with components, in order, by their first
    /// component.
    pub(crate) by_first: HashMap<String, Vec<usize>>,
}

impl ProtectedEntries {
    /// The entries, in order, that a path whose first component (below
    /// the root) is `first` may hit: those of `any_first` and those filed
    /// under `first`; every entry when there is no first component.
    pub(crate) fn candidates(&self, first: Option<&str>) -> Candidates<'_> {
        match first {
            None => Candidates::All(0..self.all.len()),
            Some(f) => Candidates::Merge(
                self.any_first.iter().peekable(),
                self.by_first
                    .get(f)
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .peekable(),
            ),
        }
    }
}

/// [`ProtectedEntries::candidates`]: indices in increasing order.
pub(crate) enum Candidates<'a> {
    /// Every entry.
    All(std::ops::Range<usize>),
    /// Two increasing lists with no index in common, merged.
    Merge(
        std::iter::Peekable<std::slice::Iter<'a, usize>>,
        std::iter::Peekable<std::slice::Iter<'a, usize>>,
    ),
}

impl Iterator for Candidates<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        match self {
            Candidates::All(r) => r.next(),
            Candidates::Merge(a, b) => match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x < y => a.next().copied(),
                (_, Some(_)) => b.next().copied(),
                (Some(_), None) => a.next().copied(),
                (None, None) => None,
            },
        }
    }
}

impl Roots {
    /// The `protected` entries split and indexed, in their order (on the
    /// first call; the roots do not change after they are built).
    pub(crate) fn protected_entries(&self) -> &ProtectedEntries {
        self.protected_split.get_or_init(|| {
            let all: Vec<ProtectedEntry> = self
                .protected
                .iter()
                .map(|entry| {
                    let pat: Vec<String> = entry
                        .trim_end_matches('/')
                        .split('/')
                        .filter(|c| !c.is_empty() && *c != ".")
                        .map(String::from)
                        .collect();
                    let literal =
                        |c: Option<&String>| c.is_some_and(|c| !c.contains(['*', '?', '[', '\\']));
                    let globstar = |c: Option<&String>| c.is_some_and(|c| c == "**");
                    ProtectedEntry {
                        literal_ends: (literal(pat.first()), literal(pat.last())),
                        globstar_ends: (globstar(pat.first()), globstar(pat.last())),
                        pat,
                        tree: entry.ends_with('/'),
                    }
                })
                .collect();
            let mut index = ProtectedEntries::default();
            for (i, e) in all.iter().enumerate() {
                let Some(first) = e.pat.first() else {
                    continue;
                };
                if e.literal_ends.0 && !e.globstar_ends.0 {
                    index.by_first.entry(first.clone()).or_default().push(i);
                } else {
                    index.any_first.push(i);
                }
            }
            index.all = all;
            index
        })
    }
}

/// An entry of `[paths] write` that is not a writable root in this
/// situation (see [`refuse::refusal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedRoot {
    /// The entry as the profile spells it (`{cwd}`).
    pub entry: String,
    /// What it expanded to.
    pub path: PathBuf,
    /// Why it is refused.
    pub why: String,
}

impl RefusedRoot {
    /// The warning shown with decisions: what is not writable, why, and
    /// what to do instead.
    pub fn warning(&self) -> String {
        let (path, why) = (self.path.display(), &self.why);
        if self.entry.contains("{cwd}") {
            let what = if self.entry == "{cwd}" {
                format!("the working directory {path}")
            } else {
                format!("the writable root `{}` ({path})", self.entry)
            };
            format!(
                "{what} is not writable: {why}; commands cannot write there. Run the agent in a project directory (e.g. ~/src/NAME or /tmp/NAME), or `cd` into one"
            )
        } else if self.entry.contains("{git_root}") {
            format!(
                "the repository root {path} (`{}`) is not writable: {why}",
                self.entry
            )
        } else if self.entry.contains("{tmp}") {
            format!(
                "the temp directory {path} (`{}`: $TMPDIR, else /tmp) is not writable: {why}; set TMPDIR to a temporary directory of your own, apart from the home directory and the system directories",
                self.entry
            )
        } else {
            format!(
                "the writable root `{}` ({path}) is refused: {why}; remove it from `[paths] write`",
                self.entry
            )
        }
    }
}

/// Placeholder expansions resolved through the filesystem, for one
/// situation: a start resolves each profile path once, not once per pass
/// (decide, sandbox spec, Landlock plan), and an in-process caller
/// (`benches/checks.rs`, the hook's decision) once per situation.
#[derive(Debug, Default)]
pub(crate) struct ExpandCache {
    places: Option<Placeholders>,
    /// Keyed by the entry's bytes with FNV-1a (SipHash cost more than the
    /// rest of a lookup; the keys are the profile's own paths).
    paths: HashMap<String, Option<PathBuf>, BuildHasherDefault<crate::sys::path::Fnv>>,
    /// `[paths] write` split into the writable roots and the refused
    /// entries (the decision, the trusted steps and the sandbox each ask).
    write: Option<Arc<WriteRoots>>,
    /// The roots for these places (computed by `crate::policy`).
    roots: Option<Arc<Roots>>,
    /// The parser's trusted harness steps for these places (the trusted
    /// source directories and the cwd sentinel's directory).
    trusted: Option<Arc<[crate::parse::TrustedStep]>>,
    /// Real paths of the existing directories met while resolving.
    real: crate::sys::path::RealMemo,
}

impl ExpandCache {
    /// Forgets everything when asked about other places.
    fn for_places(&mut self, ph: &Placeholders) {
        if self.places.as_ref() != Some(ph) {
            *self = ExpandCache {
                places: Some(ph.clone()),
                ..ExpandCache::default()
            };
            // Most of a profile's paths are under HOME (see `RealMemo`).
            self.real.seed_dir(&ph.home);
        }
    }
}

/// `[paths] write` for one situation: what is writable and what is refused.
#[derive(Debug, Default)]
struct WriteRoots {
    /// [`Placeholders::writable`].
    writable: Vec<PathBuf>,
    /// [`Profile::refused_roots`].
    refused: Vec<RefusedRoot>,
}

/// Values of the path placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholders {
    /// `{cwd}`
    pub cwd: PathBuf,
    /// `{home}`
    pub home: PathBuf,
    /// `{tmp}`: `$TMPDIR` or `/tmp`.
    pub tmp: PathBuf,
    /// `{git_root}`: the enclosing repository, if any.
    pub git_root: Option<PathBuf>,
    /// `{state}`: safe-exec's state directory.
    pub state: PathBuf,
    /// The walk up from `{cwd}` that found `{git_root}`, when it was made
    /// (`sys::ancestry`): its levels answer whether a root that follows
    /// the cwd lies inside a git directory, without walking again.
    pub walked: Option<std::sync::Arc<crate::sys::ancestry::GitAncestry>>,
}

impl Placeholders {
    /// Substitutes placeholders in one path; `None` when it names an absent
    /// `{git_root}`.
    pub fn expand(&self, s: &str) -> Option<PathBuf> {
        self.expand_memo(s, &mut crate::sys::path::RealMemo::default())
    }

    /// [`Placeholders::expand`], keeping the real paths of the existing
    /// directories met in `memo` for the next paths.
    fn expand_memo(&self, s: &str, memo: &mut crate::sys::path::RealMemo) -> Option<PathBuf> {
        self.expand_with(s, &self.values(), memo)
    }

    /// The placeholders and their values as text, in the order they are
    /// replaced (worked out once for a list of paths, not once per path).
    fn values(&self) -> [(&'static str, Cow<'_, str>); 5] {
        let git = self
            .git_root
            .as_ref()
            .map(|p| p.to_string_lossy())
            .unwrap_or_default();
        [
            ("{cwd}", self.cwd.to_string_lossy()),
            ("{home}", self.home.to_string_lossy()),
            ("{tmp}", self.tmp.to_string_lossy()),
            ("{git_root}", git),
            ("{state}", self.state.to_string_lossy()),
        ]
    }

    /// [`Placeholders::expand_memo`] with `values` = [`Placeholders::values`].
    fn expand_with(
        &self,
        s: &str,
        values: &[(&str, Cow<'_, str>)],
        memo: &mut crate::sys::path::RealMemo,
    ) -> Option<PathBuf> {
        if s.contains("{git_root}") && self.git_root.is_none() {
            return None;
        }
        let out = if !s.contains('{') {
            // Nothing to substitute (`/`, `/usr/share`).
            s.to_string()
        } else {
            substitute_once(s, values).unwrap_or_else(|| substitute_in_turn(s, values))
        };
        // Most entries are clean absolute paths already (placeholders are
        // resolved, clean paths); the lexical clean-up would rebuild them
        // component by component into the same path.
        let p = if is_clean_absolute(&out) {
            PathBuf::from(out)
        } else {
            crate::parse::shell_join(Path::new("/"), &out)
        };
        // Resolve symlinks so that comparisons with resolved operands hold;
        // a path that does not exist resolves like operands do (its longest
        // existing prefix), without a failing realpath per component.
        // `p` is clean and absolute (no `..` left): its longest existing
        // prefix is what `sys::path::resolve` would resolve.
        Some(crate::sys::path::real_prefix_memo(&p, memo))
    }

    /// Writable roots, minus the ones that would hand the command what
    /// runs later outside the sandbox: `/`, the home directory and its
    /// ancestors, system directories and what is inside them (`/etc/cron.d`,
    /// `/usr/local/bin`), and for the roots that follow the working
    /// directory the hidden directories of a home ([`refuse::refusal`]).
    /// `TMPDIR=/`, `--cwd /` or a `cd ~` must not make them writable.
    pub fn writable(&self, list: &[String]) -> Vec<PathBuf> {
        let expanded = list.iter().map(|s| self.expand(s)).collect::<Vec<_>>();
        self.writable_of(list, expanded)
    }

    /// [`Placeholders::writable`] of entries already expanded (`expanded[i]`
    /// is `self.expand(&list[i])`).
    fn writable_of(&self, list: &[String], expanded: Vec<Option<PathBuf>>) -> Vec<PathBuf> {
        self.split_write(list, expanded, &[]).writable
    }

    /// The writable roots among `list` (already expanded) and the entries
    /// refused as writable roots, each refused path once: one
    /// [`Placeholders::refusal`] per entry for both.
    /// `protected` is `[paths] protected`: a root that follows the working
    /// directory may not lie inside one of its trees
    /// ([`refuse::inside_protected`]).
    fn split_write(
        &self,
        list: &[String],
        expanded: Vec<Option<PathBuf>>,
        protected: &[String],
    ) -> WriteRoots {
        let mut out = WriteRoots::default();
        for (entry, p) in list.iter().zip(expanded) {
            let Some(p) = p else { continue };
            let movable = entry.contains("{cwd}") || entry.contains("{git_root}");
            let refused = self.refusal(entry, &p).or_else(|| {
                movable
                    .then(|| refuse::inside_protected(&p, protected, self.walked.as_deref()))
                    .flatten()
            });
            match refused {
                None => out.writable.push(p),
                Some(why) => {
                    if !out.refused.iter().any(|r| r.path == p) {
                        out.refused.push(RefusedRoot {
                            entry: entry.clone(),
                            path: p,
                            why,
                        });
                    }
                }
            }
        }
        out
    }

    /// Why the expanded entry `p` of `[paths] write` is not a writable root.
    fn refusal(&self, entry: &str, p: &Path) -> Option<String> {
        let movable = entry.contains("{cwd}") || entry.contains("{git_root}");
        refuse::refusal(p, &self.home, movable)
    }
}

/// `s` with each placeholder of `values` replaced in turn, in their order
/// (a value may itself hold a placeholder's spelling, which a later
/// replacement then replaces): the definition of the expansion.
fn substitute_in_turn(s: &str, values: &[(&str, Cow<'_, str>)]) -> String {
    let mut out = s.to_string();
    for (name, value) in values {
        // A placeholder that is not there is not copied for.
        if out.contains(name) {
            out = out.replace(name, value);
        }
    }
    out
}

/// [`substitute_in_turn`] in one pass from the left, when that gives the
/// same string: every value it inserts is absolute (starts with `/`) and
/// holds no `{`. A placeholder's spelling is `{`, letters, `}`; an inserted
/// value can then neither start one nor continue one that `s` started, so
/// no replacement can form a placeholder for a later one to replace, and
/// the placeholders of `s` do not overlap (each ends at its first `}`).
/// `None` when a value does not qualify (then the caller replaces in turn).
fn substitute_once(s: &str, values: &[(&str, Cow<'_, str>)]) -> Option<String> {
    let mut out = String::with_capacity(s.len() + 64);
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        match values.iter().find(|(name, _)| rest.starts_with(name)) {
            Some((name, value)) => {
                if !value.starts_with('/') || value.contains('{') {
                    return None;
                }
                out.push_str(value);
                rest = &rest[name.len()..];
            }
            None => {
                out.push('{');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

// Whether `shell_join("/", s)` is `s` itself.
use crate::sys::path::is_clean_absolute;

impl Profile {
    /// The writable roots with placeholders resolved: the one definition the
    /// sandbox, the policy and the parser's trust decisions share (see
    /// [`Placeholders::writable`] for what is dropped).
    pub fn writable_roots(&self, ph: &Placeholders) -> Vec<PathBuf> {
        self.write_roots(ph).writable.clone()
    }

    /// The entries of `[paths] write` that are not writable roots for `ph`,
    /// and why (see [`Placeholders::writable`]).
    pub fn refused_roots(&self, ph: &Placeholders) -> Vec<RefusedRoot> {
        self.write_roots(ph).refused.clone()
    }

    /// `[paths] write` judged for `ph` once per situation and kept with the
    /// expanded paths: the decision's roots, the parser's trusted steps and
    /// the sandbox spec each ask for it.
    fn write_roots(&self, ph: &Placeholders) -> Arc<WriteRoots> {
        if let Some(w) = &self.cache(ph).write {
            return w.clone();
        }
        let list = &self.doc.paths.write;
        let w =
            Arc::new(ph.split_write(list, self.expand_each(ph, list), &self.doc.paths.protected));
        self.cache(ph).write = Some(w.clone());
        w
    }

    /// [`Placeholders::expand`] of each entry, `None` for an absent
    /// `{git_root}`. Each entry is resolved through the filesystem once per
    /// situation: the answers are kept in the profile until it is asked
    /// about other placeholder values.
    pub fn expand_each(&self, ph: &Placeholders, list: &[String]) -> Vec<Option<PathBuf>> {
        let mut cache = self.cache(ph);
        let mut values = None;
        list.iter()
            .map(|s| {
                if let Some(v) = cache.paths.get(s) {
                    return v.clone();
                }
                let values = values.get_or_insert_with(|| ph.values());
                let v = ph.expand_with(s, values, &mut cache.real);
                cache.paths.insert(s.clone(), v.clone());
                v
            })
            .collect()
    }

    /// The situation's directories (`{cwd}`, `{home}`, `{tmp}`) as
    /// [`Anchors`](crate::sys::path::Anchors): each one's longest prefix
    /// that exists, with the real path the profile's paths were resolved
    /// with (asked of the filesystem once per situation, usually already
    /// while expanding the profile's paths).
    pub fn anchors(&self, ph: &Placeholders) -> crate::sys::path::Anchors {
        let dirs = ["{cwd}", "{home}", "{tmp}"].map(String::from);
        let expanded = self.expand_each(ph, &dirs);
        let cache = self.cache(ph);
        crate::sys::path::Anchors::new(
            [&ph.cwd, &ph.home, &ph.tmp]
                .into_iter()
                .zip(expanded)
                .filter(|(_, e)| e.is_some())
                .filter_map(|(spelled, _)| {
                    let clean = spelled
                        .to_str()
                        .filter(|s| is_clean_absolute(s))
                        .map(PathBuf::from)
                        .unwrap_or_else(|| {
                            crate::parse::shell_join(Path::new("/"), &spelled.to_string_lossy())
                        });
                    cache.real.existing_prefix(&clean)
                }),
        )
    }

    /// The path cache, emptied first when `ph` differs from the places it
    /// holds answers for.
    fn cache(&self, ph: &Placeholders) -> MutexGuard<'_, ExpandCache> {
        // A poisoned lock only means another thread panicked mid-insert of
        // an answer it had computed; the map is still a map.
        let mut cache = match self.expanded.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        cache.for_places(ph);
        cache
    }

    /// The roots for `ph`, computed by `compute` once per situation and
    /// shared: a decision needs them, and they do not change between
    /// decisions (`crate::policy` computes them: `Profile::roots_shared`).
    pub fn roots_cached(&self, ph: &Placeholders, compute: impl FnOnce() -> Roots) -> Arc<Roots> {
        if let Some(r) = &self.cache(ph).roots {
            return r.clone();
        }
        // Computed without the lock held (`compute` expands paths itself).
        let r = Arc::new(compute());
        self.cache(ph).roots = Some(r.clone());
        r
    }

    /// The harness steps the parser may trust (a sourced file in these
    /// directories, the cwd sentinel), for `ph`: computed by `compute` once
    /// per situation and shared, so a decision copies none of it.
    pub fn trusted_shared(
        &self,
        ph: &Placeholders,
        compute: impl FnOnce() -> Vec<crate::parse::TrustedStep>,
    ) -> Arc<[crate::parse::TrustedStep]> {
        if let Some(t) = &self.cache(ph).trusted {
            return t.clone();
        }
        let t: Arc<[crate::parse::TrustedStep]> = compute().into();
        self.cache(ph).trusted = Some(t.clone());
        t
    }

    /// [`Profile::roots_cached`] and [`Profile::trusted_shared`] together:
    /// once both are known for `ph`, one look under the lock (a decision
    /// needs both; each look compares the places).
    pub fn roots_and_trusted(
        &self,
        ph: &Placeholders,
        roots: impl FnOnce() -> Roots,
        trusted: impl FnOnce() -> Vec<crate::parse::TrustedStep>,
    ) -> (Arc<Roots>, Arc<[crate::parse::TrustedStep]>) {
        {
            let cache = self.cache(ph);
            if let (Some(r), Some(t)) = (&cache.roots, &cache.trusted) {
                return (r.clone(), t.clone());
            }
        }
        (
            self.roots_cached(ph, roots),
            self.trusted_shared(ph, trusted),
        )
    }

    /// [`Profile::expand_each`] without the absent entries.
    pub fn expand_list(&self, ph: &Placeholders, list: &[String]) -> Vec<PathBuf> {
        self.expand_each(ph, list).into_iter().flatten().collect()
    }

    /// The sandbox the command runs in.
    pub fn sandbox_spec(&self, ph: &Placeholders, timeout: Option<u64>) -> SandboxSpec {
        let p = &self.doc.paths;
        let s = &self.doc.sandbox;
        let mut read = self.expand_list(ph, &p.read);
        read.extend(self.expand_list(ph, &p.runtime));
        let limit_timeout = match (s.timeout_seconds, timeout) {
            // `--timeout 0` changes nothing: the option can only shorten.
            (0, None) | (0, Some(0)) => None,
            (0, Some(t)) => Some(t),
            (p, None) | (p, Some(0)) => Some(p),
            (p, Some(t)) => Some(p.min(t)),
        };
        SandboxSpec {
            read,
            write: self.writable_roots(ph),
            deny_read: self.expand_list(ph, &p.deny_read),
            network: match s.network {
                NetworkSetting::Off => NetworkAccess::Off,
                // Loopback only where the supervisor enforces addresses;
                // otherwise the network stays off.
                NetworkSetting::Loopback if crate::supervisor::loopback_enforced() => {
                    NetworkAccess::Loopback
                }
                NetworkSetting::Loopback => NetworkAccess::Off,
                NetworkSetting::Full => NetworkAccess::Full,
            },
            unix_sockets: s.unix_sockets,
            sysv_ipc: s.sysv_ipc,
            capabilities: s.capabilities.clone(),
            devices: self.expand_list(ph, &s.devices),
            pty_broker: false,
            job_control: false,
            limits: Limits {
                core: s.limits.core,
                file_size: s.limits.file_size,
                open_files: s.limits.open_files,
                processes: s.limits.processes,
                cpu_seconds: s.limits.cpu_seconds,
                address_space: s.limits.address_space,
            },
            enforcement: s.enforcement,
            timeout: limit_timeout
                .filter(|t| *t > 0)
                .map(std::time::Duration::from_secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUES: &[&str] = &[
        "/w/p", "/h", "/", "", "home", "{home}", "/x/{cwd}", "cwd}", "/a}b", "/{", "tmp", "/é/ü",
    ];
    const ENTRIES: &[&str] = &[
        "{cwd}",
        "{home}/.ssh",
        "{home}/{cwd}",
        "{{cwd}}",
        "{{home}",
        "{ho{cwd}me}",
        "{state}/audit.jsonl",
        "{git_root}/.git/config",
        "{tmp}{tmp}",
        "x{cwd",
        "{}",
        "{unknown}/{home}",
        "}{home}{",
        "/plain/path",
        "{",
        "{cwd}}home}",
    ];

    #[test]
    fn one_pass_substitution_equals_replacing_in_turn() {
        let mut compared = 0;
        for a in VALUES {
            for b in VALUES {
                for c in ["/t", "/{tmp}", "state"] {
                    let values = [
                        ("{cwd}", Cow::Borrowed(*a)),
                        ("{home}", Cow::Borrowed(*b)),
                        ("{tmp}", Cow::Borrowed(c)),
                        ("{git_root}", Cow::Borrowed("/g")),
                        ("{state}", Cow::Borrowed(*b)),
                    ];
                    for s in ENTRIES {
                        if let Some(once) = substitute_once(s, &values) {
                            compared += 1;
                            assert_eq!(
                                once,
                                substitute_in_turn(s, &values),
                                "{s:?} with {values:?}"
                            );
                        }
                    }
                }
            }
        }
        assert!(compared > 1000, "{compared}");
    }

    #[test]
    fn clean_absolute_paths_are_what_the_lexical_join_gives() {
        for s in [
            "/",
            "//",
            "/a",
            "/a/",
            "/a//b",
            "/a/./b",
            "/a/../b",
            "/..",
            "/.",
            "/a/.",
            "/a/..",
            "a",
            "",
            "./a",
            "/a/b/c",
            "/a/.b/..c/...",
            "/a b/c",
            "/é",
        ] {
            if is_clean_absolute(s) {
                assert_eq!(
                    crate::parse::shell_join(Path::new("/"), s),
                    PathBuf::from(s),
                    "{s}"
                );
            }
        }
        assert!(is_clean_absolute("/a/.b/..c/..."));
        assert!(!is_clean_absolute("/a/"));
        assert!(!is_clean_absolute("/a/./b"));
    }

    #[test]
    fn expansion_with_odd_places_is_unchanged() {
        let d = tempfile::tempdir().expect("tmp");
        let base = crate::sys::path::canonicalize(d.path()).expect("real");
        for cwd in ["{home}", "home}", "{tmp}x", "plain"] {
            let dir = base.join(cwd);
            std::fs::create_dir_all(&dir).expect("dir");
            let ph = Placeholders {
                cwd: dir.clone(),
                home: base.join("h"),
                tmp: base.join("t"),
                git_root: None,
                state: base.join("s"),
                walked: None,
            };
            for s in ENTRIES {
                if s.contains("{git_root}") {
                    assert_eq!(ph.expand(s), None);
                    continue;
                }
                let values = [
                    ("{cwd}", ph.cwd.to_string_lossy()),
                    ("{home}", ph.home.to_string_lossy()),
                    ("{tmp}", ph.tmp.to_string_lossy()),
                    ("{git_root}", Cow::Borrowed("")),
                    ("{state}", ph.state.to_string_lossy()),
                ];
                let want = crate::sys::path::real_prefix_memo(
                    &crate::parse::shell_join(Path::new("/"), &substitute_in_turn(s, &values)),
                    &mut crate::sys::path::RealMemo::default(),
                );
                assert_eq!(ph.expand(s), Some(want), "{s} in {}", dir.display());
            }
        }
    }
}
