//! Safety rules (seed 004 `CommandSafetyPattern`): regexes with a severity,
//! matched against normalised views of the parsed command rather than the
//! raw string, so quoting, paths and wrappers do not hide a command and
//! quoted data does not trigger one.

use std::sync::OnceLock;

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

/// The rule set of a profile: built-ins plus custom rules.
#[derive(Debug)]
pub struct RuleSet {
    rules: Vec<Rule>,
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
                keywords: super::keywords::keywords(&c.pattern).unwrap_or_default(),
                source: RuleSource::Custom(Box::new(c.clone())),
                compiled: OnceLock::new(),
            });
        }
        Self { rules }
    }

    /// All rules.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Matches every rule whose keywords occur against the views.
    pub fn classify_views(&self, views: &[String]) -> Classification {
        let mut out = Classification::default();
        for rule in &self.rules {
            if !rule.may_match(views) {
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
