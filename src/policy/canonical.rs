//! The canonical spelling of a command as its own option parser reads it
//! (`python3 -Im x` is `python3 -I -m x`), so the safety rules see every
//! option however it is clustered.

use super::args::ParsedArgs;
use super::lookup::Layered;
use super::rules;
use crate::parse::{Segment, Word};

/// `PROGRAM [SUB] -x VALUE --long VALUE OPERANDS...`, every option on its
/// own with its value, in the order given. `parent_parsed` are the
/// parents' arguments as parsed (in the order of `parents`).
pub(super) fn canonical_view(
    seg: &Segment,
    name: &str,
    parents: &[Layered<'_>],
    parent_parsed: &[ParsedArgs<'_>],
    parsed: &ParsedArgs,
) -> String {
    // Words are shown as `rules::render` shows them: quoted data stays
    // quoted, expansions as written. Each item follows a space.
    // Sized for the usual case at once (a clone of the program name grew
    // once or twice); a longer spelling still grows as needed.
    let mut out = String::with_capacity(
        seg.program.len() + 16 + seg.words.iter().map(|w| w.raw().len() + 4).sum::<usize>(),
    );
    out.push_str(&seg.program);
    let shown = |out: &mut String, w: &Word| {
        out.push(' ');
        if !w.literal && !w.glob {
            out.push_str(w.raw());
        } else {
            rules::push_quoted(out, &w.value);
        }
    };
    let push = |out: &mut String, p: &ParsedArgs| {
        for o in &p.options {
            out.push(' ');
            out.push_str(o.name);
            if let Some(v) = &o.value {
                shown(out, v);
            }
        }
    };
    for (i, p) in parent_parsed.iter().enumerate() {
        push(&mut out, p);
        // The subcommand word that led to the next layer (`push` in `git push`).
        let next = parents.get(i + 1).map_or(name, |(n, _, _)| &**n);
        if let Some(sub) = next.rsplit(' ').next() {
            out.push(' ');
            out.push_str(sub);
        }
    }
    push(&mut out, parsed);
    for (w, _) in &parsed.operands {
        shown(&mut out, w);
    }
    out
}
