//! Keyword prefilter for safety rules: the literal strings of which every
//! match of a pattern must contain at least one. A rule whose keywords do not
//! occur in a command cannot match it, so its regex is never compiled. Shared
//! by `build.rs` (built-in rules) and the profile loader (custom rules).

use regex_syntax::hir::{Hir, HirKind};

/// Literal strings of which every match of `pattern` contains at least one.
/// `None` when no such set can be derived (the rule then always runs).
pub fn keywords(pattern: &str) -> Option<Vec<String>> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let set = required(&hir)?;
    if set.iter().any(|s| s.len() < 2) {
        return None;
    }
    Some(set)
}

fn required(hir: &Hir) -> Option<Vec<String>> {
    match hir.kind() {
        HirKind::Literal(lit) => Some(vec![String::from_utf8(lit.0.to_vec()).ok()?]),
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Concat(items) => {
            // Merge adjacent literals into longer ones, then pick the best set.
            let mut best: Option<Vec<String>> = None;
            let mut run = String::new();
            let consider = |set: Vec<String>, best: &mut Option<Vec<String>>| {
                let score = set.iter().map(|s| s.len()).min().unwrap_or(0);
                let better = match best {
                    None => true,
                    Some(b) => score > b.iter().map(|s| s.len()).min().unwrap_or(0),
                };
                if better {
                    *best = Some(set);
                }
            };
            for item in items {
                if let HirKind::Literal(lit) = item.kind()
                    && let Ok(s) = std::str::from_utf8(&lit.0)
                {
                    run.push_str(s);
                    continue;
                }
                if !run.is_empty() {
                    consider(vec![std::mem::take(&mut run)], &mut best);
                }
                if let Some(set) = required(item) {
                    consider(set, &mut best);
                }
            }
            if !run.is_empty() {
                consider(vec![run], &mut best);
            }
            best
        }
        HirKind::Alternation(alts) => {
            let mut all = Vec::new();
            for a in alts {
                all.extend(required(a)?);
            }
            Some(all)
        }
        _ => None,
    }
}
