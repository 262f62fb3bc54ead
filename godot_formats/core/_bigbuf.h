/*
 * Large fresh buffers (a 40 MB PackedByteArray, say) cost more in page faults than in
 * copying: the kernel zeroes and maps them 4 KiB at a time.  Asking for transparent huge
 * pages before the first write maps them 2 MiB at a time, which halves the time of
 * making such a buffer here (numpy advises its large arrays the same way).  Only advice:
 * where the kernel has no huge pages, or says no, nothing changes.
 *
 * Only for a buffer made at its final size, never one that realloc grows later: advising the
 * aligned middle of a mapping splits it in three, and glibc's realloc, whose mremap then fails
 * (EFAULT: the range spans several mappings), copies the whole buffer into a new one instead
 * (the writer's growing buffer did this: the 50 MB save's encode copied 72 MB and faulted 85 MB
 * of pages, 73 ms; unadvised, its buffer moves by mremap, 54 ms).
 */
#ifndef GODOT_FORMATS_BIGBUF_H
#define GODOT_FORMATS_BIGBUF_H

#include <stddef.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define BIG_BUFFER ((size_t)4 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Advise the whole huge pages inside [p, p + n), for a buffer of at least BIG_BUFFER. */
static inline void
advise_huge_pages(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    uintptr_t start, stop;
    if (n < BIG_BUFFER)
        return;
    start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    stop = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
    if (stop > start)
        (void)madvise((void *)start, (size_t)(stop - start), MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

#endif
