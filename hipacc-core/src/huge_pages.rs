//! Host pixel buffers backed by transparent huge pages where the OS offers
//! them.
//!
//! A 2048x2048 f32 image spans 4096 pages of 4 KiB. A stencil walks several
//! rows of its input and one of its output at once, each row two pages
//! apart, so the TLB misses on most rows it touches. On a 2 MiB page the
//! same image is 8 entries. Linux backs anonymous memory with huge pages
//! only where the process asks (`madvise(MADV_HUGEPAGE)`) unless the system
//! is set to do so always, and the advice takes effect for pages faulted in
//! after it, so a buffer is advised before its first write. NumPy does the
//! same for its arrays of 4 MiB and more, which is one reason a peer timed
//! on NumPy buffers could beat identical code on plain `Vec`s.
//!
//! The advice is a hint: where the kernel lacks transparent huge pages, or
//! on other systems, buffers behave as before.

/// Buffers smaller than this are not advised: a huge page that holds
/// mostly other data saves nothing, and small images are cache-resident.
pub(crate) const THRESHOLD_BYTES: usize = 4 << 20;

/// Size of one huge page on x86-64 and aarch64 with 4 KiB base pages.
#[cfg(any(target_os = "linux", test))]
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `len` elements, its storage advised to use
/// huge pages when it is at least [`THRESHOLD_BYTES`] long. Fill it (with
/// `resize` or `extend`) before reading it: the pages it faults in then are
/// huge ones.
pub(crate) fn vec_with_capacity<T>(len: usize) -> Vec<T> {
    let v = Vec::<T>::with_capacity(len);
    advise(v.as_ptr().cast(), len * std::mem::size_of::<T>());
    v
}

/// Advises the memory of `data` to use huge pages from now on, when it is
/// at least [`THRESHOLD_BYTES`] long. Pages already faulted in stay as they
/// are until the kernel's background scan merges them. Returns whether any
/// advice was given and accepted.
pub(crate) fn advise_slice<T>(data: &[T]) -> bool {
    advise(data.as_ptr().cast(), std::mem::size_of_val(data))
}

/// The whole huge pages inside `bytes` bytes at address `start`, as
/// `(first, length)`, if there are any.
#[cfg(any(target_os = "linux", test))]
fn huge_page_interior(start: usize, bytes: usize) -> Option<(usize, usize)> {
    let end = start.checked_add(bytes)?;
    let first = start.checked_next_multiple_of(HUGE_PAGE)?;
    let last = end - end % HUGE_PAGE;
    (last > first).then(|| (first, last - first))
}

#[cfg(target_os = "linux")]
fn advise(start: *const u8, bytes: usize) -> bool {
    if bytes < THRESHOLD_BYTES {
        return false;
    }
    let Some((first, len)) = huge_page_interior(start as usize, bytes) else {
        return false;
    };
    // SAFETY: `first..first + len` lies inside one live allocation of this
    // process (it is page-aligned and within `start..start + bytes`), and
    // MADV_HUGEPAGE changes only how its future page faults are served,
    // never its contents.
    unsafe { libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: *const u8, _bytes: usize) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interior_covers_only_whole_huge_pages() {
        let mib = 1 << 20;
        assert_eq!(huge_page_interior(0, 4 * mib), Some((0, 4 * mib)));
        assert_eq!(
            huge_page_interior(4096, 8 * mib),
            Some((2 * mib, 6 * mib)),
            "the partial pages at both ends are left out"
        );
        assert_eq!(huge_page_interior(mib, 2 * mib), None);
        assert_eq!(huge_page_interior(mib, 3 * mib), Some((2 * mib, 2 * mib)));
        assert_eq!(huge_page_interior(usize::MAX - 10, 100), None);
    }

    #[test]
    fn small_buffers_are_not_advised() {
        let v = vec_with_capacity::<f32>(1000);
        assert!(!advise_slice(&v));
        assert_eq!(v.capacity(), 1000);
    }

    /// Where the kernel has transparent huge pages (the sysfs switch
    /// exists and is not `[never]`), advising a large buffer must succeed:
    /// this fails if the range handed to `madvise` is misaligned or leaves
    /// the allocation.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_buffers_are_advised_where_the_kernel_supports_it() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        let Ok(mode) = thp else {
            return;
        };
        if mode.contains("[never]") {
            return;
        }
        let mut v = vec_with_capacity::<f32>(3 << 20);
        v.resize(3 << 20, 1.0);
        assert!(advise_slice(&v));
        assert!(v.iter().all(|&p| p == 1.0));
    }
}
