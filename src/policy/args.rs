//! Reads a command's arguments the way its own option parser would (getopt
//! clusters, `-ofile`, `--long=value`, GNU abbreviations, `--`), so that
//! `rm -fr`, `rm -r -f`, `rm --recursive --force` and `rm --recur --forc`
//! are the same command to the policy.

use super::registry::{
    CommandSpec, Effect, OperandSlot, OptionEntry, OptionSpec, OptionStyle, Quantifier,
    UnknownOptions, ValueKind, ValueType,
};
use crate::parse::Word;

/// An option found in the arguments.
#[derive(Debug, Clone)]
pub struct UsedOption<'a> {
    /// The spelling used (`--forc` for `--force`).
    pub written: String,
    /// The option's canonical (first) name (borrowed from the entry).
    pub name: &'a str,
    /// Its registry spec (borrowed from the entry: cloning it for every
    /// option used, and dropping it, was a few percent of a decision).
    pub spec: &'a OptionSpec,
    /// Its value, if it takes one.
    pub value: Option<Word>,
}

/// The arguments of one command, classified.
#[derive(Debug, Clone, Default)]
pub struct ParsedArgs<'a> {
    /// Options in order.
    pub options: Vec<UsedOption<'a>>,
    /// Operands with the type assigned by the entry's operand list
    /// (borrowed from the arguments: copying each word was two
    /// allocations).
    pub operands: Vec<(&'a Word, ValueType)>,
    /// Options the entry does not list.
    pub unknown_options: Vec<String>,
    /// Problems that make the command malformed for the entry.
    pub errors: Vec<String>,
    /// When the operands are too few for the entry: the index of that
    /// error in `errors`, and the types the given operands take once the
    /// fewest missing ones are added at the end (`xargs -n1 basename`
    /// gets its operand at run time).
    short: Option<(usize, Vec<ValueType>)>,
}

impl ParsedArgs<'_> {
    /// For a command that gets more arguments at run time (`xargs CMD`):
    /// too few operands is not an error, as the input adds the last ones.
    pub fn accept_run_time_operands(&mut self) {
        if let Some((i, types)) = self.short.take() {
            if i < self.errors.len() {
                self.errors.remove(i);
            }
            for ((_, t), ty) in self.operands.iter_mut().zip(types) {
                *t = ty;
            }
        }
    }

    /// Whether an option with this effect was used.
    pub fn has_effect(&self, e: Effect) -> bool {
        self.options.iter().any(|o| o.spec.effects.contains(&e))
    }
}

