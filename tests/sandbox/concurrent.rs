//! Concurrent confined runs share one trusted baseline of the protected
//! files (docs/threat-model.md, "Protected files: concurrent runs"): a run
//! B that starts while run A's command has planted a hook or changed
//! `.git/config` restores to A's baseline, so that B's restore never puts
//! back what A's restore removed. Each test starts real runs that wait on
//! marker files the test creates (harmless canaries, temp HOME, state and
//! roots), as root and as an unprivileged user (uid 65534).
use super::supervisor::{Who, git, open_world, prep, repo, run_as, who};
use crate::common::sandbox::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `safe-exec --profile P ARGS...` as `who`, started in `cwd` (output
/// piped, not waited for).
fn start(w: &World, who: Who, cwd: &Path, args: &[&str]) -> Child {
    let profile = w.profile_file();
    std::fs::set_permissions(
        &profile,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let mut cmd: Command = match who {
        Who::Caller => w.safe_exec(),
        Who::Nobody => {
            let b = open_world(w);
            let mut c = test_user_command(w);
            c.arg(b);
            c
        }
    };
    cmd.arg("--profile")
        .arg(&profile)
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `p` exists (a run's command reached a point).
fn wait_for(p: &Path, what: &str) {
    let t = Instant::now();
    while !p.exists() {
        assert!(t.elapsed() < Duration::from_secs(60), "{what}: timed out");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A script (in work, run by its absolute path) that does `act`, marks
/// `ready` and waits for `go` (markers in TMPDIR, a root of every run).
fn waiting_script(w: &World, name: &str, act: &str) -> String {
    let t = w.tmp.display();
    w.script(
        name,
        &format!(
            "{act}\n: > {t}/{name}.ready\nwhile [ ! -e {t}/{name}.go ]; do sleep 0.02; done\n"
        ),
    );
    w.work.join(name).display().to_string()
}

fn ready(w: &World, name: &str) {
    wait_for(&w.tmp.join(format!("{name}.ready")), name);
}

fn go(w: &World, name: &str) {
    std::fs::write(w.tmp.join(format!("{name}.go")), "").unwrap();
}

fn done(c: Child) -> Output {
    c.wait_with_output().unwrap()
}

const UNSURE: &str = "changed while this run or a concurrent one in the same root ran";

/// The report of a run that put the protected files back while another
/// run was active in the same root: exit 126, naming `path`, without
/// blaming its own command.
fn assert_reported_unsure(out: &Output, who: Who, what: &str, path: &str) {
    let e = stderr(out);
    assert_eq!(code(out), 126, "{who:?}: {what}: {e}");
    assert!(
        e.contains(UNSURE) && e.contains(path),
        "{who:?}: {what}: {e}"
    );
}

fn assert_quiet(out: &Output, who: Who, what: &str) {
    let e = stderr(out);
    assert_eq!(code(out), 0, "{who:?}: {what}: {e}");
    assert!(!e.contains("protected"), "{who:?}: {what}: {e}");
}

const HOOK: &str = "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit";
const CONFIG: &str = "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config";

/// A plants, B starts in the same root (its snapshot would hold the
/// plant), A exits (its restore removes it), B exits: the plant stays
/// removed. On the old code B's restore put it back.
fn a_exits_first(act: &str, what: &str, check: impl Fn(&World, Who)) {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        let a = waiting_script(&w, "a.sh", act);
        let b = waiting_script(&w, "b.sh", ":");
        prep(&w, who);
        let ca = start(&w, who, &w.work, &["--", &a]);
        ready(&w, "a.sh");
        let cb = start(&w, who, &w.work, &["--", &b]);
        ready(&w, "b.sh");
        go(&w, "a.sh");
        let oa = done(ca);
        check(&w, who);
        go(&w, "b.sh");
        let ob = done(cb);
        // The carry-over: B's restore put A's change back.
        check(&w, who);
        // A's restore undid it (B still active: the report does not say
        // whose command it was); B found nothing to do.
        let path = if act == HOOK {
            "pre-commit"
        } else {
            ".git/config"
        };
        assert_reported_unsure(&oa, who, what, path);
        assert_quiet(&ob, who, what);
        assert!(!w.work.join("pwned").exists());
    }
}

fn no_hook(w: &World, who: Who) {
    assert!(
        !w.work.join(".git/hooks/pre-commit").exists(),
        "{who:?}: the planted hook is there"
    );
}

#[test]
fn concurrent_runs_do_not_carry_a_planted_hook_over() {
    a_exits_first(HOOK, "hook", no_hook);
}

#[test]
fn concurrent_runs_do_not_carry_a_config_change_over() {
    // The original bytes, read once the repository exists.
    a_exits_first(CONFIG, "config", |w, who| {
        let c = std::fs::read_to_string(w.work.join(".git/config")).unwrap();
        assert!(!c.contains("fsmonitor"), "{who:?}: {c}");
        assert!(c.contains("email = t@example.org"), "{who:?}: {c}");
    });
}

/// B exits first: B's restore already puts back A's baseline (the hook
/// goes while A still runs), reported as possibly the other run's doing;
/// A's restore then finds nothing left. (The old code also ended clean in
/// this order, A's restore coming last; it left the hook in place after
/// B's end.)
///
/// Then a chain of three: A changes `.git/config`, B starts, A ends
/// (restored), B's command plants a hook, C starts while B runs, B ends,
/// C ends last. C's baseline is B's published one (A's), not what B's
/// command made: neither the config change (in B's old snapshot) nor the
/// hook (in C's) comes back.
#[test]
fn concurrent_runs_restore_to_the_first_baseline_whichever_ends_first() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        let config = std::fs::read(w.work.join(".git/config")).unwrap();
        let a = waiting_script(&w, "a.sh", HOOK);
        let b = waiting_script(&w, "b.sh", ":");
        prep(&w, who);
        let ca = start(&w, who, &w.work, &["--", &a]);
        ready(&w, "a.sh");
        let cb = start(&w, who, &w.work, &["--", &b]);
        ready(&w, "b.sh");
        go(&w, "b.sh");
        let ob = done(cb);
        no_hook(&w, who);
        go(&w, "a.sh");
        let oa = done(ca);
        no_hook(&w, who);
        assert_reported_unsure(&ob, who, "B first", "pre-commit");
        assert_quiet(&oa, who, "A after B");
        // The chain.
        let a = waiting_script(&w, "a2.sh", CONFIG);
        let t = w.tmp.display();
        let b = waiting_script(
            &w,
            "b2.sh",
            &format!(": > {t}/b2.first\nwhile [ ! -e {t}/b2.plant ]; do sleep 0.02; done\n{HOOK}"),
        );
        let c = waiting_script(&w, "c2.sh", ":");
        prep(&w, who);
        let ca = start(&w, who, &w.work, &["--", &a]);
        ready(&w, "a2.sh");
        let cb = start(&w, who, &w.work, &["--", &b]);
        wait_for(&w.tmp.join("b2.first"), "b2 started");
        go(&w, "a2.sh");
        let oa = done(ca);
        std::fs::write(w.tmp.join("b2.plant"), "").unwrap();
        ready(&w, "b2.sh");
        let cc = start(&w, who, &w.work, &["--", &c]);
        ready(&w, "c2.sh");
        go(&w, "b2.sh");
        let ob = done(cb);
        go(&w, "c2.sh");
        let oc = done(cc);
        no_hook(&w, who);
        assert_eq!(
            std::fs::read(w.work.join(".git/config")).unwrap(),
            config,
            "{who:?}"
        );
        assert_reported_unsure(&oa, who, "chain A", ".git/config");
        // B's own command planted the hook; C was active.
        assert_reported_unsure(&ob, who, "chain B", "pre-commit");
        assert_quiet(&oc, who, "chain C");
    }
}

/// Roots that overlap without being equal. B's working directory is a
/// subdirectory of A's root: the venv `sub/.venv` is protected by both
/// (two levels below A's root, one below B's). A's working directory is a
/// project inside TMPDIR (roots: the project and TMPDIR), B's is another
/// project with the same TMPDIR: the project's venv is protected by both
/// (one level below A's project, two below TMPDIR).
#[test]
fn concurrent_runs_in_overlapping_roots_share_the_baseline() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        let sub = w.work.join("sub");
        let proj = w.tmp.join("proj");
        let mut pths: Vec<PathBuf> = Vec::new();
        for base in [&sub, &proj] {
            let sp = base.join(".venv/lib/python3.12/site-packages");
            std::fs::create_dir_all(&sp).unwrap();
            std::fs::write(base.join(".venv/pyvenv.cfg"), "home = /usr\n").unwrap();
            std::fs::write(sp.join("keep.pth"), "/opt/x\n").unwrap();
            pths.push(sp);
        }
        let plant = |sp: &Path| {
            format!(
                "echo 'import os; os.system(\"touch pwned\")' > {sp}/evil.pth && echo evil >> {sp}/keep.pth",
                sp = sp.display()
            )
        };
        for (i, (cwd_a, cwd_b, sp)) in [(&w.work, &sub, &pths[0]), (&proj, &w.work, &pths[1])]
            .into_iter()
            .enumerate()
        {
            let a = waiting_script(&w, &format!("a{i}.sh"), &plant(sp));
            let b = waiting_script(&w, &format!("b{i}.sh"), ":");
            prep(&w, who);
            let ca = start(&w, who, cwd_a, &["--", &a]);
            ready(&w, &format!("a{i}.sh"));
            let cb = start(&w, who, cwd_b, &["--", &b]);
            ready(&w, &format!("b{i}.sh"));
            go(&w, &format!("a{i}.sh"));
            let oa = done(ca);
            go(&w, &format!("b{i}.sh"));
            let ob = done(cb);
            assert!(!sp.join("evil.pth").exists(), "{who:?}: case {i}");
            assert_eq!(
                std::fs::read_to_string(sp.join("keep.pth")).unwrap(),
                "/opt/x\n",
                "{who:?}: case {i}"
            );
            assert_reported_unsure(&oa, who, &format!("A{i}"), "evil.pth");
            assert_quiet(&ob, who, &format!("B{i}"));
        }
    }
}

/// safe-exec A is killed (SIGKILL) while its command runs: its restore
/// never happens, so its command's change stays (docs/threat-model.md), and
/// its published baseline is stale: the next run, with nobody active, does
/// not restore to it, but warns once that the killed run's change may
/// remain. The user's own edit of `.git/config` made after the kill is
/// kept, the stale file removed.
#[test]
fn a_killed_runs_baseline_is_not_used() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        let a = waiting_script(&w, "a.sh", HOOK);
        prep(&w, who);
        let mut ca = start(&w, who, &w.work, &["--", &a]);
        ready(&w, "a.sh");
        ca.kill().unwrap();
        let _ = ca.wait();
        let published = |w: &World| -> Vec<String> {
            std::fs::read_dir(w.state.join("protect"))
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("run-"))
                .collect()
        };
        assert_eq!(published(&w).len(), 1, "{who:?}: the killed run's baseline");
        // What the killed run's command did stays (its restore never ran).
        assert!(w.work.join(".git/hooks/pre-commit").exists(), "{who:?}");
        // The user looks, removes the hook, edits the config.
        std::fs::remove_file(w.work.join(".git/hooks/pre-commit")).unwrap();
        git(&w.work, &["config", "user.name", "me, later"]);
        let config = std::fs::read(w.work.join(".git/config")).unwrap();
        prep(&w, who);
        let out = run_as(&w, who, &["--", "/bin/sh", "-c", "echo mine > mine.txt"]);
        // Nothing restored, a warning that the killed run's change may
        // remain.
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("ended without putting its protected files back")
                && !stderr(&out).contains("denied"),
            "{who:?}: {}",
            stderr(&out)
        );
        // Once: the stale baseline is gone.
        let out = run_as(&w, who, &["--", "/bin/sh", "-c", "echo mine > mine.txt"]);
        assert_quiet(&out, who, "after the kill, again");
        assert_eq!(std::fs::read(w.work.join(".git/config")).unwrap(), config);
        assert!(published(&w).is_empty(), "{who:?}: {:?}", published(&w));
    }
}

