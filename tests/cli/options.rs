//! One definition per shared option: `cli::Common` (clap) drives run mode's
//! hand parser, the subcommands, the man page and the completions. Every
//! option it declares works in each place, in both spellings.

use clap::Args;
use safe_exec::cli::Common;
use safe_exec::cli::shell_args::{CommonOptions, parse};

/// (long name, a valid value) for every option of `Common`.
fn options() -> Vec<(String, &'static str)> {
    let cmd = Common::augment_args(clap::Command::new("x"));
    let v: Vec<(String, &'static str)> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(|l| (l.to_string(), if l == "timeout" { "7" } else { "v" }))
        .collect();
    assert!(v.len() >= 5, "{v:?}");
    v
}

fn set(o: &CommonOptions, name: &str) -> bool {
    match name {
        "profile" => o.profile.is_some(),
        "cwd" => o.cwd.is_some(),
        "session" => o.session.is_some(),
        "agent" => o.agent.is_some(),
        "timeout" => o.timeout == Some(7),
        "approval" => o.approval.as_deref() == Some("v"),
        "cwd-out" => o.cwd_out.as_deref() == Some("v"),
        other => panic!("option --{other} is new: teach this test what it sets"),
    }
}

#[test]
fn run_mode_accepts_every_shared_option_in_both_spellings() {
    for (name, value) in options() {
        for argv in [
            vec![format!("--{name}"), value.to_string()],
            vec![format!("--{name}={value}")],
        ] {
            let mut all = argv.clone();
            all.extend(["--".to_string(), "true".to_string()]);
            let parsed = parse(&all).unwrap_or_else(|e| panic!("{all:?}: {e}"));
            assert!(set(&parsed.common, &name), "{all:?} -> {parsed:?}");
        }
        // Missing value: an error, not the next word swallowed silently.
        assert!(parse(&[format!("--{name}")]).is_err(), "--{name} alone");
    }
    // Positive control for the error path: a bad timeout is refused.
    assert!(parse(&["--timeout=x".into(), "--".into(), "true".into()]).is_err());
}

#[test]
fn man_page_and_help_list_every_shared_option() {
    let mut man = Vec::new();
    safe_exec::cli::man::render_man(&mut man).expect("render man");
    let man = String::from_utf8_lossy(&man).replace("\\-", "-");
    let help = safe_exec::cli::man::documented_command()
        .render_long_help()
        .to_string();
    for (name, _) in options() {
        let flag = format!("--{name}");
        assert!(man.contains(&flag), "man page lacks {flag}");
        assert!(help.contains(&flag), "help lacks {flag}");
    }
}

// ------------------------------------------------ run mode's bash flags

use safe_exec::cli::shell_args::{FlagEffect, SHELL_FLAGS};

/// Every spelling of every bash flag the hand parser reads, with the words
/// that make a complete run-mode command around it.
fn flag_spellings() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for f in SHELL_FLAGS {
        let value: Vec<String> = f.value.map(|_| vec!["x".to_string()]).unwrap_or_default();
        let mut names = Vec::new();
        if let Some(c) = f.short {
            names.push(format!("-{c}"));
        }
        if let Some(l) = f.long {
            names.push(format!("--{l}"));
        }
        assert!(!names.is_empty(), "{f:?} has no name");
        for name in names {
            let mut argv = vec![name.clone()];
            argv.extend(value.clone());
            if f.effect != FlagEffect::CommandString {
                argv.push("-c".into());
            }
            argv.push("true".into());
            out.push((name, argv));
        }
    }
    out
}

fn man_text() -> String {
    let mut man = Vec::new();
    safe_exec::cli::man::render_man(&mut man).expect("render man");
    // Plain text: no font changes, no escaped hyphens.
    let mut text = String::from_utf8_lossy(&man).replace("\\-", "-");
    for font in ["\\fB", "\\fI", "\\fR", "\\fP"] {
        text = text.replace(font, "");
    }
    text
}

fn completions(shell: clap_complete::Shell) -> String {
    let mut cmd = safe_exec::cli::man::documented_command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "safe-exec", &mut buf);
    String::from_utf8(buf).expect("utf-8")
}