/// Parses `args` (the words after the program or subcommand) against `spec`.
pub fn parse_args<'a>(spec: &'a CommandSpec, args: &'a [Word]) -> ParsedArgs<'a> {
    let mut out = ParsedArgs::default();
    // Borrowed: cloning every spec of the entry at every call was a third
    // of a warm decision.
    let opts = Opts(&spec.options);
    let mut operands: Vec<&'a Word> = Vec::new();
    let mut i = 0;
    let mut only_operands = spec.option_style == OptionStyle::None;
    while i < args.len() {
        let w = &args[i];
        let a = w.value.as_str();
        i += 1;
        if only_operands
            || a == "-"
            || !(a.starts_with('-') || (a.starts_with('+') && a.len() > 1 && has_plus(opts)))
        {
            if a == "--" && !only_operands {
                only_operands = true;
                continue;
            }
            operands.push(w);
            if spec.option_style == OptionStyle::Posix {
                only_operands = true;
            }
            continue;
        }
        if a == "--" {
            only_operands = true;
            continue;
        }
        if spec.option_style == OptionStyle::SingleDash || a.starts_with("--") || a.starts_with('+')
        {
            // `--name=value`, and `-name=value` for programs whose options
            // are single-dash words (Go's flag package, gcc).
            let (name, attached) = match a.split_once('=') {
                Some((n, v))
                    if a.starts_with("--") || spec.option_style == OptionStyle::SingleDash =>
                {
                    (n, Some(v.to_string()))
                }
                _ => (a, None),
            };
            let found = find_long(
                opts,
                name,
                spec.option_style == OptionStyle::Gnu && a.starts_with("--"),
            );
            match found {
                Lookup::Found(o) => {
                    let value = match (o.value, attached) {
                        (ValueKind::None, Some(_)) => {
                            // `--force=true` and the like: the flag is still set.
                            None
                        }
                        (ValueKind::None, None) => None,
                        (_, Some(v)) => Some(with_value(w, v)),
                        (ValueKind::Optional, None) => None,
                        (ValueKind::Required, None) => match args.get(i) {
                            Some(v) => {
                                i += 1;
                                Some(v.clone())
                            }
                            None => {
                                out.errors.push(format!("option `{a}` needs a value"));
                                None
                            }
                        },
                    };
                    only_operands |= record(&mut out, args, &mut i, name.to_string(), o, value);
                }
                Lookup::Ambiguous(names) => {
                    out.errors.push(format!(
                        "option `{name}` is ambiguous ({})",
                        names.join(", ")
                    ));
                }
                Lookup::Missing => {
                    if is_numeric_option(a, opts) {
                        continue;
                    }
                    out.unknown_options.push(name.to_string());
                }
            }
            continue;
        }
        // A cluster of short options: -rf, -ofile, -n5.
        if is_numeric_option(a, opts) || is_signal_option(a, opts) {
            continue;
        }
        // The cluster after its `-`, read in place (`j`: a byte offset, on a
        // character boundary; a vector of its characters was built before).
        let cluster = &a[1..];
        let mut j = 0;
        while let Some(ch) = cluster.get(j..).and_then(|c| c.chars().next()) {
            // The option's name is `-` and this character; it is compared
            // without building it (built only when it is recorded).
            let mut cbuf = [0u8; 4];
            let cs: &str = ch.encode_utf8(&mut cbuf);
            let name = || -> String {
                let mut s = String::with_capacity(1 + ch.len_utf8());
                s.push('-');
                s.push(ch);
                s
            };
            match opts
                .iter()
                .find(|o| o.names.iter().any(|m| is_short_name(m, cs)))
            {
                Some(o) => {
                    // The rest of the cluster, for an option with a value.
                    let rest = || -> String {
                        cluster
                            .get(j + ch.len_utf8()..)
                            .unwrap_or_default()
                            .to_string()
                    };
                    let value = match o.value {
                        ValueKind::None => None,
                        // `perl -0pi`: `-0` takes only the digits that follow
                        // it; the rest of the cluster is more options.
                        ValueKind::Optional if o.value_type == Some(ValueType::Digits) => {
                            let rest = rest();
                            let digits: String = match rest.strip_prefix('x') {
                                Some(hex) => std::iter::once('x')
                                    .chain(hex.chars().take_while(char::is_ascii_hexdigit))
                                    .collect(),
                                None => rest.chars().take_while(char::is_ascii_digit).collect(),
                            };
                            // (ASCII: as many bytes as characters.)
                            j += digits.len();
                            if digits.is_empty() {
                                None
                            } else {
                                Some(with_value(w, digits))
                            }
                        }
                        ValueKind::Optional => {
                            let rest = rest();
                            j = cluster.len();
                            if rest.is_empty() {
                                None
                            } else {
                                Some(with_value(w, rest))
                            }
                        }
                        ValueKind::Required => {
                            let rest = rest();
                            j = cluster.len();
                            if !rest.is_empty() {
                                Some(with_value(w, rest))
                            } else if let Some(v) = args.get(i) {
                                i += 1;
                                Some(v.clone())
                            } else {
                                out.errors
                                    .push(format!("option `{}` needs a value", name()));
                                None
                            }
                        }
                    };
                    only_operands |= record(&mut out, args, &mut i, name(), o, value);
                }
                None => {
                    out.unknown_options.push(name());
                    if spec.unknown_options != UnknownOptions::Allow {
                        // We cannot know whether the rest is a value.
                        break;
                    }
                }
            }
            j += ch.len_utf8();
        }
    }
    // Operand types: of the alternative lists whose options are all
    // present (`-s|--symbolic&-t|--target-directory` needs both), the one
    // naming the most wins; among equals, the first.
    const ANY_READ: &[OperandSlot] = &[OperandSlot {
        ty: ValueType::ReadPath,
        quantifier: Quantifier::Any,
    }];
    let used = |n: &str| {
        out.options
            .iter()
            .any(|o| o.spec.names.iter().any(|m| m == n))
    };
    let mut best: Option<(usize, &[OperandSlot])> = None;
    for (key, l) in &spec.operands_with {
        let mut parts = 0;
        if key.split('&').all(|p| {
            parts += 1;
            p.split('|').any(used)
        }) && best.is_none_or(|(n, _)| parts > n)
        {
            best = Some((parts, l.as_slice()));
        }
    }
    let list: &[OperandSlot] = best.map(|(_, l)| l).unwrap_or_else(|| {
        if spec.operands.is_empty() {
            ANY_READ
        } else {
            &spec.operands
        }
    });
    match assign_types(list, operands.len()) {
        Some(types) => out.operands = operands.into_iter().zip(types).collect(),
        None => {
            let n = operands.len();
            out.short = (1..=list.len())
                .find_map(|k| assign_types(list, n + k))
                .map(|t| (out.errors.len(), t));
            out.errors.push(format!(
                "{} operand(s) given; expected {}",
                n,
                describe(list)
            ));
            out.operands = operands
                .into_iter()
                .map(|w| (w, ValueType::ReadPath))
                .collect();
        }
    }
    out
}

