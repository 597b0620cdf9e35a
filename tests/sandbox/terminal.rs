//! Red team 10 F20: the caller's terminal. `script` stands in for the user's
//! terminal (a harness runs safe-exec on it); the probe's `take-fg` is the
//! harmless half of the red team's reader: it makes its group the
//! terminal's foreground (`tcsetpgrp`) and reads nothing. Each refusal has
//! its errno and a positive control: the same operation outside safe-exec,
//! or an ordinary command handed the terminal.
use crate::common::sandbox as common;
use common::*;

/// Runs `inner` (a `sh -c` string) under `script`, so that it has a
/// controlling terminal; returns what the inner commands wrote to `name`
/// in the world's base directory, trimmed.
fn on_pty(w: &World, inner: &str) -> std::process::Output {
    crate::common::world::hermetic("script", &w.dirs)
        .args(["-qec", inner, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn read(w: &World, name: &str) -> String {
    std::fs::read_to_string(w.base.join(name))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// `safe-exec --profile P [--timeout 300] --cwd W -- ARGV` for a shell line.
fn safe_exec(w: &World, supervised: bool, argv: &str) -> String {
    format!(
        "SAFE_EXEC_STATE_DIR={} TMPDIR={} {} --profile {}{} --cwd {} -- {argv}",
        w.state.display(),
        w.tmp.display(),
        bin().display(),
        w.profile_file().display(),
        if supervised { " --timeout 300" } else { "" },
        w.work.display()
    )
}

#[test]
fn f20_a_command_not_handed_the_terminal_cannot_take_it() {
    let Some(w) = landlock_world() else {
        return;
    };
    need_tool("script", "bsdutils");
    let p = probe().display().to_string();
    let b = w.base.display().to_string();
    for supervised in [true, false] {
        // Stdio redirected, as a harness does: /dev/tty is not granted
        // (EACCES), and the command has no controlling terminal at all (a
        // session of its own when supervised: tty_nr 0).
        let run = safe_exec(&w, supervised, &format!("{p} take-fg /dev/tty"));
        let out = on_pty(
            &w,
            &format!("{run} </dev/null >{b}/o1 2>&1; echo $? >{b}/rc1"),
        );
        assert_eq!(
            read(&w, "rc1"),
            EACCES.to_string(),
            "{out:?} {}",
            read(&w, "o1")
        );
        if supervised {
            let run = safe_exec(&w, true, "awk '{print $7}' /proc/self/stat");
            on_pty(&w, &format!("{run} </dev/null >{b}/o2 2>{b}/e2"));
            assert_eq!(read(&w, "o2"), "0", "tty_nr: {}", read(&w, "e2"));
        }
        // Positive control: an ordinary command given the terminal keeps it
        // and may set its foreground group (a shell's job control).
        let run = safe_exec(&w, supervised, &format!("{p} take-fg 0"));
        on_pty(&w, &format!("{run}; echo $? >{b}/rc3"));
        assert_eq!(read(&w, "rc3"), "0", "handed the terminal");
        let run = safe_exec(&w, supervised, "sh -c 'test -t 0 && stty size </dev/tty'");
        on_pty(&w, &format!("{run} >{b}/o4 2>&1"));
        assert_eq!(
            read(&w, "o4").split_whitespace().count(),
            2,
            "{}",
            read(&w, "o4")
        );
    }
    // safe-exec in the background of a job-control shell, stdio the
    // terminal: the command may not make itself the foreground (TIOCSPGRP
    // refused by the filter: EPERM, where the kernel would have let it).
    let run = safe_exec(&w, true, &format!("{p} take-fg 0"));
    on_pty(
        &w,
        &format!("bash --norc -c 'set -m; {run} & wait $!; echo $? >{b}/rc5'"),
    );
    assert_eq!(read(&w, "rc5"), EPERM.to_string(), "background steal");
    // Control: the same probe without safe-exec takes the foreground.
    on_pty(
        &w,
        &format!("bash --norc -c 'set -m; {p} take-fg 0 & wait $!; echo $? >{b}/rc6'"),
    );
    assert_eq!(read(&w, "rc6"), "0", "control outside safe-exec");
}
