//! Safety rules (seed 004 `CommandSafetyPattern`): regexes with a severity,
//! matched against normalised views of the parsed command rather than the
//! raw string, so quoting, paths and wrappers do not hide a command and
//! quoted data does not trigger one.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::builtin;
use crate::parse::{CommandModel, Segment};

/// A rule as written in `profiles/rules/*.toml` or a profile's `[[rule]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    /// Stable identifier.
    pub id: String,
    /// Short human-readable name.
    pub label: String,
    /// Why the rule exists.
    pub description: String,
    /// Regex matched against each view of the command.
    pub pattern: String,
    /// Taxonomy bucket (seed 004 categories).
    pub category: String,
    /// `critical` blocks, `warning` warns.
    pub severity: Severity,
    /// `all`, `unix` or `windows`.
    pub platform: Platform,
    /// Commands that must and must not match, checked at load.
    #[serde(default)]
    pub examples: RuleExamples,
}

/// Examples of a rule.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RuleExamples {
    /// Must match.
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Must not match.
    #[serde(default)]
    pub not_match: Vec<String>,
}

/// Severity of a rule (and of a classification, with `Safe` for no match).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// No rule matched.
    #[default]
    Safe,
    /// Allowed with a warning; logged.
    Warning,
    /// Blocked by default.
    Critical,
}

impl Severity {
    /// Output spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Safe => "safe",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// Platforms a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// Everywhere.
    All,
    /// Unix-like systems (this build).
    Unix,
    /// Windows only: never evaluated here.
    Windows,
}

/// A rule ready to match: keywords for the prefilter, regex compiled on
/// first use.
#[derive(Debug)]
pub struct Rule {
    /// The definition (parsed lazily for built-ins).
    source: RuleSource,
    /// A built-in rule's keywords (a custom rule's are in its [`CustomRule`]).
    keywords: &'static [&'static str],
    /// Boxed, as the automaton and the definition are: what most rules of
    /// a start never fill stays out of the rule (a rule was 1,232 bytes:
    /// 200 custom rules made a 290 KB list, written at every start).
    compiled: OnceLock<Result<Box<(RuleDef, Regex)>, String>>,
    /// A built-in rule's DFA, made by build.rs (see [`Automaton`]).
    automaton: Option<Box<Automaton>>,
    /// Its definition once parsed, when the automaton said it matched.
    def: OnceLock<Result<Box<RuleDef>, String>>,
}

include!(concat!(env!("OUT_DIR"), "/rule_automata.rs"));

/// A built-in rule's regex as a sparse DFA built by build.rs from the same
/// pattern and syntax settings as `Regex::new`, without captures and with
/// every non-ASCII byte a quit byte: for ASCII text it answers whether the
/// regex matches, exactly (only that is asked of a rule); at a non-ASCII
/// byte it stops with an error and the rule's regex is compiled and asked
/// instead. Deserialising checks the bytes (a few microseconds); compiling
/// the regex costs ~790,000 instructions.
#[derive(Debug)]
struct Automaton {
    /// The rule's label and severity (what a match reports).
    label: &'static str,
    severity: Severity,
    bytes: &'static [u8],
    dfa: OnceLock<Option<regex_automata::dfa::sparse::DFA<&'static [u8]>>>,
    /// Searches classification made with the DFA in this process; from
    /// [`REGEX_AFTER`] on it asks the compiled regex (see
    /// [`Rule::first_match_in`]).
    searches: std::sync::atomic::AtomicU32,
}

/// After this many searches of a rule's sparse DFA, classification compiles
/// the rule's regex (~790,000 instructions, once per process) and asks it
/// instead: the sparse DFA costs ~90 instructions a byte, the regex's lazy
/// DFA a few once warm, which pays for the compiling after a few hundred
/// searches. A CLI start classifies once and never gets there; a library
/// caller or the supervisor does (and keeps ~1 MB more resident once the
/// rules its commands meet are compiled). Same answer (the automaton is the regex's
/// for ASCII text, and the regex answers anything else already).
const REGEX_AFTER: u32 = 64;

impl Automaton {
    /// `Some(answer)` when the DFA could answer for `view`, `None` when the
    /// regex must (a non-ASCII byte, or an automaton that does not load).
    fn is_match(&self, view: &str) -> Option<bool> {
        use regex_automata::dfa::Automaton as _;
        let dfa = self
            .dfa
            .get_or_init(|| {
                regex_automata::dfa::sparse::DFA::from_bytes(self.bytes)
                    .ok()
                    .map(|(d, _)| d)
            })
            .as_ref()?;
        dfa.try_search_fwd(&regex_automata::Input::new(view).earliest(true))
            .ok()
            .map(|m| m.is_some())
    }
}

#[derive(Debug)]
enum RuleSource {
    Builtin {
        id: &'static str,
        text: &'static str,
    },
    /// Shared with the profile document's [`CustomRules`].
    Custom(Arc<CustomRule>),
}

/// One custom rule of a profile: its definition as loaded from the file,
/// or, from the loaded-profile cache, a line of the cache entry holding its
/// id, its keywords and the JSON text of its definition, which is parsed
/// the first time something needs more than the id and keywords (a command
/// that contains a keyword, `rules list`, the pinned-profile comparison,
/// serialising the document). A start whose command mentions none of the
/// keywords parses none of the definitions, and allocates nothing per rule
/// but the rule itself.
#[derive(Debug)]
pub struct CustomRule {
    source: CustomSource,
    def: OnceLock<Result<Box<RuleDef>, String>>,
}

#[derive(Debug)]
enum CustomSource {
    /// Loaded from the file: keywords found on first use.
    Def {
        id: String,
        keywords: OnceLock<Vec<String>>,
    },
    /// From the cache: ranges of the entry's text (shared by its rules).
    Cached {
        text: Arc<String>,
        id: Range<usize>,
        /// The keywords: none, one, or several separated by tabs.
        keywords: KeywordsAt,
        json: Range<usize>,
    },
}

/// Where a cached rule's keywords are in the entry's text.
#[derive(Debug)]
enum KeywordsAt {
    None,
    One(Range<usize>),
    Tabbed(Range<usize>),
}

/// The keywords of a rule, without allocating.
#[derive(Debug, Clone)]
pub enum Keywords<'a> {
    /// A built-in rule's.
    Static(std::slice::Iter<'a, &'static str>),
    /// A custom rule's, found from its definition.
    Owned(std::slice::Iter<'a, String>),
    /// A cached custom rule's one keyword.
    One(std::option::IntoIter<&'a str>),
    /// A cached custom rule's, separated by tabs.
    Split(std::str::Split<'a, char>),
}

impl<'a> Iterator for Keywords<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            Keywords::Static(i) => i.next().copied(),
            Keywords::Owned(i) => i.next().map(String::as_str),
            Keywords::One(i) => i.next(),
            Keywords::Split(i) => i.next(),
        }
    }
}

impl CustomRule {
    /// A rule from its parsed definition (its keywords are found on first
    /// use, as [`RuleSet::new`] always did).
    pub fn new(def: RuleDef) -> Self {
        Self {
            source: CustomSource::Def {
                id: def.id.clone(),
                keywords: OnceLock::new(),
            },
            def: OnceLock::from(Ok(Box::new(def))),
        }
    }

