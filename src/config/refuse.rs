//! Which directories are never a writable root, whatever `{cwd}`, `{tmp}`,
//! `{git_root}` or a profile path expand to: the places that hold programs
//! or configuration that run later for the user or for others, outside any
//! sandbox. The agent chooses the working directory (a `cd` carries over to
//! the next call), so `{cwd}` must not be able to become `~`, `/etc/cron.d`
//! or `/usr/local/bin`.
//!
//! The paths compared are real paths (placeholders are resolved through
//! the filesystem before they get here), so `/bin` on a merged-`/usr`
//! system is met as `/usr/bin`, and on image-based systems (Fedora
//! Silverblue and its kin) `/home`, `/opt`, `/srv`, `/mnt` are met as
//! `/var/home`, `/var/opt`, `/var/srv`, `/var/mnt`.

use std::path::{Component, Path};

use crate::sys::ancestry::{self, GitAncestry};

/// Trees that are never writable, even when the home directory lies in
/// them (service accounts have `HOME=/usr/sbin`, `/bin`, `/dev`): programs,
/// libraries, system configuration, the boot loader and the kernel's own
/// file systems.
const SYSTEM_TREES: &[&str] = &[
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/efi",
    "/proc", "/sys", "/dev", "/run", "/snap", "/nix", "/gnu",
];

/// Trees of system state (`/var/lib`, `/var/spool`, `/var/log`, cron and
/// mail spools, package databases) and root's home: never writable, except
/// strictly inside the home directory (a CI service account such as
/// Jenkins has `HOME=/var/lib/jenkins` and its workspaces below it) and the
/// project places listed in [`VAR_PLACES`].
const STATE_TREES: &[&str] = &["/var", "/root"];

/// Places inside [`STATE_TREES`] and [`SYSTEM_TREES`] that hold projects:
/// the path itself is refused (it is shared by everything in it), a
/// directory strictly inside it is a project place. `/var/tmp` is a
/// temporary directory like `/tmp` and is a place itself.
const VAR_PLACES: &[&str] = &["/var/www", "/var/srv", "/var/opt", "/var/mnt", "/run/media"];

/// Directories that hold home directories: the directory itself, each home
/// in it and the hidden directories of each home are refused.
const HOMES: &[&str] = &["/home", "/var/home"];

/// Directories shared by many projects or installed programs: the
/// directory itself is refused, a directory inside it (`/opt/app`,
/// `/srv/site`, `/mnt/c/src`) is a project place.
const SHARED: &[&str] = &["/opt", "/srv", "/mnt", "/media"];

/// Why `p` (a real, absolute path) cannot be a writable root; `None` when
/// it can. `home` is the (real) home directory. `movable` is for roots that
/// follow the working directory (`{cwd}`, `{git_root}`): the agent chooses
/// them with a `cd`, so the hidden directories of a home (`~/.config`,
/// `~/.local/bin`, `~/.ssh`) and `~/bin`, which hold what runs later, are
/// refused for them too; a profile may still name such a directory itself
/// (`{home}/.cache/go-build`).
pub fn refusal(p: &Path, home: &Path, movable: bool) -> Option<String> {
    let root = Path::new("/");
    if p == root {
        return Some("it is `/`, the whole machine".into());
    }
    let home_real = home != root;
    if home_real {
        if p == home {
            return Some("it is the home directory, whose dotfiles run at the next login".into());
        }
        if home.starts_with(p) {
            return Some(format!("it contains the home directory {}", home.display()));
        }
    }
    if let Some(t) = SYSTEM_TREES.iter().find(|t| p.starts_with(t)) {
        if let Some(place) = VAR_PLACES.iter().find(|v| p.starts_with(v)) {
            return (p == Path::new(place)).then(|| shared(place));
        }
        return Some(system(t));
    }
    if home_real && p.starts_with(home) {
        return movable.then(|| hidden_in(p, home)).flatten();
    }
    if let Some(h) = HOMES.iter().find(|h| p.starts_with(h)) {
        let h = Path::new(h);
        if p == h {
            return Some(format!(
                "it is {}, the directory of home directories",
                h.display()
            ));
        }
        let Ok(rest) = p.strip_prefix(h) else {
            return None;
        };
        let mut parts = rest.components();
        let (Some(Component::Normal(user)), next) = (parts.next(), parts.next()) else {
            return None;
        };
        let user_home = h.join(user);
        return match next {
            None => Some(format!(
                "it is {}, a home directory, whose dotfiles run at its owner's next login",
                user_home.display()
            )),
            Some(_) => movable.then(|| hidden_in(p, &user_home)).flatten(),
        };
    }
    if p.starts_with("/var/tmp") {
        return None;
    }
    if let Some(place) = VAR_PLACES.iter().find(|v| p.starts_with(v)) {
        return (p == Path::new(place)).then(|| shared(place));
    }
    if let Some(t) = STATE_TREES.iter().find(|t| p.starts_with(t)) {
        return Some(if *t == "/root" {
            "it is inside /root, the home directory of root (not the caller's home)".into()
        } else {
            "it is inside /var, which holds system state run by others (`/var/lib`, `/var/spool` with cron jobs, `/var/log`); only `/var/tmp` and project places (`/var/www/NAME`) can be".into()
        });
    }
    SHARED.iter().find(|s| p == Path::new(s)).map(|s| shared(s))
}

