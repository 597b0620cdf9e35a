//! Shell constructs that change how later commands run or evaluate data as
//! code, found while walking (issue 13): assignments to bash's own tables
//! and settings, and `[[ ]]` tests that evaluate operands as arithmetic.
//! Each makes the command unknown: the policy may ask or deny, never allow.

use brush_parser::ast;

use super::word::{KnownVars, arithmetic_is_known};

/// Variables bash itself reads to decide what a later command runs or how
/// words are read: assigning any of them (`BASH_CMDS[cat]=/bin/rm`,
/// `BASH_ALIASES[ls]=...`, `SHELLOPTS=...`, `FUNCNEST=`, ...) changes the
/// meaning of the rest of the string.
const SHELL_INTERNAL: &[&str] = &[
    "SHELLOPTS",
    "IFS",
    "PATH",
    "CDPATH",
    "GLOBIGNORE",
    "GLOBSORT",
    "OLDPWD",
    "PWD",
    "ENV",
    "FUNCNAME",
    "FUNCNEST",
    "GROUPS",
    "HISTFILE",
    "HISTCMD",
    "HOSTFILE",
    "MAILPATH",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "EXECIGNORE",
    "FIGNORE",
    "INPUTRC",
    "POSIXLY_CORRECT",
    "TMOUT",
    "COMP_WORDBREAKS",
    "OPTIND",
];

/// Whether `name` is one of bash's own variables (see [`SHELL_INTERNAL`];
/// every `BASH*` name is: `BASH_CMDS`, `BASH_ALIASES`, `BASH_ENV`,
/// `BASH_XTRACEFD`, `BASHOPTS`, `BASH_COMPAT`, `BASH_LOADABLES_PATH`, ...).
pub fn is_shell_internal(name: &str) -> bool {
    name.starts_with("BASH") || SHELL_INTERNAL.contains(&name)
}

/// Records an assignment to a shell-internal variable as unknown.
pub fn shell_internal_assignment(name: &str, unknown: &mut Vec<String>) {
    if is_shell_internal(name) {
        let why = format!(
            "assigns `{name}`, one of bash's own variables, which changes how later commands are found or read"
        );
        if !unknown.contains(&why) {
            unknown.push(why);
        }
    }
}

/// `[[ A -eq B ]]` (and `-ne -lt -le -gt -ge`) evaluates both operands as
/// arithmetic: a name there is read as a variable whose contents are
/// evaluated again, and a subscript in them runs command substitutions
/// (`a='b[$(id)]'; [[ a -eq 0 ]]`). `-v NAME[SUB]` evaluates the subscript.
/// Operands must be numbers or variables the command set to numbers.
pub fn test_evaluates(e: &ast::ExtendedTestExpr, vars: &KnownVars, unknown: &mut Vec<String>) {
    use ast::{BinaryPredicate as B, ExtendedTestExpr as E, UnaryPredicate as U};
    match e {
        E::And(a, b) | E::Or(a, b) => {
            test_evaluates(a, vars, unknown);
            test_evaluates(b, vars, unknown);
        }
        E::Not(a) | E::Parenthesized(a) => test_evaluates(a, vars, unknown),
        E::UnaryTest(op, w) => {
            if matches!(
                op,
                U::ShellVariableIsSetAndAssigned | U::ShellVariableIsSetAndNameRef
            ) && let Some((_, sub)) = w.value.split_once('[')
                && !arithmetic_is_known(sub.trim_end_matches(']'), vars)
            {
                unknown.push(format!(
                    "`[[ -v {} ]]` evaluates a subscript whose value is not known",
                    w.value
                ));
            }
        }
        E::BinaryTest(op, a, b) => {
            if matches!(
                op,
                B::ArithmeticEqualTo
                    | B::ArithmeticNotEqualTo
                    | B::ArithmeticLessThan
                    | B::ArithmeticLessThanOrEqualTo
                    | B::ArithmeticGreaterThan
                    | B::ArithmeticGreaterThanOrEqualTo
            ) {
                for w in [a, b] {
                    // Quotes do not stop the evaluation: strip them first.
                    let text: String = w.value.chars().filter(|c| !matches!(c, '"')).collect();
                    if !arithmetic_is_known(text.trim(), vars) {
                        unknown.push(format!(
                            "`[[ ... {op} ... ]]` evaluates `{}` as arithmetic, reading values that are not known",
                            w.value
                        ));
                        return;
                    }
                }
            }
        }
    }
}

