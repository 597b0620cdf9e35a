//! Symbolic links are read the way the kernel reads them (red team 10,
//! F22): a relative target is resolved from the directory the link is in,
//! not from the working directory, so `ln -s ../../home/.ssh d/s` from the
//! project is a link to `~/.ssh` (and the policy saw `<parent>/home/.ssh`,
//! outside everything, and allowed it). Decided in both modes, with the
//! exact decision and positive controls beside each refusal.
use crate::common::policy as common;
use common::*;

#[test]
fn the_kernel_reads_a_relative_target_from_the_links_directory() {
    // The premise, checked on the real filesystem: the world is
    // `<base>/home` beside `<base>/project`.
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join("d/e")).unwrap();
    std::os::unix::fs::symlink("../../home/.ssh", w.cwd.join("d/s")).unwrap();
    std::os::unix::fs::symlink("../../../home", w.cwd.join("d/e/h")).unwrap();
    assert_eq!(
        w.cwd.join("d/s").canonicalize().unwrap(),
        w.home.join(".ssh")
    );
    assert_eq!(w.cwd.join("d/e/h").canonicalize().unwrap(), w.home);
}

#[test]
fn a_link_to_a_secret_through_the_links_directory_is_refused() {
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join("d/e")).unwrap();
    std::fs::create_dir_all(w.cwd.join("dir")).unwrap();
    const SECRET: &str = "a secret path";
    const READS: &str = "inside the protected path";
    expect(
        &w,
        &[
            // F22's one string: the link, then a read through it.
            (
                "mkdir -p d && ln -s ../../home/.ssh d/s && cat d/s/id_rsa",
                "deny",
                "deny",
                READS,
            ),
            ("ln -s ../../home/.ssh d/s", "deny", "deny", SECRET),
            ("ln -sf ../../../home/.ssh d/e/k", "deny", "deny", SECRET),
            ("ln --symbolic ../../home/.ssh d/s", "deny", "deny", SECRET),
            (
                "ln -sn ../../home/.ssh/id_rsa d/key",
                "deny",
                "deny",
                SECRET,
            ),
            // Into an existing directory: the link is `dir/.ssh`.
            ("ln -s ../../home/.ssh dir", "deny", "deny", SECRET),
            (
                "ln -s ../../home/.ssh ../../home/.ssh dir",
                "deny",
                "deny",
                SECRET,
            ),
            // Positive controls: links inside the project, read from their
            // own directory.
            ("ln -s build/out latest", "allow", "allow", ""),
            ("mkdir -p d && ln -s ../src d/s", "allow", "allow", ""),
            ("ln -s ../src/main.rs d/main.rs", "allow", "allow", ""),
            ("ln -s ../Cargo.toml dir", "allow", "allow", ""),
            ("ln -sf ../../src d/e/src", "allow", "allow", ""),
        ],
    );
}

#[test]
fn a_link_to_home_through_the_links_directory_asks_unconfined() {
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join("d/e")).unwrap();
    const REACH: &str = "later commands writing through it would reach there";
    expect(
        &w,
        &[
            // From `d/`, `../../home` is HOME; from the cwd it is a path
            // outside everything that does not exist.
            ("ln -s ../../home d/h", "ask", "ask", REACH),
            ("ln -s ../../../home d/e/h", "ask", "ask", REACH),
            ("ln -s ~ d/h2", "ask", "ask", REACH),
            // `ln -r` makes the target relative itself: the operand is read
            // from the cwd (`../home` is HOME from the project).
            ("ln -sr ../home d/h", "ask", "ask", REACH),
            // Positive controls.
            ("ln -sr src d/s", "allow", "allow", ""),
            ("ln -s ../src d/s", "allow", "allow", ""),
        ],
    );
}

#[test]
fn links_made_into_a_target_directory_are_read_like_the_others() {
    // `ln -s -t DIR T...` and `cp -s/-l -t DIR T...`: every operand is a
    // target, the links land in DIR. They were refused as malformed
    // (`-s` chose the two-operand list), whatever they linked.
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join("d/e")).unwrap();
    const SECRET: &str = "a secret path";
    const PROTECTED: &str = "inside the protected path";
    expect(
        &w,
        &[
            ("ln -s -t d ../../home/.ssh", "deny", "deny", SECRET),
            ("ln -st d ../../home/.ssh", "deny", "deny", SECRET),
            (
                "ln -s --target-directory=d ../../home/.ssh",
                "deny",
                "deny",
                SECRET,
            ),
            (
                "ln --symbolic -t d/e ../src ../../../home/.ssh",
                "deny",
                "deny",
                SECRET,
            ),
            ("ln -s -t d ~/.ssh/id_rsa", "deny", "deny", PROTECTED),
            ("cp -s -t d ~/.ssh/id_rsa", "deny", "deny", PROTECTED),
            ("cp -l -t d ~/.ssh/id_rsa", "deny", "deny", ""),
            ("ln -t d ~/.ssh/id_rsa", "deny", "deny", ""),
            // Positive controls: the same spellings linking project files.
            ("ln -s -t d ../src", "allow", "allow", ""),
            ("ln -st d ../src ../Cargo.toml", "allow", "allow", ""),
            (
                "ln -s --target-directory=d/e ../../src",
                "allow",
                "allow",
                "",
            ),
            ("cp -s -t d \"$PWD/src/main.rs\"", "allow", "allow", ""),
            ("cp -l -t d Cargo.toml", "allow", "allow", ""),
            ("ln -t d Cargo.toml", "allow", "allow", ""),
        ],
    );
}
