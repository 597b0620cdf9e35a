//! Red team 9's classes, decided in both modes with the exact decision:
//! F8 (a wrapper given no command starts a shell on its standard input),
//! F9 (sed/awk program files), F10 (globs that can match a project secret),
//! F14 (`ps` printing other processes' environments). Each class has
//! positive controls that stay allowed in both modes.
use crate::common::policy as common;
use common::*;

const SHELL: &str = "without a command starts an interactive shell";

#[test]
fn f8_wrapper_without_command_starts_a_shell() {
    let w = World::new();
    std::fs::write(w.cwd.join("cmds.txt"), "rm -rf ~\n").unwrap();
    expect(
        &w,
        &[
            (
                "printf 'rm -rf ~\\n' | script -q /dev/null",
                "ask",
                "ask",
                SHELL,
            ),
            (
                "echo 'cat ~/.ssh/id_rsa' | script -q /dev/null",
                "ask",
                "ask",
                SHELL,
            ),
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
            (
                "strace -p 1",
                "ask",
                "ask",
                "without a command is not modelled",
            ),
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

#[test]
fn f9_sed_and_awk_program_files() {
    let w = World::new();
    std::fs::write(w.cwd.join("README"), "a\n").unwrap();
    std::fs::write(w.cwd.join("x.sed"), "1e touch CANARY\n").unwrap();
    std::fs::write(w.cwd.join("x.awk"), "BEGIN{system(\"id\")}\n").unwrap();
    const STDIN: &str = "reads its program from standard input";
    const FD: &str = "reads its program from the open descriptor";
    const FILE: &str = "runs the program in";
    const SAME: &str = "which this same command writes";
    expect(
        &w,
        &[
            // From standard input or a descriptor: asks in both modes.
            (
                "printf '1e touch x\\n' | sed -f /dev/stdin README",
                "ask",
                "ask",
                STDIN,
            ),
            (
                "printf '1e touch x\\n' | sed -f - README",
                "ask",
                "ask",
                STDIN,
            ),
            (
                "echo 'rm -rf ~' | sed -f - -e 's/x/y/' README",
                "ask",
                "ask",
                STDIN,
            ),
            (
                "printf '1w ~/.bashrc\\n' | sed -n -f - README",
                "ask",
                "ask",
                STDIN,
            ),
            ("sed --file=- README", "ask", "ask", STDIN),
            ("sed -f /proc/self/fd/0 README", "ask", "ask", STDIN),
            ("sed -f /dev/fd/3 README 3<x.sed", "ask", "ask", FD),
            ("awk -f /proc/self/fd/3 README 3<x.awk", "ask", "ask", FD),
            (
                "echo 'BEGIN{system(\"id\")}' | awk -f -",
                "ask",
                "ask",
                STDIN,
            ),
            // A file this same string writes: confined it runs in the
            // sandbox (like `python3 t.py`), unconfined it asks.
            (
                "printf '1e touch x\\n' > y.sed && sed -f y.sed README",
                "allow",
                "ask",
                SAME,
            ),
            (
                "printf 'BEGIN{}' > y.awk && awk -f y.awk README",
                "allow",
                "ask",
                SAME,
            ),
            // An existing program file: code not seen; asks unconfined.
            ("sed -f x.sed README", "allow", "ask", FILE),
            ("sed --file=x.sed README", "allow", "ask", FILE),
            ("sed -nf x.sed README", "allow", "ask", FILE),
            ("sed -fx.sed README", "allow", "ask", FILE),
            ("sed -i -f x.sed README", "allow", "ask", FILE),
            ("awk -f x.awk", "allow", "ask", FILE),
            ("awk -f x.awk README", "allow", "ask", FILE),
            ("awk --file=x.awk README", "allow", "ask", FILE),
            ("gawk -f x.awk README", "allow", "ask", FILE),
            (
                "awk -i lib '{print}' README",
                "allow",
                "ask",
                "loads awk source",
            ),
            // Positive controls, the same as `python3 x.py` confined.
            ("python3 x.py", "allow", "ask", "runs code"),
            ("sed -e s/a/b/ README", "allow", "allow", ""),
            ("sed -i s/a/b/ README", "allow", "allow", ""),
            ("sed -n 1,3p README", "allow", "allow", ""),
            ("sed s/a/b/ README", "allow", "allow", ""),
            ("awk '{print $1}' README", "allow", "allow", ""),
            ("awk -F: '{print $1}' README", "allow", "allow", ""),
            ("awk -i inplace '{print}' README", "allow", "allow", ""),
            // Inline programs are still read with their grammar.
            ("sed -e '1e touch x' README", "deny", "deny", "`e`"),
        ],
    );
}

#[test]
fn f10_globs_that_expand_to_a_project_secret() {
    let w = World::new();
    std::fs::write(w.cwd.join(".env"), "API_TOKEN=secret\n").unwrap();
    std::fs::write(w.cwd.join(".env.example"), "API_TOKEN=\n").unwrap();
    std::fs::write(w.cwd.join("README.md"), "# demo\n").unwrap();
    std::fs::create_dir_all(w.cwd.join("app")).unwrap();
    std::fs::write(w.cwd.join("app/.env.local"), "K=v\n").unwrap();
    const SECRET: &str = "a secret file (its name is in [paths] secret_names)";
    let mut cases = vec![];
    for c in [
        "cat .env*",
        "cat .[e]nv",
        "cat .en?",
        "tail -n +1 .e*",
        "cat * .*",
        "cat ./.env*",
        "head -5 .e*v",
        "grep TOKEN .e*",
        "cat */.env*",
        "cat a*/.e*",
        "cat app/.env.*",
        "cp .e* /tmp/x",
        "shopt -s dotglob; cat *",
        "shopt -s nocaseglob; cat .ENV*",
        "shopt -s extglob\ncat @(.env)",
        "cat .*v",
    ] {
        cases.push((c, "deny", "deny", SECRET));
    }
    // Positive controls: templates, globs that match no secret, and
    // recursive readers (not refused: too much friction; see the threat model).
    for c in [
        "cat .env.example",
        "cat .env.ex*",
        "echo x > .envrc2; cat .env?*",
        "cat *.md",
        "cat *",
        "wc -l README*",
        "grep -r TOKEN .",
        "ls",
    ] {
        cases.push((c, "allow", "allow", ""));
    }
    expect(&w, &cases);
    // Matched against the real entries: with only the template, `.env.*`
    // and `.env*` read no secret.
    std::fs::remove_file(w.cwd.join(".env")).unwrap();
    std::fs::remove_file(w.cwd.join("app/.env.local")).unwrap();
    expect(
        &w,
        &[
            ("cat .env.*", "allow", "allow", ""),
            ("cat .env*", "allow", "allow", ""),
            ("cat .env", "deny", "deny", SECRET),
            // A secret this same string writes counts as an entry.
            ("echo A=1 > .env.local; cat .env.*", "deny", "deny", SECRET),
        ],
    );
}

#[test]
fn f14_ps_printing_environments() {
    let w = World::new();
    const ENV: &str = "prints other processes' environments";
    let mut cases = vec![];
    for c in [
        "ps eww",
        "ps auxe",
        "ps e -p 1",
        "ps -ef e",
        "ps -o environ",
        "ps -o pid,environ -p 1",
        "ps axo pid,environ",
        "ps --format pid,environ",
        "ps --format=environ",
        "/bin/ps eww",
        "nice ps auxe | grep TOKEN",
        // procps reads a failed UNIX argument list again as BSD options.
        "ps -auxe",
        "ps -axe",
        "ps -xe",
        "ps -ae -x",
    ] {
        cases.push((c, "deny", "deny", ENV));
    }
    for c in [
        "ps aux",
        "ps -ef",
        "ps -e",
        "ps -o pid,comm",
        "ps -eo pid,ppid,cmd",
        "ps aux | grep node",
        "ps -p 1 -o comm=",
        "ps -u e",
        "ps -aux",
        "ps -u root",
        "ps -ef -p 1",
        "ps -e -u x",
    ] {
        cases.push((c, "allow", "allow", ""));
    }
    // The same reason as the file itself.
    cases.push((
        "cat /proc/1/environ",
        "deny",
        "deny",
        "inside the protected path `/proc/1`",
    ));
    expect(&w, &cases);
}

/// A glob whose expansion budget (20,000 entries) runs out at a wildcard
/// component before the last: the entries not read could lead to the
/// secret (`d/?/.env` with `d/p -> ..` listed after entry 20,000).
#[test]
fn f10_glob_budget_exhausted_before_the_last_component() {
    let w = World::new();
    std::fs::write(w.cwd.join(".env"), "API_TOKEN=secret\n").unwrap();
    std::fs::write(w.cwd.join("README.md"), "# demo\n").unwrap();
    let d = w.cwd.join("d");
    std::fs::create_dir(&d).unwrap();
    std::os::unix::fs::symlink("..", d.join("p")).unwrap();
    // `p` must be listed past the 20,000th entry: the listing order is the
    // file system's (a hash of the name on ext4, newest first on tmpfs),
    // so files are added until it is.
    let start = std::time::Instant::now();
    let position = || {
        std::fs::read_dir(&d)
            .unwrap()
            .position(|e| e.unwrap().file_name() == "p")
            .unwrap()
    };
    let mut made = 0;
    while made < 25_000 || position() <= 20_000 {
        assert!(made < 200_000, "`p` stays among the first 20,000 entries");
        for i in made..made + 5_000 {
            std::fs::File::create(d.join(format!("f{i}"))).unwrap();
        }
        made += 5_000;
    }
    eprintln!("{made} files in {:?}", start.elapsed());
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    const SECRET: &str = "a secret file (its name is in [paths] secret_names)";
    let mut cases = vec![];
    for c in [
        "cat d/?/.env",
        "cat d/*/.env",
        "cat d/[p]/.env",
        "cat d/*/.e*",
        "cat ./d/?/.env*",
    ] {
        cases.push((c, "deny", "deny", SECRET));
    }
    // The last component names no secret: allowed past the budget too.
    for c in ["cat d/?/README.md", "cat d/*/*.md", "cat README.md", "ls d"] {
        cases.push((c, "allow", "allow", ""));
    }
    expect(&w, &cases);
}

/// A secret given a new name by a hard link or a move is read under it:
/// the source is refused as a read of the secret, as `ln -s .env x` is.
#[test]
fn f15_secret_hard_linked_or_moved() {
    let w = World::new();
    std::fs::write(w.cwd.join(".env"), "API_TOKEN=secret\n").unwrap();
    std::fs::write(w.cwd.join(".env.example"), "API_TOKEN=\n").unwrap();
    std::fs::write(w.cwd.join("a.txt"), "a\n").unwrap();
    std::fs::create_dir(w.cwd.join("dir")).unwrap();
    const SECRET: &str = "a secret file (its name is in [paths] secret_names)";
    let mut cases = vec![];
    for c in [
        "ln .env x && cat x",
        "ln -f .env x",
        "ln -T .env x",
        "ln .e* x",
        "cp -l .env x && cat x",
        "cp --link .env x",
        "mv .env y && cat y",
        "mv .e* y && cat y",
        "mv .[e]nv y",
        "mv -T .env dir",
        "mv .env a.txt",
    ] {
        cases.push((c, "deny", "deny", SECRET));
    }
    for c in [
        "ln a.txt b.txt",
        "ln -f a.txt b.txt",
        "cp -l a.txt b.txt",
        "mv a.txt b.txt",
        "mv .env.example x",
        "ln -s build/out latest",
        "mv ./*.txt dir",
        // The file keeps a secret name where it lands.
        "mv .env dir",
        "mv .env dir/",
        "mv dir/../.env .",
        "mv a.txt .env newdir",
        "mv -t dir .env",
        "ln -t dir .env",
        "ln --target-directory=dir .env",
        "mv .env .env.bak",
        "ln .env dir/.env.local",
        "mv .e* dir",
    ] {
        cases.push((c, "allow", "allow", ""));
    }
    expect(&w, &cases);
}