/// `-x` as a word of `text` (not inside `--x...` or `-xy`).
fn has_flag(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + flag.len()..].chars().next();
        !before.is_some_and(|c| c == '-' || c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

#[test]
fn every_bash_flag_parses_and_is_in_help_man_page_and_completions() {
    let help = safe_exec::cli::man::documented_command()
        .render_long_help()
        .to_string();
    let man = man_text();
    let shells = [
        clap_complete::Shell::Bash,
        clap_complete::Shell::Zsh,
        clap_complete::Shell::Fish,
    ];
    let scripts: Vec<(clap_complete::Shell, String)> =
        shells.iter().map(|s| (*s, completions(*s))).collect();
    for (name, argv) in flag_spellings() {
        let parsed = parse(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        assert!(
            matches!(
                parsed.command,
                safe_exec::cli::shell_args::RunCommand::String { .. }
            ),
            "{argv:?} -> {parsed:?}"
        );
        assert!(has_flag(&help, &name), "--help lacks {name}");
        assert!(has_flag(&man, &name), "the man page lacks {name}");
        for (shell, text) in &scripts {
            // fish lists `-s x` / `-l name`, the others the flag itself.
            let fish = match name.strip_prefix("--") {
                Some(l) => format!("-l {l}"),
                None => format!("-s {}", &name[1..]),
            };
            let found = match shell {
                clap_complete::Shell::Fish => text.contains(&fish),
                _ => has_flag(text, &name),
            };
            assert!(found || name == "-h", "{shell} completions lack {name}");
        }
    }
    // Positive controls: an unknown flag is refused, in both forms, and the
    // word check does not match a flag inside another.
    for bad in ["-Z", "--no-such-flag", "-lZc"] {
        assert!(
            parse(&[bad.to_string(), "-c".into(), "true".into()]).is_err(),
            "{bad}"
        );
    }
    assert!(!has_flag("--login", "-l"));
    assert!(has_flag("[-l] -c", "-l"));
}

#[test]
fn every_documented_option_is_one_the_parser_reads() {
    // The other way round: whatever --help, the man page and the
    // completions offer in run mode is accepted by the hand parser.
    let cmd = safe_exec::cli::man::documented_command();
    let mut checked = 0;
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches!(id, "help" | "version") || arg.is_positional() {
            continue;
        }
        let takes_value = arg.get_action().takes_values();
        let mut names = Vec::new();
        if let Some(c) = arg.get_short() {
            names.push(format!("-{c}"));
        }
        if let Some(l) = arg.get_long() {
            names.push(format!("--{l}"));
        }
        for name in names {
            let mut argv = vec![name.clone()];
            if takes_value {
                argv.push(if name == "--timeout" { "5" } else { "x" }.to_string());
            }
            if name != "-c" {
                argv.extend(["--".to_string(), "true".to_string()]);
            }
            assert!(
                parse(&argv).is_ok(),
                "{name} is documented but run mode refuses {argv:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= SHELL_FLAGS.len(), "checked {checked}");
}

#[test]
fn the_subcommand_words_are_the_clap_subcommands() {
    use clap::CommandFactory;
    let mut want: Vec<String> = safe_exec::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    want.extend(["help", "--help", "-h", "--version", "-V"].map(String::from));
    want.sort();
    let mut have: Vec<String> = safe_exec::cli::SUBCOMMANDS
        .iter()
        .map(|s| s.to_string())
        .collect();
    have.sort();
    assert_eq!(have, want);
    assert!(safe_exec::cli::entry::is_own_subcommand("hook"));
    assert!(!safe_exec::cli::entry::is_own_subcommand("setup"));
    assert!(!safe_exec::cli::entry::is_own_subcommand("git"));
}

#[test]
fn help_prints_run_mode_options_and_the_subcommands() {
    for word in ["--help", "help", "-h"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_safe-exec"))
            .arg(word)
            .env_clear()
            .output()
            .expect("run safe-exec");
        assert_eq!(out.status.code(), Some(0), "{word}");
        let text = String::from_utf8_lossy(&out.stdout);
        for needle in ["-c <STRING>", "--profile", "check", "hook", "Exit codes"] {
            assert!(text.contains(needle), "{word}: lacks {needle}: {text}");
        }
        // The compatibility flags are in the long help only.
        assert_eq!(text.contains("--noprofile"), word != "-h", "{word}");
    }
}