/// Positive controls: two runs at once that touch nothing protected report
/// nothing; a user's edit of `.git/config` between two runs that do not
/// overlap in time is kept (no stale baseline wins); a single run still
/// restores its own change, blaming its command.
#[test]
fn runs_that_do_not_overlap_or_touch_nothing_are_unchanged() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        let a = waiting_script(&w, "a.sh", "echo a > a.txt");
        let b = waiting_script(&w, "b.sh", "echo b > b.txt");
        prep(&w, who);
        let ca = start(&w, who, &w.work, &["--", &a]);
        ready(&w, "a.sh");
        let cb = start(&w, who, &w.work, &["--", &b]);
        ready(&w, "b.sh");
        go(&w, "a.sh");
        go(&w, "b.sh");
        assert_quiet(&done(ca), who, "A touches nothing");
        assert_quiet(&done(cb), who, "B touches nothing");
        assert!(w.work.join("a.txt").exists() && w.work.join("b.txt").exists());
        // Sequential runs, the user's edit in between.
        let out = run_as(&w, who, &["--", "/bin/sh", "-c", "echo one > one.txt"]);
        assert_quiet(&out, who, "first");
        git(&w.work, &["config", "user.name", "me, between runs"]);
        let config = std::fs::read(w.work.join(".git/config")).unwrap();
        prep(&w, who);
        let out = run_as(&w, who, &["--", "/bin/sh", "-c", "echo two > two.txt"]);
        assert_quiet(&out, who, "second");
        assert_eq!(std::fs::read(w.work.join(".git/config")).unwrap(), config);
        // A single run restores its own change and says its command did it.
        let s = w.script("own.sh", HOOK);
        prep(&w, who);
        let out = run_as(&w, who, &["--", &s]);
        assert_eq!(code(&out), 126, "{who:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("the command changed protected files")
                && stderr(&out).contains("pre-commit (created by the command; removed)"),
            "{who:?}: {}",
            stderr(&out)
        );
        no_hook(&w, who);
        // Nothing stays published once no run is active.
        let left: Vec<_> = std::fs::read_dir(w.state.join("protect"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "lock")
            .collect();
        assert!(left.is_empty(), "{who:?}: {left:?}");
    }
}