    /// What [`CustomRule::cache_line`] wrote: `None` when `text[line]` is
    /// not such a line. The definition is parsed when first needed; one
    /// that does not parse, or is another rule's, is an error there, and a
    /// rule in error blocks (see [`RuleSet::classify_views`]).
    pub fn from_cache_line(text: Arc<String>, line: Range<usize>) -> Option<Self> {
        // The fields are short: a plain scan for each tab (cheaper than a
        // search set up per field).
        let bytes = text.get(line.clone())?.as_bytes();
        let tab = |from: usize| {
            bytes
                .get(from..)?
                .iter()
                .position(|&b| b == b'\t')
                .map(|i| from + i)
        };
        let count_end = tab(0)?;
        let count: usize = std::str::from_utf8(bytes.get(..count_end)?)
            .ok()?
            .parse()
            .ok()?;
        let id_end = tab(count_end + 1)?;
        let mut end = id_end;
        for _ in 0..count {
            end = tab(end + 1)?;
        }
        let at = |r: Range<usize>| line.start + r.start..line.start + r.end;
        // Each range starts and ends beside a tab (or the line's ends),
        // so it is a valid slice of the text.
        let keywords = match count {
            0 => KeywordsAt::None,
            1 => KeywordsAt::One(at(id_end + 1..end)),
            _ => KeywordsAt::Tabbed(at(id_end + 1..end)),
        };
        Some(Self {
            source: CustomSource::Cached {
                id: at(count_end + 1..id_end),
                keywords,
                json: at(end + 1..bytes.len()),
                text,
            },
            def: OnceLock::new(),
        })
    }

    /// The rule as a line of the cache entry: the number of keywords, the
    /// id, the keywords and the definition's JSON, separated by tabs (an id
    /// or keyword with a tab or a line break cannot be written so: `None`,
    /// the entry is not written).
    pub fn cache_line(&self) -> Option<String> {
        let def = self.def().ok()?;
        let keywords: Vec<&str> = self.keywords().collect();
        let plain = |s: &str| !s.contains(['\t', '\n']);
        if !plain(&def.id) || !keywords.iter().all(|k| plain(k)) {
            return None;
        }
        let mut line = format!("{}\t{}\t", keywords.len(), def.id);
        for k in keywords {
            line.push_str(k);
            line.push('\t');
        }
        line.push_str(&serde_json::to_string(def).ok()?);
        Some(line)
    }

    /// The rule's id (without parsing its definition).
    pub fn id(&self) -> &str {
        match &self.source {
            CustomSource::Def { id, .. } => id,
            CustomSource::Cached { text, id, .. } => text.get(id.clone()).unwrap_or(""),
        }
    }

    /// The keywords of its pattern (without parsing a cached definition).
    /// A definition that does not parse has none: the rule is then asked
    /// about every command, and blocks.
    pub fn keywords(&self) -> Keywords<'_> {
        match &self.source {
            CustomSource::Def { keywords, .. } => Keywords::Owned(
                keywords
                    .get_or_init(|| match self.def() {
                        Ok(d) => keywords_of(&d.pattern),
                        Err(_) => Vec::new(),
                    })
                    .iter(),
            ),
            CustomSource::Cached { text, keywords, .. } => match keywords {
                KeywordsAt::None => Keywords::Static([].iter()),
                KeywordsAt::One(k) => Keywords::One(text.get(k.clone()).into_iter()),
                KeywordsAt::Tabbed(k) => {
                    Keywords::Split(text.get(k.clone()).unwrap_or("").split('\t'))
                }
            },
        }
    }

    /// Whether the definition was parsed (or given): what the tests of
    /// the cache's laziness look at.
    #[doc(hidden)]
    pub fn is_parsed(&self) -> bool {
        self.def.get().is_some()
    }

    /// The definition, parsed on first use when it came from the cache.
    pub fn def(&self) -> Result<&RuleDef, &str> {
        self.def
            .get_or_init(|| {
                let CustomSource::Cached { text, json, .. } = &self.source else {
                    return Err(format!("rule `{}` has no definition", self.id()));
                };
                let json = text.get(json.clone()).unwrap_or("");
                let d: RuleDef = serde_json::from_str(json).map_err(|e| {
                    format!(
                        "rule `{}`: its definition in the profile cache does not parse: {e}",
                        self.id()
                    )
                })?;
                if d.id != self.id() {
                    return Err(format!(
                        "rule `{}`: its definition in the profile cache is of rule `{}`",
                        self.id(),
                        d.id
                    ));
                }
                Ok(Box::new(d))
            })
            .as_ref()
            .map(|b| &**b)
            .map_err(String::as_str)
    }
}

/// A profile's custom rules (`[[rule]]`), as the document holds them:
/// (de)serialised as the list of their definitions; from the cache, each
/// definition is parsed only when needed ([`CustomRule`]). Cloning shares
/// the rules (and what was parsed of them).
#[derive(Debug, Clone, Default)]
pub struct CustomRules(Vec<Arc<CustomRule>>);

impl CustomRules {
    /// Rules from their parsed definitions.
    pub fn from_defs(defs: Vec<RuleDef>) -> Self {
        Self(
            defs.into_iter()
                .map(|d| Arc::new(CustomRule::new(d)))
                .collect(),
        )
    }

