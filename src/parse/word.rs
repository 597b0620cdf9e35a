//! Word resolution: what value a shell word has after quote removal, and
//! whether it is literal. This is where "what is validated is what runs" is
//! decided for each argument.

use brush_parser::word::{Parameter, ParameterExpr, SpecialParameter, TildeExpr, WordPiece};
use brush_parser::{ParserOptions, word};

use std::borrow::Cow;

use super::model::Word;

/// Variables the policy may substitute in argument position (contract
/// clarification: `$HOME`, `$PWD`, `$TMPDIR`, positional parameters).
#[derive(Debug, Clone, Default)]
pub struct KnownVars<'a> {
    /// `$HOME` and `~`.
    pub home: Cow<'a, str>,
    /// `$PWD` (the tracked cwd at this point).
    pub pwd: Cow<'a, str>,
    /// `$TMPDIR`, if the caller has it set.
    pub tmpdir: Option<String>,
    /// `$0`, `$1`, ...
    pub positional: Cow<'a, [String]>,
    /// `$HOME`/`~` still has its starting value (no assignment seen).
    pub home_known: bool,
    /// `$PWD` still follows the tracked cwd.
    pub pwd_known: bool,
    /// The positional parameters were not changed (`set --`, `shift`).
    pub positional_known: bool,
    /// Variables whose value the command itself set to an integer literal
    /// (`n=3`, `for i in 1 2 3`): the only names an arithmetic context may
    /// read without becoming unknown.
    pub numeric: Cow<'a, std::collections::BTreeSet<String>>,
}

/// Something inside a word that runs a command of its own.
#[derive(Debug, Clone)]
pub struct EmbeddedCommand {
    /// The shell text of `$(...)` or backquotes.
    pub text: String,
}

/// A word resolved against [`KnownVars`], plus the substitutions inside it.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The word.
    pub word: Word,
    /// `$(...)` inside it, to be parsed as nested commands.
    pub substitutions: Vec<EmbeddedCommand>,
    /// It had a parameter expansion (known or not).
    pub had_expansion: bool,
    /// It had a brace expansion.
    pub had_brace: bool,
    /// A command substitution is nested inside `${...}` or `$((...))`,
    /// where it is not extracted: the command it runs is not known.
    pub hidden_code: bool,
    /// Contexts where bash evaluates a variable's *contents* as code
    /// (arithmetic, array subscripts, `${x@P}`, `${!x}`) reading a value the
    /// policy does not know: `a='b[$(id)]'; echo $((a))` runs `id`.
    pub hidden_eval: Vec<String>,
}

impl Resolved {
    /// An empty, literal result for `raw`, filled in piece by piece.
    fn start(raw: &str) -> Self {
        Self::of(Word::resolving(raw))
    }

    /// The result `word`, with nothing else found.
    fn of(word: Word) -> Self {
        Resolved {
            word,
            substitutions: Vec::new(),
            had_expansion: false,
            had_brace: false,
            hidden_code: false,
            hidden_eval: Vec::new(),
        }
    }
}

/// Whether `raw` is a plain word: non-empty, and every byte an ASCII
/// letter, digit or one of `_ - . / , : @ % + =`. In such a word bash sees
/// no quote, escape, expansion (`$`, `` ` ``, `~`, `{`), glob (`*`, `?`,
/// `[`, extglob `(`), operator, blank or comment: the word is its own
/// value. [`resolve`] answers for it without brush-parser's word parser
/// (`word_fast_path_equals_brush` in the tests below checks that the
/// answer is the one the parser gives).
pub fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'-' | b'.' | b'/' | b',' | b':' | b'@' | b'%' | b'+' | b'='
                )
        })
}

/// [`resolve`] of a plain word ([`is_plain`]), or of `{}` (`find -exec`'s
/// placeholder: a brace without a comma or a sequence inside is no brace
/// expansion, and brush-parser's word parser reads it as text):
/// literal, its own value.
pub fn resolve_plain(raw: &str) -> Option<Resolved> {
    if !is_plain(raw) && raw != "{}" {
        return None;
    }
    // Spelled as its value: one string for both.
    Some(Resolved::of(Word::literal(raw)))
}

/// [`resolve`] of a word that is one single-quoted string (`'...'`, no
/// `'` inside): literal and quoted, its value the text between the quotes.
/// brush-parser's word grammar reads such a word as one piece, its
/// `single_quoted_literal_text` rule (`'` then any characters but `'`, then
/// `'`): nothing inside expands. What [`resolve_parsed`] derives from the
/// raw text itself ([`hides_code`]) is derived here the same way; the
/// `tilde_after_equals` check never applies (the word starts with a quote,
/// not a name). `word_single_quoted_path_equals_brush` in the tests below
/// checks the answer against the parser's over generated words.
pub fn resolve_single_quoted(raw: &str) -> Option<Resolved> {
    let body = raw.strip_prefix('\'')?.strip_suffix('\'')?;
    if body.contains('\'') {
        return None;
    }
    let mut out = Resolved::start(raw);
    out.hidden_code = hides_code(raw);
    out.word.quoted = true;
    out.word.value = body.to_string();
    Some(out)
}

