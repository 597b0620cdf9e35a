//! Issue 13: the red team's classes in the unconfined decision (nothing
//! confines the command: the hook without `--rewrite`, `check
//! --unconfined`). Every class has several spellings; each must be refused
//! by `check --unconfined` (deny or ask), by the hook's exit-code protocol
//! (exit 2) and by its JSON protocol (`deny` or `ask`). Beside each class,
//! ordinary commands of the same shape stay allowed (the positive control:
//! exit 0 and no opinion from the hook).
use crate::common::policy as common;
use common::*;

use serde_json::Value;

/// `check --unconfined --json -c CMD`: the decision.
fn unconfined(w: &World, cmd: &str) -> (String, String) {
    let (code, v) = w.check_json_args(&["--unconfined", "-c", cmd]);
    assert_eq!(
        v["confined"], false,
        "{cmd}: check --unconfined must say so"
    );
    assert!(matches!(code, 0 | 2 | 3), "check exit {code} for {cmd:?}");
    (
        v["decision"].as_str().unwrap_or("?").to_string(),
        reasons(&v),
    )
}

/// Runs the hook (`hook` or `hook --json`) on a Bash tool call.
fn hook(w: &World, json_mode: bool, cmd: &str) -> (i32, String, String) {
    let args: &[&str] = if json_mode { &["--json"] } else { &[] };
    let out = w.hook_bash(args, &[], cmd);
    (code(&out), stdout(&out), stderr(&out))
}

/// Every spelling is refused in `check --unconfined` and both hook protocols.
fn refused(class: &str, cases: &[&str]) {
    let w = World::new();
    setup(&w);
    let mut fails = Vec::new();
    for c in cases {
        let (d, reasons) = unconfined(&w, c);
        if d == "allow" {
            fails.push(format!("check --unconfined allowed {c:?}"));
        }
        let (code, _, err) = hook(&w, false, c);
        if code != 2 {
            fails.push(format!(
                "hook (exit codes) gave {code} for {c:?}: {err} [{reasons}]"
            ));
        }
        let (code, out, _) = hook(&w, true, c);
        let v: Value = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
        let decision = v["hookSpecificOutput"]["permissionDecision"].as_str();
        if code != 0 || !matches!(decision, Some("deny" | "ask")) {
            fails.push(format!(
                "hook --json gave exit {code}, {decision:?} for {c:?}"
            ));
        }
    }
    assert!(fails.is_empty(), "class {class}:\n  {}", fails.join("\n  "));
}

/// Positive control: every spelling is allowed everywhere (the hook has no
/// opinion: exit 0, empty stdout).
fn allowed(class: &str, cases: &[&str]) {
    let w = World::new();
    setup(&w);
    let mut fails = Vec::new();
    for c in cases {
        let (d, reasons) = unconfined(&w, c);
        if d != "allow" {
            fails.push(format!("check --unconfined: {c:?} -> {d} ({reasons})"));
        }
        let (code, out, err) = hook(&w, false, c);
        if code != 0 {
            fails.push(format!("hook: {c:?} -> exit {code} {err}"));
        }
        // No opinion (the contract's newest word) or an explicit allow.
        let (code, out2, _) = hook(&w, true, c);
        let v: Value = serde_json::from_str(out2.trim()).unwrap_or(Value::Null);
        let decision = v["hookSpecificOutput"]["permissionDecision"].as_str();
        let no_opinion_or_allow = out2.trim().is_empty() || decision == Some("allow");
        if code != 0 || !no_opinion_or_allow || !out.trim().is_empty() {
            fails.push(format!("hook --json: {c:?} -> exit {code} {out2}"));
        }
    }
    assert!(
        fails.is_empty(),
        "ordinary {class}:\n  {}",
        fails.join("\n  ")
    );
}