/// The refusal of a shared directory itself.
fn shared(place: &str) -> String {
    format!(
        "it is {place} itself, shared by the projects and programs installed in it; a directory inside it can be"
    )
}

/// The refusal of a system tree.
fn system(tree: &str) -> String {
    format!(
        "it is inside {tree}, a system directory of programs and configuration that run outside any sandbox"
    )
}

/// Why `p`, inside `home`, is refused for a root the agent moves: it is in
/// a hidden directory of the home (`~/.config`, `~/.local`) or in `~/bin`.
fn hidden_in(p: &Path, home: &Path) -> Option<String> {
    let first = p.strip_prefix(home).ok()?.components().next()?;
    let Component::Normal(name) = first else {
        return None;
    };
    let name = name.to_string_lossy();
    (name.starts_with('.') || name == "bin").then(|| {
        format!(
            "it is inside {}, which holds configuration or programs that run later outside any sandbox",
            home.join(&*name).display()
        )
    })
}

/// Why `p`, a root that follows the working directory (`{cwd}`,
/// `{git_root}`), is refused because it lies inside a protected directory
/// of one of its ancestors (red team 10 F5): a git directory (a `.git`
/// component, or a directory holding `HEAD`, `objects/` and `refs/`), a
/// tree entry of `[paths] protected` (`.claude/`, `.vscode/`,
/// `.git/hooks/`) relative to any ancestor, or a venv's `site-packages`.
/// As a root of its own, the protected list (relative to each root) would
/// no longer match what is inside it: `cd .git` then `echo ... >> config`.
/// `walked`: a walk already made from `p` or a directory below it (the
/// situation's, from the cwd), whose levels answer for the ancestors it
/// reached instead of probing them again.
pub fn inside_protected(
    p: &Path,
    protected: &[String],
    walked: Option<&GitAncestry>,
) -> Option<String> {
    // Past a working tree's top (a directory holding a `.git` that is not
    // itself a git directory) the walk no longer looks for git
    // directories: a worktree of a bare clone (`git clone --bare URL p &&
    // git -C p worktree add main`) lies inside the bare directory and is a
    // root of its own (review 10 R5). Its git files (`p/config`,
    // `p/hooks/`) are outside it. A `.git` component is refused wherever.
    let mut worktree = false;
    let known = walked.and_then(|w| w.from(p)).unwrap_or_default();
    for (i, a) in p.ancestors().enumerate() {
        let name = a.file_name().map(|n| n.to_string_lossy());
        let git_dir = if worktree {
            false
        } else {
            let l = known.get(i).copied().unwrap_or_else(|| ancestry::probe(a));
            worktree = l.dot_git && !l.git_dir;
            l.git_dir
        };
        if name.as_deref() == Some(".git") || (!worktree && git_dir) {
            return Some(format!(
                "it is inside the git directory {}, whose config and hooks run outside any sandbox; work from the repository's top directory",
                a.display()
            ));
        }
        if matches!(name.as_deref(), Some("site-packages" | "dist-packages")) {
            return Some(format!(
                "it is inside {}, a Python environment's packages (its `.pth` files run at every interpreter start)",
                a.display()
            ));
        }
    }
    let comps: Vec<String> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    for entry in protected.iter().filter(|e| e.ends_with('/')) {
        let pat: Vec<&str> = entry
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if pat.is_empty() || pat[0] == "**" {
            continue;
        }
        // `p` (or a directory above it) is the entry of an ancestor.
        for start in 0..comps.len() {
            if entry_at(&pat, &comps[start..]) {
                let top: std::path::PathBuf = std::iter::once("/".to_string())
                    .chain(comps[..start].iter().cloned())
                    .collect();
                return Some(format!(
                    "it is inside `{}` of {} (`{entry}` in [paths] protected), which runs later outside any sandbox; work from {}",
                    pat.join("/"),
                    top.display(),
                    top.display()
                ));
            }
        }
    }
    None
}

/// Whether `d` is a git directory as git recognises one: `HEAD`,
/// `objects/` and `refs/`.
pub fn is_git_dir(d: &Path) -> bool {
    ancestry::is_git_dir(d)
}

