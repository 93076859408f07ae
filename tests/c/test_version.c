/* SPDX-License-Identifier: Apache-2.0 */
/* test_version.c: loom_version() and loom_version_number() of the library agree with the header's
 * LOOM_VERSION_* macros, and the string is "MAJOR.MINOR.PATCH" of those numbers. */
#include <stdio.h>
#include <string.h>

#include "loom/loom.h"

static int failures;
#define EXPECT(cond, ...)                                    \
  do {                                                       \
    if (!(cond)) {                                           \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);  \
      fprintf(stderr, __VA_ARGS__);                          \
      fputc('\n', stderr);                                   \
      failures++;                                            \
    }                                                        \
  } while (0)

int main(void) {
  const char *v = loom_version();
  EXPECT(v != NULL, "loom_version() returned NULL");
  if (!v) return 1;
  EXPECT(strcmp(v, LOOM_VERSION_STRING) == 0, "loom_version() %s, header %s", v, LOOM_VERSION_STRING);
  int major = -1, minor = -1, patch = -1, end = 0;
  EXPECT(sscanf(v, "%d.%d.%d%n", &major, &minor, &patch, &end) == 3 && v[end] == 0,
         "loom_version() \"%s\" is not MAJOR.MINOR.PATCH", v);
  EXPECT(major == LOOM_VERSION_MAJOR && minor == LOOM_VERSION_MINOR && patch == LOOM_VERSION_PATCH,
         "loom_version() %s, macros %d.%d.%d", v, LOOM_VERSION_MAJOR, LOOM_VERSION_MINOR, LOOM_VERSION_PATCH);
  EXPECT(loom_version_number() == major * 10000 + minor * 100 + patch,
         "loom_version_number() %d for %s", loom_version_number(), v);
  EXPECT(loom_version_number() == LOOM_VERSION_NUMBER, "loom_version_number() %d, header %d",
         loom_version_number(), LOOM_VERSION_NUMBER);
  printf("loom %s (%d): %s\n", v, loom_version_number(), failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