/// Positive control for programs that run code of their own (builds, test
/// runners, interpreters): the newest contract (second Clarifications) makes
/// the unconfined decision strict, so "anything not fully seen through asks"
/// there, while the confined decision (`check` without `--unconfined`) allows
/// them. The control is that the class's refusal does not misfire: confined
/// allows, unconfined asks (never denies) and both hook protocols ask.
fn confined_allowed_unconfined_asks(class: &str, cases: &[&str]) {
    let w = World::new();
    setup(&w);
    let mut fails = Vec::new();
    for c in cases {
        let (code, v) = w.check_json_args(&["-c", c]);
        if code != 0 || v["decision"] != "allow" || v["confined"] != true {
            fails.push(format!("check (confined): {c:?} -> exit {code} {v}"));
        }
        let (d, reasons) = unconfined(&w, c);
        if d != "ask" || !reasons.contains("runs code") {
            fails.push(format!("check --unconfined: {c:?} -> {d} ({reasons})"));
        }
        let (code, out, _) = hook(&w, true, c);
        let v: Value = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
        if code != 0 || v["hookSpecificOutput"]["permissionDecision"] != "ask" {
            fails.push(format!("hook --json: {c:?} -> exit {code} {out}"));
        }
    }
    assert!(
        fails.is_empty(),
        "ordinary {class} (code-running):\n  {}",
        fails.join("\n  ")
    );
}

/// Files the cases refer to.
fn setup(w: &World) {
    std::fs::create_dir_all(w.cwd.join("build")).unwrap();
    std::fs::create_dir_all(w.cwd.join(".git")).unwrap();
    std::fs::write(w.cwd.join("notes.txt"), "x\n").unwrap();
}

#[test]
fn bash_tables() {
    refused(
        "bash tables",
        &[
            "BASH_CMDS[cat]=/bin/rm; cat -f X",
            "BASH_ALIASES[ls]='rm -rf ~'; ls",
            "BASH_CMDS=([ls]=/bin/rm); ls x",
            "declare -A BASH_CMDS; BASH_CMDS[ls]=/bin/rm; ls",
            "read BASH_CMDS < notes.txt; ls",
            "printf -v BASH_ALIASES x; ls",
            "export SHELLOPTS; ls",
            "for BASH_CMDS in x; do ls; done",
            "declare -n r=BASH_ALIASES; r=([ls]=rm); ls",
        ],
    );
}

#[test]
fn hidden_evaluation() {
    refused(
        "hidden evaluation",
        &[
            "a='b[$(id)]'; echo $((a))",
            "echo $((x + 1))",
            "echo $[x]",
            "[[ a -eq 0 ]]",
            "[[ $n -gt 1 ]]",
            "[[ -v 'a[x]' ]]",
            "echo ${arr[a]}",
            "echo ${x:a}",
            "echo ${x:0:n}",
            "x='$(id)'; echo \"${x@P}\"",
            "echo ${!ref}",
            "let a",
            "declare -i n=x",
            "unset 'a[x]'",
            "a[i]=1",
        ],
    );
    allowed(
        "arithmetic",
        &[
            "echo $((1 + 2))",
            "n=3; echo $((n * 2))",
            "for i in 1 2 3; do echo $((i + 1)); done",
            "[[ 1 -eq 1 ]]",
            "echo ${x:1:2}",
            "echo ${#x}",
            "echo ${x:-default}",
        ],
    );
}

#[test]
fn glob_then_parent_directory() {
    refused(
        "glob then ..",
        &[
            "tee -a ./.gi?/../../home/.bashrc",
            "cat ./*/../../home/.bashrc",
            "rm -f ./b*/../x",
            "cat ./@(build)/../../x",
            "cp notes.txt ./[b]uild/../../x",
        ],
    );
    allowed("globs", &["ls src/*", "cat src/*.rs", "wc -l ./*.txt"]);
}

#[test]
fn posix_classes_and_other_bracket_forms() {
    refused(
        "POSIX classes",
        &[
            "cat ~/.ss[[:alpha:]]/id_rsa",
            "cat ~/.ss[[:lower:]]/id_rsa",
            "cat ~/.ss[[=h=]]/id_rsa",
            "cat ~/.ss[[.h.]]/id_rsa",
            "cat ~/.ss[]h]/id_rsa",
            "cat ~/.@(ssh)/id_rsa",
            "cat ~/.!(x)/id_rsa",
            "cat ~/**/id_rsa",
            "shopt -s nocaseglob; cat ~/.SS?/id_rsa",
        ],
    );
}