/// Whether some leading part of `rel` (one component at least) is the tree
/// entry `pat` (its first component not `**`). Each start of a path's
/// components is asked (a cwd 40 levels deep: 40 starts per entry of
/// `[paths] protected`), so the first component is compared first, and an
/// entry without `**` (all of the built-in ones but one) is compared at its
/// own length only, instead of at every length.
fn entry_at(pat: &[&str], rel: &[String]) -> bool {
    let (Some(first), Some(name)) = (pat.first(), rel.first()) else {
        return false;
    };
    if !wild(first.as_bytes(), name.as_bytes()) {
        return false;
    }
    let stars = pat.iter().filter(|c| **c == "**").count();
    if stars == 0 {
        return rel.len() >= pat.len() && components_match(pat, &rel[..pat.len()]);
    }
    // A `**` may stand for no component: the shortest match is shorter
    // than the pattern.
    (pat.len() - stars..=rel.len()).any(|k| components_match(pat, &rel[..k]))
}

/// Path components against pattern components: `**` any number, `*` and
/// `?` within one (a bracket is taken literally).
fn components_match(pat: &[&str], path: &[String]) -> bool {
    match pat.first() {
        None => path.is_empty(),
        Some(&"**") => (0..=path.len()).any(|i| components_match(&pat[1..], &path[i..])),
        Some(p) => {
            !path.is_empty()
                && wild(p.as_bytes(), path[0].as_bytes())
                && components_match(&pat[1..], &path[1..])
        }
    }
}