/// [`resolve`] of `~` alone or followed by `/` and plain bytes
/// ([`is_plain`]): the home directory (unresolved `~` when the command
/// changed `HOME`) and the rest as written. brush-parser's word grammar
/// reads such a word as a tilde prefix and one text piece without a glob
/// or a brace; nothing in it hides code. `word_tilde_path_equals_brush` in
/// the tests below checks the answer against the parser's over generated
/// words.
pub fn resolve_tilde(raw: &str, vars: &KnownVars) -> Option<Resolved> {
    let rest = raw.strip_prefix('~')?;
    let read = rest.is_empty() || (rest.starts_with('/') && is_plain(rest));
    if !read {
        return None;
    }
    let mut out = Resolved::start(raw);
    out.had_expansion = true;
    let w = &mut out.word;
    w.literal = false;
    if vars.home_known {
        w.value.reserve(vars.home.len() + rest.len());
        w.value.push_str(&vars.home);
    } else {
        w.unresolved = true;
        w.value.push('~');
    }
    w.value.push_str(rest);
    Some(out)
}

/// Resolves one raw shell word.
pub fn resolve(raw: &str, vars: &KnownVars, options: &ParserOptions) -> Resolved {
    if let Some(out) = resolve_plain(raw) {
        return out;
    }
    if let Some(out) = resolve_single_quoted(raw) {
        return out;
    }
    if let Some(out) = resolve_tilde(raw, vars) {
        return out;
    }
    resolve_parsed(raw, vars, options)
}

/// [`resolve`] through brush-parser's word parser, whatever the word.
pub fn resolve_parsed(raw: &str, vars: &KnownVars, options: &ParserOptions) -> Resolved {
    let mut out = Resolved::start(raw);
    out.hidden_code = hides_code(raw);
    if let Some(expanded) = tilde_after_equals(raw, vars) {
        if !vars.home_known {
            out.word.value = raw.to_string();
            out.word.literal = false;
            out.word.unresolved = true;
            return out;
        }
        // bash expands `~` after `=` in words that look like assignments,
        // even as arguments (`dd of=~/x` writes to the home directory).
        out.word.value = expanded;
        out.word.literal = false;
        out.had_expansion = true;
        return out;
    }
    match word::parse(raw, options) {
        Ok(pieces) => {
            for p in pieces {
                resolve_piece(&p.piece, vars, false, &mut out);
            }
        }
        Err(_) => {
            out.word.value = raw.to_string();
            out.word.literal = false;
            out.word.unresolved = true;
        }
    }
    out
}

/// `NAME=~/rest` (unquoted): the value bash passes, with `~` expanded.
fn tilde_after_equals(raw: &str, vars: &KnownVars) -> Option<String> {
    let (name, rest) = raw.split_once('=')?;
    let mut chars = name.chars();
    let valid = matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !valid {
        return None;
    }
    let after = rest.strip_prefix('~')?;
    if !(after.is_empty() || after.starts_with('/') || after.starts_with(':')) {
        return None;
    }
    if after.contains(['$', '`', '\\', '\'', '"', '*', '?', '[']) {
        return None;
    }
    Some(format!("{name}={}{after}", vars.home))
}

/// A command substitution inside `${...}`, `$((...))` or `$[...]`
/// (`${x:-$(rm -rf .)}`, `$(( $(cmd) ))`): bash runs it, but the word parser
/// does not hand it back, so the word is treated as hiding code.
fn hides_code(raw: &str) -> bool {
    let has_container = raw.contains("${") || raw.contains("$((") || raw.contains("$[");
    if !has_container {
        return false;
    }
    let bytes = raw.as_bytes();

    bytes.iter().enumerate().any(|(i, b)| {
        (*b == b'`')
            || (*b == b'$' && bytes.get(i + 1) == Some(&b'(') && bytes.get(i + 2) != Some(&b'('))
            || ((*b == b'<' || *b == b'>') && bytes.get(i + 1) == Some(&b'('))
    })
}

/// Resolves the body of a heredoc whose delimiter was unquoted (expansions
/// and substitutions in it are live). `None` if it does not parse.
pub fn resolve_heredoc(body: &str, vars: &KnownVars, options: &ParserOptions) -> Option<Resolved> {
    let pieces = word::parse_heredoc(body, options).ok()?;
    let mut out = Resolved::start(body);
    for p in pieces {
        match &p.piece {
            // Globs and braces are not expanded in heredoc bodies.
            WordPiece::Text(t) => out.word.value.push_str(t),
            other => resolve_piece(other, vars, true, &mut out),
        }
    }
    Some(out)
}