#[test]
fn cwd_through_control_flow() {
    refused(
        "cwd tracking",
        &[
            "cd build; false && cd /; rm -rf *",
            "true || cd ~; rm -rf .ssh",
            "if false; then cd build; fi; rm -rf ./*",
            "if true; then cd build; else cd ~; fi; rm -rf .ssh",
            "case x in y) cd ~;; esac; rm -rf .ssh",
            "for d in a b; do cd build; rm -rf x; done",
            "while false; do cd ~; done; rm -rf .ssh",
            "pushd +1; rm -rf x",
            "pushd -0 && rm -rf x",
            "cd no-such-dir; rm -rf ./*",
        ],
    );
    allowed(
        "cd",
        &[
            "cd build && ls",
            "cd build; ls",
            "mkdir -p out && cd out && ls",
            "if true; then cd build; else cd build; fi; ls",
            "(cd build && ls); ls",
        ],
    );
}

#[test]
fn code_loading_variables() {
    refused(
        "programs through the environment",
        &[
            "GCONV_PATH=. ls",
            "GLIBC_TUNABLES=glibc.malloc.check=3 ls",
            "env GCONV_PATH=. iconv -f x -t y notes.txt",
            "MANOPT=-P man ls",
            "LESS=+!id less notes.txt",
            "npm_config_script_shell=./x npm test",
            "NPM_CONFIG_PREFIX=~ npm install -g x",
            "PIP_INDEX_URL=http://example.invalid pip install x",
            "BASH_ENV=./x.sh bash -c ls",
            "PYTHONPATH=. pip list",
            "export GCONV_PATH=.; ls",
            "PAGER='sh -c id' git log",
        ],
    );
    refused(
        "config from the project",
        &[
            "HOME=. git status",
            "XDG_CONFIG_HOME=. git log",
            "GIT_INDEX_FILE=x git status",
            "GIT_DIR=x git status",
            "env HOME=. git status",
        ],
    );
    allowed(
        "assignments",
        &[
            "PAGER=cat git log",
            "GIT_PAGER=cat git log -1",
            "RUST_LOG=debug cargo --version",
            "LANG=C ls",
            "PYTHONUNBUFFERED=1 python3 --version",
            "CI=true ls",
        ],
    );
}

#[test]
fn links_made_in_the_string() {
    refused(
        "links",
        &[
            "ln --sym ~/.ssh k && cat k/id_rsa",
            "ln -s -S .bak ~/.ssh k && cat k/id_rsa",
            "ln --symbolic ~ h && rm -rf h/.bashrc",
            "ln -st build ~/.ssh && cat build/.ssh/id_rsa",
            "cp -rs ~/.ssh k",
            "cp -l ~/.bashrc k",
            "cp -al ~/.ssh k",
        ],
    );
    allowed(
        "links",
        &["ln -s ../src s", "cp -r src dst", "cp notes.txt copy.txt"],
    );
}

#[test]
fn git_c_and_other_base_moving_options() {
    refused(
        "git -C",
        &[
            "git -C ~ rm -rf .ssh",
            "git -C .. checkout -- .",
            "git -C ~ restore .",
            "git -C ~ commit -a -m x",
            "git -C ~ stash",
            "make -C ~ install",
            "cargo -C ~ build",
        ],
    );
    allowed("-C", &["git -C src status", "git -C build log -1"]);
    confined_allowed_unconfined_asks("-C", &["make -C build", "cargo build"]);
}

#[test]
fn cumulative_tar_directories() {
    refused(
        "tar -C",
        &[
            "tar -C ~ -xf a.tar -C .",
            "tar --directory=/ -xf a.tar --directory build",
            "tar -xf a.tar -f b.tar -C build",
        ],
    );
}

#[test]
fn env_split_string() {
    refused(
        "env -S",
        &[
            "env -S 'rm -f build\\_/etc/passwd'",
            "env -S 'rm -rf build\\_/'",
            "env -S 'cat ${HOME}/.ssh/id_rsa'",
            "env -S \"cat\\_$HOME/.ssh/id_rsa\"",
        ],
    );
    allowed("env -S", &["env -S 'ls -la'"]);
}

