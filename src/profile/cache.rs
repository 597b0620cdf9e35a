//! The loaded-profile cache of a profile FILE: the merged document of the
//! file and its `extends` chain, with the keywords of its custom rules, kept
//! in `{state}/profiles/` so a start does not parse the TOML again (200
//! custom rules cost ~10 million instructions to parse, ~2 ms).
//!
//! An entry is three parts: a header line (what the entry is for and was
//! made from, where each custom rule's line ends, and a hash of the rest),
//! the document without its custom rules (one line), and one line per
//! custom rule: its id, its keywords and the JSON of its definition. A
//! start parses the header and the document and finds each rule's id and
//! keywords in its line; a rule's definition is parsed only when something
//! needs it (a command containing one of its keywords: see
//! [`crate::config::rules::CustomRule`]), so a start with many custom rules
//! whose keywords the command does not mention costs little more than one
//! without them. The hash covers every byte after the header, so an
//! entry damaged anywhere is ignored as a whole, as before, even in a rule
//! that would have been parsed only later.
//!
//! Whoever can write an entry can change the policy, so the cache lives in
//! the state directory, protected as the approval key beside it is: in every
//! built-in profile's `deny_read` (`{state}`), so a sandboxed command can
//! neither read nor write it (Landlock grants it nothing) and the static
//! policy refuses a command or file tool that writes there (a write into a
//! `deny_read` path is refused), confined or not. The system configuration's
//! `state_dir`, when set, moves it (and the agent cannot).
//!
//! An entry is read only when it and its directory belong to the effective
//! user and no one else can write them (a shared state directory gives
//! another user no say), and under a system `pin` only in the state
//! directory the system configuration names (`select.rs`): a directory the
//! environment chooses is the agent's, and the pin must hold against it.
//!
//! An entry is trusted only for the very files it was made from: each file
//! of the chain is named with its device, inode, size, modification and
//! change times and a hash of its content, all checked at every use (a file
//! written again gets a new change time, which no one can set back); the
//! binary's identity is in the entry's name and in the entry. Anything that
//! does not check out (another binary, a changed, moved or missing file, a
//! truncated or corrupt entry, another format) is ignored and the profile
//! is loaded from its files, which writes a new entry.

use std::hash::{Hash, Hasher};
use std::io::Read as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::schema::ProfileDoc;
use crate::config::rules::{CustomRule, CustomRules};

/// Bumped when the entry's layout or meaning changes.
const FORMAT: u32 = 2;

/// What identifies one file of the chain as it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    /// The path as the loader read it.
    pub path: String,
    dev: u64,
    ino: u64,
    size: u64,
    mtime: i64,
    mtime_ns: i64,
    ctime: i64,
    ctime_ns: i64,
    /// SipHash of the content (the metadata above already changes with
    /// any write; this guards against a file system with coarse times).
    hash: u64,
}

impl FileId {
    fn new(path: &str, m: &std::fs::Metadata, text: &str) -> Self {
        Self {
            path: path.to_string(),
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            mtime: m.mtime(),
            mtime_ns: m.mtime_nsec(),
            ctime: m.ctime(),
            ctime_ns: m.ctime_nsec(),
            hash: content_hash(text),
        }
    }
}

fn content_hash(text: &str) -> u64 {
    // Keys fixed at zero: the hash only has to tell an edit apart, and the
    // binary identity keys every entry (a new Rust version's SipHash is a
    // new binary).
    let mut h = std::hash::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Reads a profile file with its identity, taken from the open file (so the
/// identity is that of the bytes read).
pub fn read_file(path: &str) -> std::io::Result<(String, FileId)> {
    let mut f = std::fs::File::open(path)?;
    let m = f.metadata()?;
    let mut text = String::with_capacity(usize::try_from(m.len()).unwrap_or(0));
    f.read_to_string(&mut text)?;
    let id = FileId::new(path, &m, &text);
    Ok((text, id))
}

/// The first line of an entry: checked before the document is parsed.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: u32,
    binary: String,
    selector: String,
    files: Vec<FileId>,
    source: String,
    chain: Vec<String>,
    /// Where each custom rule's line ends (a byte offset after the header
    /// line), in order.
    rules: Vec<usize>,
    /// [`body_hash`] of everything after the header line.
    body: u64,
}

/// A fast hash of the entry's body, only against damage (whoever can
/// write the entry can write a matching hash: the entry's safety is where
/// it lives, see the module doc): eight bytes per multiply.
pub(super) fn body_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
    }
    for &b in words.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    h
}