fn resolve_piece(piece: &WordPiece, vars: &KnownVars, in_dquote: bool, out: &mut Resolved) {
    let w = &mut out.word;
    match piece {
        WordPiece::Text(t) => {
            if !in_dquote {
                if t.contains(['*', '?'])
                    || t.find('[').is_some_and(|i| t[i + 1..].contains(']'))
                    || ["+(", "@(", "!("].iter().any(|e| t.contains(e))
                {
                    w.glob = true;
                    w.literal = false;
                }
                if has_brace_expansion(t) {
                    out.had_brace = true;
                    w.literal = false;
                    w.unresolved = true;
                }
            }
            w.value.push_str(t);
        }
        WordPiece::SingleQuotedText(t) => {
            w.quoted = true;
            w.value.push_str(t);
        }
        WordPiece::AnsiCQuotedText(t) => {
            w.quoted = true;
            match decode_ansi_c(t) {
                Some(s) => w.value.push_str(&s),
                None => {
                    w.literal = false;
                    w.unresolved = true;
                    w.value.push_str(&format!("$'{t}'"));
                }
            }
        }
        WordPiece::DoubleQuotedSequence(seq) | WordPiece::GettextDoubleQuotedSequence(seq) => {
            w.quoted = true;
            for p in seq {
                resolve_piece(&p.piece, vars, true, out);
            }
        }
        WordPiece::EscapeSequence(s) => {
            // `\x` yields `x`; a backslash-newline is a line continuation.
            let mut chars = s.chars();
            chars.next();
            let rest: String = chars.collect();
            if rest != "\n" {
                if in_dquote && !matches!(rest.as_str(), "$" | "`" | "\"" | "\\") {
                    w.value.push('\\');
                }
                w.value.push_str(&rest);
            }
            w.quoted = true;
        }
        WordPiece::TildeExpansion(t) => {
            out.had_expansion = true;
            w.literal = false;
            match t {
                TildeExpr::Home if vars.home_known => w.value.push_str(&vars.home),
                TildeExpr::WorkingDir if vars.pwd_known => w.value.push_str(&vars.pwd),
                _ => {
                    w.unresolved = true;
                    w.value.push('~');
                }
            }
        }
        WordPiece::ParameterExpansion(expr) => {
            if let Some(why) = parameter_evaluates(expr, vars) {
                out.hidden_eval.push(why);
            }
            let w = &mut out.word;
            out.had_expansion = true;
            w.literal = false;

            match known_parameter(expr, vars) {
                Some(v) if in_dquote || !v.contains(char::is_whitespace) => w.value.push_str(&v),
                _ => {
                    w.unresolved = true;
                    w.value.push_str(&parameter_spelling(expr));
                }
            }
        }
        WordPiece::CommandSubstitution(text) | WordPiece::BackquotedCommandSubstitution(text) => {
            w.literal = false;
            w.unresolved = true;
            w.value.push_str(&format!("$({text})"));
            out.substitutions
                .push(EmbeddedCommand { text: text.clone() });
        }
        WordPiece::ArithmeticExpression(e) => {
            if !arithmetic_is_known(&e.value, vars) {
                out.hidden_eval.push(format!(
                    "`$(({}))` evaluates variables whose values are not known",
                    e.value
                ));
            }
            let w = &mut out.word;
            w.literal = false;
            w.unresolved = true;
            w.value.push_str(&format!("$(({}))", e.value));
        }
    }
}

/// Whether every name an arithmetic text reads has a value the command
/// itself set to an integer literal. Bash evaluates the *contents* of a
/// variable named in arithmetic as arithmetic again, and an array subscript
/// there runs command substitutions (`a='b[$(id)]'; echo $((a))`), so any
/// other name, `${...}`, `$(...)` or backquote makes the text unknown.
pub fn arithmetic_is_known(text: &str, vars: &KnownVars) -> bool {
    if text.contains(['`', '{', '\\', '\'', '"']) || text.contains("$(") {
        return false;
    }
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            // A number, including 0x1f, 10#77, 2#101, 64#_@: letters here are digits.
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'#' | b'_' | b'@'))
            {
                i += 1;
            }
            continue;
        }
        if c == b'$' {
            i += 1;
            let start = i;
            if i < b.len() && matches!(b[i], b'#' | b'?' | b'$' | b'!') {
                i += 1;
                continue;
            }
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i > start {
                let n: usize = text[start..i].parse().unwrap_or(usize::MAX);
                let numeric = vars.positional_known
                    && vars
                        .positional
                        .get(n)
                        .is_some_and(|v| v.trim().parse::<i64>().is_ok());
                if !numeric {
                    return false;
                }
                continue;
            }
            if i >= b.len() || !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
                return false;
            }
        }
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if !vars.numeric.contains(&text[start..i]) {
                return false;
            }
            continue;
        }
        i += 1;
    }
    true
}

