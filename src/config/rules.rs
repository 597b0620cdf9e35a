//! Safety rules (seed 004 `CommandSafetyPattern`): regexes with a severity,
//! matched against normalised views of the parsed command rather than the
//! raw string, so quoting, paths and wrappers do not hide a command and
//! quoted data does not trigger one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

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
    keywords: Vec<String>,
    compiled: OnceLock<Result<(RuleDef, Regex), String>>,
}

#[derive(Debug)]
enum RuleSource {
    Builtin {
        id: &'static str,
        text: &'static str,
    },
    Custom(Box<RuleDef>),
}

impl Rule {
    /// The rule's id without parsing it.
    pub fn id(&self) -> &str {
        match &self.source {
            RuleSource::Builtin { id, .. } => id,
            RuleSource::Custom(d) => &d.id,
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
                    RuleSource::Custom(d) => (**d).clone(),
                };
                let re = Regex::new(&def.pattern)
                    .map_err(|e| format!("rule `{}`: the pattern does not compile: {e}", def.id))?;
                Ok((def, re))
            })
            .as_ref()
            .map_err(String::as_str)
    }

    fn may_match(&self, views: &[String]) -> bool {
        self.keywords.is_empty()
            || self
                .keywords
                .iter()
                .any(|k| views.iter().any(|v| v.contains(k.as_str())))
    }
}

/// The keywords of custom rules' patterns, by pattern: extracting them
/// parses the regex (`regex-syntax`), ~35,000 instructions a rule, so a
/// process does it once per pattern, and the profile loader seeds the map
/// from its memo of a profile file it checked before ([`seed_keywords`]).
static KEYWORDS: Mutex<Option<HashMap<String, Vec<String>>>> = Mutex::new(None);

fn keywords_map() -> MutexGuard<'static, Option<HashMap<String, Vec<String>>>> {
    match KEYWORDS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// The keywords of a custom rule's pattern (computed once per process).
