//! The canonical spelling of a command as its own option parser reads it
//! (`python3 -Im x` is `python3 -I -m x`), so the safety rules see every
//! option however it is clustered.

use super::args::{ParsedArgs, parse_args};
use super::lookup::Layered;
use super::rules;
use crate::parse::{Segment, Word};

/// `PROGRAM [SUB] -x VALUE --long VALUE OPERANDS...`, every option on its
/// own with its value, in the order given.
pub(super) fn canonical_view(
    seg: &Segment,
    name: &str,
    parents: &[Layered<'_>],
    parsed: &ParsedArgs,
) -> String {
    // Words are shown as `rules::render` shows them: quoted data stays
    // quoted, expansions as written.
    let shown = |w: &Word| {
        if !w.literal && !w.glob {
            w.raw.clone()
        } else {
            rules::quote(&w.value)
        }
    };
    let out = std::cell::RefCell::new(vec![seg.program.clone()]);
    let push_word = |w: &str| out.borrow_mut().push(w.to_string());
    let push = |p: &ParsedArgs| {
        for o in &p.options {
            out.borrow_mut().push(o.name.clone());
            if let Some(v) = &o.value {
                out.borrow_mut().push(shown(v));
            }
        }
    };
    let names: Vec<&str> = parents
        .iter()
        .map(|(n, _, _)| n.as_str())
        .chain(std::iter::once(name))
        .collect();
    for (i, (_, spec, args)) in parents.iter().enumerate() {
        push(&parse_args(spec, args));
        // The subcommand word that led to the next layer (`push` in `git push`).
        if let Some(sub) = names.get(i + 1).and_then(|n| n.rsplit(' ').next()) {
            push_word(sub);
        }
    }
    push(parsed);
    let mut out = out.into_inner();
    out.extend(parsed.operands.iter().map(|(w, _)| shown(w)));
    out.join(" ")
}