/// A parameter expansion that makes bash evaluate a value as code: an
/// indirect `${!x}` (the named variable may be `a[$(cmd)]`), a subscript or
/// substring offset that is not a known number, or `${x@P}` (prompt
/// expansion runs command substitutions in the value).
fn parameter_evaluates(expr: &ParameterExpr, vars: &KnownVars) -> Option<String> {
    use ParameterExpr as E;
    let (parameter, indirect) = match expr {
        E::Parameter {
            parameter,
            indirect,
        }
        | E::UseDefaultValues {
            parameter,
            indirect,
            ..
        }
        | E::AssignDefaultValues {
            parameter,
            indirect,
            ..
        }
        | E::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            ..
        }
        | E::UseAlternativeValue {
            parameter,
            indirect,
            ..
        }
        | E::ParameterLength {
            parameter,
            indirect,
            ..
        }
        | E::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            ..
        }
        | E::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            ..
        }
        | E::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            ..
        }
        | E::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            ..
        }
        | E::Substring {
            parameter,
            indirect,
            ..
        }
        | E::Transform {
            parameter,
            indirect,
            ..
        }
        | E::UppercaseFirstChar {
            parameter,
            indirect,
            ..
        }
        | E::UppercasePattern {
            parameter,
            indirect,
            ..
        }
        | E::LowercaseFirstChar {
            parameter,
            indirect,
            ..
        }
        | E::LowercasePattern {
            parameter,
            indirect,
            ..
        }
        | E::ReplaceSubstring {
            parameter,
            indirect,
            ..
        } => (parameter, *indirect),
        E::VariableNames { .. } | E::MemberKeys { .. } => return None,
    };
    if indirect {
        return Some("`${!...}` expands a variable named by another variable's value".into());
    }
    if let Parameter::NamedWithIndex { name, index } = parameter
        && !arithmetic_is_known(index, vars)
    {
        return Some(format!(
            "the subscript of `${{{name}[{index}]}}` is evaluated and its value is not known"
        ));
    }
    if let E::Substring { offset, length, .. } = expr
        && (!arithmetic_is_known(&offset.value, vars)
            || length
                .as_ref()
                .is_some_and(|l| !arithmetic_is_known(&l.value, vars)))
    {
        return Some(
            "a substring offset or length `${x:...}` is evaluated and its value is not known"
                .into(),
        );
    }
    if let E::Transform {
        op: brush_parser::word::ParameterTransformOp::PromptExpand,
        ..
    } = expr
    {
        return Some("`${x@P}` expands the value as a prompt, which runs commands in it".into());
    }
    None
}

/// Only plain `$NAME` / `${NAME}` / `$N` of known variables resolve; any
/// operator (`${HOME:0:1}`, `${!x}`, `${x:-y}`) leaves the word unresolved.
fn known_parameter(expr: &ParameterExpr, vars: &KnownVars) -> Option<String> {
    let ParameterExpr::Parameter {
        parameter,
        indirect: false,
    } = expr
    else {
        return None;
    };
    match parameter {
        Parameter::Named(n) => match n.as_str() {
            "HOME" if vars.home_known => Some(vars.home.to_string()),
            "PWD" if vars.pwd_known => Some(vars.pwd.to_string()),
            "TMPDIR" => vars.tmpdir.clone(),
            _ => None,
        },
        _ if !vars.positional_known => None,
        // `"$@"` with several arguments is several words: not one value.
        Parameter::Special(SpecialParameter::AllPositionalParameters { .. })
            if vars.positional.len() > 2 =>
        {
            None
        }
        Parameter::Positional(i) => vars
            .positional
            .get(*i as usize)
            .cloned()
            .or(Some(String::new())),
        Parameter::Special(SpecialParameter::AllPositionalParameters { .. }) => Some(
            vars.positional
                .iter()
                .skip(1)
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
        ),
        Parameter::Special(SpecialParameter::PositionalParameterCount) => {
            Some(vars.positional.len().saturating_sub(1).to_string())
        }
        _ => None,
    }
}

fn parameter_spelling(expr: &ParameterExpr) -> String {
    match expr {
        ParameterExpr::Parameter {
            parameter: Parameter::Named(n),
            indirect: false,
        } => format!("${n}"),
        ParameterExpr::Parameter {
            parameter: Parameter::Positional(i),
            indirect: false,
        } => format!("${i}"),
        // `PID=$!` is kept as written: the policy knows a variable set only
        // to `$!` names this command's own process (`kill $PID`).
        ParameterExpr::Parameter {
            parameter: Parameter::Special(SpecialParameter::LastBackgroundProcessId),
            indirect: false,
        } => "$!".to_string(),
        ParameterExpr::Parameter {
            parameter: Parameter::Special(SpecialParameter::ProcessId),
            indirect: false,
        } => "$$".to_string(),
        _ => "${...}".to_string(),
    }
}

