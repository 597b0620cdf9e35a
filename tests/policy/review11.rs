//! Review of round eleven: holes found in the merged code and fixed as
//! classes. Decided in both modes, with the exact decision and positive
//! controls beside each refusal.
use crate::common::policy as common;
use common::*;

/// F1: a `..` after a symbolic link goes up from where the link leads, as
/// the kernel reads it, not from the link's own directory. The policy
/// cleaned `a/s/../.envrc` to `a/.envrc` (with `a/s -> ../src` the kernel
/// writes the root's `.envrc`).
#[test]
fn a_parent_after_a_link_is_read_from_the_links_target() {
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join("a")).unwrap();
    std::fs::create_dir_all(w.cwd.join("b")).unwrap();
    std::fs::create_dir_all(w.cwd.join("d")).unwrap();
    std::os::unix::fs::symlink("../src", w.cwd.join("a/s")).unwrap();
    std::os::unix::fs::symlink(".", w.cwd.join("d/self")).unwrap();
    // The premise, on the real filesystem.
    assert_eq!(
        w.cwd.join("a/s/..").canonicalize().unwrap(),
        w.cwd.canonicalize().unwrap()
    );
    const PROTECTED: &str = "protected";
    expect(
        &w,
        &[
            ("echo x > a/s/../.envrc", "deny", "deny", PROTECTED),
            ("echo x >> ./a/s/../.envrc", "deny", "deny", PROTECTED),
            (
                "echo '{}' > a/s/../.claude/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            ("echo x > d/self/../.envrc", "deny", "deny", PROTECTED),
            // `cd` is logical (`a/s`), the kernel's `..` is physical.
            ("cd a/s && echo x > ../.envrc", "deny", "deny", PROTECTED),
            ("env -C a/s/.. touch .envrc", "deny", "deny", PROTECTED),
            (
                "git -C a/s/.. mv Cargo.toml .envrc",
                "deny",
                "deny",
                PROTECTED,
            ),
            ("tee a/s/../.envrc < Cargo.toml", "deny", "deny", PROTECTED),
            // A link the same string makes.
            (
                "ln -s ../src a/n && tee a/n/../.envrc < Cargo.toml",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "ln -s ../src a/n && echo x > a/n/../.claude/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "ln -s ../src a/n && echo x > a/n/../notes.txt",
                "allow",
                "allow",
                "",
            ),
            // Positive controls: the same spellings writing ordinary files,
            // and a `..` after a plain directory.
            ("echo x > a/s/../notes.txt", "allow", "allow", ""),
            ("echo x > b/../notes.txt", "allow", "allow", ""),
            ("cd a/s/.. && touch x", "allow", "allow", ""),
            ("env -C a/s/.. touch notes.txt", "allow", "allow", ""),
            ("echo x > a/s/main2.rs", "allow", "allow", ""),
        ],
    );
}

/// F2: a wrapper given no command under xargs runs the program its input
/// names (`echo "sh -c ..." | xargs timeout 5`).
#[test]
fn a_wrapper_without_a_command_under_xargs_is_unknown() {
    let w = World::new();
    const FROM_INPUT: &str = "gets the program it runs from input at run time";
    expect(
        &w,
        &[
            (
                "echo \"sh -c 'touch x'\" | xargs timeout 5",
                "ask",
                "ask",
                FROM_INPUT,
            ),
            ("ls | xargs nice", "ask", "ask", FROM_INPUT),
            ("ls | xargs nohup", "ask", "ask", FROM_INPUT),
            ("ls | xargs env", "ask", "ask", FROM_INPUT),
            ("ls | xargs xargs", "ask", "ask", FROM_INPUT),
            ("ls | xargs stdbuf -oL", "ask", "ask", FROM_INPUT),
            // Controls: the wrapper given its command, and xargs alone
            // (which runs `echo`).
            ("ls | xargs", "allow", "allow", ""),
            ("ls | xargs -n1 echo", "allow", "allow", ""),
            ("ls src | xargs timeout 5 echo", "allow", "allow", ""),
        ],
    );
}

/// F12: whether `ln -s T DEST` makes DEST or DEST/basename(T) was read
/// from the filesystem before the command runs: an earlier command of the
/// string that removes DEST, or `-n` over an existing link, makes DEST
/// itself the link, and later words follow it there.
#[test]
fn a_link_made_over_a_removed_or_linked_destination_is_followed() {
    let w = World::new();
    for d in ["d", "x", ".git/hooks"] {
        std::fs::create_dir_all(w.cwd.join(d)).unwrap();
    }
    std::os::unix::fs::symlink("x", w.cwd.join("l")).unwrap();
    expect(
        &w,
        &[
            (
                "rmdir d && ln -s .git/hooks d && printf x > d/pre-commit",
                "deny",
                "deny",
                "",
            ),
            (
                "rm -r d && ln -s .claude d && echo x > d/settings.json",
                "deny",
                "deny",
                "",
            ),
            (
                "mv d d2 && ln -s .claude d && echo x > d/settings.json",
                "deny",
                "deny",
                "",
            ),
            (
                "ln -sfn .claude l && echo x > l/settings.json",
                "deny",
                "deny",
                "protected",
            ),
            (
                "ln -snf .git/hooks l && echo x > l/pre-commit",
                "deny",
                "deny",
                "protected",
            ),
            (
                "ln --no-dereference -sf .claude l && echo x > l/s.json",
                "deny",
                "deny",
                "protected",
            ),
            // Positive controls: the same spellings with project targets.
            ("ln -sfn src l && echo x > l/a.txt", "allow", "allow", ""),
            (
                "rmdir d && ln -s src d && echo x > d/a.txt",
                "allow",
                "allow",
                "",
            ),
            ("ln -s src d && echo x > d/y", "allow", "allow", ""),
            ("ln -s ../Cargo.toml x", "allow", "allow", ""),
        ],
    );
}