    /// Rules as the cache gives them back.
    pub fn from_rules(rules: Vec<CustomRule>) -> Self {
        Self(rules.into_iter().map(Arc::new).collect())
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// None at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The rules, in order.
    pub fn iter(&self) -> impl Iterator<Item = &CustomRule> {
        self.0.iter().map(|r| &**r)
    }

    /// Every definition (parsing those not parsed yet): the first error if
    /// one does not parse.
    pub fn defs(&self) -> Result<Vec<&RuleDef>, String> {
        self.iter()
            .map(|r| r.def().map_err(str::to_string))
            .collect()
    }
}

impl From<Vec<RuleDef>> for CustomRules {
    fn from(defs: Vec<RuleDef>) -> Self {
        Self::from_defs(defs)
    }
}

impl Serialize for CustomRules {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq as _};
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for r in self.iter() {
            seq.serialize_element(r.def().map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for CustomRules {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<RuleDef>::deserialize(d).map(Self::from_defs)
    }
}

impl Rule {
    /// The rule's id without parsing it.
    pub fn id(&self) -> &str {
        match &self.source {
            RuleSource::Builtin { id, .. } => id,
            RuleSource::Custom(c) => c.id(),
        }
    }

    /// The keywords of the rule's pattern (none: asked about every command).
    fn keywords(&self) -> Keywords<'_> {
        match &self.source {
            RuleSource::Builtin { .. } => Keywords::Static(self.keywords.iter()),
            RuleSource::Custom(c) => c.keywords(),
        }
    }

    /// The definition and compiled regex (compiled once). An error only if
    /// a built-in rule is broken, which `build.rs` refuses to build; the
    /// caller fails closed on it (never skips the rule).
    pub fn compiled(&self) -> Result<&(RuleDef, Regex), &str> {
        self.compiled
            .get_or_init(|| {
                let def = match &self.source {
                    RuleSource::Builtin { id, text } => toml::from_str::<RuleDef>(text)
                        .map_err(|e| format!("built-in rule `{id}` does not parse: {e}"))?,
                    RuleSource::Custom(c) => c.def().map_err(str::to_string)?.clone(),
                };
                let re = Regex::new(&def.pattern)
                    .map_err(|e| format!("rule `{}`: the pattern does not compile: {e}", def.id))?;
                Ok(Box::new((def, re)))
            })
            .as_ref()
            .map(|b| &**b)
            .map_err(String::as_str)
    }

    /// The definition alone: for a built-in rule, parsed from its text
    /// without compiling the regex.
    fn def(&self) -> Result<&RuleDef, &str> {
        if let RuleSource::Custom(c) = &self.source {
            return c.def();
        }
        if let Some(Ok(c)) = self.compiled.get() {
            return Ok(&c.0);
        }
        self.def
            .get_or_init(|| match &self.source {
                RuleSource::Builtin { id, text } => toml::from_str::<RuleDef>(text)
                    .map(Box::new)
                    .map_err(|e| format!("built-in rule `{id}` does not parse: {e}")),
                RuleSource::Custom(c) => c.def().cloned().map(Box::new).map_err(str::to_string),
            })
            .as_ref()
            .map(|b| &**b)
            .map_err(String::as_str)
    }

    /// What a match of the rule reports: id, label, severity, and whether
    /// it is a Windows rule (never evaluated here). A built-in rule with an
    /// automaton has them from build.rs (built-in Windows rules are left
    /// out there); any other from its definition.
    fn report(&self) -> Result<(&str, &str, Severity, bool), &str> {
        if let Some(a) = &self.automaton {
            return Ok((self.id(), a.label, a.severity, false));
        }
        let d = self.def()?;
        Ok((&d.id, &d.label, d.severity, d.platform == Platform::Windows))
    }

    /// The first of `views` the rule's regex matches. Asks the build-time
    /// automaton when there is one and it can answer, else the compiled
    /// regex (the error of a rule that cannot be compiled).
    fn first_match<'v>(&self, views: &'v [String]) -> Result<Option<&'v str>, &str> {
        self.first_match_in(views, u64::MAX, false)
    }

    /// [`Rule::first_match`] among the views whose bit is set in `in_views`
    /// (bit `min(i, 63)` for view `i`; see [`Prefilter::candidates`]).
    /// `adaptive` (classification): a rule whose automaton has been searched
    /// [`REGEX_AFTER`] times asks its compiled regex instead.
    fn first_match_in<'v, S: AsRef<str>>(
        &self,
        views: &'v [S],
        in_views: u64,
        adaptive: bool,
    ) -> Result<Option<&'v str>, &str> {
        let automaton = self.automaton.as_ref().filter(|a| {
            !adaptive
                || a.searches
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                        (n < REGEX_AFTER).then_some(n + 1)
                    })
                    .is_ok()
        });
        for (n, v) in views.iter().enumerate() {
            if in_views & (1u64 << n.min(63)) == 0 {
                continue;
            }
            let v = v.as_ref();
            let hit = match automaton.and_then(|a| a.is_match(v)) {
                Some(hit) => hit,
                None => self.compiled()?.1.is_match(v),
            };
            if hit {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// [`Rule::first_match`] asking the compiled regex only: the reference
    /// the automata are tested against.
    #[doc(hidden)]
    pub fn regex_is_match(&self, view: &str) -> Result<bool, &str> {
        Ok(self.compiled()?.1.is_match(view))
    }

    /// Whether the rule matches `view`, as classification asks it (the
    /// automaton where it can answer).
    #[doc(hidden)]
    pub fn is_match(&self, view: &str) -> Result<bool, &str> {
        Ok(self
            .first_match(std::slice::from_ref(&view.to_string()))?
            .is_some())
    }

    /// Whether this rule has a build-time automaton.
    #[doc(hidden)]
    pub fn has_automaton(&self) -> bool {
        self.automaton.is_some()
    }

    fn may_match<S: AsRef<str>>(&self, views: &[S]) -> bool {
        let mut k = self.keywords().peekable();
        k.peek().is_none() || k.any(|k| views.iter().any(|v| v.as_ref().contains(k)))
    }

    /// [`Rule::may_match`], skipping the search for a keyword whose first
    /// or last byte pair occurs in no view (the same answer).
    fn may_match_pairs<S: AsRef<str>>(&self, views: &[S], pairs: &Pairs) -> bool {
        let mut k = self.keywords().peekable();
        k.peek().is_none()
            || k.any(|k| {
                pairs.may_contain(k.as_bytes()) && views.iter().any(|v| v.as_ref().contains(k))
            })
    }
}

/// The byte pairs that occur in the views, hashed into 4,096 bits: a
/// keyword with a pair that is not among them is in no view, known without
/// searching every view for it (with 200 custom rules the searches were a
/// tenth of a start).
struct Pairs([u64; 64]);

impl Pairs {
    fn slot(a: u8, b: u8) -> usize {
        // The top 12 bits of a multiplicative hash of the pair.
        ((u32::from(a) << 8 | u32::from(b)).wrapping_mul(0x9E37_79B9) >> 20) as usize
    }

    fn new<S: AsRef<str>>(views: &[S]) -> Self {
        let mut bits = [0u64; 64];
        for v in views {
            for w in v.as_ref().as_bytes().windows(2) {
                let s = Self::slot(w[0], w[1]);
                bits[s >> 6] |= 1 << (s & 63);
            }
        }
        Self(bits)
    }

    fn has(&self, a: u8, b: u8) -> bool {
        let s = Self::slot(a, b);
        self.0[s >> 6] & (1 << (s & 63)) != 0
    }

    /// False only when `k` is in no view: a pair of it is in none.
    fn may_contain(&self, k: &[u8]) -> bool {
        match k {
            [a, b, .., y, z] => self.has(*a, *b) && self.has(*y, *z),
            [a, b] => self.has(*a, *b),
            _ => true,
        }
    }
}

/// The keywords of custom rules' patterns, by pattern: extracting them
/// parses the regex (`regex-syntax`), ~35,000 instructions a rule, so a
/// process does it once per pattern (checking a profile's examples builds
/// a rule set per example); the loaded-profile cache keeps each rule's
/// keywords with it ([`CustomRule::cache_line`]).
static KEYWORDS: Mutex<Option<HashMap<String, Vec<String>>>> = Mutex::new(None);

fn keywords_map() -> MutexGuard<'static, Option<HashMap<String, Vec<String>>>> {
    match KEYWORDS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// The keywords of a custom rule's pattern: its leading literal when it
/// plainly has one (a scan of the pattern, cheaper than a map), else parsed
/// once per process.
fn keywords_of(pattern: &str) -> Vec<String> {
    if let Some(lit) = leading_literal(pattern) {
        return vec![lit];
    }
    if let Some(k) = keywords_map().as_ref().and_then(|m| m.get(pattern)) {
        return k.clone();
    }
    let k = super::keywords::keywords(pattern).unwrap_or_default();
    keywords_map()
        .get_or_insert_with(HashMap::new)
        .insert(pattern.to_string(), k.clone());
    k
}

/// The literal every match of `pattern` starts with, when the pattern
/// plainly has one: no alternation outside a group, no flags, and a run
/// of ordinary characters first (after an optional `^`), less its last
/// character when a `?`, `*` or `{` makes that one optional. Such a
/// pattern is the concatenation of the run and the rest, so every match
/// contains the run: a sound keyword, found without parsing the regex
/// (custom rules are mostly written this way: `^mytool( |$)`). `None`
/// (parse the regex) for anything else or a run shorter than 2.
fn leading_literal(pattern: &str) -> Option<String> {
    // Flags could make the run mean something else (`(?i)`, `(?x)`), and
    // a class could hide a `(` or `)` from the count below: not read here.
    if pattern.contains("(?") || pattern.contains('[') {
        return None;
    }
    let mut depth = 0usize;
    let mut escaped = false;
    for c in pattern.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            '|' if depth == 0 => return None,
            _ => {}
        }
    }
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    let mut run: String = body
        .chars()
        .take_while(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '/' | ' ' | '=' | ':' | ',' | '@' | '%')
        })
        .collect();
    if matches!(body[run.len()..].chars().next(), Some('?' | '*' | '{')) {
        run.pop();
    }
    (run.len() >= 2).then_some(run)
}