/// Most words one brace expansion may produce before it is left unresolved.
const MAX_BRACE_WORDS: usize = 256;

/// Brace expansion as bash does it, on the raw word before any other
/// expansion: `src/{a,b}.rs` → `src/a.rs src/b.rs`, `{1..3}` → `1 2 3`.
/// `None` when the word has no brace expression or expands to too many words.
pub fn expand_braces(raw: &str, options: &ParserOptions) -> Option<Vec<String>> {
    // No `{`, no brace expression: the parser would return text only (the
    // `None` below). Most words have none; parsing each was ~7% of a decision.
    // Nor without a `,` (a list has two members or more) or a `..` (a
    // sequence): `find -exec ... {} +` (`brace_words_need_a_comma_or_a_range`
    // checks this against the parser).
    if !raw.contains('{') || !(raw.contains(',') || raw.contains("..")) {
        return None;
    }
    expand_braces_parsed(raw, options)
}

/// [`expand_braces`] by brush-parser's brace grammar, whatever the word.
fn expand_braces_parsed(raw: &str, options: &ParserOptions) -> Option<Vec<String>> {
    use brush_parser::word::BraceExpressionOrText;
    let parsed = word::parse_brace_expansions(raw, options).ok()??;
    if !parsed
        .iter()
        .any(|p| matches!(p, BraceExpressionOrText::Expr(_)))
    {
        return None;
    }
    let out = expand_items(&parsed)?;
    (out.len() > 1 || out.first().is_some_and(|o| o != raw)).then_some(out)
}

fn expand_items(items: &[brush_parser::word::BraceExpressionOrText]) -> Option<Vec<String>> {
    use brush_parser::word::{BraceExpressionMember as M, BraceExpressionOrText as T};
    let mut acc = vec![String::new()];
    for item in items {
        let alts: Vec<String> = match item {
            T::Text(t) => vec![t.clone()],
            T::Expr(members) => {
                let mut alts = Vec::new();
                for m in members {
                    match m {
                        M::Child(c) => alts.extend(expand_items(c)?),
                        M::NumberSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = (*start.min(end), *start.max(end));
                            let count = usize::try_from((hi - lo) / step as i64 + 1).ok()?;
                            if count > MAX_BRACE_WORDS {
                                return None;
                            }
                            let mut seq: Vec<i64> = (lo..=hi).step_by(step).collect();
                            if start > end {
                                seq.reverse();
                            }
                            alts.extend(seq.iter().map(|n| n.to_string()));
                        }
                        M::CharSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = ((*start).min(*end) as u32, (*start).max(*end) as u32);
                            let mut seq: Vec<String> = (lo..=hi)
                                .step_by(step)
                                .filter_map(char::from_u32)
                                .map(String::from)
                                .collect();
                            if start > end {
                                seq.reverse();
                            }
                            alts.extend(seq);
                        }
                    }
                }
                alts
            }
        };
        let mut next = Vec::with_capacity(acc.len() * alts.len());
        for a in &acc {
            for b in &alts {
                next.push(format!("{a}{b}"));
                if next.len() > MAX_BRACE_WORDS {
                    return None;
                }
            }
        }
        acc = next;
    }
    Some(acc)
}

