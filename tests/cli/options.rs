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