/// Records a used option; skips an exec template (`-exec ... ;`) that it
/// starts. Returns whether options end after it (`!last`).
fn record<'a>(
    out: &mut ParsedArgs<'a>,
    args: &[Word],
    i: &mut usize,
    written: String,
    o: &'a OptionSpec,
    value: Option<Word>,
) -> bool {
    if o.effects.contains(&Effect::Template) {
        while *i < args.len() && !matches!(args[*i].value.as_str(), ";" | "+") {
            *i += 1;
        }
        *i += 1;
    }
    out.options.push(UsedOption {
        written,
        name: o.names[0].as_str(),
        spec: o,
        value,
    });
    o.effects.contains(&Effect::Last)
}

/// Whether the option name `m` is `-` followed by `c` (one character,
/// UTF-8 encoded), without building `-c`.
fn is_short_name(m: &str, c: &str) -> bool {
    m.strip_prefix('-') == Some(c)
}

/// An entry's options as their specs, borrowed (a vector of references
/// was collected at every call).
#[derive(Clone, Copy)]
struct Opts<'a>(&'a [OptionEntry]);

impl<'a> Opts<'a> {
    fn iter(self) -> impl Iterator<Item = &'a OptionSpec> {
        self.0.iter().map(OptionEntry::spec)
    }
}

fn has_plus(opts: Opts<'_>) -> bool {
    opts.iter()
        .any(|o| o.names.iter().any(|n| n.starts_with('+')))
}

fn is_numeric_option(a: &str, opts: Opts<'_>) -> bool {
    a.len() > 1
        && a[1..].chars().all(|c| c.is_ascii_digit())
        && opts.iter().any(|o| o.names.iter().any(|n| n == "-NUM"))
}

/// `-TERM`, `-SIGKILL`, `-USR1` for entries that list `-SIGNAL` (`kill`):
/// a signal name, not a cluster of `-T -E -R -M`.
fn is_signal_option(a: &str, opts: Opts<'_>) -> bool {
    let name = &a[1..];
    a.len() > 2
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-')
        && opts.iter().any(|o| o.names.iter().any(|n| n == "-SIGNAL"))
}

fn with_value(w: &Word, v: String) -> Word {
    // Every field but the value (cloning the whole word copied the value
    // too, then dropped it).
    w.with_value(v)
}

enum Lookup<'a> {
    Found(&'a OptionSpec),
    Ambiguous(Vec<String>),
    Missing,
}

fn find_long<'a>(opts: Opts<'a>, name: &str, abbrev: bool) -> Lookup<'a> {
    if let Some(o) = opts.iter().find(|o| o.names.iter().any(|n| n == name)) {
        return Lookup::Found(o);
    }
    if !abbrev || name.len() < 3 {
        return Lookup::Missing;
    }
    let matches: Vec<&OptionSpec> = opts
        .iter()
        .filter(|o| {
            o.names
                .iter()
                .any(|n| n.starts_with("--") && n.starts_with(name))
        })
        .collect();
    match matches.len() {
        0 => Lookup::Missing,
        1 => Lookup::Found(matches[0]),
        _ => {
            // Several spellings of the same option are not ambiguous.
            let first = &matches[0].names;
            if matches.iter().all(|m| &m.names == first) {
                Lookup::Found(matches[0])
            } else {
                Lookup::Ambiguous(
                    matches
                        .iter()
                        .filter_map(|m| m.names.iter().find(|n| n.starts_with(name)).cloned())
                        .collect(),
                )
            }
        }
    }
}

/// Assigns a type to each of `n` operands from a list like
/// `["read_path+", "write_path"]`. `None` when the count does not fit.
pub fn assign_types(list: &[OperandSlot], n: usize) -> Option<Vec<ValueType>> {
    let mut out = Vec::with_capacity(n);
    if fill(list, 0, n, &mut out) {
        Some(out)
    } else {
        None
    }
}

