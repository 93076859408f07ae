/* SPDX-License-Identifier: Apache-2.0 */
/* version.c: the version of the library linked at run time (loom.h: loom_version). It needs nothing
 * but the public header, so the AOT runtime (libloomrt) can carry it too. */
#include "loom/loom.h"

_Static_assert(LOOM_VERSION_MAJOR >= 0 && LOOM_VERSION_MINOR >= 0 && LOOM_VERSION_MINOR < 100 &&
                   LOOM_VERSION_PATCH >= 0 && LOOM_VERSION_PATCH < 100,
               "LOOM_VERSION_NUMBER packs MINOR and PATCH in two decimal digits each");

const char *loom_version(void) { return LOOM_VERSION_STRING; }

int loom_version_number(void) { return LOOM_VERSION_NUMBER; }
