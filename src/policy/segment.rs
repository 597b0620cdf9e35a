//! One segment (one simple command) judged against the registry: finds
//! its entry, then runs the checks in order (network use, structured
//! forms, working-directory moves, the options and operands of every
//! layer, history, run-time arguments) and raises the segment's risk.

use super::ReasonId;
use super::args::{ParsedArgs, parse_args};
use super::canonical::canonical_view;
use super::code::code_paths;
use super::languages::git_config_command;
use super::lookup::{Layered, lookup, unregistered};
use super::options::options;
use super::path_checks::{path_reason, redirections};
use super::program_path::untrusted_program_path;
use super::registry::{CommandSpec, Effect, Risk, ValueType};
use super::unknown::unknown;
use super::values::operands;
use super::written::{written_then_loaded, written_then_run};
use super::{
    Decision, Layer, NETWORK_WARNING, PolicyContext, Verdict, assignments, confined, forms,
    history, rules,
};
use super::{entry, templates};
use crate::parse::{Origin, Segment, Word};

/// Checks one segment against the registry, roots and its own shape.
pub(super) fn segment(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict, code: &mut Vec<String>) {
    let label = if seg.program.is_empty() {
        "(redirection)"
    } else {
        seg.program.as_str()
    };
    for n in &seg.notes {
        v.note(Layer::Parse, format!("{label}: {n}"));
    }
    if let Some(u) = &seg.unknown
        && !confined::source_inside_roots(seg, ctx, v)
    {
        confined::source_reads(seg, ctx, v);
        unknown(v, ctx, u);
    }
    if let Some(why) = &seg.cwd_uncertain
        && !ctx.confined
    {
        unknown(v, ctx, why);
    }
    assignments::prefix(seg, ctx, v);
    if seg.escalated {
        v.add(
            Layer::Policy,
            ReasonId::PolicyPrivilegeEscalation,
            Decision::Deny,
            if seg.wrappers.is_empty() {
                // `sudo`, `chroot DIR` alone: the wrapper is the program.
                format!("`{label}` would run with raised privileges")
            } else {
                format!(
                    "`{label}` would run with raised privileges ({})",
                    seg.wrappers.join(" ")
                )
            },
            Some(format!(
                "run `{}` without sudo inside the project",
                seg.argv_line(0)
            )),
        );
        v.risk = Risk::Dangerous;
    }
    redirections(seg, ctx, v);
    for f in &seg.reads {
        let p = ctx.resolve(seg, f);
        if let Err(e) = ctx.roots.check_read(&p) {
            path_reason(v, &p, &e, "a wrapper reads");
        }
    }
    if seg.program.is_empty() || seg.unknown.is_some() {
        return;
    }
    super::program_path::path_program(seg, ctx, v);
    if seg.words[0].value.contains('/') {
        written_then_run(seg, ctx, v, &seg.words[0].value, label, code);
        untrusted_program_path(seg, ctx, v);
        super::program_path::slash_program(seg, ctx, v);
    }
    if seg.origin == Origin::ExecTemplate {
        v.note(
            Layer::Policy,
            format!("{label}: runs as a template; its arguments are completed at run time"),
        );
    }
    confined::signals(seg, ctx, v);
    if confined::is_loopback_request_in(seg, ctx) {
        confined::loopback_request(seg, ctx, v);
        return;
    }

    // Registry, including subcommands.
    let registry = &ctx.profile.registry;
    let ((name, spec, args), parents) = match lookup(registry, &seg.program, &seg.words[1..]) {
        Ok(found) => found,
        Err(missing) => {
            unregistered(seg, ctx, v, &missing);
            return;
        }
    };
    // (`concat`: one allocation of the right size; `format!` grows it.)
    v.note(
        Layer::Policy,
        [
            &name,
            ": ",
            &spec.summary,
            " (base risk ",
            spec.risk.as_str(),
            ")",
        ]
        .concat(),
    );
    if !ctx.confined {
        written_then_loaded(seg, &name, &spec, ctx, v);
        super::program_path::path_helpers(&name, &spec.path_helpers, ctx, v);
    }
    let mut risk = spec.risk;
    entry::maturity(&name, &spec, v);
    confined::docker(&name, v);
    if spec.network_touching {
        if spec.form.is_none() {
            confined::needs_network(&name, ctx, v);
        } else {
            v.warn(NETWORK_WARNING.into());
        }
    }
    if spec.interpreter {
        risk = risk.max(Risk::Write);
        v.note(
            Layer::Policy,
            format!("{name}: runs code the validator cannot fully see; the sandbox contains it"),
        );
    }

    if let Some(form) = &spec.form {
        // Seed 002 forms are judged on the whole string.
        if whole_string_violation(seg) {
            v.add(
                Layer::Policy,
                ReasonId::FormWholeString,
                Decision::Deny,
                format!("`{name}` is accepted only as a command of its own: no operators, pipelines, redirections or substitutions around it"),
                Some(format!("run `{}` on its own", seg.argv_line(0))),
            );
            return;
        }
        if let Some(acc) = forms::check(*form, seg, ctx, v) {
            risk = risk.max(acc.risk);
            if acc.network.is_some() {
                v.network = acc.network;
            }
            v.note(
                Layer::Policy,
                format!("{name}: matches the structured form `{form}`"),
            );
        }
        v.risk = v.risk.max(risk);
        return;
    }
    if seg.template && spec.subcommands {
        // `echo clean | xargs git`: the subcommand arrives at run time.
        unknown(
            v,
            ctx,
            &format!("`{name}` gets its subcommand from input at run time (xargs or find)"),
        );
        return;
    }
    // `-C DIR` (git, make, cargo, ninja): the operands that follow are
    // relative to DIR, as the program itself will read them.
    // Each layer's arguments are parsed once (`moved_base`, the parents'
    // options and the entry's own checks all read the same parse).
    let parent_parsed: Vec<ParsedArgs<'_>> =
        parents.iter().map(|(_, s, a)| parse_args(s, a)).collect();
    // `find`'s implied starting point, when it has none (declared before
    // the parse that borrows it).
    let find_start: Word;
    let mut parsed = parse_args(&spec, args);
    // `xargs -n1 basename`: the input adds the operands. Not for a
    // recursive option (`echo ~ | xargs rm -rf`): a whole tree named at run
    // time stays refused.
    if seg.template && !parsed.has_effect(Effect::Recursive) {
        parsed.accept_run_time_operands();
    }
    let moved;
    let seg = match moved_base(seg, ctx, &parents, &parent_parsed, &parsed) {
        Ok(Some(s)) => {
            moved = s;
            &moved
        }
        Ok(None) => seg,
        Err(why) => {
            unknown(v, ctx, &why);
            return;
        }
    };
    // Unconfined, a program that runs code or writes works in its working
    // directory: one outside the writable roots (`make -C ~`, `cd ~ &&
    // cargo build`) writes there with nothing to stop it. Any git command
    // also runs what that repository's own configuration names
    // (`core.fsmonitor`, `core.pager`, hooks): `git -C /elsewhere status`
    // trusts a configuration the roots do not protect.
    let git = name == "git" || name.starts_with("git ");
    if !ctx.confined
        && (spec.interpreter || spec.risk >= Risk::Write || git)
        && ctx.roots.check_write(&seg.cwd, false).is_err()
    {
        v.add(
            Layer::Policy,
            ReasonId::PolicyUnconfinedCwd,
            Decision::Ask,
            format!(
                "`{name}` runs in `{}`, outside the writable roots, and nothing confines what it writes there",
                seg.cwd.display()
            ),
            Some("run it inside the project directory".into()),
        );
    }
    // Options given to parent commands before the subcommand.
    for ((pname, pspec, _), p) in parents.iter().zip(&parent_parsed) {
        entry::arguments_fit(pname, pspec, p, ctx, v);
        risk = risk.max(options(pname, p, seg, ctx, v, code));
    }
    // `find` without a starting point searches `.`.
    if name == "find" && parsed.operands.is_empty() {
        find_start = Word::literal(".");
        parsed.operands.push((&find_start, ValueType::ReadPath));
    }
    // An interpreter with no inline code and no script file reads its
    // program from standard input (`echo '...' | python3`).
    if spec.interpreter && spec.operands.iter().any(|o| o.ty == ValueType::Script) {
        let inline = parsed.has_effect(Effect::Last)
            || parsed
                .options
                .iter()
                .any(|o| o.spec.value_type == Some(ValueType::Code));
        let script = parsed
            .operands
            .iter()
            .find(|(_, t)| *t == ValueType::Script);
        if !inline
            && script.is_none()
            && (seg.pipe_index > 0 || seg.stdin_data.is_some())
            && seg.stdin_data.is_none()
        {
            unknown(
                v,
                ctx,
                &format!("`{name}` reads its program from a pipe; it cannot be checked"),
            );
        }
    }
    entry::arguments_fit(&name, &spec, &parsed, ctx, v);
    // The arguments as the program's own parser reads them (`python3 -Im
    // http.server` is `python3 -I -m http.server`): the safety rules see
    // this spelling too, so a cluster cannot hide an option from them.
    let canonical = canonical_view(seg, &name, &parents, &parent_parsed, &parsed);
    if !rules::render_is(seg, &canonical) {
        code.push([rules::CANONICAL, &canonical].concat());
    }
    if name == "git config" {
        git_config_command(&parsed, v);
    }
    risk = risk.max(options(&name, &parsed, seg, ctx, v, code));
    risk = risk.max(operands(&name, &parsed, seg, ctx, v, code));
    super::values::landing(&name, &parsed, seg, ctx, v);
    super::values::sed_backup(&name, &parsed, seg, ctx, v);
    if let Some(sub) = network_operands(&spec, &parsed) {
        confined::needs_network(format!("{name} {sub}").trim_end(), ctx, v);
    }
    history::git(&name, &parsed, seg, ctx, v);
    super::git_dirs::check(&name, &parsed, seg, ctx, v);
    if name == "find" {
        history::find_delete(&parsed, seg, ctx, v);
        super::find_delete::check(seg, ctx, v);
    }
    if name == "ps" {
        super::ps::check(&seg.argv_vec(), v);
    }
    confined::unconfined_interpreter(&name, &spec, &parsed, seg, ctx, v);
    confined::unconfined_program_file(&name, &spec, &parsed, seg, ctx, v);
    confined::unconfined_named_content(&name, &spec, &parsed, seg, ctx, v);
    confined::unconfined_expanded_operand(&name, &spec, &parsed, ctx, v);
    templates::run_time_arguments(&name, &spec, seg, ctx, v, risk);
    if let Some(data) = &seg.stdin_data
        && spec.interpreter
    {
        code.push(data.clone());
        code_paths(&name, data, seg, ctx, v);
    }
    v.risk = v.risk.max(risk);
}