fn fill(items: &[OperandSlot], idx: usize, remaining: usize, out: &mut Vec<ValueType>) -> bool {
    if idx == items.len() {
        return remaining == 0;
    }
    let (min, max) = items[idx].bounds();
    let rest_min: usize = items[idx + 1..].iter().map(|i| i.bounds().0).sum();
    if remaining < rest_min + min {
        return false;
    }
    let take_max = max.min(remaining - rest_min);
    let mut k = take_max;
    loop {
        if k < min {
            return false;
        }
        let len = out.len();
        out.extend(std::iter::repeat_n(items[idx].ty, k));
        if fill(items, idx + 1, remaining - k, out) {
            return true;
        }
        out.truncate(len);
        if k == 0 {
            return false;
        }
        k -= 1;
    }
}

fn describe(list: &[OperandSlot]) -> String {
    if list.is_empty() {
        "no operands".into()
    } else {
        list.iter()
            .map(OperandSlot::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short option found without building its name: `m` without its
    /// leading `-` equal to the character is `m == "-" + c`, over
    /// generated names and characters (ASCII, multi-byte, `-` itself).
    #[test]
    fn short_name_comparison_equals_building_the_name() {
        let chars = ['a', 'r', 'f', '-', '0', '9', 'é', '€', '𝄞', 'Z', ' '];
        let mut names: Vec<String> = vec![String::new(), "-".into(), "--".into()];
        for a in chars {
            names.push(format!("-{a}"));
            names.push(format!("--{a}"));
            names.push(format!("{a}"));
            for b in chars {
                names.push(format!("-{a}{b}"));
            }
        }
        for c in chars {
            let mut cbuf = [0u8; 4];
            let cs: &str = c.encode_utf8(&mut cbuf);
            for m in &names {
                let built = format!("-{c}");
                assert_eq!(is_short_name(m, cs), *m == built, "{m:?} {c:?}");
            }
        }
    }

    fn spec(options: &[&str], operands: &[&str]) -> CommandSpec {
        let opts = options
            .iter()
            .map(|o| format!("{o:?}"))
            .collect::<Vec<_>>()
            .join(",");
        let ops = operands
            .iter()
            .map(|o| format!("{o:?}"))
            .collect::<Vec<_>>()
            .join(",");
        toml::from_str(&format!(
            "summary='t'\nrisk='write'\noptions=[{opts}]\noperands=[{ops}]\nexamples={{allow=['x']}}"
        ))
        .expect("spec")
    }

    fn words(s: &[&str]) -> Vec<Word> {
        s.iter().map(|w| Word::literal(*w)).collect()
    }

    #[test]
    fn clusters_longs_and_abbreviations_are_the_same() {
        let s = spec(
            &["-r -R --recursive !recursive", "-f --force", "-i"],
            &["write_path+"],
        );
        for form in [
            &["-rf", "x"][..],
            &["-fr", "x"],
            &["-r", "-f", "x"],
            &["--recursive", "--force", "x"],
            &["--recur", "--forc", "x"],
            &["x", "-rf"],
        ] {
            let ws = words(form);
            let p = parse_args(&s, &ws);
            assert!(p.has_effect(Effect::Recursive), "{form:?}");
            assert_eq!(p.options.len(), 2, "{form:?}");
            assert_eq!(p.operands.len(), 1, "{form:?}");
        }
    }

    #[test]
    fn attached_values_and_double_dash() {
        let s = spec(&["-o --output =write_path !write"], &["read_path*"]);
        let ws = words(&["-ofile", "a"]);
        let p = parse_args(&s, &ws);
        assert_eq!(
            p.options[0].value.as_ref().map(|w| w.value.as_str()),
            Some("file")
        );
        let ws = words(&["--output=f", "--", "-rf"]);
        let p = parse_args(&s, &ws);
        assert_eq!(p.operands[0].0.value, "-rf");
        assert!(p.unknown_options.is_empty());
    }

    #[test]
    fn operand_types_fill_from_both_ends() {
        let slots = |l: &[&str]| -> Vec<OperandSlot> {
            l.iter().map(|s| s.parse().expect("slot")).collect()
        };
        assert_eq!(
            assign_types(&slots(&["read_path+", "write_path"]), 3).unwrap(),
            [
                ValueType::ReadPath,
                ValueType::ReadPath,
                ValueType::WritePath
            ]
        );
        assert!(assign_types(&slots(&["read_path+", "write_path"]), 1).is_none());
        assert_eq!(
            assign_types(&slots(&["literal", "read_path*"]), 1).unwrap(),
            [ValueType::Literal]
        );
    }
}