fn wild(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| wild(&p[1..], &s[i..])),
        Some(b'?') => !s.is_empty() && wild(&p[1..], &s[1..]),
        Some(c) => s.first() == Some(c) && wild(&p[1..], &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(p: &str, home: &str, movable: bool) -> bool {
        refusal(Path::new(p), Path::new(home), movable).is_some()
    }

    #[test]
    fn system_trees_home_and_its_ancestors_are_refused() {
        let home = "/home/u";
        for p in [
            "/",
            "/home",
            "/home/u",
            "/home/v",
            "/etc",
            "/etc/cron.d",
            "/etc/ssh",
            "/etc/profile.d",
            "/usr",
            "/usr/local",
            "/usr/local/bin",
            "/usr/bin",
            "/usr/lib/systemd/system",
            "/bin",
            "/sbin",
            "/lib",
            "/lib64/x",
            "/boot/grub",
            "/proc/self",
            "/sys/kernel",
            "/dev/shm",
            "/run/user/1000",
            "/var",
            "/var/lib",
            "/var/lib/dpkg",
            "/var/spool/cron",
            "/var/log",
            "/var/cache/x",
            "/var/www",
            "/var/home",
            "/var/home/u",
            "/root",
            "/root/proj",
            "/opt",
            "/srv",
            "/mnt",
            "/media",
            "/nix/store/x",
            "/run/media",
        ] {
            for movable in [true, false] {
                assert!(refused(p, home, movable), "{p} movable={movable}");
            }
        }
        for p in [
            "/home/u/.config",
            "/home/u/.local/bin",
            "/home/u/bin",
            "/home/v/.ssh",
        ] {
            assert!(refused(p, home, true), "{p}");
            assert!(!refused(p, home, false), "{p} named by a profile");
        }
    }

    #[test]
    fn project_places_stay_writable() {
        for (p, home) in [
            ("/home/u/proj", "/home/u"),
            ("/home/u/src/x", "/home/u"),
            ("/home/u/binaries", "/home/u"),
            ("/home/v/proj", "/home/u"),
            ("/tmp", "/home/u"),
            ("/tmp/x", "/home/u"),
            ("/var/tmp", "/home/u"),
            ("/var/tmp/x", "/home/u"),
            ("/srv/site", "/home/u"),
            ("/opt/app", "/home/u"),
            ("/mnt/c/src", "/home/u"),
            ("/media/u/disk/p", "/home/u"),
            ("/run/media/u/disk", "/home/u"),
            ("/var/www/site", "/home/u"),
            ("/var/opt/app", "/var/home/u"),
            ("/var/home/u/proj", "/var/home/u"),
            ("/workspace", "/home/u"),
            ("/work/x", "/home/u"),
            ("/root/proj", "/root"),
            ("/var/lib/jenkins/workspace/job", "/var/lib/jenkins"),
            ("/testbed", "/"),
        ] {
            assert_eq!(
                refusal(Path::new(p), Path::new(home), true),
                None,
                "{p} with HOME={home}"
            );
        }
    }

    /// [`entry_at`] answers as trying every leading part of the path does,
    /// over generated entries (with `*`, `?` and `**`) and paths.
    #[test]
    fn entry_at_is_every_leading_part_tried() {
        let names = ["a", "b", ".git", "hooks", "x.y", "**", "*", "a*", "?"];
        let words = ["a", "b", ".git", "hooks", "x.y", "ab", "c"];
        let mut next = crate::sys::testing::xorshift_below(7);
        let mut hits = 0;
        for _ in 0..20_000 {
            let pat: Vec<&str> = (0..1 + next(4)).map(|_| names[next(names.len())]).collect();
            if pat[0] == "**" {
                continue;
            }
            let rel: Vec<String> = (0..next(7))
                .map(|_| words[next(words.len())].to_string())
                .collect();
            let want = (1..=rel.len()).any(|k| components_match(&pat, &rel[..k]));
            hits += usize::from(want);
            assert_eq!(entry_at(&pat, &rel), want, "{pat:?} {rel:?}");
        }
        assert!(hits > 500, "{hits}");
        // A `**` that stands for nothing (it was missed before).
        let rel = ["a", "b"].map(String::from);
        assert!(entry_at(&["a", "**", "b"], &rel));
    }

    #[test]
    fn a_home_in_a_system_tree_does_not_open_it() {
        // Service accounts: daemon's home is /usr/sbin, bin's /bin.
        assert!(refused("/usr/sbin/x", "/usr/sbin", true));
        assert!(refused("/bin/x", "/bin", false));
        // A home of `/` (no HOME, no passwd entry) opens nothing.
        assert!(refused("/var/lib/x", "/", true));
        assert!(refused("/root/x", "/", true));
        assert!(refused("/etc/x", "/", true));
    }

    #[test]
    fn roots_inside_protected_directories_are_refused() {
        let d = tempfile::tempdir().expect("tmp");
        let proj = d.path().join("proj");
        let bare = d.path().join("bare");
        for p in [
            proj.join(".git/hooks"),
            proj.join(".claude/x"),
            proj.join(".venv/lib/python3.12/site-packages"),
            proj.join("src/deep"),
            bare.join("objects"),
            bare.join("refs"),
        ] {
            std::fs::create_dir_all(p).expect("mkdir");
        }
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").expect("w");
        // Review 10 R5: a worktree of the bare clone (its `.git` a gitfile),
        // a plain directory of the bare clone, and a `.git` planted in the
        // bare directory itself (still a git directory).
        std::fs::create_dir_all(bare.join("main/src")).expect("mkdir");
        std::fs::write(bare.join("main/.git"), "gitdir: ../worktrees/main\n").expect("w");
        std::fs::create_dir_all(bare.join("info")).expect("mkdir");
        let planted = d.path().join("planted");
        for p in [planted.join("objects"), planted.join("refs")] {
            std::fs::create_dir_all(p).expect("mkdir");
        }
        std::fs::write(planted.join("HEAD"), "ref: refs/heads/main\n").expect("w");
        std::fs::write(planted.join(".git"), "gitdir: x\n").expect("w");
        let protected: Vec<String> = [".git/hooks/", ".claude/", ".vscode/", ".envrc"]
            .map(String::from)
            .to_vec();
        for p in [
            proj.join(".git"),
            proj.join(".git/hooks"),
            proj.join(".claude"),
            proj.join(".claude/x"),
            proj.join(".venv/lib/python3.12/site-packages"),
            bare.clone(),
            bare.join("refs"),
            bare.join("info"),
            planted.clone(),
        ] {
            assert!(inside_protected(&p, &protected, None).is_some(), "{p:?}");
        }
        // Positive controls: the project, its ordinary directories, a
        // name that only looks like an entry.
        for p in [
            proj.clone(),
            proj.join("src/deep"),
            proj.join(".venv"),
            d.path().join("claude"),
            bare.join("main"),
            bare.join("main/src"),
        ] {
            assert!(inside_protected(&p, &protected, None).is_none(), "{p:?}");
        }
        // The situation's walk (from a cwd at or below the path) answers as
        // probing does, for every path above, refused or not.
        let mut all = Vec::new();
        for start in [
            proj.join(".git/hooks"),
            proj.join(".claude/x"),
            proj.join(".venv/lib/python3.12/site-packages"),
            proj.join("src/deep"),
            bare.join("refs"),
            bare.join("info"),
            bare.join("main/src"),
            planted.join("objects"),
        ] {
            let walked = GitAncestry::walk(&start);
            for p in start.ancestors() {
                let want = inside_protected(p, &protected, None);
                assert_eq!(
                    inside_protected(p, &protected, Some(&walked)),
                    want,
                    "{p:?}"
                );
                all.push(want.is_some());
            }
        }
        assert!(all.iter().any(|r| *r) && all.iter().any(|r| !*r));
    }
}
