//! Review of round twelve: holes found in the merged code and fixed as
//! classes. Decided in both modes, with the exact decision and positive
//! controls beside each refusal.
use crate::common::policy as common;
use common::*;

/// F9: a magic link of `/proc` (`/proc/self/cwd`, `/proc/thread-self/cwd`,
/// `/proc/self/root`) names what it names for the process that follows
/// it. safe-exec followed it in its own process (its own working
/// directory), while the shell, after the string's `cd`, writes in its
/// own. Literal spellings, a project link to `/proc/self/cwd` or to
/// `/proc/self`, and a link the same string makes.
#[test]
fn a_magic_link_of_proc_is_read_as_the_commands() {
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(w.cwd.join(".claude")).unwrap();
    std::fs::create_dir_all(w.home.join(".config")).unwrap();
    std::os::unix::fs::symlink("/proc/self/cwd", w.cwd.join("here")).unwrap();
    std::os::unix::fs::symlink("/proc/self", w.cwd.join("me")).unwrap();
    let key = w.home.join(".ssh/id_rsa");
    let key = key.display();
    const PROTECTED: &str = "protected";
    const SECRET: &str = "inside the protected path";
    expect(
        &w,
        &[
            (
                "cd .git && printf x >> /proc/self/cwd/config",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "cd .git && printf x >> /proc/thread-self/cwd/config",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "cd .claude && echo '{}' > /proc/self/cwd/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "cd .git/hooks && echo x > /proc/self/cwd/pre-commit",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "cd src && echo x > /proc/self/cwd/../.envrc",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "cd .git && tee -a ../here/config",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "cd .git && echo x >> ../me/cwd/config",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "ln -s /proc/self/cwd y && cd .git && echo x >> ../y/config",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "cd ~ && cat /proc/self/cwd/.ssh/id_rsa",
                "deny",
                "deny",
                SECRET,
            ),
            (
                "cd && cat /proc/self/cwd/.ssh/id_rsa",
                "deny",
                "deny",
                SECRET,
            ),
            (
                "cd ~/.config && cat /proc/self/cwd/../.ssh/id_rsa",
                "deny",
                "deny",
                SECRET,
            ),
            (&format!("cat /proc/self/root{key}"), "deny", "deny", SECRET),
            // Positive controls: the same spellings on ordinary files, and
            // the descriptors and files of the command's own process.
            ("echo x > /proc/self/cwd/notes.txt", "allow", "allow", ""),
            (
                "cd src && echo x > /proc/self/cwd/notes.txt",
                "allow",
                "allow",
                "",
            ),
            ("cd src && echo x > ../here/notes.txt", "allow", "allow", ""),
            ("cat /proc/self/cwd/Cargo.toml", "allow", "allow", ""),
            ("echo hi > /proc/self/fd/1", "allow", "allow", ""),
            ("cd .git && echo hi > /dev/fd/2", "allow", "allow", ""),
            ("echo hi > /dev/stdout", "allow", "allow", ""),
            ("cat /proc/self/status", "allow", "allow", ""),
        ],
    );
}

/// F12: a `PATH` entry spelled with `~` (`export PATH="~/bin:$PATH"`,
/// quoted) is searched by bash from HOME; it was joined with the cwd, so a
/// project program first on `PATH` through it was not seen.
#[test]
fn a_path_entry_with_a_tilde_is_under_home() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join(".venv/bin")).unwrap();
    let p = w.cwd.join(".venv/bin/ls");
    std::fs::write(&p, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The project as HOME sees it (`~/../proj`).
    let home = w.home.canonicalize().unwrap();
    let cwd = w.cwd.canonicalize().unwrap();
    let up = home.parent().unwrap();
    let rel = cwd.strip_prefix(up).unwrap().display().to_string();
    let tilde = format!("~/../{rel}/.venv/bin:/usr/bin:/bin");
    let tilde_alone = "~:/usr/bin:/bin".to_string();
    let spelled = format!("{}/.venv/bin:/usr/bin:/bin", cwd.display());
    for (path, cmd, want) in [
        (tilde.as_str(), "ls", "ask"),
        (tilde.as_str(), "ls -la src", "ask"),
        (spelled.as_str(), "ls", "ask"),
        // Controls: the program not in the project directory, the entry
        // after the system's, and `~` alone (HOME holds no `ls`).
        (tilde.as_str(), "cat Cargo.toml", "allow"),
        (
            &format!("/usr/bin:/bin:~/../{rel}/.venv/bin"),
            "ls",
            "allow",
        ),
        (tilde_alone.as_str(), "ls", "allow"),
    ] {
        let (d, why) = super::redteam10_data::decide_with_path(&w, true, path, cmd);
        assert_eq!(d, want, "unconfined PATH={path} {cmd:?}: {why}");
        if want == "ask" {
            assert!(why.contains("not a system program"), "{why}");
        }
        let (d, why) = super::redteam10_data::decide_with_path(&w, false, path, cmd);
        assert_eq!(d, "allow", "confined PATH={path} {cmd:?}: {why}");
    }
}

