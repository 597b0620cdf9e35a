//! `memcpy`, `memmove` and `memcmp` for the static musl build.
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
//! musl's `memcmp` (and `bcmp`, which calls it) compares byte by byte: a
//! run compares ~4,000 pairs, many of them whole paths of 50-150 bytes
//! equal up to their last components (the Landlock plan's "is this inside
//! that", the protected files' patterns), and `perf` put `memcmp` at 1-2%
//! of a run's CPU time (more in a deep HOME). This one compares 16 bytes
//! at a time with SSE2 (`pcmpeqb`), the last block overlapping the one
//! before it, and short inputs byte by byte.
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

#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".text",
    ".globl safe_exec_memcmp",
    ".type safe_exec_memcmp,@function",
    ".p2align 4",
    "safe_exec_memcmp:",
    "    cmp rdx, 16",
    "    jb 60f",
    // 16 and more: 16-byte blocks from the start while a whole block is
    // left after the current one, then the last 16 bytes (overlapping
    // bytes already found equal). Every load lies inside both buffers.
    "    xor ecx, ecx",
    "    lea r8, [rdx - 16]",
    "61:",
    "    movdqu xmm0, [rdi + rcx]",
    "    movdqu xmm1, [rsi + rcx]",
    "    pcmpeqb xmm0, xmm1",
    "    pmovmskb eax, xmm0",
    "    xor eax, 0xffff",
    "    jnz 63f",
    "    add rcx, 16",
    "    cmp rcx, r8",
    "    jb 61b",
    "    mov rcx, r8",
    "    movdqu xmm0, [rdi + rcx]",
    "    movdqu xmm1, [rsi + rcx]",
    "    pcmpeqb xmm0, xmm1",
    "    pmovmskb eax, xmm0",
    "    xor eax, 0xffff",
    "    jnz 63f",
    "    xor eax, eax",
    "    ret",
    // The first differing byte of the block: the lowest clear bit of the
    // equality mask (set in `eax` by the `xor`).
    "63:",
    "    bsf eax, eax",
    "    add rcx, rax",
    "    movzx eax, byte ptr [rdi + rcx]",
    "    movzx edx, byte ptr [rsi + rcx]",
    "    sub eax, edx",
    "    ret",
    // Below 16: byte by byte.
    "60:",
    "    xor eax, eax",
    "    xor ecx, ecx",
    "    test rdx, rdx",
    "    jz 66f",
    "64:",
    "    movzx eax, byte ptr [rdi + rcx]",
    "    movzx r8d, byte ptr [rsi + rcx]",
    "    sub eax, r8d",
    "    jnz 66f",
    "    inc rcx",
    "    cmp rcx, rdx",
    "    jb 64b",
    "66:",
    "    ret",
    ".size safe_exec_memcmp, . - safe_exec_memcmp",
);

// The static musl build: these are the program's `memcpy`, `memmove`,
// `memcmp` and `bcmp` (musl's `bcmp` only calls `memcmp`; LLVM calls
// `bcmp` where only equality matters).
#[cfg(all(target_arch = "x86_64", target_env = "musl"))]
core::arch::global_asm!(
    ".globl memcpy",
    ".type memcpy,@function",
    ".set memcpy, safe_exec_memcpy",
    ".globl memmove",
    ".type memmove,@function",
    ".set memmove, safe_exec_memmove",
    ".globl memcmp",
    ".type memcmp,@function",
    ".set memcmp, safe_exec_memcmp",
    ".globl bcmp",
    ".type bcmp,@function",
    ".set bcmp, safe_exec_memcmp",
);

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use std::hint::black_box;

    unsafe extern "C" {
        fn safe_exec_memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8;
        fn safe_exec_memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8;
        fn safe_exec_memcmp(a: *const u8, b: *const u8, n: usize) -> i32;
    }

    #[test]
    fn memcmp_orders_like_the_bytes_at_every_size_alignment_and_difference() {
        let base = pattern(400);
        for n in 0..300 {
            for (ao, bo) in [(0usize, 0usize), (1, 0), (0, 3), (5, 11), (15, 16), (16, 1)] {
                let mut a = vec![0u8; 400];
                let mut b = vec![0u8; 400];
                a[ao..ao + n].copy_from_slice(&base[..n]);
                b[bo..bo + n].copy_from_slice(&base[..n]);
                // Bytes past `n` differ: they must not be looked at.
                a[ao + n] = 1;
                b[bo + n] = 2;
                // SAFETY: `ao + n` and `bo + n` stay inside the 400 bytes.
                let eq = unsafe { safe_exec_memcmp(a.as_ptr().add(ao), b.as_ptr().add(bo), n) };
                assert_eq!(eq, 0, "equal, n {n} a+{ao} b+{bo}");
                // One differing byte at each position, both ways round
                // (0x00 against 0xff: the comparison is unsigned).
                for at in (0..n)
                    .step_by(if n > 40 { 7 } else { 1 })
                    .chain(n.checked_sub(1))
                {
                    for (x, y) in [(0x00u8, 0xffu8), (0xff, 0x00), (b'a', b'b')] {
                        let (mut a2, mut b2) = (a.clone(), b.clone());
                        a2[ao + at] = x;
                        b2[bo + at] = y;
                        // A later difference the other way must not count.
                        if at + 1 < n {
                            a2[ao + n - 1] = y;
                            b2[bo + n - 1] = x;
                        }
                        // SAFETY: as above.
                        let r = unsafe {
                            safe_exec_memcmp(black_box(a2.as_ptr().add(ao)), b2.as_ptr().add(bo), n)
                        };
                        assert_eq!(
                            r.signum(),
                            i32::from(x).cmp(&i32::from(y)) as i32,
                            "n {n} diff at {at} ({x} vs {y}) a+{ao} b+{bo}"
                        );
                    }
                }
            }
        }
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
