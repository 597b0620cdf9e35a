//! Resource limits (`[sandbox.limits]`), computed in the parent and applied
//! with `setrlimit` in the child.
//!
//! Each limit sets both the soft and the hard value, so the command cannot
//! raise it again; a value above the current hard limit is clamped to it
//! (an unprivileged process cannot raise a hard limit anyway). Core dumps are
//! off unless the profile sets `core`: a core file of a process that read a
//! secret would be a copy of the secret on disk.

use super::Limits;

/// Resource type as `setrlimit` takes it (its C type differs between libcs).
#[cfg(target_env = "gnu")]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
type Resource = libc::c_int;

/// One prepared `setrlimit` call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rlimit {
    resource: Resource,
    value: libc::rlim_t,
}

/// Computes the calls for `limits`, clamped to the current hard limits.
pub(crate) fn prepare(limits: &Limits) -> Vec<Rlimit> {
    let wanted: [(Resource, Option<u64>); 6] = [
        (libc::RLIMIT_CORE, Some(limits.core.unwrap_or(0))),
        (libc::RLIMIT_FSIZE, limits.file_size),
        (libc::RLIMIT_NOFILE, limits.open_files),
        (libc::RLIMIT_NPROC, limits.processes),
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_AS, limits.address_space),
    ];
    let mut out = Vec::new();
    for (resource, value) in wanted {
        let Some(value) = value else { continue };
        let mut current = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own.
        let hard = if unsafe { libc::getrlimit(resource, &mut current) } == 0 {
            current.rlim_max
        } else {
            libc::RLIM_INFINITY
        };
        let value = libc::rlim_t::try_from(value).unwrap_or(libc::RLIM_INFINITY);
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
        let r = libc::rlimit {
            rlim_cur: l.value,
            rlim_max: l.value,
        };
        // SAFETY: setrlimit reads a struct we own.
        if unsafe { libc::setrlimit(l.resource, &r) } != 0 {
            return Err(super::errno());
        }
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
        assert_eq!(p[0].resource, libc::RLIMIT_CORE);
        assert_eq!(p[0].value, 0);
        let p = prepare(&Limits {
            file_size: Some(1 << 20),
            ..Limits::default()
        });
        assert_eq!(p.len(), 2);
    }
}
