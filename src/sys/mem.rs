//! `memcpy` and `memmove` for the static musl build.
//!
//! musl's x86_64 `memcpy` copies with `rep movsq` and single `movsb`
//! instructions at every size; on the VM this was measured on (Intel
//! Xeon, 2 vCPUs) a call of up to 200 bytes costs 30-40 ns with an
//! aligned destination and 40-70 ns with an unaligned one, where glibc's
//! takes 3 ns, and a run makes ~4,000 calls, most of a few dozen bytes
//! (path components, names, strings): ~0.2 ms of a 3.1 ms run. These
//! copy up to 256 bytes with unaligned 8- and 16-byte loads and stores
//! (every load of a size class before its first store, so that they are
//! also `memmove` for overlapping buffers), and larger blocks with
//! `rep movsb`. Defining both symbols here keeps musl's `memcpy.o` and
//! `memmove.o` (which calls `__memcpy_fwd` in `memcpy.o`) out of the link.
//!
//! Written in assembly: a Rust loop would be recognised by LLVM as a copy
//! and compiled to a call to `memcpy` itself.

#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".text",
    ".globl safe_exec_memcpy",
    ".type safe_exec_memcpy,@function",
    ".p2align 4",
    "safe_exec_memcpy:",
    "    mov rax, rdi",
    "    cmp rdx, 16",
    "    jbe 20f",
    "    cmp rdx, 32",
    "    ja 30f",
    // 17..=32: two 16-byte halves, overlapping in the middle.
    "    movdqu xmm0, [rsi]",
    "    movdqu xmm1, [rsi + rdx - 16]",
    "    movdqu [rdi], xmm0",
    "    movdqu [rdi + rdx - 16], xmm1",
    "    ret",
    "30:",
    "    cmp rdx, 256",
    "    ja 40f",
    // 33..=256: the last 16 bytes loaded first, then 16-byte blocks
    // forward (safe when the destination is below the source).
    "    movdqu xmm1, [rsi + rdx - 16]",
    "    lea rcx, [rdx - 16]",
    "    xor r8d, r8d",
    "31:",
    "    movdqu xmm0, [rsi + r8]",
    "    movdqu [rdi + r8], xmm0",
    "    add r8, 16",
    "    cmp r8, rcx",
    "    jb 31b",
    "    movdqu [rdi + rdx - 16], xmm1",
    "    ret",
    "40:",
    "    mov rcx, rdx",
    "    rep movsb",
    "    ret",
    "20:",
    "    cmp rdx, 8",
    "    jb 21f",
    "    mov rcx, [rsi]",
    "    mov r8, [rsi + rdx - 8]",
    "    mov [rdi], rcx",
    "    mov [rdi + rdx - 8], r8",
    "    ret",
    "21:",
    "    cmp rdx, 4",
    "    jb 22f",
    "    mov ecx, [rsi]",
    "    mov r8d, [rsi + rdx - 4]",
    "    mov [rdi], ecx",
    "    mov [rdi + rdx - 4], r8d",
    "    ret",
    "22:",
    "    test rdx, rdx",
    "    jz 23f",
    "    movzx ecx, byte ptr [rsi]",
    "    movzx r8d, byte ptr [rsi + rdx - 1]",
    "    cmp rdx, 2",
    "    jb 24f",
    "    movzx r9d, word ptr [rsi]",
    "    mov [rdi], r9w",
    "    mov [rdi + rdx - 1], r8b",
    "    ret",
    "24:",
    "    mov [rdi], cl",
    "23:",
    "    ret",
    ".size safe_exec_memcpy, . - safe_exec_memcpy",
    "",
    ".globl safe_exec_memmove",
    ".type safe_exec_memmove,@function",
    ".p2align 4",
    "safe_exec_memmove:",
    // dst - src >= n (unsigned; dst below src wraps around): a forward
    // copy never reads what it has written.
    "    mov rcx, rdi",
    "    sub rcx, rsi",
    "    cmp rcx, rdx",
    "    jae safe_exec_memcpy",
    // Up to 32 bytes: every load comes before the first store.
    "    cmp rdx, 32",
    "    jbe safe_exec_memcpy",
    // The destination overlaps the source from above: the first 16 bytes
    // loaded first, then 16-byte blocks backward.
    "    mov rax, rdi",
    "    movdqu xmm1, [rsi]",
    "    mov r8, rdx",
    "50:",
    "    sub r8, 16",
    "    movdqu xmm0, [rsi + r8]",
    "    movdqu [rdi + r8], xmm0",
    "    cmp r8, 16",
    "    ja 50b",
    "    movdqu [rdi], xmm1",
    "    ret",
    ".size safe_exec_memmove, . - safe_exec_memmove",
);

// The static musl build: these are the program's `memcpy` and `memmove`.
#[cfg(all(target_arch = "x86_64", target_env = "musl"))]
core::arch::global_asm!(
    ".globl memcpy",
    ".type memcpy,@function",
    ".set memcpy, safe_exec_memcpy",
    ".globl memmove",
    ".type memmove,@function",
    ".set memmove, safe_exec_memmove",
);

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use std::hint::black_box;

    unsafe extern "C" {
        fn safe_exec_memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8;
        fn safe_exec_memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8;
    }

    /// A pattern no shifted copy of itself equals.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251 + 3) as u8).collect()
    }

    #[test]
    fn memcpy_copies_exactly_n_bytes_at_every_size_and_alignment() {
        let src = pattern(700);
        for n in 0..600 {
            for so in 0..17 {
                for dof in 0..17 {
                    let mut dst = vec![0xA5u8; 700];
                    // SAFETY: both ranges lie inside their own buffers
                    // (17 + 600 < 700) and do not overlap.
                    let r = unsafe {
                        safe_exec_memcpy(dst.as_mut_ptr().add(dof), src.as_ptr().add(so), n)
                    };
                    assert_eq!(r, dst.as_mut_ptr().wrapping_add(dof), "return value");
                    for (i, &b) in dst.iter().enumerate() {
                        let want = if (dof..dof + n).contains(&i) {
                            black_box(src[so + i - dof])
                        } else {
                            0xA5
                        };
                        assert_eq!(b, want, "n {n} src+{so} dst+{dof} byte {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn memmove_handles_overlap_in_both_directions() {
        let orig = pattern(1200);
        for n in (0..70).chain((70..600).step_by(7)) {
            for s in [0usize, 1, 7, 16, 33, 300] {
                for d in [
                    0usize, 1, 2, 8, 15, 16, 17, 31, 32, 40, 299, 300, 301, 310, 333, 600,
                ] {
                    let mut v = orig.clone();
                    // SAFETY: s + n and d + n stay below 1,200; memmove
                    // allows the ranges to overlap.
                    let r =
                        unsafe { safe_exec_memmove(v.as_mut_ptr().add(d), v.as_ptr().add(s), n) };
                    assert_eq!(r, v.as_mut_ptr().wrapping_add(d), "return value");
                    for (i, &b) in v.iter().enumerate() {
                        let want = if (d..d + n).contains(&i) {
                            black_box(orig[s + i - d])
                        } else {
                            orig[i]
                        };
                        assert_eq!(b, want, "n {n} src {s} dst {d} byte {i}");
                    }
                }
            }
        }
    }
}