/// `text`, an entry edited by hand, made whole again: its header's rule
/// offsets and hash recomputed from its body, as someone who can write the
/// cache would write a forged entry (the tests' forgeries, which show that
/// what protects an entry is where it lives). `None` if the header does not
/// parse.
#[doc(hidden)]
pub fn reseal(text: &str) -> Option<String> {
    let (head, body) = text.split_once('\n')?;
    let mut h: Header = serde_json::from_str(head).ok()?;
    let mut ends = Vec::new();
    let mut at = body.find('\n');
    while let Some(i) = at {
        let next = body[i + 1..].find('\n').map(|j| i + 1 + j);
        ends.push(next.unwrap_or(body.len()));
        at = next;
    }
    h.rules = ends;
    h.body = body_hash(body.as_bytes());
    Some(format!("{}\n{body}", serde_json::to_string(&h).ok()?))
}

/// A profile as the cache gives it back.
#[derive(Debug)]
pub struct Cached {
    /// The merged document, `name` set; its custom rules' definitions are
    /// parsed when needed.
    pub doc: ProfileDoc,
    /// `Profile::source`.
    pub source: String,
    /// `Profile::chain`.
    pub chain: Vec<String>,
}

/// The entry of `selector` (a file path) for this binary in `dir`.
pub fn entry_path(dir: &Path, selector: &str, binary: &str) -> Option<PathBuf> {
    let mut h = std::hash::DefaultHasher::new();
    FORMAT.hash(&mut h);
    binary.hash(&mut h);
    // A relative path (and a relative `extends` in it) is read from the
    // working directory.
    if !selector.starts_with('/') {
        std::env::current_dir().ok()?.hash(&mut h);
    }
    selector.hash(&mut h);
    Some(dir.join(format!("{:016x}.json", h.finish())))
}

/// The cached profile of `selector`, if the entry exists and every file it
/// was made from is unchanged; `None` (load from the files) otherwise.
pub fn lookup(entry: &Path, selector: &str, binary: &str) -> Option<Cached> {
    let text = read_own(entry)?;
    let (head, body) = text.split_once('\n')?;
    let h: Header = serde_json::from_str(head).ok()?;
    if h.format != FORMAT || h.binary != binary || h.selector != selector || h.files.is_empty() {
        return None;
    }
    for f in &h.files {
        let (_, now) = read_file(&f.path).ok()?;
        if &now != f {
            return None;
        }
    }
    if body_hash(body.as_bytes()) != h.body {
        return None;
    }
    // The document ends where the first rule's line starts.
    let doc_end = match h.rules.first() {
        Some(_) => body.find('\n')?,
        None => body.len(),
    };
    let mut doc: ProfileDoc = serde_json::from_str(body.get(..doc_end)?).ok()?;
    if !doc.rule.is_empty() {
        return None;
    }
    // Each rule's line, from the offsets in the header (no scan of the
    // lines), as ranges of the entry's text, which the rules share: each
    // definition is parsed when needed.
    let base = head.len() + 1;
    let mut start = doc_end + 1;
    let text = std::sync::Arc::new(text);
    let mut rules = Vec::with_capacity(h.rules.len());
    for end in &h.rules {
        let line = base.checked_add(start)?..base.checked_add(*end)?;
        rules.push(CustomRule::from_cache_line(
            std::sync::Arc::clone(&text),
            line,
        )?);
        start = end.checked_add(1)?;
    }
    if base.checked_add(start)? != text.len() + 1 {
        return None;
    }
    doc.rule = CustomRules::from_rules(rules);
    Some(Cached {
        doc,
        source: h.source,
        chain: h.chain,
    })
}