/// The rule set of a profile: built-ins plus custom rules.
#[derive(Debug)]
pub struct RuleSet {
    rules: Vec<Rule>,
    /// Every rule's keywords in one automaton, built on first use.
    prefilter: OnceLock<Option<Prefilter>>,
    /// Classifications so far (the automaton is built on the second).
    classified: AtomicUsize,
}

/// The keyword prefilter of a rule set: one pass of an Aho-Corasick
/// automaton over each view finds every rule whose keyword occurs in it
/// (the same answer as asking each rule's keywords of each view in turn,
/// which was a sixth of an in-process decision).
#[derive(Debug)]
struct Prefilter {
    automaton: aho_corasick::AhoCorasick,
    /// For each keyword (pattern id), the rules that have it.
    rules_of: Vec<Vec<usize>>,
    /// Where [`Prefilter::candidates`] starts, by rule: every view for a
    /// rule without keywords, none for the others (computed once: asking
    /// every rule for its first keyword cost ~2k instructions a decision).
    start: Vec<u64>,
}

impl Prefilter {
    fn new(rules: &[Rule]) -> Option<Self> {
        let mut keywords: Vec<&str> = Vec::new();
        let mut rules_of: Vec<Vec<usize>> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (i, r) in rules.iter().enumerate() {
            for k in r.keywords() {
                let id = *index.entry(k).or_insert_with(|| {
                    keywords.push(k);
                    rules_of.push(Vec::new());
                    keywords.len() - 1
                });
                rules_of[id].push(i);
            }
        }
        let automaton = aho_corasick::AhoCorasick::new(&keywords).ok()?;
        let start = rules
            .iter()
            .map(|r| {
                if r.keywords().next().is_none() {
                    u64::MAX
                } else {
                    0
                }
            })
            .collect();
        Some(Self {
            automaton,
            rules_of,
            start,
        })
    }

    /// Which rules may match, and in which views: every view for a rule
    /// without keywords, else the views holding one of its keywords (a
    /// view without any cannot match, as [`Rule::may_match`] relies on).
    /// Bit `min(i, 63)` stands for view `i`, so bit 63 covers every view
    /// from the 64th on.
    /// `rules` are the rules the prefilter was built from.
    fn candidates<S: AsRef<str>>(&self, rules: &[Rule], views: &[S]) -> Vec<u64> {
        debug_assert_eq!(rules.len(), self.start.len());
        let mut may = self.start.clone();
        for (n, v) in views.iter().enumerate() {
            let v = v.as_ref();
            // A view equal to an earlier one (the quote-masked string is
            // often a segment's or a pipeline's rendering) is not searched
            // and its bit stays clear: a rule with one of its keywords has
            // the earlier view's bit, and [`Rule::first_match_in`], which
            // asks the views in order, finds the earlier (the same text)
            // first, or no match in either.
            if views[..n].iter().any(|w| w.as_ref() == v) {
                continue;
            }
            let bit = 1u64 << n.min(63);
            for m in self.automaton.find_overlapping_iter(v) {
                for &i in &self.rules_of[m.pattern().as_usize()] {
                    may[i] |= bit;
                }
            }
        }
        may
    }
}

/// The result of classifying one command.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Classification {
    /// Highest severity of the matched rules.
    pub severity: Severity,
    /// Ids of matched rules, in rule order.
    #[serde(rename = "matchedRules")]
    pub matched_rules: Vec<String>,
    /// Labels of matched rules with their severity, for reasons.
    #[serde(skip)]
    pub matches: Vec<(String, String, Severity, String)>,
}

impl RuleSet {
    /// Built-in rules plus `custom` (already validated by the loader).
    pub fn new(custom: &[RuleDef]) -> Self {
        Self::with_custom(&CustomRules::from_defs(custom.to_vec()))
    }

    /// Built-in rules plus a profile's custom rules (already validated by
    /// the loader), shared with its document: a custom rule's definition is
    /// parsed (when it came from the cache) and its regex compiled only
    /// when a command contains one of its keywords.
    pub fn with_custom(custom: &CustomRules) -> Self {
        // RULE_AUTOMATA is in the order of RULES, less the rules without one.
        let mut automata = RULE_AUTOMATA.iter().peekable();
        let mut rules: Vec<Rule> = Vec::with_capacity(builtin::RULES.len() + custom.len());
        // A custom rule with a built-in rule's id replaces it: each custom
        // id is looked up among the built-in ids by a cheap hash of its
        // bytes (comparing each pair, or a search of the sorted ids, was a
        // twentieth of a start with 200 custom rules).
        let mut replaced = vec![false; builtin::RULES.len()];
        if !custom.is_empty() {
            let hash = |id: &str| {
                id.bytes().fold(id.len() as u64, |h, b| {
                    (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95)
                })
            };
            // The built-in ids' hashes, sorted; the ids compared only where
            // the hashes are equal.
            let mut hashes: Vec<(u64, usize)> = builtin::RULES
                .iter()
                .enumerate()
                .map(|(i, r)| (hash(r.0), i))
                .collect();
            hashes.sort_unstable();
            for c in custom.iter() {
                let h = hash(c.id());
                let from = hashes.partition_point(|(x, _)| *x < h);
                for &(_, i) in hashes[from..].iter().take_while(|(x, _)| *x == h) {
                    if builtin::RULES[i].0 == c.id() {
                        replaced[i] = true;
                    }
                }
            }
        }
        for (i, (id, kws, text, _)) in builtin::RULES.iter().enumerate() {
            let automaton =
                automata
                    .next_if(|(a, ..)| a == id)
                    .map(|(_, label, severity, bytes)| {
                        Box::new(Automaton {
                            label,
                            severity: *severity,
                            bytes,
                            dfa: OnceLock::new(),
                            searches: std::sync::atomic::AtomicU32::new(0),
                        })
                    });
            if replaced[i] {
                continue;
            }
            rules.push(Rule {
                source: RuleSource::Builtin { id, text },
                keywords: kws,
                compiled: OnceLock::new(),
                automaton,
                def: OnceLock::new(),
            });
        }
        for c in &custom.0 {
            rules.push(Rule {
                keywords: &[],
                source: RuleSource::Custom(Arc::clone(c)),
                compiled: OnceLock::new(),
                automaton: None,
                def: OnceLock::new(),
            });
        }
        Self {
            rules,
            prefilter: OnceLock::new(),
            classified: AtomicUsize::new(0),
        }
    }

    /// All rules.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Matches every rule whose keywords occur against the views.
    pub fn classify_views<S: AsRef<str>>(&self, views: &[S]) -> Classification {
        let mut out = Classification::default();
        // One classification (a CLI start) asks the rules directly: that
        // costs less than building the automaton, which pays from the
        // second classification of a process on (the hook's supervisor,
        // library callers).
        let may = if self.classified.fetch_add(1, Ordering::Relaxed) == 0 {
            None
        } else {
            self.prefilter
                .get_or_init(|| Prefilter::new(&self.rules))
                .as_ref()
                .map(|p| p.candidates(&self.rules, views))
        };
        let pairs = may.is_none().then(|| Pairs::new(views));
        for (i, rule) in self.rules.iter().enumerate() {
            let in_views = match (&may, &pairs) {
                (Some(may), _) => may[i],
                (None, Some(pairs)) if rule.may_match_pairs(views, pairs) => u64::MAX,
                (None, None) if rule.may_match(views) => u64::MAX,
                _ => 0,
            };
            if in_views == 0 {
                continue;
            }
            // Whether it matches first (the automaton, without compiling
            // the regex), then what it is: the same answer as compiling,
            // skipping Windows rules, then matching. Only the views that
            // hold a keyword are searched: the first view that matches is
            // the same.
            let found = rule
                .first_match_in(views, in_views, true)
                .and_then(|v| Ok((rule.report()?, v)));
            let ((id, label, severity, windows), view) = match found {
                Ok((report, Some(view))) => (report, view),
                Ok((_, None)) => continue,
                Err(e) => {
                    // A rule that cannot be evaluated blocks (fail closed).
                    out.severity = Severity::Critical;
                    out.matched_rules.push(rule.id().to_string());
                    out.matches.push((
                        rule.id().to_string(),
                        e.to_string(),
                        Severity::Critical,
                        views
                            .first()
                            .map(|v| v.as_ref().to_string())
                            .unwrap_or_default(),
                    ));
                    continue;
                }
            };
            if windows {
                continue;
            }
            out.severity = out.severity.max(severity);
            out.matched_rules.push(id.to_string());
            out.matches.push((
                id.to_string(),
                label.to_string(),
                severity,
                view.to_string(),
            ));
        }
        out
    }
}

