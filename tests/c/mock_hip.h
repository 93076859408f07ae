/* mock_hip.h: what the programs that drive libloom or libloomrt without the test_common.h context share
 * (tests/c/test_hip_mock.c, the programs of tests/loomrt): CHECK with its pass / fail counts, and the records and entry
 * points of the HIP test double (tests/c/mock_hip.c, which includes this header for the one definition of
 * its records) bound with dlsym by mock_hip_bind. Header-only: everything is static, unused parts are fine. */
#ifndef LOOM_TESTS_MOCK_HIP_H
#define LOOM_TESTS_MOCK_HIP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- the mock's records ---------------------------------------------------------------------------------- */
typedef struct MockLaunch {
  char name[128];
  unsigned grid[3], block[3];
  unsigned char arg0[512]; /* the first explicit argument's bytes (Loom's parameter block) */
  void *stream;
} MockLaunch;

typedef struct MockHipStats {
  int live_allocs, live_streams, live_events, live_modules;
  int not_current; /* uses of an object while another device was current */
  long calls;      /* fallible calls so far */
  int failed;      /* injected failures so far */
} MockHipStats;

#ifndef MOCK_HIP_LIBRARY /* the test programs' side (mock_hip.c defines it) */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

/* ---- CHECK: counts, and on failure prints file:line and the message (its arguments evaluated only then);
 * an expression, true when the condition held ---------------------------------------------------------- */
static int check_passed, check_failed;
#define CHECK(cond, ...) check_done_((cond) || check_fail_(__FILE__, __LINE__, __VA_ARGS__))
__attribute__((unused)) static bool check_done_(bool ok) {
  if (ok) check_passed++;
  return ok;
}
static bool check_fail_(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4), unused));
static bool check_fail_(const char *file, int line, const char *fmt, ...) {
  check_failed++;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return false;
}

/* ---- the mock's entry points ----------------------------------------------------------------------------- */
__attribute__((unused)) static int (*launch_count)(void);
__attribute__((unused)) static const MockLaunch *(*launches)(void);
__attribute__((unused)) static void (*mock_stats)(MockHipStats *);
__attribute__((unused)) static void (*mock_fail_at)(long);

/* Binds the entry points above from the loaded mock library; false when lib is not the mock. */
__attribute__((unused)) static bool mock_hip_bind(void *lib) {
  launch_count = (int (*)(void))dlsym(lib, "mock_hip_launch_count");
  launches = (const MockLaunch *(*)(void))dlsym(lib, "mock_hip_launches");
  mock_stats = (void (*)(MockHipStats *))dlsym(lib, "mock_hip_stats");
  mock_fail_at = (void (*)(long))dlsym(lib, "mock_hip_fail_at");
  return launch_count && launches && mock_stats && mock_fail_at;
}

/* Word i (8 bytes) of a launch's parameter block. */
__attribute__((unused)) static uint64_t word(const MockLaunch *l, int i) {
  uint64_t w;
  memcpy(&w, l->arg0 + 8 * i, 8);
  return w;
}
#endif

#endif /* LOOM_TESTS_MOCK_HIP_H */