#[test]
fn sed_and_awk_programs() {
    refused(
        "sed / awk",
        &[
            "sed 's/x/id;true/e' notes.txt",
            "sed '1{e id\n}' notes.txt",
            "sed -n '/x/{s//y/;e\n}' notes.txt",
            "sed \"w $HOME/.bashrc\" notes.txt",
            "sed \"r $HOME/.ssh/id_rsa\" notes.txt",
            "sed -e \"R $HOME/.ssh/id_rsa\" notes.txt",
            "sed 's/a/b/w /etc/x' notes.txt",
            "awk \"{getline l < \\\"$HOME/.ssh/id_rsa\\\"; print l}\" notes.txt",
            "awk 'BEGIN{ARGV[1]=\"/etc/shadow\"} {print}' notes.txt",
            "awk '@load \"filefuncs\"; {print}' notes.txt",
            "awk -l filefuncs '{print}' notes.txt",
            "awk '{print > \"/etc/x\"}' notes.txt",
            "awk '{system(\"id\")}' notes.txt",
        ],
    );
    allowed(
        "sed / awk",
        &[
            // sed and awk do not expand `~`: this writes `./~/.bashrc`.
            "sed 'w ~/.bashrc' notes.txt",
            "sed 's/a/b/g' notes.txt",
            "sed -n 1,5p notes.txt",
            "sed 's/e/w/' notes.txt",
            "awk '{print $1}' notes.txt",
            "awk -F: 'NR > 1 {print $2}' notes.txt",
        ],
    );
}

#[test]
fn git_config_allowlist() {
    refused(
        "git config",
        &[
            "git -c protocol.ext.allow=always fetch 'ext::sh -c id'",
            "git -c remote.origin.uploadpack=./x fetch",
            "git -c pager.log='sh -c id' log",
            "git -c man.x.path=./x help x",
            "git -c gpg.ssh.defaultKeyCommand=./x commit -S -m x",
            "git -c core.worktree=.. status",
            "git -c init.templateDir=./t init",
            "git config set core.pager 'sh -c id'",
            "git config core.sshCommand ./x",
            "GIT_ALLOW_PROTOCOL=ext git fetch",
            // Even a harmless key: `.git/config` is a protected file (the
            // contract's second Clarifications), so writing it is refused;
            // `git -c KEY=VAL` below is the way that leaves nothing behind.
            "git config user.name me",
            "git config --local core.editor ./x",
        ],
    );
    allowed(
        "git config",
        &[
            "git -c color.ui=never log -1",
            "git -c user.name=me log -1",
            "git config --get core.pager",
            "git -c pager.log=false log -1",
        ],
    );
}

#[test]
fn history_and_worktree_destruction() {
    refused(
        "history and worktree",
        &[
            "git checkout -- ':/'",
            "git restore -SW .",
            "git rm -rf :/",
            "git reflog delete HEAD@{1}",
            "git reflog expire --expire=now --all",
            "git -c remote.origin.push=+refs/heads/*:refs/heads/* push",
            "find -delete",
            "git add ':(top)'",
        ],
    );
    allowed(
        "git",
        &["git status", "git restore -S src", "find -name '*.o'"],
    );
}

#[test]
fn secret_reads_through_options() {
    refused(
        "reads through options",
        &[
            "date -f ~/.ssh/id_rsa",
            "grep -d recurse x ~",
            "egrep -r key ~",
            "jq --rawfile a ~/.ssh/id_rsa -n 1",
            "git diff --no-index ~/.ssh/id_rsa notes.txt",
            "zip -r x.zip ~/.ssh",
            "echo ~/.ssh/id_rsa | xargs head",
        ],
    );
    allowed(
        "reads",
        &["date +%s", "grep -rn foo src", "jq . Cargo.toml"],
    );
}

#[test]
fn writes_through_options() {
    refused(
        "writes through options",
        &[
            "strace -o ~/.bashrc ls",
            "script ~/.bashrc",
            "script -c ls ~/.bashrc",
            "gcc -o ~/.bashrc x.c",
            "go build -o=/etc/x .",
            "pip install --prefix ~ x",
            "pip install --log ~/.bashrc x",
            "GIT_TRACE=/etc/x git status",
        ],
    );
    allowed(
        "writes",
        &["strace -o trace.txt ls", "sort -o out.txt in.txt"],
    );
    // (`gcc -o build/app x.c` reads what `#include` names: unconfined it
    // asks, red team 10 F19, tests/policy/redteam10_data.rs.)
}