/// The segment with its working directory moved by every `=chdir` option
/// (`git -C DIR`, `make -C DIR`, `cargo -C DIR`), applied in order as the
/// program does; `Err` when a directory is not literal. `parent_parsed`
/// are the parents' arguments as parsed (in order), `parsed` the entry's.
pub(super) fn moved_base(
    seg: &Segment,
    ctx: &PolicyContext,
    parents: &[Layered<'_>],
    parent_parsed: &[ParsedArgs<'_>],
    parsed: &ParsedArgs<'_>,
) -> Result<Option<Segment>, String> {
    // (The segment's cwd is copied only when an option moves it.)
    let mut cwd: Option<std::path::PathBuf> = None;
    let layers = parents
        .iter()
        .map(|(n, _, _)| &**n)
        .zip(parent_parsed)
        .chain(std::iter::once(("", parsed)));
    for (name, p) in layers {
        for o in &p.options {
            if o.spec.value_type != Some(ValueType::Chdir) {
                continue;
            }
            let Some(dir) = &o.value else { continue };
            if dir.unresolved || dir.glob {
                return Err(format!(
                    "`{name} {}` moves to a directory that is not literal",
                    o.written
                ));
            }
            let from = cwd.as_deref().unwrap_or(&seg.cwd);
            if !ctx.confined {
                ctx.dots_after_copied(from, &dir.value);
            }
            cwd = Some(crate::parse::join_physical(from, &dir.value));
        }
    }
    Ok(cwd.map(|cwd| Segment { cwd, ..seg.clone() }))
}

/// Whether the first operands are one of the entry's `network_when`
/// (`uv pip install`, `bun add`; `(none)`: no operand at all, `yarn`).
pub(super) fn network_operands(spec: &CommandSpec, p: &ParsedArgs) -> Option<String> {
    // (Compared word by word: no vector of the operands, nor of each
    // entry's words.)
    spec.network_when
        .iter()
        .find(|n| {
            if n.as_str() == "(none)" {
                return p.operands.is_empty();
            }
            // The entry's words, non-empty, are the first operands.
            let mut ops = p.operands.iter().map(|(w, _)| w.value.as_str());
            let mut want = n.split_whitespace().peekable();
            want.peek().is_some() && want.all(|w| ops.next() == Some(w))
        })
        .map(|n| {
            if n == "(none)" {
                String::new()
            } else {
                n.clone()
            }
        })
}

/// Whether the command around a form segment has anything besides it.
pub(super) fn whole_string_violation(seg: &Segment) -> bool {
    seg.depth > 0
        || !seg.redirections.is_empty()
        || seg.pipeline != 0
        || !seg.wrappers.is_empty()
        || !seg.assignments.is_empty()
}
