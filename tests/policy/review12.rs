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