/// The published baselines are out of the command's reach: a confined
/// command cannot read, write or create anything in `{state}/protect`
/// (EACCES), not even its own run's baseline, whose name the test hands
/// it, nor open the lock; the same calls in TMPDIR work (positive control).
#[test]
fn the_command_cannot_touch_the_published_baselines() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        let t = w.tmp.display().to_string();
        let py = r#"
import os, sys
def tryit(name, f):
    try:
        f(); print(f"{name}=0")
    except OSError as e:
        print(f"{name}={e.errno}")
run, d, t = sys.argv[1], sys.argv[2], sys.argv[3]
for base, tag in ((d, "state"), (t, "tmp")):
    target = run if tag == "state" else os.path.join(t, "control.json")
    tryit(tag + "-write", lambda: os.close(os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)))
    tryit(tag + "-read", lambda: open(target, "rb").read())
    tryit(tag + "-create", lambda: os.close(os.open(os.path.join(base, "forged.json"), os.O_WRONLY | os.O_CREAT, 0o600)))
    tryit(tag + "-list", lambda: os.listdir(base))
    tryit(tag + "-lock", lambda: os.close(os.open(os.path.join(base, "lock"), os.O_RDWR | os.O_CREAT, 0o600)))
"#;
        std::fs::write(w.work.join("probe.py"), py).unwrap();
        let a = waiting_script(
            &w,
            "a.sh",
            &format!(
                ": > {t}/started\nwhile [ ! -e {t}/name ]; do sleep 0.02; done\npython3 probe.py \"$(cat {t}/name)\" \"$(dirname \"$(cat {t}/name)\")\" {t} > {t}/result\n"
            ),
        );
        prep(&w, who);
        let ca = start(&w, who, &w.work, &["--", &a]);
        wait_for(&w.tmp.join("started"), "started");
        let run = std::fs::read_dir(w.state.join("protect"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
            .expect("the run's published baseline");
        let before = std::fs::read(&run).unwrap();
        std::fs::write(w.tmp.join("name"), run.display().to_string()).unwrap();
        ready(&w, "a.sh");
        let result = std::fs::read_to_string(w.tmp.join("result")).unwrap();
        assert_eq!(std::fs::read(&run).unwrap(), before, "{who:?}");
        go(&w, "a.sh");
        assert_quiet(&done(ca), who, "probe");
        // Listing is allowed: `read_dir` is hierarchical, so the names in a
        // denied directory can be listed, not its files read or written
        // (docs/sandbox.md, "Limits").
        assert!(result.contains("state-list=0\n"), "{who:?}: {result}");
        for op in ["write", "read", "create", "lock"] {
            assert!(
                result.contains(&format!("state-{op}={EACCES}\n")),
                "{who:?}: {op}: {result}"
            );
            assert!(
                result.contains(&format!("tmp-{op}=0\n")),
                "{who:?}: control {op}: {result}"
            );
        }
        assert!(!w.state.join("protect/forged.json").exists());
    }
}