#[test]
fn programs_through_options() {
    refused(
        "programs through options",
        &[
            "gcc -wrapper ./x x.c",
            "rustc -C linker=./x x.rs",
            "go build -toolexec=./x .",
            "go build -toolexec ./x .",
            "npm install --location=global x",
            "pnpm dlx cowsay",
            "xargs --process-slot-var=BASH_ENV echo",
            "bash --rcfile ./x -ic ls",
        ],
    );
    // (`rustc -C opt-level=3 x.rs` reads what `include_str!` names:
    // unconfined it asks, red team 10 F19.)
    allowed("programs", &["rustc --version"]);
    confined_allowed_unconfined_asks("programs", &["go test ./...", "npm test"]);
}

#[test]
fn signals_to_other_processes() {
    refused(
        "signals",
        &[
            "kill -9 1",
            "kill -9 -- -1",
            "kill -s KILL 1234",
            "pkill -f .",
            "killall node",
            "kill 0",
        ],
    );
    allowed("signals", &["kill %1", "sleep 1 & kill $!", "kill -l"]);
}

#[test]
fn written_then_run() {
    refused(
        "written then run",
        &[
            "tee x.sh < notes.txt; bash x.sh",
            "cp notes.txt x.sh && bash x.sh",
            "echo all: > Makefile; make",
            "sed -i s/a/b/ Makefile && make",
            "echo x > conftest.py; python3 -m pytest",
            "echo 'fn main(){}' > build.rs && cargo build",
            "mv notes.txt x.sh; ./x.sh",
        ],
    );
    allowed("build", &["echo hi > out.txt; cat out.txt"]);
    confined_allowed_unconfined_asks("build", &["cargo build", "mkdir -p out && make -C build"]);
}

#[test]
fn option_parsing_as_the_program_reads_it() {
    refused(
        "option parsing",
        &[
            "perl -0pi -e 's/a/b/' ~/.bashrc",
            "perl -0777pi -e 's/a/b/' ~/.bashrc",
            "python3 -Im http.server",
            "python3 -Bm http.server 8000",
        ],
    );
    allowed("options", &["sed -n 1p notes.txt", "grep -c x notes.txt"]);
    confined_allowed_unconfined_asks(
        "options",
        &["perl -0777 -ne 'print' notes.txt", "python3 -m pytest"],
    );
}

/// Red team 5 (F4, F5, F7, F8) through both hook protocols: the writes
/// and signals that passed the unconfined decision untyped.
#[test]
fn red_team_5_untyped_writes_and_run_time_pids() {
    refused(
        "untyped writes and run-time pids",
        &[
            "git worktree add ~/.config/safe-exec HEAD",
            "git worktree add --detach ~/.config/autostart",
            "git worktree move wt ~/y",
            "git worktree remove ~/x",
            "git bundle create ~/x.bundle HEAD",
            "git maintenance register",
            "git maintenance start",
            "git remote add x https://example.com/r.git",
            "git branch --set-upstream-to=origin/main",
            "git -C /usr status",
            "cargo vendor ~/v",
            "mktemp ~/.config/safe-exec/x.XXXX",
            "mktemp -d ~/x.XXXX",
            "flock ~/lock true",
            "X=-1; kill -9 $X",
            "kill -9 $(echo -1)",
            "kill -9 $PPID",
            "kill -- -$PPID",
            "kill $(pgrep -f claude)",
            "kill `pgrep node`",
            "command kill -9 $PPID",
            "/bin/kill -s KILL $PPID",
            "mv .git gitold",
        ],
    );
    allowed(
        "writes inside the roots and own processes",
        &[
            "git worktree add wt HEAD",
            "git worktree list",
            "git bundle create repo.bundle --all",
            "mktemp",
            "mktemp -d",
            "flock build.lock true",
            "kill %1",
            "sleep 9 & kill $!",
            "sleep 9 & PID=$!; kill $PID",
            "mv notes.txt old.txt",
        ],
    );
}