/// Validates custom rules: regex compiles, ids unique, examples behave.
pub fn validate_custom(
    rules: &[RuleDef],
    examples_check: &dyn Fn(&RuleDef, &str) -> bool,
) -> Vec<String> {
    let mut errs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in rules {
        if !seen.insert(r.id.clone()) {
            errs.push(format!(
                "rule `{}` is defined twice; rule ids must be unique",
                r.id
            ));
        }
        if let Err(e) = Regex::new(&r.pattern) {
            errs.push(format!(
                "rule `{}`: the pattern is not a valid regex: {e}",
                r.id
            ));
            continue;
        }
        for ex in &r.examples.matches {
            if !examples_check(r, ex) {
                errs.push(format!(
                    "rule `{}`: example `{ex}` must match but does not",
                    r.id
                ));
            }
        }
        for ex in &r.examples.not_match {
            if examples_check(r, ex) {
                errs.push(format!(
                    "rule `{}`: example `{ex}` must not match but does",
                    r.id
                ));
            }
        }
    }
    errs
}

/// Marks an entry of the policy's code list that is a segment's canonical
/// argument list (see `policy::canonical_view`), not inline code.
pub const CANONICAL: &str = "\u{0}canonical:";

/// Renders the views rules are matched against: each segment with its
/// wrappers and assignments, each segment unwrapped, each pipeline joined
/// with ` | `, the segments' canonical argument lists, and the inline code
/// given to interpreters. ([`views_in`] renders the same views into one
/// string.)
pub fn views(model: &CommandModel, code: &[String], raw: Option<&str>) -> Vec<String> {
    views_in(model, code, raw)
        .list()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The views of [`views`], in that order, held in one string (a string per
/// view cost an allocation each): [`Views::list`] borrows them.
#[derive(Debug, Default)]
pub struct Views {
    /// The views one after the other.
    text: String,
    /// Where each view ends in `text`.
    ends: Vec<usize>,
}

impl Views {
    /// Ends the view written since the previous one.
    fn end(&mut self) {
        self.ends.push(self.text.len());
    }

    /// Appends a whole view.
    fn push(&mut self, view: &str) {
        self.text.push_str(view);
        self.end();
    }

    /// Where the view `i` is in `text`.
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        start..self.ends[i]
    }

    /// The views, in order.
    pub fn list(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let v = &self.text[start..end];
                start = end;
                v
            })
            .collect()
    }
}

/// [`views`] into one string.
pub fn views_in(model: &CommandModel, code: &[String], raw: Option<&str>) -> Views {
    // Room for the usual views at once (a segment's plain and full
    // renderings, its pipeline's, the code and the masked string).
    let words: usize = model
        .segments
        .iter()
        .map(|s| s.program.len() + s.words.iter().map(|w| w.raw().len() + 3).sum::<usize>())
        .sum();
    let mut out = Views {
        text: String::with_capacity(
            3 * words + code.iter().map(|c| c.len() + 5).sum::<usize>() + raw.map_or(0, str::len),
        ),
        ends: Vec::with_capacity(2 * model.segments.len() + code.len() + 2),
    };
    // Which view is each segment's plain rendering: a pipeline's view
    // copies it instead of rendering the member again (kept only when there
    // is a pipeline).
    let piped = model.segments.iter().any(|s| s.pipeline != 0);
    let mut plain_at = Vec::with_capacity(if piped { model.segments.len() } else { 0 });
    // A segment's plain rendering, when views that contain it come before
    // it (its full and redirection views); otherwise it is rendered in place.
    let mut plain = String::new();
    for s in &model.segments {
        let full = !s.wrappers.is_empty() || !s.assignments.is_empty();
        if !full && !s.redirections.iter().any(|r| r.writes) {
            if piped {
                plain_at.push(out.ends.len());
            }
            render_to(&mut out.text, s);
            out.end();
            continue;
        }
        plain.clear();
        render_to(&mut plain, s);
        if full {
            let full = &mut out.text;
            for a in &s.assignments {
                // `NAME=VALUE ` (the value quoted), appended in place.
                full.push_str(&a.name);
                full.push('=');
                push_quoted(full, &a.value);
                full.push(' ');
            }
            for w in &s.wrappers {
                full.push_str(w);
                full.push(' ');
            }
            out.push(&plain);
        }
        for r in &s.redirections {
            if r.writes {
                // `{plain} {op} {quoted target}`
                out.text.push_str(&plain);
                out.text.push(' ');
                out.text.push_str(&r.op);
                out.text.push(' ');
                push_quoted(&mut out.text, &r.target);
                out.end();
            }
        }
        if piped {
            plain_at.push(out.ends.len());
        }
        out.push(&plain);
    }
    // Pipelines, in order of their segments.
    let mut ids: Vec<u32> = model
        .segments
        .iter()
        .map(|s| s.pipeline)
        .filter(|p| *p != 0)
        .collect();
    ids.dedup();
    for id in ids {
        let mut members: Vec<(&Segment, usize)> = model
            .segments
            .iter()
            .zip(&plain_at)
            .filter(|(s, _)| s.pipeline == id)
            .map(|(s, at)| (s, *at))
            .collect();
        members.sort_by_key(|(s, _)| s.pipe_index);
        members.dedup_by_key(|(s, _)| s.pipe_index);
        for (i, (s, at)) in members.iter().enumerate() {
            if i > 0 {
                out.text.push_str(" | ");
            }
            for w in &s.wrappers {
                out.text.push_str(w);
                out.text.push(' ');
            }
            // `render(s)`, as rendered above.
            let r = out.range(*at);
            out.text.extend_from_within(r);
        }
        out.end();
    }
    // Inline code: string delimiters become spaces so `system("rm -rf ~")`
    // reads as the command it runs.
    for c in code {
        match c.strip_prefix(CANONICAL) {
            // A segment's arguments as its program reads them: a view like
            // any other segment's.
            Some(canonical) => out.push(canonical),
            None => {
                out.text.push_str("code ");
                out.text.extend(c.chars().map(|ch| {
                    if matches!(ch, '"' | '\'' | '`') {
                        ' '
                    } else {
                        ch
                    }
                }));
                out.end();
            }
        }
    }
    if let Some(raw) = raw {
        // The quote-masked string (seed 003): what the parser could not turn
        // into segments stays visible, quoted data does not.
        if model.segments.is_empty() {
            for m in masked_segments(raw) {
                out.push(&m);
            }
        }
        // (`mask(raw)`: without a quote or a backslash, the string itself.)
        if raw.contains(['\\', '\'', '"']) {
            out.push(&mask_chars(raw));
        } else {
            out.push(raw);
        }
    }
    out
}

