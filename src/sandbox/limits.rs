//! Resource limits (`[sandbox.limits]`), computed in the parent and applied
//! with `setrlimit` in the child.
//!
//! Each limit sets both the soft and the hard value, so the command cannot
//! raise it again; a value above the current hard limit is clamped to it
//! (an unprivileged process cannot raise a hard limit anyway). Core dumps are
//! off unless the profile sets `core`: a core file of a process that read a
//! secret would be a copy of the secret on disk.

use super::Limits;
use nix::sys::resource::{Resource, getrlimit, rlim_t, setrlimit};

/// One prepared `setrlimit` call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rlimit {
    resource: Resource,
    value: rlim_t,
}

/// Computes the calls for `limits`, clamped to the current hard limits.
pub(crate) fn prepare(limits: &Limits) -> Vec<Rlimit> {
    let wanted: [(Resource, Option<u64>); 6] = [
        (Resource::RLIMIT_CORE, Some(limits.core.unwrap_or(0))),
        (Resource::RLIMIT_FSIZE, limits.file_size),
        (Resource::RLIMIT_NOFILE, limits.open_files),
        (Resource::RLIMIT_NPROC, limits.processes),
        (Resource::RLIMIT_CPU, limits.cpu_seconds),
        (Resource::RLIMIT_AS, limits.address_space),
    ];
    let mut out = Vec::new();
    for (resource, value) in wanted {
        let Some(value) = value else { continue };
        let hard = getrlimit(resource).map_or(libc::RLIM_INFINITY, |(_, hard)| hard);
        let value = rlim_t::try_from(value).unwrap_or(libc::RLIM_INFINITY);
        out.push(Rlimit {
            resource,
            value: value.min(hard),
        });
    }
    out
}

/// Applies the prepared limits. Runs between fork and exec: no allocation.
/// On failure returns the errno.
pub(crate) fn apply(limits: &[Rlimit]) -> Result<(), i32> {
    for l in limits {
        setrlimit(l.resource, l.value, l.value).map_err(|e| e as i32)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_is_zero_by_default_and_unset_limits_are_left_alone() {
        let p = prepare(&Limits::default());
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].resource, Resource::RLIMIT_CORE);
        assert_eq!(p[0].value, 0);
        let p = prepare(&Limits {
            file_size: Some(1 << 20),
            ..Limits::default()
        });
        assert_eq!(p.len(), 2);
    }
}