/// Two runs in different projects share only TMPDIR: A's change to its own
/// project's hook is put back and blamed on A's command (no other run was
/// active in that root), not hedged; a change in TMPDIR, a root of both,
/// is hedged.
#[test]
fn runs_in_other_projects_blame_their_own_command() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        let other = w.base.join("other");
        std::fs::create_dir_all(&other).unwrap();
        let a = waiting_script(
            &w,
            "a.sh",
            &format!("{HOOK}\necho evil > {}/.envrc", w.tmp.display()),
        );
        let b = waiting_script(&w, "b.sh", ":");
        prep(&w, who);
        let ca = start(&w, who, &w.work, &["--", &a]);
        ready(&w, "a.sh");
        let cb = start(&w, who, &other, &["--", &b]);
        ready(&w, "b.sh");
        go(&w, "a.sh");
        let oa = done(ca);
        go(&w, "b.sh");
        let ob = done(cb);
        no_hook(&w, who);
        assert!(!w.tmp.join(".envrc").exists(), "{who:?}");
        let e = stderr(&oa);
        assert_eq!(code(&oa), 126, "{who:?}: {e}");
        assert!(
            e.contains("pre-commit (created by the command; removed)")
                && e.contains(".envrc (created while this run or a concurrent one in the same root ran; removed)"),
            "{who:?}: {e}"
        );
        assert_quiet(&ob, who, "B in another project");
    }
}
