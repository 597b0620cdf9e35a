//! Red team 10's "paths chosen by data" and "tools rated safe that run
//! project code" classes (F2, F6, F8, F15-F19), decided in both modes with
//! the exact decision. Each refused or asked spelling has its ordinary
//! form beside it, still allowed.
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
    (
        v["decision"].as_str().unwrap_or("?").to_string(),
        reasons(&v),
    )
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

const RESPONSE: &str = "response file";
const NAMES: &str = "input names";
const NAMED: &str = "named in content";
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