/// Whether [`builtin_evaluates`] looks at these words at all: the program
/// is `let` or one of the builtins that take variable names. For any other
/// program it answers `None` without reading the known variables, so a
/// caller need not build them.
pub fn builtin_may_evaluate(words: &[super::Word]) -> bool {
    matches!(
        words.first().map(|w| w.value.as_str()),
        Some(
            "let"
                | "unset"
                | "printf"
                | "read"
                | "declare"
                | "typeset"
                | "local"
                | "readonly"
                | "export"
                | "mapfile"
                | "readarray"
                | "wait"
                | "getopts"
        )
    )
}

/// Builtins that evaluate their arguments as arithmetic (`let`, `declare
/// -i`) or evaluate array subscripts in the names they are given (`unset
/// 'a[$x]'`, `printf -v 'a[i]'`, `read 'a[i]'`, `declare 'a[i]=1'`).
pub fn builtin_evaluates(words: &[super::Word], vars: &KnownVars) -> Option<String> {
    if !builtin_may_evaluate(words) {
        return None;
    }
    let program = words.first()?.value.as_str();
    let args = &words[1..];
    if program == "let" {
        return args
            .iter()
            .find(|w| !arithmetic_is_known(&w.value, vars) || w.unresolved)
            .map(|w| format!("`let {}` evaluates values that are not known", w.raw()));
    }
    let names_args = matches!(
        program,
        "unset"
            | "printf"
            | "read"
            | "declare"
            | "typeset"
            | "local"
            | "readonly"
            | "export"
            | "mapfile"
            | "readarray"
            | "wait"
            | "getopts"
    );
    if !names_args {
        return None;
    }
    let declares = matches!(
        program,
        "declare" | "typeset" | "local" | "readonly" | "export"
    );
    // `declare -n r=BASH_CMDS`: a name reference makes every later use of
    // `r` an assignment to another variable.
    if matches!(program, "declare" | "typeset" | "local")
        && args.iter().any(|w| {
            w.value.starts_with('-') && !w.value.starts_with("--") && w.value.contains('n')
        })
    {
        return Some(format!(
            "`{program} -n` makes a name reference; what later assignments change is not modelled"
        ));
    }
    let integer = declares
        && args.iter().any(|w| {
            w.value.starts_with('-') && !w.value.starts_with("--") && w.value.contains('i')
        });
    for w in args {
        let v = w.value.as_str();
        let (lhs, rhs) = match v.split_once('=') {
            Some((l, r)) => (l, Some(r)),
            None => (v, None),
        };
        // Only a word shaped like `NAME[SUB]` names an array element
        // (`printf '\e[1m'` or `read -p 'ok [y/n]'` do not).
        if let Some(open) = lhs.find('[')
            && super::unwrap::is_name(&lhs[..open])
        {
            let sub = lhs[open + 1..].trim_end_matches(']');
            if !arithmetic_is_known(sub, vars) {
                return Some(format!(
                    "`{program}` evaluates the subscript of `{}`, whose value is not known",
                    w.raw()
                ));
            }
        }
        if integer
            && let Some(r) = rhs
            && (!arithmetic_is_known(r, vars) || w.unresolved)
        {
            return Some(format!(
                "`{program} -i` evaluates `{}` as arithmetic, reading values that are not known",
                w.raw()
            ));
        }
    }
    None
}