/// Unquoted `{a,b}` or `{1..3}`: bash would expand it into several words.
fn has_brace_expansion(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut start = None;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'{' => {
                depth += 1;
                start.get_or_insert(i);
            }
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0
                    && let Some(s) = start.take()
                {
                    let inner = &text[s + 1..i];
                    if inner.contains(',') || inner.contains("..") {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// Decodes the body of `$'...'` the way bash does; `None` for escapes we do
/// not model (`\c`), so the word stays unresolved rather than guessed.
pub fn decode_ansi_c(body: &str) -> Option<String> {
    let out = decode_ansi_c_raw(body)?;
    // bash strings end at a NUL byte: `$'\x00'/etc` is `/etc`.
    Some(match out.find('\0') {
        Some(i) => out[..i].to_string(),
        None => out,
    })
}

/// Reads up to `max` more digits of `radix` after `start`; `None` when
/// there is none at all (and `start` is 0, i.e. the escape needs a digit).
fn read_digits(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    radix: u32,
    max: usize,
    start: u32,
) -> Option<u32> {
    let mut v = start;
    let mut n = 0;
    while n < max {
        let Some(d) = chars.peek().and_then(|c| c.to_digit(radix)) else {
            break;
        };
        v = v.checked_mul(radix)?.checked_add(d)?;
        chars.next();
        n += 1;
    }
    (n > 0).then_some(v)
}

fn decode_ansi_c_raw(body: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            '?' => out.push('?'),
            'x' => out.push(char::from_u32(read_digits(&mut chars, 16, 2, 0)?)?),
            'u' => out.push(char::from_u32(read_digits(&mut chars, 16, 4, 0)?)?),
            'U' => out.push(char::from_u32(read_digits(&mut chars, 16, 8, 0)?)?),
            '0'..='7' => {
                let first = e.to_digit(8)?;
                let v = read_digits(&mut chars, 8, 2, first).unwrap_or(first);
                out.push(char::from_u32(v & 0xff)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two variable sets the fast-path tests compare under: every
    /// variable known, and none.
    fn both_vars() -> [KnownVars<'static>; 2] {
        [
            KnownVars {
                home: "/home/u".into(),
                pwd: "/work".into(),
                tmpdir: Some("/tmp/t".into()),
                positional: vec!["sh".into(), "one".into()].into(),
                home_known: true,
                pwd_known: true,
                positional_known: true,
                numeric: Cow::Owned(["n".to_string()].into_iter().collect()),
            },
            KnownVars::default(),
        ]
    }

    /// The tilde path of [`resolve`] gives exactly what brush-parser's word
    /// parser gives, every field, under two sets of known variables, over
    /// every word of `~` and up to five pieces of the set below and 100,000
    /// generated longer ones; words it does not read decline.
    #[test]
    fn word_tilde_path_equals_brush() {
        const PIECES: &[&str] = &[
            "/", "a", ".", "-", "=", ":", "~", "_", "@", "%", "+", ",", "Z9", "$", "*", "{a,b}",
            "'", " ",
        ];
        let vars = both_vars();
        let mut accepted = 0;
        let mut same = |raw: &str| {
            for v in &vars {
                let Some(fast) = resolve_tilde(raw, v) else {
                    return;
                };
                accepted += 1;
                let slow = resolve_parsed(raw, v, &ParserOptions::default());
                assert_eq!(fast.word, slow.word, "{raw:?}");
                assert_eq!(
                    fast.substitutions.len(),
                    slow.substitutions.len(),
                    "{raw:?}"
                );
                assert_eq!(fast.had_expansion, slow.had_expansion, "{raw:?}");
                assert_eq!(fast.had_brace, slow.had_brace, "{raw:?}");
                assert_eq!(fast.hidden_code, slow.hidden_code, "{raw:?}");
                assert_eq!(fast.hidden_eval, slow.hidden_eval, "{raw:?}");
                let full = resolve(raw, v, &ParserOptions::default());
                assert_eq!(full.word, slow.word, "{raw:?}");
            }
        };
        let mut last = vec!["~".to_string()];
        same("~");
        for _ in 0..5 {
            last = last
                .iter()
                .flat_map(|s| PIECES.iter().map(move |p| format!("{s}{p}")))
                .collect();
            for raw in &last {
                same(raw);
            }
        }
        let mut next = crate::sys::testing::xorshift_below(0x7117_DE5E_ED00_0001);
        for _ in 0..100_000 {
            let len = 1 + next(12);
            let raw: String = std::iter::once("~")
                .chain((0..len).map(|_| PIECES[next(PIECES.len())]))
                .collect();
            same(&raw);
        }
        for raw in ["~", "~/", "~/.ssh/id_rsa", "~/a=b", "~/x:~/y"] {
            same(raw);
        }
        assert!(accepted > 20_000, "{accepted}");
        let v = &vars[0];
        for raw in [
            "~x", "~+", "~-", "~/a b", "~/$x", "~/*", "~/{a,b}", "a~", "'~'",
        ] {
            assert!(resolve_tilde(raw, v).is_none(), "{raw:?}");
        }
    }

    /// The fast path of [`resolve`] for plain words gives exactly what
    /// brush-parser's word parser gives: every field of the word and of the
    /// resolution, over the corpus of plain spellings below and 200,000
    /// generated ones (every byte of the plain set, at every position, in
    /// words of 1 to 24 bytes), under two sets of known variables. And a
    /// word with any other byte (quotes, `$`, `~`, globs, braces, blanks,
    /// operators, backslashes, non-ASCII) never takes the fast path.
    #[test]
    fn word_fast_path_equals_brush() {
        const PLAIN: &[u8] = b"abcxyzABCXYZ0123456789_-./,:@%+=";
        let vars = both_vars();
        let same = |raw: &str| {
            for v in &vars {
                let fast = resolve_plain(raw).expect("plain");
                let slow = resolve_parsed(raw, v, &ParserOptions::default());
                assert_eq!(fast.word, slow.word, "{raw:?}");
                assert_eq!(
                    fast.substitutions.len(),
                    slow.substitutions.len(),
                    "{raw:?}"
                );
                assert_eq!(fast.had_expansion, slow.had_expansion, "{raw:?}");
                assert_eq!(fast.had_brace, slow.had_brace, "{raw:?}");
                assert_eq!(fast.hidden_code, slow.hidden_code, "{raw:?}");
                assert_eq!(fast.hidden_eval, slow.hidden_eval, "{raw:?}");
                let full = resolve(raw, v, &ParserOptions::default());
                assert_eq!(full.word, slow.word, "{raw:?}");
            }
        };
        for raw in [
            "git",
            "status",
            "-la",
            "--release",
            "-n",
            "5",
            "--oneline",
            "a=b",
            "--x=y",
            "=",
            "==",
            "a==b",
            "-",
            "--",
            ".",
            "..",
            "/",
            "//",
            "./x",
            "../..",
            "@",
            "@@",
            "%",
            "%%",
            "+",
            "++",
            ",",
            ":",
            "a:b:c",
            "user@host:path",
            "x+y",
            "-j2",
            "target/debug/incremental",
            "HOME=/x",
            "_",
            "a,b",
            "%1",
            "+x",
            "-=",
            "@x",
            "x@",
            "%x%",
            "PATH=/usr/bin:/bin",
            "1.2.3",
            "v1.0-rc+1",
        ] {
            assert!(is_plain(raw), "{raw:?}");
            same(raw);
        }
        let mut next = crate::sys::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..200_000 {
            let len = 1 + (next() % 24) as usize;
            let raw: String = (0..len)
                .map(|_| PLAIN[(next() % PLAIN.len() as u64) as usize] as char)
                .collect();
            same(&raw);
        }
        for b in 0u8..=255 {
            let plain = PLAIN.contains(&b) || b.is_ascii_alphanumeric();
            let raw = format!("a{}b", b as char);
            assert_eq!(is_plain(&raw), plain, "{b}");
            if plain {
                same(&raw);
            }
        }
        for raw in [
            "", "'a'", "\"a\"", "$x", "~", "~/x", "a=~/x", "{a,b}", "*", "a?", "[ab]", "@(a)",
            "+(a)", "a b", "a;b", "a|b", "a&b", "a>b", "a<b", "\\a", "#a", "a#", "é", "`x`", "(a)",
            "!a", "a\nb", "a\tb", "$'x'",
        ] {
            assert!(!is_plain(raw), "{raw:?}");
        }
        // `{}` is not plain, and resolve_plain reads it as the parser does.
        assert!(!is_plain("{}"));
        same("{}");
        for raw in ["{", "}", "{}}", "{{}", "{a}", "a{}"] {
            assert!(resolve_plain(raw).is_none(), "{raw:?}");
        }
    }

    /// `resolve_single_quoted` gives what brush-parser's word parser and
    /// `resolve_parsed` give, for single-quoted words built from shell
    /// atoms (expansions, substitutions, globs, braces, escapes, quotes,
    /// blanks, multi-byte characters), and answers only for `'...'` without
    /// a `'` inside.
    #[test]
    fn word_single_quoted_path_equals_brush() {
        const ATOMS: &[&str] = &[
            "a",
            "Z",
            "0",
            " ",
            "\t",
            "\n",
            "$",
            "$x",
            "${",
            "}",
            "${x:-$(rm -rf .)}",
            "$((",
            "))",
            "$(",
            ")",
            "`",
            "$[",
            "]",
            "<(",
            ">(",
            "~",
            "~/",
            "=",
            "a=~/x",
            "*",
            "?",
            "[",
            "{a,b}",
            "{1..3}",
            "\\",
            "\"",
            "\\'",
            "!",
            "#",
            ";",
            "&",
            "|",
            "é",
            "日",
            "@(a)",
            "$'x'",
            "-",
        ];
        let vars = both_vars();
        let mut next = crate::sys::testing::xorshift(0x2545_F491_4F6C_DD1D);
        let mut hidden = 0;
        for round in 0..50_000 {
            let len = (next() % 8) as usize;
            let body: String = (0..len)
                .map(|_| ATOMS[(next() % ATOMS.len() as u64) as usize])
                .collect();
            let raw = format!("'{body}'");
            let Some(fast) = resolve_single_quoted(&raw) else {
                assert!(body.contains('\''), "{raw:?}");
                continue;
            };
            let v = &vars[round % 2];
            let slow = resolve_parsed(&raw, v, &ParserOptions::default());
            assert_eq!(fast.word, slow.word, "{raw:?}");
            assert!(slow.substitutions.is_empty(), "{raw:?}");
            assert!(fast.substitutions.is_empty(), "{raw:?}");
            assert_eq!(fast.had_expansion, slow.had_expansion, "{raw:?}");
            assert_eq!(fast.had_brace, slow.had_brace, "{raw:?}");
            assert_eq!(fast.hidden_code, slow.hidden_code, "{raw:?}");
            assert_eq!(fast.hidden_eval, slow.hidden_eval, "{raw:?}");
            assert_eq!(resolve(&raw, v, &ParserOptions::default()).word, slow.word);
            hidden += usize::from(fast.hidden_code);
        }
        assert!(hidden > 100, "{hidden}");
        for raw in [
            "", "'", "a'b'", "'a'b", "'a''b'", "\"a\"", "'a", "a'", "$'a'",
        ] {
            assert!(resolve_single_quoted(raw).is_none(), "{raw:?}");
        }
        assert!(resolve_single_quoted("''").is_some());
    }

    fn r(raw: &str) -> Resolved {
        let vars = KnownVars {
            home: "/home/u".into(),
            pwd: "/work".into(),
            tmpdir: None,
            positional: vec!["sh".into(), "one".into()].into(),
            home_known: true,
            pwd_known: true,
            positional_known: true,
            numeric: Default::default(),
        };
        resolve(raw, &vars, &ParserOptions::default())
    }

    #[test]
    fn quote_removal_joins_pieces() {
        assert_eq!(r("r''m").word.value, "rm");
        assert_eq!(r("r\"m\"").word.value, "rm");
        assert_eq!(r("-r'f'").word.value, "-rf");
        assert!(r("r''m").word.literal);
        assert_eq!(r("w\\ho\\am\\i").word.value, "whoami");
    }

    #[test]
    fn ansi_c_is_decoded() {
        assert_eq!(r("$'\\x72\\x6d'").word.value, "rm");
        assert_eq!(r("$'\\162\\155'").word.value, "rm");
        assert!(r("$'\\x72\\x6d'").word.literal);
    }

    #[test]
    fn known_variables_resolve_unknown_do_not() {
        let w = r("$HOME/.ssh").word;
        assert_eq!(w.value, "/home/u/.ssh");
        assert!(!w.unresolved);
        let w = r("${HOME:0:1}").word;
        assert!(w.unresolved);
        assert!(r("$IFS").word.unresolved);
        assert_eq!(r("\"$1\"").word.value, "one");
        assert_eq!(r("~/x").word.value, "/home/u/x");
    }

    #[test]
    fn globs_braces_substitutions_flagged() {
        assert!(r("*.rs").word.glob);
        assert!(!r("'*.rs'").word.glob);
        assert!(r("{rm,-rf}").had_brace);
        assert!(!r("'{a,b}'").had_brace);
        let s = r("\"$(rm -rf x)\"");
        assert_eq!(s.substitutions.len(), 1);
        assert!(s.word.unresolved);
    }
}

#[cfg(test)]
mod brace_tests {
    use super::*;

    #[test]
    fn brace_words_need_a_comma_or_a_range() {
        // Generated words of brace-ish atoms: whatever the fast answer,
        // the parser's answer is the same.
        const ATOMS: &[&str] = &[
            "{",
            "}",
            ",",
            "..",
            ".",
            "a",
            "Z",
            "1",
            "-",
            "+",
            "$",
            "'",
            "\"",
            "\\",
            "{}",
            "x",
            "é",
            " ",
            "$(",
            ")",
            "`",
            "*",
            "?",
            "[",
            "]",
            "{a,b}",
            "{1..3}",
            "{a..c..2}",
            "{,}",
            ",}",
            "{x,",
            "..}",
        ];
        let o = ParserOptions::default();
        let mut next = crate::sys::testing::xorshift_below(0x0123_4567_89ab_cdef);
        let mut expanded = 0;
        for _ in 0..30_000 {
            let len = 1 + next(9);
            let raw: String = (0..len).map(|_| ATOMS[next(ATOMS.len())]).collect();
            let want = expand_braces_parsed(&raw, &o);
            expanded += usize::from(want.is_some());
            assert_eq!(expand_braces(&raw, &o), want, "{raw:?}");
        }
        assert!(expanded > 1000, "{expanded}");
    }

    #[test]
    fn braces_expand_like_bash() {
        let o = ParserOptions::default();
        assert_eq!(
            expand_braces("src/{a,b}.rs", &o).unwrap(),
            ["src/a.rs", "src/b.rs"]
        );
        assert_eq!(expand_braces("f{1..3}", &o).unwrap(), ["f1", "f2", "f3"]);
        assert_eq!(
            expand_braces("{a,b}{c,d}", &o).unwrap(),
            ["ac", "ad", "bc", "bd"]
        );
        assert!(expand_braces("plain", &o).is_none());
        assert!(expand_braces("{1..100000}", &o).is_none());
    }
}