/// F4: the wrappers in front of a program (`nice`, `env`, `timeout`,
/// `xargs`) are found through `PATH` too, and a name bash runs as a builtin
/// (`echo`, `true`) is a program when a wrapper or `xargs` runs it.
#[test]
fn wrappers_and_builtins_they_run_are_looked_up_on_path() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join(".venv/bin")).unwrap();
    std::fs::create_dir_all(w.cwd.join("tools")).unwrap();
    let venv = format!("{}:/usr/bin:/bin", w.cwd.join(".venv/bin").display());
    let tools = format!("{}:/usr/bin:/bin", w.cwd.join("tools").display());
    let put = |dir: &str, name: &str| {
        let p = w.cwd.join(dir).join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    for n in ["nice", "env", "timeout", "xargs"] {
        put(".venv/bin", n);
    }
    for n in ["echo", "true", "printf"] {
        put("tools", n);
    }
    let cases: &[(&str, &str, &str)] = &[
        (&venv, "nice /bin/ls", "ask"),
        (&venv, "timeout 5 /bin/ls", "ask"),
        (&venv, "env /bin/ls", "ask"),
        (&venv, "echo x | xargs /bin/echo", "ask"),
        (&tools, "nice echo hi", "ask"),
        (&tools, "timeout 5 true", "ask"),
        (&tools, "nice printf x", "ask"),
        (&tools, "echo x | xargs echo", "ask"),
        (&tools, "find . -maxdepth 0 -exec echo {} ;", "ask"),
        // Controls: bash's own builtins and keywords, wrappers from the
        // system's directories.
        (&tools, "echo hi", "allow"),
        (&tools, "command echo hi", "allow"),
        (&tools, "true && echo ok", "allow"),
        (&tools, "time /bin/ls", "allow"),
        (&venv, "/bin/ls", "allow"),
        ("/usr/bin:/bin", "nice echo hi", "allow"),
        ("/usr/bin:/bin", "echo x | xargs echo", "allow"),
    ];
    let mut fails = Vec::new();
    for (path, cmd, want) in cases {
        let (d, why) = super::redteam10_data::decide_with_path(&w, true, path, cmd);
        if d != *want || (d == "ask" && !why.contains("not a system program")) {
            fails.push(format!(
                "unconfined PATH={path} {cmd:?}: {d} ({why}), want {want}"
            ));
        }
        let (d, why) = super::redteam10_data::decide_with_path(&w, false, path, cmd);
        if d != "allow" {
            fails.push(format!(
                "confined PATH={path} {cmd:?}: {d} ({why}), want allow"
            ));
        }
    }
    assert!(fails.is_empty(), "\n  {}", fails.join("\n  "));
}

/// F15: `find ... -delete` with filters that can pick a protected entry,
/// or anything of the git directory, below its start point.
#[test]
fn find_delete_filters_that_can_pick_protected_entries_are_refused() {
    let w = World::new();
    for d in [
        ".git/hooks",
        ".git/objects/ab",
        ".claude",
        "build",
        "src/__pycache__",
    ] {
        std::fs::create_dir_all(w.cwd.join(d)).unwrap();
    }
    for (f, c) in [
        (".git/config", "[core]\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
        (".git/objects/ab/cdef", "x"),
        (".git/hooks/pre-commit.sample", "#!/bin/sh\n"),
        (".claude/settings.json", "{}\n"),
        (".envrc", "x\n"),
        ("src/a.pyc", "x"),
        ("build/a.o", "x"),
    ] {
        std::fs::write(w.cwd.join(f), c).unwrap();
    }
    const WHY: &str = "can delete";
    expect(
        &w,
        &[
            ("find . -path './.git/*' -delete", "deny", "deny", WHY),
            ("find . -name config -delete", "deny", "deny", WHY),
            ("find -name config -delete", "deny", "deny", WHY),
            ("find . -iname CONFIG -delete", "deny", "deny", WHY),
            ("find . -name settings.json -delete", "deny", "deny", WHY),
            (
                "find . -maxdepth 1 -name '.e*' -delete",
                "deny",
                "deny",
                WHY,
            ),
            ("find . -name '*.json' -delete", "deny", "deny", WHY),
            ("find . -name cdef -delete", "deny", "deny", WHY),
            ("find . -mtime -1 -delete", "deny", "deny", WHY),
            (
                "find . -name '*.pyc' -o -name x -delete",
                "deny",
                "deny",
                WHY,
            ),
            ("find . ! -name '*.rs' -delete", "deny", "deny", WHY),
            // Positive controls: filters that keep the protected entries
            // out, and start points below them.
            ("find . -name '*.pyc' -delete", "allow", "allow", ""),
            (
                "find . -type d -name __pycache__ -delete",
                "allow",
                "allow",
                "",
            ),
            ("find build -name '*.o' -delete", "allow", "allow", ""),
            ("find src -type f -delete", "allow", "allow", ""),
            ("find . -name config", "allow", "allow", ""),
        ],
    );
}
