//! Red team 9's classes, decided in both modes with the exact decision:
//! F8 (a wrapper given no command starts a shell on its standard input),
//! F9 (sed/awk program files), F10 (globs that can match a project secret),
//! F14 (`ps` printing other processes' environments). Each class has
//! positive controls that stay allowed in both modes.
use crate::common::policy as common;
use common::*;

/// (decision, reasons joined) of `check --json [--unconfined] -c CMD`.
fn decide(w: &World, unconfined: bool, cmd: &str) -> (String, String) {
    let mut args = vec![];
    if unconfined {
        args.push("--unconfined");
    }
    args.extend(["-c", cmd]);
    let (code, v) = w.check_json_args(&args);
    assert!(matches!(code, 0 | 2 | 3), "check exit {code} for {cmd:?}");
    let reasons = v["reasons"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .unwrap_or_default();
    (v["decision"].as_str().unwrap_or("?").to_string(), reasons)
}

/// Every case `(command, confined decision, unconfined decision, words the
/// reason contains when not allowed)`.
fn expect(w: &World, cases: &[(&str, &str, &str, &str)]) {
    let mut fails = Vec::new();
    for (cmd, confined, unconfined, reason) in cases {
        for (mode, want) in [(false, confined), (true, unconfined)] {
            let (d, why) = decide(w, mode, cmd);
            let label = if mode { "unconfined" } else { "confined" };
            if d != *want {
                fails.push(format!("{label} {cmd:?}: {d}, want {want} ({why})"));
            } else if d != "allow" && !why.contains(reason) {
                fails.push(format!("{label} {cmd:?}: reason {why:?} lacks {reason:?}"));
            }
        }
    }
    assert!(fails.is_empty(), "\n  {}", fails.join("\n  "));
}

const SHELL: &str = "without a command starts an interactive shell";

#[test]
fn f8_wrapper_without_command_starts_a_shell() {
    let w = World::new();
    std::fs::write(w.cwd.join("cmds.txt"), "rm -rf ~\n").unwrap();
    expect(
        &w,
        &[
            ("printf 'rm -rf ~\\n' | script -q /dev/null", "ask", "ask", SHELL),
            ("echo 'cat ~/.ssh/id_rsa' | script -q /dev/null", "ask", "ask", SHELL),
            ("script -q /dev/null < cmds.txt", "ask", "ask", SHELL),
            ("script", "ask", "ask", SHELL),
            ("script x.log", "ask", "ask", SHELL),
            ("script -E never -q /dev/null", "ask", "ask", SHELL),
            ("script -q /dev/null --", "ask", "ask", SHELL),
            ("/usr/bin/script -a -f log", "ask", "ask", SHELL),
            ("nice script -q /dev/null", "ask", "ask", SHELL),
            // chroot and systemd-run raise privileges: refused either way.
            ("chroot /", "deny", "deny", ""),
            ("systemd-run --user --shell", "deny", "deny", ""),
            // The command after `--` (util-linux 2.39+) is the command.
            ("script -q /dev/null -- rm -rf ~", "deny", "deny", "rm"),
            ("script -q log -- python3 x.py", "allow", "ask", "runs code"),
            // A wrapper not known to be harmless without a command.
            ("strace -p 1", "ask", "ask", "without a command is not modelled"),
            // Positive controls: judged on the command string / command.
            ("script -q -c 'ls' /dev/null", "allow", "allow", ""),
            ("script -c ls /dev/null", "allow", "allow", ""),
            ("script -q /dev/null -- ls", "allow", "allow", ""),
            ("script -c 'rm -rf ~' /dev/null", "deny", "deny", "rm"),
            ("nice", "allow", "allow", ""),
            ("nice -n 5 ls", "allow", "allow", ""),
            ("timeout 5 ls", "allow", "allow", ""),
            ("strace -f -o trace.txt ls", "allow", "allow", ""),
        ],
    );
}
