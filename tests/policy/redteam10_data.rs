//! Red team 10's "paths chosen by data" and "tools rated safe that run
//! project code" classes (F2, F6, F8, F15-F19), decided in both modes with
//! the exact decision. Each refused or asked spelling has its ordinary
//! form beside it, still allowed.
use crate::common::policy as common;
use common::*;

const RESPONSE: &str = "response file";
const NAMES: &str = "input names";
const NAMED: &str = "names from content";
const CODE: &str = "runs code";

#[test]
fn f15_response_files_ask_unconfined() {
    let w = World::new();
    std::fs::write(w.cwd.join("opts"), "-wrapper /bin/true\n").unwrap();
    expect(
        &w,
        &[
            ("gcc @opts -c x.c", "allow", "ask", RESPONSE),
            ("g++ @opts -c x.cpp", "allow", "ask", RESPONSE),
            ("cc @opts x.c", "allow", "ask", RESPONSE),
            ("clang -c x.c @opts", "allow", "ask", RESPONSE),
            (
                "printf -- '-wrapper /bin/sh,-c,id\\n' > opts && gcc @opts -c x.c",
                "allow",
                "ask",
                RESPONSE,
            ),
            ("javac -proc:none @opts X.java", "allow", "ask", RESPONSE),
            ("rustc @args main.rs", "allow", "ask", RESPONSE),
            ("rustc main.rs @args", "allow", "ask", RESPONSE),
            // Controls: the version, and `@` that is not a response file.
            ("gcc --version", "allow", "allow", ""),
            ("rustc --version", "allow", "allow", ""),
            ("javac --version", "allow", "allow", ""),
            ("echo @opts", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f16_f17_f18_tools_that_run_project_code() {
    let w = World::new();
    expect(
        &w,
        &[
            // javac runs annotation processors from the class path.
            ("javac X.java", "allow", "ask", CODE),
            ("javac -d out src/Main.java", "allow", "ask", CODE),
            (
                "javac Evil.java && mkdir -p META-INF/services && echo Evil > META-INF/services/javax.annotation.processing.Processor && javac X.java",
                "allow",
                "ask",
                CODE,
            ),
            ("javac -proc:none X.java", "allow", "allow", ""),
            (
                "javac -proc:none -d out src/Main.java",
                "allow",
                "allow",
                "",
            ),
            // flake8 imports `local-plugins` named by its configuration.
            ("flake8 a.py", "allow", "ask", CODE),
            (
                "printf '[flake8:local-plugins]\\nextension =\\n    X1 = evilplug:Plugin\\npaths = ./\\n' > .flake8 && flake8 a.py",
                "allow",
                "ask",
                CODE,
            ),
            ("flake8 --version", "allow", "allow", ""),
            // cargo package builds the crate to verify it (build.rs).
            ("cargo package", "allow", "ask", CODE),
            ("cargo package --no-verify", "allow", "allow", ""),
            ("cargo package --list", "allow", "allow", ""),
            ("cargo package -l", "allow", "allow", ""),
            // Unchanged siblings reviewed: they load no code from the tree.
            ("ruff check .", "allow", "allow", ""),
            ("black src", "allow", "allow", ""),
            ("isort src", "allow", "allow", ""),
            ("cargo metadata", "allow", "allow", ""),
            // Already rated as running code.
            ("pylint src", "allow", "ask", CODE),
            ("cargo build", "allow", "ask", ""),
        ],
    );
}

#[test]
fn f19_reads_named_by_content_ask_unconfined() {
    let w = World::new();
    expect(
        &w,
        &[
            (
                "echo '#include \"/home/u/.ssh/id_rsa\"' > inc.c && gcc -E inc.c",
                "allow",
                "ask",
                NAMES,
            ),
            ("gcc -E inc.c", "allow", "ask", NAMES),
            ("gcc -c main.c", "allow", "ask", NAMES),
            ("cc -o hello hello.c", "allow", "ask", NAMES),
            ("clang -E x.c", "allow", "ask", NAMES),
            ("rustc main.rs", "allow", "ask", NAMES),
            ("sort --files0-from=list", "allow", "ask", NAMED),
            ("sort --files0-from list", "allow", "ask", NAMED),
            ("wc --files0-from=list", "allow", "ask", NAMED),
            ("du --files0-from=list", "allow", "ask", NAMED),
            ("file -f list", "allow", "ask", NAMED),
            ("man -l x.1", "allow", "ask", NAMED),
            ("man --local-file x.1", "allow", "ask", "`.so`"),
            ("man ./x.1", "allow", "ask", "`.so`"),
            // Controls.
            ("sort -u names.txt", "allow", "allow", ""),
            ("wc -l src/main.rs", "allow", "allow", ""),
            ("du -sh src", "allow", "allow", ""),
            ("man ls", "allow", "allow", ""),
            ("man 2 open", "allow", "allow", ""),
            ("gcc --version", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f8_sed_in_place_suffix_is_a_backup_path() {
    let w = World::new();
    std::fs::write(w.cwd.join("pre-commit"), "#!/bin/sh\n").unwrap();
    std::fs::write(w.cwd.join("c"), "x\n").unwrap();
    let home = w.home.display().to_string();
    let bashrc = format!("sed -i'{home}/.bashr*' 's/x/x/' c");
    let long = format!("sed --in-place='{home}/*' s/x/y/ c");
    let via_tmp = "sed -i\"$TMPDIR/../home/*\" s/x/y/ c";
    expect(
        &w,
        &[
            (
                "sed -i'.git/hooks/*' 's/x/x/' pre-commit",
                "deny",
                "deny",
                "protected",
            ),
            (
                "sed -Ei'.git/hooks/*' s/x/y/ pre-commit",
                "deny",
                "deny",
                "protected",
            ),
            (
                "sed --in-place=.git/hooks/* s/x/y/ pre-commit",
                "deny",
                "deny",
                "protected",
            ),
            (&bashrc, "deny", "deny", "outside the writable roots"),
            (&long, "deny", "deny", "outside the writable roots"),
            (via_tmp, "deny", "deny", "outside the writable roots"),
            // No `*`: appended to the name (`.e` + `nvrc`).
            ("sed -i'nvrc' s/x/y/ .e", "deny", "deny", "protected"),
            ("sed -i'rc' s/x/y/ .env", "deny", "deny", "protected"),
            ("sed -i\"$X*\" s/x/y/ c", "allow", "ask", "backup suffix"),
            // Controls: ordinary backups and in-place edits.
            ("sed -i.bak s/a/b/ src/main.rs", "allow", "allow", ""),
            ("sed -i s/a/b/ src/main.rs", "allow", "allow", ""),
            (
                "sed --in-place=.orig -e s/a/b/ src/main.rs",
                "allow",
                "allow",
                "",
            ),
            ("sed -i'bak/*' s/a/b/ src/main.rs", "allow", "allow", ""),
            ("sed -i'*.orig' s/a/b/ src/main.rs", "allow", "allow", ""),
        ],
    );
}

/// A world with `t/` holding protected names and a `$TMPDIR/x` tree with
/// `.git/hooks/pre-commit` and `.claude/settings.local.json`, and a
/// harmless tree `$TMPDIR/y`.
fn landing_world() -> World {
    let w = World::new();
    for d in ["t", "t/sub"] {
        std::fs::create_dir_all(w.cwd.join(d)).unwrap();
    }
    for f in [
        "t/.envrc",
        "t/.mcp.json",
        "t/a.txt",
        "t/rust-toolchain.toml",
    ] {
        std::fs::write(w.cwd.join(f), "x\n").unwrap();
    }
    for d in ["x/.git/hooks", "x/.claude", "y/sub", "z/.vscode"] {
        std::fs::create_dir_all(w.tmp.join(d)).unwrap();
    }
    std::fs::write(w.tmp.join("x/.git/hooks/pre-commit"), "true\n").unwrap();
    std::fs::write(w.tmp.join("x/.claude/settings.local.json"), "{}\n").unwrap();
    std::fs::write(w.tmp.join("y/sub/f.txt"), "hi\n").unwrap();
    std::fs::write(w.tmp.join("z/.vscode/tasks.json"), "{}\n").unwrap();
    w
}

const LANDS: &str = "puts";
const TREE: &str = "copies the tree";
const EXTRACT: &str = "archive's members";

#[test]
fn f2_copy_move_link_into_a_directory_lands_at_dir_basename() {
    let w = landing_world();
    expect(
        &w,
        &[
            ("cp t/.envrc .", "deny", "deny", LANDS),
            ("cp t/.envrc ./", "deny", "deny", LANDS),
            ("cp t/a.txt t/.envrc .", "deny", "deny", LANDS),
            ("cp t/rust-toolchain.toml .", "deny", "deny", LANDS),
            ("mv t/.mcp.json .", "deny", "deny", LANDS),
            ("mv -t . t/.mcp.json", "deny", "deny", LANDS),
            ("ln t/.envrc .", "deny", "deny", LANDS),
            ("ln -s t/.envrc .", "deny", "deny", LANDS),
            ("ln -t . t/.envrc", "deny", "deny", LANDS),
            // (`ln -s TARGET` alone, linking `./basename`, is malformed
            // for the registry entry: refused whatever the name.)
            ("ln -s t/.envrc", "deny", "deny", "operand"),
            ("install -t . t/.envrc", "deny", "deny", LANDS),
            ("cp --target-directory=. t/.envrc", "deny", "deny", LANDS),
            ("cp t/.e* .", "deny", "deny", LANDS),
            ("git mv t/.envrc .", "deny", "deny", LANDS),
            ("cp t/.envrc src/..", "deny", "deny", LANDS),
            // Controls.
            ("cp t/a.txt .", "allow", "allow", ""),
            ("mv t/a.txt .", "allow", "allow", ""),
            ("cp t/a.txt t/sub", "allow", "allow", ""),
            ("ln -s t/a.txt .", "allow", "allow", ""),
            ("install -m 644 t/a.txt src/a.txt", "allow", "allow", ""),
            ("cp -T t/a.txt b.txt", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f2_trees_copied_or_moved_into_an_ancestor_of_protected_paths() {
    let w = landing_world();
    expect(
        &w,
        &[
            ("cp -a $TMPDIR/x/.git .", "deny", "deny", LANDS),
            ("cp -a $TMPDIR/x/.claude .", "deny", "deny", LANDS),
            ("cp -t . -r $TMPDIR/x/.claude", "deny", "deny", LANDS),
            ("mv $TMPDIR/x/.claude .", "deny", "deny", LANDS),
            ("cp -r $TMPDIR/x/. .", "deny", "deny", TREE),
            // A repository copied below the root is a nested one: its
            // hooks and configuration run when git runs inside it, so
            // they are refused in both modes (red team 10 F5's nested
            // repositories, `Roots::nested_protected_hit`).
            ("cp -R $TMPDIR/x .", "deny", "deny", TREE),
            ("mv $TMPDIR/x sub", "deny", "deny", TREE),
            ("cp -a $TMPDIR/x sub", "deny", "deny", TREE),
            ("cp -a $TMPDIR/z/. .", "deny", "deny", TREE),
            ("mv $TMPDIR/x .", "deny", "deny", TREE),
            ("rsync -a $TMPDIR/x/ .", "deny", "deny", TREE),
            // Controls: trees without protected paths.
            ("cp -r src .", "allow", "allow", ""),
            ("cp -r $TMPDIR/y/. .", "allow", "allow", ""),
            ("cp -a $TMPDIR/y out", "allow", "allow", ""),
            ("mv $TMPDIR/y/sub .", "allow", "allow", ""),
            ("rsync -a $TMPDIR/y/ out/", "allow", "allow", ""),
            ("cp -r src $TMPDIR/backup", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f2_a_tree_too_large_to_list_into_a_root_asks_unconfined() {
    let w = landing_world();
    let big = w.tmp.join("big");
    std::fs::create_dir_all(&big).unwrap();
    for i in 0..4200 {
        std::fs::write(big.join(format!("f{i}")), "").unwrap();
    }
    expect(
        &w,
        &[
            ("cp -r $TMPDIR/big/. .", "allow", "ask", "too large to list"),
            // Into a new directory too (review of round ten, R8): the tree
            // itself may hold `.git/hooks/...`, a nested repository.
            ("cp -r $TMPDIR/big out", "allow", "ask", "too large to list"),
            // A tree that can be listed and holds nothing protected.
            ("cp -r src out", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f2_extraction_and_stored_names_ask_unconfined() {
    let w = landing_world();
    expect(
        &w,
        &[
            ("tar xf a.tar -C .", "allow", "ask", EXTRACT),
            ("tar -xf a.tar -C sub", "allow", "ask", EXTRACT),
            (
                "tar --extract --file=a.tar --directory=out",
                "allow",
                "ask",
                EXTRACT,
            ),
            ("unzip a.zip -d .", "allow", "ask", EXTRACT),
            ("unzip a.zip -d out", "allow", "ask", EXTRACT),
            ("gzip -dN x.gz", "allow", "ask", "stored name"),
            ("gzip -d --name x.gz", "allow", "ask", "stored name"),
            ("gunzip -N x.gz", "allow", "ask", "stored name"),
            // Controls: listing, compressing, decompressing without names.
            ("tar -tf a.tar", "allow", "allow", ""),
            ("unzip -l a.zip", "allow", "allow", ""),
            ("gzip -d x.gz", "allow", "allow", ""),
            ("gunzip x.gz", "allow", "allow", ""),
            ("gzip -k build.log", "allow", "allow", ""),
        ],
    );
}

/// (decision, reasons) of `check --json [--unconfined] -c CMD` with the
/// caller's `PATH` set to `path`.
pub(super) fn decide_with_path(
    w: &World,
    unconfined: bool,
    path: &str,
    cmd: &str,
) -> (String, String) {
    let mut c = w.cmd();
    c.arg("check").arg("--json");
    if unconfined {
        c.arg("--unconfined");
    }
    c.args(["-c", cmd]).env("PATH", path);
    let out = c.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["decision"].as_str().unwrap_or("?").to_string(),
        reasons(&v),
    )
}

const PROJECT_PROGRAM: &str = "not a system program";

#[test]
fn f6_bare_names_resolved_through_path_into_a_root() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    for d in [".venv/bin", "node_modules/.bin"] {
        std::fs::create_dir_all(w.cwd.join(d)).unwrap();
    }
    std::fs::create_dir_all(w.cwd.join("sub")).unwrap();
    for f in [".venv/bin/git", "node_modules/.bin/tsc", "mytool", "sub/ls"] {
        let p = w.cwd.join(f);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let venv = format!("{}:/usr/bin:/bin", w.cwd.join(".venv/bin").display());
    let venv_last = format!("/usr/bin:/bin:{}", w.cwd.join(".venv/bin").display());
    let system = "/usr/bin:/bin";
    let cases: &[(&str, &str, &str, &str)] = &[
        // (PATH, command, unconfined decision, reason)
        (&venv, "git status", "ask", PROJECT_PROGRAM),
        (&venv, "git log --oneline", "ask", PROJECT_PROGRAM),
        (
            "node_modules/.bin:/usr/bin:/bin",
            "tsc -p .",
            "ask",
            PROJECT_PROGRAM,
        ),
        (
            ".venv/bin:/usr/bin:/bin",
            "git status",
            "ask",
            PROJECT_PROGRAM,
        ),
        (":/usr/bin:/bin", "mytool", "ask", PROJECT_PROGRAM),
        ("/usr/bin::/bin", "mytool", "ask", PROJECT_PROGRAM),
        // Review 11, F5: a relative or empty entry is searched from the
        // directory the command runs in, after a `cd` of the string.
        (".:/usr/bin:/bin", "cd sub && ls", "ask", PROJECT_PROGRAM),
        (":/usr/bin:/bin", "cd sub && ls -la", "ask", PROJECT_PROGRAM),
        ("/usr/bin:/bin:", "cd sub && ls", "allow", ""),
        (".:/usr/bin:/bin", "cd src && ls", "allow", ""),
        (".:/usr/bin:/bin", "ls", "allow", ""),
        // Written by the same string, then run by its bare name.
        (
            &venv,
            "printf '#!/bin/sh\\n' > .venv/bin/ls && ls",
            "deny",
            ".venv/bin",
        ),
        (&venv, "cp x .venv/bin/python3", "deny", ".venv/bin"),
        (
            "node_modules/.bin:/usr/bin:/bin",
            "cp x node_modules/.bin/tsc",
            "deny",
            "node_modules/.bin",
        ),
        // Controls: a system program first on PATH, names not in the
        // project's directories, builtins, writes elsewhere.
        (&venv_last, "git status", "allow", ""),
        (&venv, "ls -la", "allow", ""),
        (&venv, "echo hi", "allow", ""),
        (&venv, "cd src", "allow", ""),
        (&venv, "echo x > src/a.txt", "allow", ""),
        (system, "git status", "allow", ""),
        (system, "cp x .venv/bin/python3", "allow", ""),
        (":/usr/bin:/bin", "git status", "allow", ""),
    ];
    let mut fails = Vec::new();
    for (path, cmd, want, reason) in cases {
        let (d, why) = decide_with_path(&w, true, path, cmd);
        if d != *want || (d != "allow" && !why.contains(reason)) {
            fails.push(format!(
                "unconfined PATH={path} {cmd:?}: {d} ({why}), want {want} {reason:?}"
            ));
        }
        // Confined, the sandbox contains the project's programs.
        let (d, why) = decide_with_path(&w, false, path, cmd);
        if d != "allow" {
            fails.push(format!(
                "confined PATH={path} {cmd:?}: {d} ({why}), want allow"
            ));
        }
    }
    assert!(fails.is_empty(), "\n  {}", fails.join("\n  "));
}

/// The review of round ten (R4, R8): `cp -T` merges a directory source into
/// the destination itself, and `install -D` still lands where its operands
/// say; a tree too large to list asks unconfined whatever the destination.
#[test]
fn review10_no_target_directory_and_install_d() {
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join("t2/.git/hooks")).unwrap();
    std::fs::write(w.cwd.join("t2/.git/hooks/pre-commit"), "x\n").unwrap();
    std::fs::create_dir_all(w.cwd.join("t")).unwrap();
    std::fs::write(w.cwd.join("t/.envrc"), "x\n").unwrap();
    std::fs::write(w.cwd.join("t/ok.txt"), "y\n").unwrap();
    std::fs::create_dir_all(w.cwd.join("t3")).unwrap();
    std::fs::write(w.cwd.join("t3/a"), "z\n").unwrap();
    let big = w.tmp.join("big");
    std::fs::create_dir_all(&big).unwrap();
    for i in 0..4200 {
        std::fs::write(big.join(format!("f{i}")), "").unwrap();
    }
    expect(
        &w,
        &[
            ("cp -rT t2 .", "deny", "deny", "protected"),
            ("cp -aT t2 .", "deny", "deny", "protected"),
            ("install -Dt . t/.envrc", "deny", "deny", "protected"),
            ("install -D t/.envrc .envrc", "deny", "deny", "protected"),
            (
                "cp -a $TMPDIR/big/. sub",
                "allow",
                "ask",
                "too large to list",
            ),
            // Positive controls.
            ("cp -rT t3 out", "allow", "allow", ""),
            ("install -D t/ok.txt out/ok.txt", "allow", "allow", ""),
            ("install -d build/x", "allow", "allow", ""),
            ("cp -T t/ok.txt b.txt", "allow", "allow", ""),
        ],
    );
}