/// `program arg...` with words that need it single-quoted. Words with an
/// expansion are shown as written (`~`, `$HOME`), so rules can name them.
pub fn render(s: &Segment) -> String {
    // Sized for the words and a pair of quotes each, at once.
    let mut v = String::with_capacity(
        s.program.len() + s.words.iter().map(|w| w.value.len() + 3).sum::<usize>(),
    );
    render_to(&mut v, s);
    v
}

/// Whether [`render`]`(s)` is `text`, without building the rendering.
pub fn render_is(s: &Segment, text: &str) -> bool {
    let mut cmp = Compare(Some(text));
    render_to(&mut cmp, s);
    cmp.0 == Some("")
}

/// Where [`render`] and [`push_quoted`] write: a string, or a comparison
/// with one ([`render_is`]).
pub(crate) trait Sink {
    /// Appends `s`.
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// The part of a string not yet matched by what was written, `None` once
/// something written differed.
struct Compare<'a>(Option<&'a str>);

impl Sink for Compare<'_> {
    fn put(&mut self, s: &str) {
        self.0 = self.0.and_then(|rest| rest.strip_prefix(s));
    }
}

fn render_to(v: &mut impl Sink, s: &Segment) {
    for (i, word) in s.words.iter().enumerate() {
        if i > 0 {
            v.put(" ");
        }
        if i == 0 {
            v.put(&s.program);
        } else if !word.literal && !word.glob {
            v.put(word.raw());
        } else {
            push_quoted(v, &word.value);
        }
    }
}

/// Appends `w` to `v`, single-quoted if it needs quotes for the shell
/// (empty, or with a blank, a quote or an operator character).
pub(crate) fn push_quoted(v: &mut impl Sink, w: &str) {
    if w.is_empty()
        || w.chars().any(|c| {
            c.is_whitespace()
                || matches!(
                    c,
                    '\'' | '"' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\\'
                )
        })
    {
        v.put("'");
        for (i, part) in w.split('\'').enumerate() {
            if i > 0 {
                v.put("'\\''");
            }
            v.put(part);
        }
        v.put("'");
    } else {
        v.put(w);
    }
}

/// Seed 003 quote masking for strings that do not parse: the contents of
/// quotes become spaces, then the text is cut at operators.
pub fn masked_segments(raw: &str) -> Vec<String> {
    mask(raw)
        .split([';', '&', '|', '\n', '(', ')', '`'])
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .collect()
}

/// The contents of single and double quotes replaced by spaces.
pub fn mask(raw: &str) -> String {
    // Without a quote or a backslash every character stays: the string
    // itself, copied at once (`mask_without_quotes_is_the_string` checks
    // it against the character walk).
    if !raw.contains(['\\', '\'', '"']) {
        return raw.to_string();
    }
    mask_chars(raw)
}

