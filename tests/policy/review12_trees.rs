//! Review of round twelve: copies, moves and links (F18, F19, F3, F11).
//! A copy or move lands where cp/mv really put it, a tree the same string
//! fills is judged with what it was filled with, and a link the string
//! copies, moves or may have made over a removed path is not folded
//! lexically. Decided in both modes, with a positive control beside each
//! refusal.
use crate::common::policy as common;
use common::*;

const PROTECTED: &str = "protected";

fn world() -> World {
    let w = World::new();
    for d in ["a", "b", "d", "cx", "x", "gx/wrapper", "mx"] {
        std::fs::create_dir_all(w.cwd.join(d)).unwrap();
    }
    std::fs::write(
        w.cwd.join("cx/config.toml"),
        "[build]\nrustc-wrapper = \"w.sh\"\n",
    )
    .unwrap();
    std::fs::write(w.cwd.join("x/settings.json"), "{\"mcpServers\":{}}\n").unwrap();
    std::fs::write(w.cwd.join("gx/wrapper/gradle-wrapper.properties"), "x=1\n").unwrap();
    std::fs::write(w.cwd.join("mx/mise.toml"), "[env]\n").unwrap();
    std::fs::write(w.cwd.join("a.txt"), "a\n").unwrap();
    w
}

/// F18: `cp -r SRC DEST/` and `mv SRC DEST/` with one source and a DEST
/// that does not exist make DEST itself (the slash only asks for a
/// directory): the tree is judged at DEST as well as at `DEST/SRC`.
#[test]
fn a_trailing_slash_on_a_missing_destination_is_both_readings() {
    let w = world();
    expect(
        &w,
        &[
            ("cp -r cx .cargo/", "deny", "deny", PROTECTED),
            ("cp -a cx .cargo/", "deny", "deny", PROTECTED),
            ("cp -r cx/ .cargo/", "deny", "deny", PROTECTED),
            ("cp -r cx .cargo//", "deny", "deny", PROTECTED),
            ("cp -r cx ./.cargo/", "deny", "deny", PROTECTED),
            ("mv cx .cargo/", "deny", "deny", PROTECTED),
            ("mv cx/ .cargo/", "deny", "deny", PROTECTED),
            ("mv x .gemini/", "deny", "deny", PROTECTED),
            ("git mv cx .cargo/", "deny", "deny", PROTECTED),
            ("mv gx gradle/", "deny", "deny", PROTECTED),
            ("cp -r mx .config/", "deny", "deny", PROTECTED),
            // The spellings denied before stay denied.
            ("mv cx .cargo", "deny", "deny", PROTECTED),
            ("cp -rT cx .cargo/", "deny", "deny", PROTECTED),
            // Positive controls: the same copies to ordinary names, and a
            // trailing slash on a directory that exists (`DEST/SRC` only).
            ("cp -r cx newdir/", "allow", "allow", ""),
            ("mv cx newdir/", "allow", "allow", ""),
            ("cp -r cx b/", "allow", "allow", ""),
            ("mv x b/", "allow", "allow", ""),
            ("git mv cx other/", "allow", "allow", ""),
        ],
    );
}

/// F19: a tree the same string fills is judged with what the string
/// wrote into it, and with what an earlier copy or move put there.
#[test]
fn a_tree_the_string_fills_is_judged_with_its_new_files() {
    let w = world();
    expect(
        &w,
        &[
            (
                "mkdir y && echo PWN > y/.envrc && cp -r y/. .",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "mkdir -p y && cp a.txt y/.envrc && cp -r y/. .",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "mkdir -p y && printf PWN | tee y/.envrc && cp -rT y .",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "mkdir -p y/.claude && echo '{}' > y/.claude/settings.json && cp -r y/. .",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "mkdir -p y/.claude && echo '{}' > y/.claude/settings.json && mv y/.claude .",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "mkdir -p y/.claude && echo '{}' > y/.claude/settings.json && cp -r y/.c* .",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "mkdir y && echo PWN > y/.envrc && rsync -a y/ .",
                "deny",
                "deny",
                PROTECTED,
            ),
            // A tree moved or copied earlier in the string.
            (
                "mkdir -p y && mv x y && mv y/x .gemini",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "mkdir g2 && mv gx g2 && mv g2/gx gradle",
                "deny",
                "deny",
                PROTECTED,
            ),
            ("cp -r cx z && cp -r z .cargo", "deny", "deny", PROTECTED),
            (
                "mkdir -p y && cp a.txt y/.envrc && mv y/.envrc .",
                "deny",
                "deny",
                PROTECTED,
            ),
            // Positive controls: ordinary files in the same shapes.
            (
                "mkdir y && echo x > y/notes.txt && cp -r y/. .",
                "allow",
                "allow",
                "",
            ),
            (
                "mkdir -p y && cp a.txt y/b.txt && cp -r y/. out",
                "allow",
                "allow",
                "",
            ),
            (
                "mkdir -p y && mv x y && mv y/x settings",
                "allow",
                "allow",
                "",
            ),
            ("cp -r cx z && cp -r z cfg2", "allow", "allow", ""),
            (
                "mkdir y && echo x > y/.keep && rsync -a y/ out/",
                "allow",
                "allow",
                "",
            ),
        ],
    );
}