fn keywords_of(pattern: &str) -> Vec<String> {
    if let Some(k) = keywords_map().as_ref().and_then(|m| m.get(pattern)) {
        return k.clone();
    }
    let k = match leading_literal(pattern) {
        Some(lit) => vec![lit],
        None => super::keywords::keywords(pattern).unwrap_or_default(),
    };
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

/// Keywords computed earlier for these patterns (by the same binary: the
/// profile loader's memo is keyed by the binary's identity).
pub fn seed_keywords(known: HashMap<String, Vec<String>>) {
    keywords_map()
        .get_or_insert_with(HashMap::new)
        .extend(known);
}

/// The keywords of `patterns`, for the loader's memo.
pub fn keywords_for(patterns: &[&str]) -> HashMap<String, Vec<String>> {
    patterns
        .iter()
        .map(|p| (p.to_string(), keywords_of(p)))
        .collect()
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
}

impl Prefilter {
    fn new(rules: &[Rule]) -> Option<Self> {
        let mut keywords: Vec<&str> = Vec::new();
        let mut rules_of: Vec<Vec<usize>> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (i, r) in rules.iter().enumerate() {
            for k in &r.keywords {
                let id = *index.entry(k.as_str()).or_insert_with(|| {
                    keywords.push(k.as_str());
                    rules_of.push(Vec::new());
                    keywords.len() - 1
                });
                rules_of[id].push(i);
            }
        }
        let automaton = aho_corasick::AhoCorasick::new(&keywords).ok()?;
        Some(Self {
            automaton,
            rules_of,
        })
    }

    /// Which rules may match: those without keywords, and those with a
    /// keyword in some view.
    fn candidates(&self, rules: &[Rule], views: &[String]) -> Vec<bool> {
        let mut may: Vec<bool> = rules.iter().map(|r| r.keywords.is_empty()).collect();
        for v in views {
            for m in self.automaton.find_overlapping_iter(v.as_str()) {
                for &i in &self.rules_of[m.pattern().as_usize()] {
                    may[i] = true;
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
        let mut rules: Vec<Rule> = builtin::RULES
            .iter()
            .filter(|(id, ..)| !custom.iter().any(|c| c.id == *id))
            .map(|(id, kws, text, _)| Rule {
                source: RuleSource::Builtin { id, text },
                keywords: kws.iter().map(|k| k.to_string()).collect(),
                compiled: OnceLock::new(),
            })
            .collect();
        for c in custom {
            rules.push(Rule {
                keywords: keywords_of(&c.pattern),
                source: RuleSource::Custom(Box::new(c.clone())),
                compiled: OnceLock::new(),
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
    pub fn classify_views(&self, views: &[String]) -> Classification {
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
        for (i, rule) in self.rules.iter().enumerate() {
            let candidate = match &may {
                Some(may) => may[i],
                None => rule.may_match(views),
            };
            if !candidate {
                continue;
            }
            let (def, re) = match rule.compiled() {
                Ok(c) => c,
                Err(e) => {
                    // A rule that cannot be evaluated blocks (fail closed).
                    out.severity = Severity::Critical;
                    out.matched_rules.push(rule.id().to_string());
                    out.matches.push((
                        rule.id().to_string(),
                        e.to_string(),
                        Severity::Critical,
                        views.first().cloned().unwrap_or_default(),
                    ));
                    continue;
                }
            };
            if def.platform == Platform::Windows {
                continue;
            }
            if let Some(view) = views.iter().find(|v| re.is_match(v)) {
                out.severity = out.severity.max(def.severity);
                out.matched_rules.push(def.id.clone());
                out.matches.push((
                    def.id.clone(),
                    def.label.clone(),
                    def.severity,
                    view.clone(),
                ));
            }
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
/// given to interpreters.
pub fn views(model: &CommandModel, code: &[String], raw: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for s in &model.segments {
        let plain = render(s);
        if !s.wrappers.is_empty() || !s.assignments.is_empty() {
            let mut full = String::new();
            for a in &s.assignments {
                full.push_str(&format!("{}={} ", a.name, quote(&a.value)));
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
        out.push(plain);
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
        let mut members: Vec<&Segment> =
            model.segments.iter().filter(|s| s.pipeline == id).collect();
        members.sort_by_key(|s| s.pipe_index);
        members.dedup_by_key(|s| s.pipe_index);
        out.push(
            members
                .iter()
                .map(|s| {
                    let mut v = String::new();
                    for w in &s.wrappers {
                        v.push_str(w);
                        v.push(' ');
                    }
                    v.push_str(&render(s));
                    v
                })
                .collect::<Vec<_>>()
                .join(" | "),
        );
    }
    // Inline code: string delimiters become spaces so `system("rm -rf ~")`
    // reads as the command it runs.
    for c in code {
        match c.strip_prefix(CANONICAL) {
            // A segment's arguments as its program reads them: a view like
            // any other segment's.
            Some(canonical) => out.push(canonical.to_string()),
            None => out.push(format!("code {}", c.replace(['"', '\'', '`'], " "))),
        }
    }
    if let Some(raw) = raw {
        // The quote-masked string (seed 003): what the parser could not turn
        // into segments stays visible, quoted data does not.
        let masked = masked_segments(raw);
        if model.segments.is_empty() {
            out.extend(masked.iter().cloned());
        }
        out.push(mask(raw));
    }
    out
}

/// `program arg...` with words that need it single-quoted. Words with an
/// expansion are shown as written (`~`, `$HOME`), so rules can name them.
pub fn render(s: &Segment) -> String {
    let mut v = String::new();
    for (i, w) in s.argv.iter().enumerate() {
        if i > 0 {
            v.push(' ');
        }
        if i == 0 {
            v.push_str(&s.program);
        } else {
            match s.words.get(i) {
                Some(word) if !word.literal && !word.glob => v.push_str(&word.raw),
                _ => v.push_str(&quote(w)),
            }
        }
    }
    v
}

pub(crate) fn quote(w: &str) -> String {
    if w.is_empty()
        || w.chars()
            .any(|c| c.is_whitespace() || "'\"`;&|<>()\\".contains(c))
    {
        format!("'{}'", w.replace('\'', "'\\''"))
    } else {
        w.to_string()
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

    #[test]
    fn every_builtin_rule_compiles() {
        for r in RuleSet::new(&[]).rules() {
            assert!(r.compiled().is_ok(), "{}: {:?}", r.id(), r.compiled().err());
        }
    }
}
