//! A global allocator that backs large blocks with transparent huge pages.
//!
//! A tone-mapping run allocates some thirty megabytes of images and
//! pyramid levels, each written once soon after. With 4 KiB pages every
//! first write of a page is a fault that the kernel serves by clearing
//! that page: on a 512x768 photograph about 7000 faults, a sixth of the
//! run. Blocks of at least [`THRESHOLD`] bytes are mapped here on their
//! own, aligned to 2 MiB and advised `MADV_HUGEPAGE`, so one fault clears
//! a whole 2 MiB page; smaller blocks go to the system allocator. (The C
//! library's `glibc.malloc.hugetlb` tunable does the same, but only
//! through the environment at start-up.) Where the kernel has no
//! transparent huge pages the advice is ignored and blocks behave as
//! ordinary anonymous mappings.
//!
//! The price is memory: a mapped block is rounded up to whole huge pages,
//! so a block just above the threshold takes twice its size (a 512x768
//! `f32` image, 1.5 MiB, takes 2 MiB). Only `hdr-compress` installs it;
//! the library's users keep their own allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

/// Blocks of this many bytes or more get a mapping of their own.
pub const THRESHOLD: usize = 1 << 20;

/// Size and alignment of a huge page on x86-64 and aarch64.
const HUGE_PAGE: usize = 2 << 20;

/// The allocator: install it with `#[global_allocator]`.
pub struct HugePageAlloc;

impl HugePageAlloc {
    /// Whether a block of `layout` is mapped here.
    fn mapped(layout: Layout) -> bool {
        layout.size() >= THRESHOLD && layout.align() <= HUGE_PAGE
    }

    /// The length of the mapping of a block of `size` bytes: whole huge
    /// pages, so the block's end does not share a huge page with others.
    fn mapping_len(size: usize) -> usize {
        size.next_multiple_of(HUGE_PAGE)
    }

    /// A mapping of `len` bytes (a multiple of [`HUGE_PAGE`]) that starts
    /// on a huge-page boundary, or null.
    fn map(len: usize) -> *mut u8 {
        // Map one huge page more, then cut the ends off at the boundaries.
        let Some(padded) = len.checked_add(HUGE_PAGE) else {
            return ptr::null_mut();
        };
        // SAFETY: a new private anonymous mapping touches no existing memory.
        let raw = unsafe {
            libc::mmap(
                ptr::null_mut(),
                padded,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return ptr::null_mut();
        }
        let start = raw as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        let head = aligned - start;
        let tail = padded - head - len;
        // SAFETY: the ranges cut off and advised lie inside the mapping just
        // made, which nothing else refers to yet. Advice only changes how
        // faults are served; its failure is harmless.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((aligned + len) as *mut libc::c_void, tail);
            }
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
        aligned as *mut u8
    }
}

// SAFETY: mapped blocks are fresh anonymous mappings of at least the
// requested size, aligned to 2 MiB (which satisfies every alignment they
// are used for), and unmapped only by `dealloc` with the same layout;
// everything else is the system allocator's.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if Self::mapped(layout) {
            Self::map(Self::mapping_len(layout.size()))
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if Self::mapped(layout) {
            // Fresh anonymous pages read as zero.
            Self::map(Self::mapping_len(layout.size()))
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with `layout`: a mapping of this
        // length when `mapped` holds, else the system allocator's block.
        unsafe {
            if Self::mapped(layout) {
                libc::munmap(ptr.cast(), Self::mapping_len(layout.size()));
            } else {
                System.dealloc(ptr, layout);
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees a valid `new_size` for the
        // alignment, and `ptr` a block of `layout` from this allocator; a
        // moved block gets the contents both blocks hold.
        unsafe {
            let new = Layout::from_size_align_unchecked(new_size, layout.align());
            match (Self::mapped(layout), Self::mapped(new)) {
                (false, false) => System.realloc(ptr, layout, new_size),
                (true, true) if Self::mapping_len(layout.size()) == Self::mapping_len(new_size) => {
                    ptr
                }
                _ => {
                    let moved = self.alloc(new);
                    if !moved.is_null() {
                        ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    moved
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of `size` bytes holding `i as u8` at offset `i`.
    fn filled(size: usize) -> *mut u8 {
        // SAFETY: the layout is not zero-sized, the block is written
        // within it.
        unsafe {
            let p = HugePageAlloc.alloc(Layout::from_size_align(size, 8).expect("layout"));
            assert!(!p.is_null());
            let block = std::slice::from_raw_parts_mut(p, size);
            block.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
            p
        }
    }

    #[test]
    fn large_blocks_are_huge_page_aligned_and_zeroed() {
        let layout = Layout::from_size_align(3 * THRESHOLD + 5, 64).expect("layout");
        // SAFETY: the block is read within its layout and freed with it.
        unsafe {
            let p = HugePageAlloc.alloc_zeroed(layout);
            assert_eq!(p as usize % HUGE_PAGE, 0);
            assert!(std::slice::from_raw_parts(p, layout.size())
                .iter()
                .all(|&b| b == 0));
            HugePageAlloc.dealloc(p, layout);
        }
    }

    #[test]
    fn resizing_keeps_the_contents_across_both_kinds_of_block() {
        let small = 1000;
        let large = 3 * THRESHOLD + 5;
        for (from, to) in [
            (large, large + 100),
            (large, 9 * THRESHOLD),
            (large, small),
            (small, large),
            (small, 2 * small),
        ] {
            // SAFETY: blocks are used within their layouts and freed with
            // the layout of their last size.
            unsafe {
                let p = filled(from);
                let layout = Layout::from_size_align(from, 8).expect("layout");
                let q = HugePageAlloc.realloc(p, layout, to);
                let kept = std::slice::from_raw_parts(q, from.min(to));
                assert!(
                    kept.iter().enumerate().all(|(i, &b)| b == i as u8),
                    "{from} -> {to}"
                );
                HugePageAlloc.dealloc(q, Layout::from_size_align(to, 8).expect("layout"));
            }
        }
    }
}