/// F3: a link the string copies or moves (or one that exists and is
/// copied) may be a link at its new path: unconfined, a `..` after a
/// component an earlier command of the string wrote, and that is no
/// directory now, is not folded but asks. Confined, the run is contained
/// (the supervisor restores the protected file).
#[test]
fn a_parent_after_a_copied_or_moved_link_is_not_folded() {
    let w = world();
    std::fs::create_dir_all(w.cwd.join("c")).unwrap();
    std::os::unix::fs::symlink("../src", w.cwd.join("a/e")).unwrap();
    let ask = "ask";
    expect(
        &w,
        &[
            (
                "ln -s ../src a/s && mv a/s b/s && echo PWNED > b/s/../.envrc",
                "allow",
                ask,
                "earlier command",
            ),
            (
                "ln -s ../src a/s && cp -a a/s b/ && echo PWN > b/s/../.claude/settings.json",
                "allow",
                ask,
                "",
            ),
            (
                "ln -s ../src a/s && cp -P a/s c/s && echo x > c/s/../.envrc",
                "allow",
                ask,
                "",
            ),
            (
                "ln -s ../src a/s && ln a/s b/s && echo x > b/s/../.envrc",
                "allow",
                ask,
                "",
            ),
            (
                "ln -s ../src a/s && rsync -a a/s b/ && echo x > b/s/../.envrc",
                "allow",
                ask,
                "",
            ),
            (
                "ln -s ../src a/s && mv -t b a/s && tee b/s/../.vscode/tasks.json < a.txt",
                "allow",
                ask,
                "",
            ),
            (
                "ln -s ../src a/s && mv a/s b/s && cd b/s && touch ../.envrc",
                "allow",
                ask,
                "",
            ),
            (
                "ln -s ../src a/s && mv a/s b/s && git -C b/s/.. mv a.txt .envrc",
                "allow",
                ask,
                "",
            ),
            ("cp -a a/e b/ && echo x > b/e/../.envrc", "allow", ask, ""),
            ("cp -r a b/ && echo x > b/a/e/../.envrc", "allow", ask, ""),
            (
                "git restore a/t && echo x > a/t/../.envrc",
                "allow",
                ask,
                "",
            ),
            // Positive controls: no `..` after the copy, or a `..` after a
            // directory that exists.
            (
                "ln -s ../src a/s && mv a/s b/s && echo x > b/notes.txt",
                "allow",
                "allow",
                "",
            ),
            (
                "cp -a a/e b/ && echo x > b/../notes.txt",
                "allow",
                "allow",
                "",
            ),
            ("cp a.txt b/ && cat b/../a.txt", "allow", "allow", ""),
            (
                "mkdir -p build && cd build && echo x > ../notes.txt",
                "allow",
                "allow",
                "",
            ),
        ],
    );
}

/// F11: a command that may remove `DEST` without naming it literally (a
/// glob, `find -delete`, `git stash -u`, `rsync --remove-source-files`)
/// lets `ln -s T DEST` make DEST itself the link: both readings are kept.
#[test]
fn a_destination_removed_by_a_pattern_may_become_the_link() {
    let w = world();
    expect(
        &w,
        &[
            (
                "rmdir d* && ln -s .claude d && echo PWN1 > d/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "find d -delete && ln -s .claude d && echo PWN2 > d/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "find . -maxdepth 1 -name d -delete && ln -s .git/hooks d && echo x > d/pre-commit",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "git stash -u && ln -s .claude d && echo x > d/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "rsync -a --remove-source-files d a && ln -s .claude d && echo x > d/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "python3 -c 'import os; os.rmdir(\"d\")' && ln -s .claude d && echo x > d/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            // Positive controls: the link made inside the directory, and
            // ordinary targets.
            (
                "ln -s .claude d && echo x > d/settings.json",
                "allow",
                "allow",
                "",
            ),
            (
                "rmdir d* && ln -s src d && echo x > d/notes.txt",
                "allow",
                "allow",
                "",
            ),
            (
                "find d -delete && ln -s src d && echo x > d/notes.txt",
                "allow",
                "allow",
                "",
            ),
        ],
    );
}
