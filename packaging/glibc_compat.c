/* SPDX-License-Identifier: Apache-2.0 */
/* glibc_compat.c: linked into libloom only with LLVM static (the portable wheel, LOOM_LLVM_STATIC).
 *
 * The wheel's manylinux tag is the newest glibc symbol version libloom references. Built on Debian 12
 * (glibc 2.36), every reference is at 2.34 or older except one: arc4random (GLIBC_2.36), which
 * Debian's static LLVM (Support/Process.cpp) and libstdc++ (random.o) call because their build found
 * it. This hidden definition satisfies those references inside libloom, so the wheel needs glibc 2.34
 * (manylinux_2_34: RHEL 9, Ubuntu 22.04, Debian 12 and newer) instead of 2.36. It has arc4random's
 * contract: 32 bits from the kernel's CSPRNG (getrandom, glibc 2.25), never failing. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

__attribute__((visibility("hidden"))) uint32_t arc4random(void);

uint32_t arc4random(void) {
  uint32_t v;
  for (;;) {
    ssize_t n = getrandom(&v, sizeof v, 0);
    if (n == (ssize_t)sizeof v) return v;
    if (n < 0 && errno != EINTR) break; /* ENOSYS (a kernel before 3.17), or a seccomp filter */
  }
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, &v, sizeof v);
    close(fd);
    if (n == (ssize_t)sizeof v) return v;
  }
  /* No entropy source at all: LLVM uses the value for unique names and hash seeds, not secrets. */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 32);
  return (uint32_t)(x ^ (x >> 32));
}