/// The text of an entry, if it and its directory are this user's own:
/// a regular file (not a link: opened with `O_NOFOLLOW`) and a directory,
/// each owned by the effective user and writable by no one else. Another
/// user who can write a shared state directory (a system `state_dir` of
/// mode 1777, say) could otherwise set this user's policy with an entry
/// of their own making, or swap the directory for one of theirs.
fn read_own(entry: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let uid = nix::unistd::geteuid().as_raw();
    let own = |m: &std::fs::Metadata| m.uid() == uid && m.mode() & 0o022 == 0;
    let dir = std::fs::symlink_metadata(entry.parent()?).ok()?;
    if !dir.is_dir() || !own(&dir) {
        return None;
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(entry)
        .ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() || !own(&m) {
        return None;
    }
    let mut text = String::with_capacity(usize::try_from(m.len()).unwrap_or(0));
    f.read_to_string(&mut text).ok()?;
    Some(text)
}

/// Writes the entry (atomically: a whole entry or none). Errors only cost
/// the cache.
pub fn store(
    entry: &Path,
    selector: &str,
    binary: &str,
    files: Vec<FileId>,
    source: &str,
    chain: &[String],
    doc: &ProfileDoc,
) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = entry
        .parent()
        .ok_or_else(|| std::io::Error::other("no directory"))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // The document without its rules, then each rule's definition on a line
    // of its own (JSON text has no raw line break).
    let mut body = serde_json::to_vec(&ProfileDoc {
        rule: CustomRules::default(),
        ..doc.clone()
    })
    .map_err(std::io::Error::other)?;
    let mut rules = Vec::with_capacity(doc.rule.len());
    for r in doc.rule.iter() {
        let line = r
            .cache_line()
            .ok_or_else(|| std::io::Error::other("a rule that cannot be cached"))?;
        body.push(b'\n');
        body.extend_from_slice(line.as_bytes());
        rules.push(body.len());
    }
    let head = Header {
        format: FORMAT,
        binary: binary.to_string(),
        selector: selector.to_string(),
        files,
        source: source.to_string(),
        chain: chain.to_vec(),
        rules,
        body: body_hash(&body),
    };
    let mut out = serde_json::to_vec(&head).map_err(std::io::Error::other)?;
    out.push(b'\n');
    out.extend_from_slice(&body);
    let tmp = entry.with_extension(format!("tmp.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&out));
    match written.and_then(|()| std::fs::rename(&tmp, entry)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::super::load_cached;
    use crate::config::rules::Severity;

    /// A profile file with one critical custom rule, its cache directory
    /// and the entry the first load wrote.
    fn cached(dir: &std::path::Path) -> (String, std::path::PathBuf, std::path::PathBuf) {
        let file = dir.join("p.toml");
        std::fs::write(
            &file,
            "extends = \"default\"\n[[rule]]\nid = \"frob\"\nlabel = \"l\"\ndescription = \"d\"\npattern = '(?i)\\bfrobnicate\\b'\ncategory = \"c\"\nseverity = \"critical\"\nplatform = \"all\"\nexamples = { match = [\"frobnicate x\"], not_match = [\"ls\"] }\n",
        )
        .expect("write profile");
        let file = file.to_string_lossy().into_owned();
        let cache = dir.join("state/profiles");
        load_cached(&file, None, Some(&cache)).expect("first load");
        let entry = std::fs::read_dir(&cache)
            .expect("cache dir")
            .flatten()
            .map(|e| e.path())
            .next()
            .expect("an entry");
        (file, cache, entry)
    }

    /// Whether the custom rule matches, as the loaded profile has it.
    fn matches(file: &str, cache: &std::path::Path) -> bool {
        let p = load_cached(file, None, Some(cache)).expect("load");
        let c = p.rules.classify_views(&["frobnicate now".to_string()]);
        c.matched_rules == vec!["frob".to_string()] && c.severity == Severity::Critical
    }

    /// The entry with its rule's pattern changed so it never matches: what
    /// a forger would write.
    fn forge(entry: &std::path::Path) -> String {
        let text = std::fs::read_to_string(entry).expect("entry");
        let forged = text.replace("frobnicate", "frobnicatez");
        assert_ne!(forged, text, "the entry holds the rule's pattern");
        // Whole again (offsets and hash), as a forger would write it.
        super::reseal(&forged).expect("reseal")
    }

    #[test]
    fn an_entry_is_read_only_when_it_and_its_directory_are_this_users_alone() {
        let d = tempfile::tempdir().expect("tmp");
        let (file, cache, entry) = cached(d.path());
        assert!(matches(&file, &cache));
        let forged = forge(&entry);

        // Positive control: a forged entry that is this user's own, in a
        // directory that is too, is read (which is why it must live where
        // only safe-exec writes: threat-model.md, "safe-exec's own state").
        std::fs::write(&entry, &forged).expect("forge");
        assert!(!matches(&file, &cache), "control: the forged entry is read");

        let set = |p: &std::path::Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
        };
        // Writable by the group or by others: ignored and rebuilt.
        for mode in [0o620, 0o602, 0o666] {
            std::fs::write(&entry, &forged).expect("forge");
            set(&entry, mode);
            assert!(matches(&file, &cache), "entry {mode:o}");
        }
        // Its directory writable by others (the entry could be swapped).
        for mode in [0o770, 0o703, 0o1777] {
            std::fs::write(&entry, &forged).expect("forge");
            set(&entry, 0o600);
            set(&cache, mode);
            assert!(matches(&file, &cache), "dir {mode:o}");
            set(&cache, 0o700);
        }
        // A link to a forged file of this user's own.
        let elsewhere = d.path().join("forged.json");
        std::fs::write(&elsewhere, &forged).expect("forge");
        set(&elsewhere, 0o600);
        std::fs::remove_file(&entry).expect("rm");
        std::os::unix::fs::symlink(&elsewhere, &entry).expect("link");
        assert!(matches(&file, &cache), "link");
        // The directory itself a link to a directory of forged entries.
        std::fs::remove_file(&entry).expect("rm");
        let other = d.path().join("other");
        std::fs::create_dir(&other).expect("mkdir");
        set(&other, 0o700);
        std::fs::write(other.join(entry.file_name().expect("name")), &forged).expect("forge");
        let moved = d.path().join("moved");
        std::fs::rename(&cache, &moved).expect("mv");
        std::os::unix::fs::symlink(&other, &cache).expect("link");
        assert!(matches(&file, &cache), "linked dir");
        std::fs::remove_file(&cache).expect("rm");
        std::fs::rename(&moved, &cache).expect("mv back");

        // Another user's entry (only root can make one here).
        if nix::unistd::geteuid().is_root() {
            std::fs::write(&entry, &forged).expect("forge");
            set(&entry, 0o600);
            assert!(!matches(&file, &cache), "control: the forged entry is read");
            std::fs::write(&entry, &forged).expect("forge");
            std::os::unix::fs::chown(&entry, Some(65534), Some(65534)).expect("chown");
            assert!(matches(&file, &cache), "other user's entry");
            // Its directory another user's.
            std::fs::write(&entry, &forged).expect("forge");
            std::os::unix::fs::chown(&entry, Some(0), Some(0)).expect("chown");
            std::os::unix::fs::chown(&cache, Some(65534), Some(65534)).expect("chown");
            assert!(matches(&file, &cache), "other user's dir");
        }
    }
}
