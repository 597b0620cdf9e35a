//! The floor of safe-exec's kind of tool, for `benches/side_by_side.sh`: the
//! least a Landlock + seccomp exec wrapper can do. It builds a Landlock
//! ruleset (read-only `/`, read-write the current directory and `$TMPDIR`
//! or `/tmp`), installs a 9-syscall seccomp deny-list and execs the command
//! in place. No parsing, no policy, no supervisor, no audit.
//!
//! ```text
//! floor PROGRAM [ARG...]
//! ```
//!
//! Built as shipped: `cargo build --profile dist --example floor` (the bench
//! script adds the static-pie flags the package uses).

// A benchmark fixture: a panic is the report.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, path_beneath_rules,
};
use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};

fn main() {
    let mut args = std::env::args_os().skip(1);
    let cmd = args.next().expect("usage: floor PROGRAM [ARG...]");

    // Landlock: read (and execute) everywhere, write only in cwd and tmp.
    let abi = ABI::V5;
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let cwd = std::env::current_dir().unwrap();
    let tmp = std::env::var_os("TMPDIR").unwrap_or_else(|| "/tmp".into());
    Ruleset::default()
        .handle_access(all)
        .unwrap()
        .create()
        .unwrap()
        .add_rules(path_beneath_rules(["/"], read))
        .unwrap()
        .add_rules(path_beneath_rules([cwd.as_os_str(), tmp.as_os_str()], all))
        .unwrap()
        .restrict_self()
        .unwrap();

    // seccomp: nine syscalls a sandboxed command has no business making.
    let denied = [
        libc::SYS_ptrace,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_bpf,
        libc::SYS_kexec_load,
        libc::SYS_init_module,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_keyctl,
    ];
    let rules: BTreeMap<i64, Vec<SeccompRule>> = denied.iter().map(|&s| (s, vec![])).collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        TargetArch::x86_64,
    )
    .unwrap();
    let program: BpfProgram = filter.try_into().unwrap();
    seccompiler::apply_filter(&program).unwrap();

    let err = Command::new(cmd).args(args).exec();
    eprintln!("floor: exec: {err}");
    std::process::exit(127);
}