/// [`mask`] one character at a time, whatever the string.
fn mask_chars(raw: &str) -> String {
    let mut masked = String::with_capacity(raw.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in raw.chars() {
        if escaped {
            escaped = false;
            masked.push(if quote.is_some() { ' ' } else { c });
            continue;
        }
        match (quote, c) {
            (_, '\\') if quote != Some('\'') => {
                escaped = true;
                masked.push(' ');
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                masked.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                masked.push(c);
            }
            (Some(_), _) => masked.push(' '),
            (None, c) => masked.push(c),
        }
    }
    masked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_without_quotes_is_the_string() {
        const ATOMS: &[&str] = &[
            "a", " ", "'", "\"", "\\", "$", "`", "é", "日", "\t", "\n", "x y", "'b'", "\"c\"",
            "\\'", ";", "|",
        ];
        let mut next = crate::sys::testing::xorshift_below(0x0fed_cba9_8765_4321);
        let mut changed = 0;
        for _ in 0..20_000 {
            let len = next(10);
            let raw: String = (0..len).map(|_| ATOMS[next(ATOMS.len())]).collect();
            let want = mask_chars(&raw);
            changed += usize::from(want != raw);
            assert_eq!(mask(&raw), want, "{raw:?}");
        }
        assert!(changed > 1000, "{changed}");
    }

    /// `push_quoted`'s test of a character (a `matches!`) is the set it
    /// replaced: whitespace or one of the 11 characters of
    /// `'"`;&|<>()\`, over every character up to U+FFFF.
    #[test]
    fn quoted_characters_are_the_set_they_replaced() {
        for c in (0u32..=0xFFFF).filter_map(char::from_u32) {
            let mut got = String::new();
            push_quoted(&mut got, &format!("a{c}b"));
            let old = c.is_whitespace() || "'\"`;&|<>()\\".contains(c);
            assert_eq!(got.starts_with('\''), old, "{c:?}");
        }
    }

    /// `render_is(s, text)` is `render(s) == text`: for every segment of
    /// the rules' examples and the tests' strings, against its rendering,
    /// the rendering with a byte more or less, and another segment's.
    #[test]
    fn render_is_compares_with_the_rendering() {
        let ctx = crate::parse::ParseContext::new(
            std::path::Path::new("/work/project"),
            std::path::Path::new("/home/user"),
        );
        let mut checked = 0;
        let mut prev = String::new();
        for h in haystacks() {
            let model = crate::parse::parse_string(&h, &ctx);
            for s in &model.segments {
                let r = render(s);
                let mut longer = r.clone();
                longer.push('x');
                let mut shorter = r.clone();
                shorter.pop();
                for text in [&r, &longer, &shorter, &prev, &String::new()] {
                    assert_eq!(render_is(s, text), r == *text, "{h:?} {text:?}");
                }
                prev = r;
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} segments");
    }

    /// The views written into one string (`views_in`, behind `views`) are
    /// the views of a string each, as they were built before (kept here as
    /// the reference): over the rules' examples and the tests' strings, with
    /// and without the raw string, with inline code and canonical views.
    #[test]
    fn views_in_one_string_equal_a_string_per_view() {
        fn reference(model: &CommandModel, code: &[String], raw: Option<&str>) -> Vec<String> {
            let quote = |w: &str| {
                let mut v = String::new();
                push_quoted(&mut v, w);
                v
            };
            let mut out = Vec::new();
            let mut plain_at = Vec::new();
            for s in &model.segments {
                let plain = render(s);
                if !s.wrappers.is_empty() || !s.assignments.is_empty() {
                    let mut full = String::new();
                    for a in &s.assignments {
                        full.push_str(&a.name);
                        full.push('=');
                        push_quoted(&mut full, &a.value);
                        full.push(' ');
                    }
                    for w in &s.wrappers {
                        full.push_str(w);
                        full.push(' ');
                    }
                    full.push_str(&plain);
                    out.push(full);
                }
                for r in &s.redirections {
                    if r.writes {
                        out.push(format!("{plain} {} {}", r.op, quote(&r.target)));
                    }
                }
                plain_at.push(out.len());
                out.push(plain);
            }
            let mut ids: Vec<u32> = model
                .segments
                .iter()
                .map(|s| s.pipeline)
                .filter(|p| *p != 0)
                .collect();
            ids.dedup();
            for id in ids {
                let mut members: Vec<(&Segment, usize)> = model
                    .segments
                    .iter()
                    .zip(&plain_at)
                    .filter(|(s, _)| s.pipeline == id)
                    .map(|(s, at)| (s, *at))
                    .collect();
                members.sort_by_key(|(s, _)| s.pipe_index);
                members.dedup_by_key(|(s, _)| s.pipe_index);
                let mut v = String::new();
                for (i, (s, at)) in members.iter().enumerate() {
                    if i > 0 {
                        v.push_str(" | ");
                    }
                    for w in &s.wrappers {
                        v.push_str(w);
                        v.push(' ');
                    }
                    v.push_str(&out[*at]);
                }
                out.push(v);
            }
            for c in code {
                match c.strip_prefix(CANONICAL) {
                    Some(canonical) => out.push(canonical.to_string()),
                    None => out.push(format!("code {}", c.replace(['"', '\'', '`'], " "))),
                }
            }
            if let Some(raw) = raw {
                if model.segments.is_empty() {
                    out.extend(masked_segments(raw));
                }
                out.push(mask(raw));
            }
            out
        }
        let ctx = crate::parse::ParseContext::new(
            std::path::Path::new("/work/project"),
            std::path::Path::new("/home/user"),
        );
        let (mut views_seen, mut piped, mut full, mut redirected) = (0, 0, 0, 0);
        for (n, h) in haystacks().iter().enumerate() {
            let model = crate::parse::parse_string(h, &ctx);
            let code: Vec<String> = match n % 3 {
                0 => Vec::new(),
                1 => vec![
                    format!("{CANONICAL}{h}"),
                    "print(\"a 'b' `c`\")".to_string(),
                ],
                _ => vec![h.clone()],
            };
            for raw in [None, Some(h.as_str())] {
                let want = reference(&model, &code, raw);
                assert_eq!(views(&model, &code, raw), want, "{h:?}");
                assert_eq!(views_in(&model, &code, raw).list(), want, "{h:?}");
                views_seen += want.len();
            }
            piped += usize::from(model.segments.iter().any(|s| s.pipeline != 0));
            full += usize::from(
                model
                    .segments
                    .iter()
                    .any(|s| !s.wrappers.is_empty() || !s.assignments.is_empty()),
            );
            redirected += usize::from(
                model
                    .segments
                    .iter()
                    .any(|s| s.redirections.iter().any(|r| r.writes)),
            );
        }
        assert!(
            views_seen > 1000 && piped > 50 && full > 20 && redirected > 20,
            "{views_seen} views, {piped} piped, {full} full, {redirected} redirected"
        );
    }

    /// A pipeline's view reuses its members' renderings: the same view as
    /// rendering each member again, over the rules' examples and the
    /// strings of the tests, with pipelines, wrappers and redirections.
    #[test]
    fn pipeline_views_equal_rendering_each_member() {
        let ctx = crate::parse::ParseContext::new(
            std::path::Path::new("/work/project"),
            std::path::Path::new("/home/user"),
        );
        let mut pipelines = 0;
        for h in haystacks().iter().step_by(3) {
            let model = crate::parse::parse_string(h, &ctx);
            let got = views(&model, &[], None);
            let mut ids: Vec<u32> = model
                .segments
                .iter()
                .map(|s| s.pipeline)
                .filter(|p| *p != 0)
                .collect();
            ids.dedup();
            let mut want: Vec<String> = Vec::new();
            for id in ids {
                let mut members: Vec<&Segment> =
                    model.segments.iter().filter(|s| s.pipeline == id).collect();
                members.sort_by_key(|s| s.pipe_index);
                members.dedup_by_key(|s| s.pipe_index);
                let mut v = String::new();
                for (i, s) in members.iter().enumerate() {
                    if i > 0 {
                        v.push_str(" | ");
                    }
                    for w in &s.wrappers {
                        v.push_str(w);
                        v.push(' ');
                    }
                    v.push_str(&render(s));
                }
                want.push(v);
                pipelines += 1;
            }
            // The pipeline views come right after the segments' views.
            let start = got.len() - want.len();
            assert_eq!(got[start..], want[..], "{h:?}");
        }
        assert!(pipelines > 50, "only {pipelines} pipelines");
    }

    fn def(id: &str, pattern: &str) -> RuleDef {
        RuleDef {
            id: id.into(),
            label: "label".into(),
            description: "description".into(),
            pattern: pattern.into(),
            category: "test".into(),
            severity: Severity::Warning,
            platform: Platform::All,
            examples: RuleExamples::default(),
        }
    }

    #[test]
    fn leading_literal_is_a_sound_keyword_of_every_builtin_rule() {
        // For every built-in rule the fast path applies to, every example
        // the rule matches contains the literal (the prefilter can never
        // skip a rule that matches); and the fast path refuses what it
        // cannot read.
        let mut applied = 0;
        for (_, _, text, _) in builtin::RULES {
            let def: RuleDef = toml::from_str(text).expect("rule");
            let Some(lit) = leading_literal(&def.pattern) else {
                continue;
            };
            applied += 1;
            let re = Regex::new(&def.pattern).expect("regex");
            for ex in &def.examples.matches {
                for m in re.find_iter(ex) {
                    assert!(
                        m.as_str().contains(&lit),
                        "{}: {lit:?} not in {ex:?}",
                        def.id
                    );
                }
            }
        }
        assert!(applied > 0);
        for (p, want) in [
            ("^benchtool1( |$)", Some("benchtool1")),
            ("mytool --force", Some("mytool --force")),
            ("^colou?r", Some("colo")),
            ("^ab*c", None),
            ("^abc{2}", Some("ab")),
            ("^abc+d", Some("abc")),
            ("^foo|bar", None),
            ("foo(a|b)|bar", None),
            ("(?i)^mytool", None),
            ("^(foo|bar)", None),
            ("[|]foo", None),
            ("^foo[](]|bar", None),
            ("^foo\\(|bar", None),
            ("^foo(a\\)|b)c", Some("foo")),
            ("^\\.git", None),
            ("^x", None),
        ] {
            assert_eq!(leading_literal(p).as_deref(), want, "{p}");
        }
    }

    #[test]
    fn a_rule_that_cannot_compile_blocks_instead_of_vanishing() {
        let set = RuleSet::new(&[def("broken", "zzzq(("), def("fine", "^zzzq ok")]);
        let c = set.classify_views(&["zzzq ok".to_string()]);
        assert_eq!(c.severity, Severity::Critical);
        assert!(c.matched_rules.contains(&"broken".to_string()), "{c:?}");
        assert!(c.matched_rules.contains(&"fine".to_string()), "{c:?}");
        let msg = &c.matches.iter().find(|m| m.0 == "broken").expect("match").1;
        assert!(msg.contains("does not compile"), "{msg}");
    }

    /// Every string literal of the test sources, the corpus's commands when
    /// it is there, and every built-in rule's examples, each in several
    /// spellings (tabs, runs of spaces, case, prefixes, non-ASCII spaces and
    /// letters that make the automaton hand over to the regex, prefixes of
    /// the text).
    fn haystacks() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut examples: Vec<String> = Vec::new();
        for (_, _, text, _) in builtin::RULES {
            let def: RuleDef = toml::from_str(text).expect("rule");
            examples.extend(def.examples.matches);
            examples.extend(def.examples.not_match);
        }
        let mut base: Vec<String> = Vec::new();
        let literal = Regex::new(r#""((?:[^"\\\n]|\\.)*)""#).expect("literal regex");
        let mut dirs = vec![root.join("tests")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("tests dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p
                    .extension()
                    .is_some_and(|x| x == "rs" || x == "toml" || x == "json")
                {
                    let t = std::fs::read_to_string(&p).unwrap_or_default();
                    for c in literal.captures_iter(&t) {
                        base.push(c[1].replace("\\\"", "\"").replace("\\\\", "\\"));
                    }
                }
            }
        }
        // Real agents' commands, in the repository (so a clone anywhere
        // has them), and the tldr corpus, where tests/corpus reads it (from
        // the main checkout, or beside the worktrees) when it is there.
        if let Ok(t) = std::fs::read_to_string(root.join("tests/data/agent-commands.tsv")) {
            base.extend(
                t.lines()
                    .skip(1)
                    .filter_map(|l| l.split('\t').nth(2))
                    .map(str::to_string),
            );
        }
        for corpus in [
            root.join("../shared/corpus/tldr-common-linux.tsv"),
            root.join("../../shared/corpus/tldr-common-linux.tsv"),
        ] {
            if let Ok(t) = std::fs::read_to_string(&corpus) {
                base.extend(
                    t.lines()
                        .filter_map(|l| l.split('\t').nth(3))
                        .map(str::to_string),
                );
                break;
            }
        }
        base.sort();
        base.dedup();
        let mut out = Vec::new();
        // The other texts as written, with tabs and with a non-ASCII space.
        for h in &base {
            out.push(h.clone());
            out.push(h.replace(' ', "\t"));
            out.push(h.replace(' ', "\u{a0}"));
        }
        examples.sort();
        examples.dedup();
        for h in &examples {
            out.push(h.clone());
            out.push(h.replace(' ', "\t"));
            out.push(h.replace(' ', "  "));
            out.push(h.replace(' ', "\u{a0}"));
            out.push(h.replace(' ', "\u{3000}"));
            out.push(h.to_uppercase());
            out.push(format!("code {h}"));
            out.push(format!("sudo {h}"));
            out.push(format!(" {h}\n"));
            out.push(format!("{h} é"));
            out.push(format!("é{h}"));
            out.push(h.replace('/', "/\u{17f}"));
            out.push(h.replace('-', "\u{2010}"));
            let chars: Vec<char> = h.chars().collect();
            for n in (1..chars.len()).step_by(3) {
                out.push(chars[..n].iter().collect());
            }
        }
        out.sort();
        out.dedup();
        out
    }

    #[test]
    fn build_time_automata_answer_as_the_regexes_do() {
        // Differential: for every built-in rule, the matcher classification
        // uses (the build-time DFA, the regex where it cannot answer) gives
        // the regex's answer on every haystack.
        let set = RuleSet::new(&[]);
        let hay = haystacks();
        assert!(hay.len() > 5_000, "{}", hay.len());
        eprintln!("{} haystacks", hay.len());
        let (mut by_dfa, mut handed_over, mut matched) = (0usize, 0usize, 0usize);
        let mut with_automaton = 0;
        for rule in set.rules() {
            if !rule.has_automaton() {
                continue;
            }
            with_automaton += 1;
            let a = rule.automaton.as_ref().expect("automaton");
            let (def, _) = rule.compiled().expect("compiles");
            assert_eq!(a.label, def.label, "{}", def.id);
            assert_eq!(a.severity, def.severity, "{}", def.id);
            assert_ne!(def.platform, Platform::Windows, "{}", def.id);
            for h in &hay {
                let want = rule.regex_is_match(h).expect("regex");
                assert_eq!(rule.is_match(h), Ok(want), "rule `{}` on {h:?}", rule.id());
                match a.is_match(h) {
                    Some(got) => {
                        assert_eq!(got, want, "rule `{}` DFA on {h:?}", rule.id());
                        by_dfa += 1;
                    }
                    None => {
                        assert!(!h.is_ascii(), "the DFA gave up on ASCII {h:?}");
                        handed_over += 1;
                    }
                }
                matched += usize::from(want);
            }
        }
        // Every built-in rule but the Windows one has its automaton, each
        // loads, and both paths and both answers were exercised.
        assert_eq!(
            with_automaton,
            set.rules().len(),
            "a rule lost its automaton"
        );
        assert!(
            by_dfa > 100_000 && handed_over > 10_000 && matched > 1_000,
            "{by_dfa} {handed_over} {matched}"
        );
    }

    #[test]
    fn classification_with_automata_equals_classification_with_regexes() {
        // The whole rule set over the views of real commands: the same
        // severity, rules and views as asking every candidate's regex.
        let set = RuleSet::new(&[]);
        let ctx = crate::parse::ParseContext::new(
            std::path::Path::new("/work/project"),
            std::path::Path::new("/home/user"),
        );
        for h in haystacks().iter().step_by(5) {
            let model = crate::parse::parse_string(h, &ctx);
            let views = views(&model, &[], Some(h));
            let got = set.classify_views(&views);
            let mut want = Classification::default();
            for rule in set.rules() {
                if !rule.may_match(&views) {
                    continue;
                }
                let (def, re) = rule.compiled().expect("compiles");
                if let Some(v) = views.iter().find(|v| re.is_match(v)) {
                    want.severity = want.severity.max(def.severity);
                    want.matched_rules.push(def.id.clone());
                    want.matches
                        .push((def.id.clone(), def.label.clone(), def.severity, v.clone()));
                }
            }
            assert_eq!(got.severity, want.severity, "{h:?}");
            assert_eq!(got.matched_rules, want.matched_rules, "{h:?}");
            assert_eq!(got.matches, want.matches, "{h:?}");
        }
    }

    #[test]
    fn the_pair_filter_never_hides_a_keyword() {
        // Asking a rule with the byte-pair filter gives the answer of
        // searching every view for every keyword, on real commands and on
        // keywords of every length.
        let set = RuleSet::new(&[
            def("c1", "^benchtool1( |$)"),
            def("c2", "(?i)^(foo|bar)\\s"),
            def("c3", "^ab"),
            def("c4", "x"),
            def("c5", "^[a-z]{40,}$"),
        ]);
        let hay = haystacks();
        let (mut yes, mut no) = (0, 0);
        for views in hay.chunks(3).step_by(3) {
            let pairs = Pairs::new(views);
            for r in set.rules() {
                let want = r.may_match(views);
                assert_eq!(
                    r.may_match_pairs(views, &pairs),
                    want,
                    "{} {views:?}",
                    r.id()
                );
                if want { yes += 1 } else { no += 1 }
            }
            // Every piece of a view is let through.
            for v in views {
                let b = v.as_bytes();
                for n in 0..=b.len().min(6) {
                    for i in (0..=b.len() - n).step_by(5) {
                        assert!(pairs.may_contain(&b[i..i + n]), "{v:?}");
                    }
                }
            }
        }
        assert!(yes > 10_000 && no > 100_000, "{yes} {no}");
    }

    #[test]
    fn a_custom_rule_replaces_the_builtin_rule_of_its_id() {
        let builtin = RuleSet::new(&[]);
        let n = builtin.rules().len();
        assert_eq!(RuleSet::new(&[def("zz-new", "^zzq")]).rules().len(), n + 1);
        for r in builtin.rules() {
            let set = RuleSet::new(&[def("zz-new", "^zzq"), def(r.id(), "^zzq")]);
            assert_eq!(set.rules().len(), n + 1, "{}", r.id());
            let of_id: Vec<&Rule> = set.rules().iter().filter(|x| x.id() == r.id()).collect();
            assert_eq!(of_id.len(), 1, "{}", r.id());
            assert!(
                matches!(of_id[0].source, RuleSource::Custom(_)),
                "{}",
                r.id()
            );
        }
    }

    #[test]
    fn a_rule_is_small() {
        // What a start with many custom rules writes per rule.
        assert!(
            std::mem::size_of::<Rule>() <= 160,
            "{}",
            std::mem::size_of::<Rule>()
        );
        assert!(
            std::mem::size_of::<CustomRule>() <= 96,
            "{}",
            std::mem::size_of::<CustomRule>()
        );
    }

    #[test]
    fn every_builtin_rule_compiles() {
        for r in RuleSet::new(&[]).rules() {
            assert!(r.compiled().is_ok(), "{}: {:?}", r.id(), r.compiled().err());
        }
    }
}
